"""Pictures in the notebook: ``Tensor._repr_html_`` (a table and an SVG of the chunk grid,
``?`` for a length the data decides, never the planner's bound), ``Tensor.visualize`` (the
chunk graph as SVG without Graphviz, DOT text, Graphviz formats when ``dot`` exists) and the
dashboard link beside the progress bar."""

from __future__ import annotations

import io
import shutil
import sys
import xml.dom.minidom

import pytest

import ares as ar
from ares import _engine
from ares._html import human_bytes


def _svgs(html: str) -> list[str]:
    out, at = [], 0
    while (start := html.find("<svg", at)) >= 0:
        end = html.index("</svg>", start) + len("</svg>")
        out.append(html[start:end])
        at = end
    return out


@pytest.mark.parametrize("shape, chunks, count, chunk_text", [
    ((1000,), 100, 10, "(100,)"),
    ((40, 60), (10, 25), 12, "(10, 25)"),
    ((8, 30, 20), (4, 10, 10), 12, "(4, 10, 10)"),
    ((2, 3, 8, 8), (1, 3, 4, 4), 8, "(1, 3, 4, 4)"),
])
def test_repr_html_is_a_table_beside_an_svg_of_the_chunk_grid(shape, chunks, count, chunk_text):
    x = ar.ones(shape, chunks=chunks)
    page = x._repr_html_()
    assert f"{count} chunks" in page and chunk_text in page and "float64" in page
    nbytes = 8
    for s in shape:
        nbytes *= s
    assert human_bytes(nbytes) in page
    (svg,) = _svgs(page)
    xml.dom.minidom.parseString(svg)  # well-formed
    # A line per inner chunk boundary on every drawn axis (plus the edges).
    inner = sum(len(c) - 1 for c in x.chunks[-3:])
    assert svg.count('class="grid"') >= inner


def test_an_unknown_length_is_a_question_mark_never_the_planners_bound():
    x = ar.arange(1000.0, chunks=100)
    y = x[x > 500]
    page = y._repr_html_()
    assert "(?,)" in page and "?" in page.split("Bytes")[1].split("</tr>")[0]
    assert "1000" not in page and "7.81 KiB" not in page, page
    (svg,) = _svgs(page)
    assert 'stroke-dasharray' in svg  # the unknown axis is drawn dashed
    u = ar.unique((ar.arange(10, chunks=5) > 3).astype(ar.int64))
    assert "(?,)" in u._repr_html_()


def test_visualize_draws_the_chunk_graph_without_graphviz(tmp_path):
    x = ar.ones((6, 6), chunks=3)
    y = (x + 1).sum(axis=0)
    picture = y.visualize()
    svg = picture._repr_svg_()
    xml.dom.minidom.parseString(svg)
    assert svg.count('class="node"') >= 4 and 'class="edge"' in svg
    out = tmp_path / "g.svg"
    y.visualize(str(out))
    assert out.read_text().startswith("<svg")
    dot = tmp_path / "g.dot"
    y.visualize(str(dot))
    assert dot.read_text().startswith("digraph ares")
    png = tmp_path / "g.png"
    if shutil.which("dot"):
        y.visualize(str(png))
        assert png.read_bytes()[:4] == b"\x89PNG"
    else:
        with pytest.raises(RuntimeError, match="Graphviz"):
            y.visualize(str(png))


def test_the_progress_bar_shows_the_dashboard_link_of_a_cluster(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(_engine._Progress, "DELAY", 0.0)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the plain bar
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    bar = _engine._Progress("http://127.0.0.1:8080/")
    bar(0.5, 10)
    bar(1.0, 10)
    bar.close()
    assert err.getvalue().count("ares dashboard: http://127.0.0.1:8080/") == 1
    assert _engine._Progress(None).dashboard is None


def test_a_web_cluster_is_the_dashboard_link(cluster):
    ar.connect(f"http://{cluster.web}", token=cluster.token)
    try:
        assert _engine.dashboard_link() == f"http://{cluster.web}/"
    finally:
        ar.close()
    assert _engine.dashboard_link() is None
