"""The table of test_api_differential.py: for every public name of ``ar``, ``ar.random`` and
``ar.Tensor``, how to call it and what NumPy 2 answers for the same arguments.

A numeric name has a ``Case``: the ares callable, NumPy's equivalent (called with the same
arguments, tensors replaced by their NumPy arrays), and a hypothesis strategy of argument
forms (``Call``) drawing dtypes among every one ares has (``ar._ares.dtypes()``), values near
the integer limits of both signs, NaN/±inf/-0.0, zero-size, size-1 and broadcast shapes, and a
chunking per tensor. A name that is not a numeric function is in ``NOT_NUMERIC`` with what
the test checks instead. Shortcomings ares admits are in ``KNOWN_UNSUPPORTED`` (ares raises
cleanly where NumPy gives a value) and ``KNOWN_DEVIATIONS`` (ares answers otherwise on
purpose): keep both short, each entry with its reason.

To add a name: one word in ``UNARY``/``BINARY`` (elementwise functions: the operand forms are
shared), or an entry in ``CASES`` built from the strategies below.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ares as ar
from helpers import chunks_for

# The real dtypes: complex64/complex128 are checked against NumPy by test_complex.py and
# test_fft.py (the cases here draw NaN/inf patterns and orderings that are real-only).
DTYPES = tuple(d for d in ar._ares.dtypes() if np.dtype(d).kind != "c")
INTS = tuple(d for d in DTYPES if np.dtype(d).kind in "iu")
FLOATS = tuple(d for d in DTYPES if np.dtype(d).kind == "f")
REAL = INTS + FLOATS
# Hypothesis shrinks a choice toward the first: NumPy's default dtypes first, so a falsifying
# example reads as the common case (int64, float64) where the bug allows.
_PREFERENCE = ("int64", "float64", "int32", "float32", "bool")


def ordered(dtypes):
    dtypes = tuple(np.dtype(d).name for d in ((dtypes,) if isinstance(dtypes, str) else dtypes))
    return tuple(sorted(dtypes, key=lambda d: (_PREFERENCE + dtypes).index(d)))


# -- arguments -------------------------------------------------------------------------------

class T:
    """A tensor argument: ``a`` on NumPy's side, ``ar.from_numpy(a, chunks)`` on ares'."""

    __slots__ = ("a", "chunks")

    def __init__(self, a: np.ndarray, chunks=None):
        self.a, self.chunks = a, chunks

    def __repr__(self):
        return f"T({np.array_repr(self.a)}, chunks={self.chunks!r})"


@dataclass(repr=False)
class Call:
    """Arguments of one call: ``T`` for tensors, anything else passed to both sides as is."""

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"({', '.join(parts)})"

    def arrays(self):
        """The NumPy arrays of the tensor arguments (for tolerances)."""
        out = []

        def walk(v):
            if isinstance(v, T):
                out.append(v.a)
            elif isinstance(v, (tuple, list)):
                for w in v:
                    walk(w)
        walk(self.args)
        walk(tuple(self.kwargs.values()))
        return out


def to_numpy(v):
    if isinstance(v, T):
        return v.a
    if isinstance(v, (tuple, list)):
        return type(v)(to_numpy(w) for w in v)
    if isinstance(v, dict):
        return {k: to_numpy(w) for k, w in v.items()}
    return v


def to_ares(v):
    if isinstance(v, T):
        return ar.from_numpy(v.a, chunks=v.chunks)
    if isinstance(v, (tuple, list)):
        return type(v)(to_ares(w) for w in v)
    if isinstance(v, dict):
        return {k: to_ares(w) for k, w in v.items()}
    return v


# -- values ----------------------------------------------------------------------------------

def elements(dtype, mode="full"):
    """Values of ``dtype``: "full" has the extremes (integer limits of both signs, ±max, tiny,
    subnormal, NaN, ±inf, -0.0); "moderate" keeps magnitudes small (sums and products whose
    rounding would depend on the order), with NaN, ±inf and -0.0; "factors" in ±[0.5, 2]
    and 0 (products of hundreds of them neither over- nor underflow); "finite" as moderate
    without NaN and ±inf (NumPy's BLAS skips zero factors: 0 * NaN is 0 in its matmul)."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if mode == "factors":
            return st.integers(max(info.min, -3), 3)
        if mode == "moderate":
            return st.integers(max(info.min, -100), 100)
        edges = sorted({info.min, info.min + 1, info.max - 1, info.max, 0, 1, max(info.min, -1)})
        return st.one_of(st.integers(max(info.min, -10), 10), st.sampled_from(edges),
                         st.integers(info.min, info.max))
    if dt.kind == "f":
        width = dt.itemsize * 8
        specials = st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.0])
        if mode == "factors":
            return st.one_of(st.floats(0.5, 2, width=width), st.floats(-2, -0.5, width=width),
                             specials)
        if mode == "moderate":
            return st.one_of(st.floats(-100, 100, width=width), specials)
        if mode == "finite":
            return st.one_of(st.floats(-100, 100, width=width), st.just(-0.0))
        fi = np.finfo(dt)
        edges = st.sampled_from([float(v) for v in (fi.max, -fi.max, fi.tiny, -fi.tiny,
                                                    fi.smallest_subnormal)])
        return st.one_of(st.floats(-10, 10, width=width), specials, edges, st.floats(width=width))
    if dt.kind == "c":
        return st.complex_numbers(width=dt.itemsize * 8, allow_nan=True, allow_infinity=True)
    raise NotImplementedError(f"no elements for {dt}")


def shapes(min_dims=0, max_dims=3, min_side=0, max_side=5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


@st.composite
def tensor(draw, dtypes=DTYPES, shape=None, mode="full", min_dims=0, max_dims=3, min_side=0,
           max_side=5):
    dtype = draw(st.sampled_from(ordered(dtypes)))
    shape = draw(shapes(min_dims, max_dims, min_side, max_side)) if shape is None else shape
    a = draw(hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, mode)))
    return T(a, draw(chunks_for(a.shape)))


def py_scalar(dtype=None):
    """A Python number (weak, NEP 50), near ``dtype``'s limits too."""
    forms = [st.booleans(), st.integers(-3, 3), st.floats(-3, 3),
             st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.5])]
    if dtype is not None and np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        forms.append(st.sampled_from([int(info.min), int(info.max), 2**31, -(2**31) - 1,
                                      2**63 - 1, -(2**63)]))
    return st.one_of(forms)


@st.composite
def np_scalar(draw, dtypes=DTYPES):
    """A NumPy scalar (strong: its dtype counts, NEP 50)."""
    dtype = draw(st.sampled_from(ordered(dtypes)))
    return np.dtype(dtype).type(draw(elements(dtype, "moderate")))


# -- argument forms --------------------------------------------------------------------------

@st.composite
def one_tensor(draw, dtypes=DTYPES, mode="full", **kw):
    return Call((draw(tensor(dtypes, mode=mode, **kw)),))


@st.composite
def two_operands(draw, dtypes=DTYPES, mode="full", forms=("tt", "tt", "ts", "st", "tz", "tn", "nt")):
    """Two operands: tensors of broadcasting shapes and any dtypes, a tensor and a Python
    scalar on either side, a NumPy scalar, a NumPy array."""
    form = draw(st.sampled_from(forms))
    if form == "tt":
        bs = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                    min_side=0, max_side=4))
        return Call(tuple(draw(tensor(dtypes, shape=s, mode=mode)) for s in bs.input_shapes))
    x = draw(tensor(dtypes, mode=mode, max_dims=2))
    if form in ("ts", "st"):
        s = draw(py_scalar(x.a.dtype))
        return Call((x, s) if form == "ts" else (s, x))
    if form == "tz":
        return Call((x, draw(np_scalar(dtypes))))
    other = draw(tensor(dtypes, shape=x.a.shape[draw(st.integers(0, x.a.ndim)):], mode=mode))
    return Call((x, other.a) if form == "tn" else (other.a, x))


@st.composite
def axis_form(draw, ndim, tuple_axis=True, keepdims=True):
    """``axis`` None/int/negative/tuple/out of range, by keyword or by position, keepdims."""
    forms = ["omitted", "none", "int", "neg", "positional", "out_of_range"]
    if tuple_axis:
        forms.append("tuple")
    form = draw(st.sampled_from(forms))
    args, kwargs = (), {}
    if form == "none":
        kwargs["axis"] = None
    elif form in ("int", "positional") and ndim:
        axis = draw(st.integers(0, ndim - 1))
        if form == "int":
            kwargs["axis"] = axis
        else:
            args = (axis,)
    elif form == "neg" and ndim:
        kwargs["axis"] = draw(st.integers(-ndim, -1))
    elif form == "tuple":
        kwargs["axis"] = tuple(draw(st.lists(st.integers(-ndim, ndim - 1) if ndim else st.nothing(),
                                             unique_by=lambda i: i % max(ndim, 1), max_size=ndim)))
    elif form == "out_of_range":
        kwargs["axis"] = draw(st.sampled_from([ndim, -ndim - 1]))
    if keepdims and draw(st.booleans()):
        kwargs["keepdims"] = draw(st.booleans())
    return args, kwargs


