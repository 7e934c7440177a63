"""ares: lazy n-dimensional tensors with a NumPy-like API, computed by the ares engine.

    import ares as ar
    a = ar.random.rand(10**8, chunks=10**6, seed=1)
    b = ar.random.rand(10**8, chunks=10**6, seed=2)
    (a + b).sum().compute()          # an embedded engine starts in this process

Every function of the core's expression language is available under its NumPy name, as a
function (``ar.cumsum(x, axis=0)``) and as a method (``x.cumsum(axis=0)``); the core checks
the arguments, with NumPy 2's promotion rules (NEP 50). Names and signatures follow the Python
array API standard (2024.12) where ares has the function. Errors building a tensor raise
``ValueError``; a failed task raises ``ar.TaskError``; Ctrl-C cancels the running task.
"""

from __future__ import annotations

import builtins as _builtins
import collections as _collections
import math as _math
import operator as _operator

import numpy as _np

from . import _ares, _chunks, fft, linalg, random
from ._ares import TaskError
from ._engine import close, compute, connect, persist, set_progress, start
from ._engine import engine as _current_engine
from ._engine import explain
from ._numpy import from_numpy
from ._from_array import from_array
from ._array_api import API_VERSION as __array_api_version__
from ._array_api import from_dlpack, namespace_info as __array_namespace_info__
from ._array_api import finfo as _finfo, full_complex as _full_complex
from ._array_api import (broadcast_arrays, count_nonzero, cumulative_prod, cumulative_sum,
                         diff, eye, flip, meshgrid, moveaxis, repeat, roll, take_along_axis, tile,
                         tril, triu, unstack)
from ._array_api import (all, any, argmax, argmin, broadcast_to, expand_dims, searchsorted,
                         squeeze, stack, tensordot, where)
from ._blocks import apply_gufunc, blockwise, map_blocks, map_overlap, reduction
from ._tensor import Tensor, apply as _apply, check_device as _check_device
from ._tensor import dtype_name as _dtype_name, is_function as _is_function

__version__ = _ares.__version__

# -- dtypes: NumPy's dtype objects, for those the core has --------------------------------
_DTYPES = tuple(_ares.dtypes())
for _name in _DTYPES:
    globals()[_name] = _np.dtype(_name)
bool = _np.dtype("bool")  # noqa: A001  (the array API's name)
newaxis = None
nan = _math.nan
inf = _math.inf
pi = _math.pi
e = _math.e


def engine():
    """The engine computing tensors now (the embedded one starts on first use)."""
    return _current_engine()


