"""The array API's ``fft`` extension: ``ar.fft.fft``, ``ifft``, ``fftn``, ``ifftn``, ``rfft``,
``irfft``, ``rfftn``, ``irfftn``, ``hfft``, ``ihfft``, ``fftfreq``, ``rfftfreq``, ``fftshift``
and ``ifftshift``, with NumPy's ``n=``/``s=``, ``axis=``/``axes=`` and ``norm=`` ("backward",
"ortho", "forward").

As dask does, each transformed axis is rechunked into one chunk while the other axes keep
theirs, so every lane is transformed whole by one kernel (rustfft / realfft, plans made once
per length). A transform whose chunk would exceed 1 GiB is refused, naming the chunk's size:
rechunk the other axes smaller. Results are complex64 for float32/complex64 input,
complex128 otherwise (``irfft``/``hfft``: the real dtype of the parts).
"""

from __future__ import annotations

from ._tensor import Tensor as _Tensor, apply as _apply


def _one(name, x, n, axis, norm):
    return _apply(f"fft.{name}", (x,), {"n": n, "axis": axis, "norm": norm})


def _many(name, x, s, axes, norm):
    return _apply(f"fft.{name}", (x,), {"s": s, "axes": axes, "norm": norm})


def fft(x, /, *, n=None, axis=-1, norm="backward") -> _Tensor:
    """One-dimensional discrete Fourier transform along ``axis`` (cut or zero-padded to ``n``)."""
    return _one("fft", x, n, axis, norm)


def ifft(x, /, *, n=None, axis=-1, norm="backward") -> _Tensor:
    """One-dimensional inverse discrete Fourier transform."""
    return _one("ifft", x, n, axis, norm)


def rfft(x, /, *, n=None, axis=-1, norm="backward") -> _Tensor:
    """The ``n // 2 + 1`` non-negative frequencies of a real signal's transform."""
    return _one("rfft", x, n, axis, norm)


def irfft(x, /, *, n=None, axis=-1, norm="backward") -> _Tensor:
    """The real signal of length ``n`` (default ``2 (m - 1)``) from its non-negative frequencies."""
    return _one("irfft", x, n, axis, norm)


def hfft(x, /, *, n=None, axis=-1, norm="backward") -> _Tensor:
    """The real spectrum of a signal with Hermitian symmetry (``irfft`` of the conjugate)."""
    return _one("hfft", x, n, axis, norm)


def ihfft(x, /, *, n=None, axis=-1, norm="backward") -> _Tensor:
    """The inverse of ``hfft`` (the conjugate of ``rfft``)."""
    return _one("ihfft", x, n, axis, norm)


def fftn(x, /, *, s=None, axes=None, norm="backward") -> _Tensor:
    """N-dimensional discrete Fourier transform over ``axes`` (all, or the last ``len(s)``)."""
    return _many("fftn", x, s, axes, norm)


def ifftn(x, /, *, s=None, axes=None, norm="backward") -> _Tensor:
    """N-dimensional inverse discrete Fourier transform."""
    return _many("ifftn", x, s, axes, norm)


def rfftn(x, /, *, s=None, axes=None, norm="backward") -> _Tensor:
    """N-dimensional transform of real input (the last axis real, halved)."""
    return _many("rfftn", x, s, axes, norm)


def irfftn(x, /, *, s=None, axes=None, norm="backward") -> _Tensor:
    """The inverse of ``rfftn``."""
    return _many("irfftn", x, s, axes, norm)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None) -> _Tensor:
    """The sample frequencies ``[0, 1, ..., -1] / (n d)`` of an ``n``-point transform."""
    if device not in (None, "cpu"):
        raise ValueError(f"ares has one device, 'cpu', not {device!r}")
    return _apply("fft.fftfreq", (n,), {"d": d, "dtype": dtype})


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None) -> _Tensor:
    """The sample frequencies ``[0, 1, ..., n // 2] / (n d)`` of ``rfft``."""
    if device not in (None, "cpu"):
        raise ValueError(f"ares has one device, 'cpu', not {device!r}")
    return _apply("fft.rfftfreq", (n,), {"d": d, "dtype": dtype})


def fftshift(x, /, *, axes=None) -> _Tensor:
    """The zero frequency moved to the center (a roll by ``n // 2`` along each axis)."""
    return _apply("fft.fftshift", (x,), {"axes": axes})


def ifftshift(x, /, *, axes=None) -> _Tensor:
    """The inverse of ``fftshift``."""
    return _apply("fft.ifftshift", (x,), {"axes": axes})


del annotations  # `from __future__ import annotations` is not part of the API
