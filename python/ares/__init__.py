"""ares: lazy n-dimensional tensors with a NumPy-like API, computed by the ares engine.

    import ares as ar
    a = ar.random.rand(10**8, chunks=10**6, seed=1)
    b = ar.random.rand(10**8, chunks=10**6, seed=2)
    (a + b).sum().compute()          # an embedded engine starts in this process

Every function of the core's expression language is available under its NumPy name, as a
function (``ar.cumsum(x, axis=0)``) and as a method (``x.cumsum(axis=0)``); the core checks
the arguments, with NumPy 2's promotion rules (NEP 50). Names and signatures follow the Python
array API standard (2023.12) where ares has the function. Errors building a tensor raise
``ValueError``; a failed task raises ``ar.TaskError``; Ctrl-C cancels the running task.
"""

from __future__ import annotations

import builtins as _builtins
import math as _math

import numpy as _np

from . import _ares, random
from ._ares import TaskError
from ._engine import close, compute, connect, set_progress, start
from ._engine import engine as _current_engine
from ._engine import explain
from ._numpy import from_numpy
from ._tensor import Tensor, apply as _apply, dtype_name as _dtype_name, is_function as _is_function

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


# Functions passed straight to the core under their NumPy names (the core checks every
# argument). Those the core does not have (yet) are left out; `__getattr__` below finds any
# function the core adds later.
_NUMPY_NAMES = """
    negative abs absolute sqrt exp log sin cos tan isnan isinf isfinite sign floor ceil
    add subtract multiply divide true_divide power maximum minimum equal not_equal less
    less_equal greater greater_equal logical_and logical_or logical_xor logical_not
    where clip cumsum cumprod argmin argmax all any
    matmul dot tensordot inner concatenate stack split squeeze expand_dims broadcast_to
    rechunk argsort searchsorted take to_npy to_zarr
""".split()
for _name in _NUMPY_NAMES:
    if _is_function(_name):
        globals()[_name] = _function(_name)


def _reduction(name):
    # `axis` may also come by position, as NumPy's `np.sum(x, 0)` passes it on.
    def f(x, /, axis=None, *, keepdims=False):
        return _apply(name, (x,), {"axis": axis, "keepdims": keepdims})

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{name} over ``axis`` (an int, a tuple, or None for all axes)."
    return f


sum = _reduction("sum")  # noqa: A001
prod = _reduction("prod")
min = _reduction("min")  # noqa: A001
max = _reduction("max")  # noqa: A001
mean = _reduction("mean")
amin = _reduction("min")
amax = _reduction("max")


def var(x, /, axis=None, *, correction=0, keepdims=False, ddof=None):
    """Variance, in float64, with ``correction`` (the array API's) or ``ddof`` (NumPy's)."""
    return x.var(axis=axis, keepdims=keepdims, ddof=ddof if ddof is not None else correction)


def std(x, /, axis=None, *, correction=0, keepdims=False, ddof=None):
    """Standard deviation, in float64 (see ``var``)."""
    return x.std(axis=axis, keepdims=keepdims, ddof=ddof if ddof is not None else correction)


# -- creation ----------------------------------------------------------------------------

def _create(name, shape, dtype, chunks, *extra):
    kwargs = {"chunk": chunks}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return _apply(name, (shape,) + extra, kwargs)


def ones(shape, *, dtype=None, chunks=None, device=None) -> Tensor:
    return _create("ones", shape, dtype, chunks)


def zeros(shape, *, dtype=None, chunks=None, device=None) -> Tensor:
    return _create("zeros", shape, dtype, chunks)


def empty(shape, *, dtype=None, chunks=None, device=None) -> Tensor:
    """Zeros: an ares tensor is never uninitialized."""
    return _create("zeros", shape, dtype, chunks)


def full(shape, fill_value, *, dtype=None, chunks=None, device=None) -> Tensor:
    return _create("full", shape, dtype, chunks, fill_value)


def ones_like(x, /, *, dtype=None, chunks=None, device=None) -> Tensor:
    return ones(x.shape, dtype=dtype or x.dtype, chunks=chunks)


def zeros_like(x, /, *, dtype=None, chunks=None, device=None) -> Tensor:
    return zeros(x.shape, dtype=dtype or x.dtype, chunks=chunks)


