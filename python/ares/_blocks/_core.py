"""The one core op under every user-function API: ``_build`` makes a ``map_blocks`` tensor
of a function wrapped in a ``_BlockFunction`` (its keywords, constant arguments,
``block_id``, dask's ``block_info``, ``blockwise``'s lists of blocks and ``map_overlap``'s
trimming), pickled with cloudpickle; ``_load`` is what a worker calls
to get it back; ``_meta_dtype`` finds an output dtype on zero-size blocks (dask's ``meta``);
``_unified`` aligns the inputs' chunks."""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

from .. import _ares
from .._tensor import Tensor, dtype_name

class _BlockFunction:
    """What a worker calls: ``func(*args, **kwargs)`` with the blocks in the places of the
    tensors, ``block_id=`` and ``block_info=`` when ``func`` takes them, the result as a
    NumPy array, trimmed by ``trim`` (``map_overlap``: per axis the depth, the block count,
    whether the array's outer edges had no halo). ``layout`` (from ``_Layout``) knows the
    chunks: it answers ``block_info`` and splits a block made whole along a contracted axis
    back into the list of its blocks (``blockwise(concatenate=False)``)."""

    def __init__(self, func, slots, kwargs, pass_block_id, trim=None, layout=None,
                 pass_block_info=False, split=False):
        self.func = func
        self.slots = slots  # per positional argument: None (a block) or ("const", value)
        self.kwargs = kwargs
        self.pass_block_id = pass_block_id
        self.trim = trim
        self.layout = layout
        self.pass_block_info = pass_block_info
        self.split = split

    def __call__(self, block_id, *blocks):
        if self.split:
            blocks = [self.layout.split(i, b) for i, b in enumerate(blocks)]
        it = iter(blocks)
        args = [next(it) if s is None else s[1] for s in self.slots]
        kwargs = self.kwargs
        if self.pass_block_id or self.pass_block_info:
            kwargs = dict(kwargs)
            if self.pass_block_id:
                kwargs["block_id"] = block_id
            if self.pass_block_info:
                kwargs["block_info"] = self.layout.block_info(block_id)
        out = np.asarray(self.func(*args, **kwargs))
        if self.trim is not None:
            out = _trim_block(out, block_id, self.trim)
        return out


class _Layout:
    """The chunks of a call's inputs and output, for what a function may ask of its block:
    dask's ``block_info`` (per input, keyed by its position among the arguments, and ``None``
    for the output: the array's shape, its block counts, the block's location and its
    extent in the array) and the blocks of an axis the call contracts."""

    def __init__(self, positions, in_chunks, index, out_chunks, dtype):
        self.positions = positions  # the argument position of each tensor input
        self.in_chunks = in_chunks  # per input, per axis: its block lengths
        self.index = index  # per input, per axis: the output axis it follows, or None
        self.out_chunks = out_chunks
        self.dtype = np.dtype(dtype)

    @staticmethod
    def _extent(chunks, k):
        start = sum(chunks[:k])
        return (start, start + chunks[k])

    def block_info(self, block_id):
        info = {}
        for pos, chunks, ind in zip(self.positions, self.in_chunks, self.index):
            where = tuple(
                block_id[o] if o is not None and len(c) > 1 else 0 for c, o in zip(chunks, ind))
            info[pos] = {
                "shape": tuple(sum(c) for c in chunks),
                "num-chunks": tuple(len(c) for c in chunks),
                "chunk-location": where,
                "array-location": [self._extent(c, k) if o is not None else (0, sum(c))
                                   for c, k, o in zip(chunks, where, ind)],
            }
        out = self.out_chunks
        info[None] = {
            "shape": tuple(sum(c) for c in out),
            "num-chunks": tuple(len(c) for c in out),
            "chunk-location": tuple(block_id),
            "array-location": [self._extent(c, k) for c, k in zip(out, block_id)],
            "chunk-shape": tuple(c[k] for c, k in zip(out, block_id)),
            "dtype": self.dtype,
        }
        return info

    def split(self, i, block):
        """Input ``i``'s block as nested lists of its blocks along each contracted axis
        (views, no copy), outermost axis first, as dask's ``concatenate=False``."""
        cuts = [(a, np.cumsum(c)[:-1]) for a, (c, o) in
                enumerate(zip(self.in_chunks[i], self.index[i])) if o is None]

        def nest(b, rest):
            if not rest:
                return b
            (axis, at), more = rest[0], rest[1:]
            return [nest(p, more) for p in np.split(b, at, axis=axis)]

        return nest(block, cuts)


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


def _takes(func, keyword: str) -> bool:
    """Whether ``func`` names ``keyword`` among its parameters (as dask asks before passing
    ``block_id`` or ``block_info``)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return keyword in params


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


def _build(func, args, index, out_chunks, dtype, kwargs, trim=None, name=None,
           concatenate=True):
    """The core's map_blocks over the tensors among ``args`` (``index``: for each, the
    output axis of each of its axes, or None: a contracted axis, which the function sees
    whole, or as the list of its blocks when not ``concatenate``)."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    slots = [None if isinstance(a, Tensor) else ("const", a) for a in args]
    positions = [p for p, a in enumerate(args) if isinstance(a, Tensor)]
    layout = _Layout(positions, [[tuple(c) for c in t.chunks] for t in tensors],
                     [list(i) for i in index], [tuple(c) for c in out_chunks], dtype)
    split = not concatenate and any(o is None for ind in index for o in ind)
    wrapped = _BlockFunction(func, slots, dict(kwargs), _takes(func, "block_id"), trim,
                             layout, _takes(func, "block_info"), split)
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
    if _takes(func, "block_id"):
        kw["block_id"] = (0,) * max((a.ndim for a in args if isinstance(a, Tensor)), default=0)
    if _takes(func, "block_info"):
        kw["block_info"] = None  # as dask's meta call: there is no block
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
