"""The array API's elementwise functions ares added for issue 29 (`floor`, `remainder`,
`tanh`, `atan2`...), against NumPy: through `ar.NAME`, the operators (`%`, `//`, `divmod`),
NumPy's dispatch (`np.floor(x)` stays a lazy tensor), and on the special values where the
sign conventions matter (negative divisors, zeros, ±inf, NaN, the integer bounds)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ares as ar
from helpers import assert_same, tensors

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SPECIAL = np.array([np.nan, -np.inf, -1e300, -2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.5,
                    3.0, 1e300, np.inf])
INT64 = np.array([-2**63, -2**63 + 1, -7, -2, -1, 0, 1, 2, 7, 2**63 - 1], dtype=np.int64)

FLOAT_UNARY = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan", "tanh",
               "expm1", "log1p", "log2", "log10"]
KEEPING = ["floor", "ceil", "trunc", "round", "sign", "square", "reciprocal", "signbit",
           "positive"]
FLOAT_BINARY = ["atan2", "hypot", "logaddexp", "copysign", "nextafter"]


@pytest.fixture(autouse=True, scope="module")
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


def numpy(f, *args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args)


def exact(got, want):
    """Bit for bit, the sign of zero too; any NaN matches any NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        same = (np.isnan(got) & np.isnan(want)) | (
            (got == want) & (np.signbit(got) == np.signbit(want)))
        assert same.all(), f"ares {got[~same]} != NumPy {want[~same]}"
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", FLOAT_UNARY)
def test_float_functions_on_special_values(name, dtype):
    a = numpy(SPECIAL.astype, dtype)
    x = ar.asarray(a, chunks=4)
    want = numpy(getattr(np, name), a)
    got = getattr(ar, name)(x).compute()
    assert got.dtype == want.dtype
    # libm and NumPy's float32 loops may differ in the last bits; special values are exact
    tol = 4 * np.finfo(want.dtype).eps
    np.testing.assert_allclose(got, want, rtol=tol, atol=0, equal_nan=True)
    special = ~np.isfinite(want) | (want == 0)
    exact(got[special], want[special])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
@pytest.mark.parametrize("name", KEEPING)
def test_rounding_and_sign_keep_the_dtype(name, dtype):
    a = numpy((SPECIAL if dtype.startswith("float") else INT64).astype, dtype)
    want = numpy(np.round if name == "round" else getattr(np, name), a)
    exact(getattr(ar, name)(ar.asarray(a, chunks=3)).compute(), want)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", FLOAT_BINARY + ["floor_divide", "remainder"])
