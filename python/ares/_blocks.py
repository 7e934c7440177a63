"""User functions on blocks: ``map_blocks``, ``blockwise``, ``map_overlap``,
``apply_gufunc`` and ``reduction``, with dask's signatures.

Each builds on one core op, ``map_blocks``: the function, wrapped with its keyword arguments
and constant arguments in a ``_BlockFunction``, travels as cloudpickle bytes held once in the
task's graph; the engine calls it on one block of each input (NumPy arrays) and checks that
the block it returns has the declared shape and dtype. Output dtypes are declared
(``dtype=``, ``meta=``) or found by calling the function on zero-size blocks, as dask's
``meta``. ``map_overlap`` adds the neighbours' halos with the engine's own slicing and
concatenation (the data moves between workers, never through the client), and
``reduction`` runs the user's ``chunk``/``combine``/``aggregate`` as a tree of fan-in 4.
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

from . import _ares
from ._tensor import Tensor, dtype_name

# Fan-in of `reduction`'s tree (the engine's `combine_size` default).
_COMBINE_SIZE = 4


class _BlockFunction:
    """What a worker calls: ``func(*args, **kwargs)`` with the blocks in the places of the
    tensors, ``block_id=`` when ``func`` takes it, the result as a NumPy array, trimmed by
    ``trim`` (``map_overlap``: per axis the depth, the block count, whether the array's
    outer edges had no halo)."""

    def __init__(self, func, slots, kwargs, pass_block_id, trim=None):
        self.func = func
        self.slots = slots  # per positional argument: None (a block) or ("const", value)
        self.kwargs = kwargs
        self.pass_block_id = pass_block_id
        self.trim = trim

    def __call__(self, block_id, *blocks):
        it = iter(blocks)
        args = [next(it) if s is None else s[1] for s in self.slots]
        kwargs = self.kwargs
        if self.pass_block_id:
            kwargs = dict(kwargs, block_id=block_id)
        out = np.asarray(self.func(*args, **kwargs))
        if self.trim is not None:
            out = _trim_block(out, block_id, self.trim)
        return out


def _trim_block(out, block_id, trim):
    index = []
    for axis, (depth, blocks, open_edges) in enumerate(trim):
        if depth == 0:
            index.append(slice(None))
            continue
        lo = 0 if open_edges and block_id[axis] == 0 else depth
        hi = 0 if open_edges and block_id[axis] == blocks - 1 else depth
        index.append(slice(lo, out.shape[axis] - hi))
    return out[tuple(index)]


def _name(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or repr(func)


def _takes_block_id(func) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return "block_id" in params


# Functions cloudpickle cannot pickle (a closure over a lock, an open file...): they run only
# in this process's embedded engine, which finds them here by the token their payload holds.
_LOCAL_ONLY: dict[bytes, tuple] = {}
_LOCAL_PREFIX = b"ares-local-function:"


def _pickle(obj) -> bytes:
    try:
        import cloudpickle
    except ImportError as e:  # pragma: no cover - cloudpickle is a dependency
        raise ImportError("ares' map_blocks needs cloudpickle (pip install cloudpickle)") from e
    try:
        return cloudpickle.dumps(obj)
    except Exception as e:  # noqa: BLE001 - any pickling failure
        import os
        import uuid

        token = _LOCAL_PREFIX + f"{os.getpid()}:{uuid.uuid4().hex}".encode()
        _LOCAL_ONLY[token] = (obj, f"{type(e).__name__}: {e}")
        return token


def _load(payload: bytes):
    """The function of a payload, on a worker (called by the native runner, once per
    function and process)."""
    if payload.startswith(_LOCAL_PREFIX):
        entry = _LOCAL_ONLY.get(payload)
        if entry is None:
            raise RuntimeError(
                "the function could not be pickled when its tensor was built, so it runs only "
                "in the engine embedded in that process, not on a cluster's workers")
        return entry[0]
    import pickle

    return pickle.loads(payload)


def _build(func, args, index, out_chunks, dtype, kwargs, trim=None, name=None):
    """The core's map_blocks over the tensors among ``args`` (``index``: for each, the
    output axis of each of its axes, or None)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    slots = [None if isinstance(a, Tensor) else ("const", a) for a in args]
    wrapped = _BlockFunction(func, slots, dict(kwargs), _takes_block_id(func), trim)
    keep = frozenset().union(*(t._keep for t in tensors)) if tensors else frozenset()
    handle = _ares.map_blocks(
        wrapped,
        name or _name(func),
        _pickle(wrapped),
        [t._handle for t in tensors],
        [list(c) for c in out_chunks],
        dtype_name(dtype),
        [list(i) for i in index],
    )
    return Tensor(handle, keep)


