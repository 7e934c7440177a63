"""float32 and int32 against NumPy 2: result dtypes by NumPy's promotion table and NEP 50's
weak Python scalars, float32 elementwise results bit for bit, int32 wrapping, reductions,
and NumPy's float16 arriving as the nearest dtype ares has (the other integer dtypes:
test_int_dtypes.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ares as ar
from helpers import chunks_for, shapes

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
ELEMENTS = {
    "bool": st.booleans(),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**40), 2**40),
    "float32": st.floats(width=32, allow_nan=True, allow_infinity=True),
    "float64": st.floats(-1e30, 1e30) | st.just(np.nan),
}


@pytest.fixture(autouse=True, scope="module")
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


@st.composite
def pair(draw, dtype, shape=None):
    shape = draw(shapes(max_dims=2)) if shape is None else shape
    a = draw(hnp.arrays(np.dtype(dtype), shape, elements=ELEMENTS[dtype]))
    return a, ar.from_numpy(a, chunks=draw(chunks_for(a.shape)))


def numpy(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(f(*args))


def same_bits(got, want):
    """Same dtype, shape and values; floats bit for bit (any NaN equals any NaN)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape
    if want.dtype.kind == "f":
        both_nan = np.isnan(got) & np.isnan(want)
        assert np.array_equal(np.where(both_nan, 0, got).view(f"u{want.itemsize}"),
                              np.where(both_nan, 0, want).view(f"u{want.itemsize}"))
    else:
        assert np.array_equal(got, want)


@SETTINGS
@given(data=st.data())
def test_arrays_promote_by_numpys_table(data):
    da, db = data.draw(st.sampled_from(DTYPES)), data.draw(st.sampled_from(DTYPES))
    op = data.draw(st.sampled_from(["add", "multiply", "maximum", "less", "divide"]))
    shape = data.draw(shapes(max_dims=2))
    a, x = data.draw(pair(da, shape))
    b, y = data.draw(pair(db, shape))
    # every one of these is correctly rounded in the result dtype, in NumPy and in ares
    same_bits(getattr(ar, op)(x, y).compute(), numpy(getattr(np, op), a, b))


@SETTINGS
@given(data=st.data(), scalar=st.one_of(st.integers(-5, 5), st.floats(-5, 5), st.booleans()))
def test_python_scalars_are_weak(data, scalar):
    dtype = data.draw(st.sampled_from(["int32", "float32"]))
    a, x = data.draw(pair(dtype))
    for f in (lambda v: v + scalar, lambda v: scalar * v, lambda v: v - scalar,
              lambda v: v < scalar, lambda v: -v, lambda v: abs(v)):
        same_bits(f(x).compute(), numpy(f, a))


def test_int32_overflowing_python_int_is_refused_as_numpy_does():
    x = ar.from_numpy(np.arange(4, dtype=np.int32))
    with pytest.raises(OverflowError):
        np.arange(4, dtype=np.int32) + 2**40
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        x + 2**40
    # comparisons with such an int are exact, as NumPy 2's
    same_bits((x < 2**40).compute(), np.arange(4, dtype=np.int32) < 2**40)


@pytest.mark.parametrize("name", ["sqrt", "exp", "log", "sin", "cos", "negative", "abs",
                                  "isnan", "isfinite"])
@SETTINGS
@given(data=st.data())
def test_float32_unary(name, data):
    a, x = data.draw(pair("float32"))
    got, want = np.asarray(getattr(ar, name)(x).compute()), numpy(getattr(np, name), a)
    assert got.dtype == want.dtype
    if name in ("sqrt", "negative", "abs", "isnan", "isfinite"):
        same_bits(got, want)
    else:
        # libm's float32 functions and NumPy's SIMD loops may differ in the last bit
        np.testing.assert_allclose(got, want, rtol=4e-7, atol=1e-38, equal_nan=True)


@SETTINGS
@given(data=st.data())
def test_float32_chains_round_every_op(data):
    a, x = data.draw(pair("float32"))
    b, y = data.draw(pair("float32", a.shape))
    same_bits(((x * 1.5 + y) / 3 - 0.1).compute(), numpy(lambda p, q: (p * 1.5 + q) / 3 - 0.1, a, b))
    same_bits(ar.where(x > y, x, y * 2).compute(), numpy(lambda p, q: np.where(p > q, p, q * 2), a, b))


@SETTINGS
@given(data=st.data())
def test_int32_wraps(data):
    a, x = data.draw(pair("int32"))
    same_bits((x * 3 + 7).compute(), numpy(lambda v: v * 3 + 7, a))
    same_bits((x - x * 2).compute(), numpy(lambda v: v - v * 2, a))