@st.composite
def reduction(draw, dtypes=DTYPES, mode="full", tuple_axis=True, keepdims=True, extra=None):
    x = draw(tensor(dtypes, mode=mode))
    args, kwargs = draw(axis_form(x.a.ndim, tuple_axis, keepdims))
    if extra is not None:
        kwargs.update(draw(extra))
    return Call((x,) + args, kwargs)


@st.composite
def scan(draw, mode="full"):
    x = draw(tensor(mode=mode, max_side=4))
    axis = draw(st.one_of(st.none(), st.integers(-x.a.ndim - 1, x.a.ndim)))
    return Call((x,), {"axis": axis})


@st.composite
def where_args(draw):
    bs = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=4))
    cond = draw(tensor(("bool",) + REAL, shape=bs.input_shapes[0]))
    ops = []
    for s in bs.input_shapes[1:]:
        t = draw(tensor(shape=s))
        ops.append(draw(st.one_of(st.just(t), py_scalar(t.a.dtype))))
    return Call((cond, *ops))


@st.composite
def clip_args(draw):
    x = draw(tensor(REAL, max_dims=2))
    bound = st.one_of(st.none(), py_scalar(x.a.dtype),
                      tensor(x.a.dtype.name, shape=x.a.shape[draw(st.integers(0, x.a.ndim)):]))
    return Call((x, draw(bound), draw(bound)))


@st.composite
def matmul_args(draw, forms=("mm", "vm", "mv", "vv", "batch", "bad")):
    dtype = draw(st.sampled_from(DTYPES))
    n, k, m, b = (draw(st.integers(0 if i == 3 else 1, 4)) for i in range(4))
    form = draw(st.sampled_from(forms))
    left, right = {"mm": ((n, k), (k, m)), "vm": ((k,), (k, m)), "mv": ((n, k), (k,)),
                   "vv": ((k,), (k,)), "batch": ((b, n, k), (k, m)), "bad": ((n, k), (k + 1, m)),
                   "scalar": ((), (k, m))}[form]
    other = draw(st.sampled_from(DTYPES))
    return Call((draw(tensor((dtype,), shape=left, mode=_linalg_mode(dtype, other))),
                 draw(tensor((other,), shape=right, mode=_linalg_mode(other, dtype)))))


def _linalg_mode(dtype, other):
    # products of integers wrap exactly in any order: their full range; floats finite
    kinds = np.dtype(dtype).kind + np.dtype(other).kind
    return "finite" if "f" in kinds else "full"


@st.composite
def tensordot_args(draw):
    x, y = draw(matmul_args(forms=("mm", "vm", "mv", "vv"))).args
    axes = draw(st.sampled_from([0, 1, 2, ([x.a.ndim - 1], [0]), ((0,), (0,))]))
    return Call((x, y), {"axes": axes})


@st.composite
def inner_args(draw):
    k = draw(st.integers(0, 4))
    dtype = draw(st.sampled_from(DTYPES))
    mode = "finite" if np.dtype(dtype).kind == "f" else "full"
    a = draw(tensor((dtype,), shape=draw(shapes(max_dims=1, max_side=3)) + (k,), mode=mode))
    b = draw(tensor((dtype,), shape=draw(shapes(max_dims=1, max_side=3)) + (k,), mode=mode))
    return Call((a, b))


@st.composite
def permutation(draw, ndim):
    return tuple(draw(st.permutations(range(ndim))))


@st.composite
def transpose_args(draw, required=False):
    x = draw(tensor())
    if not required and draw(st.booleans()):
        return Call((x,))
    return Call((x, draw(permutation(x.a.ndim))))


@st.composite
def reshape_args(draw):
    x = draw(tensor())
    size = x.a.size
    shape = draw(st.sampled_from([(-1,), (size,), (1, size), (size, 1, -1), (2, -1),
                                  x.a.shape[::-1], (size + 1,), -1]))
    return Call((x, shape))


@st.composite
def expand_dims_args(draw):
    x = draw(tensor(max_dims=2))
    n = x.a.ndim + 1
    axis = draw(st.one_of(st.integers(-n - 1, n),
                          st.lists(st.integers(-n, n - 1), min_size=1, max_size=2).map(tuple)))
    return Call((x, axis))


@st.composite
def squeeze_args(draw):
    x = draw(tensor(max_side=2))
    ones = [i for i, d in enumerate(x.a.shape) if d == 1]
    axis = draw(st.one_of(st.none(), st.sampled_from(ones or [0]),
                          st.just(tuple(ones)), st.integers(-x.a.ndim - 1, x.a.ndim)))
    return Call((x,) if axis is None and draw(st.booleans()) else (x, axis))


@st.composite
def broadcast_to_args(draw):
    x = draw(tensor(max_dims=2, max_side=3))
    target = tuple(draw(st.integers(0, 3)) if d == 1 else d for d in x.a.shape)
    target = tuple(draw(st.lists(st.integers(0, 3), max_size=2))) + target
    if draw(st.integers(0, 5)) == 0:
        target = target + (7,)  # incompatible
    return Call((x, target))


@st.composite
def joining_args(draw, stack=False, axis_none=True):
    shape = draw(shapes(min_dims=0 if stack else 1, max_dims=3, max_side=3))
    count = draw(st.integers(1, 3))
    axis_choices = list(range(-len(shape) - stack, len(shape) + stack)) or [0]
    axis = draw(st.sampled_from(axis_choices))
    parts = []
    for _ in range(count):
        s = list(shape)
        if not stack and s and draw(st.booleans()):
            s[axis % len(s)] = draw(st.integers(0, 3))
        parts.append(draw(tensor(shape=tuple(s))))
    kw = {}
    if draw(st.booleans()):
        kw["axis"] = None if (axis_none and not stack and draw(st.integers(0, 4)) == 0) else axis
    return Call((draw(st.sampled_from([tuple, list]))(parts),), kw)


@st.composite
def split_args(draw):
    x = draw(tensor(min_dims=1, max_side=6))
    axis = draw(st.integers(-x.a.ndim, x.a.ndim - 1))
    n = x.a.shape[axis]
    sections = draw(st.one_of(st.integers(1, 4),
                              st.lists(st.integers(0, n + 1), max_size=3).map(sorted).map(tuple)))
    return Call((x, sections), {"axis": axis} if axis or draw(st.booleans()) else {})


@st.composite
def astype_args(draw):
    x = draw(tensor())
    dtype = draw(st.sampled_from(DTYPES))
    if x.a.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        # NumPy leaves float -> int undefined outside the int's range (and for NaN)
        info = np.iinfo(dtype)
        x = T(np.where(np.isfinite(x.a) & (x.a > info.min) & (x.a < info.max), x.a, 0),
              x.chunks)
    return Call((x, draw(dtype_form(dtype))))


def dtype_form(dtype):
    """A dtype as NumPy takes it: np.dtype, its name, its scalar type, ar's name, a Python type."""
    forms = [st.just(np.dtype(dtype)), st.just(dtype), st.just(np.dtype(dtype).type)]
    if hasattr(ar, dtype):
        forms.append(st.just(getattr(ar, dtype)))
    python = {"bool": bool, "int64": int, "float64": float}.get(dtype)
    if python is not None:
        forms.append(st.just(python))
    return st.one_of(forms)


@st.composite
def sort_args(draw, descending=True):
    x = draw(tensor(REAL + ("bool",), min_dims=1, max_side=5))
    kw = {}
    if draw(st.booleans()):
        kw["axis"] = draw(st.integers(-x.a.ndim, x.a.ndim - 1))
    if descending and draw(st.integers(0, 3)) == 0:
        kw["descending"] = True
    return Call((x,), kw)


@st.composite
def unique_args(draw, counts=True):
    x = draw(tensor(max_side=5))
    kw = {"return_counts": draw(st.booleans())} if counts and draw(st.booleans()) else {}
    return Call((x,), kw)


@st.composite
def searchsorted_args(draw):
    dtype = draw(st.sampled_from(REAL))
    a = np.sort(draw(hnp.arrays(np.dtype(dtype), draw(st.integers(0, 8)),
                                elements=elements(dtype))))
    sorted_ = T(a, draw(chunks_for(a.shape)))
    v = draw(st.one_of(tensor((draw(st.sampled_from(REAL)),), max_dims=2),
                       py_scalar(dtype)))
    kw = {"side": draw(st.sampled_from(["left", "right"]))} if draw(st.booleans()) else {}
    return Call((sorted_, v), kw)