def _meta_dtype(func, args, kwargs, what="map_blocks"):
    """The dtype ``func`` returns for zero-size blocks of the inputs' dtypes (dask's meta),
    or None when it fails on them."""
    blocks = [
        np.empty((0,) * a.ndim, dtype=a.dtype) if isinstance(a, Tensor) else a for a in args
    ]
    kw = dict(kwargs)
    if _takes_block_id(func):
        kw["block_id"] = (0,) * max((a.ndim for a in args if isinstance(a, Tensor)), default=0)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.asarray(func(*blocks, **kw)).dtype
    except Exception:
        return None


def _normalize_axes(axes, ndim, what):
    if axes is None:
        return []
    if isinstance(axes, numbers.Integral):
        axes = [axes]
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of range for {ndim} dimensions")
        out.append(a % ndim)
    return sorted(set(out))


def _unified(tensors, index, ndim_space):
    """Rechunks tensors so inputs sharing an axis agree on its chunks (the first tensor with
    more than one block on that axis wins); returns the tensors and the chunks per axis."""
    axis_chunks: dict[int, tuple] = {}
    axis_len: dict[int, int] = {}
    for t, ind in zip(tensors, index):
        for a, o in enumerate(ind):
            if o is None:
                continue
            c = t.chunks[a]
            if t.shape[a] == 1 and o in axis_len:
                continue
            if o not in axis_chunks or (len(axis_chunks[o]) == 1 and len(c) > 1):
                if o in axis_len and axis_len[o] != t.shape[a] and axis_len[o] != 1 \
                        and t.shape[a] != 1:
                    raise ValueError(
                        f"map_blocks: inputs have lengths {axis_len[o]} and {t.shape[a]} "
                        f"on the same axis")
                axis_chunks[o] = tuple(c)
                axis_len[o] = t.shape[a]
    out = []
    for t, ind in zip(tensors, index):
        target = []
        change = False
        for a, o in enumerate(ind):
            c = tuple(t.chunks[a])
            if o is not None and t.shape[a] != 1 and t.shape[a] == axis_len.get(o) \
                    and c != axis_chunks[o]:
                c = axis_chunks[o]
                change = True
            elif o is not None and t.shape[a] != axis_len.get(o, t.shape[a]):
                raise ValueError(
                    f"map_blocks: an input of shape {t.shape} has length {t.shape[a]} on "
                    f"axis {a} where another has {axis_len[o]}")
            target.append(c)
        out.append(t.rechunk(tuple(target)) if change else t)
    return out, axis_chunks


