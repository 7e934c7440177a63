"""NumPy's everyday functions (issue 29) against NumPy: the nan-reductions, median, percentile
and quantile (exact, bit for bit where NumPy's formula is followed), histogram, bincount,
isin, einsum, pad, block, ravel/flatten/copy/item/tolist, integer-array indexing, and
NumPy's dispatch (``np.median(x)`` stays lazy)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ares as ar
from helpers import arrays, chunks_for, shapes

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(autouse=True, scope="module")
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


def assert_same(got, want, rtol=1e-9, atol=0.0):
    """dtype, shape and values (NaN == NaN) of a computed result against NumPy's."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _np(f, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


@st.composite
def with_nans(draw, dtype="float64", min_dims=0, max_dims=3, min_side=0):
    """An array with NaN here and there (whole slices of NaN too), and its tensor."""
    shape = draw(shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=5))
    if dtype == "int64":
        a = draw(hnp.arrays(np.int64, shape, elements=st.integers(-1000, 1000)))
    else:
        a = draw(hnp.arrays(np.float64, shape, elements=st.floats(-1e3, 1e3)))
        mask = draw(hnp.arrays(np.bool_, shape))
        a = np.where(mask, np.nan, a).astype(dtype)
    return a, ar.from_numpy(a, chunks=draw(chunks_for(a.shape)))


@st.composite
def axis_of(draw, ndim, tuple_axis=True):
    forms = [None] + list(range(-ndim, ndim))
    if tuple_axis and ndim >= 2:
        forms.append(tuple(sorted(draw(st.sets(st.integers(0, ndim - 1), min_size=2)))))
    return draw(st.sampled_from(forms))


# -- nan-reductions ---------------------------------------------------------------------------

NAN_REDUCTIONS = ["nansum", "nanprod", "nanmin", "nanmax", "nanmean", "nanvar", "nanstd"]


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64"]))
def test_nan_reductions_match_numpy(name, data, dtype):
    a, x = data.draw(with_nans(dtype))
    axis = data.draw(axis_of(a.ndim))
    keepdims = data.draw(st.booleans())
    kwargs = {"axis": axis, "keepdims": keepdims}
    if name in ("nanvar", "nanstd"):
        kwargs["ddof"] = data.draw(st.integers(0, 2))
    if name in ("nanmin", "nanmax") and any(a.shape[d] == 0 for d in
                                             (range(a.ndim) if axis is None else
                                              np.atleast_1d(axis) % max(a.ndim, 1))):
        with pytest.raises(ValueError):
            getattr(ar, name)(x, **kwargs).compute()
        return
    want = _np(getattr(np, name), a, **kwargs)
    got = getattr(ar, name)(x, **kwargs)
    assert got.shape == np.shape(want)
    # float32 sums per chunk against NumPy's pairwise order: a float32 tolerance.
    rtol = 1e-5 if a.dtype == np.float32 else 1e-9
    assert_same(got.compute(), want, rtol=rtol, atol=rtol * 1e3 if name == "nanprod" else rtol)


@pytest.mark.parametrize("name", ["nanargmin", "nanargmax"])
@SETTINGS
@given(data=st.data())
def test_nan_arg_reductions_match_numpy_or_raise_as_it_does(name, data):
    a, x = data.draw(with_nans(min_dims=1, min_side=1))
    axis = data.draw(st.sampled_from([None] + list(range(-a.ndim, a.ndim))))
    try:
        want = _np(getattr(np, name), a, axis=axis)
    except ValueError as e:
        with pytest.raises(ValueError, match="All-NaN"):
            getattr(ar, name)(x, axis=axis)
        assert "All-NaN" in str(e)
        return
    assert_same(getattr(np, name)(x, axis=axis).compute(), want)


# -- median, percentile, quantile ---------------------------------------------------------------

@st.composite
def quantile_q(draw):
    form = draw(st.sampled_from(["float", "list", "ints", "array"]))
    if form == "float":
        return draw(st.floats(0, 1))
    if form == "ints":
        return draw(st.sampled_from([0, 1, [0, 1], [1]]))
    qs = draw(st.lists(st.floats(0, 1), min_size=1, max_size=4))
    return qs if form == "list" else np.asarray(qs)


