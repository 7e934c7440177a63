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


# -- the standard's signatures over the core's functions -------------------------------------
# The core takes NumPy's argument names and the standard's (positional or keyword); these
# give the functions the standard's signatures (its keywords, `device=`; NumPy's positional
# forms too), which `inspect.signature` shows, and pass the arguments on unchanged.

def _core(name, *args, **kwargs):
    from ._tensor import apply

    return apply(name, args, {k: v for k, v in kwargs.items() if v is not None})


def eye(n_rows, n_cols=None, /, k=0, dtype=None, *, device=None, chunks=None):
    """A 2-D tensor with ones on diagonal ``k`` and zeros elsewhere (float64 by default)."""
    _check_device(device)
    return _core("eye", n_rows, n_cols, k=k, dtype=dtype, chunks=chunks)


def tril(x, /, k=0):
    """The lower triangle (on and below diagonal ``k``) of the last two axes, zeros above."""
    return _core("tril", x, k=k)


def triu(x, /, k=0):
    """The upper triangle (on and above diagonal ``k``) of the last two axes, zeros below."""
    return _core("triu", x, k=k)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids of 1-D tensors: a tuple, ``'xy'`` (Cartesian) or ``'ij'`` (matrix)."""
    return _core("meshgrid", *arrays, indexing=indexing)


def broadcast_arrays(*arrays):
    """The tensors broadcast to their common shape (a tuple)."""
    return _core("broadcast_arrays", *arrays)


def flip(x, /, axis=None):
    """The elements in reverse order along ``axis`` (an int, a tuple, or all axes)."""
    return _core("flip", x, axis=axis)


def roll(x, /, shift, axis=None):
    """Elements shifted by ``shift`` along ``axis`` (the flattened tensor without one)."""
    return _core("roll", x, shift, axis=axis)


def moveaxis(x, source, destination, /):
    """The axes ``source`` moved to ``destination``, the others in their order."""
    return _core("moveaxis", x, source, destination)


def tile(x, repetitions, /):
    """``repetitions`` copies of ``x`` along each axis (NumPy's ``tile``)."""
    return _core("tile", x, repetitions)


def repeat(x, repeats, /, axis=None):
    """Each element ``repeats`` times (an integer) along ``axis`` (flattened without one)."""
    return _core("repeat", x, repeats, axis=axis)


def unstack(x, /, *, axis=0):
    """The slices along ``axis``, a tuple."""
    return _core("unstack", x, axis=axis)


def diff(x, /, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (NumPy's positional ``n`` too)."""
    return _core("diff", x, n=n, axis=axis, prepend=prepend, append=append)


def take_along_axis(x, indices, /, axis=-1):
    """The elements at ``indices`` along ``axis``, the other axes broadcast together."""
    return _core("take_along_axis", x, indices, axis=axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running sums along ``axis`` (required above 1-D), in ``dtype`` when given, with 0
    first when ``include_initial``."""
    return _core("cumulative_sum", x, axis=axis, dtype=dtype, include_initial=include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Running products (see ``cumulative_sum``), with 1 first when ``include_initial``."""
    return _core("cumulative_prod", x, axis=axis, dtype=dtype, include_initial=include_initial)


def count_nonzero(x, /, axis=None, *, keepdims=False):
    """The number of nonzero elements (int64) over ``axis``."""
    return _core("count_nonzero", x, axis=axis, keepdims=keepdims)