def _function(name: str, doc: str | None = None):
    def f(*args, **kwargs):
        return _apply(name, args, kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc or f"ares' {name} (see NumPy's); lazy: returns a Tensor."
    return f


# The core's functions that are not public here: the random sources live in `ar.random`,
# `shuffle_bench` is a benchmark of the engine.
_CORE_ONLY = frozenset({"rand", "randn", "shuffle_bench"})


def _core_functions() -> list[str]:
    """The core's functions under their NumPy names, as the package publishes them (those of
    a namespace, ``linalg.qr``, are in its module: ``ar.linalg.qr``)."""
    return [n for n in _ares.functions() if n not in _CORE_ONLY and "." not in n]


# Every other function of the core is passed straight to it under its NumPy name (the core
# checks every argument), so a function the core adds is public here the day it lands (and
# the differential test of tests/test_api_differential.py then asks for its case).
for _name in _core_functions():
    if _name not in globals():
        globals()[_name] = _function(_name)


def _reduction(name):
    # `axis` may also come by position, as NumPy's `np.sum(x, 0)` passes it on.
    def f(x, /, axis=None, *, keepdims=False):
        return _apply(name, (x,), {"axis": axis, "keepdims": keepdims})

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{name} over ``axis`` (an int, a tuple, or None for all axes)."
    return f


def sum(x, /, axis=None, *, dtype=None, keepdims=False) -> Tensor:  # noqa: A001
    """Sum over ``axis`` (an int, a tuple, or None for all axes), accumulated and returned in
    ``dtype`` when given (else NumPy's: int64 for bools and integers)."""
    return _apply("sum", (x,), {"axis": axis, "keepdims": keepdims, "dtype": dtype})


def prod(x, /, axis=None, *, dtype=None, keepdims=False) -> Tensor:
    """Product over ``axis``, in ``dtype`` when given (see ``sum``)."""
    return _apply("prod", (x,), {"axis": axis, "keepdims": keepdims, "dtype": dtype})


min = _reduction("min")  # noqa: A001
max = _reduction("max")  # noqa: A001
mean = _reduction("mean")
amin = _reduction("min")
amax = _reduction("max")


def var(x, /, axis=None, *, correction=0, keepdims=False, ddof=None):
    """Variance, in float64, with ``correction`` (the array API's, any non-negative number:
    the sum of squares is divided by ``N - correction``) or ``ddof`` (NumPy's)."""
    return x.var(axis=axis, keepdims=keepdims, ddof=ddof if ddof is not None else correction)


def std(x, /, axis=None, *, correction=0, keepdims=False, ddof=None):
    """Standard deviation, in float64 (see ``var``)."""
    return x.std(axis=axis, keepdims=keepdims, ddof=ddof if ddof is not None else correction)


# -- creation ----------------------------------------------------------------------------

def _create(name, shape, dtype, chunks, *extra, device=None):
    _check_device(device)
    kwargs = {"chunk": _chunks.normalize(chunks, _chunks.ndim_of(shape))}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return _apply(name, (shape,) + extra, kwargs)


def ones(shape, *, dtype=None, chunks=None, device=None) -> Tensor:
    return _create("ones", shape, dtype, chunks, device=device)


def zeros(shape, *, dtype=None, chunks=None, device=None) -> Tensor:
    return _create("zeros", shape, dtype, chunks, device=device)


def empty(shape, *, dtype=None, chunks=None, device=None) -> Tensor:
    """Zeros: an ares tensor is never uninitialized."""
    return _create("zeros", shape, dtype, chunks, device=device)


def full(shape, fill_value, *, dtype=None, chunks=None, device=None) -> Tensor:
    if dtype is None and isinstance(fill_value, (_np.generic, _np.ndarray)):
        # A NumPy scalar keeps its dtype (NEP 50: it is not a weak Python number).
        fill_value = _np.asarray(fill_value)
        dtype = fill_value.dtype if fill_value.dtype.name in _DTYPES else None
        fill_value = fill_value.item()
    if isinstance(fill_value, complex):
        return _full_complex(shape, fill_value, dtype, chunks, device)
    return _create("full", shape, dtype, chunks, fill_value, device=device)


def _like(x, dtype, chunks):
    """The shape, dtype and chunks of ``x`` (dask keeps x's chunks unless others are asked
    for); an ``x`` whose length depends on the data has no shape to copy yet."""
    if isinstance(x, Tensor):
        x._require_known_length("shape")
        keep = x.chunks if chunks is None and x.ndim else chunks
        return x._handle.shape, x.dtype if dtype is None else dtype, keep
    x = _np.asarray(x)
    return x.shape, x.dtype if dtype is None else dtype, chunks


def ones_like(x, /, *, dtype=None, chunks=None, device=None) -> Tensor:
    shape, dtype, chunks = _like(x, dtype, chunks)
    return ones(shape, dtype=dtype, chunks=chunks, device=device)


def zeros_like(x, /, *, dtype=None, chunks=None, device=None) -> Tensor:
    shape, dtype, chunks = _like(x, dtype, chunks)
    return zeros(shape, dtype=dtype, chunks=chunks, device=device)


def empty_like(x, /, *, dtype=None, chunks=None, device=None) -> Tensor:
    shape, dtype, chunks = _like(x, dtype, chunks)
    return zeros(shape, dtype=dtype, chunks=chunks, device=device)


def full_like(x, /, fill_value, *, dtype=None, chunks=None, device=None) -> Tensor:
    shape, dtype, chunks = _like(x, dtype, chunks)
    return full(shape, fill_value, dtype=dtype, chunks=chunks, device=device)


def arange(start, /, stop=None, step=None, *, dtype=None, chunks=None, device=None) -> Tensor:
    _check_device(device)
    if stop is None and step is not None:
        start, stop = 0, start
    args = (start,) if stop is None else (start, stop) if step is None else (start, stop, step)
    t = _apply("arange", args, {"chunk": _chunks.normalize(chunks, 1)})
    if dtype is not None and _dtype_name(dtype) == "bool" and t.shape[0] > 2:
        # NumPy's rule: a boolean range has no third value to step to.
        raise TypeError("arange() is only supported for booleans when the result has at most length 2.")
    if dtype is not None and _np.dtype(_dtype_name(dtype)).kind in "iu" and t.shape[0] > 0:
        # NumPy's rule for an integer range: the first two values in the dtype (an
        # OverflowError outside it), then steps of their difference (with float bounds,
        # arange(1.5, -1, -1, dtype=int8) is 1, 0, -1).
        lo = 0 if stop is None else start
        by = 1 if step is None else step
        info = _np.iinfo(_dtype_name(dtype))
        for v in (lo, lo + by)[:t.shape[0]]:
            if not info.min <= int(v) <= info.max:
                raise OverflowError(f"Python integer {int(v)} out of bounds for {info.dtype}")
        if t.dtype.kind == "f" and t.shape[0] > 1:
            with _np.errstate(all="ignore"):
                first = _np.array([lo, lo + by], _np.float64).astype(_dtype_name(dtype))
            delta = first[1] - first[0]
            return _apply("arange", (t.shape[0],), {"chunk": chunks}).astype(dtype) * delta + first[0]
    return t if dtype is None or _dtype_name(dtype) == t.dtype.name else t.astype(dtype)


def linspace(start, stop, /, num=50, *, endpoint=True, dtype=None, chunks=None, device=None) -> Tensor:
    _check_device(device)
    t = _apply("linspace", (start, stop, num), {"endpoint": endpoint, "chunk": _chunks.normalize(chunks, 1)})
    return t if dtype is None or _dtype_name(dtype) == t.dtype.name else t.astype(dtype)


def asarray(obj, /, *, dtype=None, chunks=None, device=None, copy=None) -> Tensor:
    """A tensor from a tensor (as is), a NumPy array, a nested sequence or a scalar.

    ``copy=False`` is refused for anything but a tensor of the asked dtype: ares copies data
    from this process into the engine (the array API: "raise a ValueError if a copy would be
    necessary"). ``copy=True`` of a tensor is another tensor of the same graph, which keeps
    its values when ``obj`` is assigned into later (``obj[key] = value``)."""
    _check_device(device)
    if isinstance(obj, Tensor):
        if dtype is None or _dtype_name(dtype) == obj.dtype.name:
            if chunks is not None:
                return obj.rechunk(chunks)
            return obj._copy() if copy else obj
        if copy is False:
            raise ValueError(f"asarray(copy=False): casting {obj.dtype.name} to "
                             f"{_dtype_name(dtype)} needs a copy")
        return obj.astype(dtype) if chunks is None else obj.astype(dtype).rechunk(chunks)
    if copy is False:
        raise ValueError("asarray(copy=False): ares cannot share this process's memory; the "
                         "data is copied into the engine (use copy=None or True)")
    array = _np.asarray(obj, dtype=None if dtype is None else _dtype_name(dtype))
    return from_numpy(array, chunks=chunks)


def rechunk(x, chunks="auto") -> Tensor:
    """``x`` in ``chunks`` (dask's spellings: see ``Tensor.rechunk``)."""
    return asarray(x).rechunk(chunks)


def from_npy(path, chunks=None) -> Tensor:
    """A ``.npy`` file under the data roots, read chunk by chunk by the workers."""
    from ._engine import ensure_roots

    ensure_roots()
    if isinstance(chunks, (dict, list)):
        chunks = _chunks.normalize(chunks, Tensor(_ares.from_npy(str(path))).ndim)
    return Tensor(_ares.from_npy(str(path), chunks))


def from_zarr(path, chunks=None) -> Tensor:
    """A Zarr array (v3 or v2) under the data roots, read chunk by chunk by the workers."""
    from ._engine import ensure_roots

    ensure_roots()
    if isinstance(chunks, (dict, list)):
        chunks = _chunks.normalize(chunks, _apply("from_zarr", (str(path),)).ndim)
    return _apply("from_zarr", (str(path),), {"chunk": chunks})


def to_npy(x, path, /, *, compute=True):
    """Writes ``x`` to the ``.npy`` file ``path`` (under the data roots) from the workers, at
    once, and returns None; with ``compute=False``, returns the lazy write instead (a tensor
    whose value is the number of bytes written), as dask's ``to_npy_stack(compute=False)``."""
    write = _apply("to_npy", (x, str(path)))
    if not compute:
        return write
    write.compute()
    return None


def to_zarr(x, path, /, *, chunks=None, codec="zstd", compute=True):
    """Writes ``x`` as a Zarr v3 array at ``path`` (under the data roots) from the workers, at
    once, and returns None (dask's ``to_zarr``); ``compute=False`` returns the lazy write.
    ``chunks``: the store's chunks (else x's own, made regular); ``codec``: ``zstd``
    (``zstd:L``), ``gzip[:L]`` or ``none``."""
    chunks = _chunks.normalize(chunks, x.ndim)
    write = _apply("to_zarr", (x, str(path)), {"chunk": chunks, "codec": codec})
    if not compute:
        return write
    write.compute()
    return None


# -- the array API's names for NumPy's -----------------------------------------------------

def astype(x, dtype, /, *, copy=True, device=None) -> Tensor:
    return x.astype(dtype, copy=copy, device=device)


# -- data type functions: ares' promotion is NumPy 2's for the dtypes it has, so NumPy answers
def _dtype_of(v):
    return v.dtype if isinstance(v, Tensor) else v


def result_type(*arrays_and_dtypes):
    """The dtype of an operation on these tensors, dtypes and Python numbers (weak, NEP 50)."""
    return _np.result_type(*[_dtype_of(v) for v in arrays_and_dtypes])


def can_cast(from_, to, /) -> _builtins.bool:
    """Whether ``from_`` (a tensor or dtype) casts to ``to`` without losing values."""
    return _builtins.bool(_np.can_cast(_dtype_of(from_), to))


def finfo(type, /):
    return _finfo(_dtype_of(type))


def iinfo(type, /):
    return _np.iinfo(_dtype_of(type))


def isdtype(dtype, kind) -> _builtins.bool:
    return _builtins.bool(_np.isdtype(_np.dtype(dtype), kind))


def reshape(x, /, shape, *, copy=None) -> Tensor:
    return x.reshape(shape, copy=copy)


def transpose(x, axes=None) -> Tensor:
    return _apply("transpose", (x,) if axes is None else (x, tuple(axes)))


def permute_dims(x, /, axes) -> Tensor:
    return _apply("transpose", (x, tuple(axes)))


def matrix_transpose(x, /) -> Tensor:
    return x.mT


def vecdot(x1, x2, /, *, axis=-1) -> Tensor:
    """The dot product of the vectors along ``axis`` (``ar.linalg.vecdot``)."""
    return linalg.vecdot(x1, x2, axis=axis)


def concatenate(arrays, axis=0) -> Tensor:
    """Joins tensors along ``axis``; ``axis=None`` joins them flattened (NumPy's)."""
    arrays = tuple(arrays)
    if axis is None:
        arrays = tuple(reshape(asarray(a), (-1,)) for a in arrays)
        axis = 0
    return _apply("concatenate", (arrays,), {"axis": axis})


def concat(arrays, /, *, axis=0) -> Tensor:
    return concatenate(arrays, axis=axis)


def clip(x, /, min=None, max=None, *, a_min=None, a_max=None) -> Tensor:
    """``x`` bounded below by ``min`` and above by ``max`` (tensors or numbers; NumPy 1's
    ``a_min``/``a_max`` keywords too); with neither, ``x`` itself (NumPy returns a copy; a
    tensor is immutable)."""
    low = min if min is not None else a_min
    high = max if max is not None else a_max
    if low is None and high is None:
        return asarray(x)
    return _apply("clip", (x, low, high))


def pow(x1, x2, /) -> Tensor:  # noqa: A001
    return _apply("power", (x1, x2))


def round(x, /, decimals=0) -> Tensor:  # noqa: A001
    """Rounded to ``decimals`` places, halves to even (the array API's ``round`` without
    ``decimals``; integers are kept). As NumPy, other ``decimals`` scale by ``10**decimals``,
    round and scale back (so ``round(2.675, 2)`` is 2.67 as in NumPy); integers with
    ``decimals >= 0`` are kept, with fewer than 0 rounded in float64 and cast back."""
    decimals = _operator.index(decimals)
    if decimals == 0:
        return _apply("round", (x,))
    x = asarray(x)
    if x.dtype.kind in "iu" and decimals > 0:
        return x._copy()
    scale = 10.0 ** _builtins.abs(decimals)
    if x.dtype.kind in "iub":
        y = x.astype(float64)
        y = _apply("round", (y * scale if decimals > 0 else y / scale,))
        y = y / scale if decimals > 0 else y * scale
        return y.astype(x.dtype) if x.dtype.kind != "b" else y
    y = _apply("round", (x * scale if decimals > 0 else x / scale,))
    return y / scale if decimals > 0 else y * scale


around = round


def sort(x, /, *, axis=-1, descending=False, stable=True) -> Tensor:
    """Sorted along any ``axis``, ascending or ``descending`` (NaN last, or first when
    descending). ares' sort is always stable, which ``stable=False`` allows."""
    return _apply("sort", (x,), {"axis": axis, "descending": True if descending else False})


def argsort(x, /, *, axis=-1, descending=False, stable=True) -> Tensor:
    """Positions that sort ``axis``; ties keep their order, also ``descending`` (always
    stable, which ``stable=False`` allows)."""
    return _apply("argsort", (x,), {"axis": axis, "descending": True if descending else False})


def compress(condition, a, /, axis=None):
    """NumPy's ``compress``: the slices of ``a`` along ``axis`` (0, or None for the flattened
    tensor) where the 1-D ``condition`` holds; a condition shorter than the axis is False
    beyond its end. The result's length depends on the data (computed in stages)."""
    if isinstance(condition, (list, tuple, _np.ndarray)):
        condition = from_numpy(_np.asarray(condition))
    return _apply("compress", (condition, a), {"axis": axis})


def take(a, indices, /, axis=None):
    """NumPy's ``take``: positions of any integer dtype (the core reads int64)."""
    if isinstance(indices, (list, _np.ndarray)):
        indices = from_numpy(_np.asarray(indices))
    if isinstance(indices, Tensor) and indices.dtype.kind in "iu" and indices.dtype != _np.int64:
        indices = indices.astype(_np.int64)
    return _apply("take", (a, indices), {"axis": axis})


def unique(ar, return_index=False, return_inverse=False, return_counts=False):
    """NumPy's ``unique``: the sorted distinct values, and as asked the index of each one's
    first occurrence, the inverse indices (shaped as ``ar``, as NumPy 2) and the counts.
    The values' length depends on the data: what goes on from them runs in stages."""
    if not (return_index or return_inverse):
        return _apply("unique", (ar,), {"return_counts": return_counts})
    values, indices, inverse, counts = _apply("unique_all", (ar,))
    out = [values]
    for asked, part in ((return_index, indices), (return_inverse, inverse),
                        (return_counts, counts)):
        if asked:
            out.append(part)
    return tuple(out)


_UniqueAll = _collections.namedtuple(
    "UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
_UniqueInverse = _collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])
_UniqueCounts = _collections.namedtuple("UniqueCountsResult", ["values", "counts"])


