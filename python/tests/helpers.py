"""Strategies and comparisons shared by the tests: arrays with NaN, ±inf, empty dimensions
and chunks of one, and an exact comparison with NumPy (dtype, shape, values)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ares as ar

DTYPES = {
    "float64": st.floats(allow_nan=True, allow_infinity=True, width=64, min_value=None),
    "int64": st.integers(-1000, 1000),
    "bool": st.booleans(),
}


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=6):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


@st.composite
def arrays(draw, dtype=None, shape=None, min_dims=0, max_dims=3, min_side=0, max_side=6,
           finite=False, elements=None):
    dtype = dtype or draw(st.sampled_from(sorted(DTYPES)))
    shape = shape if shape is not None else draw(shapes(min_dims, max_dims, min_side, max_side))
    if elements is not None:
        return draw(hnp.arrays(np.dtype(dtype), shape if shape is not None else draw(
            shapes(min_dims, max_dims, min_side, max_side)), elements=elements))
    elements = DTYPES[dtype]
    if dtype == "float64":
        elements = st.floats(allow_nan=not finite, allow_infinity=not finite, width=64,
                             min_value=-1e6 if finite else None, max_value=1e6 if finite else None)
    return draw(hnp.arrays(np.dtype(dtype), shape, elements=elements))


@st.composite
def chunks_for(draw, shape):
    """A chunking: one length, one per dimension, or explicit lengths per dimension."""
    kind = draw(st.sampled_from(["one", "per_dim", "explicit"]))
    if kind == "one" or not shape:
        return draw(st.integers(1, max(max(shape, default=1), 1)))
    if kind == "per_dim":
        return tuple(draw(st.integers(1, max(d, 1))) for d in shape)
    out = []
    for d in shape:
        parts, left = [], d
        while left > 0:
            n = draw(st.integers(1, left))
            parts.append(n)
            left -= n
        out.append(tuple(parts) if parts else (0,))
    return tuple(out)


@st.composite
def tensors(draw, **kw):
    """A NumPy array and the same data as an ares tensor with a drawn chunking."""
    a = draw(arrays(**kw))
    return a, ar.from_numpy(a, chunks=draw(chunks_for(a.shape)))


def assert_same(got, want, rtol=1e-9, atol=0.0):
    """`got` (an ares result) equals NumPy's `want`: dtype, shape, and values (NaN == NaN)."""
    want = np.asarray(want)
    got_arr = np.asarray(got)
    if want.ndim == 0:
        assert not isinstance(got, np.ndarray), f"0-d results are Python scalars, got {got!r}"
        assert type(got) is type(want.item()), f"{type(got)} != {type(want.item())}"
    assert got_arr.dtype == want.dtype, f"dtype {got_arr.dtype} != {want.dtype}"
    assert got_arr.shape == want.shape, f"shape {got_arr.shape} != {want.shape}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got_arr, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got_arr, want)
