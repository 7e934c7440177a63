"""complex64 and complex128 against NumPy: uploads and results (both dtypes, every shape
kind), creation with ``dtype=``, ``astype``, promotion with every real dtype, the elementwise
functions the standard defines for complex numbers (special values included), ``sum``,
``prod``, ``mean``, products of matrices (``matmul``, ``tensordot``, ``vecdot`` conjugating),
``x[mask]``, a data-dependent length counted by ``.shape``, and the clear errors where complex numbers have no meaning (ordering)
or ares has no kernel yet."""

from __future__ import annotations

import numpy as np
import pytest

import ares as ar


def _value(t):
    """One tensor's value (``ar.compute`` returns a tuple, as dask's)."""
    return t.compute()

SPECIAL = np.array([0, -0.0, 1, -1, 0.5, np.inf, -np.inf, np.nan, 1e300, 1e-300])


def _values(dtype, special=False, n=40, seed=0):
    rng = np.random.default_rng(seed)
    if special:
        re, im = np.meshgrid(SPECIAL, SPECIAL)
        return (re.ravel() + 1j * im.ravel()).astype(dtype)
    return (rng.standard_normal(n) * 3 + 1j * rng.standard_normal(n) * 3).astype(dtype)


def _same(got, want, rtol=1e-12, atol=0.0):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_round_trips_keep_values_and_dtype(dtype):
    for shape, chunks in [((), None), ((7,), 3), ((5, 4), (2, 3)), ((0, 3), 2)]:
        a = (np.arange(int(np.prod(shape))) * (1 - 2j)).reshape(shape).astype(dtype)
        got = _value(ar.asarray(a, chunks=chunks) if chunks else ar.asarray(a))
        if shape == ():
            assert isinstance(got, (complex, np.complexfloating)) and got == a[()]
            assert np.asarray(got).dtype == dtype
        else:
            _same(got, a, rtol=0)
    special = _values(dtype, special=True)
    _same(_value(ar.asarray(special, chunks=17)), special, rtol=0)


def test_creation_and_astype():
    _same(_value(ar.zeros((3, 2), dtype="complex128")), np.zeros((3, 2), np.complex128))
    _same(_value(ar.ones(4, dtype="complex64")), np.ones(4, np.complex64))
    _same(_value(ar.full(3, 2.5, dtype="complex128")), np.full(3, 2.5, np.complex128))
    x = ar.asarray(np.arange(6, dtype=np.int32), chunks=4)
    _same(_value(ar.astype(x, "complex64")), np.arange(6).astype(np.complex64))
    z = ar.asarray(_values(np.complex128), chunks=7)
    _same(_value(ar.astype(z, "complex64")), _values(np.complex128).astype(np.complex64))
    _same(_value(ar.astype(z, "bool")), _values(np.complex128).astype(bool))
    with pytest.raises(ValueError, match="discard the imaginary part"):
        ar.astype(z, "float64")


@pytest.mark.parametrize("other", ["bool", "int32", "int64", "float32", "float64", "complex64",
                                   "complex128"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "equal", "not_equal"])
def test_binary_functions_promote_and_match_numpy(op, dtype, other):
    a = _values(dtype, seed=1)
    b = (np.arange(40) % 5 + 1).astype(other) if np.dtype(other).kind != "c" \
        else _values(other, seed=2)
    want = getattr(np, op)(a, b)
    got = _value(getattr(ar, op)(ar.asarray(a, chunks=9), ar.asarray(b, chunks=9)))
    rtol = 1e-5 if want.dtype in (np.complex64, np.float32) else 1e-12
    _same(got, want, rtol=rtol)
    # Python numbers are weak: a complex64 tensor times 2.5 stays complex64.
    if op in ("add", "multiply"):
        _same(_value(getattr(ar, op)(ar.asarray(a, chunks=9), 2.5)), getattr(np, op)(a, 2.5),
              rtol=rtol)


