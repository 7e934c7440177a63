"""Differential test of the whole Python API against NumPy 2: every public function of ``ar``
and ``ar.random``, every operator, method and property of ``ar.Tensor``.

What it covers
  * The list of names comes from the package at test time (``dir(ar)``, ``dir(ar.random)``,
    ``dir(ar.Tensor)``, the core functions ``ar.__getattr__`` and ``Tensor.__getattr__``
    resolve) and ``test_every_public_name_is_covered`` fails naming any name that is neither
    in ``api_cases.CASES`` (how to call it, NumPy's equivalent) nor in
    ``api_cases.NOT_NUMERIC`` (with what is checked instead): a function added to the package
    fails CI until its case is written.
  * ``test_matches_numpy[name]`` draws argument forms for ``name`` with hypothesis: every dtype
    ares has (``ar._ares.dtypes()``), integers at their limits of both signs, NaN/±inf/-0.0,
    zero-size, size-1 and broadcasting shapes, chunkings, axis forms, Python scalars (weak,
    NEP 50) and NumPy scalars (strong) on either side of operators. Each call runs on NumPy and
    on ares in process (``ar.start(workers=2, slots=1)``), the function and its method form in
    one ``ar.compute``, and compares dtype, shape and values (floats bit for bit, -0.0 too,
    unless the case gives a tolerance), and before computing, the tensor's ``shape``,
    ``size``, ``nbytes`` and ``len()`` (each may raise while unknown, never be wrong). Where
    NumPy raises, ares must raise; where NumPy answers, ares must too, unless the call is in
    ``api_cases.KNOWN_UNSUPPORTED`` (with its reason); ``api_cases.KNOWN_DEVIATIONS`` lists
    the one accepted difference in a value (a dtype ares lacks, answered in a wider one).
  * ``test_on_a_real_cluster[native|http]`` draws one call of every case, computes all of them
    in one ``ar.compute`` on a cluster of ``ares node`` processes, and compares likewise.
  * The names that are not numeric functions (engine control, constants, files, chunk
    metadata) have small tests of their own at the end.

To add a name: see ``api_cases.py`` (one word in ``UNARY``/``BINARY`` for an elementwise
function, else a ``Case`` built from its strategies). ``ARES_DIFF_EXAMPLES`` sets the number of
examples per name (default 20).
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import ares as ar
from api_cases import (CASES, DTYPES, KNOWN_UNSUPPORTED, NOT_METHODS, NOT_NUMERIC, Call, T,
                       tensor, to_ares, to_numpy, unknown_or_equal)

EXAMPLES = int(os.environ.get("ARES_DIFF_EXAMPLES", "20"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=list(HealthCheck))

# The operators and conversions NumPy arrays have: covered whether Tensor defines them or not.
REQUIRED_DUNDERS = """
    __add__ __sub__ __mul__ __truediv__ __floordiv__ __mod__ __pow__ __matmul__ __and__ __or__
    __xor__ __lshift__ __rshift__ __radd__ __rsub__ __rmul__ __rtruediv__ __rfloordiv__
    __rmod__ __rpow__ __rmatmul__ __rand__ __ror__ __rxor__ __rlshift__ __rrshift__ __eq__
    __ne__ __lt__ __le__ __gt__ __ge__ __neg__ __pos__ __abs__ __invert__ __getitem__ __len__
    __bool__ __int__ __float__ __index__ __array__ __iter__ __contains__
