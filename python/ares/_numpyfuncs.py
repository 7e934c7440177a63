"""NumPy's everyday functions that the array API lacks (issue 29), lazy, composed of the core's.

The statistics (``nansum`` ... ``nanargmax``, ``median``, ``percentile``, ``quantile``) are the
core's (``ops/family/statistics``); this module gives them NumPy's Python signatures (``q`` as
a list or an array, ``out=None``, ``overwrite_input``) and raises NumPy's ``ValueError`` for an
all-NaN slice of ``nanargmin``/``nanargmax``. The rest compose the core's ops without
computing anything, except what NumPy's own answer depends on before any value is known:
``histogram`` without ``range`` (the data's minimum and maximum are the edges), ``bincount``
(its length is the largest value plus one), ``item`` and ``tolist``.

- ``histogram``, ``bincount``: counts by comparison against the bin edges, summed by the
  reduction (``bincount`` of many bins by a sort and ``searchsorted``, exact in integers).
- ``isin``: the test values sorted once, each element looked up by ``searchsorted``.
- ``einsum``: the subscripts parsed, labels only one operand holds summed away, and each pair
  of operands contracted by ``matmul`` (batch labels as its stacked dimensions), so the GEMM
  kernel does the work.
- ``pad``: NumPy's own index pattern of the mode (``np.pad`` of a range) cut into runs, each
  run a slice (or a broadcast edge), joined by ``concatenate``.
- ``block``: nested lists to concatenates, innermost along the last axis.
- integer-array indexing (``x[:, [0, 2]]``, ``x[i, j]``): basic indexing first, then ``take``
  along the one advanced axis, or of the raveled index of several broadcast together.
"""

from __future__ import annotations

import builtins
import numbers
import operator
import string

import numpy as np

from ._tensor import Tensor, apply

_bool = builtins.bool


def _tensor(x) -> Tensor:
    if isinstance(x, Tensor):
        return x
    from . import asarray

    return asarray(x)


def _reject_out(out):
    if out is not None:
        raise TypeError("ares tensors are immutable: out= is not supported")


def _to_quantiles(q):
    """``q`` as the core takes it: a Python number, or a tuple for a 1-D list or array."""
    if isinstance(q, Tensor):
        q = q.compute()
    a = np.asarray(q)
    if a.ndim > 1:
        raise ValueError("ares takes q as a number or a 1-D sequence")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"q must be real numbers, not {a.dtype}")
    if a.ndim == 0:
        return a.item() if a.dtype.kind in "iu" else float(a)
    if a.dtype.kind in "iu":
        return tuple(int(v) for v in a)
    return tuple(float(v) for v in a)


def _quantile_function(name):
    def f(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
          *, weights=None, interpolation=None):
        _reject_out(out)
        if weights is not None:
            raise ValueError(f"{name}: weights= is not supported")
        if interpolation is not None:
            method = interpolation
        return apply(name, (_tensor(a), _to_quantiles(q)),
                     {"axis": axis, "keepdims": keepdims, "method": method})

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"NumPy's ``{name}`` (method='linear'), exact: the lanes sorted and the ranks "
                 "picked (see the README); ``q`` a number or a 1-D sequence.")
    return f


percentile = _quantile_function("percentile")
quantile = _quantile_function("quantile")


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """NumPy's ``median``, exact: the middle one or two ranks of each sorted lane."""
    _reject_out(out)
    return apply("median", (_tensor(a),), {"axis": axis, "keepdims": keepdims})


def _nan_arg(name):
    def f(a, axis=None, out=None, *, keepdims=False):
        _reject_out(out)
        x = _tensor(a)
        if x.dtype.kind in "fc" and x.size:
            # NumPy raises on a slice of NaN only; the core marks it -1. Checked here, at
            # once (one reduction), so the result stays lazy and is never a wrong position.
            all_nan = apply("all", (apply("isnan", (x,)),), {"axis": axis})
            if _bool(apply("any", (all_nan,)).compute()):
                raise ValueError("All-NaN slice encountered")
        return apply(name, (x,), {"axis": axis, "keepdims": keepdims})

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}``: positions ignoring NaN; a slice of NaN only raises ValueError."
    return f


nanargmin = _nan_arg("nanargmin")
nanargmax = _nan_arg("nanargmax")


