"""Every function the package binds, against NumPy, on arrays hypothesis draws: shapes with
empty dimensions, chunkings down to chunks of one, NaN and ±inf."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ares as ar
from helpers import arrays, assert_same, chunks_for, shapes, tensors

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

UNARY = ["negative", "abs", "absolute", "sqrt", "exp", "log", "sin", "cos", "isnan", "isinf",
         "isfinite", "logical_not"]
BINARY = ["add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
          "logical_or", "logical_xor"]
# NumPy's loops for these on bools make float16/int8/errors, dtypes ares does not have.
MATH = {"sqrt", "exp", "log", "sin", "cos"}


@pytest.fixture(autouse=True, scope="module")
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


def _np_call(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


@pytest.mark.parametrize("name", UNARY)
@SETTINGS
@given(data=st.data())
def test_unary(name, data):
    dtype = data.draw(st.sampled_from(["float64", "int64"] if name in MATH or name == "negative"
                                      else ["float64", "int64", "bool"]))
    a, x = data.draw(tensors(dtype=dtype))
    # libm and NumPy's vectorized loops may differ by a few ulps: absolute near zero.
    assert_same(getattr(ar, name)(x).compute(), _np_call(getattr(np, name), a),
                atol=1e-12 if name in MATH else 0)


@pytest.mark.parametrize("name", BINARY)
@SETTINGS
@given(data=st.data())
def test_binary_broadcast(name, data):
    dtypes = ["float64", "int64"] if name in ("subtract", "power") else ["float64", "int64", "bool"]
    shape = data.draw(shapes(max_dims=2))
    a = data.draw(arrays(dtype=data.draw(st.sampled_from(dtypes)), shape=shape))
    # the second operand broadcasts: drop or shrink leading dimensions
    bshape = tuple(1 if data.draw(st.booleans()) else d for d in shape[data.draw(st.integers(0, len(shape))):])
    b = data.draw(arrays(dtype=data.draw(st.sampled_from(dtypes)), shape=bshape))
    if name == "power":
        if a.dtype.kind == "i" and b.dtype.kind == "i":
            b = np.abs(b) % 5
        if a.dtype.kind == "b" and b.dtype.kind == "b":
            b = b.astype(np.int64)
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    y = ar.from_numpy(b, chunks=data.draw(chunks_for(b.shape)))
    assert_same(getattr(ar, name)(x, y).compute(), _np_call(getattr(np, name), a, b))


@SETTINGS
@given(data=st.data(), scalar=st.one_of(st.integers(-3, 3), st.floats(-3, 3), st.booleans()))
def test_operators_with_python_scalars_are_weak(data, scalar):
    a, x = data.draw(tensors(dtype=data.draw(st.sampled_from(["float64", "int64"])), max_dims=2))
    cases = [
        (lambda v: v + scalar), (lambda v: scalar - v), (lambda v: v * scalar),
        (lambda v: v / (scalar or 1)), (lambda v: -v), (lambda v: abs(v)),
        (lambda v: v == scalar), (lambda v: v != scalar), (lambda v: v < scalar),
        (lambda v: v <= scalar), (lambda v: v > scalar), (lambda v: v >= scalar),
        (lambda v: scalar < v),
    ]
    for f in cases:
        assert_same(f(x).compute(), _np_call(f, a))
    if a.dtype.kind == "f":
        assert_same((x ** 2).compute(), _np_call(lambda v: v ** 2, a))


@SETTINGS
@given(data=st.data())
def test_bool_operators(data):
    a, x = data.draw(tensors(dtype="bool", max_dims=2))
    b, y = data.draw(tensors(dtype="bool", shape=a.shape))
    assert_same((x & y).compute(), a & b)
    assert_same((x | y).compute(), a | b)
    assert_same((x ^ y).compute(), a ^ b)
    assert_same((~x).compute(), ~a)


REDUCTIONS = ["sum", "prod", "min", "max", "mean", "var", "std", "all", "any"]


@pytest.mark.parametrize("name", REDUCTIONS)
@SETTINGS
@given(data=st.data())
def test_reductions(name, data):
    dtype = data.draw(st.sampled_from(["float64", "int64"] if name != "prod" else ["float64"]))
    # A product's over- and underflow depends on the order of the factors: keep them moderate
    # (NaN and ±inf still drawn).
    # So can a sum's cancellation: moderate magnitudes, with an absolute tolerance.
    specials = st.sampled_from([np.nan, np.inf, -np.inf])
    # (magnitudes in [0.5, 2] or 0: no partial product of up to 216 factors under- or
    # overflows, so a tree of chunk products and NumPy's running one agree, inf and NaN too)
    factors = st.floats(0.5, 2) | st.floats(-2, -0.5) | st.just(0.0)
    elements = {"prod": factors | specials,
                "sum": st.floats(-1e6, 1e6) | specials}.get(name) if dtype == "float64" else None
    a, x = data.draw(tensors(dtype=dtype, min_side=0 if name not in ("min", "max") else 1,
                             finite=name in ("var", "std", "mean"), elements=elements))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
    keepdims = data.draw(st.booleans())
    want = _np_call(lambda v: getattr(np, name)(v, axis=axis, keepdims=keepdims), a)
    assume(not (name in ("mean", "var", "std") and np.asarray(want).size and a.size == 0))
    atol = {"var": 1e-7, "std": 1e-7, "mean": 1e-7, "sum": 1e-6}.get(name, 0)
    if name in ("var", "std") and a.size:
        # one-pass moments merged per chunk (Chan) against NumPy's two passes: rounding
        # relative to the data's magnitude, visible when the spread is near zero
        scale = float(np.max(np.abs(a)))
        atol += 1e-12 * scale ** 2 * a.size if name == "var" else 1e-6 * scale * a.size ** 0.5
    got = getattr(ar, name)(x, axis=axis, keepdims=keepdims).compute()
    assert_same(got, want, rtol=1e-7, atol=atol)
    # the method form is the same function
    assert_same(getattr(x, name)(axis=axis, keepdims=keepdims).compute(), want, rtol=1e-7, atol=atol)


@pytest.mark.parametrize("name", ["argmin", "argmax"])
@SETTINGS
@given(data=st.data())
def test_arg_reductions(name, data):
    if not hasattr(ar, name):
        pytest.skip(f"the core has no {name} yet")
    a, x = data.draw(tensors(dtype=data.draw(st.sampled_from(["float64", "int64"])), min_dims=1, min_side=1))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    assert_same(getattr(ar, name)(x, axis=axis).compute(), getattr(np, name)(a, axis=axis))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@SETTINGS
@given(data=st.data())
def test_scans(name, data):
    # Chunked running totals add in another order: moderate magnitudes, NaN and ±inf kept.
    specials = st.sampled_from([np.nan, np.inf, -np.inf])
    dtype = data.draw(st.sampled_from(["float64", "int64", "bool"]))
    bound = 1e6 if name == "cumsum" else 4.0
    elements = st.floats(-bound, bound) | specials if dtype == "float64" else None
    a, x = data.draw(tensors(dtype=dtype, max_side=5, elements=elements))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1) if a.ndim else st.none()))
    assume(a.ndim or axis is None)
    assert_same(getattr(ar, name)(x, axis=axis).compute(), _np_call(lambda v: getattr(np, name)(v, axis=axis), a),
                rtol=1e-6, atol=1e-6)


@SETTINGS
@given(data=st.data())
def test_where_and_clip(data):
    a, x = data.draw(tensors(dtype=data.draw(st.sampled_from(["float64", "int64"])), max_dims=2))
    c = a > 0
    assert_same(ar.where(x > 0, x, -x).compute(), np.where(c, a, -a))
    assert_same(ar.where(x > 0, x, 0.5).compute(), np.where(c, a, 0.5))
    assert_same(ar.clip(x, -2, 3).compute(), np.clip(a, -2, 3))
    assert_same(x.clip(None, 1).compute(), np.clip(a, None, 1))


@SETTINGS
@given(data=st.data())
def test_basic_indexing(data):
    a, x = data.draw(tensors(min_dims=1, max_dims=3))
    index = []
    for d in a.shape:
        kind = data.draw(st.sampled_from(["slice", "int", "full", "newaxis"]))
        if kind == "int" and d > 0:
            index.append(data.draw(st.integers(-d, d - 1)))
        elif kind == "slice":
            step = data.draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
            start = data.draw(st.one_of(st.none(), st.integers(-d - 2, d + 2)))
            stop = data.draw(st.one_of(st.none(), st.integers(-d - 2, d + 2)))
            index.append(slice(start, stop, step))
        elif kind == "newaxis":
            index.append(None)
            index.append(slice(None))
        else:
            index.append(slice(None))
    if data.draw(st.booleans()) and len(index) > 1:
        index = [Ellipsis] + index[1:] if data.draw(st.booleans()) else index[:1] + [Ellipsis]
    index = tuple(index)
    assert_same(x[index].compute(), a[index])


@SETTINGS
@given(data=st.data())
def test_mask_take_and_integer_arrays(data):
    a, x = data.draw(tensors(min_dims=1, max_dims=2, min_side=1))
    mask = a > 0 if a.dtype != np.bool_ else a
    assert_same(x[x > 0 if a.dtype != np.bool_ else x].compute(), a[mask])
    idx = np.asarray(data.draw(st.lists(st.integers(-a.shape[0], a.shape[0] - 1), max_size=6)), dtype=np.int64)
    assert_same(x[idx].compute(), a[idx])
    assert_same(x[ar.from_numpy(idx)].compute(), a[idx])
    axis = data.draw(st.integers(0, a.ndim - 1))
    j = np.asarray(data.draw(st.lists(st.integers(0, a.shape[axis] - 1), max_size=4)), dtype=np.int64)
    assert_same(ar.take(x, j, axis=axis).compute(), np.take(a, j, axis=axis))


@SETTINGS
@given(data=st.data())
def test_sorting_and_unique(data):
    a, x = data.draw(tensors(dtype=data.draw(st.sampled_from(["float64", "int64"])), min_dims=1, max_dims=2))
    assert_same(ar.sort(x).compute(), np.sort(a))
    order = ar.argsort(x).compute()
    assert order.dtype == np.int64 and order.shape == a.shape
    assert_same(np.take_along_axis(a, order, axis=-1), np.sort(a))
    assert_same(ar.unique(x).compute(), np.unique(a))
    values, counts = ar.compute(*ar.unique_counts(x))
    want_v, want_c = np.unique(a, return_counts=True)
    assert_same(values, want_v)
    assert_same(counts, want_c)
    flat = np.sort(a.ravel())
    v = np.asarray(data.draw(st.lists(st.integers(-5, 5), max_size=5)), dtype=a.dtype)
    s = ar.from_numpy(flat, chunks=data.draw(chunks_for(flat.shape)))
    for side in ("left", "right"):
        assert_same(ar.searchsorted(s, v, side=side).compute(), np.searchsorted(flat, v, side=side))


@SETTINGS
@given(data=st.data())
def test_shape_functions(data):
    a, x = data.draw(tensors(max_dims=3))
    assert_same(x.reshape(-1).compute(), a.reshape(-1))
    assert_same(ar.reshape(x, (a.size,)).compute(), a.reshape(a.size))
    assert_same(x.T.compute(), a.T)
    assert_same(ar.transpose(x).compute(), np.transpose(a))
    axes = tuple(data.draw(st.permutations(range(a.ndim))))
    assert_same(ar.permute_dims(x, axes).compute(), np.transpose(a, axes))
    assert_same(x.transpose(*axes).compute() if axes else x.compute(), np.transpose(a, axes))
    if a.ndim >= 2:
        assert_same(x.mT.compute(), np.swapaxes(a, -1, -2))
        assert_same(ar.matrix_transpose(x).compute(), np.matrix_transpose(a))
    assert_same(ar.expand_dims(x, 0).compute(), np.expand_dims(a, 0))
    assert_same(ar.squeeze(ar.expand_dims(x, -1), axis=-1).compute(), a)
    for dtype in (ar.float64, ar.int64, ar.bool):
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if a.dtype.kind == "f" and dtype == ar.int64 and not (np.abs(a) < 2.0**63).all():
                # out of int64's range the cast is undefined (NumPy: platform-dependent)
                continue
            assert_same(ar.astype(x, dtype).compute(), a.astype(dtype))
    assert_same(x.rechunk(1).compute(), a)
    # as dask: an empty dimension is one chunk of length 0
    assert x.rechunk(1).chunks == tuple((1,) * d if d else (0,) for d in a.shape)
    assert_same(ar.broadcast_to(x, (2,) + a.shape).compute(), np.broadcast_to(a, (2,) + a.shape))


@SETTINGS
@given(data=st.data())
def test_joining(data):
    a, x = data.draw(tensors(min_dims=1, max_dims=2))
    b, y = data.draw(tensors(dtype=str(a.dtype), shape=a.shape))
    assert_same(ar.concatenate((x, y)).compute(), np.concatenate((a, b)))
    assert_same(ar.concat([x, y], axis=-1).compute(), np.concat([a, b], axis=-1))
    assert_same(ar.stack((x, y), axis=1).compute(), np.stack((a, b), axis=1))
    n = a.shape[0]
    sections = data.draw(st.sampled_from([k for k in range(1, max(n, 1) + 1) if n % k == 0] or [1]))
    for got, want in zip(ar.compute(*ar.split(x, sections)), np.split(a, sections)):
        assert_same(got, want)


@SETTINGS
@given(data=st.data())
def test_linalg(data):
    n, k, m = (data.draw(st.integers(1, 5)) for _ in range(3))
    dtype = data.draw(st.sampled_from(["float64", "int64"]))
    # Products summed in another order: magnitudes that keep the rounding under atol.
    elements = st.floats(-100, 100) if dtype == "float64" else None
    a, x = data.draw(tensors(dtype=dtype, shape=(n, k), elements=elements))
    b, y = data.draw(tensors(dtype=dtype, shape=(k, m), elements=elements))
    v, vt = data.draw(tensors(dtype=dtype, shape=(k,), elements=elements))
    assert_same((x @ y).compute(), a @ b, rtol=1e-9, atol=1e-6)
    assert_same(ar.matmul(x, vt).compute(), a @ v, rtol=1e-9, atol=1e-6)
    assert_same(ar.dot(x, y).compute(), np.dot(a, b), rtol=1e-9, atol=1e-6)
    assert_same(ar.tensordot(x, y, axes=1).compute(), np.tensordot(a, b, axes=1), rtol=1e-9, atol=1e-6)
    assert_same(ar.inner(vt, vt).compute(), np.inner(v, v), rtol=1e-9, atol=1e-6)
    assert_same((a @ y).compute(), a @ b, rtol=1e-9, atol=1e-6)  # NumPy on the left defers


def test_creation():
    assert_same(ar.ones((3, 4), chunks=2).compute(), np.ones((3, 4)))
    assert_same(ar.zeros(5, dtype=ar.int64).compute(), np.zeros(5, dtype=np.int64))
    assert_same(ar.empty((2, 0)).compute(), np.zeros((2, 0)))
    assert_same(ar.full((2, 3), 7).compute(), np.full((2, 3), 7))
    assert_same(ar.full((2,), 2.5, dtype="int64").compute(), np.full((2,), 2.5).astype(np.int64))
    assert_same(ar.arange(10, chunks=3).compute(), np.arange(10))
    assert_same(ar.arange(1, 2, 0.25).compute(), np.arange(1, 2, 0.25))
    assert_same(ar.arange(5, dtype=ar.float64).compute(), np.arange(5, dtype=np.float64))
    for args in [(0, 2), (-1, 1), (5, 6), (3, 1, -1), (0,)]:
        assert_same(ar.arange(*args, dtype=ar.bool).compute(), np.arange(*args, dtype=bool))
    with pytest.raises(TypeError, match="at most length 2"):
        np.arange(-7, 4, dtype=bool)
    with pytest.raises(TypeError, match="at most length 2"):
        ar.arange(-7, 4, dtype=ar.bool)
    assert_same(ar.linspace(0, 1, 7, chunks=2).compute(), np.linspace(0, 1, 7))
    assert_same(ar.linspace(0, 1, 7, endpoint=False).compute(), np.linspace(0, 1, 7, endpoint=False))
    x = ar.arange(6).reshape(2, 3)
    assert_same(ar.ones_like(x).compute(), np.ones((2, 3), dtype=np.int64))
    assert_same(ar.zeros_like(x, dtype=ar.bool).compute(), np.zeros((2, 3), dtype=bool))
    assert_same(ar.full_like(x, 9).compute(), np.full((2, 3), 9))
    assert_same(ar.empty_like(x).compute(), np.zeros((2, 3), dtype=np.int64))
    assert_same(ar.asarray([[1, 2], [3, 4]]).compute(), np.asarray([[1, 2], [3, 4]]))
    assert_same(ar.asarray(np.arange(4, dtype=np.int32)).compute(), np.arange(4, dtype=np.int32))
    assert_same(ar.asarray(np.arange(4, dtype=np.float32)).compute(), np.arange(4, dtype=np.float32))
    assert_same(ar.asarray(np.arange(4, dtype=np.int8)).compute(), np.arange(4, dtype=np.int8))
    assert ar.ones((10, 10), chunks=((2, 3, 5), 4)).chunks == ((2, 3, 5), (4, 4, 2))


def test_random_is_deterministic_with_a_seed_and_depends_on_the_chunking():
    a = ar.random.rand(1000, chunks=100, seed=3).compute()
    assert a.dtype == np.float64 and a.shape == (1000,)
    assert ((a >= 0) & (a < 1)).all() and 0.4 < a.mean() < 0.6
    assert_same(ar.random.rand(1000, chunks=100, seed=3).compute(), a)
    assert not np.array_equal(ar.random.rand(1000, chunks=100, seed=4).compute(), a)
    n = ar.random.randn(2000, 3, chunks=500, seed=1).compute()
    assert n.shape == (2000, 3) and abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    u = ar.random.uniform(2, 3, size=100, seed=1).compute()
    assert ((u >= 2) & (u < 3)).all()
    ar.random.seed(7)
    first = ar.random.rand(10).compute()
    ar.random.seed(7)
    assert_same(ar.random.rand(10).compute(), first)


def test_numpy_protocols_stay_lazy():
    a = np.arange(12.0).reshape(3, 4)
    x = ar.from_numpy(a, chunks=2)
    for lazy, want in [
        (np.exp(x), np.exp(a)), (np.add(x, 1), a + 1), (np.sum(x, axis=0), a.sum(axis=0)),
        (np.mean(x), a.mean()), (np.sum(x, 1), a.sum(1)), (np.std(x, 0), a.std(0)), (np.add.reduce(x), np.add.reduce(a)), (np.maximum(x, a), a),
        (np.where(x > 3, x, 0), np.where(a > 3, a, 0)), (np.concatenate([x, x]), np.concatenate([a, a])),
        (np.transpose(x), a.T), (np.cumsum(x, axis=1), np.cumsum(a, axis=1)), (a + x, a + a),
        (np.median(x), np.median(a)),
    ]:
        assert isinstance(lazy, ar.Tensor), type(lazy)
        assert_same(lazy.compute(), want)
    assert_same(np.asarray(x), a)
    with pytest.warns(UserWarning, match="ares has no numpy.ptp"):
        assert np.ptp(x) == np.ptp(a)
