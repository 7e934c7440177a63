"""``ar.from_array``: any array-like (NumPy, ``np.memmap``, h5py datasets, zarr-python
arrays, anything with ``shape``, ``dtype`` and NumPy slicing) as a tensor, without ever
holding the whole array in this process twice.

The design, the simplest that never copies an array that is already where the workers can
read it, and never builds a second whole copy in memory:

* a tensor is rechunked; an in-memory ``ndarray`` goes through ``from_numpy`` (one copy, to
  the spool file or the upload, as before);
* an ``np.memmap`` of a whole ``.npy`` file (``np.load(path, mmap_mode="r")``) that the
  engine's workers can read (the embedded engine, or a file under ``ar.connect``'s
  ``upload_dir``) is read in place by the workers with ``from_npy``: nothing is copied;
* anything else is read slab by slab along its first axis (at most ``SLAB_BYTES`` at a
  time): each slab is written into an ``.npy`` spool file mapped in memory (the workers
  then read that file chunk by chunk), or, connected to a cluster without ``upload_dir``,
  uploaded as a tensor of its own and the slabs concatenated. Only one slab is ever in
  this process's memory besides the object itself.
"""

from __future__ import annotations

import os

import numpy as np

from . import _ares
from ._chunks import normalize
from ._tensor import Tensor

# The most bytes of the source read at once.
SLAB_BYTES = 64 << 20


def from_array(a, chunks="auto") -> Tensor:
    """A tensor of the array-like ``a`` (NumPy, memmap, h5py, zarr, ... : ``shape``,
    ``dtype`` and NumPy slicing) in ``chunks`` (dask's spellings; ``"auto"`` by default, as
    dask's ``from_array``), read slab by slab; see the module's documentation."""
    import ares

    from ._numpy import _ares_dtype, from_numpy

    if isinstance(a, Tensor):
        return a.rechunk(chunks)
    if isinstance(a, np.memmap):
        direct = _npy_in_place(a, chunks)
        if direct is not None:
            return direct
    if isinstance(a, np.ndarray) or not (hasattr(a, "shape") and hasattr(a, "dtype")):
        return from_numpy(a, chunks=chunks)
    shape = tuple(int(n) for n in a.shape)
    if len(shape) == 0 or 0 in shape:
        return from_numpy(np.asarray(a[...]), chunks=chunks)
    dtype = _ares_dtype(np.empty(0, dtype=np.dtype(a.dtype))).dtype
    chunks = normalize(chunks, len(shape))
    row_bytes = max(1, int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize)
    rows = max(1, SLAB_BYTES // row_bytes)
    slabs = ((i, min(i + rows, shape[0])) for i in range(0, shape[0], rows))

    def slab(i, j):
        return _ares_dtype(np.ascontiguousarray(np.asarray(a[i:j])))

    from ._engine import remote_engine, upload_dir

    if remote_engine() is not None and upload_dir() is None:
        parts = [from_numpy(slab(i, j)) for i, j in slabs]
        whole = parts[0] if len(parts) == 1 else ares.concatenate(parts, axis=0)
        return whole.rechunk(chunks)
    return _spooled(shape, dtype, slabs, slab, chunks)


def _spooled(shape, dtype, slabs, slab, chunks) -> Tensor:
    """The slabs written one by one into an ``.npy`` spool file the workers read."""
    from ._engine import ensure_roots, upload_dir
    from ._numpy import _SpoolFile, _counter, spool_dir

    ensure_roots()
    path = os.path.join(upload_dir() or spool_dir(), f"array-{next(_counter)}.npy")
    keep = _SpoolFile(path)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=dtype.newbyteorder("<"),
                                    shape=shape)
    try:
        for i, j in slabs:
            values = slab(i, j)
            if values.dtype != dtype:
                raise ValueError(f"from_array: rows {i}:{j} are {values.dtype}, not the "
                                 f"{dtype} the array-like's dtype says")
            if values.shape != (j - i,) + shape[1:]:
                raise ValueError(f"from_array: rows {i}:{j} have shape {values.shape}, not "
                                 f"{(j - i,) + shape[1:]}")
            out[i:j] = values
        out.flush()
        del out
        return Tensor(_ares.from_npy(path, chunks), frozenset({keep}))
    except BaseException:
        del keep
        raise


def _npy_in_place(a: np.memmap, chunks) -> Tensor | None:
    """``a`` read by the workers from its own ``.npy`` file, if it maps the whole of one
    they can read; else None."""
    from ._engine import ensure_roots, remote_engine, upload_dir

    path = getattr(a, "filename", None)
    if path is None or not str(path).endswith(".npy") or not a.flags.c_contiguous:
        return None
    path = os.path.abspath(path)
    if remote_engine() is not None:
        shared = upload_dir()
        if shared is None or os.path.commonpath([shared, path]) != shared:
            return None
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)
            shape, fortran, dtype = read(f)
            header_end = f.tell()
    except (OSError, ValueError):
        return None
    if fortran or tuple(shape) != a.shape or dtype != a.dtype or a.offset != header_end:
        return None
    if dtype.name not in _ares.dtypes() or dtype.byteorder == ">":
        return None
    ensure_roots()
    try:
        return Tensor(_ares.from_npy(path, normalize(chunks, a.ndim)))
    except ValueError:
        return None  # outside the data roots: copied instead
