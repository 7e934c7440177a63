"""NumPy arrays into ares, and NumPy's protocols (``__array_ufunc__``, ``__array_function__``).

``from_numpy`` writes the array to a ``.npy`` spool file that the engine's workers read chunk
by chunk, in place, with the core's ``from_npy`` source: the graph stays small (a path, not
the data), and the workers of the embedded engine read the file from the page cache. So do a
remote cluster's workers when ``ar.connect(..., upload_dir=PATH)`` names a directory they
share with this process (inside their ``data.roots``). A spool file is removed once no tensor
reads it any more, and the spool directory when the process exits.

Connected to a remote cluster without ``upload_dir``, ``from_numpy`` uploads the array
instead (``Engine.upload``: the native protocol's upload messages, or ``PUT
/api/session/{sid}/tensor/{name}`` over HTTP): the workers hold its chunks, and the tensor
reads them from there. The upload is freed once no tensor reads it any more, and on
``ar.close()``; a tensor of a closed engine's upload cannot be computed on another engine.

``np.exp(x)`` and ``np.sum(x)`` on a tensor stay lazy when ares has the function (as dask
arrays do); other NumPy functions compute their tensor arguments first, with a warning.
"""

from __future__ import annotations

import atexit
import io
import itertools
import os
import secrets
import shutil
import tempfile
import threading
import warnings

import numpy as np

from . import _ares
from ._chunks import normalize as normalize_chunks
from ._tensor import Tensor, _divmod, apply, is_function, strong

_lock = threading.Lock()
_counter = itertools.count()
_spool_dir: str | None = None


def spool_dir() -> str:
    """This process's spool directory (``ARES_SPOOL_DIR``, else the system's temp dir)."""
    global _spool_dir
    with _lock:
        if _spool_dir is None:
            base = os.environ.get("ARES_SPOOL_DIR") or None
            if base:
                os.makedirs(base, exist_ok=True)
            _spool_dir = tempfile.mkdtemp(prefix=f"ares-py-{os.getpid()}-", dir=base)
            atexit.register(shutil.rmtree, _spool_dir, True)
        return _spool_dir


class _SpoolFile:
    """A spooled array: the file is removed when the last tensor reading it is gone."""

    __slots__ = ("path", "__weakref__")

    def __init__(self, path: str):
        self.path = path

    def __del__(self):
        try:
            os.remove(self.path)
        except OSError:
            pass


class _Upload:
    """An uploaded array or a persisted result (`ar.persist`): freed on its engine when the
    last tensor reading it is gone."""

    __slots__ = ("engine", "task", "__weakref__")

    def __init__(self, engine, task: int):
        self.engine = engine
        self.task = task

    def __del__(self):
        try:
            self.engine.free_upload(self.task)
        except Exception as e:  # noqa: BLE001 - nothing can raise out of __del__
            warnings.warn(f"freeing upload task {self.task}: {e}", RuntimeWarning, stacklevel=1)


def _upload(engine, a: np.ndarray, chunks) -> Tensor:
    """Sends ``a`` to ``engine``'s cluster; the tensor reads the chunks its workers hold."""
    a = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False))
    splits = None
    if chunks is not None:
        # Every chunk length per dimension, as the core tiles ``chunks`` (dask's forms too).
        shaped = apply("zeros", (a.shape,), {"dtype": a.dtype.name, "chunk": chunks})
        splits = [list(d) for d in shaped._handle.chunks()]
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(a))
    name = f"ndarray_{secrets.token_hex(8)}"
    handle, task = engine.upload(header.getvalue(), a.reshape(-1).view(np.uint8), name, splits)
    return Tensor(handle, frozenset({_Upload(engine, task)}))


def _ares_dtype(a: np.ndarray) -> np.ndarray:
    """``a`` in a dtype ares has: its own (ares has the array API standard's thirteen), else
    the smallest of ares' that holds every value (float16 becomes float32, longer floats
    float64), as NumPy's promotion would pick among ares' dtypes."""
    supported = set(_ares.dtypes())
    if a.dtype.name in supported:
        return a
    kind, size = a.dtype.kind, a.dtype.itemsize
    if kind == "b":
        return a.astype(np.bool_)
    if kind in "iu":
        if size < 4 or (kind == "i" and size == 4):
            return a.astype(np.int32)
        if a.dtype == np.uint64 and a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError("uint64 values above 2**63 - 1 do not fit ares' int64")
        return a.astype(np.int64)
    if kind == "f":
        return a.astype(np.float32 if size < 4 else np.float64)
    raise TypeError(f"ares has no dtype for {a.dtype} (it has {', '.join(sorted(supported))})")


def from_numpy(a, chunks=None) -> Tensor:
    """A tensor holding a copy of ``a`` (any array-like), split into ``chunks``."""
    from ._engine import ensure_roots, remote_engine, upload_dir

    a = _ares_dtype(np.asarray(a, order="C"))
    chunks = normalize_chunks(chunks, a.ndim)
    if a.ndim == 0 and (a.dtype.kind == "c" or a.dtype == np.uint64):
        # The language has no complex numbers, nor integers past int64: a one-element
        # array, reshaped.
        return from_numpy(a.reshape(1)).reshape(())
    if a.ndim == 0:
        # A number needs no file.
        return apply("full", ((), a.item()), {"dtype": a.dtype.name})
    if a.size == 0:
        # Nor does an array without values (and the core's .npy source refuses them).
        return apply("zeros", (a.shape,), {"dtype": a.dtype.name, "chunk": chunks})
    remote = remote_engine()
    if remote is not None and upload_dir() is None:
        return _upload(remote, a, chunks)
    ensure_roots()
    directory = upload_dir() or spool_dir()
    path = os.path.join(directory, f"array-{next(_counter)}.npy")
    np.save(path, a, allow_pickle=False)
    keep = _SpoolFile(path)
    try:
        handle = _ares.from_npy(path, chunks)
    except Exception:
        del keep
        raise
    return Tensor(handle, frozenset({keep}))


# -- NumPy's protocols -----------------------------------------------------------------------

# ufunc.reduce → the core's reduction.
_REDUCERS = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}


def array_ufunc(ufunc, method, inputs, kwargs):
    if kwargs.get("out") is not None:
        return NotImplemented
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    name = ufunc.__name__
    if method == "__call__" and not kwargs and is_function(name):
        return apply(name, tuple(strong(v) for v in inputs))
    if method == "__call__" and not kwargs and name == "divmod" and len(inputs) == 2:
        return _divmod(*(strong(v) for v in inputs))
    if method == "reduce" and name in _REDUCERS and len(inputs) == 1:
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        if kwargs.pop("dtype", None) is not None or kwargs:
            return NotImplemented
        return apply(_REDUCERS[name], inputs, {"axis": axis, "keepdims": keepdims})
    return NotImplemented


def _materialize(value):
    if isinstance(value, Tensor):
        return value.compute()
    if isinstance(value, (list, tuple)):
        return type(value)(_materialize(v) for v in value)
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    return value


def array_function(func, types, args, kwargs):
    import ares

    name = func.__name__
    own = ares.__dict__.get(name) if not name.startswith("_") else None
    if own is None and is_function(name):
        own = getattr(ares, name)
    if callable(own) and not isinstance(own, type):
        kwargs = {k: v for k, v in kwargs.items() if not (k in ("out", "dtype") and v is None)}
        return own(*args, **kwargs)
    warnings.warn(
        f"ares has no {func.__module__}.{name}: its tensor arguments are computed and NumPy "
        "runs it",
        UserWarning,
        stacklevel=3,
    )
    return func(*_materialize(args), **_materialize(kwargs))