@st.composite
def index_array(draw, n, max_size=5):
    """Positions along a dimension of length ``n`` (negative ones and out-of-bounds too), as a
    list, a NumPy array or a tensor of int64 or int32."""
    values = draw(st.lists(st.integers(-n, n - 1), max_size=max_size)) if n else []
    if draw(st.integers(0, 4)) == 0:
        values.append(draw(st.sampled_from([n, -n - 1])))  # out of bounds: IndexError
    dtype = draw(st.sampled_from([d for d in INTS if d in ("int32", "int64")]))
    a = np.asarray(values, dtype=dtype).reshape(draw(st.sampled_from([(-1,), (1, -1)])))
    return draw(st.sampled_from([values, a, T(a, draw(chunks_for(a.shape)))]))


@st.composite
def take_args(draw):
    x = draw(tensor(min_dims=1, max_dims=2))
    axis = draw(st.one_of(st.none(), st.integers(-x.a.ndim, x.a.ndim - 1)))
    n = x.a.size if axis is None else x.a.shape[axis]
    idx = draw(index_array(n))
    if isinstance(idx, list):
        idx = np.asarray(idx, dtype=np.int64)
    return Call((x, idx), {} if axis is None and draw(st.booleans()) else {"axis": axis})


@st.composite
def compress_args(draw):
    """``compress(condition, x, axis)``: axis 0 (also negative) or None, a condition of any
    dtype as a list, a NumPy array or a tensor, as long as the axis or shorter."""
    x = draw(tensor(min_dims=1, max_dims=3, max_side=4))
    axis = draw(st.sampled_from([None, 0, -x.a.ndim]))
    n = x.a.size if axis is None else x.a.shape[0]
    length = draw(st.integers(0, n))
    dtype = draw(st.sampled_from(["bool", "int64", "float64"]))
    cond = draw(hnp.arrays(np.dtype(dtype), length, elements=elements(dtype, "finite")))
    form = draw(st.sampled_from(["list", "numpy", "tensor"]))
    if form == "list":
        cond = cond.tolist()
    elif form == "tensor":
        cond = T(cond, draw(chunks_for(cond.shape)))
    kw = {"axis": axis} if axis is not None or draw(st.booleans()) else {}
    return Call((cond, x), kw)


@st.composite
def getitem_args(draw):
    """``x[index]``: basic indices (ints, slices with steps, None, ...), a bool mask of x's
    shape, an integer array (list, ndarray, tensor; int64 or int32)."""
    x = draw(tensor(min_dims=0, max_dims=3))
    kind = draw(st.sampled_from(["mask", "ints", "basic"]))
    if kind == "mask":
        m = draw(hnp.arrays(np.bool_, x.a.shape))
        return Call((x, draw(st.sampled_from([m, T(m, draw(chunks_for(m.shape)))]))))
    if kind == "ints" and x.a.ndim:
        return Call((x, draw(index_array(x.a.shape[0]))))
    index = []
    for d in x.a.shape:
        form = draw(st.sampled_from(["int", "slice", "full", "newaxis"]))
        if form == "int":
            index.append(draw(st.integers(-d - 1, d)))
        elif form == "slice":
            index.append(slice(draw(st.one_of(st.none(), st.integers(-d - 2, d + 2))),
                               draw(st.one_of(st.none(), st.integers(-d - 2, d + 2))),
                               draw(st.one_of(st.none(), st.integers(-3, 3).filter(bool)))))
        elif form == "newaxis":
            index += [None, slice(None)]
        else:
            index.append(slice(None))
    if index and draw(st.booleans()):
        index = [Ellipsis] + index[1:] if draw(st.booleans()) else index[:1] + [Ellipsis]
    if len(index) == 1 and draw(st.booleans()):
        return Call((x, index[0]))
    return Call((x, tuple(index)))


@st.composite
def small_tensor(draw, dtypes=DTYPES):
    """Sizes 0, 1 and 2 in any number of dimensions: where scalar conversions differ."""
    return Call((draw(tensor(dtypes, shape=draw(shapes(max_dims=2, max_side=2)))),))


# -- creation --------------------------------------------------------------------------------

@st.composite
def shape_arg(draw):
    return draw(st.one_of(st.integers(0, 5), shapes(max_dims=3, max_side=4),
                          st.just(()), st.just(-1)))


@st.composite
def creation_args(draw, fill=False):
    shape = draw(shape_arg())
    args = (shape,)
    if fill:
        args += (draw(st.one_of(py_scalar("int32"), np_scalar())),)
    kw = {}
    if draw(st.booleans()):
        kw["dtype"] = draw(dtype_form(draw(st.sampled_from(DTYPES))))
    return Call(args, kw), shape


def _defined_fill(fill, dtype):
    """NumPy casts a fill value unsafely: NaN, ±inf or an out-of-range number into an integer
    dtype is undefined there (the platform's conversion), so such a pair is not compared."""
    if dtype is None or np.dtype(dtype).kind not in "iu" or isinstance(fill, (bool, np.bool_)):
        return fill
    info = np.iinfo(dtype)
    value = float(fill)
    return fill if math.isfinite(value) and info.min <= value <= info.max else 1


@st.composite
def create(draw, fill=False):
    call, shape = draw(creation_args(fill))
    if fill:
        dtype = call.kwargs.get("dtype")
        target = np.asarray(call.args[1]).dtype if dtype is None else dtype
        call.args = (call.args[0], _defined_fill(call.args[1], target))
    dims = (shape,) if isinstance(shape, int) else shape
    if min(dims, default=0) >= 0 and draw(st.booleans()):
        call.kwargs["chunks"] = draw(chunks_for(dims))
    return call


@st.composite
def like_args(draw, fill=False):
    x = draw(tensor())
    kw = {}
    if draw(st.booleans()):
        kw["dtype"] = draw(dtype_form(draw(st.sampled_from(DTYPES))))
    args = (x,)
    if fill:
        value = draw(st.one_of(py_scalar(x.a.dtype), np_scalar()))
        args += (_defined_fill(value, kw.get("dtype", x.a.dtype)),)
    return Call(args, kw)


@st.composite
def arange_args(draw):
    number = draw(st.sampled_from(["int", "float"]))
    value = st.integers(-20, 20) if number == "int" else st.floats(-20, 20).map(lambda v: round(v, 2))
    args = tuple(draw(st.lists(value, min_size=1, max_size=3)))
    if len(args) == 3 and draw(st.booleans()):
        args = args[:2] + (draw(st.sampled_from([1, -1, 3, 0.5, -0.25, 0])),)
    kw = {"dtype": draw(dtype_form(draw(st.sampled_from(DTYPES))))} if draw(st.booleans()) else {}
    return Call(args, kw)


@st.composite
def linspace_args(draw):
    value = st.one_of(st.integers(-20, 20), st.floats(-1e3, 1e3))
    args = (draw(value), draw(value), draw(st.integers(0, 9)))
    kw = {}
    if draw(st.booleans()):
        kw["endpoint"] = draw(st.booleans())
    if draw(st.booleans()):
        kw["dtype"] = draw(dtype_form(draw(st.sampled_from(FLOATS))))
    return Call(args, kw)


@st.composite
def asarray_args(draw):
    dtype = draw(st.sampled_from(DTYPES))
    a = draw(hnp.arrays(np.dtype(dtype), draw(shapes(max_dims=2, max_side=3)),
                        elements=elements(dtype)))
    obj = draw(st.sampled_from(["ndarray", "list", "scalar", "tensor"]))
    value = {"ndarray": a, "list": a.tolist(), "scalar": a.ravel()[0].item() if a.size else 7,
             "tensor": T(a, draw(chunks_for(a.shape)))}[obj]
    kw = {"dtype": draw(dtype_form(draw(st.sampled_from(DTYPES))))} if draw(st.booleans()) else {}
    if kw.get("dtype") is not None and a.dtype.kind == "f" and np.dtype(kw["dtype"]).kind in "iu":
        kw = {}  # float -> int outside the range is undefined in NumPy
    return Call((value,), kw)


# -- data type functions ---------------------------------------------------------------------

@st.composite
def dtype_or_tensor(draw):
    dtype = draw(st.sampled_from(DTYPES))
    return draw(st.one_of(dtype_form(dtype), st.just(T(np.zeros(2, dtype), 1))))


@st.composite
def result_type_args(draw):
    return Call(tuple(draw(st.lists(st.one_of(dtype_or_tensor(), py_scalar()), min_size=1, max_size=3))))


@st.composite
def dtype_pair(draw):
    return Call((draw(dtype_or_tensor()), draw(dtype_form(draw(st.sampled_from(DTYPES))))))