def _out_chunks(chunks, base, what):
    """``chunks=`` as dask takes it: per axis an int (every block that long) or the block
    lengths; ``base`` gives the block counts."""
    if len(chunks) != len(base):
        raise ValueError(
            f"{what}: chunks={chunks!r} has {len(chunks)} axes; the output has {len(base)}")
    out = []
    for axis, (c, b) in enumerate(zip(chunks, base)):
        if isinstance(c, numbers.Integral):
            out.append((int(c),) * len(b))
        else:
            c = tuple(int(v) for v in c)
            if len(c) != len(b):
                raise ValueError(
                    f"{what}: chunks on axis {axis} name {len(c)} blocks; there are {len(b)}")
            out.append(c)
    return out


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
    ``out_ind`` is contracted: the function sees that axis whole (``concatenate=True``,
    the only form ares has)."""
    if len(args) % 2:
        raise ValueError("blockwise: arguments must come in (array, index) pairs")
    if concatenate is False:
        raise ValueError("blockwise: concatenate=False (lists of blocks) is not supported; "
                         "contracted axes are always concatenated")
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
    return _build(func, values, index, out_chunks, dtype, kwargs, name=name)


# -- map_overlap ------------------------------------------------------------------------------

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


# -- reduction --------------------------------------------------------------------------------

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


# -- apply_gufunc -----------------------------------------------------------------------------

class _Pick:
    """Output ``k`` of a function returning a tuple (``apply_gufunc`` with several outputs)."""

    def __init__(self, func, k):
        self.func = func
        self.k = k
        self.__qualname__ = f"{_name(func)}[{k}]"

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)[self.k]


def _parse_signature(signature):
    import re

    sig = signature.replace(" ", "")
    m = re.fullmatch(r"((?:\([\w,]*\),?)*)->((?:\([\w,]*\),?)*)", sig)
    if not m:
        raise ValueError(f"apply_gufunc: not a gufunc signature: {signature!r}")

    def groups(s):
        return [tuple(d for d in g.split(",") if d) for g in re.findall(r"\(([\w,]*)\)", s)]

    return groups(m.group(1)), groups(m.group(2))


def apply_gufunc(func, signature, *args, output_dtypes=None, output_sizes=None,
                 vectorize=None, allow_rechunk=False, meta=None, **kwargs):
    """dask's ``apply_gufunc``: ``func`` on blocks whose core dimensions (``signature``,
    e.g. ``"(i),(i)->()"``) are whole, broadcast over the loop dimensions. A core dimension
    in several chunks needs ``allow_rechunk=True``; an output core dimension no input has
    needs ``output_sizes``. ``vectorize=True`` wraps ``func`` in ``np.vectorize``. Several
    outputs (``"->(),()"``) give a tuple of tensors."""
    ins, outs = _parse_signature(signature)
    if len(args) != len(ins):
        raise ValueError(f"apply_gufunc: signature {signature!r} takes {len(ins)} inputs, "
                         f"got {len(args)}")
    if vectorize:
        func = np.vectorize(func, signature=signature)
    from ._tensor import apply as _apply_fn

    tensors = []
    for a in args:
        if not isinstance(a, Tensor):
            a = _apply_fn("asarray", (a,))
        tensors.append(a)
    sizes = dict(output_sizes or {})
    loops = []
    for t, core in zip(tensors, ins):
        if t.ndim < len(core):
            raise ValueError(f"apply_gufunc: an input of {t.ndim} dimensions for core "
                             f"dimensions {core}")
        for d, letter in zip(t.shape[t.ndim - len(core):], core):
            if sizes.get(letter, d) != d:
                raise ValueError(f"apply_gufunc: core dimension {letter!r} is {sizes[letter]} "
                                 f"and {d}")
            sizes[letter] = d
        loops.append(t.ndim - len(core))
    n_loop = max(loops, default=0)
    fixed = []
    for t, core, nl in zip(tensors, ins, loops):
        chunks = list(t.chunks)
        for a in range(nl, t.ndim):
            if len(chunks[a]) > 1:
                if not allow_rechunk:
                    raise ValueError(
                        f"apply_gufunc: core dimension {core[a - nl]!r} is in "
                        f"{len(chunks[a])} chunks; rechunk it to one or pass "
                        f"allow_rechunk=True")
                chunks[a] = (t.shape[a],)
        fixed.append(t.rechunk(tuple(chunks)) if chunks != list(t.chunks) else t)
    if output_dtypes is not None and not isinstance(output_dtypes, (list, tuple)):
        output_dtypes = [output_dtypes]
    results = []
    for k, out_core in enumerate(outs):
        out_axes = {letter: n_loop + i for i, letter in enumerate(out_core)}
        index = []
        for t, core, nl in zip(fixed, ins, loops):
            ind = [n_loop - nl + a for a in range(nl)]
            ind += [out_axes.get(letter) for letter in core]
            index.append(ind)
        tensors_u, loop_chunks = _unified(fixed, index, n_loop + len(out_core))
        out_chunks = [loop_chunks.get(a, (1,)) for a in range(n_loop)]
        for letter in out_core:
            if letter not in sizes:
                raise ValueError(f"apply_gufunc: the size of output core dimension "
                                 f"{letter!r} is unknown: pass output_sizes={{{letter!r}: n}}")
            out_chunks.append((sizes[letter],))
        f = func if len(outs) == 1 else _Pick(func, k)
        if output_dtypes is not None:
            dtype = output_dtypes[k]
        elif meta is not None:
            dtype = np.asarray(meta if len(outs) == 1 else meta[k]).dtype
        else:
            dtype = _meta_dtype(f, tensors_u, kwargs) or tensors_u[0].dtype
        results.append(_build(f, tensors_u, index, out_chunks, dtype, kwargs))
    return results[0] if len(outs) == 1 else tuple(results)
