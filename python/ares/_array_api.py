"""The array API standard's namespace protocol: ``ar.__array_namespace_info__()``, DLPack
import (``ar.from_dlpack``) and export (``Tensor.__dlpack__`` of a computed result).

The capabilities tell the truth: boolean indexing (``x[mask]``) and data-dependent shapes
(``unique``, ``nonzero``) are supported, their lengths computed in stages; ares computes on
the CPU only, so ``"cpu"`` is its one device.
"""

from __future__ import annotations

import builtins
import operator

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
    another library's CPU array) or an ares tensor (as is; with ``copy=True`` a copy). The data
    is copied into the engine, so ``copy=False`` is refused (the standard: a ValueError when a
    copy would be needed)."""
    from ._numpy import from_numpy
    from ._tensor import Tensor

    _check_device(device)
    if isinstance(x, Tensor):
        return x._copy() if copy else x
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
    # A diagonal beyond the matrix is the same as the first one outside it.
    cols = n_rows if n_cols is None else n_cols
    k = max(min(operator.index(k), operator.index(cols) + 1), -operator.index(n_rows) - 1)
    return _core("eye", n_rows, n_cols, k=k, dtype=dtype, chunks=chunks)


def tril(x, /, k=0):
    """The lower triangle (on and below diagonal ``k``) of the last two axes, zeros above."""
    return _core("tril", x, k=k)


def triu(x, /, k=0):
    """The upper triangle (on and above diagonal ``k``) of the last two axes, zeros below."""
    return _core("triu", x, k=k)


def meshgrid(*arrays, indexing="xy"):
    """Coordinate grids of 1-D tensors: a list (the standard's 2024.12), ``'xy'``
    (Cartesian) or ``'ij'`` (matrix)."""
    return list(_core("meshgrid", *arrays, indexing=indexing))


def broadcast_arrays(*arrays):
    """The tensors broadcast to their common shape (a list, the standard's 2024.12)."""
    return list(_core("broadcast_arrays", *arrays))


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
    """Each element ``repeats`` times along ``axis`` (of the flattened tensor without one).
    ``repeats`` an integer, or one per element (a tensor, array or list): those are read
    first (computed: the result's length depends on them), then the elements gathered by a
    ``take``."""
    from ._tensor import Tensor

    if isinstance(repeats, (Tensor, np.ndarray, list, tuple)):
        counts = np.asarray(repeats.compute() if isinstance(repeats, Tensor) else repeats)
        if counts.dtype.kind not in "iu" and counts.size:
            raise TypeError(f"repeat: repeats must be integers, not {counts.dtype}")
        if counts.ndim > 1:
            raise ValueError(f"repeat: repeats must be 0-d or 1-d, got shape {counts.shape}")
        if counts.size == 1:
            return _core("repeat", x, int(counts.reshape(())), axis=axis)
        import ares

        x = ares.asarray(x)
        n = x.size if axis is None else x.shape[axis]
        if counts.shape != (n,):
            raise ValueError(f"repeat: {counts.size} repeats for an axis of length {n}")
        if (counts < 0).any():
            raise ValueError("repeat: repeats may not contain negative values")
        positions = np.repeat(np.arange(n, dtype=np.int64), counts.astype(np.int64))
        return ares.take(x, positions, axis=0 if axis is None else axis) if axis is not None \
            else ares.take(ares.reshape(x, (-1,)), positions, axis=0)
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



def all(x, /, axis=None, *, keepdims=False):  # noqa: A001
    """Whether every element over ``axis`` is nonzero."""
    return _core("all", x, axis=axis, keepdims=keepdims)


def any(x, /, axis=None, *, keepdims=False):  # noqa: A001
    """Whether some element over ``axis`` is nonzero."""
    return _core("any", x, axis=axis, keepdims=keepdims)


def argmax(x, /, axis=None, *, keepdims=False):
    """int64 positions of the first maximum along ``axis`` (of the flattened tensor)."""
    return _core("argmax", x, axis=axis, keepdims=keepdims)


def argmin(x, /, axis=None, *, keepdims=False):
    """int64 positions of the first minimum along ``axis`` (of the flattened tensor)."""
    return _core("argmin", x, axis=axis, keepdims=keepdims)


def searchsorted(x1, x2, /, side="left", *, sorter=None):
    """Where ``x2``'s values go in the sorted 1-D ``x1`` (``x1[sorter]`` with a sorter)."""
    if sorter is not None:
        import ares

        x1 = ares.take(x1, sorter)
    return _core("searchsorted", x1, x2, side=side)


def where(condition, x1, x2, /):
    """``x1`` where ``condition`` is nonzero, else ``x2``, broadcast together."""
    return _core("where", condition, x1, x2)


def broadcast_to(x, /, shape):
    """``x`` broadcast to ``shape``."""
    return _core("broadcast_to", x, shape)


def expand_dims(x, /, axis=0):
    """Axes of length 1 inserted at ``axis`` (an int or a tuple)."""
    return _core("expand_dims", x, axis)


def squeeze(x, /, axis=None):
    """Axes of length 1 removed: ``axis`` (an int or a tuple), or all of them."""
    return _core("squeeze", x, axis=axis)


def stack(arrays, /, axis=0):
    """The tensors of one shape joined along a new axis."""
    return _core("stack", tuple(arrays), axis=axis)


def tensordot(x1, x2, /, axes=2):
    """Sums of products over ``axes`` (an int: the last of ``x1`` with the first of
    ``x2``; or a pair of axis sequences)."""
    return _core("tensordot", x1, x2, axes=axes)


class FInfo:
    """The standard's ``finfo``: ``bits`` and ``dtype``, the limits as Python floats."""

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype", "_np")

    def __init__(self, dtype):
        info = np.finfo(dtype)
        self._np = info
        self.bits = int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.smallest_normal = float(info.smallest_normal)
        self.dtype = info.dtype

    def __getattr__(self, name):
        # NumPy's other fields (`tiny`, `resolution`, `precision`...).
        return getattr(self._np, name)

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, " \
               f"smallest_normal={self.smallest_normal}, dtype={self.dtype})"


def finfo(dtype) -> FInfo:
    return FInfo(dtype)


def full_complex(shape, value: complex, dtype, chunks, device):
    """``full`` of a complex fill value: a 0-d complex tensor selected everywhere (exact:
    infinities, NaNs and signed zeros stay as they are, where arithmetic would mix them)."""
    from ._numpy import from_numpy
    from ._tensor import apply, dtype_name

    _check_device(device)
    name = "complex128" if dtype is None else dtype_name(dtype)
    if np.dtype(name).kind != "c":
        raise TypeError(f"full: a complex fill value {value!r} does not fit dtype {name}")
    everywhere = apply("full", (shape, True), {"chunk": chunks, "dtype": "bool"})
    one = from_numpy(np.asarray(value, dtype=name))
    return apply("where", (everywhere, one, one))


def assigned(x, key, value):
    """The tensor ``x`` with ``x[key] = value`` applied (``Tensor.__setitem__`` rebinds its
    tensor to this): a ``where`` of the positions ``key`` selects and ``value`` spread over
    them. ``key``: integers, slices and ``...`` (basic indexing), or a boolean tensor of
    ``x``'s leading shape with a 0-d value; ``value`` cast to ``x``'s dtype as NumPy does.
    Tensors derived from ``x`` before keep their values (the standard leaves views
    implementation-defined; ares has none)."""
    import ares

    from ._tensor import Tensor

    if isinstance(key, (Tensor, np.ndarray)) and np.dtype(key.dtype) == np.bool_:
        mask = key if isinstance(key, Tensor) else ares.asarray(key)
        if mask.shape != x.shape[:mask.ndim]:
            raise IndexError(f"boolean index of shape {mask.shape} does not match the "
                             f"tensor's shape {x.shape}")
        v = _as_value(value, x.dtype)
        if v.ndim:
            raise ValueError("x[mask] = value: ares assigns a single value (0-d) under a mask")
        mask = ares.reshape(mask, mask.shape + (1,) * (x.ndim - mask.ndim))
        return ares.where(mask, v, x)
    dims = _basic_key(key, x.shape)
    if builtins.any(not len(r) for r, _ in dims):
        return x  # no position selected
    kept = tuple(len(r) for r, keep in dims if keep)
    v = ares.reshape(ares.broadcast_to(_as_value(value, x.dtype), kept),
                     tuple(len(r) for r, _ in dims))
    picked = None
    for d, (r, _) in enumerate(dims):
        if len(r) == x.shape[d] and r.step == 1:
            continue  # the whole axis: nothing to spread, nothing to mask
        inside = np.zeros(x.shape[d], dtype=bool)
        inside[list(r)] = True
        # Each position of axis d reads the value's element that lands there (0 outside).
        where_from = np.zeros(x.shape[d], dtype=np.int64)
        where_from[list(r)] = np.arange(len(r))
        v = ares.take(v, where_from, axis=d)
        along = [1] * x.ndim
        along[d] = x.shape[d]
        axis_mask = ares.reshape(ares.asarray(inside), tuple(along))
        picked = axis_mask if picked is None else picked & axis_mask
    if picked is None:
        return ares.broadcast_to(v, x.shape)
    return ares.where(picked, v, x)


def _as_value(value, dtype):
    import ares

    from ._tensor import Tensor

    if isinstance(value, Tensor):
        return value if value.dtype == dtype else value.astype(dtype)
    return ares.asarray(np.asarray(value, dtype=dtype))


def _basic_key(key, shape):
    """Per axis, the positions a basic index selects (a ``range``) and whether it keeps the
    axis (an integer drops it)."""
    key = key if isinstance(key, tuple) else (key,)
    if builtins.sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * (len(shape) - len(key) + 1) + key[at + 1:]
    if len(key) > len(shape):
        raise IndexError(f"too many indices: {len(key)} for a tensor of {len(shape)} "
                         "dimensions")
    key = key + (slice(None),) * (len(shape) - len(key))
    dims = []
    for k, n in zip(key, shape):
        if isinstance(k, slice):
            dims.append((range(n)[k], True))
            continue
        try:
            i = operator.index(k)
        except TypeError:
            raise IndexError(f"x[...] = value: index {k!r} is not supported (integers, "
                             "slices, ... or a boolean mask)") from None
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis with size {n}")
        dims.append((range(n)[i:i + 1] if i >= 0 else range(n)[i + n:i + n + 1], False))
    return dims
