"""The array API standard's protocols and keywords (branch apifuncs), against NumPy:
``__array_api_version__``, ``__array_namespace_info__()``, ``x.__array_namespace__()``, DLPack
both ways, ``sum``/``prod``/``cumulative_sum`` with ``dtype=``, ``var``/``std`` with a
fractional ``correction``, and the new functions' errors."""

from __future__ import annotations

import numpy as np
import pytest

import ares as ar
from ares._api_names import ARRAY_API_FUNCTIONS


def test_version_and_every_name_of_the_standard():
    assert ar.__array_api_version__ == "2024.12"
    assert ar.array_api_coverage()["missing"] == []
    for name in ARRAY_API_FUNCTIONS:
        assert callable(getattr(ar, name)), name


def test_namespace_info_tells_the_truth():
    info = ar.__array_namespace_info__()
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
    x = ar.asarray(np.array([1.0, -2.0, 3.0]))
    assert np.array_equal(x[x > 0].compute(), [1.0, 3.0])  # boolean indexing does work
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    defaults = info.default_dtypes()
    assert defaults["real floating"] == np.float64 and defaults["indexing"] == np.int64
    every = info.dtypes()
    assert set(every) == set(ar._ares.dtypes())
    ints = info.dtypes(kind="integral")
    assert ints and all(np.dtype(d).kind in "iu" for d in ints)
    both = info.dtypes(kind=("bool", "real floating"))
    assert "bool" in both and "float64" in both and "int64" not in both
    with pytest.raises(ValueError):
        info.dtypes(device="gpu")


def test_namespace_and_dlpack_export():
    x = ar.arange(12, chunks=5).reshape((3, 4))
    assert x.__array_namespace__() is ar
    assert x.__dlpack_device__() == (1, 0)
    for dtype in ar._ares.dtypes():
        y = x.astype(dtype)
        got = np.from_dlpack(y)
        assert got.dtype == np.dtype(dtype)
        assert np.array_equal(got, np.arange(12).reshape(3, 4).astype(dtype))
    scalar = ar.sum(ar.ones(3, dtype="float32"))
    assert np.from_dlpack(scalar).dtype == np.float32
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")


def test_from_dlpack_imports_producers():
    a = np.arange(6.0).reshape(2, 3)
    t = ar.from_dlpack(a)
    assert isinstance(t, ar.Tensor) and np.array_equal(t.compute(), a)
    assert ar.from_dlpack(t) is t
    with pytest.raises(ValueError):
        ar.from_dlpack(a, copy=False)
    with pytest.raises(TypeError):
        ar.from_dlpack([1, 2])


@pytest.mark.parametrize("name", ["sum", "prod"])
def test_sum_and_prod_take_dtype(name):
    a = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    x = ar.asarray(a, chunks=2)
    for dtype in ("int32", "int64", "float32", "float64"):
        got = getattr(ar, name)(x, axis=1, dtype=dtype)
        want = getattr(np, name)(a, axis=1, dtype=dtype)
        assert got.dtype == want.dtype
        assert np.array_equal(got.compute(), want)
    assert getattr(ar, name)(x).dtype == getattr(np, name)(a).dtype


def test_cumulative_sum_keywords():
    a = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    x = ar.asarray(a, chunks=2)
    for kw in ({"axis": 1}, {"axis": 0, "include_initial": True},
               {"axis": -1, "dtype": "float32", "include_initial": True}):
        got = ar.cumulative_sum(x, **kw)
        want = np.cumulative_sum(a, **kw)
        assert got.dtype == want.dtype, kw
        assert np.array_equal(got.compute(), want), kw
    with pytest.raises(ValueError):
        ar.cumulative_sum(x)  # a 2-D tensor needs an axis, as NumPy's


@pytest.mark.parametrize("correction", [0.5, 1.5, 2.5, 7.5])
def test_fractional_correction(correction):
    a = np.linspace(-3, 5, 12).reshape(3, 4)
    x = ar.asarray(a, chunks=2)
    with np.errstate(all="ignore"):
        for axis in (None, 0, 1):
            np.testing.assert_allclose(ar.var(x, axis=axis, correction=correction).compute(),
                                       np.var(a, axis=axis, ddof=correction), rtol=1e-12)
            np.testing.assert_allclose(ar.std(x, axis=axis, correction=correction).compute(),
                                       np.std(a, axis=axis, ddof=correction), rtol=1e-12)


def test_refusals_name_the_problem():
    x = ar.arange(6).reshape((2, 3))
    with pytest.raises(ValueError, match="repeats"):
        ar.repeat(x, ar.asarray(np.array([1, 2, 3])), axis=0)
    with pytest.raises(ValueError, match="negative"):
        ar.repeat(x, [1, -1], axis=0)
    assert np.array_equal(ar.repeat(x, ar.asarray(np.array([0, 2])), axis=0).compute(),
                          np.repeat(np.arange(6).reshape(2, 3), [0, 2], axis=0))
    with pytest.raises(ValueError, match="indexing"):
        ar.meshgrid(x, indexing="yx")
    with pytest.raises(ValueError, match="dimension"):
        ar.tril(ar.arange(3))
    with pytest.raises(ValueError, match="same number of dimensions"):
        ar.take_along_axis(x, ar.asarray(np.array([0])), axis=0)
    with pytest.raises(ValueError, match="correction"):
        ar.var(x, correction=-0.5)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64", "complex64"])
