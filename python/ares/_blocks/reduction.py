"""``reduction``: the user's ``chunk``/``combine``/``aggregate`` on a tree of fan-in
``split_every`` (the engine's ``combine_size``, 4), each level a rechunk and a ``map_blocks``."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._core import _build, _meta_dtype, _normalize_axes

# Fan-in of `reduction`'s tree (the engine's `combine_size` default).
_COMBINE_SIZE = 4

def reduction(x, chunk, aggregate, axis=None, keepdims=False, dtype=None, split_every=None,
              combine=None, name=None, concatenate=True, meta=None) -> Tensor:
    """dask's ``reduction``: ``chunk(block, axis=, keepdims=True)`` on every block,
    ``combine(partials, axis=, keepdims=True)`` (default ``chunk``) on groups of
    ``split_every`` (default 4) neighbouring partials along each reduced axis, level after
    level, and ``aggregate(partials, axis=, keepdims=)`` once at the root. ``chunk`` and
    ``combine`` must keep one element along each reduced axis."""
    if not isinstance(x, Tensor):
        raise TypeError("reduction: x must be an ares Tensor")
    if not concatenate:
        raise ValueError("reduction: concatenate=False is not supported")
    ndim = x.ndim
    axes = tuple(range(ndim)) if axis is None else tuple(_normalize_axes(axis, ndim, "reduction"))
    fan_in = int(split_every or _COMBINE_SIZE)
    if fan_in < 2:
        raise ValueError(f"reduction: split_every={split_every!r} must be at least 2")
    combine = combine or chunk
    kw = {"axis": axes, "keepdims": True}
    part_dtype = _meta_dtype(chunk, (x,), kw) or x.dtype
    index = [list(range(ndim))]
    chunks = [(1,) * len(c) if a in axes else tuple(c) for a, c in enumerate(x.chunks)]
    p = _build(chunk, [x], index, chunks, part_dtype, kw, name=name)
    while any(len(p.chunks[a]) > 1 for a in axes):
        grouped = []
        for a, c in enumerate(p.chunks):
            if a in axes and len(c) > 1:
                n = len(c)
                grouped.append(tuple(min(fan_in, n - i) for i in range(0, n, fan_in)))
            else:
                grouped.append(tuple(c))
        p = p.rechunk(tuple(grouped))
        out = [(1,) * len(c) if a in axes else c for a, c in enumerate(grouped)]
        p = _build(combine, [p], index, out, part_dtype, kw, name=name)
    kw = {"axis": axes, "keepdims": keepdims}
    if meta is not None:
        dtype = np.asarray(meta).dtype
    if dtype is None:
        dtype = _meta_dtype(aggregate, (p,), kw) or part_dtype
    if keepdims:
        final_index = [list(range(ndim))]
        out = [tuple(c) for c in p.chunks]
    else:
        kept = [a for a in range(ndim) if a not in axes]
        final_index = [[kept.index(a) if a in kept else None for a in range(ndim)]]
        out = [tuple(p.chunks[a]) for a in kept]
    return _build(aggregate, [p], final_index, out, dtype, kw, name=name)