@pytest.mark.parametrize("name", ["quantile", "percentile"])
@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64"]))
def test_quantiles_are_numpys_bit_for_bit(name, data, dtype):
    a, x = data.draw(with_nans(dtype, min_side=1))
    axis = data.draw(axis_of(a.ndim))
    q = data.draw(quantile_q())
    if name == "percentile":
        q = (np.asarray(q) * 100).tolist() if not isinstance(q, float) else q * 100
    keepdims = data.draw(st.booleans())
    want = _np(getattr(np, name), a, q, axis=axis, keepdims=keepdims)
    got = getattr(np, name)(x, q, axis=axis, keepdims=keepdims)  # through NumPy's dispatch
    assert isinstance(got, ar.Tensor)
    got = got.compute()
    assert np.asarray(got).dtype == want.dtype and np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)


@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(["float64", "float32", "int64", "bool"]))
def test_median_is_numpys(data, dtype):
    if dtype == "bool":
        a = data.draw(arrays("bool", min_dims=1, min_side=1, max_side=5))
        x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    else:
        a, x = data.draw(with_nans(dtype, min_side=1))
    axis = data.draw(axis_of(a.ndim))
    keepdims = data.draw(st.booleans())
    want = _np(np.median, a, axis=axis, keepdims=keepdims)
    got = np.median(x, axis=axis, keepdims=keepdims)
    assert isinstance(got, ar.Tensor)
    assert_same(got.compute(), want, rtol=0)


def test_median_of_a_long_vector_sorts_across_chunks():
    a = np.random.default_rng(3).standard_normal(100_001)
    x = ar.from_numpy(a, chunks=7_000)
    assert ar.median(x).compute() == np.median(a)
    got = ar.percentile(x, [1, 50, 99.9]).compute()
    np.testing.assert_array_equal(got, np.percentile(a, [1, 50, 99.9]))


def test_quantile_errors_are_numpys():
    x = ar.from_numpy(np.arange(6.0))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ar.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        ar.percentile(x, [50, 101])
    with pytest.raises(ValueError, match="linear"):
        ar.quantile(x, 0.5, method="nearest")
    with pytest.raises(ValueError, match="bool"):
        ar.quantile(ar.from_numpy(np.array([True, False])), 0.5)
    with pytest.raises(ValueError, match="empty"):
        ar.median(ar.zeros((0,)))


# -- histogram, bincount, isin ----------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_histogram_matches_numpy(data):
    a = data.draw(arrays("float64", min_dims=1, max_dims=2, finite=True, max_side=8))
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    form = data.draw(st.sampled_from(["int", "range", "edges", "weights", "density"]))
    kwargs = {}
    if form == "range":
        kwargs = {"bins": data.draw(st.integers(1, 6)), "range": (-10.0, 10.0)}
    elif form == "edges":
        kwargs = {"bins": sorted(data.draw(st.lists(st.floats(-1e6, 1e6), min_size=2,
                                                     max_size=5, unique=True)))}
    elif form == "int":
        kwargs = {"bins": data.draw(st.integers(1, 6))}
    elif form == "weights":
        w = np.arange(a.size, dtype=np.float64).reshape(a.shape)
        kwargs = {"bins": 3, "weights": w}
    else:
        kwargs = {"bins": 4, "density": True}
    try:
        want_counts, want_edges = _np(np.histogram, a, **kwargs)
    except ValueError:
        with pytest.raises(ValueError):
            ar.histogram(x, **kwargs)
        return
    if "weights" in kwargs:
        kwargs["weights"] = ar.from_numpy(kwargs["weights"], chunks=x.chunks)
    counts, edges = np.histogram(x, **kwargs)
    assert isinstance(counts, ar.Tensor)
    assert_same(edges.compute(), want_edges, rtol=0)
    assert_same(counts.compute(), want_counts, rtol=1e-12)


def test_histogram_takes_the_right_edge_into_the_last_bin():
    a = np.array([0.0, 1.0, 2.0, 3.0, 3.0, np.nan, 4.0])
    x = ar.from_numpy(a, chunks=3)
    counts, _ = ar.histogram(x, bins=3, range=(0, 3))
    np.testing.assert_array_equal(counts.compute(), np.histogram(a, bins=3, range=(0, 3))[0])
    assert counts.compute().tolist() == [1, 1, 3]


@SETTINGS
@given(data=st.data(), weighted=st.booleans(), minlength=st.integers(0, 12))
def test_bincount_matches_numpy(data, weighted, minlength):
    a = data.draw(hnp.arrays(np.int64, st.integers(0, 30), elements=st.integers(0, 20)))
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    w = np.linspace(-1, 1, a.size) if weighted else None
    want = np.bincount(a, weights=w, minlength=minlength)
    got = np.bincount(x, weights=None if w is None else ar.from_numpy(w, chunks=x.chunks),
                      minlength=minlength)
    assert_same(got.compute(), want, rtol=1e-12, atol=1e-12)