@st.composite
def isdtype_args(draw):
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric"]
    kind = draw(st.one_of(st.sampled_from(kinds), st.lists(st.sampled_from(kinds), min_size=1,
                                                           max_size=2).map(tuple),
                          st.sampled_from(DTYPES).map(np.dtype)))
    return Call((np.dtype(draw(st.sampled_from(DTYPES))), kind))


# -- the table -------------------------------------------------------------------------------

def ulp(call, want):
    """libm and NumPy's SIMD loops may differ in the last bits."""
    eps = np.finfo(want.dtype).eps
    return 8 * eps, float(np.finfo(want.dtype).tiny)


def _finite_abs(call):
    arrays = [np.abs(a[np.isfinite(a)]).astype(np.float64) for a in call.arrays()
              if a.dtype.kind in "iuf"]
    return arrays or [np.zeros(0)]


def summed(call, want):
    """Sums in another order (per chunk, float32 accumulated in float64): bounded by the sum of
    the magnitudes."""
    eps = np.finfo(want.dtype).eps
    total = sum(float(a.sum()) for a in _finite_abs(call))
    return 8 * eps, 16 * eps * total + float(np.finfo(want.dtype).tiny)


def moments(call, want, root=False):
    """var/std: one pass merged per chunk against NumPy's two passes."""
    eps = np.finfo(want.dtype).eps
    arrays = _finite_abs(call)
    scale = max((float(a.max()) for a in arrays if a.size), default=0.0)
    n = max((a.size for a in arrays), default=1)
    atol = 64 * eps * n * scale * scale
    return 1e-5 if want.dtype == np.float32 else 1e-9, (math.sqrt(atol) if root else atol) + 1e-300


def unsigned_zero(call, want):
    """Exact, but -0.0 == 0.0: which of the two a min/max reduction returns is unspecified."""
    return 0.0, 0.0


def products(call, want):
    eps = np.finfo(want.dtype).eps
    n = max((a.size for a in call.arrays()), default=1)
    return 4 * eps * (n + 1), float(np.finfo(want.dtype).tiny)


@dataclass
class Case:
    """How to exercise one public name against NumPy.

    ``ares`` and ``numpy`` take the same arguments (``Call``, tensors converted per side);
    ``tol(call, want)`` gives (rtol, atol) for float results (None: exact, bit for bit, -0.0
    too); ``method`` names the Tensor method called with the first argument as the object,
    checked against the same NumPy value; ``check(got, want, call)`` replaces the value
    comparison where NumPy's answer is not unique (argsort of ties, random draws); ``chunks``
    checks the result's chunks (``chunks(result, ares_args)`` returns them or None)."""

    ares: Callable
    numpy: Callable
    forms: Any
    tol: Callable | None = None
    method: str | None = None
    check: Callable | None = None
    chunks: Callable | None = None


def _zeros_folded(numpy_unique):
    """NumPy's unique with its zero as +0.0 (see KNOWN_DEVIATIONS: "the sign of unique's zero")."""
    def fold(v):
        v = np.asarray(v)
        return v + v.dtype.type(0) if v.dtype.kind == "f" else v

    def f(*args, **kwargs):
        out = numpy_unique(*args, **kwargs)
        return tuple(fold(v) for v in out) if isinstance(out, tuple) else fold(out)
    return f


def _ar(name):
    def f(*args, **kwargs):
        return getattr(ar, name)(*args, **kwargs)
    f.__name__ = f"ar.{name}"
    return f


def _np(name):
    def f(*args, **kwargs):
        return getattr(np, name)(*args, **kwargs)
    f.__name__ = f"np.{name}"
    return f


CASES: dict[str, Case] = {}

# Elementwise functions: every name listed whether ar has it yet or not (a case for a name ar
# lacks is skipped); NumPy's function of the same name is the reference.
UNARY = {
    # exact: correctly rounded or exact in both
    "negative": None, "positive": None, "abs": None, "absolute": None, "sqrt": None,
    "square": None, "floor": None, "ceil": None, "trunc": None, "rint": None, "sign": None,
    "signbit": None, "isnan": None, "isinf": None, "isfinite": None, "logical_not": None,
    "invert": None, "bitwise_not": None, "bitwise_invert": None, "reciprocal": None,
    "round": None, "around": None, "conj": None, "conjugate": None, "real": None, "imag": None,
    # libm: within a few ulps
    "exp": ulp, "expm1": ulp, "log": ulp, "log1p": ulp, "log2": ulp, "log10": ulp, "sin": ulp,
    "cos": ulp, "tan": ulp, "asin": ulp, "acos": ulp, "atan": ulp, "sinh": ulp, "cosh": ulp,
    "tanh": ulp, "asinh": ulp, "acosh": ulp, "atanh": ulp, "cbrt": ulp, "arcsin": ulp,
    "arccos": ulp, "arctan": ulp, "arcsinh": ulp, "arccosh": ulp, "arctanh": ulp,
}
BINARY = {
    "add": None, "subtract": None, "multiply": None, "divide": None, "true_divide": None,
    "floor_divide": None, "remainder": None, "mod": None, "fmod": None, "maximum": None,
    "minimum": None, "fmax": None, "fmin": None, "equal": None, "not_equal": None,
    "less": None, "less_equal": None, "greater": None, "greater_equal": None,
    "logical_and": None, "logical_or": None, "logical_xor": None, "bitwise_and": None,
    "bitwise_or": None, "bitwise_xor": None, "left_shift": None, "right_shift": None,
    "bitwise_left_shift": None, "bitwise_right_shift": None, "copysign": None,
    "nextafter": None, "power": ulp, "pow": ulp, "atan2": ulp, "arctan2": ulp, "hypot": ulp,
    "logaddexp": ulp,
}
for _n, _tol in UNARY.items():
    CASES[_n] = Case(_ar(_n), _np(_n), one_tensor(), _tol,
                     method=None if _n in ("real", "imag") else _n)
for _n, _tol in BINARY.items():
    CASES[_n] = Case(_ar(_n), _np(_n), two_operands(), _tol, method=_n)

_REDUCTIONS = {
    # name: (element mode for floats, tolerance, axis may be a tuple, extra keywords)
    "sum": ("moderate", summed, True, None),
    "prod": ("factors", products, True, None),
    "min": ("full", unsigned_zero, True, None),
    "max": ("full", unsigned_zero, True, None),
    "amin": ("full", unsigned_zero, True, None),
    "amax": ("full", unsigned_zero, True, None),
    "mean": ("moderate", summed, True, None),
    "var": ("moderate", moments, True, "ddof"),
    "std": ("moderate", lambda c, w: moments(c, w, root=True), True, "ddof"),
    "all": ("full", None, True, None),
    "any": ("full", None, True, None),
    "argmin": ("full", None, False, None),
    "argmax": ("full", None, False, None),
}
_DDOF = st.one_of(st.just({}), st.fixed_dictionaries({"ddof": st.integers(0, 2)}),
                  st.fixed_dictionaries({"correction": st.sampled_from([0, 1, 1.0, 2])}))


@st.composite
def _reduction_form(draw, mode, tuple_axis, extra):
    # integers keep their full range (their sums wrap exactly in any order); floats use
    # `mode`, so no partial sum's rounding or overflow depends on the order
    dtype = draw(st.sampled_from(DTYPES))
    m = mode if np.dtype(dtype).kind == "f" else "full"
    return draw(reduction((dtype,), mode=m, tuple_axis=tuple_axis,
                          extra=_DDOF if extra else None))


for _n, (_mode, _tol, _tuple, _extra) in _REDUCTIONS.items():
    CASES[_n] = Case(_ar(_n), _np(_n), _reduction_form(_mode, _tuple, _extra), _tol, method=_n)

for _n, _mode, _tol in (("cumsum", "moderate", summed), ("cumprod", "factors", products)):
    CASES[_n] = Case(_ar(_n), _np(_n), scan(_mode), _tol, method=_n)
CASES["cumulative_sum"] = Case(_ar("cumulative_sum"), _np("cumulative_sum"), scan("moderate"),
                               summed, method="cumulative_sum")


def _linalg_tol(call, want):
    eps = np.finfo(want.dtype).eps
    return 16 * eps, 64 * eps * 100 * 100 * 8


def _argsort_check(got, want, call):
    """Any order that sorts (NumPy's default sort is not stable): a permutation per row."""
    a = call.arrays()[0]
    axis = call.kwargs.get("axis", -1)
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    assert (np.sort(got, axis=axis) == np.sort(want, axis=axis)).all(), "not a permutation"
    same_order(np.take_along_axis(a, got, axis=axis), np.take_along_axis(a, want, axis=axis))