def _nan_reduction(name, ddof=False):
    if ddof:
        def f(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
            _reject_out(out)
            x = _tensor(a) if dtype is None else _tensor(a).astype(dtype)
            d = ddof if correction is None else correction
            return apply(name, (x,), {"axis": axis, "keepdims": keepdims, "ddof": int(d)})
    else:
        def f(a, axis=None, dtype=None, out=None, keepdims=False):
            _reject_out(out)
            x = _tensor(a) if dtype is None else _tensor(a).astype(dtype)
            return apply(name, (x,), {"axis": axis, "keepdims": keepdims})

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"NumPy's ``{name}``: NaN skipped (see the README's statistics)."
    return f


nansum = _nan_reduction("nansum")
nanprod = _nan_reduction("nanprod")
nanmean = _nan_reduction("nanmean")
nanvar = _nan_reduction("nanvar", ddof=True)
nanstd = _nan_reduction("nanstd", ddof=True)


def nanmin(a, axis=None, out=None, keepdims=False):
    """NumPy's ``nanmin``: NaN skipped, NaN for a slice of NaN only."""
    _reject_out(out)
    return apply("nanmin", (_tensor(a),), {"axis": axis, "keepdims": keepdims})


def nanmax(a, axis=None, out=None, keepdims=False):
    """NumPy's ``nanmax``: NaN skipped, NaN for a slice of NaN only."""
    _reject_out(out)
    return apply("nanmax", (_tensor(a),), {"axis": axis, "keepdims": keepdims})


# -- shapes ------------------------------------------------------------------------------------

def ravel(a, order="C") -> Tensor:
    """The tensor as 1-D, in C order (a reshape)."""
    if order not in ("C", "A", "K"):
        raise ValueError(f"ravel: order={order!r} is not supported (C order only)")
    x = _tensor(a)
    return x if x.ndim == 1 else x.reshape(-1)


def copy(a, order="K", subok=False) -> Tensor:
    """Another tensor of the same graph (see ``Tensor._copy``): nothing is computed, and it
    keeps its values when ``a`` is assigned into later."""
    return _tensor(a)._copy()


def _pairs(value, ndim, name, integer=True):
    """NumPy's ``_as_pairs``: one (before, after) pair per axis."""
    a = np.asarray(value)
    if integer:
        if a.dtype.kind not in "iub":
            raise TypeError(f"`{name}` must be of integral type.")
        if (a < 0).any():
            raise ValueError(f"index can't contain negative values ({name})")
    try:
        return np.broadcast_to(a, (ndim, 2)).tolist()
    except ValueError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and requested shape ({ndim},2)") from None


def _runs(idx):
    """Maximal runs of ``idx`` with one step of -1, 0 or 1: (start, length, step) each."""
    runs, i, n = [], 0, len(idx)
    while i < n:
        step = int(idx[i + 1] - idx[i]) if i + 1 < n else 1
        if step not in (-1, 0, 1):
            step = 1
        j = i + 1
        while j < n and idx[j] - idx[j - 1] == step:
            j += 1
        runs.append((int(idx[i]), j - i, step))
        i = j
    return runs


def _axis_slice(x, axis, start, stop, step=1):
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop, step)
    return x[tuple(index)]


def pad(array, pad_width, mode="constant", **kwargs) -> Tensor:
    """NumPy's ``pad`` in modes ``constant`` (``constant_values=``), ``edge``, ``reflect``,
    ``symmetric`` and ``wrap`` (``reflect_type='even'``): slices and ``concatenate``."""
    from . import concatenate, full

    x = _tensor(array)
    modes = ("constant", "edge", "reflect", "symmetric", "wrap")
    if mode not in modes:
        raise ValueError(f"pad: mode {mode!r} is not supported (ares has {', '.join(modes)})")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}}.get(mode, set())
    unknown = set(kwargs) - allowed
    if unknown:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(unknown)}")
    if kwargs.get("reflect_type", "even") != "even":
        raise ValueError("pad: only reflect_type='even' is supported")
    widths = _pairs(pad_width, x.ndim, "pad_width")
    values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values", integer=False)
    for axis, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        n = x.shape[axis]
        if mode == "constant":
            parts = []
            for width, value in ((before, values[axis][0]), (after, values[axis][1])):
                shape = list(x.shape)
                shape[axis] = width
                parts.append(full(tuple(shape), np.asarray(value).astype(x.dtype).item(),
                                  dtype=x.dtype) if width else None)
            x = concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)
            continue
        if n == 0:
            raise ValueError(f"can't extend empty axis {axis} using modes other than "
                             "'constant' or 'empty'")
        # NumPy's own positions for this mode, cut into slices.
        idx = np.pad(np.arange(n), (before, after), mode=mode)
        parts = []
        for start, length, step in _runs(idx):
            if step == 0 or length == 1:
                piece = _axis_slice(x, axis, start, start + 1)
                if length > 1:
                    shape = list(piece.shape)
                    shape[axis] = length
                    from . import broadcast_to

                    piece = broadcast_to(piece, tuple(shape))
            elif step == 1:
                piece = _axis_slice(x, axis, start, start + length)
            else:
                stop = start - length
                piece = _axis_slice(x, axis, start, stop if stop >= 0 else None, -1)
            parts.append(piece)
        x = parts[0] if len(parts) == 1 else concatenate(parts, axis=axis)
    return x