def test_bincount_refuses_what_numpy_refuses():
    with pytest.raises(ValueError, match="negative"):
        ar.bincount(ar.from_numpy(np.array([1, -1])))
    with pytest.raises(TypeError):
        ar.bincount(ar.from_numpy(np.array([1.5])))
    with pytest.raises(ValueError):
        ar.bincount(ar.from_numpy(np.zeros((2, 2), dtype=np.int64)))


@SETTINGS
@given(data=st.data(), invert=st.booleans(), as_tensor=st.booleans())
def test_isin_matches_numpy(data, invert, as_tensor):
    dtype = data.draw(st.sampled_from(["int64", "float64"]))
    a = data.draw(arrays(dtype, max_dims=2, max_side=6))
    if dtype == "float64":
        a = np.round(a % 10, 0) if np.isfinite(a).all() else a
    test = data.draw(hnp.arrays(np.int64, st.integers(0, 6), elements=st.integers(-3, 8)))
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    values = ar.from_numpy(test, chunks=2) if as_tensor else test
    want = np.isin(a, test, invert=invert)
    assert_same(np.isin(x, values, invert=invert).compute(), want)


# -- einsum ------------------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(4, 5), (5, 3)]),
    ("ij,jk", [(4, 5), (5, 3)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i->", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,jk->bik", [(2, 3, 4), (4, 5)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk,jl->kli", [(2, 3, 4), (3, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
    ("i...->...", [(3, 2, 2)]),
    ("ab,cb->ac", [(3, 1), (2, 4)]),
]


@pytest.mark.parametrize("subscripts,shapes_", EINSUMS)
def test_einsum_matches_numpy(subscripts, shapes_):
    rng = np.random.default_rng(len(subscripts))
    arrays_ = [rng.standard_normal(s) for s in shapes_]
    tensors_ = [ar.from_numpy(a, chunks=2) for a in arrays_]
    want = np.einsum(subscripts, *arrays_)
    got = np.einsum(subscripts, *tensors_)
    assert isinstance(got, ar.Tensor)
    assert_same(got.compute(), want, rtol=1e-12, atol=1e-12)


def test_einsum_of_integers_and_errors():
    a = np.arange(12).reshape(3, 4)
    x = ar.from_numpy(a, chunks=2)
    assert_same(ar.einsum("ij,kj->ik", x, x).compute(), np.einsum("ij,kj->ik", a, a))
    with pytest.raises(ValueError, match="operands"):
        ar.einsum("ij,jk->ik", x)
    with pytest.raises(ValueError, match="dimensions"):
        ar.einsum("ijk->i", x)
    with pytest.raises(ValueError, match="diagonal"):
        ar.einsum("ii->i", ar.ones((3, 3)))


def test_einsum_of_a_matmul_is_one_matmul():
    x = ar.ones((4, 5), chunks=2)
    y = ar.ones((5, 3), chunks=2)
    graph = ar.einsum("ij,jk->ik", x, y)._handle.graph_json()
    assert "matmul" in graph and "transpose" not in graph and "reshape" not in graph


# -- pad, block, ravel, copy, item, tolist -------------------------------------------------------

@SETTINGS
@given(data=st.data(), mode=st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
def test_pad_matches_numpy(data, mode):
    a = data.draw(arrays("int64", min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    form = data.draw(st.sampled_from(["int", "pair", "per_axis"]))
    if form == "int":
        width = data.draw(st.integers(0, 6))
    elif form == "pair":
        width = (data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5)))
    else:
        width = tuple((data.draw(st.integers(0, 5)), data.draw(st.integers(0, 5)))
                      for _ in range(a.ndim))
    kwargs = {"constant_values": data.draw(st.integers(-5, 5))} if mode == "constant" else {}
    want = np.pad(a, width, mode=mode, **kwargs)
    got = np.pad(x, width, mode=mode, **kwargs)
    assert isinstance(got, ar.Tensor)
    assert_same(got.compute(), want)


def test_pad_refuses_what_it_lacks():
    x = ar.ones((3,))
    with pytest.raises(ValueError, match="mode"):
        ar.pad(x, 1, mode="linear_ramp")
    with pytest.raises(ValueError, match="negative"):
        ar.pad(x, -1)
    with pytest.raises(ValueError, match="empty axis"):
        ar.pad(ar.zeros((0,)), 1, mode="reflect")


def test_block_matches_numpy():
    a = np.arange(6.0).reshape(2, 3)
    b = np.ones((2, 2))
    c = np.zeros((1, 5))
    x, y, z = (ar.from_numpy(v, chunks=2) for v in (a, b, c))
    assert_same(np.block([[x, y], [z]]).compute(), np.block([[a, b], [c]]))
    assert_same(ar.block([x, x]).compute(), np.block([a, a]))
    assert_same(ar.block([[[x]], [[x]]]).compute(), np.block([[[a]], [[a]]]))
    v = np.arange(3)
    assert_same(ar.block([ar.from_numpy(v), 7]).compute(), np.block([v, 7]))
    with pytest.raises(ValueError, match="depths"):
        ar.block([[x], x])
    with pytest.raises(TypeError, match="tuple"):
        ar.block((x, x))


def test_ravel_flatten_copy_item_tolist():
    a = np.arange(12).reshape(3, 4)
    x = ar.from_numpy(a, chunks=(2, 3))
    assert_same(np.ravel(x).compute(), np.ravel(a))
    assert_same(x.ravel().compute(), a.ravel())
    assert_same(x.flatten().compute(), a.flatten())
    assert np.copy(x) is not x and x.copy() is not x  # copies (see test_no_silent_divergence)
    assert_same(np.copy(x).compute(), a) and assert_same(x.copy().compute(), a)
    assert x[1, 2].item() == a[1, 2].item() and type(x[1, 2].item()) is int
    assert x[1:2, 2:3].item() == 6
    with pytest.raises(ValueError, match="size 1"):
        x.item()
    assert x.tolist() == a.tolist()
    assert x[0, 0].tolist() == 0


# -- integer-array indexing ----------------------------------------------------------------------

@st.composite
def advanced_index(draw, shape):
    """A tuple of basic items with one or two integer arrays (lists, arrays, tensors)."""
    n_adv = draw(st.integers(1, min(2, len(shape))))
    axes = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=n_adv, max_size=n_adv)))
    index_shape = draw(st.sampled_from([(2,), (3,), (1,), (2, 2)]))
    index = []
    for d, n in enumerate(shape):
        if d in axes:
            pos = draw(hnp.arrays(np.int64, index_shape, elements=st.integers(-n, n - 1)))
            form = draw(st.sampled_from(["list", "array", "tensor"]))
            index.append(pos.tolist() if form == "list" else
                         pos if form == "array" else ar.from_numpy(pos, chunks=1))
        else:
            index.append(draw(st.sampled_from([slice(None), slice(1, None), slice(None, None, -1),
                                               0, -1])))
    return tuple(index)


