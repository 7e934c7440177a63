"""``map_overlap``: each block extended by its neighbours' halos, which the engine slices and
concatenates (between workers, never through the client), the array's ends padded as
``boundary`` says; the function's result trimmed back in the worker."""

from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor
from ._core import _build, _meta_dtype

_BOUNDARIES = ("reflect", "periodic", "nearest", "none")


def _per_axis(value, ndim, default, what):
    if isinstance(value, dict):
        out = [default] * ndim
        for a, v in value.items():
            if not -ndim <= a < ndim:
                raise ValueError(f"map_overlap: {what} names axis {a} of {ndim}")
            out[a % ndim] = v
        return out
    if isinstance(value, (tuple, list)):
        if len(value) != ndim:
            raise ValueError(f"map_overlap: {what}={value!r} has {len(value)} entries for "
                             f"{ndim} axes")
        return list(value)
    return [default if value is None else value] * ndim


def _at(axis, ndim, s):
    return tuple(s if a == axis else slice(None) for a in range(ndim))


def _pad(x, axis, depth, boundary):
    """``x`` with ``depth`` elements added on both ends of ``axis``, as ``np.pad`` with
    dask's boundary names (``reflect`` is NumPy's ``symmetric``, ``periodic`` its ``wrap``,
    ``nearest`` its ``edge``, a number its ``constant``)."""
    import ares

    n = x.shape[axis]
    nd = x.ndim
    if boundary in ("reflect", "periodic") and depth > n:
        raise ValueError(f"map_overlap: depth {depth} exceeds the length {n} of axis {axis} "
                         f"with boundary {boundary!r}")
    flip = _at(axis, nd, slice(None, None, -1))
    if boundary == "reflect":
        left = x[_at(axis, nd, slice(0, depth))][flip]
        right = x[_at(axis, nd, slice(n - depth, n))][flip]
    elif boundary == "periodic":
        left = x[_at(axis, nd, slice(n - depth, n))]
        right = x[_at(axis, nd, slice(0, depth))]
    elif boundary == "nearest":
        if n == 0:
            raise ValueError(f"map_overlap: boundary 'nearest' on the empty axis {axis}")
        shape = list(x.shape)
        shape[axis] = depth
        left = ares.broadcast_to(x[_at(axis, nd, slice(0, 1))], tuple(shape))
        right = ares.broadcast_to(x[_at(axis, nd, slice(n - 1, n))], tuple(shape))
    elif isinstance(boundary, numbers.Number) and not isinstance(boundary, bool):
        shape = list(x.shape)
        shape[axis] = depth
        left = right = ares.full(tuple(shape), boundary, dtype=x.dtype)
    else:
        raise ValueError(f"map_overlap: boundary {boundary!r} is none of {_BOUNDARIES} or a "
                         f"number")
    return ares.concatenate([left, x, right], axis=axis)


def _overlap_axis(x, axis, depth, boundary):
    """``x`` whose blocks along ``axis`` are extended by ``depth`` elements of their
    neighbours (or of the boundary's padding): sliced and concatenated by the engine."""
    import ares

    chunks = x.chunks[axis]
    n = x.shape[axis]
    nd = x.ndim
    starts = np.cumsum((0,) + tuple(chunks))[:-1]
    if boundary == "none":
        bounds = [(max(s - depth, 0), min(s + c + depth, n)) for s, c in zip(starts, chunks)]
        source = x
    else:
        bounds = [(s, s + c + 2 * depth) for s, c in zip(starts, chunks)]
        source = _pad(x, axis, depth, boundary)
    pieces = [source[_at(axis, nd, slice(int(lo), int(hi)))] for lo, hi in bounds]
    ext = pieces[0] if len(pieces) == 1 else ares.concatenate(pieces, axis=axis)
    new = tuple(int(hi - lo) for lo, hi in bounds)
    target = tuple(new if a == axis else tuple(c) for a, c in enumerate(x.chunks))
    return ext.rechunk(target)


def map_overlap(func, *args, depth=None, boundary=None, trim=True, dtype=None, meta=None,
                name=None, **kwargs) -> Tensor:
    """dask's ``map_overlap``: ``func`` on each block extended by ``depth`` elements of its
    neighbours on each side (an int, or per axis as a tuple or dict), the array's ends
    padded as ``boundary`` says (``'reflect'``, ``'periodic'``, ``'nearest'``, a constant,
    or ``'none'``: edge blocks get no halo there; per axis as ``depth``). With ``trim``
    (the default) the halo is cut from each result block, which must keep its block's
    shape; without, the result has the extended blocks."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    if len(tensors) != 1:
        raise ValueError("map_overlap: takes one ares Tensor (other arguments are passed on "
                         "as they are)")
    x = tensors[0]
    depths = [int(d) for d in _per_axis(depth if depth is not None else 0, x.ndim, 0, "depth")]
    if any(d < 0 for d in depths):
        raise ValueError(f"map_overlap: depth {depth!r} is negative")
    bounds = _per_axis(boundary, x.ndim, "none", "boundary")
    bounds = ["none" if b is None else b for b in bounds]
    for b in bounds:
        if not (b in _BOUNDARIES or (isinstance(b, numbers.Number) and not isinstance(b, bool))):
            raise ValueError(f"map_overlap: boundary {b!r} is none of {_BOUNDARIES} or a number")
    original = tuple(tuple(c) for c in x.chunks)
    ext = x
    for axis, (d, b) in enumerate(zip(depths, bounds)):
        if d:
            ext = _overlap_axis(ext, axis, d, b)
    if meta is not None:
        dtype = np.asarray(meta).dtype
    if dtype is None:
        dtype = _meta_dtype(func, args, kwargs) or x.dtype
    trim_spec = None
    out_chunks = ext.chunks
    if trim:
        trim_spec = tuple((d, len(c), b == "none") for d, c, b in zip(depths, original, bounds))
        out_chunks = original
    values = [ext if isinstance(a, Tensor) else a for a in args]
    index = [list(range(x.ndim))]
    return _build(func, values, index, out_chunks, dtype, kwargs, trim=trim_spec,
                  name=name)