def block(arrays) -> Tensor:
    """NumPy's ``block``: nested lists joined by ``concatenate``, the innermost along the last
    axis, each operand first given at least as many dimensions as the nesting is deep."""
    from . import concatenate

    def depth_of(a, at):
        if isinstance(a, tuple):
            raise TypeError(f"arrays{at} is a tuple. Only lists can be used to arrange blocks, "
                            "and np.block does not allow implicit conversion from tuple to "
                            "ndarray.")
        if isinstance(a, list):
            if not a:
                raise ValueError(f"List at arrays{at} cannot be empty")
            depths = {depth_of(v, f"{at}[{i}]") for i, v in enumerate(a)}
            if len(depths) > 1:
                raise ValueError("List depths are mismatched.")
            return depths.pop() + 1
        return 0

    depth = depth_of(arrays, "")

    def leaves(a):
        return [t for v in a for t in leaves(v)] if isinstance(a, list) else [_tensor(a)]

    ndim = builtins.max([depth] + [t.ndim for t in leaves(arrays)])

    def build(a, level):
        if not isinstance(a, list):
            t = _tensor(a)
            return t if t.ndim == ndim else t.reshape((1,) * (ndim - t.ndim) + t.shape)
        parts = [build(v, level + 1) for v in a]
        return parts[0] if len(parts) == 1 else concatenate(parts, axis=-(depth - level))

    return build(arrays, 0)


# -- counting ------------------------------------------------------------------------------------

def _flat(x: Tensor) -> Tensor:
    return x if x.ndim == 1 else x.reshape(-1)


def _bin_counts(x: Tensor, edges: np.ndarray, weights=None) -> Tensor:
    """Per bin ``edges[i] <= x < edges[i+1]`` (the last bin closed), counted or weighted."""
    from . import from_numpy, where

    lower = from_numpy(edges[:-1])
    upper = from_numpy(edges[1:])
    last = np.zeros(len(edges) - 1, dtype=bool)
    last[-1] = True
    column = x[:, None]
    inside = (column >= lower) & ((column < upper) | ((column == upper) & from_numpy(last)))
    if weights is None:
        return inside.astype(np.int64).sum(axis=0)
    return where(inside, weights[:, None], 0).sum(axis=0)


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """NumPy's ``histogram``: ``(counts, edges)``, both tensors. ``bins`` an int (with
    ``range``, or the data's minimum and maximum, computed at once) or the edges; every bin
    half-open but the last, which holds its right edge; values outside or NaN are not
    counted."""
    from . import asarray, compute

    x = _flat(_tensor(a))
    w = None if weights is None else _flat(_tensor(weights))
    if w is not None and w.shape != x.shape:
        raise ValueError("weights should have the same shape as a.")
    if isinstance(bins, str):
        raise ValueError("histogram: bins given by name are not supported (an int or edges)")
    if range is None and np.ndim(bins) == 0:
        if x.size == 0:
            range = (0.0, 1.0)
        else:
            low, high = compute(x.min(), x.max())
            if not (np.isfinite(low) and np.isfinite(high)):
                raise ValueError(f"autodetected range of [{low}, {high}] is not finite")
            range = (low, high)
    # NumPy's edges, from its own function (the dtype and the linspace are its).
    probe = np.empty(0, dtype=x.dtype)
    edges = np.histogram_bin_edges(probe, bins=bins if np.ndim(bins) == 0 else np.asarray(bins),
                                   range=range)
    if np.ndim(bins) == 0 and range is not None and len(edges) >= 2:
        lo, hi = range
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
    counts = _bin_counts(x, edges, w)
    if density:
        widths = np.diff(edges)
        counts = counts / counts.sum() / asarray(widths)
    return counts, asarray(edges)