""".split()
# Python's machinery on every class, not API.
_CLASS_MACHINERY = {"__init__", "__slots__", "__module__", "__doc__", "__qualname__",
                    "__weakref__", "__dict__", "__firstlineno__", "__static_attributes__",
                    "__annotations__", "__annotate__", "__orig_bases__", "__parameters__"}


# -- the public surface ----------------------------------------------------------------------

def _resolves(obj, name) -> bool:
    try:
        getattr(obj, name)
        return True
    except AttributeError:
        return False
    except Exception:  # noqa: BLE001 - there, but refusing this object (x.mT of a 1-d x)
        return True


def core_functions() -> set[str]:
    """The core's functions, as far as the package lets them be found: its own list when the
    native module has one, else NumPy's and the array API's names the core has."""
    from ares._api_names import ARRAY_API_FUNCTIONS

    listed = getattr(ar._ares, "functions", None)
    candidates = set(listed()) if listed else set()
    candidates |= set(dir(np)) | set(ARRAY_API_FUNCTIONS) | set(CASES)
    return {n for n in candidates if not n.startswith("_") and ar._ares.is_function(n)}


def ar_names() -> set[str]:
    """``dir(ar)`` and the names ``ar.__getattr__`` resolves."""
    names = {n for n in dir(ar) if not n.startswith("_")}
    return names | {n for n in core_functions() if _resolves(ar, n)}


def random_names() -> set[str]:
    return {f"random.{n}" for n in dir(ar.random) if not n.startswith("_")}


def _a_tensor():
    return ar.zeros((1, 1))  # built, never computed: enough to ask what a tensor has


def tensor_names() -> set[str]:
    """``dir(ar.Tensor)``, the operators NumPy's arrays have, and the core functions a
    tensor's ``__getattr__`` offers as methods."""
    own = {n for n in dir(ar.Tensor) if not n.startswith("_")}
    dunders = {n for n in vars(ar.Tensor) if n.startswith("__") and n not in _CLASS_MACHINERY}
    x = _a_tensor()
    methods = {n for n in set(dir(x)) | core_functions() if not n.startswith("_")
               and _resolves(x, n)}
    return {f"Tensor.{n}" for n in own | dunders | methods | set(REQUIRED_DUNDERS)}


def tensor_has_method(name) -> bool:
    return _resolves(_a_tensor(), name)


def method_cases() -> set[str]:
    return {c.method for c in CASES.values() if c.method}


def test_every_public_name_is_covered():
    """Fails naming each public name with neither a case nor a reasoned NOT_NUMERIC entry."""
    uncovered = sorted(
        n for n in ar_names() | random_names() | tensor_names()
        if n not in CASES and n not in NOT_NUMERIC
        and not (n.startswith("Tensor.") and (n[7:] in method_cases() or n[7:] in NOT_METHODS)))
    assert not uncovered, (
        "public names without a case in api_cases.py (add one to CASES, or to NOT_NUMERIC "
        "with the reason and what is checked instead): " + ", ".join(uncovered))


def _runnable(name) -> bool:
    if name.startswith("Tensor."):
        return True
    if name.startswith("random."):
        return _resolves(ar.random, name.split(".", 1)[1])
    return name in ar_names()


# -- one call, on both sides -----------------------------------------------------------------

def _quiet(f, *args, **kwargs):
    """``f``'s value and None, or None and the exception it raised (warnings silenced)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return f(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001 - compared with the other side's
            return None, e


def _tensors(v) -> list:
    if isinstance(v, ar.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        return [t for w in v for t in _tensors(w)]
    return []


def _fill(v, values):
    if isinstance(v, ar.Tensor):
        return next(values)
    if isinstance(v, (tuple, list)):
        return type(v)(_fill(w, values) for w in v) if type(v) in (tuple, list) else \
            tuple(_fill(w, values) for w in v)
    return v


class Attempt:
    """One call of a case: NumPy's answer, and ares' result built (not computed yet)."""

    def __init__(self, name, call: Call, method: str | None = None):
        self.name, self.call, self.case = name, call, CASES[name]
        self.label = f"x.{method}(...)" if method else name
        self.want, self.want_exc = _quiet(self.case.numpy, *to_numpy(call.args),
                                          **to_numpy(call.kwargs))
        self.args, self.kwargs = to_ares(call.args), to_ares(call.kwargs)
        if method is None:
            f = self.case.ares
        else:
            def f(x, *rest, **kw):
                return getattr(x, method)(*rest, **kw)
        self.built, self.exc = _quiet(f, *self.args, **self.kwargs)

    def tensors(self):
        return _tensors(self.built) if self.exc is None else []


def settle(attempts: list[Attempt]):
    """Computes every attempt's tensors in one job, then compares each with NumPy; raises one
    AssertionError naming every divergence."""
    tensors = [t for a in attempts for t in a.tensors()]
    values, exc = _quiet(ar.compute, *tensors)
    failures = []
    if exc is None:
        it = iter(values)
        results = [(_fill(a.built, it), None) if a.exc is None else (None, a.exc) for a in attempts]
    else:
        # one failed task fails the job: compute each attempt alone to know which
        results = []
        for a in attempts:
            if a.exc is not None:
                results.append((None, a.exc))
                continue
            vals, e = _quiet(ar.compute, *a.tensors())
            results.append((None, e) if e is not None else (_fill(a.built, iter(vals)), None))
    for a, (got, got_exc) in zip(attempts, results):
        failure = judge(a, got, got_exc)
        if failure:
            failures.append(failure)
    if failures:
        raise AssertionError("\n\n".join(failures))


def _leaves(v):
    if isinstance(v, (tuple, list)):
        return [x for w in v for x in _leaves(w)]
    return [v]


def _lacks_dtype(want) -> bool:
    """NumPy's answer has a dtype ares does not have (float16 from math on bools...)."""
    return any(isinstance(w, (np.ndarray, np.generic)) and w.dtype.name not in DTYPES
               for w in _leaves(want))