def empty_like(x, /, *, dtype=None, chunks=None, device=None) -> Tensor:
    return zeros(x.shape, dtype=dtype or x.dtype, chunks=chunks)


def full_like(x, /, fill_value, *, dtype=None, chunks=None, device=None) -> Tensor:
    return full(x.shape, fill_value, dtype=dtype or x.dtype, chunks=chunks)


def arange(start, /, stop=None, step=None, *, dtype=None, chunks=None, device=None) -> Tensor:
    args = (start,) if stop is None else (start, stop) if step is None else (start, stop, step)
    t = _apply("arange", args, {"chunk": chunks})
    return t if dtype is None or _dtype_name(dtype) == t.dtype.name else t.astype(dtype)


def linspace(start, stop, /, num=50, *, endpoint=True, dtype=None, chunks=None, device=None) -> Tensor:
    t = _apply("linspace", (start, stop, num), {"endpoint": endpoint, "chunk": chunks})
    return t if dtype is None or _dtype_name(dtype) == t.dtype.name else t.astype(dtype)


def asarray(obj, /, *, dtype=None, chunks=None, device=None, copy=None) -> Tensor:
    """A tensor from a tensor (as is), a NumPy array, a nested sequence or a scalar."""
    if isinstance(obj, Tensor):
        return obj if dtype is None else obj.astype(dtype)
    array = _np.asarray(obj, dtype=None if dtype is None else _dtype_name(dtype))
    return from_numpy(array, chunks=chunks)


def from_npy(path, chunks=None) -> Tensor:
    """A ``.npy`` file under the data roots, read chunk by chunk by the workers."""
    from ._engine import ensure_roots

    ensure_roots()
    return Tensor(_ares.from_npy(str(path), chunks))


def from_zarr(path, chunks=None) -> Tensor:
    """A Zarr array (v3 or v2) under the data roots, read chunk by chunk by the workers."""
    from ._engine import ensure_roots

    ensure_roots()
    return _apply("from_zarr", (str(path),), {"chunk": chunks})


# -- the array API's names for NumPy's -----------------------------------------------------

def astype(x, dtype, /, *, copy=True, device=None) -> Tensor:
    return x.astype(dtype)


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
    return _np.finfo(_dtype_of(type))


def iinfo(type, /):
    return _np.iinfo(_dtype_of(type))


def isdtype(dtype, kind) -> _builtins.bool:
    return _builtins.bool(_np.isdtype(_np.dtype(dtype), kind))


def reshape(x, /, shape, *, copy=None) -> Tensor:
    return x.reshape(shape)


def transpose(x, axes=None) -> Tensor:
    return _apply("transpose", (x,) if axes is None else (x, tuple(axes)))


def permute_dims(x, /, axes) -> Tensor:
    return _apply("transpose", (x, tuple(axes)))


def matrix_transpose(x, /) -> Tensor:
    return x.mT


def concat(arrays, /, *, axis=0) -> Tensor:
    return _apply("concatenate", (tuple(arrays),), {"axis": axis})


def pow(x1, x2, /) -> Tensor:  # noqa: A001
    return _apply("power", (x1, x2))


def sort(x, /, *, axis=-1, descending=False, stable=True) -> Tensor:
    if descending:
        raise ValueError("sort: descending=True is not supported yet")
    return _apply("sort", (x,), {"axis": axis})


def unique(ar, return_counts=False):
    """NumPy's ``unique``: the sorted distinct values (and their counts)."""
    return _apply("unique", (ar,), {"return_counts": return_counts})


def unique_values(x, /) -> Tensor:
    return _apply("unique", (x,))


def unique_counts(x, /):
    return _apply("unique", (x,), {"return_counts": True})


def __getattr__(name: str):
    # A function the core has but this module does not name (yet), e.g. one added to the
    # expression language after this file was written.
    if _is_function(name):
        f = _function(name)
        globals()[name] = f
        return f
    raise AttributeError(f"module 'ares' has no attribute {name!r}")


def array_api_coverage() -> dict[str, list[str]]:
    """Which functions of the array API standard (2023.12) ares has, and which not yet."""
    from ._api_names import ARRAY_API_FUNCTIONS

    have, missing = [], []
    for name in ARRAY_API_FUNCTIONS:
        try:
            ok = callable(globals().get(name)) or _is_function(name)
        except Exception:
            ok = False
        (have if ok else missing).append(name)
    return {"have": have, "missing": missing}