def test_binary_functions_on_every_pair_of_special_values(name, dtype):
    a, b = np.meshgrid(SPECIAL, SPECIAL, indexing="ij")
    a, b = numpy(a.ravel().astype, dtype), numpy(b.ravel().astype, dtype)
    got = getattr(ar, name)(ar.asarray(a, chunks=50), ar.asarray(b, chunks=70)).compute()
    want = numpy(getattr(np, name), a, b)
    if name in ("atan2", "hypot", "logaddexp"):
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(want.dtype).eps,
                                   equal_nan=True)
        special = ~np.isfinite(want) | (want == 0)
        exact(got[special], want[special])
    else:
        exact(got, want)


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_division_at_the_bounds(dtype):
    v = INT64 if dtype == "int64" else np.array(
        [-2**31, -2**31 + 1, -7, -2, -1, 0, 1, 2, 7, 2**31 - 1], dtype=np.int32)
    a, b = np.meshgrid(v, v, indexing="ij")
    a, b = a.ravel(), b.ravel()
    x, y = ar.asarray(a, chunks=30), ar.asarray(b, chunks=45)
    exact((x // y).compute(), numpy(np.floor_divide, a, b))
    exact((x % y).compute(), numpy(np.remainder, a, b))
    q, r = divmod(x, y)
    exact(q.compute(), numpy(np.floor_divide, a, b))
    exact(r.compute(), numpy(np.remainder, a, b))
    assert (ar.asarray(np.array([np.iinfo(dtype).min], dtype)) // -1).compute()[0] \
        == np.iinfo(dtype).min


@SETTINGS
@given(data=st.data())
def test_operators_with_python_scalars_follow_numpy(data):
    dtype = data.draw(st.sampled_from(["float64", "int64", "bool"]))
    a, x = data.draw(tensors(dtype=dtype))
    k = data.draw(st.sampled_from([2, -3, 10, 2.5, -0.5]))
    if dtype == "bool" and isinstance(k, float):
        k = 3
    for op in (lambda p, q: p % q, lambda p, q: p // q):
        assert_same(op(x, k).compute(), numpy(op, a, k), rtol=0)
        assert_same(op(k, x).compute(), numpy(op, k, a), rtol=0)


@SETTINGS
@given(data=st.data())
def test_random_tensors_agree_with_numpy(data):
    dtype = data.draw(st.sampled_from(["float64", "int64"]))
    a, x = data.draw(tensors(dtype=dtype))
    name = data.draw(st.sampled_from(FLOAT_UNARY + KEEPING))
    if name == "round":
        want = numpy(np.round, a)
    else:
        want = numpy(getattr(np, name), a)
    assert_same(getattr(ar, name)(x).compute(), want, rtol=1e-12, atol=1e-300)


def test_numpy_dispatch_stays_lazy():
    a = np.array([-2.5, -1.0, 0.5, 3.75, 10.0])
    x = ar.asarray(a, chunks=2)
    calls = {
        "floor": lambda v: np.floor(v), "log10": lambda v: np.log10(np.abs(v)),
        "tanh": lambda v: np.tanh(v), "arccos": lambda v: np.arccos(v / 10),
        "mod": lambda v: v % 2, "floordiv": lambda v: v // 10, "np.mod": lambda v: np.mod(v, 3),
        "arctan2": lambda v: np.arctan2(v, 2.0), "round": lambda v: np.round(v, 1),
        "positive": lambda v: np.positive(v), "conj": lambda v: np.conj(v),
        "real": lambda v: np.real(v), "imag": lambda v: np.imag(v),
        "signbit": lambda v: np.signbit(v), "rmod": lambda v: 7 % v,
        "rint": lambda v: np.rint(v),
    }
    for what, f in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # pulling the data into NumPy warns
            lazy = f(x)
        assert isinstance(lazy, ar.Tensor), what
        assert_same(lazy.compute(), f(a), rtol=1e-15)
    q, r = np.divmod(x, 3)
    assert isinstance(q, ar.Tensor) and isinstance(r, ar.Tensor)
    exact(q.compute(), a // 3)
    exact(r.compute(), a % 3)


def test_round_takes_numpys_decimals():
    a = np.array([2.675, -1.25, 0.125, 1234.5678, np.nan, -0.0])
    for d in (-2, -1, 0, 1, 2, 3):
        exact(ar.round(ar.asarray(a), d).compute(), np.round(a, d))
        exact(ar.asarray(a).round(d).compute(), np.round(a, d))
    i = np.array([125, 135, -125, 7], dtype=np.int64)
    for d in (-1, 0, 2):
        exact(ar.round(ar.asarray(i), d).compute(), np.round(i, d))


def test_clip_takes_the_array_apis_keywords():
    a = np.array([-3.0, 0.5, np.nan, 7.0])
    x = ar.asarray(a)
    exact(ar.clip(x, min=0).compute(), np.clip(a, 0, None))
    exact(ar.clip(x, max=1.0).compute(), np.clip(a, None, 1.0))
    exact(ar.clip(x, min=ar.asarray(np.zeros(4)), max=2).compute(), np.clip(a, 0, 2))
    exact(ar.clip(x).compute(), a)


def _fused(y) -> list[str]:
    """The ops of the first FUSE node of y's chunk graph."""
    plan = ar.explain(y).split("== chunk graph")[1]
    line = next(li for li in plan.splitlines() if "FUSE[" in li)
    return [op.strip() for op in line.split("FUSE[")[1].split("]")[0].split(",")]


def test_new_functions_fuse():
    x = ar.random.rand(1000, chunks=500, seed=1)
    assert _fused(ar.floor(ar.tanh(x) * 10) % 3) == [
        "rand", "tanh", "multiply", "floor", "remainder"]
    assert _fused(ar.nextafter(ar.logaddexp(ar.atan2(x, 2.0), 1.0), 0.0).sum()) == [
        "rand", "atan2", "logaddexp", "nextafter", "sum"]
    # float32 runs the float32 loops of floor_divide and nextafter in its lanes
    a = np.linspace(-3, 3, 1001, dtype=np.float32)
    y = ar.nextafter(ar.asarray(a, chunks=300) // 0.1, 9.0)
    assert _fused(y) == ["from_npy", "floor_divide", "nextafter"]
    exact(y.compute(), np.nextafter(a // 0.1, 9.0))


def test_bool_refusals_are_clear():
    b = ar.asarray(np.array([True, False]))
    for name in ("sign", "positive"):
        with pytest.raises(ValueError, match=name):
            getattr(ar, name)(b)
    # NumPy's bool loops of these are int8's (branch dtypes added int8).
    bn = np.array([True, False])
    with np.errstate(divide="ignore", invalid="ignore"):
        for name in ("square", "reciprocal", "conj"):
            got = getattr(ar, name)(b)
            assert got.dtype == np.int8, name
            exact(got.compute(), getattr(np, name)(bn))
    with pytest.raises(TypeError):
        +b
    # floor keeps bools (NumPy 2); round gives float64 (NumPy: float16)
    exact(ar.floor(b).compute(), np.floor(np.array([True, False])))
    assert ar.round(b).dtype == np.float64


def test_expression_language_has_them():
    from ares import _ares  # noqa: F401  (the core's functions are the package's)

    for name in FLOAT_UNARY + KEEPING + FLOAT_BINARY + ["floor_divide", "remainder", "conj",
                                                         "real", "imag", "arccos", "mod",
                                                         "rint"]:
        assert ar._ares.is_function(name), name
