"""The complex functions' special values (C99 Annex G, G.6) against NumPy, on a grid of
special parts (±0, ±inf, NaN, finite, tiny, huge, in both parts), complex64 and complex128,
alone and fused with other elementwise ops.

NumPy is the oracle but where the array API standard says otherwise: `sign` of a number with
a NaN part is NaN + NaN j (NumPy: `sign(inf + nan j) == 1`), and `expm1` of a non-finite
number is `exp(z) - 1` as the standard's table has it (NumPy's formula gives NaN there, and
`expm1(-0 + 0j)` a real part of -0 where the standard has +0). The
sign of an infinite or zero part next to a NaN part is left open by the annex in most cases
(NumPy's `sin(inf + inf j)` and `-i sinh(i z)` disagree on it): magnitudes are compared
there."""

from __future__ import annotations

import numpy as np
import pytest

import ares as ar

PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 1e-300]

FUNCTIONS = ["sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan",
             "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
             "arctanh", "sign", "reciprocal", "square"]


def _grid(dtype):
    re, im = np.meshgrid(PARTS, PARTS)
    z = np.empty(re.size, dtype=dtype)
    with np.errstate(all="ignore"):
        z.real, z.imag = re.ravel(), im.ravel()  # (1e300 is inf in complex64)
    return z


def _oracle(name, z):
    with np.errstate(all="ignore"):
        want = getattr(np, name)(z)
        if name == "expm1":
            # The standard's table for non-finite inputs (and results): exp(z) - 1.
            # (Parts set one by one: `re + 1j * im` would turn an imaginary -0 into +0.)
            e = np.exp(z)
            bad = ~np.isfinite(want)
            want.real[bad] = e.real[bad] - 1
            want.imag[bad] = e.imag[bad]
            # The standard: expm1(±0 + 0j) = +0 + 0j (NumPy's formula gives -0 for -0).
            want.real[(z.real == 0) & (z.imag == 0)] = 0.0
        if name == "sign":
            nan = np.isnan(z.real) | np.isnan(z.imag)
            want[nan] = complex(np.nan, np.nan)
    return want


def _check(got, want, z, name, rtol):
    got = np.asarray(got)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    bad = []
    for k in range(z.size):
        g, w = got[k], want[k]
        for gp, wp, other in ((g.real, w.real, w.imag), (g.imag, w.imag, w.real)):
            if np.isnan(wp) or np.isnan(gp):
                ok = np.isnan(wp) and np.isnan(gp)
            elif wp == 0 or np.isinf(wp):
                ok = gp == wp and (np.signbit(gp) == np.signbit(wp) or np.isnan(other))
            else:
                ok = abs(float(gp) - float(wp)) <= rtol * abs(float(wp)) + 1e-290
            if not ok:
                bad.append(f"{name}({z[k]}) = {g}, NumPy {w}")
                break
    assert not bad, "\n".join(bad[:20]) + f"\n({len(bad)} of {z.size})"


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_special_values_match_numpy(name, dtype):
    z = _grid(dtype)
    want = _oracle(name, z)
    got = getattr(ar, name)(ar.asarray(z, chunks=37)).compute()
    _check(got, want, z, name, 2e-6 if dtype == np.complex64 else 1e-13)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_fused_chains_give_the_same_special_values(name):
    """The fused kernel runs complex steps through the same functions: `-(-f(x))` and
    `f(x) * 2` (one FUSE node with the function) give what the function alone gives."""
    z = _grid(np.complex128)
    x = ar.asarray(z, chunks=37)
    y = getattr(ar, name)(x)
    alone = np.asarray(y.compute())
    chain = -(-y)
    plan = ar.explain(chain).split("== chunk graph")[1]
    fuse = next(li for li in plan.splitlines() if "FUSE[" in li)
    assert name.replace("arc", "a") in fuse or name in fuse, fuse
    _check(chain.compute(), alone, z, name, 0.0)
    with np.errstate(all="ignore"):
        _check((y * 2).compute(), alone * 2, z, name, 0.0)


def test_a_few_values_written_out():
    """The standard's cases by hand (independent of NumPy)."""
    inf, nan = np.inf, np.nan

    def one(name, re, im):
        return complex(getattr(ar, name)(ar.asarray(np.array([complex(re, im)]))).compute()[0])

    assert one("sinh", inf, 0.0) == complex(inf, 0.0)
    w = one("sinh", inf, nan)
    assert np.isinf(w.real) and np.isnan(w.imag)
    w = one("tanh", inf, 2.0)
    assert w.real == 1.0 and w.imag == 0.0
    w = one("log", -0.0, 0.0)
    assert w.real == -inf and w.imag == np.pi
    w = one("arccos", -inf, inf)
    assert w.real == 3 * np.pi / 4 and w.imag == -inf
    w = one("arctanh", 1.0, 0.0)
    assert w.real == inf and w.imag == 0.0
    w = one("expm1", -inf, 1.0)
    assert w.real == -1.0
    w = one("log1p", -1.0, 0.0)
    assert w.real == -inf and w.imag == 0.0
    w = one("sqrt", -inf, 2.0)
    assert w.real == 0.0 and w.imag == inf
    w = one("sign", nan, 0.0)
    assert np.isnan(w.real) and np.isnan(w.imag)