def bincount(x, weights=None, minlength=0):
    """NumPy's ``bincount`` of non-negative integers: the length (the largest value plus one,
    at least ``minlength``) is computed at once; the counts stay lazy."""
    from . import arange, compute, from_numpy, searchsorted, sort, where

    t = _tensor(x)
    if t.ndim != 1:
        raise ValueError("object too deep for desired array" if t.ndim > 1 else
                         "object of too small depth for desired array")
    if t.dtype.kind not in "iub":
        raise TypeError(f"Cannot cast array data from dtype('{t.dtype}') to dtype('int64') "
                        "according to the rule 'safe'")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    w = None if weights is None else _tensor(weights)
    if w is not None and w.shape != t.shape:
        raise ValueError("The weights and list don't have the same length.")
    t = t.astype(np.int64)
    if t.shape[0]:
        low, high = compute(t.min(), t.max())
        if low < 0:
            raise ValueError("'list' argument must have no negative elements")
        length = builtins.max(int(high) + 1, minlength)
    else:
        length = minlength
    if t.shape[0] == 0:
        # NumPy's answer for no values, weights or not: int64 zeros.
        from . import zeros

        return zeros((length,), dtype=np.int64)
    if w is None:
        # Exact in integers for any length: boundaries of each value in the sorted data.
        bounds = searchsorted(sort(t), arange(length + 1))
        return bounds[1:] - bounds[:-1]
    w = w.astype(np.float64)
    hits = t[:, None] == from_numpy(np.arange(length))
    return where(hits, w[:, None], 0.0).sum(axis=0)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None) -> Tensor:
    """NumPy's ``isin``: whether each element is among ``test_elements`` (a tensor, a NumPy
    array or a list), by ``searchsorted`` in the sorted test values; NaN is never in it."""
    from . import asarray, clip, from_numpy, searchsorted, sort, take, zeros

    x = _tensor(element)
    if isinstance(test_elements, Tensor):
        values = sort(_flat(test_elements))
    else:
        values = np.unique(np.asarray(test_elements).ravel())
        values = from_numpy(values) if values.size else values
    n = values.shape[0]
    if n == 0:
        found = zeros(x.shape, dtype=np.bool_)
    else:
        flat = _flat(x)
        at = clip(searchsorted(values, flat), 0, n - 1)
        found = (take(values, at) == flat).reshape(x.shape)
    return ~found if invert else found


# -- einsum ---------------------------------------------------------------------------------------

def _parse_subscripts(subscripts: str, operands):
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
        if "->" in output:
            raise ValueError("einsum(): subscript string may have one '->' only")
    else:
        inputs, output = subscripts, None
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): {len(terms)} subscript terms for {len(operands)} operands")
    # Ellipses become labels of their own (upper-case letters not in use).
    spare = [c for c in string.ascii_uppercase + string.ascii_lowercase if c not in subscripts]
    ell_ndim = 0
    for term, t in zip(terms, operands):
        if "..." in term:
            ell_ndim = builtins.max(ell_ndim, t.ndim - (len(term) - 3))
    ell = "".join(spare[:ell_ndim])
    parsed = []
    for term, t in zip(terms, operands):
        if "..." in term:
            k = t.ndim - (len(term) - 3)
            if k < 0:
                raise ValueError(f"einsum(): operand has fewer dimensions than '{term}'")
            term = term.replace("...", ell[ell_ndim - k:])
        if any(c not in string.ascii_letters for c in term):
            raise ValueError(f"einsum(): invalid subscript in '{term}'")
        if len(term) != t.ndim:
            raise ValueError(f"einsum(): operand has {t.ndim} dimensions, its subscripts "
                             f"'{term}' {len(term)}")
        parsed.append(term)
    if output is None:
        counts = {}
        for term in parsed:
            for c in term:
                counts[c] = counts.get(c, 0) + 1
        output = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    else:
        # Broadcast (ellipsis) dimensions the output does not name are summed.
        output = output.replace("...", ell)
        if len(set(output)) != len(output):
            raise ValueError(f"einsum(): output subscript '{output}' repeats a label")
        for c in output:
            if not any(c in term for term in parsed):
                raise ValueError(f"einsum(): output subscript '{c}' is not among the inputs")
    return parsed, output