def same_order(x, y):
    both_nan = (x != x) & (y != y)
    assert ((x == y) | both_nan).all(), f"{x} sorts differently from {y}"


def _sort_np(a, axis=-1, descending=False, stable=True):
    out = np.sort(a, axis=axis, stable=stable)
    return np.flip(np.sort(np.flip(a, axis), axis=axis), axis) if descending else out


def _argsort_np(a, axis=-1, descending=False, stable=True):
    if not descending:
        return np.argsort(a, axis=axis, stable=True)
    # Stable descending: the reversed axis sorted stably, positions counted from its end.
    n = a.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(a, axis), axis=axis, stable=True), axis)


def _like_chunks(result, args, kwargs):
    return args[0].chunks if kwargs.get("chunks") is None else None


def _unchunked(f):
    def g(*args, chunks=None, **kwargs):
        return f(*args, **kwargs)
    g.__name__ = f.__name__
    return g


def _empty_check(got, want, call):
    """``empty``: an ares tensor is never uninitialized (zeros); NumPy's values are arbitrary."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)


CASES.update({
    "where": Case(_ar("where"), np.where, where_args(), method="where"),
    "clip": Case(_ar("clip"), np.clip, clip_args(), method="clip"),
    "matmul": Case(_ar("matmul"), np.matmul, matmul_args(), _linalg_tol, method="matmul"),
    "dot": Case(_ar("dot"), np.dot, matmul_args(forms=("mm", "vm", "mv", "vv", "batch", "bad", "scalar")),
                _linalg_tol, method="dot"),
    "vecdot": Case(_ar("vecdot"), np.vecdot, inner_args(), _linalg_tol, method="vecdot"),
    "tensordot": Case(_ar("tensordot"), np.tensordot, tensordot_args(), _linalg_tol,
                      method="tensordot"),
    "inner": Case(_ar("inner"), np.inner, inner_args(), _linalg_tol, method="inner"),
    "transpose": Case(_ar("transpose"), np.transpose, transpose_args(), method="transpose"),
    "permute_dims": Case(_ar("permute_dims"), np.permute_dims, transpose_args(required=True),
                         method="permute_dims"),
    "matrix_transpose": Case(_ar("matrix_transpose"), np.matrix_transpose, one_tensor(),
                             method="matrix_transpose"),
    "reshape": Case(_ar("reshape"), np.reshape, reshape_args(), method="reshape"),
    "expand_dims": Case(_ar("expand_dims"), np.expand_dims, expand_dims_args(),
                        method="expand_dims"),
    "squeeze": Case(_ar("squeeze"), np.squeeze, squeeze_args(), method="squeeze"),
    "broadcast_to": Case(_ar("broadcast_to"), np.broadcast_to, broadcast_to_args(),
                         method="broadcast_to"),
    "concatenate": Case(_ar("concatenate"), np.concatenate, joining_args()),
    "concat": Case(_ar("concat"), np.concat, joining_args()),
    "stack": Case(_ar("stack"), np.stack, joining_args(stack=True)),
    "split": Case(_ar("split"), np.split, split_args(), method="split"),
    "rechunk": Case(_ar("rechunk"), lambda a, chunks: a,
                    st.builds(lambda x, c: Call((x, c)), tensor(), st.integers(1, 4)),
                    method="rechunk"),
    "astype": Case(_ar("astype"), lambda a, dtype: a.astype(dtype), astype_args(),
                   method="astype"),
    "sort": Case(_ar("sort"), _sort_np, sort_args(), method=None),
    "argsort": Case(_ar("argsort"), _argsort_np, sort_args(), check=_argsort_check,
                    method="argsort"),
    "unique": Case(_ar("unique"), _zeros_folded(np.unique), unique_args(), method="unique"),
    # (NumPy >= 2.3's unique_values/unique_counts leave the order unspecified, as the array
    # API does; ares sorts, as np.unique)
    "unique_values": Case(_ar("unique_values"), _zeros_folded(np.unique),
                          unique_args(counts=False), method="unique_values"),
    "unique_counts": Case(_ar("unique_counts"),
                          _zeros_folded(lambda a: tuple(np.unique(a, return_counts=True))),
                          unique_args(counts=False), method="unique_counts"),
    "unique_all": Case(_ar("unique_all"), _zeros_folded(lambda a: tuple(np.unique_all(a))),
                       unique_args(counts=False), method=None),
    "unique_inverse": Case(_ar("unique_inverse"),
                           _zeros_folded(lambda a: tuple(np.unique_inverse(a))),
                           unique_args(counts=False), method=None),
    "searchsorted": Case(_ar("searchsorted"), np.searchsorted, searchsorted_args(),
                         method="searchsorted"),
    "take": Case(_ar("take"), np.take, take_args(), method="take"),
    "compress": Case(_ar("compress"), np.compress, compress_args()),
    "nonzero": Case(_ar("nonzero"), np.nonzero,
                    st.builds(lambda x: Call((x,)), tensor(min_dims=1)), method="nonzero"),
    # creation (NumPy has no `chunks`)
    "ones": Case(_ar("ones"), _unchunked(np.ones), create()),
    "zeros": Case(_ar("zeros"), _unchunked(np.zeros), create()),
    "empty": Case(_ar("empty"), _unchunked(np.empty), create(), check=_empty_check),
    "full": Case(_ar("full"), _unchunked(np.full), create(fill=True)),
    "ones_like": Case(_ar("ones_like"), np.ones_like, like_args(), chunks=_like_chunks),
    "zeros_like": Case(_ar("zeros_like"), np.zeros_like, like_args(), chunks=_like_chunks),
    "empty_like": Case(_ar("empty_like"), np.empty_like, like_args(), check=_empty_check,
                       chunks=_like_chunks),
    "full_like": Case(_ar("full_like"), np.full_like, like_args(fill=True), chunks=_like_chunks),
    "arange": Case(_ar("arange"), _unchunked(np.arange), arange_args(), ulp),
    "linspace": Case(_ar("linspace"), _unchunked(np.linspace), linspace_args(), ulp),
    "asarray": Case(_ar("asarray"), np.asarray, asarray_args()),
    "from_numpy": Case(_ar("from_numpy"), lambda a, chunks=None: np.asarray(a),
                       st.builds(lambda x, c: Call((x.a,), {"chunks": c} if c else {}),
                                 tensor(), st.one_of(st.none(), st.integers(1, 4)))),
    # data type functions
    "result_type": Case(_ar("result_type"), np.result_type, result_type_args()),
    "can_cast": Case(_ar("can_cast"), np.can_cast, dtype_pair()),
    # (the array API takes an array too; NumPy's finfo/iinfo only its dtype)
    "finfo": Case(_ar("finfo"), lambda t: np.finfo(t.dtype if isinstance(t, np.ndarray) else t),
                  st.builds(lambda d: Call((d,)), dtype_or_tensor())),
    "iinfo": Case(_ar("iinfo"), lambda t: np.iinfo(t.dtype if isinstance(t, np.ndarray) else t),
                  st.builds(lambda d: Call((d,)), dtype_or_tensor())),
    "isdtype": Case(_ar("isdtype"), np.isdtype, isdtype_args()),
})


# -- Tensor: operators, properties, conversions ----------------------------------------------

# Forward binary operators: `x op y` with x a tensor.
OPERATORS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
    "__mod__": operator.mod, "__pow__": operator.pow, "__and__": operator.and_,
    "__or__": operator.or_, "__xor__": operator.xor, "__lshift__": operator.lshift,
    "__rshift__": operator.rshift, "__eq__": operator.eq, "__ne__": operator.ne,
    "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge,
}
_REFLECTED = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lshift", "rshift")
_POW_TOL = {"__pow__": ulp, "__rpow__": ulp}

for _n, _op in OPERATORS.items():
    CASES[f"Tensor.{_n}"] = Case(_op, _op, two_operands(forms=("tt", "tt", "ts", "tz", "tn")),
                                 _POW_TOL.get(_n))
# Python's divmod: (x // y, x % y) as NumPy's np.divmod.
CASES["Tensor.__divmod__"] = Case(divmod, divmod, two_operands(forms=("tt", "tt", "ts", "tz", "tn")))
CASES["Tensor.__rdivmod__"] = Case(divmod, divmod, two_operands(forms=("st",)))
for _short in _REFLECTED:
    _op = OPERATORS[f"__{_short}__"]
    # `scalar op x` is the only way Python reaches x.__rop__ (an ndarray on the left goes
    # through __array_ufunc__, below)
    CASES[f"Tensor.__r{_short}__"] = Case(_op, _op, two_operands(forms=("st",)),
                                          _POW_TOL.get(f"__r{_short}__"))


@st.composite
def _matmul_operator(draw, reflected=False):
    call = draw(matmul_args(forms=("mm", "vm", "mv", "vv", "batch", "bad")))
    if reflected:
        return Call((call.args[0].a, call.args[1]))  # ndarray @ tensor: __rmatmul__/ufunc
    return call


CASES["Tensor.__matmul__"] = Case(operator.matmul, operator.matmul, _matmul_operator(), _linalg_tol)
CASES["Tensor.__rmatmul__"] = Case(operator.matmul, operator.matmul, _matmul_operator(True),
                                   _linalg_tol)

for _n, _f in {"__neg__": operator.neg, "__pos__": operator.pos, "__abs__": abs,
               "__invert__": operator.invert}.items():
    CASES[f"Tensor.{_n}"] = Case(_f, _f, one_tensor())

_CONVERSIONS = {"__bool__": bool, "__int__": int, "__float__": float, "__complex__": complex,
                "__index__": operator.index,
                "__len__": len, "__array__": np.asarray, "__iter__": list}
for _n, _f in _CONVERSIONS.items():
    CASES[f"Tensor.{_n}"] = Case(_f, _f, small_tensor())


@st.composite
def _contains_args(draw):
    x = draw(tensor(max_dims=2, max_side=3))
    return Call((x, draw(py_scalar(x.a.dtype))))


CASES["Tensor.__contains__"] = Case(operator.contains, operator.contains, _contains_args())
CASES["Tensor.__getitem__"] = Case(operator.getitem, operator.getitem, getitem_args())
CASES["Tensor.T"] = Case(lambda x: x.T, lambda a: a.T, one_tensor())
CASES["Tensor.mT"] = Case(lambda x: x.mT, lambda a: a.mT, one_tensor())
# NumPy's properties (the functions `real`/`imag` are in UNARY, without a method form)
CASES["Tensor.real"] = Case(lambda x: x.real, lambda a: a.real, one_tensor())
CASES["Tensor.imag"] = Case(lambda x: x.imag, lambda a: a.imag, one_tensor())


@st.composite
def _data_dependent(draw):
    """A tensor, its masked selection, or its unique values: whose length the data decides."""
    x = draw(tensor(max_dims=2, max_side=4))
    return Call((x, draw(st.sampled_from(["as is", "mask", "unique"]))))


def _derive(x, how):
    if how == "mask":
        return x[x == x]   # NaN-free elements: a length only the data knows
    if how == "unique":
        return (ar if not isinstance(x, np.ndarray) else np).unique(x)
    return x


def unknown_or_equal(got, want, none_ok=True) -> bool:
    """``got`` is ``want``, or None where unknown (the array API's shape entries and size)."""
    if none_ok and got is None:
        return True
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(
            unknown_or_equal(g, w, none_ok) for g, w in zip(got, want))
    return type(got) is type(want) and got == want


def _metadata_check(none_ok):
    def check(got, want, call):
        assert unknown_or_equal(got, want, none_ok and call.args[1] != "as is"), (
            f"{got!r} != {want!r}" + (" (None is fine while the data decides it)" if none_ok
                                      else ""))
    return check


# `.shape`, `.size`, `.nbytes` and `len` count a length that depends on the data: NumPy's
# numbers always (`known_shape` is the one that may say None).
for _attr, _get, _none_ok in (("shape", lambda v: v.shape, False), ("ndim", lambda v: v.ndim, False),
                              ("size", lambda v: v.size, False), ("nbytes", lambda v: v.nbytes, False),
                              ("dtype", lambda v: v.dtype, False), ("len", len, False)):
    # (the default argument binds this loop's getter)
    CASES[f"Tensor.{_attr}"] = Case(lambda x, how, g=_get: g(_derive(x, how)),
                                    lambda a, how, g=_get: g(_derive(a, how)), _data_dependent(),
                                    check=_metadata_check(_none_ok))

# `np.<ufunc>(tensor, ...)` and `ndarray op tensor`: NumPy hands them to Tensor.__array_ufunc__.
_UFUNC_CALLS = {
    "np.add(x, y)": lambda x, y: np.add(x, y),
    "ndarray & x": lambda x, y: y & x if isinstance(y, np.ndarray) else np.bitwise_and(x, y),
    "np.bitwise_or(x, y)": lambda x, y: np.bitwise_or(x, y),
    "np.less(y, x)": lambda x, y: np.less(y, x),
    "np.multiply(x, y)": lambda x, y: np.multiply(x, y),
    "np.exp(x)": lambda x, y: np.exp(x),
    "np.add.reduce(x)": lambda x, y: np.add.reduce(x),
    "np.maximum.reduce(x, axis=-1)": lambda x, y: np.maximum.reduce(x, axis=-1),
}


@st.composite
def _ufunc_args(draw):
    call = draw(two_operands(forms=("tn",)))
    return Call((call.args[0], call.args[1], draw(st.sampled_from(sorted(_UFUNC_CALLS)))))


CASES["Tensor.__array_ufunc__"] = Case(lambda x, y, f: _UFUNC_CALLS[f](x, y),
                                       lambda x, y, f: _UFUNC_CALLS[f](x, y), _ufunc_args(), ulp)

# NumPy functions on tensors: Tensor.__array_function__ (ar's function, or NumPy on the values).
_ARRAY_FUNCTIONS = {
    "np.sum(x, axis=0)": lambda x: np.sum(x, axis=0),
    "np.mean(x)": lambda x: np.mean(x),
    "np.concatenate([x, x])": lambda x: np.concatenate([x, x]),
    "np.where(x == x, x, 0)": lambda x: np.where(x == x, x, 0),
    "np.transpose(x)": lambda x: np.transpose(x),
    "np.cumsum(x)": lambda x: np.cumsum(x),
    "np.median(x)": lambda x: np.median(x),
    "np.flip(x)": lambda x: np.flip(x),
}


@st.composite
def _array_function_args(draw):
    return Call((draw(tensor(mode="moderate", min_dims=1)),
                 draw(st.sampled_from(sorted(_ARRAY_FUNCTIONS)))))


CASES["Tensor.__array_function__"] = Case(lambda x, f: _ARRAY_FUNCTIONS[f](x),
                                          lambda a, f: _ARRAY_FUNCTIONS[f](a),
                                          _array_function_args(), summed)


# -- ar.random: no NumPy value to compare with; NumPy's generator for the shape and dtype -----

def _random_check(low, high):
    def check(got, want, call):
        got, want = np.asarray(got), np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
        if low is not None:
            assert ((got >= low) & (got < high)).all(), f"values outside [{low}, {high})"
    return check


@st.composite
def _random_size(draw, varargs=False, extra=()):
    shape = draw(shapes(max_dims=3, max_side=4))
    args, kw = shape if varargs and draw(st.booleans()) else (shape,), {}
    if extra:
        args, kw = (), {"size": shape}
    kw["seed"] = draw(st.integers(0, 2**32))
    if draw(st.booleans()):
        kw["chunks"] = draw(chunks_for(shape))
    kw.update({k: draw(v) for k, v in extra})
    return Call(tuple(args), kw)


_rng = np.random.default_rng(0)
_RANDOM = {
    # name: (NumPy's equivalent, form, value range)
    "rand": (lambda *shape, **kw: _rng.random(shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape),
             _random_size(varargs=True), (0.0, 1.0)),
    "random": (lambda size, **kw: _rng.random(size), _random_size(), (0.0, 1.0)),
    "random_sample": (lambda size, **kw: _rng.random(size), _random_size(), (0.0, 1.0)),
    "randn": (lambda *shape, **kw: _rng.standard_normal(shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape),
              _random_size(varargs=True), (None, None)),
    "standard_normal": (lambda size, **kw: _rng.standard_normal(size), _random_size(),
                        (None, None)),
    "uniform": (lambda size=(), low=0.0, high=1.0, **kw: _rng.uniform(low, high, size),
                _random_size(extra=(("low", st.just(-2.0)), ("high", st.just(3.0)))),
                (-2.0, 3.0)),
    "normal": (lambda size=(), loc=0.0, scale=1.0, **kw: _rng.normal(loc, scale, size),
               _random_size(extra=(("loc", st.just(1.0)), ("scale", st.just(2.0)))),
               (None, None)),
}
for _n, (_f, _forms, (_lo, _hi)) in _RANDOM.items():
    CASES[f"random.{_n}"] = Case((lambda n: lambda *a, **k: getattr(ar.random, n)(*a, **k))(_n),
                                 _f, _forms, check=_random_check(_lo, _hi))


# -- names that are not numeric functions: what is checked instead ----------------------------

# name: (why it is not a numeric function, what test_api_differential checks)
NOT_NUMERIC = {
    "Tensor": ("the tensor class", "its own names are covered one by one (Tensor.*)"),
    "TaskError": ("the exception of a failed task", "a RuntimeError subclass, raised by a failing task"),
    "connect": ("switches to a remote cluster", "the cluster half of this file connects with it"),
    "start": ("starts the embedded engine", "every in-process test starts one with it"),
    "close": ("stops the engine", "ar.close() then ar.engine() starts a new one"),
    "engine": ("the current engine", "its kind is 'embedded' after start()"),
    "set_progress": ("progress bar switch", "accepts True/False/None and computing still works"),
    "explain": ("prints the plan", "returns a non-empty str naming the tensor's op"),
    "compute": ("evaluates tensors", "used by every case; dask's semantics checked by "
                "test_compute_follows_dask"),
    "array_api_coverage": ("reports coverage", "every 'have' name is an attribute of ar, no "
                           "'missing' one is"),
    "random": ("the module ar.random", "its names are covered one by one (random.*)"),
    "fft": ("the module ar.fft", "test_fft.py checks each of its 14 functions against numpy.fft "
            "(shapes, chunkings, n, axes, every norm)"),
    "linalg": ("the module ar.linalg", "test_linalg.py checks each of its functions against "
               "numpy.linalg (reconstruction, orthogonality, singular values)"),
    "newaxis": ("None, as np.newaxis", "is None"),
    "nan": ("constant", "is NaN"), "inf": ("constant", "== np.inf"),
    "pi": ("constant", "== np.pi"), "e": ("constant", "== np.e"),
    "from_npy": ("reads a file", "test_file_round_trips: to_npy then from_npy"),
    "to_npy": ("writes a file", "test_file_round_trips"),
    "from_zarr": ("reads a Zarr array", "test_file_round_trips: to_zarr then from_zarr"),
    "to_zarr": ("writes a Zarr array", "test_file_round_trips"),
    "cli": ("the console command's module (present once imported)", "has main()"),
    "annotations": ("`from __future__ import annotations` leaking into the namespace (should be "
                    "hidden)", "is the __future__ feature"),
    "shuffle_bench": ("a benchmark source of the engine", "callable"),
    "rand": ("the core's random source (ar.random.rand is the public one)", "callable"),
    "randn": ("the core's random source (ar.random.randn is the public one)", "callable"),
    # Tensor
    "Tensor.compute": ("evaluates", "used by every case"),
    "Tensor.explain": ("prints the plan", "prints a non-empty text"),
    "Tensor.chunks": ("chunk lengths", "test_chunk_metadata: dask's normalized chunks"),
    "Tensor.chunksize": ("largest chunk per dimension", "test_chunk_metadata"),
    "Tensor.npartitions": ("number of chunks", "test_chunk_metadata"),
    "Tensor.device": ("the array API's device", "== 'cpu'"),
    "Tensor.__repr__": ("text", "names the shape and dtype"),
    "Tensor.__dir__": ("lists the methods", "includes every core function it offers"),
    "Tensor.to_device": ("the array API's device move", "x.to_device('cpu') is x's value"),
    "Tensor.to_npy": ("writes a file", "test_file_round_trips"),
    "Tensor.to_zarr": ("writes a Zarr array", "test_file_round_trips"),
    "Tensor.__hash__": ("None: `==` is elementwise", "hash(x) raises TypeError, as an ndarray's"),
    "Tensor.__getattr__": ("every core function as a method", "each case's method form "
                           "(Case.method); test_every_public_name_is_covered lists those "
                           "without one"),
    "Tensor.__array_priority__": ("NumPy defers `ndarray op x` to x", "the "
                                  "Tensor.__array_ufunc__ and Tensor.__r*__ cases"),
    "random.seed": ("reseeds the seeds of calls without seed=", "same seed, same draws"),
    "random.Tensor": ("ar.Tensor imported into ar.random (should be hidden)", "is ar.Tensor"),
    "random.apply": ("an internal helper imported into ar.random (should be hidden)", "callable"),
    "random.annotations": ("the __future__ import (should be hidden)", "is the __future__ feature"),
}
for _d in DTYPES:
    NOT_NUMERIC[_d] = ("a dtype", "== np.dtype(name); every case draws it")
NOT_NUMERIC["bool"] = ("a dtype", "== np.dtype('bool'); every case draws it")
NOT_NUMERIC["Tensor.known_shape"] = (
    "the shape without computing (None for a length not yet counted)",
    "test_no_silent_divergence.py: None before x[mask].shape counts it, the count after")
for _name in ("map_blocks", "blockwise", "map_overlap", "apply_gufunc", "reduction",
              "Tensor.map_blocks", "Tensor.map_overlap"):
    NOT_NUMERIC[_name] = ("runs a user's Python function on blocks",
                          "test_map_blocks.py: each against NumPy on the whole array, in "
                          "process and on a cluster")
for _d in ("complex64", "complex128"):
    NOT_NUMERIC[_d] = ("a complex dtype", "== np.dtype(name); test_complex.py checks its values")
NOT_NUMERIC["Tensor.visualize"] = (
    "draws the chunk graph", "test_notebook.py: an SVG naming the tensor's ops, .dot text")
NOT_NUMERIC["Tensor.compute_chunk_sizes"] = (
    "resolves a data-dependent length by computing",
    "test_no_silent_divergence.py: the shape and chunks after it are NumPy's and the values "
    "survive")

# Core functions that Tensor.__getattr__ also offers as methods but that make no sense with the
# tensor as first argument (creation and file functions): listed, not run as methods.
NOT_METHODS = {
    "zeros", "ones", "full", "empty", "arange", "linspace", "rand", "randn", "from_npy",
    "from_zarr", "shuffle_bench", "concatenate", "concat", "stack", "sort",
    "asarray", "result_type", "can_cast", "finfo", "iinfo", "isdtype",
    "to_npy", "to_zarr",  # test_file_round_trips calls x.to_npy(path)
}


# -- accepted differences ----------------------------------------------------------------------

# Where ares answers differently from NumPy on purpose (checked by `same` in the test).
KNOWN_DEVIATIONS = {
    "the sign of unique's zero": (
        "-0.0 and 0.0 are one value to unique (NumPy finds them equal); ares returns it as 0.0, "
        "NumPy as whichever zero its sort puts first (-0.0 when every zero is -0.0). The test "
        "compares unique's zero as +0.0."),
    "a result dtype ares lacks": (
        "NumPy answers some calls in a dtype ares does not have (float16 for sqrt/exp/sin... of "
        "bools and 8-bit integers): ares answers in a wider dtype of the same kind "
        "(float64 for bools, float32 for 8-bit integers), holding NumPy's values within "
        "NumPy's precision; or refuses with TypeError/ValueError."),
}


# -- what ares refuses although NumPy has an answer --------------------------------------------

class _EveryName:
    """Matches every public name (an entry about an argument, not a function)."""

    def __contains__(self, name):
        return True


_EVERY_NAME = _EveryName()


def _past_int64(v) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)
            and not -2**63 <= v < 2**63)