@SETTINGS
@given(data=st.data())
def test_integer_array_indexing_matches_numpy(data):
    a = data.draw(arrays("int64", min_dims=1, max_dims=3, min_side=1, max_side=4))
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    index = data.draw(advanced_index(a.shape))
    np_index = tuple(i.compute() if isinstance(i, ar.Tensor) else i for i in index)
    want = a[np_index]
    got = x[index]
    assert got.shape == want.shape
    assert_same(got.compute(), want)


def test_integer_array_indexing_forms():
    a = np.arange(24).reshape(2, 3, 4)
    x = ar.from_numpy(a, chunks=(1, 2, 3))
    for index in [(slice(None), [0, 2]), (Ellipsis, [3, -1]), (None, 0, [2, 1]),
                  ([1, 0], slice(None), [0, 3]), (0, [[0, 1], [2, 2]]), ([0, 1], [2, 0], 1),
                  (slice(None), [], 0)]:
        assert_same(x[index].compute(), a[index])
    with pytest.raises(IndexError, match="out of bounds"):
        x[:, [0, 3]]
    with pytest.raises(IndexError, match="too many"):
        x[0, 0, 0, [0]]


# -- NumPy's dispatch stays lazy -------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: np.median(x), lambda x: np.percentile(x, 5), lambda x: np.quantile(x, [0.5]),
    lambda x: np.nansum(x), lambda x: np.nanmean(x, axis=0), lambda x: np.nanstd(x),
    lambda x: np.nanvar(x), lambda x: np.nanmin(x), lambda x: np.nanmax(x),
    lambda x: np.nanprod(x), lambda x: np.nanargmin(x), lambda x: np.nanargmax(x),
    lambda x: np.histogram(x, bins=3, range=(0, 1))[0], lambda x: np.isin(x, [0.5]),
    lambda x: np.einsum("ij->i", x), lambda x: np.pad(x, 1), lambda x: np.block([x, x]),
    lambda x: np.ravel(x), lambda x: np.bincount(np.ravel(x).astype(np.int64)),
])
def test_numpy_functions_stay_lazy(call):
    x = ar.ones((3, 4), chunks=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the "computed and NumPy runs it" warning fails
        assert isinstance(call(x), ar.Tensor)