def _sum_labels(t: Tensor, labels: str, drop: set) -> tuple[Tensor, str]:
    axes = tuple(i for i, c in enumerate(labels) if c in drop)
    if not axes:
        return t, labels
    return t.sum(axis=axes), "".join(c for c in labels if c not in drop)


def _arrange(t: Tensor, labels: str, order: str) -> Tensor:
    if labels == order:
        return t
    return t.transpose(tuple(labels.index(c) for c in order))


def _contract(a: Tensor, la: str, b: Tensor, lb: str, keep: set) -> tuple[Tensor, str]:
    """``a`` and ``b`` multiplied and summed over their shared labels that ``keep`` lacks, by
    ``matmul``: the shared kept labels are its batch dimensions."""
    batch = "".join(c for c in la if c in lb and c in keep)
    inner = "".join(c for c in la if c in lb and c not in keep)
    fa = "".join(c for c in la if c not in lb)
    fb = "".join(c for c in lb if c not in la)
    size = {c: a.shape[i] for i, c in enumerate(la)}
    for i, c in enumerate(lb):
        if c in size and size[c] != b.shape[i] and 1 not in (size[c], b.shape[i]):
            raise ValueError(f"einsum(): label '{c}' has sizes {size[c]} and {b.shape[i]}")
        size[c] = builtins.max(size.get(c, 1), b.shape[i])
    prod = lambda s: int(np.prod([size[c] for c in s], dtype=np.int64))  # noqa: E731
    ba = [size[c] if a.shape[la.index(c)] != 1 else 1 for c in batch]
    bb = [size[c] if b.shape[lb.index(c)] != 1 else 1 for c in batch]
    ka = [a.shape[la.index(c)] for c in inner]
    kb = [b.shape[lb.index(c)] for c in inner]
    if ka != kb:
        # A label of length 1 against a longer one: broadcast by multiplying instead.
        return _broadcast_contract(a, la, b, lb, keep)
    a2 = _arrange(a, la, batch + fa + inner)
    b2 = _arrange(b, lb, batch + inner + fb)
    sa = tuple(ba) + (prod(fa), prod(inner))
    sb = tuple(bb) + (prod(inner), prod(fb))
    if a2.shape != sa:
        a2 = a2.reshape(sa)
    if b2.shape != sb:
        b2 = b2.reshape(sb)
    r = apply("matmul", (a2, b2))
    shape = tuple(builtins.max(p, q) for p, q in zip(ba, bb)) + tuple(size[c] for c in fa + fb)
    if r.shape != shape:
        r = r.reshape(shape)
    return r, batch + fa + fb


def _broadcast_contract(a, la, b, lb, keep):
    """The general form: both operands laid out on every label (1 where they lack one),
    multiplied with broadcasting, summed over the shared labels ``keep`` lacks."""
    labels = la + "".join(c for c in lb if c not in la)

    def spread(t, own):
        t = _arrange(t, own, "".join(c for c in labels if c in own))
        shape = tuple(t.shape["".join(c for c in labels if c in own).index(c)] if c in own
                      else 1 for c in labels)
        return t if t.shape == shape else t.reshape(shape)

    drop = {c for c in labels if c in la and c in lb and c not in keep}
    return _sum_labels(spread(a, la) * spread(b, lb), labels, drop)


def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe",
           optimize=False) -> Tensor:
    """NumPy's ``einsum`` with explicit or implicit output and ``...``: labels only one
    operand holds are summed away first, then the operands are contracted pairwise, left to
    right, by ``matmul`` (shared labels kept for later are its batch dimensions)."""
    _reject_out(out)
    if not isinstance(subscripts, str):
        raise TypeError("ares' einsum takes the subscripts as a string")
    if not operands:
        raise ValueError("einsum(): no operands")
    ts = [_tensor(o) for o in operands]
    if dtype is not None:
        ts = [t.astype(dtype) for t in ts]
    terms, output = _parse_subscripts(subscripts, ts)
    for term in terms:
        if len(set(term)) != len(term):
            raise ValueError(f"einsum(): a label repeated within one operand ('{term}': a "
                             "diagonal) is not supported by ares")
    pending = list(zip(ts, terms))
    t, labels = pending.pop(0)

    def needed(rest):
        return set(output) | {c for _, term in rest for c in term}

    t, labels = _sum_labels(t, labels, set(labels) - needed(pending))
    while pending:
        b, lb = pending.pop(0)
        keep = needed(pending)
        b, lb = _sum_labels(b, lb, set(lb) - keep - set(labels))
        t, labels = _contract(t, labels, b, lb, keep)
    t, labels = _sum_labels(t, labels, set(labels) - set(output))
    return _arrange(t, labels, output)