def unique_all(x, /):
    """The array API's ``unique_all``: values, first indices, inverse indices, counts."""
    return _UniqueAll(*_apply("unique_all", (x,)))


def unique_inverse(x, /):
    """The array API's ``unique_inverse``: values and inverse indices (shaped as ``x``)."""
    return _UniqueInverse(*_apply("unique_inverse", (x,)))


def unique_values(x, /) -> Tensor:
    return _apply("unique", (x,))


def unique_counts(x, /):
    """The array API's ``unique_counts``: values and counts (a named tuple)."""
    return _UniqueCounts(*_apply("unique", (x,), {"return_counts": True}))


# -- NumPy's everyday functions (issue 29; branch numpyfuncs) --------------------------------
from ._numpyfuncs import (  # noqa: E402
    bincount, block, copy, einsum, histogram, isin, median, nanargmax, nanargmin, nanmax,
    nanmean, nanmin, nanprod, nanstd, nansum, nanvar, pad, percentile, quantile, ravel,
)


def __getattr__(name: str):
    # A function the core gained after this module was imported (never its internals).
    if name not in _CORE_ONLY and "." not in name and _is_function(name):
        f = _function(name)
        globals()[name] = f
        return f
    raise AttributeError(f"module 'ares' has no attribute {name!r}")


def array_api_coverage() -> dict[str, list[str]]:
    """Which functions of the array API standard (2024.12) ares has, and which not yet."""
    from ._api_names import ARRAY_API_FUNCTIONS

    have, missing = [], []
    for name in ARRAY_API_FUNCTIONS:
        try:
            ok = callable(globals().get(name)) or _is_function(name)
        except Exception:
            ok = False
        (have if ok else missing).append(name)
    return {"have": have, "missing": missing}


del annotations  # `from __future__ import annotations` is not part of the API