@dataclass
class Unsupported:
    names: tuple
    when: Callable   # (call, exception) -> bool
    reason: str


_NO_KERNEL = (("floordiv", "floor_divide"), ("mod", "remainder"), ("lshift", "left_shift"),
              ("rshift", "right_shift"))

def _compress_rows(call):
    """How many rows `compress(condition, x, axis=0)` of an N-D `x` selects from (None: it
    selects elements, not rows)."""
    cond, x = call.args[0], call.args[1].a
    if x.ndim < 2 or call.kwargs.get("axis") is None:
        return None
    return min(len(cond.a if isinstance(cond, T) else cond), x.shape[0])


KNOWN_UNSUPPORTED = [
    Unsupported(("compress",),
                lambda c, e: _compress_rows(c) is not None and _compress_rows(c) <= 1
                and "compute_chunk_sizes" in str(e),
                "rows of an N-D tensor selected from at most one row (x[mask_1d]): the "
                "reshape that gives the rows their shape cannot tell one selected row from a "
                "reshape to one row before the stage runs (select/tensor.rs, Op::Reshape)"),
    *(Unsupported((f"Tensor.__{op}__", f"Tensor.__r{op}__"),
                  lambda c, e, fn=fn: isinstance(e, TypeError) and not ar._ares.is_function(fn),
                  f"the core has no {fn} kernel (yet): the operator raises TypeError")
      for op, fn in _NO_KERNEL),
    Unsupported(tuple(n for f in ("cumsum", "cumprod", "argmin", "argmax", "squeeze")
                      for n in (f, f"x.{f}(...)")),
                lambda c, e: c.args[0].a.ndim == 0 and (
                    c.kwargs.get("axis") is not None or len(c.args) > 1),
                "NumPy's legacy quirk: axis 0 or -1 of a 0-d array is accepted (as if 1-d)"),
    Unsupported(("Tensor.shape", "Tensor.size", "Tensor.nbytes", "Tensor.len"),
                lambda c, e: c.args[1] != "as is",
                "the length of x[mask] and unique(x) is known only once computed: an error "
                "until then (dask answers nan) instead of a wrong upper bound"),
    Unsupported(_EVERY_NAME,
                lambda c, e: isinstance(e, OverflowError) and any(
                    _past_int64(v) for v in (*c.args, *c.kwargs.values())),
                "a Python integer past int64's range (a uint64 bound): the expression "
                "language's numbers are int64, so it is an OverflowError (branch dtypes)"),
]


