"""``apply_gufunc``: a NumPy generalized-ufunc signature over ``map_blocks``: core dimensions
whole, loop dimensions broadcast, one ``map_blocks`` per output."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from ._core import _build, _meta_dtype, _name, _unified

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
    from .._tensor import apply as _apply_fn

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
