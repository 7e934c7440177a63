"""dask's ``chunks=`` spellings that the core's argument syntax cannot carry, made into ones
it can, in one place for every function taking chunks.

The core resolves every other spelling itself (``ares_core::ops::chunk_auto``), so the CLI
and HTTP accept them too: a length, ``-1`` or ``None`` for a whole axis, ``"auto"``, byte
sizes (``"100 MiB"``), every chunk length of an axis (``((2, 3, 5), 4)``). What is left for
Python: dicts (``{0: -1, 1: 100}``; an axis a dict leaves out is taken whole, as dask's
``normalize_chunks`` does), lists, and ``rechunk``'s own rule that an axis left out or
given as ``None`` keeps its current chunks (dask's ``rechunk``).
"""

from __future__ import annotations

import numbers


def _axis(key, ndim: int) -> int:
    if not isinstance(key, numbers.Integral) or isinstance(key, bool):
        raise TypeError(f"chunks: a dict's keys are axes (integers), not {key!r}")
    axis = int(key)
    if not -ndim <= axis < ndim:
        raise ValueError(f"chunks: axis {axis} is out of bounds for a tensor of {ndim} "
                         "dimensions")
    return axis % ndim


def normalize(chunks, ndim: int, previous=None):
    """``chunks`` as the core takes it, for a tensor of ``ndim`` dimensions; with
    ``previous`` (a function giving the tensor's chunks, for ``rechunk``: asked only when
    needed), an axis a dict leaves out or a tuple gives as ``None`` keeps them."""
    if isinstance(chunks, list):
        chunks = tuple(normalize(c, ndim) if isinstance(c, list) else c for c in chunks)
    if isinstance(chunks, dict):
        given = {}
        for key, value in chunks.items():
            axis = _axis(key, ndim)
            if axis in given:
                raise ValueError(f"chunks: axis {axis} is given twice")
            given[axis] = tuple(value) if isinstance(value, list) else value
        keep = previous is not None
        chunks = tuple(given.get(a, None if keep else -1) for a in range(ndim))
    if previous is not None and isinstance(chunks, tuple) and len(chunks) == ndim \
            and any(c is None for c in chunks):
        chunks = tuple(tuple(p) if c is None else c for c, p in zip(chunks, previous()))
    return chunks


def ndim_of(shape) -> int:
    """The dimensions of a shape given as NumPy takes it (an int or a sequence)."""
    return 1 if isinstance(shape, numbers.Integral) else len(tuple(shape))
