"""The lazy ``Tensor`` and the conversion of Python arguments for the native module.

A ``Tensor`` wraps a handle of the native module (``_ares.Tensor``: shape and dtype are known,
nothing is computed) and the source files it reads (``from_numpy`` spools arrays to files that
must outlive every tensor built from them). Every function call goes through ``apply``: the
arguments become what the expression language takes, the core validates them exactly as in an
``ares run`` program, and the result is wrapped again.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _ares

# dask's name for the chunking argument; the core calls it `chunk`.
_KEYWORD_ALIASES = {"chunks": "chunk"}


def dtype_name(dtype) -> str:
    """A dtype given as NumPy does (``np.float64``, ``"int64"``, ``float``, ``ar.bool``)."""
    if isinstance(dtype, str):
        return np.dtype(dtype).name
    if dtype is float:
        return "float64"
    if dtype is int:
        return "int64"
    if dtype is bool:
        return "bool"
    return np.dtype(dtype).name


class _Args:
    """Arguments converted for the native module, collecting the spool files they read."""

    def __init__(self):
        self.keep: frozenset = frozenset()

    def convert(self, value, key=None):
        if isinstance(value, Tensor):
            self.keep |= value._keep
            return value._handle
        if key == "dtype" and value is not None:
            return dtype_name(value)
        if isinstance(value, (bool, int, float, str)) or value is None:
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, np.ndarray):
            if value.ndim == 0:
                return value.item()
            return self.convert(_numpy_source(value))
        if isinstance(value, (tuple, list)):
            return tuple(self.convert(v) for v in value)
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            return float(value)
        if isinstance(value, (np.dtype, type)):
            return dtype_name(value)
        if isinstance(value, numbers.Complex):
            raise TypeError("ares has no complex Python numbers in expressions yet: make a "
                            "complex tensor (ar.asarray(z, dtype='complex128')) and use it instead")
        raise TypeError(f"ares cannot take a {type(value).__name__} argument")

    def wrap(self, result):
        if isinstance(result, _ares.Tensor):
            return Tensor(result, self.keep)
        if isinstance(result, tuple):
            return tuple(self.wrap(r) for r in result)
        return result


def _numpy_source(array):
    from ._numpy import from_numpy

    return from_numpy(array)


# The functions whose positional arguments are operands (broadcast and promoted together):
# a NumPy scalar or 0-d array there is strong (NEP 50), not a weak Python number.
ELEMENTWISE = frozenset("""
    negative positive abs absolute sqrt exp log sin cos isnan isinf isfinite sign floor ceil
    invert bitwise_not bitwise_invert logical_not add subtract multiply divide true_divide
    power pow maximum minimum equal not_equal less less_equal greater greater_equal
    bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift left_shift
    right_shift logical_and logical_or logical_xor where clip remainder mod floor_divide
    acos arccos acosh arccosh asin arcsin asinh arcsinh atan arctan atanh arctanh cosh sinh
    tan tanh expm1 log1p log2 log10 trunc round rint square reciprocal signbit conj conjugate real
    imag atan2 arctan2 hypot logaddexp copysign nextafter
""".split())


def apply(name: str, args=(), kwargs=None):
    """Calls the core's function ``name`` (validated there) and wraps the result."""
    conv = _Args()
    if name in ELEMENTWISE:
        args = tuple(strong(a) for a in args)
        partner = next((a for a in args if isinstance(a, Tensor)), None)
        if partner is not None:
            args = tuple(weak_complex(a, partner) for a in args)
    pos = tuple(conv.convert(a) for a in args)
    kw = {}
    for k, v in (kwargs or {}).items():
        k = _KEYWORD_ALIASES.get(k, k)
        kw[k] = conv.convert(v, k)
    return conv.wrap(_ares.call_function(name, pos, kw))


def strong(value):
    """A NumPy scalar or 0-d array operand as a 0-d tensor of its dtype: NumPy 2 (NEP 50)
    treats ``np.float64(1.5)`` as a float64 array, not as a weak Python float, so
    ``x_float32 + np.float64(1.5)`` is float64 while ``x_float32 + 1.5`` stays float32."""
    if isinstance(value, (np.generic, np.ndarray)) and value.ndim == 0 \
            and value.dtype.kind in "biufc":
        from ._numpy import from_numpy

        return from_numpy(np.asarray(value))
    return value


