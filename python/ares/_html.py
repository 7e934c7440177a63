"""A tensor as a notebook shows it: ``Tensor._repr_html_``, a table of its bytes, shape, chunk
shape, chunk count and dtype beside an SVG of its chunk grid, drawn as dask draws arrays
(1-D a bar, 2-D a grid, 3-D a block in oblique projection, more dimensions as their last
three with the others counted).

Nothing here computes: everything comes from the tensor's metadata. A length that depends on
the data (``x[mask]``, ``unique``) is unknown until it runs, so it is shown as ``?`` and the
bytes as ``?`` too, never as the upper bound the planner uses; its axis is drawn dashed at an
arbitrary length.
"""

from __future__ import annotations

import html
import math

# Longest side of a grid, in pixels; shortest a side may be drawn.
_SIDE = 120
_MIN_SIDE = 12
# Above this many chunks along an axis, their lines are drawn as a shade, not one by one.
_MAX_LINES = 100


def human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n} B"  # unreachable


def _known(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _dims(values) -> str:
    items = [str(int(v)) if _known(v) else "?" for v in values]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _sides(shape) -> list[float]:
    """Pixel length per axis: proportional to the lengths, the longest ``_SIDE``; an unknown
    length is drawn as long as the longest known one."""
    known = [float(s) for s in shape if _known(s)]
    longest = max(known + [1.0])
    out = []
    for s in shape:
        v = float(s) if _known(s) else longest
        out.append(max(_MIN_SIDE, _SIDE * v / longest) if longest else _MIN_SIDE)
    return out


def _cuts(chunks, side: float) -> list[float]:
    """Pixel offsets of the chunk boundaries along one axis (evenly spaced when unknown)."""
    if not chunks:
        return [0.0, side]
    if not all(_known(c) for c in chunks):
        return [side * i / len(chunks) for i in range(len(chunks) + 1)]
    total = float(sum(chunks)) or 1.0
    out, at = [0.0], 0.0
    for c in chunks:
        at += float(c)
        out.append(side * at / total)
    return out


def _line(x1, y1, x2, y2, cls="grid", dashed=False) -> str:
    dash = ' stroke-dasharray="3 2"' if dashed else ""
    return (f'<line class="{cls}" x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
            f'stroke="#444" stroke-width="{1.4 if cls == "edge" else 0.6}"{dash}/>')


def _label(x, y, text, rotate=False) -> str:
    turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if rotate else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="11" text-anchor="middle"{turn}>'
            f"{html.escape(text)}</text>")


def _face(x0, y0, xs, ys, unknown_x=False, unknown_y=False) -> list[str]:
    """A rectangle at (x0, y0) cut at offsets ``xs`` (horizontal) and ``ys`` (vertical)."""
    w, h = xs[-1], ys[-1]
    parts = [f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{h:.1f}" '
             f'fill="#ECB172" fill-opacity="0.8" stroke="none"/>']
    for ticks, vertical, unknown in ((xs, True, unknown_x), (ys, False, unknown_y)):
        if len(ticks) - 1 > _MAX_LINES:
            ticks = [ticks[0], ticks[-1]]
        for i, t in enumerate(ticks):
            edge = i in (0, len(ticks) - 1)
            cls = "edge" if edge else "grid"
            if vertical:
                parts.append(_line(x0 + t, y0, x0 + t, y0 + h, cls, unknown and not edge))
            else:
                parts.append(_line(x0, y0 + t, x0 + w, y0 + t, cls, unknown and not edge))
    return parts


