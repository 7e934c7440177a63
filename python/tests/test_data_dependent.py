"""The differential generator's Python half for data-dependent lengths (issue 28): hypothesis
draws a result whose length depends on the data (`x[mask]`, `unique`, `nonzero`,
`compress`) and what goes on from it (reductions, elementwise ops, sort either way, a nested
mask, concatenation and slicing before and after `compute_chunk_sizes()`, `len`), each against NumPy on the same
values. The engine computes the data-dependent part in stages, so every example exercises
a multi-stage task."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ares as ar
from helpers import arrays, assert_same, chunks_for

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(autouse=True, scope="module")
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


def _quiet(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


@st.composite
def sources(draw):
    """A 1-D array with ties, NaN and both zeros folded into +0.0 (unique's zero sign is a
    known deviation), its tensor, and a data-dependent result of both: (name, numpy, a
    function that builds the ares tensor; hypothesis reprs what it draws, and the repr of a
    tensor of several stages cannot give its chunks)."""
    dtype = draw(st.sampled_from(["float64", "int64"]))
    if dtype == "float64":
        elements = st.one_of(st.integers(-4, 4).map(float),
                             st.sampled_from([np.nan, 0.5, -2.5, 1e6]))
    else:
        elements = st.integers(-4, 4)
    a = draw(arrays(dtype=dtype, shape=(draw(st.integers(0, 40)),), elements=elements))
    if dtype == "float64":
        a = np.where(a == 0, 0.0, a)
    x = ar.from_numpy(a, chunks=draw(chunks_for(a.shape)))
    c = draw(st.integers(-4, 4))
    kind = draw(st.sampled_from(["mask", "mask2", "unique", "nonzero", "compress"]))
    if kind == "mask":
        return f"x[x > {c}]", a[a > c], lambda: x[x > c]
    if kind == "mask2":
        keep = (a > c) & (a < c + 4)
        return f"x[(x > {c}) & (x < {c + 4})]", a[keep], lambda: x[(x > c) & (x < c + 4)]
    if kind == "unique":
        return "unique(x)", np.unique(a), lambda: ar.unique(x)
    if kind == "nonzero":
        return f"nonzero(x > {c})[0]", np.nonzero(a > c)[0], lambda: ar.nonzero(x > c)[0]
    n = draw(st.integers(0, a.size))
    cond = a[:n] > c
    return (f"compress(x[:{n}] > {c}, x)", np.compress(cond, a),
            lambda: ar.compress(x[:n] > c, x))


@SETTINGS
@given(src=sources(), then=st.sampled_from(["sum", "mean", "max", "times", "sin", "sort",
                                            "sort_desc", "argsort", "nested", "len"]))
def test_what_goes_on_from_a_data_dependent_result(src, then):
    what, a, build = src
    v = build()
    if then == "sum":
        assert_same(v.sum().compute(), a.sum())
    elif then == "mean":
        if a.size:
            assert_same(v.mean().compute(), _quiet(np.mean, a))
    elif then == "max":
        if a.size:
            assert_same(v.max().compute(), a.max())
    elif then == "times":
        assert_same((v * 2 + 1).compute(), a * 2 + 1)
    elif then == "sin":
        assert_same(ar.sin(v).compute(), _quiet(np.sin, a), atol=1e-12)
    elif then == "sort":
        assert_same(ar.sort(v).compute(), np.sort(a))
    elif then == "sort_desc":
        # The array API's stable descending order: NaN first, the ascending one reversed. A
        # 1-D descending sort reverses the ascending one, a slice that needs the length: it
        # waits for the stage that computes it.
        assert_same(ar.sort(v, descending=True).compute(), np.flip(np.sort(a)))
        v.compute_chunk_sizes()
        assert_same(ar.sort(v, descending=True).compute(), np.flip(np.sort(a)))
    elif then == "argsort":
        assert_same(ar.argsort(v).compute(), np.argsort(a, stable=True))
    elif then == "nested":
        m = float(np.median(a)) if a.size and a.dtype.kind == "i" else 1.0
        assert_same(v[v > m].compute(), a[a > m])
    else:
        assert len(v) == len(a), what
        assert v.size == a.size, what


@SETTINGS
@given(left=sources(), right=sources())
def test_concatenated_data_dependent_results(left, right):
    (_, a, build_v), (_, b, build_w) = left, right
    v, w = build_v(), build_w()
    if a.dtype != b.dtype:
        return
    # Before the lengths are known: the concatenation waits for the stage computing them.
    assert_same(ar.concatenate([v, w]).compute(), np.concatenate([a, b]))
    both = np.concatenate([a, b])
    if both.size:
        assert_same(ar.concatenate([v, w])[-1].compute(), both[-1])
    v.compute_chunk_sizes()
    w.compute_chunk_sizes()
    assert v.shape == a.shape and w.shape == b.shape
    assert_same(ar.concatenate([v, w]).compute(), np.concatenate([a, b]))
    assert_same(ar.concatenate([v, w]).sum().compute(), np.concatenate([a, b]).sum())
