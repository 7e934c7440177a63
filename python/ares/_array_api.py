"""The array API standard's namespace protocol: ``ar.__array_namespace_info__()``, DLPack
import (``ar.from_dlpack``) and export (``Tensor.__dlpack__`` of a computed result).

The capabilities tell the truth: boolean indexing (``x[mask]``) and data-dependent shapes
(``unique``, ``nonzero``) are supported, their lengths computed in stages; ares computes on
the CPU only, so ``"cpu"`` is its one device.
"""

from __future__ import annotations

import numpy as np

from . import _ares

API_VERSION = "2024.12"

# DLPack's device type of the host's memory (`kDLCPU`).
_DLPACK_CPU = (1, 0)

_DEFAULTS = {
    "real floating": "float64",
    "complex floating": "complex128",
    "integral": "int64",
    "indexing": "int64",
}


def _check_device(device) -> None:
    from ._tensor import check_device

    check_device(device)


class NamespaceInfo:
    """What ``ar.__array_namespace_info__()`` returns (the standard's inspection API)."""

    __module__ = "ares"

    def capabilities(self) -> dict:
        return {
            "boolean indexing": True,
            "data-dependent shapes": True,
            "max dimensions": None,
        }

    def default_device(self) -> str:
        return "cpu"

    def devices(self) -> list:
        return ["cpu"]

    def default_dtypes(self, *, device=None) -> dict:
        _check_device(device)
        have = set(_ares.dtypes())
        return {kind: np.dtype(name) for kind, name in _DEFAULTS.items() if name in have}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The dtypes ares has, by name; ``kind`` as ``isdtype``'s (a name such as
        ``"integral"``, a dtype, or a tuple of them)."""
        _check_device(device)
        out = {}
        for name in _ares.dtypes():
            dtype = np.dtype(name)
            if kind is None or np.isdtype(dtype, _kind(kind)):
                out[name] = dtype
        return out


def _kind(kind):
    if isinstance(kind, tuple):
        return tuple(_kind(k) for k in kind)
    return kind if isinstance(kind, str) else np.dtype(kind)


def namespace_info() -> NamespaceInfo:
    return NamespaceInfo()


def from_dlpack(x, /, *, device=None, copy=None):
    """A tensor holding the data of ``x``, any object with ``__dlpack__`` (a NumPy array,
    another library's CPU array) or an ares tensor (returned as is). The data is copied into
    the engine, so ``copy=False`` is refused (the standard: a ValueError when a copy would be
    needed)."""
    from ._numpy import from_numpy
    from ._tensor import Tensor

    _check_device(device)
    if isinstance(x, Tensor):
        return x
    if copy is False:
        raise ValueError("from_dlpack(copy=False): ares cannot share this process's memory; "
                         "the data is copied into the engine (use copy=None or True)")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack needs an object with __dlpack__, not {type(x).__name__}")
    return from_numpy(np.from_dlpack(x))


def dlpack(tensor, *, stream=None, max_version=None, dl_device=None, copy=None):
    """``Tensor.__dlpack__``: the computed value's capsule (a host array, device CPU)."""
    if stream is not None:
        raise BufferError("ares computes on the CPU: stream must be None")
    if dl_device is not None and tuple(dl_device) != _DLPACK_CPU:
        raise BufferError(f"ares exports to the CPU only (dl_device {tuple(dl_device)})")
    if copy is False:
        raise BufferError("a lazy tensor has no memory to share: computing it makes a new "
                          "array (use copy=None or True)")
    value = np.ascontiguousarray(np.asarray(tensor.compute(), dtype=tensor.dtype))
    kwargs = {} if max_version is None else {"max_version": max_version}
    return value.__dlpack__(**kwargs)


def dlpack_device(tensor):
    return _DLPACK_CPU