def weak_complex(value, partner: "Tensor"):
    """A Python complex beside a tensor (NEP 50: a weak scalar) as a 0-d tensor of the complex
    dtype NumPy 2 gives the pair: complex64 beside float32 and complex64, else complex128
    (``x_float32 * 1j`` is complex64, ``x_int64 + (1+2j)`` complex128)."""
    if not isinstance(value, complex) or isinstance(value, np.generic):
        return value
    narrow = partner.dtype in (np.float32, np.complex64)
    from ._numpy import from_numpy

    return from_numpy(np.asarray(value, dtype=np.complex64 if narrow else np.complex128))


def binary(name: str, a, b):
    conv = _Args()
    a, b = strong(a), strong(b)
    if isinstance(a, Tensor):
        b = weak_complex(b, a)
    if isinstance(b, Tensor):
        a = weak_complex(a, b)
    return conv.wrap(_ares.binary(name, conv.convert(a), conv.convert(b)))


_FUNCTIONS: dict[str, bool] = {}


def is_function(name: str) -> bool:
    """Whether the core has a function ``name`` (asked once, then cached)."""
    known = _FUNCTIONS.get(name)
    if known is None:
        known = _FUNCTIONS[name] = not name.startswith("_") and _ares.is_function(name)
    return known


class Tensor:
    """A lazily evaluated n-dimensional array, computed by ``compute()``."""

    __slots__ = ("_handle", "_keep", "_chunks", "_length", "__weakref__")
    # NumPy defers to these operators (`np_array + tensor` stays lazy).
    __array_priority__ = 20

    def __init__(self, handle, keep=frozenset()):
        self._handle = handle
        self._keep = keep
        self._chunks = None
        self._length = None

    def _copy(self) -> "Tensor":
        """A copy: another tensor of the same graph (nothing is computed or moved). The
        graph is immutable, but a tensor is not (``x[key] = value`` rebinds it to a new
        graph), so what NumPy copies must be another tensor, which keeps the values when
        ``x`` is assigned into later."""
        twin = Tensor(self._handle, self._keep)
        twin._length = self._length
        return twin

    # -- metadata -------------------------------------------------------------------------
    # The length of `x[mask]` and `unique(x)` (and of what is computed element by element
    # from them) depends on the data: the core plans with an upper bound, which must never
    # reach the user as if it were the length. `.shape`, `len`, `.size` and `.nbytes` give
    # the real length, counted by running the stages it depends on (a count: the values stay
    # where they are, and the count is kept on the tensor, so it runs once), as NumPy gives
    # it; what only describes the tensor never runs anything: `repr`, the notebook view and
    # `.chunks` (`nan` where unknown, as in dask) show `?`, and `known_shape` has `None` for
    # the length (the array API's unknown dimension) until it is counted.
    # `compute_chunk_sizes()` computes the values and makes every chunk length known.
    @property
    def shape(self) -> tuple:
        shape = self._handle.shape
        if self._handle.length_from_data:
            return (self._resolved_length(),) + tuple(shape[1:])
        return shape

    @property
    def known_shape(self) -> tuple:
        """The shape without computing anything: ``None`` for a length that depends on the
        data and has not been counted yet (``.shape`` counts it)."""
        shape = self._handle.shape
        if self._handle.length_from_data:
            return (self._length,) + tuple(shape[1:])
        return shape

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._handle.dtype)

    @property
    def ndim(self) -> int:
        return self._handle.ndim

    @property
    def size(self) -> int:
        if self._handle.length_from_data:
            rest = 1
            for d in self._handle.shape[1:]:
                rest *= d
            return self._resolved_length() * rest
        return self._handle.size

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def _resolved_length(self) -> int:
        """The real length of axis 0 when it depends on the data: counted by a task that
        runs the stages computing it (``sum(x ** 0)``: 1 for every row, NaN included),
        once per tensor."""
        if self._length is None:
            import ares

            # `x == x` is defined for every dtype (complex too); `** 0` makes NaN's False 1.
            ones = ares.astype(self == self, ares.float64) ** 0
            while ones.ndim > 1:
                # One per row again (0 ** 0 is 1 too, for rows of no elements).
                ones = ones.sum(axis=-1) ** 0
            self._length = int(ones.sum().compute())
        return self._length

    def compute_chunk_sizes(self) -> "Tensor":
        """dask's name: computes the tensor (running the stages its length depends on) and
        keeps its values as a tensor of known shape, in as many chunks; returns ``self``,
        whose ``.shape`` and ``.chunks`` are then numbers."""
        if not self._handle.length_from_data:
            return self
        import ares

        value = self.compute()
        try:
            parts = max(1, len(self.chunks[0]) if self.ndim else 1)
        except ValueError:
            # Several stages before it (`nonzero(x)[0]`, `v[v > 0]`): its chunks are planned
            # only as the stages run: the values kept in one chunk.
            parts = 1
        step = max(1, -(-len(value) // parts))
        known = ares.asarray(value, chunks=(step,) + tuple(value.shape[1:]))
        self._handle, self._keep, self._chunks = known._handle, known._keep, None
        self._length = len(value)
        return self

    def _require_known_length(self, what: str) -> None:
        if self._handle.length_from_data:
            source = self._handle.data_dependent_name or "x[mask]"
            raise ValueError(
                f"{what}: the length of {source} depends on the data and is not known before "
                f"it runs: call `x.compute_chunk_sizes()` first (it runs the stage), or use "
                f"`len(x)` / `x.size`, which count it"
            )

    @property
    def chunks(self) -> tuple:
        """Chunk lengths per dimension, as dask's ``chunks`` (``nan`` where unknown)."""
        if self._chunks is None:
            chunks = self._handle.chunks()
            if self._handle.length_from_data and chunks:
                chunks = (tuple(float("nan") for _ in chunks[0]),) + tuple(chunks[1:])
            self._chunks = chunks
        return self._chunks

    @property
    def chunksize(self) -> tuple:
        return tuple(max(c) if c else 0 for c in self.chunks)

    @property
    def npartitions(self) -> int:
        n = 1
        for c in self.chunks:
            n *= len(c)
        return n

    @property
    def device(self) -> str:
        return "cpu"

    def to_device(self, device, /, *, stream=None) -> "Tensor":
        check_device(device)
        if stream is not None:
            raise ValueError("to_device: ares has no streams (stream must be None)")
        return self

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        if self._handle.length_from_data:
            return self._resolved_length()
        return self._handle.shape[0]

    def __repr__(self) -> str:
        def text(dims):
            items = ["?" if d is None or d != d else str(d) for d in dims]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

        unknown = " (? = known once computed)" if self._handle.length_from_data else ""
        try:
            chunks = f"chunksize={text(self.chunksize)}, npartitions={self.npartitions}"
        except ValueError:
            # A tensor after several stages: its chunks are planned only as they run.
            chunks = "chunksize=?, npartitions=?"
        return (
            f"ares.Tensor<{self._handle.op}, shape={text(self.known_shape)}{unknown}, "
            f"dtype={self.dtype.name}, {chunks}>"
        )

    def _repr_html_(self) -> str:
        """A notebook's view: bytes, shape, chunk shape, chunk count and dtype beside an SVG of
        the chunk grid (``?`` for a length that depends on the data)."""
        from ._html import tensor_html

        return tensor_html(self)

    def visualize(self, filename=None, format=None):
        """The chunk graph (planned as ``ar.explain`` plans it): an SVG picture without
        ``filename`` (Jupyter shows it), else written there: ``.svg`` drawn without Graphviz,
        ``.dot`` as Graphviz text, other formats (``.png``, ``.pdf``) by Graphviz's ``dot``."""
        from ._visualize import visualize

        return visualize([self], filename=filename, format=format)

    # -- computing ------------------------------------------------------------------------
    def persist(self, **kwargs) -> "Tensor":
        """This tensor computed and kept on the engine's workers: a tensor reading the held
        result (``ar.persist``), freed when it is garbage-collected."""
        from ._engine import persist

        return persist(self, **kwargs)[0]

    def compute(self, **kwargs):
        """The value: a NumPy array, or a Python scalar when 0-d."""
        from ._engine import compute

        return compute(self, **kwargs)[0]

    def round(self, decimals=0) -> "Tensor":
        import ares

        return ares.round(self, decimals)

    def conj(self) -> "Tensor":
        return apply("conj", (self,))

    @property
    def real(self) -> "Tensor":
        return apply("real", (self,))

    @property
    def imag(self) -> "Tensor":
        return apply("imag", (self,))

    def clip(self, min=None, max=None) -> "Tensor":
        import ares

        return ares.clip(self, min, max)

    def take(self, indices, /, axis=None) -> "Tensor":
        import ares

        return ares.take(self, indices, axis=axis)

    def to_npy(self, path, /, *, compute=True):
        """``ar.to_npy(self, path)``: written at once (None), or lazily with ``compute=False``."""
        import ares

        return ares.to_npy(self, path, compute=compute)

    def to_zarr(self, path, /, *, chunks=None, codec="zstd", compute=True):
        """``ar.to_zarr(self, path)``: written at once (None), or lazily with ``compute=False``."""
        import ares

        return ares.to_zarr(self, path, chunks=chunks, codec=codec, compute=compute)

    def explain(self, limit: int = 50, file=None) -> None:
        """Prints what ``ares explain`` prints for this tensor."""
        from ._engine import explain

        print(explain(self, limit=limit), end="", file=file)

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError(
                "a lazy tensor has no memory to share: computing it makes a new array, so "
                "np.asarray(x, copy=False) cannot avoid a copy (use copy=None or True)"
            )
        value = np.asarray(self.compute())
        return value if dtype is None else value.astype(dtype, copy=False)

    def __bool__(self):
        return bool(self.compute())

    def __float__(self):
        return float(self.compute())

    def __complex__(self):
        return complex(self.compute())

    def __int__(self):
        return int(self.compute())

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError("only integer tensors can be indices")
        return int(self.compute())

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- the array API's protocols (branch apifuncs) ----------------------------------------
    def __array_namespace__(self, /, *, api_version=None):
        """The ``ares`` module (the array API's namespace of this tensor)."""
        import ares

        if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12",
                                                           "2024.12"):
            raise ValueError(f"ares implements the array API 2024.12, not {api_version!r}")
        return ares

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export of the computed value (computed on each call, on the CPU)."""
        from ._array_api import dlpack

        return dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device,
                      copy=copy)

    def __dlpack_device__(self):
        return (1, 0)

    # -- NumPy protocols ------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ._numpy import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from ._numpy import array_function

        return array_function(func, types, args, kwargs)

    # -- operators ------------------------------------------------------------------------
    def __add__(self, o): return binary("add", self, o)
    def __radd__(self, o): return binary("add", o, self)
    def __sub__(self, o): return binary("subtract", self, o)
    def __rsub__(self, o): return binary("subtract", o, self)
    def __mul__(self, o): return binary("multiply", self, o)
    def __rmul__(self, o): return binary("multiply", o, self)
    def __truediv__(self, o): return binary("divide", self, o)
    def __rtruediv__(self, o): return binary("divide", o, self)
    def __pow__(self, o): return binary("power", self, o)
    def __rpow__(self, o): return binary("power", o, self)
    def __matmul__(self, o): return binary("matmul", self, o)
    def __rmatmul__(self, o): return binary("matmul", o, self)
    def __eq__(self, o): return binary("equal", self, o)  # type: ignore[override]
    def __ne__(self, o): return binary("not_equal", self, o)  # type: ignore[override]
    def __lt__(self, o): return binary("less", self, o)
    def __le__(self, o): return binary("less_equal", self, o)
    def __gt__(self, o): return binary("greater", self, o)
    def __ge__(self, o): return binary("greater_equal", self, o)
    # `& | ^ ~`: bitwise on integers, logical on bools (NumPy's ufuncs); floats are refused.
    def __and__(self, o): return binary("bitwise_and", self, o)
    def __rand__(self, o): return binary("bitwise_and", o, self)
    def __or__(self, o): return binary("bitwise_or", self, o)
    def __ror__(self, o): return binary("bitwise_or", o, self)
    def __xor__(self, o): return binary("bitwise_xor", self, o)
    def __rxor__(self, o): return binary("bitwise_xor", o, self)
    def __invert__(self): return apply("invert", (self,))
    # Operators whose function the core may not have (yet): NumPy's TypeError without it.
    def __lshift__(self, o): return _optional("bitwise_left_shift", self, o)
    def __rlshift__(self, o): return _optional("bitwise_left_shift", o, self)
    def __rshift__(self, o): return _optional("bitwise_right_shift", self, o)
    def __rrshift__(self, o): return _optional("bitwise_right_shift", o, self)
    def __mod__(self, o): return _optional("remainder", self, o)
    def __rmod__(self, o): return _optional("remainder", o, self)
    def __floordiv__(self, o): return _optional("floor_divide", self, o)
    def __rfloordiv__(self, o): return _optional("floor_divide", o, self)
    def __divmod__(self, o): return _divmod(self, o)
    def __rdivmod__(self, o): return _divmod(o, self)
    def __neg__(self): return apply("negative", (self,))
    def __pos__(self):
        if self.dtype == np.bool_:
            raise TypeError("ufunc 'positive' did not contain a loop with signature matching "
                            "types bool (NumPy has no unary + for bools)")
        return self._copy()

    def __contains__(self, value) -> bool:
        return bool((self == value).any().compute())
    def __abs__(self): return apply("abs", (self,))

    __hash__ = None  # type: ignore[assignment]  # `==` is elementwise, as on NumPy arrays

    # -- indexing -------------------------------------------------------------------------
    def __getitem__(self, index):
        from ._numpyfuncs import getitem

        advanced = getitem(self, index)
        if advanced is not None:
            return advanced
        conv = _Args()
        if isinstance(index, tuple):
            index = tuple(_index_item(conv, i) for i in index)
        else:
            index = _index_item(conv, index)
        return Tensor(self._handle.getitem(index), self._keep | conv.keep)

    def __setitem__(self, key, value):
        """``x[key] = value``: this tensor becomes ``x`` with the assignment applied (see
        ``ares._array_api.assigned``); tensors built from it before keep their values."""
        from ._array_api import assigned

        new = assigned(self, key, value)
        keep = self._keep | new._keep
        self._handle, self._keep, self._chunks, self._length = new._handle, keep, None, None

    # -- methods (the array API's and NumPy's) -------------------------------------------
    @property
    def T(self) -> "Tensor":
        return apply("transpose", (self,))

    @property
    def mT(self) -> "Tensor":
        """The last two axes swapped (a stack of matrices transposed)."""
        if self.ndim < 2:
            raise ValueError("mT needs at least 2 dimensions")
        axes = tuple(range(self.ndim - 2)) + (self.ndim - 1, self.ndim - 2)
        return apply("transpose", (self, axes))

    def astype(self, dtype, copy=True, *, device=None) -> "Tensor":
        # The dtype it has: `x` itself with `copy=False`, else a copy (which keeps its values
        # when `x` is assigned into later), as NumPy.
        check_device(device)
        name = dtype_name(dtype)
        if name == self.dtype.name:
            return self._copy() if copy else self
        return apply("astype", (self, name))

    def reshape(self, *shape, copy=None) -> "Tensor":
        # Immutable tensors: a reshaped view and a reshaped copy are indistinguishable, so
        # `copy=` is honoured whatever it says.
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return apply("reshape", (self, tuple(shape)))

    def rechunk(self, chunks="auto") -> "Tensor":
        """The same values in ``chunks``: dask's spellings (a length, a tuple, ``-1`` for a
        whole axis, ``"auto"``, a byte size such as ``"100 MiB"``, every chunk length, a dict
        ``{axis: chunks}``); an axis a dict leaves out or a tuple gives as ``None`` keeps
        its chunks, as in dask's ``rechunk``."""
        from ._chunks import normalize

        return apply("rechunk", (self, normalize(chunks, self.ndim, lambda: self.chunks)))

    def map_blocks(self, func, *args, **kwargs) -> "Tensor":
        """``ar.map_blocks(func, self, *args, **kwargs)`` (dask's method)."""
        from ._blocks import map_blocks

        return map_blocks(func, self, *args, **kwargs)

    def map_overlap(self, func, depth, boundary=None, trim=True, **kwargs) -> "Tensor":
        """``ar.map_overlap(func, self, depth=, boundary=, trim=)`` (dask's method)."""
        from ._blocks import map_overlap

        return map_overlap(func, self, depth=depth, boundary=boundary, trim=trim, **kwargs)

    def transpose(self, *axes) -> "Tensor":
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return apply("transpose", (self, axes) if axes else (self,))

    def sum(self, axis=None, keepdims=False): return apply("sum", (self,), {"axis": axis, "keepdims": keepdims})
    def prod(self, axis=None, keepdims=False): return apply("prod", (self,), {"axis": axis, "keepdims": keepdims})
    def min(self, axis=None, keepdims=False): return apply("min", (self,), {"axis": axis, "keepdims": keepdims})
    def max(self, axis=None, keepdims=False): return apply("max", (self,), {"axis": axis, "keepdims": keepdims})
    def mean(self, axis=None, keepdims=False): return apply("mean", (self,), {"axis": axis, "keepdims": keepdims})

    def var(self, axis=None, keepdims=False, ddof=0, correction=None):
        return apply("var", (self,), {"axis": axis, "keepdims": keepdims, "ddof": _ddof(ddof, correction)})

    def std(self, axis=None, keepdims=False, ddof=0, correction=None):
        return apply("std", (self,), {"axis": axis, "keepdims": keepdims, "ddof": _ddof(ddof, correction)})

    # NumPy's conversions and views (branch numpyfuncs): a tensor is immutable, so `copy`
    # is the tensor itself; `item` and `tolist` compute.
    def ravel(self, order="C") -> "Tensor":
        from ._numpyfuncs import ravel

        return ravel(self, order)

    def flatten(self, order="C") -> "Tensor":
        """A 1-D copy (``ravel`` may give ``self`` back; ``flatten`` never does, as NumPy)."""
        from ._numpyfuncs import ravel

        flat = ravel(self, order)
        return flat._copy() if flat is self else flat

    def copy(self, order="K") -> "Tensor":
        return self._copy()

    def item(self, *args):
        return np.asarray(self.compute()).item(*args)

    def tolist(self):
        return np.asarray(self.compute()).tolist()

    def __getattr__(self, name):
        # NumPy's ndarray methods that the core has as functions (`x.cumsum(axis=0)`).
        if name in TENSOR_METHODS and is_function(name):
            return lambda *args, **kwargs: apply(name, (self,) + args, kwargs)
        raise AttributeError(f"'Tensor' object has no attribute {name!r}")

    def __dir__(self):
        return sorted(set(super().__dir__()) | {m for m in TENSOR_METHODS if is_function(m)})


