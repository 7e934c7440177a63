"""Cases of test_api_differential.py for the array API's rearranging, constructing and counting
functions (branch apifuncs): ``flip roll moveaxis tile repeat unstack broadcast_arrays diff
take_along_axis eye tril triu meshgrid cumulative_prod count_nonzero from_dlpack``, each
against NumPy 2's function of the same name. ``api_cases.py`` merges ``REARRANGE_CASES``
into ``CASES``; the strategies here reuse its tensors, Python numbers and chunkings."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from api_cases import (DTYPES, INTS, Call, Case, T, _ar, _np, _unchunked, axis_form, products,
                       tensor)
from helpers import chunks_for


def _axis_or_tuple(draw, ndim, allow_none=True):
    forms = ["int", "neg", "tuple", "out_of_range"] + (["none", "omitted"] if allow_none else [])
    form = draw(st.sampled_from(forms))
    if form == "omitted":
        return {}
    if form == "none":
        return {"axis": None}
    if form == "out_of_range":
        return {"axis": draw(st.sampled_from([ndim, -ndim - 1]))}
    if not ndim:
        return {"axis": 0}
    if form == "int":
        return {"axis": draw(st.integers(0, ndim - 1))}
    if form == "neg":
        return {"axis": draw(st.integers(-ndim, -1))}
    axes = draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim))
    return {"axis": tuple(axes)}


@st.composite
def flip_args(draw):
    x = draw(tensor())
    return Call((x,), _axis_or_tuple(draw, x.a.ndim))


@st.composite
def roll_args(draw):
    x = draw(tensor(max_side=4))
    nd = x.a.ndim
    kw = _axis_or_tuple(draw, nd)
    axis = kw.get("axis")
    if isinstance(axis, tuple) and draw(st.booleans()):
        shift = tuple(draw(st.lists(st.integers(-7, 7), min_size=len(axis), max_size=len(axis))))
    else:
        shift = draw(st.integers(-7, 7))
    return Call((x, shift), kw)


@st.composite
def moveaxis_args(draw):
    x = draw(tensor(min_dims=1, max_side=3))
    nd = x.a.ndim
    k = draw(st.integers(1, nd))
    src = draw(st.permutations(range(-nd, 0) if draw(st.booleans()) else range(nd)))[:k]
    dst = draw(st.permutations(range(nd)))[:k]
    if draw(st.integers(0, 5)) == 0:
        dst = dst[:-1] + [nd]  # out of range: AxisError
    if k == 1 and draw(st.booleans()):
        return Call((x, src[0], dst[0]))
    return Call((x, tuple(src), tuple(dst)))


@st.composite
def tile_args(draw):
    x = draw(tensor(max_dims=2, max_side=3))
    reps = draw(st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), max_size=3).map(tuple)))
    return Call((x, reps))


@st.composite
def repeat_args(draw):
    x = draw(tensor(max_side=4))
    kw = {}
    if draw(st.booleans()):
        kw["axis"] = draw(st.integers(-x.a.ndim, x.a.ndim - 1)) if x.a.ndim else None
    repeats = draw(st.integers(0, 3))
    if draw(st.booleans()):
        # One per element: a list, an array or a tensor (read first: the length is theirs).
        n = x.a.size if kw.get("axis") is None else x.a.shape[kw["axis"]]
        counts = np.asarray(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)),
                            dtype=np.int64)
        repeats = draw(st.sampled_from([counts.tolist(), counts, T(counts)]))
    return Call((x, repeats), kw)


@st.composite
def unstack_args(draw):
    x = draw(tensor(min_dims=1, max_side=4))
    kw = {} if draw(st.booleans()) else {"axis": draw(st.integers(-x.a.ndim, x.a.ndim - 1))}
    return Call((x,), kw)


@st.composite
def broadcast_arrays_args(draw):
    n = draw(st.integers(1, 3))
    bs = draw(hnp.mutually_broadcastable_shapes(num_shapes=n, max_dims=3, max_side=4))
    return Call(tuple(draw(tensor(shape=s)) for s in bs.input_shapes))


@st.composite
def diff_args(draw):
    x = draw(tensor(min_dims=1, max_side=5, mode="moderate"))
    nd = x.a.ndim
    kw = {}
    if draw(st.booleans()):
        kw["n"] = draw(st.integers(0, 4))
    axis = draw(st.integers(-nd, nd - 1))
    if draw(st.booleans()):
        kw["axis"] = axis
    else:
        axis = -1
    for edge in ("prepend", "append"):
        form = draw(st.sampled_from(["none", "scalar", "tensor"]))
        if form == "scalar":
            kw[edge] = draw(st.integers(-3, 3))
        elif form == "tensor":
            shape = list(x.a.shape)
            shape[axis] = draw(st.integers(1, 2))
            kw[edge] = draw(tensor(x.a.dtype.name, shape=tuple(shape), mode="moderate"))
    return Call((x,), kw)


@st.composite
def take_along_axis_args(draw):
    x = draw(tensor(min_dims=1, max_side=4))
    nd = x.a.ndim
    axis = draw(st.integers(-nd, nd - 1))
    n = x.a.shape[axis]
    shape = [draw(st.sampled_from([d, 1])) for d in x.a.shape]
    shape[axis % nd] = draw(st.integers(0, 4))
    high = max(n - 1, 0)
    values = st.integers(-n, high) if n else st.just(0)
    dtype = draw(st.sampled_from([d for d in INTS if d in ("int32", "int64")]))
    idx = draw(hnp.arrays(np.dtype(dtype), tuple(shape), elements=values))
    if n and idx.size and draw(st.integers(0, 4)) == 0:
        idx.flat[0] = draw(st.sampled_from([n, -n - 1]))  # out of bounds: IndexError
    return Call((x, T(idx, draw(chunks_for(idx.shape)))), {"axis": axis})


@st.composite
def eye_args(draw):
    n = draw(st.integers(0, 5))
    args = (n,)
    if draw(st.booleans()):
        args += (draw(st.one_of(st.none(), st.integers(0, 5))),)
    kw = {}
    if draw(st.booleans()):
        kw["k"] = draw(st.integers(-6, 6))
    if draw(st.booleans()):
        kw["dtype"] = draw(st.sampled_from(DTYPES))
    m = n if len(args) == 1 or args[1] is None else args[1]
    if draw(st.booleans()):
        kw["chunks"] = draw(chunks_for((n, m)))
    return Call(args, kw)


@st.composite
def triangle_args(draw):
    x = draw(tensor(min_dims=2, max_side=4))
    kw = {} if draw(st.booleans()) else {"k": draw(st.integers(-5, 5))}
    return Call((x,), kw)


@st.composite
def meshgrid_args(draw):
    n = draw(st.integers(0, 3))
    arrays = tuple(draw(tensor(shape=(draw(st.integers(0, 4)),))) for _ in range(n))
    kw = {} if draw(st.booleans()) else {"indexing": draw(st.sampled_from(["xy", "ij"]))}
    return Call(arrays, kw)


@st.composite
def cumulative_args(draw, mode):
    x = draw(tensor(min_dims=1, max_dims=2, max_side=4, mode=mode))
    kw = {}
    if x.a.ndim > 1 or draw(st.booleans()):
        kw["axis"] = draw(st.integers(-x.a.ndim, x.a.ndim - 1))
    if draw(st.booleans()):
        kw["include_initial"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        kw["dtype"] = draw(st.sampled_from(["int64", "float64"]))
    return Call((x,), kw)


@st.composite
def count_nonzero_args(draw):
    x = draw(tensor())
    _, kwargs = draw(axis_form(x.a.ndim, tuple_axis=True, keepdims=True))
    return Call((x,), kwargs)


@st.composite
def dlpack_source(draw):
    """A NumPy array (a DLPack producer), passed as is to both sides."""
    return Call((draw(tensor()).a,))


REARRANGE_CASES = {
    "flip": Case(_ar("flip"), _np("flip"), flip_args()),
    "roll": Case(_ar("roll"), _np("roll"), roll_args()),
    "moveaxis": Case(_ar("moveaxis"), _np("moveaxis"), moveaxis_args()),
    "tile": Case(_ar("tile"), _np("tile"), tile_args()),
    "repeat": Case(_ar("repeat"), _np("repeat"), repeat_args()),
    "unstack": Case(_ar("unstack"), _np("unstack"), unstack_args()),
    "broadcast_arrays": Case(_ar("broadcast_arrays"), _np("broadcast_arrays"),
                             broadcast_arrays_args()),
    "diff": Case(_ar("diff"), _np("diff"), diff_args()),
    "take_along_axis": Case(_ar("take_along_axis"), _np("take_along_axis"),
                            take_along_axis_args()),
    "eye": Case(_ar("eye"), _unchunked(np.eye), eye_args()),
    "tril": Case(_ar("tril"), _np("tril"), triangle_args()),
    "triu": Case(_ar("triu"), _np("triu"), triangle_args()),
    "meshgrid": Case(_ar("meshgrid"), _np("meshgrid"), meshgrid_args()),
    "cumulative_prod": Case(_ar("cumulative_prod"), _np("cumulative_prod"),
                            cumulative_args("factors"), products),
    "count_nonzero": Case(_ar("count_nonzero"), _np("count_nonzero"), count_nonzero_args()),
    "from_dlpack": Case(_ar("from_dlpack"), _np("from_dlpack"), dlpack_source()),
}

# The array API's protocols of a tensor: not numeric functions (tests/test_array_api.py).
REARRANGE_NOT_NUMERIC = {
    "Tensor.__array_namespace__": ("the array API's namespace", "test_array_api.py: is ar"),
    "Tensor.__dlpack__": ("DLPack export of the computed value",
                          "test_array_api.py: np.from_dlpack(x) equals x's value, every dtype"),
    "Tensor.__dlpack_device__": ("the CPU's DLPack device", "test_array_api.py: == (1, 0)"),
    "Tensor.__setitem__": ("assignment: the tensor becomes a new one",
                           "test_array_api.py: NumPy's array after the same assignments, "
                           "tensors built before unchanged"),
}
