"""The narrow integer dtypes (int8, int16, uint8, uint16, uint32) and uint64 against NumPy 2:
promotion with every dtype, NEP 50's weak Python integers (OverflowError out of range),
wrapping arithmetic, division by zero, shifts past the width, bitwise operations,
comparisons past 2**63, reductions' result dtypes, casts, sorting, indexing and the
``from_numpy`` / ``.npy`` round trips, with arbitrary chunkings."""

from __future__ import annotations

import operator
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ares as ar
from helpers import chunks_for, shapes

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
NEW = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]
ALL = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
       "float32", "float64", "complex64", "complex128"]


@pytest.fixture(autouse=True, scope="module")
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


def elements(dtype):
    info = np.iinfo(dtype)
    # The range's edges drawn often: that is where wrapping and signedness show.
    return st.one_of(st.integers(int(info.min), int(info.max)),
                     st.sampled_from([int(info.min), int(info.max), 0, 1]))


@st.composite
def pair(draw, dtype, shape=None):
    shape = draw(shapes(max_dims=2)) if shape is None else shape
    a = draw(hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype)))
    return a, ar.from_numpy(a, chunks=draw(chunks_for(a.shape)))


def numpy(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(f(*args))


def same(got, want):
    """Same dtype, shape and values (floats to the bit; any NaN equals any NaN)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape
    if want.dtype.kind == "f":
        both = np.isnan(got) & np.isnan(want)
        assert np.array_equal(np.where(both, 0, got), np.where(both, 0, want))
    else:
        assert np.array_equal(got, want), f"{got} != {want}"


def test_the_dtypes_are_published():
    for name in NEW:
        assert getattr(ar, name) == np.dtype(name)
        assert ar.iinfo(getattr(ar, name)).max == np.iinfo(name).max
    assert ar.isdtype(ar.uint8, "unsigned integer") and not ar.isdtype(ar.int8, "unsigned integer")
    assert ar.isdtype(ar.int16, "signed integer") and ar.isdtype(ar.uint64, "integral")
    assert ar.can_cast(ar.uint8, ar.int16) and not ar.can_cast(ar.int8, ar.uint64)


@pytest.mark.parametrize("a", ALL)
def test_promotion_follows_numpys_table(a):
    for b in ALL:
        x, y = ar.zeros(2, dtype=a), ar.zeros(2, dtype=b)
        want = np.result_type(a, b)
        assert (x + y).dtype == want, f"{a} + {b}"
        assert ar.result_type(x, y) == want
        same((x + y).compute(), np.zeros(2, a) + np.zeros(2, b))


@pytest.mark.parametrize("dtype", NEW)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "floordiv", "mod", "and_", "or_", "xor",
                                "lt", "le", "eq", "ne", "gt", "ge"])
@SETTINGS
@given(data=st.data())
def test_binary_operators_wrap_as_numpy(dtype, op, data):
    shape = data.draw(shapes(max_dims=2))
    a, x = data.draw(pair(dtype, shape))
    b, y = data.draw(pair(dtype, shape))
    f = getattr(operator, op)
    same(f(x, y).compute(), numpy(f, a, b))


@pytest.mark.parametrize("dtype", NEW)
@pytest.mark.parametrize("name", ["maximum", "minimum", "left_shift", "right_shift",
                                  "floor_divide", "remainder"])
@SETTINGS
@given(data=st.data())
def test_binary_functions_follow_numpy(dtype, name, data):
    shape = data.draw(shapes(max_dims=2))
    a, x = data.draw(pair(dtype, shape))
    bits = np.dtype(dtype).itemsize * 8
    if "shift" in name:
        # Counts from 0 to past the width (NumPy: every bit shifted out).
        b = data.draw(hnp.arrays(np.dtype(dtype), shape, elements=st.integers(0, bits + 3)))
        y = ar.from_numpy(b)
    else:
        b, y = data.draw(pair(dtype, shape))
    same(getattr(ar, name)(x, y).compute(), numpy(getattr(np, name), a, b))


@pytest.mark.parametrize("dtype", NEW)
@pytest.mark.parametrize("name", ["negative", "abs", "square", "sign", "bitwise_invert",
                                  "floor", "ceil", "trunc", "positive"])
@SETTINGS
@given(data=st.data())
def test_unary_functions_follow_numpy(dtype, name, data):
    a, x = data.draw(pair(dtype))
    f = np.invert if name == "bitwise_invert" else getattr(np, name)
    same(getattr(ar, name)(x).compute(), numpy(f, a))


@pytest.mark.parametrize("dtype", NEW)
def test_edges_numpy_defines(dtype):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 0, 1, 5], dtype)
    x = ar.from_numpy(a, chunks=2)
    zeros = np.zeros(5, dtype)
    for f in (np.floor_divide, np.remainder):  # by zero: 0, as NumPy (with a warning)
        same(getattr(ar, f.__name__)(x, ar.from_numpy(zeros)).compute(), numpy(f, a, zeros))
    same(abs(x).compute(), numpy(np.abs, a))  # abs(int8 -128) is -128
    same((-x).compute(), numpy(np.negative, a))  # unsigned negation wraps
    same((x ** 3).compute(), numpy(lambda v: v ** 3, a))
    # Math functions: float32 for 16-bit integers (NumPy's), and for 8-bit ones (NumPy's
    # float16, which ares lacks); float64 for wider ones.
    want = np.sqrt(a.astype(np.float64))
    got = ar.sqrt(x).compute()
    assert got.dtype == (np.float64 if np.dtype(dtype).itemsize >= 4 else np.float32)
    assert np.allclose(got, want, rtol=1e-7, equal_nan=True)
    same((x / x).compute(), numpy(np.true_divide, a, a))  # true division: float64


@pytest.mark.parametrize("dtype", NEW)
def test_python_integers_are_weak_and_checked(dtype):
    info = np.iinfo(dtype)
    a = np.array([0, 1, info.max], dtype)
    x = ar.from_numpy(a)
    for f in (lambda v: v + 1, lambda v: 2 * v, lambda v: v - 1, lambda v: v // 2,
              lambda v: v & 3, lambda v: v << 1, lambda v: v + 2.5, lambda v: v + True):
        same(f(x).compute(), numpy(f, a))
    # A Python integer is at most an int64 in ares: past that (uint64's max + 1) it is an
    # OverflowError in every use, comparisons included (NumPy compares those exactly).
    out_of_range = [int(info.max) + 1, int(info.min) - 1]
    if dtype == "uint64":
        with pytest.raises(OverflowError):
            x + 2**64
        with pytest.raises(OverflowError):
            x < 2**64
        out_of_range = [-1]
    for big in out_of_range:
        with pytest.raises(OverflowError):
            a + big
        with pytest.raises(OverflowError, match=f"out of bounds for {dtype}"):
            x + big
        # comparisons with such an integer are exact, as NumPy 2's
        same((x < big).compute(), a < big)
        same((x == big).compute(), a == big)
    with pytest.raises(OverflowError):
        ar.full(3, int(info.max) + 1, dtype=dtype)


@pytest.mark.parametrize("dtype", NEW)
@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "var", "std",
                                  "cumsum", "argmin", "argmax", "all", "any"])
@SETTINGS
@given(data=st.data())
def test_reductions_give_numpys_dtype_and_value(dtype, name, data):
    a, x = data.draw(pair(dtype, data.draw(shapes(min_dims=1, max_dims=2, min_side=1))))
    axis = data.draw(st.sampled_from([None, 0, -1]))
    if name == "cumsum" and axis is None:
        axis = 0 if a.ndim == 1 else -1
    want = numpy(lambda v: getattr(np, name)(v, axis=axis), a)
    got = getattr(ar, name)(x, axis=axis).compute()
    if name in ("mean", "var", "std"):
        assert np.asarray(got).dtype == want.dtype
        assert np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)
    else:
        same(got, want)


@pytest.mark.parametrize("src", ALL[:-2])
@pytest.mark.parametrize("dst", NEW)
def test_astype_wraps_and_truncates_as_numpy(src, dst):
    values = [0, 1, -1, 127, 128, 255, 256, -129, 65535, 65536, 2**31, -2**31, 2**40 + 3,
              2**63 - 1, -2**63, 2.75, -2.75, 300.5]
    if np.dtype(src).kind in "fc":
        # Float to integer is defined where the truncated value fits the target (NumPy's
        # cast of others is undefined behaviour: it warns and gives the platform's value).
        info = np.iinfo(dst)
        values = [v for v in values if info.min <= int(v) <= info.max]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if np.dtype(src).kind in "fc":
            a = np.array(values, np.float64).astype(src)
        else:  # the integers' bits, wrapped into the source dtype
            a = np.array([int(v) % 2**64 for v in values], np.uint64).astype(src)
        want = a.astype(dst)
    same(ar.astype(ar.from_numpy(a, chunks=3), dst).compute(), want)
    same(ar.astype(ar.from_numpy(want, chunks=3), src).compute(), numpy(lambda v: v.astype(src), want))


@pytest.mark.parametrize("dtype", NEW)
@SETTINGS
@given(data=st.data())
def test_sort_unique_searchsorted_and_indexing(dtype, data):
    a, x = data.draw(pair(dtype, data.draw(shapes(min_dims=1, max_dims=1, min_side=1))))
    same(ar.sort(x).compute(), np.sort(a))
    same(ar.argsort(x).compute(), np.argsort(a, kind="stable"))
    same(ar.sort(x, descending=True).compute(), np.sort(a)[::-1])
    same(ar.unique_values(x).compute(), np.unique(a))
    s = np.sort(a)
    same(ar.searchsorted(ar.from_numpy(s, chunks=2), x).compute(), np.searchsorted(s, a))
    same(x[x > a[0]].compute(), a[a > a[0]])
    idx = data.draw(hnp.arrays(np.int64, data.draw(st.integers(0, 5)),
                               elements=st.integers(-len(a), len(a) - 1)))
    same(ar.take(x, ar.from_numpy(idx)).compute(), np.take(a, idx))
    same(x[1:].compute(), a[1:])
    same(ar.concat([x, x]).compute(), np.concatenate([a, a]))
    same(ar.where(x > a[0], x, 0).compute(), np.where(a > a[0], a, np.zeros((), dtype)))
    same(ar.clip(x, a.min(), a.max()).compute(), np.clip(a, a.min(), a.max()))
    same(ar.rechunk(x, 2).compute(), a)
    same(x.reshape((1, -1)).compute(), a.reshape(1, -1))


@pytest.mark.parametrize("a", NEW)
@pytest.mark.parametrize("b", NEW + ["bool", "int64"])
def test_matmul_gives_numpys_dtype_and_wraps(a, b):
    p = (np.arange(12).reshape(3, 4) * 37 % 251).astype(a)
    q = (np.arange(8).reshape(4, 2) * 53 % 241).astype(b)
    same((ar.from_numpy(p, chunks=2) @ ar.from_numpy(q, chunks=2)).compute(), numpy(np.matmul, p, q))


@pytest.mark.parametrize("dtype", NEW)
def test_npy_and_zarr_round_trips(dtype):
    """NumPy's files read (``|u1``, ``<i2``...), ares' written back, in the spool directory
    (inside the data roots); from_numpy itself goes through a .npy spool file."""
    from ares._numpy import spool_dir

    info = np.iinfo(dtype)
    a = np.array([[info.min, info.max, 0], [1, 2, 3]], dtype)
    base = os.path.join(spool_dir(), f"int-dtypes-{dtype}-{os.getpid()}")
    np.save(base + ".npy", a)
    x = ar.from_npy(base + ".npy", chunks=1)
    assert x.dtype == a.dtype
    same(x.compute(), a)
    write = ar.to_npy(x + 1, base + "-out.npy")
    if isinstance(write, ar.Tensor):
        write.compute()
    same(np.load(base + "-out.npy"), numpy(lambda v: v + 1, a))
    write = x.to_zarr(base + ".zarr")
    if isinstance(write, ar.Tensor):
        write.compute()
    z = ar.from_zarr(base + ".zarr")
    assert z.dtype == a.dtype
    same(z.compute(), a)


@pytest.mark.parametrize("dtype", NEW)
def test_0d_results_are_numpy_scalars_of_their_dtype(dtype):
    a = np.array([3, 4, 250 if dtype != "int8" else 100], dtype)
    x = ar.from_numpy(a)
    got = x.max().compute()
    assert type(got) is np.dtype(dtype).type and got == a.max()
    u = ar.from_numpy(np.array([2**64 - 1], np.uint64))
    assert u.max().compute() == np.uint64(2**64 - 1)