# The core's functions that are also methods, as on NumPy's ndarray (and dask's array).
# Not `sort`: NumPy's `x.sort()` sorts in place and returns None, which a lazy tensor cannot.
TENSOR_METHODS = frozenset("""
    all any argmax argmin argsort cumprod cumsum dot nonzero searchsorted squeeze
""".split())


def check_device(device) -> None:
    """The array API's ``device=``: ares computes on CPUs only."""
    if device is not None and device != "cpu":
        raise ValueError(f"device={device!r}: ares computes on the CPU only (device='cpu' or None)")


def _optional(name, a, b):
    return binary(name, a, b) if is_function(name) else NotImplemented


def _divmod(a, b):
    """Python's ``divmod``: ``(a // b, a % b)``, NumPy's sign conventions (as ``np.divmod``)."""
    q = _optional("floor_divide", a, b)
    return q if q is NotImplemented else (q, binary("remainder", a, b))


def _ddof(ddof, correction):
    """NumPy's ``ddof`` or the array API's ``correction`` (a whole number, or any
    non-negative float: the core divides by ``N - correction``)."""
    value = ddof if correction is None else correction
    if isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral):
        value = float(value)
        if value == int(value):
            value = int(value)
    return value


def _index_item(conv: _Args, item):
    if isinstance(item, Tensor):
        conv.keep |= item._keep
        return item._handle
    if isinstance(item, (list, np.ndarray)):
        # An empty list is integer positions, as NumPy reads it (np.asarray([]) is float64).
        array = np.asarray(item, dtype=np.int64 if isinstance(item, list) and not item else None)
        return conv.convert(_numpy_source(array))
    if isinstance(item, np.generic):
        return item.item()
    return item