def _known_unsupported(a: Attempt, exc) -> str | None:
    for entry in KNOWN_UNSUPPORTED:
        if a.name in entry.names or a.label in entry.names:
            try:
                if entry.when(a.call, exc):
                    return entry.reason
            except Exception:  # noqa: BLE001 - a predicate that does not apply
                pass
    return None


def judge(a: Attempt, got, got_exc) -> str | None:
    where = f"{a.label}{a.call!r}"
    if a.want_exc is not None:
        if got_exc is not None:
            return None if str(got_exc) else f"{where}: ares raises {got_exc!r} without a message"
        return (f"{where}: NumPy raises {type(a.want_exc).__name__}: {a.want_exc}\n"
                f"  ares returns {_short(got)}")
    if got_exc is not None:
        clean = isinstance(got_exc, (TypeError, ValueError, IndexError, NotImplementedError,
                                     OverflowError)) and str(got_exc)
        if clean and (_known_unsupported(a, got_exc) or _lacks_dtype(a.want)):
            return None
        return (f"{where}: ares raises {type(got_exc).__name__}: {got_exc}\n"
                f"  NumPy returns {_short(a.want)}")
    try:
        if a.exc is None:
            check_metadata(a.built, a.want)
            if a.case.chunks is not None:
                expected = a.case.chunks(a.built, a.args, a.kwargs)
                if expected is not None:
                    assert a.built.chunks == expected, (
                        f"chunks {a.built.chunks}, expected {expected} (the argument's)")
        if a.case.check is not None:
            a.case.check(got, a.want, a.call)
        else:
            same(got, a.want, a.case.tol, a.call)
    except AssertionError as e:
        message = str(e).split("\nassert ")[0]  # without pytest's rewritten expression
        return f"{where}: {message}\n  ares:  {_short(got)}\n  NumPy: {_short(a.want)}"
    return None


def _short(v, limit=300):
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "..."


def check_metadata(built, want):
    """A tensor's shape, size, nbytes, ndim, len() and dtype, before it is computed: each is
    NumPy's, or (shape, size, nbytes, len) raises while the data decides it."""
    if isinstance(built, (tuple, list)) and isinstance(want, (tuple, list)):
        for b, w in zip(built, want):
            check_metadata(b, w)
        return
    if not isinstance(built, ar.Tensor) or not isinstance(want, (np.ndarray, np.generic)):
        return
    want = np.asarray(want)
    lacks = want.dtype.name not in DTYPES  # then a wider dtype of the same kind (see `same`)
    assert built.dtype == want.dtype or lacks, (
        f"x.dtype is {built.dtype} before computing, NumPy's {want.dtype}")
    assert built.ndim == want.ndim, f"x.ndim is {built.ndim}, NumPy's {want.ndim}"
    expected = {"shape": want.shape, "size": want.size}
    if not lacks:
        expected["nbytes"] = want.nbytes
    if want.ndim:
        expected["len()"] = len(want)
    for attr, value in expected.items():
        v, exc = _quiet(lambda: len(built) if attr == "len()" else getattr(built, attr))
        assert exc is not None or unknown_or_equal(v, value, attr != "len()"), (
            f"x.{attr} is {v!r} before computing, NumPy's {value!r} (an error, or None as "
            "the array API's unknown, is fine while the data decides it; a wrong value is not)")


