"""``ar.fft`` against ``numpy.fft``: every function of the extension, over several shapes and
chunkings (the transformed axis rechunked to one chunk, the others kept), ``n`` padding and
truncation, ``s``/``axes``, the three ``norm`` modes, float32/complex64 precision, and the
refusals."""

from __future__ import annotations

import numpy as np
import pytest

import ares as ar


def _value(t):
    """One tensor's value (``ar.compute`` returns a tuple, as dask's)."""
    return t.compute()

NORMS = ["backward", "ortho", "forward"]


def _real(shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _complex(shape, seed=0, dtype=np.complex128):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _check(got, want, rtol=1e-10, atol=1e-10):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


SHAPES = [((17,), 5), ((12, 10), (5, 4)), ((6, 7, 8), (4, 3, 5)), ((64,), 64)]


@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("shape,chunks", SHAPES)
@pytest.mark.parametrize("norm", NORMS)
def test_complex_transforms_match_numpy(name, shape, chunks, norm):
    a = _complex(shape, seed=len(shape))
    x = ar.from_numpy(a, chunks=chunks)
    for axis in range(-len(shape), len(shape)):
        m = shape[axis]
        for n in (None, m, m + 3, max(1, m - 2)):
            got = getattr(ar.fft, name)(x, n=n, axis=axis, norm=norm)
            want = getattr(np.fft, name)(a, n=n, axis=axis, norm=norm)
            _check(_value(got), want)


@pytest.mark.parametrize("shape,chunks", SHAPES)
@pytest.mark.parametrize("norm", NORMS)
def test_real_and_hermitian_transforms_match_numpy(shape, chunks, norm):
    a = _real(shape, seed=1)
    z = _complex(shape, seed=2)
    x, y = ar.from_numpy(a, chunks=chunks), ar.from_numpy(z, chunks=chunks)
    for axis in (0, -1):
        m = shape[axis]
        for n in (None, m + 2, max(2, m - 3)):
            _check(_value(ar.fft.rfft(x, n=n, axis=axis, norm=norm)),
                   np.fft.rfft(a, n=n, axis=axis, norm=norm))
            _check(_value(ar.fft.irfft(y, n=n, axis=axis, norm=norm)),
                   np.fft.irfft(z, n=n, axis=axis, norm=norm))
            _check(_value(ar.fft.hfft(y, n=n, axis=axis, norm=norm)),
                   np.fft.hfft(z, n=n, axis=axis, norm=norm))
            _check(_value(ar.fft.ihfft(x, n=n, axis=axis, norm=norm)),
                   np.fft.ihfft(a, n=n, axis=axis, norm=norm))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("norm", NORMS)
def test_n_dimensional_transforms_match_numpy(name, norm):
    a = _real((6, 7, 8), seed=3) if name == "rfftn" else _complex((6, 7, 8), seed=3)
    x = ar.from_numpy(a, chunks=(4, 3, 5))
    for s, axes in [(None, None), (None, (0, 2)), ((5, 9), None), ((4, 6, 10), (2, 0, 1)),
                    (None, (1,)), ((3, 4), (-1, 0))]:
        got = getattr(ar.fft, name)(x, s=s, axes=axes, norm=norm)
        want = getattr(np.fft, name)(a, s=s, axes=axes, norm=norm)
        _check(_value(got), want)


def test_frequencies_and_shifts_match_numpy():
    for n in (1, 2, 7, 8, 101):
        for d in (1.0, 0.5, 3):
            _check(_value(ar.fft.fftfreq(n, d=d)), np.fft.fftfreq(n, d=d), rtol=0, atol=0)
            _check(_value(ar.fft.rfftfreq(n, d=d)), np.fft.rfftfreq(n, d=d), rtol=0, atol=0)
    _check(_value(ar.fft.fftfreq(8, dtype=np.float32)),
           np.fft.fftfreq(8).astype(np.float32), rtol=0, atol=0)
    a = np.arange(7 * 8 * 3).reshape(7, 8, 3)
    x = ar.from_numpy(a, chunks=(3, 5, 2))
    for axes in (None, 0, (1,), (0, 2), -1):
        _check(_value(ar.fft.fftshift(x, axes=axes)), np.fft.fftshift(a, axes=axes), 0, 0)
        _check(_value(ar.fft.ifftshift(x, axes=axes)), np.fft.ifftshift(a, axes=axes), 0, 0)


def test_single_precision_stays_single():
    a = _real((40, 9), seed=4, dtype=np.float32)
    got = _value(ar.fft.rfft(ar.from_numpy(a, chunks=7), axis=0))
    want = np.fft.rfft(a, axis=0)
    assert got.dtype == np.complex64 and want.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    z = _complex((33,), seed=5, dtype=np.complex64)
    got = _value(ar.fft.ifft(ar.from_numpy(z, chunks=10)))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.fft.ifft(z), rtol=1e-4, atol=1e-5)


def test_integer_input_and_results_feed_further_arithmetic():
    a = np.arange(24).reshape(4, 6) % 5
    x = ar.from_numpy(a, chunks=(3, 4))
    power = ar.abs(ar.fft.fft(x, axis=1)) ** 2
    _check(_value(power), np.abs(np.fft.fft(a, axis=1)) ** 2)
    spectrum = ar.fft.fft(x, axis=0) * ar.fft.fft(x, axis=0).conj()
    _check(_value(ar.fft.ifft(spectrum, axis=0).real),
           np.fft.ifft(np.fft.fft(a, axis=0) * np.fft.fft(a, axis=0).conj(), axis=0).real)


def test_bad_arguments_raise_clear_errors():
    x = ar.ones((4, 6), chunks=2)
    with pytest.raises(ValueError, match="invalid norm value"):
        ar.fft.fft(x, norm="sideways")
    with pytest.raises(ValueError, match=r"invalid number of data points \(0\)"):
        ar.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        ar.fft.fft(x, axis=2)
    with pytest.raises(ValueError, match="needs a real input, got complex128"):
        ar.fft.rfft(ar.fft.fft(x))
    # Refused when the graph is tiled (the task fails before any chunk is computed).
    with pytest.raises(ar.TaskError, match=r"chunks of \(100000, 1000\) are 1525 MiB, over the "
                                           r"1024 MiB one chunk may hold"):
        _value(ar.fft.fft(ar.zeros((100_000, 100_000), chunks=1000), axis=0))


def test_complex_data_crosses_a_real_cluster(any_engine):
    """Complex uploads, transforms over several workers and complex results over the native
    protocol and HTTP (and in process): the wire codecs, the .npy download and the JSON-free
    fetch of complex64/complex128 chunks."""
    z = _complex((24, 10), seed=7)
    x = ar.asarray(z, chunks=(5, 4))
    got_fft, got_real, got_single = ar.compute(
        ar.fft.fft(x, axis=0), ar.fft.irfft(x, n=18), ar.astype(x, "complex64") * 2)
    _check(got_fft, np.fft.fft(z, axis=0))
    _check(got_real, np.fft.irfft(z, n=18))
    _check(got_single, z.astype(np.complex64) * 2, rtol=1e-6, atol=1e-6)
    total = _value(ar.sum(x))
    assert isinstance(total, complex) and abs(total - z.sum()) < 1e-9
