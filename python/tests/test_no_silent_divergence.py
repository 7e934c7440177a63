"""Each case where the package once answered silently wrong, checked against NumPy: in process,
and on a cluster started from the project's shipped configs (no data root, as a new user's).

A wrong number is the worst defect: where ares cannot give NumPy's answer yet, it must raise
an error that names the fix, never answer with something else (a static upper bound for a
length, a logical AND for a bitwise one, an unevaluated tensor for a written file, a keyword
accepted and ignored).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import ares as ar
from helpers import assert_same


@pytest.fixture(params=["embedded", "native", "http"])
def engine(request):
    """In process, and on the shipped-config cluster over both protocols (no upload_dir:
    ``from_numpy`` uploads)."""
    if request.param == "embedded":
        ar.start(workers=2, slots=1)
    else:
        c = request.getfixturevalue("shipped_cluster")
        if request.param == "native":
            ar.connect(f"ares://{c.rpc}", secret=c.secret)
        else:
            ar.connect(f"http://{c.web}", token=c.token)
    yield request.param
    ar.close()


INTS = np.array([0, 1, 2, 3, 5, 8, 13, -1, -7, 2**62, -(2**62), 2**63 - 1, -(2**63)])


def test_bitwise_operators_are_bitwise_on_integers_and_logical_on_bools(engine):
    a = np.arange(10)
    l = ar.from_numpy(a, chunks=4)
    got = ar.compute(l & 1, l | 2, l ^ 3, ~l, 1 & l, 6 | l, 5 ^ l)
    want = (a & 1, a | 2, a ^ 3, ~a, 1 & a, 6 | a, 5 ^ a)
    for g, w in zip(got, want):
        assert_same(g, w)
    i = ar.from_numpy(INTS, chunks=5)
    j = ar.from_numpy(INTS[::-1].copy(), chunks=3)
    for g, w in zip(ar.compute(i & j, i | j, i ^ j, ~i), (INTS & INTS[::-1], INTS | INTS[::-1],
                                                          INTS ^ INTS[::-1], ~INTS)):
        assert_same(g, w)
    b = np.array([True, False, True, False])
    t = ar.from_numpy(b, chunks=3)
    for g, w in zip(ar.compute(t & True, t | False, t ^ True, ~t), (b & True, b | False,
                                                                     b ^ True, ~b)):
        assert_same(g, w)
    with pytest.raises(ValueError, match="bitwise_and"):
        ar.from_numpy(np.ones(3)) & 1


@pytest.mark.skipif(not ar._is_function("bitwise_left_shift"), reason="the core has no shifts yet")
def test_shift_operators_are_numpys(engine):
    a = np.array([0, 1, -1, 5, -8, 2**40, 2**62, -(2**62)], dtype=np.int64)
    s = np.array([0, 1, 3, 63, 64, 70, 2, 1], dtype=np.int64)
    x, n = ar.from_numpy(a, chunks=3), ar.from_numpy(s, chunks=5)
    got = ar.compute(x << n, x >> n, x << 2, x >> 1, 1 << n)
    for g, w in zip(got, (a << s, a >> s, a << 2, a >> 1, 1 << s)):
        assert_same(g, w)
    a32 = a.astype(np.int32)
    x32 = ar.from_numpy(a32, chunks=4)
    assert_same((x32 << 3).compute(), a32 << 3)
    assert_same((x32 >> 2).compute(), a32 >> 2)


def test_a_length_that_depends_on_the_data_is_never_reported_as_known():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(10**5)
    x = ar.from_numpy(a, chunks=10**4)
    pos = x[x > 0]
    # Describing the tensor runs nothing: the length is unknown until counted.
    assert pos.known_shape == (None,)
    assert (pos * 2).known_shape == (None,), "computed from x[mask]: unknown too"
    with pytest.raises(ValueError, match="depends on the data.*compute_chunk_sizes"):
        ar.ones_like(pos)
    assert all(c != c for c in pos.chunks[0])  # nan, as dask's unknown chunks
    assert "shape=(?,)" in repr(pos)
    # .shape, len(), .size and .nbytes run the stage and count: NumPy's numbers, never the
    # bound (the planned upper bound is 10**5 here).
    want = a[a > 0]
    assert pos.shape == want.shape and (pos * 2).shape == want.shape
    assert pos.known_shape == want.shape, "the count is kept on the tensor"
    assert "shape=(" + str(len(want)) + ",)" in repr(pos)
    assert len(pos) == len(want)
    assert pos.size == want.size and pos.nbytes == want.nbytes
    labels = ar.from_numpy(rng.integers(0, 7, 20000), chunks=5000)
    u = ar.unique(labels)
    assert u.known_shape == (None,)
    assert u.shape == (7,) and u.size == 7 and len(u) == 7
    # Nothing selected: 0, not the bound; a row mask keeps the other axes' lengths.
    assert x[x > 100].shape == (0,)
    t = ar.from_numpy(rng.standard_normal((50, 3)), chunks=(7, 3))
    assert t[t[:, 0] > 0].shape == (int((t[:, 0] > 0).compute().sum()), 3)


def test_programs_go_on_from_a_data_dependent_length_in_stages():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(10**5)
    x = ar.from_numpy(a, chunks=7000)
    assert x[x > 0].mean().compute() == pytest.approx(a[a > 0].mean(), rel=1e-12)
    assert ar.sum(x[x > 0.5] * 2).compute() == pytest.approx((a[a > 0.5] * 2).sum(), rel=1e-12)
    m = x[x > 0]
    assert ar.sum(m[m > 1]).compute() == pytest.approx(a[a > 1].sum(), rel=1e-12)
    # A 1-D mask along the first axis selects whole rows (xarray's time selection).
    t = rng.standard_normal((60, 4, 5))
    keep = rng.standard_normal(60) > 0
    got = ar.from_numpy(t, chunks=(7, 4, 5))[ar.from_numpy(keep, chunks=11)]
    np.testing.assert_array_equal(got.compute(), t[keep])
    assert got.mean().compute() == pytest.approx(t[keep].mean(), rel=1e-12)
    # compute_chunk_sizes (dask's name): the shape and chunks become numbers.
    m = x[x > 0].compute_chunk_sizes()
    assert m.shape == (int((a > 0).sum()),)
    assert sum(m.chunks[0]) == m.shape[0]
    np.testing.assert_array_equal(m[-3:].compute(), a[a > 0][-3:])


def test_the_shape_of_an_unknown_length_is_never_read_in_the_expression_language():
    # The core's own front door answers the same (through `ares._ares.call_function`).
    x = ar.sin(ar.arange(20000, chunks=3000))
    assert x[x > 0].known_shape == (None,)
    assert x[x > 0].shape == (int((np.sin(np.arange(20000)) > 0).sum()),)


DEVICE_FUNCTIONS = [
    lambda d: ar.ones(3, device=d),
    lambda d: ar.zeros(3, device=d),
    lambda d: ar.empty(3, device=d),
    lambda d: ar.full(3, 1.5, device=d),
    lambda d: ar.ones_like(ar.ones(3), device=d),
    lambda d: ar.zeros_like(ar.ones(3), device=d),
    lambda d: ar.empty_like(ar.ones(3), device=d),
    lambda d: ar.full_like(ar.ones(3), 2, device=d),
    lambda d: ar.arange(3, device=d),
    lambda d: ar.linspace(0, 1, 3, device=d),
    lambda d: ar.asarray([1, 2], device=d),
    lambda d: ar.astype(ar.ones(3), ar.int32, device=d),
    lambda d: ar.ones(3).to_device(d),
]


@pytest.mark.parametrize("make", DEVICE_FUNCTIONS)
def test_device_is_cpu_or_refused(make):
    assert make(None).device == "cpu"
    assert make("cpu").device == "cpu"
    with pytest.raises(ValueError, match="CPU only"):
        make("cuda:0")


def test_copy_false_is_refused_where_a_copy_is_needed():
    a = np.arange(6.0)
    with pytest.raises(ValueError, match="copy=False"):
        ar.asarray(a, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        ar.asarray([1, 2], copy=False)
    x = ar.asarray(a, copy=True)
    assert ar.asarray(x, copy=False) is x
    with pytest.raises(ValueError, match="copy=False"):
        ar.asarray(x, dtype=ar.float32, copy=False)
    assert x.astype(ar.float64, copy=False) is x
    assert x.astype(ar.float32, copy=False).dtype == np.float32
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(x, copy=False)
    assert_same(np.asarray(x, copy=True), a)
    assert_same(ar.reshape(x, (2, 3), copy=True).compute(), a.reshape(2, 3))
    assert_same(ar.sort(x[::-1], stable=False).compute(), a)


COPIES = [
    ("x.copy()", lambda x: x.copy()),
    ("asarray(x, copy=True)", lambda x: ar.asarray(x, copy=True)),
    ("x.astype(x.dtype)", lambda x: x.astype(x.dtype)),
    ("+x", lambda x: +x),
    ("from_dlpack(x, copy=True)", lambda x: ar.from_dlpack(x, copy=True)),
    ("round(int x, 2)", lambda x: ar.round(x, 2)),
    ("np.copy(x)", lambda x: np.copy(x)),
    ("x.flatten()", lambda x: x.flatten()),
]


@pytest.mark.parametrize("name, make", COPIES, ids=[c[0] for c in COPIES])
def test_a_copy_keeps_its_values_when_the_original_is_assigned_into(name, make):
    """What NumPy copies is another tensor: ``x[key] = value`` rebinds ``x`` only (a copy
    that was ``x`` itself changed with it, silently)."""
    a = np.arange(6, dtype=np.int64)
    x = ar.asarray(a, chunks=4)
    y = make(x)
    want = make(a.copy())
    x[1] = 100
    x[4:] = -1
    assert_same(np.asarray(y), np.asarray(want))
    a[1] = 100
    a[4:] = -1
    assert_same(np.asarray(x), a)
    # And the other way: assigning into the copy leaves the original alone.
    y[0] = 7
    assert_same(np.asarray(x), a)


def test_connect_refuses_arguments_its_protocol_does_not_use(shipped_cluster):
    c = shipped_cluster
    with pytest.raises(ValueError, match="token="):
        ar.connect(f"ares://{c.rpc}", secret=c.secret, token="t")
    with pytest.raises(ValueError, match="session="):
        ar.connect(f"ares://{c.rpc}", secret=c.secret, session="s")
    with pytest.raises(ValueError, match="secret="):
        ar.connect(f"http://{c.web}", token=c.token, secret="s")


def test_writes_happen_at_once(engine, tmp_path, monkeypatch):
    if engine != "embedded":
        pytest.skip("the shipped cluster has no data root to write into")
    a = np.arange(12.0).reshape(3, 4)
    x = ar.from_numpy(a, chunks=2)
    path = os.path.join(os.getcwd(), "written.npy")
    try:
        assert ar.to_npy(x, path) is None
        assert_same(np.load(path), a)
        os.remove(path)
        assert x.to_npy(path) is None
        assert_same(np.load(path), a)
        os.remove(path)
        lazy = ar.to_npy(x, path, compute=False)
        assert isinstance(lazy, ar.Tensor) and not os.path.exists(path)
        assert lazy.compute() > 0 and os.path.exists(path)
        store = os.path.join(os.getcwd(), "written.zarr")
        assert x.to_zarr(store) is None
        assert_same(ar.from_zarr(store).compute(), a)
    finally:
        for p in (path,):
            if os.path.exists(p):
                os.remove(p)
        import shutil

        shutil.rmtree(os.path.join(os.getcwd(), "written.zarr"), ignore_errors=True)


def test_compute_looks_into_lists_tuples_and_dicts(engine):
    a = np.arange(5)
    x = ar.from_numpy(a, chunks=2)
    got = ar.compute([x, x + 1], {"s": x.sum(), "n": 3}, (x * 2,), "text")
    assert isinstance(got, tuple) and len(got) == 4
    assert_same(got[0][0], a) and assert_same(got[0][1], a + 1)
    assert got[1]["s"] == 10 and got[1]["n"] == 3
    assert isinstance(got[2], tuple)
    assert_same(got[2][0], a * 2)
    assert got[3] == "text"
    assert ar.compute([]) == ([],)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_integer_index_tensors_of_any_width(engine, dtype):
    a = np.arange(10.0) * 3
    idx = np.array([1, 3, 9, 0], dtype=dtype)
    x = ar.from_numpy(a, chunks=4)
    assert_same(x[ar.from_numpy(idx)].compute(), a[idx])
    assert_same(x[idx].compute(), a[idx])


def test_like_functions_keep_chunks_and_dtype():
    x = ar.from_numpy(np.arange(10.0).reshape(2, 5), chunks=(1, 2))
    for f in (ar.ones_like, ar.zeros_like, ar.empty_like):
        assert f(x).chunks == x.chunks
        assert f(x, dtype=ar.int32).dtype == np.int32
        assert f(x, chunks=(2, 5)).chunks == ((2,), (5,))
    y = ar.full_like(x, 7, dtype=ar.int32)
    assert y.chunks == x.chunks and y.dtype == np.int32
    assert_same(y.compute(), np.full((2, 5), 7, dtype=np.int32))


def test_internals_are_not_public():
    assert not hasattr(ar, "shuffle_bench")
    assert not hasattr(ar, "rand") and not hasattr(ar, "randn")
    x = ar.ones(3)
    for name in ("zeros", "ones", "full", "arange", "from_npy", "where", "sort", "concatenate"):
        assert not hasattr(x, name), name
    assert hasattr(x, "cumsum") and hasattr(x, "argsort")
    assert hasattr(ar, "bitwise_and") and hasattr(ar, "bitwise_invert")


def test_a_reduction_over_a_broadcast_layout(engine):
    # sum over the last axis of a (4, 1, 1) + (11, 1) + (12,) broadcast, each chunked.
    t = ar.sum(ar.ones((4, 1, 1), chunks=4) + ar.ones((11, 1), chunks=10)
               + ar.arange(12, chunks=1), axis=2)
    want = np.sum(np.ones((4, 1, 1)) + np.ones((11, 1)) + np.arange(12), axis=2)
    assert_same(t.compute(), want)


def test_uploads_work_with_the_shipped_config(shipped_cluster):
    a = np.arange(1000.0).reshape(40, 25)
    for address, kw in ((f"http://{shipped_cluster.web}", {"token": shipped_cluster.token}),
                        (f"ares://{shipped_cluster.rpc}", {"secret": shipped_cluster.secret})):
        ar.connect(address, **kw)
        try:
            x = ar.from_numpy(a, chunks=(7, 10))
            assert_same((x * 2).sum(axis=0).compute(), (a * 2).sum(axis=0))
        finally:
            ar.close()