# -- integer-array indexing -------------------------------------------------------------------

def _is_advanced(item) -> bool:
    if isinstance(item, Tensor):
        return item.dtype.kind in "iub"
    if isinstance(item, (list, np.ndarray)):
        return True
    return False


def _positions(item, n: int, axis: int):
    """An integer index array for an axis of length ``n``: NumPy arrays checked and made
    non-negative here (IndexError as NumPy), tensors lazily: negative ones wrapped, and one
    out of range made ``n``, a position the gather refuses ("out of bounds"), never another
    element."""
    from . import where

    if isinstance(item, Tensor):
        if item.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        i = item.astype(np.int64)
        return where((i < -n) | (i >= n), n, where(i < 0, i + n, i))
    a = np.asarray(item, dtype=np.int64 if isinstance(item, list) and not item else None)
    if a.dtype.kind == "b":
        raise IndexError("a boolean index beside other indices is not supported by ares")
    if a.dtype.kind not in "iu":
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    a = a.astype(np.int64)
    bad = (a < -n) | (a >= n)
    if bad.any():
        raise IndexError(f"index {a[bad].flat[0]} is out of bounds for axis {axis} with size {n}")
    return np.where(a < 0, a + n, a)


def _masked(x: Tensor, mask):
    """NumPy's ``x[mask]`` for a bool mask of ``x``'s leading shape (``k`` dimensions): the
    selected positions of those axes in C order, the other axes kept. The core selects with
    a mask of ``x``'s whole shape or of its first axis (None: the caller's core path); a 0-d
    mask is one over a new leading axis of length 1, a mask of ``1 < k < ndim`` axes one over
    those axes flattened into one. A shape that does not match is NumPy's IndexError."""
    import ares

    k = mask.ndim
    if k > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but {k} "
                         "were indexed")
    # Lengths not counted yet (None) are checked when the stage computing them runs.
    for axis, (n, m) in enumerate(zip(x.known_shape, mask.known_shape if isinstance(
            mask, Tensor) else mask.shape)):
        if n is not None and m is not None and n != m:
            raise IndexError(f"boolean index did not match indexed array along axis {axis}; "
                             f"size of axis is {n} but size of corresponding boolean axis is {m}")
    if k == 0:
        return ares.expand_dims(x, axis=0)[ares.reshape(ares.asarray(mask), (1,))]
    if k == x.ndim or k == 1:
        return None
    lead = x.shape[:k]
    rows = int(np.prod(lead))
    flat_mask = ares.reshape(ares.asarray(mask), (rows,))
    return ares.reshape(x, (rows,) + tuple(x.shape[k:]))[flat_mask]