def same(got, want, tol, call, path="value"):
    """``got`` (ares, computed) is NumPy's ``want``: type, dtype, shape and values."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{path}: {type(got).__name__}, NumPy a sequence"
        assert len(got) == len(want), f"{path}: {len(got)} items, NumPy {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, tol, call, f"{path}[{i}]")
        return
    if isinstance(want, np.dtype):
        assert isinstance(got, np.dtype) and got == want, f"{path}: {got!r} != {want!r}"
        return
    if isinstance(want, (np.finfo, np.iinfo)):
        for attr in ("bits", "min", "max", "dtype", "eps", "smallest_normal", "resolution"):
            if hasattr(want, attr):
                g, w = getattr(got, attr, None), getattr(want, attr)
                assert g == w, f"{path}.{attr}: {g!r} != {w!r}"
        return
    if want is None or (isinstance(want, (bool, int, float, complex, str))
                        and not isinstance(want, np.generic)):
        assert type(got) is type(want), f"{path}: a {type(got).__name__}, NumPy a {type(want).__name__}"
        assert got == want or (want != want and got != got), f"{path}: {got!r} != {want!r}"
        return
    want = np.asarray(want)
    if want.ndim:
        assert isinstance(got, np.ndarray), f"{path}: a {type(got).__name__}, NumPy an array"
    g = np.asarray(got)
    if want.dtype.name not in DTYPES:
        # NumPy's dtype is one ares lacks (float16 from math on bools and 8-bit integers):
        # a wider dtype of the same kind, holding NumPy's values (api_cases.KNOWN_DEVIATIONS)
        assert g.dtype.kind == want.dtype.kind and g.dtype.itemsize >= want.dtype.itemsize, (
            f"{path}: dtype {g.dtype}, NumPy {want.dtype} (which ares lacks: a wider one of "
            "the same kind is expected)")
        assert g.shape == want.shape, f"{path}: shape {g.shape}, NumPy {want.shape}"
        if want.dtype.kind in "fc":
            info = np.finfo(want.dtype)
            # where NumPy's narrow dtype overflowed (float16 cosh of int8 12 is inf) ares'
            # wider one holds the value
            over = np.isinf(want) & np.isfinite(g) & (np.abs(g) > info.max)
            np.testing.assert_allclose(np.where(over, 0, g), np.where(over, 0, want).astype(
                g.dtype), rtol=8 * info.eps, atol=float(info.tiny), equal_nan=True, err_msg=path)
        else:
            assert np.array_equal(g, want.astype(g.dtype)), f"{path}: values differ"
        return
    assert g.dtype == want.dtype, f"{path}: dtype {g.dtype}, NumPy {want.dtype}"
    assert g.shape == want.shape, f"{path}: shape {g.shape}, NumPy {want.shape}"
    if want.dtype.kind in "fc" and tol is not None and want.size:
        rtol, atol = tol(call, want)
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=path)
        return
    if want.dtype.kind in "fc":
        equal = (g == want) & (np.signbit(g.real) == np.signbit(want.real)) | (
            np.isnan(g) & np.isnan(want))
    else:
        equal = g == want
    if not np.all(equal):
        bad = np.argwhere(~np.asarray(equal))[:3]
        detail = "; ".join(f"at {tuple(int(i) for i in p)}: {g[tuple(p)]!r} vs {want[tuple(p)]!r}"
                           for p in bad) if g.ndim else f"{g!r} vs {want!r}"
        raise AssertionError(f"{path}: values differ ({detail})")


def attempts_for(name, call: Call) -> list[Attempt]:
    """The call, and its method form when the case has one and its first argument is a tensor."""
    out = [Attempt(name, call)]
    method = CASES[name].method
    if method and method not in NOT_METHODS and call.args and isinstance(call.args[0], T) \
            and tensor_has_method(method):
        out.append(Attempt(name, call, method=method))
    return out


# -- in process ------------------------------------------------------------------------------

@pytest.fixture(scope="module", autouse=True)
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


def _params():
    for name in sorted(CASES):
        if _runnable(name):
            yield pytest.param(name, id=name)
        else:
            yield pytest.param(name, id=name, marks=pytest.mark.skip(reason=f"ar has no {name}"))


@pytest.mark.parametrize("name", list(_params()))
@SETTINGS
@given(data=st.data())
def test_matches_numpy(name, data):
    call = data.draw(CASES[name].forms, label=name)
    settle(attempts_for(name, call))


# -- against a real cluster, over both protocols ---------------------------------------------

@pytest.fixture(params=["native", "http"])
def remote(request, cluster):
    if request.param == "native":
        ar.connect(f"ares://{cluster.rpc}", secret=cluster.secret, upload_dir=cluster.data)
    else:
        ar.connect(f"http://{cluster.web}", token=cluster.token, upload_dir=cluster.data)
    yield request.param
    ar.start(workers=2, slots=1)


CLUSTER_EXAMPLES = 3
# Cases drawn in one example. Hypothesis caps what one example may draw: with every case in
# one example (212 of them), most examples overran the cap and were drawn again, 560 draws
# and 325 s for 3 examples; in groups of 40, 18 draws and 1.4 s.
CLUSTER_GROUP = 40


def test_on_a_real_cluster(remote):
    """One call of every case per example, each group of cases computed in one job on the
    cluster; every example runs (no shrinking) and the message names every divergent call
    (run test_matches_numpy[name] to shrink one)."""
    failures = []
    names = [name for name in sorted(CASES) if _runnable(name)]
    for first in range(0, len(names), CLUSTER_GROUP):
        group = names[first:first + CLUSTER_GROUP]

        @settings(max_examples=CLUSTER_EXAMPLES, deadline=None, phases=[Phase.generate],
                  database=None, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def one_job(data):
            attempts = []
            for name in group:
                attempts += attempts_for(name, data.draw(CASES[name].forms, label=name))
            try:
                settle(attempts)
            except AssertionError as e:
                failures.append(str(e))

        one_job()
    if failures:
        raise AssertionError(f"on the {remote} cluster:\n\n" + "\n\n".join(failures))


# -- the names that are not numeric functions ------------------------------------------------

def test_not_numeric_names_behave():
    assert issubclass(ar.TaskError, RuntimeError)
    assert callable(ar.connect) and callable(ar.start) and callable(ar.close)
    assert ar.newaxis is None and math.isnan(ar.nan) and ar.inf == np.inf
    assert ar.pi == np.pi and ar.e == np.e
    for name in DTYPES:
        assert getattr(ar, name) == np.dtype(name), name
    assert ar.bool == np.dtype(bool)
    ar.set_progress(False)
    x = ar.from_numpy(np.arange(6.0).reshape(2, 3), chunks=1)
    assert isinstance(ar.explain(x + 1), str) and ar.explain(x + 1)
    ar.set_progress(None)
    assert x.device == "cpu"
    if hasattr(x, "to_device"):
        assert np.array_equal(x.to_device("cpu").compute(), x.compute())
    assert {"sum", "astype"} <= set(dir(x))
    with pytest.raises(TypeError):
        hash(x)  # `==` is elementwise: unhashable, as an ndarray
    assert "shape=(2, 3)" in repr(x) and "float64" in repr(x)
    coverage = ar.array_api_coverage()
    assert all(callable(getattr(ar, n)) for n in coverage["have"])
    assert not [n for n in coverage["missing"] if _resolves(ar, n)]
    if hasattr(ar, "cli"):
        assert callable(ar.cli.main)
    assert ar.random.Tensor is ar.Tensor if hasattr(ar.random, "Tensor") else True
    for name in ("rand", "randn", "shuffle_bench"):
        assert not _resolves(ar, name) or callable(getattr(ar, name))
    ar.random.seed(5)
    first = ar.random.rand(7).compute()
    ar.random.seed(5)
    assert np.array_equal(ar.random.rand(7).compute(), first)
    ar.close()
    assert ar.engine().kind == "embedded"  # a new embedded engine after close
    ar.start(workers=2, slots=1)


def test_compute_follows_dask():
    """``ar.compute`` takes dask.compute's arguments: tensors, other values passed through,
    and collections of tensors computed inside them."""
    a, b = np.arange(5), np.arange(3.0)
    x, y = ar.from_numpy(a, chunks=2), ar.from_numpy(b)
    vx, three, vy = ar.compute(x, 3, y)
    assert np.array_equal(vx, a) and three == 3 and np.array_equal(vy, b)
    assert ar.compute() == ()
    (values,) = ar.compute([x, y])
    assert isinstance(values, list) and len(values) == 2, f"ar.compute([x, y]) gave {values!r}"
    assert all(isinstance(v, np.ndarray) for v in values), (
        f"ar.compute([x, y]) gave {values!r}: the tensors in the list are not computed")
    assert np.array_equal(values[0], a) and np.array_equal(values[1], b)
    (d,) = ar.compute({"x": x})
    assert isinstance(d, dict) and isinstance(d["x"], np.ndarray), (
        f"ar.compute({{'x': x}}) gave {d!r}: the tensor in the dict is not computed")
    assert np.array_equal(d["x"], a)


def _dask_chunks(shape, chunks):
    """dask's normalized chunks for the forms helpers.chunks_for draws."""
    if isinstance(chunks, int):
        chunks = (chunks,) * len(shape)
    out = []
    for d, c in zip(shape, chunks):
        if isinstance(c, tuple):
            out.append(c)
        elif d == 0:
            out.append((0,))
        else:
            out.append((c,) * (d // c) + ((d % c,) if d % c else ()))
    return tuple(out)


@SETTINGS
@given(data=st.data())
def test_chunk_metadata(data):
    """``chunks``, ``chunksize``, ``npartitions`` of a tensor are dask's for the same chunking,
    kept by ``*_like`` and ``rechunk``."""
    x = data.draw(tensor(min_dims=1))
    t = ar.from_numpy(x.a, chunks=x.chunks)
    want = _dask_chunks(x.a.shape, x.chunks)
    assert t.chunks == want
    assert t.chunksize == tuple(max(c) for c in want)
    assert t.npartitions == math.prod(len(c) for c in want)
    for like in (ar.zeros_like, ar.ones_like, ar.empty_like):
        assert like(t).chunks == want, f"{like.__name__} dropped the chunks"
    assert ar.full_like(t, 1).chunks == want, "full_like dropped the chunks"
    n = data.draw(st.integers(1, 4))
    assert t.rechunk(n).chunks == _dask_chunks(x.a.shape, n)


def test_file_round_trips(tmp_path):
    """to_npy/from_npy and to_zarr/from_zarr, in the spool directory (inside the data roots)."""
    from ares._numpy import spool_dir

    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    x = ar.from_numpy(a, chunks=(3, 4))
    base = os.path.join(spool_dir(), f"roundtrip-{os.getpid()}")

    def run(write):  # written at once (None), or a lazy write to compute (the base's)
        if isinstance(write, ar.Tensor):
            write.compute()

    run(ar.to_npy(x, base + ".npy"))
    got = ar.from_npy(base + ".npy", chunks=2)
    assert got.dtype == a.dtype and got.shape == a.shape
    assert np.array_equal(got.compute(), a)
    assert np.array_equal(np.load(base + ".npy"), a)
    run(x.to_zarr(base + ".zarr"))
    z = ar.from_zarr(base + ".zarr")
    assert z.dtype == a.dtype and np.array_equal(z.compute(), a)