# -- branch daskconv: dask's conventions (test_dask_conventions.py checks them in full) -------
CASES["from_array"] = Case(
    _ar("from_array"), lambda a, chunks=None: np.asarray(a),
    st.builds(lambda x, c: Call((x.a,), {"chunks": c} if c else {}),
              tensor(), st.one_of(st.none(), st.integers(1, 4), st.just(-1), st.just("auto"))))
NOT_NUMERIC["persist"] = (
    "keeps results on the workers", "test_dask_conventions.py: the values equal NumPy's, the "
    "source is not recomputed (it is gone), the workers' bytes drop once freed")
NOT_NUMERIC["Tensor.persist"] = NOT_NUMERIC["persist"]
# -- branch apifuncs: the array API's rearranging, constructing and counting functions ---------
from api_cases_rearrange import REARRANGE_CASES, REARRANGE_NOT_NUMERIC  # noqa: E402

CASES.update(REARRANGE_CASES)
NOT_NUMERIC.update(REARRANGE_NOT_NUMERIC)
# -- NumPy's everyday functions (branch numpyfuncs) --------------------------------------------
# test_numpy_functions.py checks each one more closely (NaN patterns, chunkings, errors).

for _n, _mode, _tol, _tuple, _extra in (
        ("nansum", "moderate", summed, True, None), ("nanprod", "factors", products, True, None),
        ("nanmean", "moderate", summed, True, None), ("nanmin", "full", unsigned_zero, True, None),
        ("nanmax", "full", unsigned_zero, True, None),
        ("nanvar", "moderate", moments, True, "ddof"),
        ("nanstd", "moderate", lambda c, w: moments(c, w, root=True), True, "ddof"),
        ("nanargmin", "full", None, False, None), ("nanargmax", "full", None, False, None),
        ("median", "full", None, True, None)):
    CASES[_n] = Case(_ar(_n), _np(_n), _reduction_form(_mode, _tuple, _extra), _tol)