def getitem(x: Tensor, index):
    """``x[index]`` with integer arrays (lists, NumPy arrays or int tensors) among basic
    indices; None when ``index`` has none (the caller's basic path)."""
    items = index if isinstance(index, tuple) else (index,)
    if len(items) == 1 and isinstance(items[0], (Tensor, np.ndarray)) \
            and items[0].dtype.kind == "b":
        return _masked(x, items[0])
    advanced = [k for k, it in enumerate(items) if _is_advanced(it)]
    if not advanced:
        return None
    if len(items) == 1 and isinstance(items[0], Tensor) and (
            items[0].ndim >= 1 or items[0].dtype.kind == "b"):
        # The core's own form, x[idx] or x[mask] (unwrapped from a 1-tuple).
        return x[items[0]] if isinstance(index, tuple) else None
    if len(items) == 1 and isinstance(items[0], (list, np.ndarray)) and items[0] is not None \
            and np.asarray(items[0]).dtype.kind == "b":
        return None  # a mask of x's shape: the core's x[mask]
    if any(isinstance(items[k], Tensor) and items[k].dtype.kind == "b" for k in advanced):
        raise IndexError("a boolean mask must be the only index (x[mask])")
    # Beside an array, an integer is an advanced index too (a 0-d one, broadcast with the
    # others: NumPy's rule, which decides where the indexed dimensions go).
    advanced = [k for k, it in enumerate(items) if k in advanced or (
        isinstance(it, (numbers.Integral, np.integer)) and not isinstance(it, (_bool, np.bool_)))]
    # Each item's source axis (None adds one, Ellipsis stands for the rest).
    used = builtins.sum(1 for it in items if it is not None and it is not Ellipsis)
    if used > x.ndim:
        raise IndexError(f"too many indices for array: array is {x.ndim}-dimensional, but "
                         f"{used} were indexed")
    basic, axis_of, src = [], {}, 0
    for k, it in enumerate(items):
        if it is Ellipsis:
            skip = x.ndim - used
            basic.append(Ellipsis)
            src += skip
        elif it is None:
            basic.append(None)
        elif k in advanced:
            axis_of[k] = src
            basic.append(slice(None))
            src += 1
        else:
            basic.append(it)
            src += 1
    positions = {k: _positions(items[k], x.shape[axis_of[k]], axis_of[k]) for k in advanced}
    # The axes the basic step leaves: an int removes its own, None inserts one.
    result_axis, out, src = {}, 0, 0
    for k, it in enumerate(items):
        if it is Ellipsis:
            out += x.ndim - used
        elif it is None:
            out += 1
        elif k not in advanced and isinstance(it, (numbers.Integral, np.integer)) \
                and not isinstance(it, _bool):
            pass
        else:
            if k in advanced:
                result_axis[k] = out
            out += 1
    y = x[tuple(basic)]
    if len(advanced) == 1:
        (k,) = advanced
        p = positions[k]
        ax = result_axis[k]
        if isinstance(p, np.ndarray) and p.ndim == 1:
            return apply("take", (y, p), {"axis": ax})
        from . import asarray

        p = asarray(p) if isinstance(p, np.ndarray) else p
        flat = p.reshape(-1) if p.ndim != 1 else p
        r = apply("take", (y, flat), {"axis": ax})
        return r.reshape(y.shape[:ax] + p.shape + y.shape[ax + 1:])
    # Several: broadcast together, one raveled index into their axes merged.
    axes = [result_axis[k] for k in advanced]
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    order = list(range(y.ndim))
    front = axes if not adjacent else None
    if front is not None:
        # NumPy puts the indexed dimensions first when the advanced indices are apart.
        rest = [d for d in order if d not in axes]
        y = y.transpose(tuple(axes + rest))
        axes = list(range(len(axes)))
    lengths = [y.shape[a] for a in axes]
    arrays = [positions[k] for k in advanced]
    if all(isinstance(p, np.ndarray) for p in arrays):
        shape = np.broadcast_shapes(*(p.shape for p in arrays))
        flat = np.ravel_multi_index(tuple(np.broadcast_to(p, shape) for p in arrays), lengths)
        flat = flat.reshape(-1)
    else:
        from . import asarray, broadcast_to, where

        ts = [asarray(p) for p in arrays]
        shape = np.broadcast_shapes(*(t.shape for t in ts))
        ts = [t if t.shape == shape else broadcast_to(t, shape) for t in ts]
        flat, bad = 0, None
        for t, n, stride in zip(ts, lengths, np.cumprod([1] + lengths[::-1])[-2::-1]):
            flat = flat + t * int(stride)
            out = t >= n  # `_positions` made an out-of-range position n
            bad = out if bad is None else bad | out
        # One position out of range makes the whole index one past the merged axis (the
        # gather refuses it) rather than another row's element.
        flat = where(bad, int(np.prod(lengths)), flat)
        flat = flat.reshape(-1) if flat.ndim != 1 else flat
    a0 = axes[0]
    merged = y.reshape(y.shape[:a0] + (int(np.prod(lengths)),) + y.shape[a0 + len(axes):])
    r = apply("take", (merged, flat), {"axis": a0})
    return r.reshape(merged.shape[:a0] + tuple(shape) + merged.shape[a0 + 1:])


__all__ = [
    "bincount", "block", "copy", "einsum", "getitem", "histogram", "isin", "median",
    "nanargmax", "nanargmin", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd", "nansum",
    "nanvar", "pad", "percentile", "quantile", "ravel",
]