@pytest.mark.parametrize("name", ["sum", "prod", "min", "max", "mean", "var", "std", "cumsum"])
@SETTINGS
@given(data=st.data())
def test_reductions_keep_numpys_dtypes(data, name):
    dtype = data.draw(st.sampled_from(["int32", "float32"]))
    elements = st.integers(-1000, 1000) if dtype == "int32" else st.floats(-1e3, 1e3, width=32)
    shape = data.draw(shapes(min_dims=1, max_dims=2, min_side=1))
    a = data.draw(hnp.arrays(np.dtype(dtype), shape, elements=elements))
    if name == "prod":
        a = np.clip(a, -3, 3)
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(a.shape)))
    want = numpy(getattr(np, name), a)
    got = np.asarray(getattr(ar, name)(x).compute())
    assert got.dtype == want.dtype, f"{name} of {dtype}: {got.dtype} != {want.dtype}"
    if want.dtype.kind == "f":
        # ares accumulates float32 in float64: compare with the float64 answer
        exact = numpy(getattr(np, name), a.astype(np.float64))
        scale = float(np.sum(np.abs(a.astype(np.float64)))) + 1
        np.testing.assert_allclose(got, exact, rtol=2e-6, atol=2e-7 * scale)
    else:
        same_bits(got, want)


def test_0d_results_keep_their_dtype():
    x = ar.from_numpy(np.arange(5, dtype=np.float32))
    total = x.sum().compute()
    assert type(total) is np.float32 and total == 10
    assert type(ar.from_numpy(np.arange(5, dtype=np.int32)).max().compute()) is np.int32
    assert type(ar.from_numpy(np.arange(5, dtype=np.int32)).sum().compute()) is int


def test_other_numpy_dtypes_arrive_as_the_nearest_ares_dtype():
    # ares has every integer dtype (test_int_dtypes.py); float16 becomes float32.
    for src, want in [(np.int8, "int8"), (np.uint16, "uint16"), (np.int16, "int16"),
                      (np.uint32, "uint32"), (np.float16, "float32"), (np.int32, "int32"),
                      (np.float32, "float32")]:
        a = np.arange(6, dtype=src).reshape(2, 3)
        x = ar.from_numpy(a, chunks=1)
        assert x.dtype == np.dtype(want), f"{src} became {x.dtype}"
        got = x.compute()
        assert got.dtype == np.dtype(want) and np.array_equal(got, a)


def test_creation_and_astype_take_the_new_dtypes():
    same_bits(ar.ones((3, 2), dtype=ar.float32, chunks=1).compute(), np.ones((3, 2), np.float32))
    same_bits(ar.full(4, 7, dtype="int32").compute(), np.full(4, 7, np.int32))
    same_bits(ar.arange(5, dtype=np.int32).compute(), np.arange(5, dtype=np.int32))
    same_bits(ar.astype(ar.arange(5) / 3, ar.float32).compute(),
              (np.arange(5) / 3).astype(np.float32))
    assert ar.float32 == np.float32 and ar.int32 == np.int32


def test_data_type_functions_follow_numpy():
    x, i = ar.ones(3, dtype=ar.float32), ar.ones(3, dtype=ar.int32)
    assert ar.result_type(x, 2.5) == np.float32 == (x + 2.5).dtype
    assert ar.result_type(x, i) == np.float64 == (x + i).dtype
    assert ar.result_type(i, 7) == np.int32 == (i + 7).dtype
    assert ar.can_cast(ar.int32, ar.int64) and not ar.can_cast(ar.float64, ar.float32)
    assert ar.finfo(x).eps == np.finfo(np.float32).eps
    assert ar.iinfo(ar.int32).max == 2**31 - 1
    assert ar.isdtype(ar.float32, "real floating") and not ar.isdtype(i.dtype, "real floating")
    assert {"result_type", "can_cast", "finfo", "iinfo", "isdtype"} <= set(
        ar.array_api_coverage()["have"])


def test_numpy_scalars_are_strong_python_numbers_weak():
    a = np.arange(4, dtype=np.float32)
    x = ar.from_numpy(a)
    for other in (1.5, np.float64(1.5), np.float32(1.5), np.int64(2), 2):
        got = (x + other).compute()
        assert got.dtype == (a + other).dtype, f"float32 + {other!r}"
        same_bits(got, a + other)
        same_bits(np.multiply(x, other).compute(), np.multiply(a, other))
