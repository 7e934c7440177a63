"""``map_blocks`` and ``blockwise``: dask's signatures over the core's ``map_blocks`` op."""

from __future__ import annotations

import numbers

import numpy as np

from .._tensor import Tensor
from ._core import _build, _meta_dtype, _normalize_axes, _out_chunks, _unified

def map_blocks(func, *args, dtype=None, chunks=None, drop_axis=None, new_axis=None, meta=None,
               name=None, **kwargs) -> Tensor:
    """dask's ``map_blocks``: ``func`` applied to each block of the tensors in ``args``
    (blocks in the same position; inputs are aligned on their last axes and broadcast where
    they have one block). ``dtype``/``meta`` declare the result's dtype (else ``func`` is
    called on zero-size blocks to find it); ``chunks`` the output blocks' lengths when
    ``func`` changes them; ``drop_axis`` axes ``func`` removes (the inputs are made one
    block along them), ``new_axis`` axes it adds. ``func`` receives ``block_id=`` (the
    block's index) when it takes that keyword; other keywords are passed on."""
    if not callable(func):
        raise TypeError(f"map_blocks: the first argument must be callable, not {type(func).__name__}")
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not tensors:
        raise ValueError("map_blocks: at least one argument must be an ares Tensor")
    ndim = max(t.ndim for t in tensors)
    index = [[ndim - t.ndim + a for a in range(t.ndim)] for t in tensors]
    tensors, axis_chunks = _unified(tensors, index, ndim)
    drop = _normalize_axes(drop_axis, ndim, "map_blocks") if drop_axis is not None else []
    kept = [a for a in range(ndim) if a not in drop]
    renumber = {a: i for i, a in enumerate(kept)}
    index = [[renumber.get(o) for o in ind] for ind in index]
    base = [axis_chunks.get(a, (1,)) for a in kept]
    if new_axis is not None:
        out_ndim = len(kept) + len([new_axis] if isinstance(new_axis, numbers.Integral)
                                   else list(new_axis))
        new = _normalize_axes(new_axis, out_ndim, "map_blocks")
        old_positions = [a for a in range(out_ndim) if a not in new]
        shift = dict(zip(range(len(kept)), old_positions))
        index = [[shift.get(o) if o is not None else None for o in ind] for ind in index]
        full = [(1,)] * out_ndim
        for old, pos in shift.items():
            full[pos] = base[old]
        base = full
    out_chunks = base if chunks is None else _out_chunks(tuple(chunks), base, "map_blocks")
    if meta is not None:
        dtype = np.asarray(meta).dtype
    if dtype is None:
        dtype = _meta_dtype(func, args, kwargs)
        if dtype is None:
            dtype = tensors[0].dtype
    it = iter(tensors)
    args = [next(it) if isinstance(a, Tensor) else a for a in args]
    return _build(func, args, index, out_chunks, dtype, kwargs, name=name)


def blockwise(func, out_ind, *args, dtype=None, concatenate=None, new_axes=None, meta=None,
              name=None, **kwargs) -> Tensor:
    """dask's ``blockwise``: ``args`` alternate arrays and their index strings (or tuples;
    ``None`` for a constant); the output has the axes ``out_ind``. An index that is not in
    ``out_ind`` is contracted: the function sees that axis whole with ``concatenate=True``,
    or (dask's default) the list of its blocks along it, nested outermost axis first."""
    if len(args) % 2:
        raise ValueError("blockwise: arguments must come in (array, index) pairs")
    out_ind = tuple(out_ind)
    pairs = [(args[i], args[i + 1]) for i in range(0, len(args), 2)]
    values, tensors, index = [], [], []
    for value, ind in pairs:
        if ind is None or not isinstance(value, Tensor):
            if isinstance(value, Tensor):
                raise ValueError("blockwise: a tensor needs an index")
            values.append(value)
            continue
        ind = tuple(ind)
        if len(ind) != value.ndim:
            raise ValueError(f"blockwise: index {ind!r} for a {value.ndim}-d tensor")
        tensors.append(value)
        index.append([out_ind.index(i) if i in out_ind else None for i in ind])
        values.append(value)
    if not concatenate:
        tensors = _contracted_unified(tensors, [tuple(p[1]) for p in pairs
                                                if isinstance(p[0], Tensor)], out_ind)
    tensors, axis_chunks = _unified(tensors, index, len(out_ind))
    new_axes = dict(new_axes or {})
    out_chunks = []
    for o, letter in enumerate(out_ind):
        if o in axis_chunks:
            out_chunks.append(axis_chunks[o])
        elif letter in new_axes:
            n = new_axes[letter]
            out_chunks.append((n,) if isinstance(n, numbers.Integral) else tuple(n))
        else:
            raise ValueError(f"blockwise: output index {letter!r} is in no input and not in "
                             f"new_axes")
    if meta is not None:
        dtype = np.asarray(meta).dtype
    if dtype is None:
        dtype = _meta_dtype(func, values, kwargs) or tensors[0].dtype
    it = iter(tensors)
    values = [next(it) if isinstance(v, Tensor) else v for v in values]
    return _build(func, values, index, out_chunks, dtype, kwargs, name=name,
                  concatenate=bool(concatenate))


def _contracted_unified(tensors, inds, out_ind):
    """Rechunks the inputs sharing a contracted index to the same blocks along it (the
    first input with more than one block there wins), so the lists of blocks the function
    receives pair up, as dask's ``unify_chunks`` does."""
    want: dict = {}
    for t, ind in zip(tensors, inds):
        for a, letter in enumerate(ind):
            if letter in out_ind:
                continue
            have = want.get(letter)
            if have is not None and sum(have) != t.shape[a]:
                raise ValueError(f"blockwise: index {letter!r} has lengths {sum(have)} and "
                                 f"{t.shape[a]}")
            if have is None or (len(have) == 1 and len(t.chunks[a]) > 1):
                want[letter] = tuple(t.chunks[a])
    out = []
    for t, ind in zip(tensors, inds):
        target = tuple(want.get(letter, tuple(c)) if letter not in out_ind else tuple(c)
                       for letter, c in zip(ind, t.chunks))
        out.append(t if target == tuple(tuple(c) for c in t.chunks) else t.rechunk(target))
    return out