def chunk_grid_svg(shape, chunks) -> str:
    """The SVG of a chunk grid: ``shape`` with ``None`` for an unknown length, ``chunks`` as
    ``Tensor.chunks`` (``nan`` where unknown)."""
    ndim = len(shape)
    if ndim == 0:
        return ('<svg class="ares-chunks" width="40" height="40"><rect x="8" y="8" width="24" '
                'height="24" fill="#ECB172" stroke="#444"/></svg>')
    lead = ""
    if ndim > 3:
        lead = " × ".join(_dims([s])[1:-2] for s in shape[:-3])
        shape, chunks = shape[-3:], chunks[-3:]
        ndim = 3
    unknown = [not _known(s) for s in shape]
    sides = _sides(shape)
    parts: list[str] = []
    if ndim == 1:
        xs, ys = _cuts(chunks[0], sides[0]), [0.0, 20.0]
        parts += _face(10, 10, xs, ys, unknown_x=unknown[0])
        parts.append(_label(10 + xs[-1] / 2, 50, _dims(shape)[1:-2]))
        width, height = xs[-1] + 20, 60
    elif ndim == 2:
        ys, xs = _cuts(chunks[0], sides[0]), _cuts(chunks[1], sides[1])
        parts += _face(10, 10, xs, ys, unknown_x=unknown[1], unknown_y=unknown[0])
        parts.append(_label(10 + xs[-1] / 2, ys[-1] + 30, str(_dims([shape[1]])[1:-2])))
        parts.append(_label(xs[-1] + 30, 10 + ys[-1] / 2, str(_dims([shape[0]])[1:-2]), True))
        width, height = xs[-1] + 45, ys[-1] + 45
    else:
        # Oblique: axis 0 goes back up and to the right, axes 1 and 2 are the front face.
        ds = _cuts(chunks[0], sides[0] * 0.5)
        ys, xs = _cuts(chunks[1], sides[1]), _cuts(chunks[2], sides[2])
        depth = ds[-1]
        x0, y0 = 10, 10 + depth
        w, h = xs[-1], ys[-1]
        top = [f'<polygon points="{x0},{y0} {x0 + depth},{y0 - depth} {x0 + depth + w},'
               f'{y0 - depth} {x0 + w},{y0}" fill="#ECB172" fill-opacity="0.6"/>',
               f'<polygon points="{x0 + w},{y0} {x0 + w + depth},{y0 - depth} {x0 + w + depth},'
               f'{y0 - depth + h} {x0 + w},{y0 + h}" fill="#ECB172" fill-opacity="0.45"/>']
        parts += top
        dticks = ds if len(ds) - 1 <= _MAX_LINES else [ds[0], ds[-1]]
        for i, d in enumerate(dticks):
            edge = i in (0, len(dticks) - 1)
            cls, dash = ("edge" if edge else "grid"), unknown[0] and not edge
            parts.append(_line(x0 + d, y0 - d, x0 + d + w, y0 - d, cls, dash))
            parts.append(_line(x0 + w + d, y0 - d, x0 + w + d, y0 - d + h, cls, dash))
        xt = xs if len(xs) - 1 <= _MAX_LINES else [xs[0], xs[-1]]
        for i, x in enumerate(xt):
            edge = i in (0, len(xt) - 1)
            parts.append(_line(x0 + x, y0, x0 + x + depth, y0 - depth, "edge" if edge else "grid",
                               unknown[2] and not edge))
        yt = ys if len(ys) - 1 <= _MAX_LINES else [ys[0], ys[-1]]
        for i, y in enumerate(yt):
            edge = i in (0, len(yt) - 1)
            parts.append(_line(x0 + w, y0 + y, x0 + w + depth, y0 + y - depth,
                               "edge" if edge else "grid", unknown[1] and not edge))
        parts += _face(x0, y0, xs, ys, unknown_x=unknown[2], unknown_y=unknown[1])
        parts.append(_label(x0 + w / 2, y0 + h + 20, _dims([shape[2]])[1:-2]))
        parts.append(_label(x0 + w + depth + 18, y0 - depth + h / 2, _dims([shape[1]])[1:-2], True))
        parts.append(_label(x0 + w + depth / 2 + 14, y0 + h - depth / 2 + 14, _dims([shape[0]])[1:-2]))
        width, height = w + depth + 45, h + depth + 40
    if lead:
        parts.append(f'<text x="4" y="{height - 2:.0f}" font-size="10">{html.escape(lead)} ×</text>')
    return (f'<svg class="ares-chunks" width="{width:.0f}" height="{height:.0f}" '
            f'style="stroke:rgb(0,0,0);stroke-width:0">' + "".join(parts) + "</svg>")


def tensor_html(t) -> str:
    """The HTML of ``Tensor._repr_html_``."""
    shape, chunks = t.known_shape, t.chunks
    known = all(_known(s) for s in shape)
    itemsize = t.dtype.itemsize
    chunk_shape = tuple(max(c) if c and all(_known(x) for x in c) else (None if c else 0)
                        for c in chunks)
    if known:
        total = human_bytes(math.prod(shape) * itemsize)
    else:
        total = "?"
    if all(_known(s) for s in chunk_shape):
        per_chunk = human_bytes(math.prod(chunk_shape) * itemsize)
    else:
        per_chunk = "?"
    rows = [("Bytes", total, per_chunk), ("Shape", _dims(shape), _dims(chunk_shape)),
            ("Count", f"{t.npartitions} chunks", ""), ("Type", t.dtype.name, "numpy.ndarray")]
    body = "".join(f"<tr><th>{h}</th><td>{html.escape(a)}</td><td>{html.escape(b)}</td></tr>"
                   for h, a, b in rows)
    note = ("<p style=\"font-size:smaller\">? = depends on the data: known once computed</p>"
            if not known else "")
    table = ("<table><thead><tr><td></td><th>Tensor</th><th>Chunk</th></tr></thead>"
             f"<tbody>{body}</tbody></table>{note}")
    op = html.escape(t._handle.op)
    return ('<table class="ares-tensor"><tr><td style="vertical-align:top">'
            f"<b>ares.Tensor</b> <code>{op}</code>{table}</td>"
            f'<td style="vertical-align:middle">{chunk_grid_svg(shape, chunks)}</td></tr></table>')