@pytest.mark.parametrize("z", [1j, 1 + 2j, complex(float("inf"), -0.0)])
def test_complex_python_scalars_are_weak(dtype, z):
    a = np.array([0, 1, 2]).astype(dtype)
    x = ar.asarray(a)
    with np.errstate(all="ignore"):
        for got, want in ((x * z, a * z), (z + x, z + a), (ar.subtract(x, z), np.subtract(a, z)),
                          (x * np.complex128(z), a * np.complex128(z))):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.compute(), want)


@pytest.mark.parametrize("shape, chunks", [((7, 3), (3, 3)), ((3, 7), None), ((2, 6, 4), None),
                                           ((40, 5), (9, 5)), ((4, 4), 2), ((5, 0), None)])
def test_qr_complete_factors_as_numpy(shape, chunks):
    a = np.random.default_rng(1).normal(size=shape)
    q, r = ar.linalg.qr(ar.asarray(a, chunks=chunks), mode="complete")
    qn, rn = np.linalg.qr(a, mode="complete")
    assert q.shape == qn.shape and r.shape == rn.shape
    q, r = q.compute(), r.compute()
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    eye = np.broadcast_to(np.eye(shape[-2]), q.shape)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, eye, atol=1e-12)
    assert np.array_equal(np.tril(r, -1), np.zeros_like(r))
    # NumPy's factors up to the signs of R's rows (and Q's columns)
    k = min(shape[-2:])
    signs = np.sign(np.diagonal(r, axis1=-2, axis2=-1)[..., :k]) * np.sign(
        np.diagonal(rn, axis1=-2, axis2=-1)[..., :k])
    np.testing.assert_allclose(r[..., :k, :] * signs[..., :, None], rn[..., :k, :], atol=1e-10)


@pytest.mark.parametrize("index", [
    (0, 0, np.array([1, -1])), (np.array([[0], [2]]), np.array([1, 3])), (1, [0, 2]),
    (np.array([2, -3]), 0, 4), (np.array([], dtype=np.int64), 1)])
def test_integer_array_indexing(index):
    a = np.arange(60).reshape(3, 4, 5)
    x = ar.asarray(a, chunks=2)
    got = x[tuple(ar.asarray(i) if isinstance(i, np.ndarray) and i.size > 1 else i
                  for i in index)]
    want = a[index]
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got.compute(), want)


def test_integer_array_indexing_refuses_out_of_range():
    x = ar.asarray(np.arange(12).reshape(3, 4))
    with pytest.raises(IndexError, match="out of bounds"):
        x[0, np.array([4])]  # a NumPy index is checked at once, as NumPy does
    with pytest.raises((IndexError, ar.TaskError), match="out of bounds"):
        x[0, ar.asarray(np.array([4]))].compute()  # never another row's element
    with pytest.raises(IndexError):
        x[0, np.array([0.5])]


def test_unique_counts_is_named():
    values, counts = ar.unique_counts(ar.asarray(np.array([3, 1, 3])))
    result = ar.unique_counts(ar.asarray(np.array([3, 1, 3])))
    assert np.array_equal(result.values.compute(), [1, 3])
    assert np.array_equal(result.counts.compute(), [1, 2])


@pytest.mark.parametrize("key, value", [
    ((1, slice(None), 2), np.array([7, 8, 9])), ((slice(None), 1), 5),
    ((Ellipsis, slice(None, None, 2)), -1.5), ((0, 0, 0), 3), ((slice(2, 0, -1),), 1),
    ((), np.zeros((2, 3, 4))), ((slice(5, 9),), 1), ((-1, slice(1, None), -2), [4, 5]),
    ("mask", 0), ("mask", np.float64(2.5)), ("mask2d", -7)])
@pytest.mark.parametrize("dtype", ["int32", "float64", "bool"])
def test_setitem_as_numpy(key, value, dtype):
    a = np.arange(24).reshape(2, 3, 4).astype(dtype)
    x = ar.asarray(a, chunks=2)
    before = x * 1
    if isinstance(key, str):
        key = a > 10 if key == "mask" else a[..., 0] > 3
        x[ar.asarray(key)] = value
    else:
        x[key] = value
    want = a.copy()
    with np.errstate(all="ignore"):
        want[key] = value
    assert x.dtype == want.dtype and x.shape == want.shape
    assert np.array_equal(x.compute(), want)
    assert np.array_equal(before.compute(), a * 1)


def test_setitem_refusals():
    x = ar.asarray(np.arange(6).reshape(2, 3))
    with pytest.raises(IndexError):
        x[2, 0] = 1
    with pytest.raises(IndexError):
        x[0, 0, 0] = 1
    with pytest.raises(ValueError):
        x[ar.asarray(np.array([True, False]))] = ar.asarray(np.array([1, 2, 3]))
    with pytest.raises(ValueError):
        x[0] = np.array([1, 2])  # does not broadcast to (3,)