UNARY = ["negative", "positive", "abs", "conj", "real", "imag", "exp", "log", "sqrt", "square",
         "sin", "cos", "tan", "sinh", "cosh", "tanh", "reciprocal", "sign", "isnan", "isinf",
         "isfinite", "log2", "log10", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
         "arctanh"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary_functions_match_numpy(name, dtype):
    a = _values(dtype, seed=3)
    want = getattr(np, name)(a)
    got = _value(getattr(ar, name)(ar.asarray(a, chunks=11)))
    rtol = 2e-5 if dtype == np.complex64 else 1e-12
    _same(got, want, rtol=rtol, atol=1e-300)


@pytest.mark.parametrize("name", ["negative", "conj", "real", "imag", "abs", "isnan", "isinf",
                                  "isfinite", "square", "exp", "sqrt", "log"])
def test_special_values_match_numpy(name):
    a = _values(np.complex128, special=True)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    got = _value(getattr(ar, name)(ar.asarray(a, chunks=13)))
    assert np.asarray(got).dtype == want.dtype
    if name in ("exp", "sqrt", "log", "square", "abs"):
        # C99 Annex G, as NumPy: compare the finite results (within an ulp: `abs` is Rust's
        # `hypot`, NumPy's its own), and where NumPy has a NaN or an infinity, the same class
        # (num-complex's formulas differ from npymath's on some signs of infinities).
        finite = np.isfinite(want)
        np.testing.assert_allclose(np.asarray(got)[finite], want[finite], rtol=1e-12)
        assert (np.isfinite(got) == finite).all()
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_reductions_match_numpy(dtype):
    a = _values(dtype, n=60, seed=4).reshape(6, 10)
    x = ar.asarray(a, chunks=(4, 3))
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    for axis in (None, 0, 1, (0, 1)):
        _same(_value(ar.sum(x, axis=axis)), np.sum(a, axis=axis), rtol=rtol)
        _same(_value(ar.mean(x, axis=axis)), np.mean(a, axis=axis), rtol=rtol)
    _same(_value(ar.prod(x[:2], axis=1)), np.prod(a[:2], axis=1), rtol=rtol * 10)


def test_ordering_and_unsupported_ops_are_clear_errors():
    z = ar.asarray(_values(np.complex128), chunks=7)
    with pytest.raises(ValueError, match="complex numbers have no order"):
        z < z
    with pytest.raises(ValueError, match="complex numbers have no order"):
        ar.max(z)
    with pytest.raises(ValueError, match="complex numbers have no order"):
        ar.sort(z)
    with pytest.raises(ValueError, match="floor.*complex128"):
        ar.floor(z)
    with pytest.raises(ValueError, match="cumsum: not supported for a complex128 tensor yet"):
        ar.cumulative_sum(z)
    # A complex Python number is a weak scalar (branch apifuncs): NumPy's value and dtype.
    with np.errstate(all="ignore"):
        want = _values(np.complex128) * 1j
    got = z * 1j
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.compute(), want, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_matrix_products_match_numpy(dtype):
    rng = np.random.default_rng(7)
    rtol = 2e-5 if dtype == np.complex64 else 1e-12
    a = (rng.standard_normal((9, 12)) + 1j * rng.standard_normal((9, 12))).astype(dtype)
    b = (rng.standard_normal((12, 7)) + 1j * rng.standard_normal((12, 7))).astype(dtype)
    x, y = ar.asarray(a, chunks=(4, 5)), ar.asarray(b, chunks=(5, 3))
    _same(_value(x @ y), a @ b, rtol=rtol)
    _same(_value(ar.matmul(x, y)), np.matmul(a, b), rtol=rtol)
    # Stacks with broadcast batches, a real operand promoting, a vector on either side.
    s = (rng.standard_normal((3, 4, 12)) + 1j * rng.standard_normal((3, 4, 12))).astype(dtype)
    _same(_value(ar.asarray(s, chunks=(2, 3, 5)) @ y), s @ b, rtol=rtol)
    r = rng.standard_normal((12, 2))
    _same(_value(x @ ar.asarray(r, chunks=5)), a @ r, rtol=rtol)
    _same(_value(x @ y[:, 0]), a @ b[:, 0], rtol=rtol)
    _same(_value(ar.tensordot(x, y, axes=1)), np.tensordot(a, b, axes=1), rtol=rtol)
    # vecdot conjugates its first operand (the array API's sum(conj(x1) * x2)).
    v = (rng.standard_normal((5, 12)) + 1j * rng.standard_normal((5, 12))).astype(dtype)
    w = ar.asarray(v, chunks=(2, 5))
    _same(_value(ar.linalg.vecdot(w, x[:5])), np.vecdot(v, a[:5]), rtol=rtol)
    _same(_value(ar.vecdot(w, x[:5], axis=0)), np.vecdot(v, a[:5], axis=0), rtol=rtol)
    assert np.asarray(_value(ar.vecdot(w, w))).imag.max() == 0, "|v|^2 is real"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_mask_selects_complex_elements(dtype):
    special = _values(dtype, special=True)
    z = ar.asarray(special.reshape(10, 10), chunks=(3, 4))
    keep = np.isfinite(special.reshape(10, 10))
    got = z[ar.isfinite(z)]
    _same(_value(got), special.reshape(10, 10)[keep], rtol=0)
    assert got.known_shape == (None,) and got.shape == (int(keep.sum()),)
    np.testing.assert_array_equal(np.asarray(_value(ar.nonzero(z)[1])),
                                  np.nonzero(special.reshape(10, 10))[1])