@st.composite
def _quantile_args(draw, scale=1.0):
    """``(a, q)``, q a float, an int 0/1, or a list of them, with an axis form and keepdims."""
    x = draw(tensor(tuple(d for d in DTYPES if d != "bool")))
    q = draw(st.one_of(st.floats(0, 1), st.sampled_from([0, 1]),
                       st.lists(st.floats(0, 1), min_size=1, max_size=3)))
    q = [v * scale for v in q] if isinstance(q, list) else (q * scale if isinstance(q, float) else q)
    args, kwargs = draw(axis_form(x.a.ndim))
    return Call((x, q) + args, kwargs)


CASES["quantile"] = Case(_ar("quantile"), _np("quantile"), _quantile_args())
CASES["percentile"] = Case(_ar("percentile"), _np("percentile"), _quantile_args(100.0))


@st.composite
def _histogram_args(draw):
    x = draw(tensor(("float64", "int64"), mode="finite", min_dims=1))
    bins = draw(st.one_of(st.integers(1, 5),
                          st.lists(st.integers(-50, 50), min_size=2, max_size=5, unique=True)
                          .map(sorted)))
    kwargs = {"range": (-100.0, 100.0)} if draw(st.booleans()) or not x.a.size else {}
    return Call((x, bins), kwargs)


CASES["histogram"] = Case(_ar("histogram"), _np("histogram"), _histogram_args(), ulp)


@st.composite
def _bincount_args(draw):
    a = draw(hnp.arrays(np.int64, st.integers(0, 8), elements=st.integers(0, 9)))
    kwargs = {"minlength": draw(st.integers(0, 12))} if draw(st.booleans()) else {}
    if draw(st.booleans()):
        kwargs["weights"] = T(np.linspace(-2, 2, a.size), draw(chunks_for(a.shape)))
    return Call((T(a, draw(chunks_for(a.shape))),), kwargs)


CASES["bincount"] = Case(_ar("bincount"), _np("bincount"), _bincount_args(), summed)


@st.composite
def _isin_args(draw):
    x = draw(tensor(("int64", "float64"), mode="finite"))
    test = draw(hnp.arrays(np.int64, st.integers(0, 5), elements=st.integers(-3, 3)))
    test = T(test, draw(chunks_for(test.shape))) if draw(st.booleans()) else test.tolist()
    return Call((x, test), {"invert": draw(st.booleans())})


CASES["isin"] = Case(_ar("isin"), _np("isin"), _isin_args())


@st.composite
def _einsum_args(draw):
    subscripts, shapes_ = draw(st.sampled_from([
        ("ij,jk->ik", [(3, 4), (4, 2)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]),
        ("bij,bjk->bik", [(2, 3, 2), (2, 2, 3)]), ("i,j->ij", [(3,), (2,)]),
        ("ij,ij->i", [(2, 3), (2, 3)]), ("...i,i->...", [(2, 3), (3,)])]))
    dtype = draw(st.sampled_from(["float64", "int64"]))
    ops = [T(draw(hnp.arrays(np.dtype(dtype), s, elements=elements(dtype, "finite")
                             if dtype == "float64" else st.integers(-9, 9))),
             draw(chunks_for(s))) for s in shapes_]
    return Call((subscripts, *ops))


CASES["einsum"] = Case(_ar("einsum"), _np("einsum"), _einsum_args(), _linalg_tol)


@st.composite
def _pad_args(draw):
    x = draw(tensor(min_dims=1, min_side=1, max_side=4))
    mode = draw(st.sampled_from(["constant", "edge", "reflect", "symmetric", "wrap"]))
    width = draw(st.one_of(st.integers(0, 5), st.tuples(st.integers(0, 5), st.integers(0, 5))))
    return Call((x, width), {"mode": mode})


CASES["pad"] = Case(_ar("pad"), _np("pad"), _pad_args())


@st.composite
def _block_args(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rows = draw(st.integers(1, 2))
    a = draw(tensor((dtype,), shape=(2, draw(st.integers(1, 3)))))
    b = draw(tensor((dtype,), shape=(2, draw(st.integers(1, 3)))))
    return Call(([[a, b]] * rows,))


CASES["block"] = Case(_ar("block"), _np("block"), _block_args())
CASES["ravel"] = Case(_ar("ravel"), _np("ravel"), one_tensor(), method="ravel")
CASES["copy"] = Case(_ar("copy"), _np("copy"), one_tensor(), method="copy")
CASES["Tensor.ravel"] = Case(lambda x: x.ravel(), lambda a: a.ravel(), one_tensor())
CASES["Tensor.flatten"] = Case(lambda x: x.flatten(), lambda a: a.flatten(), one_tensor())
CASES["Tensor.copy"] = Case(lambda x: x.copy(), lambda a: a.copy(), one_tensor())
CASES["Tensor.item"] = Case(lambda x: x.item(), lambda a: a.item(), small_tensor())
CASES["Tensor.tolist"] = Case(lambda x: x.tolist(), lambda a: a.tolist(), small_tensor())

KNOWN_UNSUPPORTED += [
    Unsupported(("median", "quantile", "percentile", "Tensor.__array_function__"),
                lambda c, e: "empty" in str(e) and "quantile" in str(e),
                "an empty axis is refused (NumPy's median answers NaN with a warning; its "
                "quantile raises IndexError)"),
    Unsupported(("nanargmin", "nanargmax"),
                lambda c, e: c.args[0].a.ndim == 0 and (
                    c.kwargs.get("axis") is not None or len(c.args) > 1),
                "NumPy's legacy quirk: axis 0 or -1 of a 0-d array is accepted (as if 1-d)"),
]


# -- found by the merged differential run (stop 39) ------------------------------------------
KNOWN_UNSUPPORTED += [
    Unsupported(("clip", "x.clip(...)"),
                lambda c, e: isinstance(e, OverflowError) and "out of bounds" in str(e),
                "a Python integer bound outside an integer tensor's range is an OverflowError "
                "even where the other bound is a float (NumPy converts both to float64 "
                "first): clip applies its bounds one at a time, each checked as NEP 50 says"),
    Unsupported(("take", "x.take(...)"),
                lambda c, e: "out of bounds" in str(e) and 0 in c.args[0].a.shape,
                "an index into an empty tensor is refused even when no element would be "
                "read (NumPy returns an empty result)"),
]
