"""``Tensor.visualize``: the chunk graph that ``ares explain`` prepares, as a picture.

The graph is planned here as ``ar.explain`` plans it without an engine (2 workers × 2
slots, the default task config: fusion included, so a chain of elementwise ops is one node).
SVG needs nothing installed: a layer per step from the sources, a box per chunk (its op, or
the ops fused into it, coloured by the subtask that computes it), an arrow per input.
``.dot`` is the Graphviz text ``ares explain --format dot`` prints; any other format
(``png``, ``pdf``...) is Graphviz's own, made by its ``dot`` program when it is on PATH.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess

from . import _ares

# Chunks drawn at most; a larger graph is drawn up to them and says so.
MAX_NODES = 300

_PALETTE = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#72b7b2", "#e4b400", "#9d755d",
            "#ff9da6", "#bab0ac", "#79706e"]


class GraphSVG:
    """An SVG picture Jupyter shows (``_repr_svg_``); ``str()`` is its text."""

    def __init__(self, svg: str):
        self.data = svg

    def _repr_svg_(self) -> str:
        return self.data

    def __str__(self) -> str:
        return self.data


def _layers(nodes) -> dict:
    """Each node's layer: one more than its deepest input's (inputs come first)."""
    layer: dict[str, int] = {}
    for n in nodes:
        ins = [layer[i] for i in n["inputs"] if i in layer]
        layer[n["id"]] = max(ins) + 1 if ins else 0
    return layer


def graph_svg(plan: dict) -> str:
    """The SVG of an ``ares explain --format json`` plan's chunk graph."""
    nodes = plan["chunk_graph"]["nodes"][:MAX_NODES]
    total = plan["counts"]["chunks"]
    owner = {}
    for s in plan.get("subtasks", []):
        for c in s["chunks"]:
            owner[c] = s["index"]
    for n in nodes:
        n["inputs"] = [i if str(i).startswith("c") else f"c{i}" for i in n["inputs"]]
    layer = _layers(nodes)
    rows: dict[int, list] = {}
    for n in nodes:
        rows.setdefault(layer[n["id"]], []).append(n)
    bw, bh, gx, gy = 86, 30, 10, 36
    widest = max([len(r) for r in rows.values()] + [1])
    width = widest * (bw + gx) + 20
    height = len(rows) * (bh + gy) + 40
    pos = {}
    for li, row in sorted(rows.items()):
        off = (width - len(row) * (bw + gx)) / 2
        for k, n in enumerate(row):
            pos[n["id"]] = (off + k * (bw + gx), 10 + li * (bh + gy))
    parts = ['<defs><marker id="ares-arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" '
             'markerHeight="6" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#777"/></marker>'
             "</defs>"]
    for n in nodes:
        x, y = pos[n["id"]]
        for i in n["inputs"]:
            if i in pos:
                px, py = pos[i]
                parts.append(f'<line class="edge" x1="{px + bw / 2:.1f}" y1="{py + bh:.1f}" '
                             f'x2="{x + bw / 2:.1f}" y2="{y:.1f}" stroke="#999" '
                             'marker-end="url(#ares-arrow)"/>')
    for n in nodes:
        x, y = pos[n["id"]]
        label = "+".join(n["fused"]) if n.get("fused") else n["op"]
        short = label if len(label) <= 13 else label[:12] + "…"
        subtask = owner.get(n["id"])
        color = _PALETTE[subtask % len(_PALETTE)] if subtask is not None else "#ccc"
        shape = "×".join(str(s) for s in n["shape"]) or "()"
        tip = f'{n["id"]} {label} {shape} {n["dtype"]}' + (
            f" (subtask {subtask})" if subtask is not None else "")
        parts.append(f'<g class="node"><title>{html.escape(tip)}</title>'
                     f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw}" height="{bh}" rx="4" '
                     f'fill="{color}" fill-opacity="0.35" stroke="{color}"/>'
                     f'<text x="{x + bw / 2:.1f}" y="{y + 13:.1f}" font-size="10" '
                     f'text-anchor="middle">{html.escape(short)}</text>'
                     f'<text x="{x + bw / 2:.1f}" y="{y + 25:.1f}" font-size="9" fill="#555" '
                     f'text-anchor="middle">{html.escape(shape)}</text></g>')
    caption = (f"{total} chunks in {plan['counts']['subtasks']} subtasks"
               + (f", the first {len(nodes)} drawn" if total > len(nodes) else ""))
    parts.append(f'<text x="10" y="{height - 10}" font-size="11">{html.escape(caption)}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="ares-graph" width="{width:.0f}" '
            f'height="{height}">' + "".join(parts) + "</svg>")


def visualize(tensors, filename=None, format=None):
    """The chunk graph of ``tensors``: an SVG picture (``filename=None``), or written to
    ``filename`` in ``format`` (default: its extension): ``svg`` drawn here, ``dot`` as
    Graphviz text, anything else by Graphviz's ``dot`` (``RuntimeError`` without it)."""
    handles = [t._handle for t in tensors]
    fmt = (format or (os.path.splitext(os.fspath(filename))[1][1:] if filename else "svg")
           or "svg").lower()
    if fmt == "svg":
        plan = json.loads(_ares.explain_graph(handles, "json", limit=MAX_NODES))
        svg = graph_svg(plan)
        if filename is None:
            return GraphSVG(svg)
        with open(filename, "w", encoding="utf-8") as f:
            f.write(svg)
        return GraphSVG(svg)
    dot_text = _ares.explain_graph(handles, "dot", limit=MAX_NODES)
    if fmt == "dot":
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as f:
                f.write(dot_text)
        return dot_text
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(f"visualize: format {fmt!r} needs Graphviz's `dot` program on PATH "
                           "(apt-get install graphviz); .svg and .dot need nothing")
    out = subprocess.run([dot, f"-T{fmt}"], input=dot_text.encode(), capture_output=True,
                         check=False)
    if out.returncode != 0:
        raise RuntimeError(f"visualize: dot -T{fmt}: {out.stderr.decode(errors='replace')}")
    if filename is not None:
        with open(filename, "wb") as f:
            f.write(out.stdout)
    return out.stdout
