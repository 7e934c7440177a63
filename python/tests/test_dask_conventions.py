"""dask's conventions (issue 29 item 3): its ``chunks=`` spellings in every function taking
chunks, and ``persist`` keeping results on the engine's workers, in process and on a real
cluster over both protocols."""

from __future__ import annotations

import gc
import json
import os
import time
import urllib.request

import numpy as np
import pytest

import ares as ar
from helpers import assert_same


@pytest.fixture
def embedded():
    ar.start(workers=2, slots=1)
    yield ar.engine()
    ar.close()


# -- chunk spellings -------------------------------------------------------------------------

A = np.arange(60.0).reshape(6, 10)


@pytest.mark.parametrize("chunks, want", [
    (-1, ((6,), (10,))),
    ((-1, 4), ((6,), (4, 4, 2))),
    ((None, 4), ((6,), (4, 4, 2))),
    ({0: -1, 1: 4}, ((6,), (4, 4, 2))),
    ({1: 4}, ((6,), (4, 4, 2))),             # an axis a dict leaves out is whole (dask)
    ({-1: 5, 0: 2}, ((2, 2, 2), (5, 5))),
    ([2, 5], ((2, 2, 2), (5, 5))),
    (((1, 5), -1), ((1, 5), (10,))),
    (((1, 5), "auto"), ((1, 5), (10,))),
    ("auto", ((6,), (10,))),
    ("48 B", ((2, 2, 2), (2,) * 5)),          # 6 float64 a chunk: 2 x 2 after rounding
    ((2, "80B"), ((2, 2, 2), (5, 5))),
])
def test_creation_and_from_numpy_take_every_spelling(embedded, chunks, want):
    assert ar.ones((6, 10), chunks=chunks).chunks == want
    assert ar.random.rand(6, 10, chunks=chunks, seed=1).chunks == want
    x = ar.from_numpy(A, chunks=chunks)
    assert x.chunks == want
    assert_same(x.compute(), A)


def test_auto_chunks_follow_dask_rule(embedded):
    # 128 MiB float64 chunks: a share of 4096 per axis, rounded to 2500 (a divisor of 10000).
    assert ar.zeros((10000, 10000), chunks="auto").chunksize == (2500, 2500)
    # The explicit axis is kept and the other takes the rest of the budget.
    assert ar.zeros((100, 10**6), chunks=(-1, "auto")).chunksize == (100, 125000)
    # A byte size: 800 kB of float64 is 100000 elements, a share of 316 rounded to 250 (a
    # divisor of 2000 in [158, 316]); of float32 twice the elements: 447, rounded to 400.
    assert ar.zeros((2000, 2000), chunks="800 kB").chunksize == (250, 250)
    assert ar.zeros((2000, 2000), dtype="float32", chunks="800 kB").chunksize == (400, 400)
    assert ar.arange(10**6, chunks="1 MiB").chunksize == (125000,)


def test_a_1d_tuple_lists_the_chunk_lengths(embedded):
    x = ar.arange(10, chunks=(3, 3, 4))
    assert x.chunks == ((3, 3, 4),)
    assert_same(x.compute(), np.arange(10))


def test_rechunk_keeps_what_it_is_not_told_to_change(embedded):
    x = ar.from_numpy(A, chunks=(2, 5))
    assert x.rechunk({0: 3}).chunks == ((3, 3), (5, 5)), "dask's rechunk keeps the other axis"
    assert x.rechunk((None, -1)).chunks == ((2, 2, 2), (10,))
    assert x.rechunk({1: -1, 0: None}).chunks == ((2, 2, 2), (10,))
    assert ar.rechunk(x, {0: -1}).chunks == ((6,), (5, 5))
    assert x.rechunk("auto").chunks == ((6,), (10,))
    for spec in [{0: 3}, (None, -1), -1, "auto", ((1, 2, 3), 4), {1: (3, 7)}]:
        assert_same(x.rechunk(spec).compute(), A)


def test_from_npy_and_to_zarr_take_dicts(embedded, tmp_path):
    from ares._numpy import spool_dir

    path = os.path.join(spool_dir(), "dask-conventions.npy")
    np.save(path, A)
    x = ar.from_npy(path, chunks={0: 3})
    assert x.chunks == ((3, 3), (10,))
    assert_same(x.compute(), A)
    assert ar.from_npy(path, chunks=[-1, 4]).chunks == ((6,), (4, 4, 2))
    assert ar.from_npy(path, chunks="auto").chunks == ((6,), (10,))


@pytest.mark.parametrize("chunks, says", [
    ({2: 3}, "out of bounds"),
    ({"x": 3}, "axes"),
    ({0: 3, -2: 2}, "twice"),
    ("lots", "byte size"),
    ((-3, 2), "negative"),
    (("1 KiB", "2 KiB"), "two byte sizes"),
    ((2, 2, 2), "3 entries"),
    (((1, 2), 10), "add up"),
])
def test_bad_spellings_are_clear_errors(embedded, chunks, says):
    with pytest.raises((ValueError, TypeError), match=says):
        ar.ones((6, 10), chunks=chunks).chunks


# -- persist ---------------------------------------------------------------------------------

@pytest.mark.parametrize("remote", ["embedded", "native", "native-upload", "http"])
def test_persist_keeps_results_and_frees_them(request, remote):
    c = None
    if remote == "embedded":
        eng = ar.start(workers=2, slots=1)
    else:
        c = request.getfixturevalue("cluster")
        if remote == "native":
            eng = ar.connect(f"ares://{c.rpc}", secret=c.secret, upload_dir=c.data)
        elif remote == "native-upload":
            eng = ar.connect(f"ares://{c.rpc}", secret=c.secret)
        else:
            eng = ar.connect(f"http://{c.web}", token=c.token, session="py-persist")
    try:
        a = np.random.default_rng(1).random((40, 30))
        x = ar.from_numpy(a, chunks=(7, 11))
        held_before = set(eng.uploads)
        y = (x + 1).persist()
        (task,) = set(eng.uploads) - held_before
        assert y.chunks == x.chunks and y.dtype == np.float64
        # x's source (its spool file, or its upload) goes with x: reading y must not
        # recompute it.
        spooled = [k.path for k in x._keep if hasattr(k, "path")]
        del x
        gc.collect()
        assert not any(os.path.exists(p) for p in spooled)
        assert eng.uploads == [task], "x's upload is freed, y's task held"
        assert_same((y * 2).sum().compute(), ((a + 1) * 2).sum())
        assert_same(y.compute(), a + 1)
        z = y[3:20].T @ y[3:20]
        assert_same(z.compute(), (a + 1)[3:20].T @ (a + 1)[3:20], rtol=1e-12)
        assert task in eng.uploads
        with_y = _held_bytes(c, above=a.nbytes)
        if c is not None:
            assert with_y >= a.nbytes, "the workers hold y's chunks"
        del y, z
        gc.collect()
        assert task not in eng.uploads, "freed with the last tensor reading it"
        if c is not None:
            left = with_y - a.nbytes
            assert _held_bytes(c, below=left + 1) <= left, "the workers' bytes drop"
    finally:
        ar.close()


def test_persist_several_in_one_task_and_passes_other_values(embedded):
    a = np.arange(24.0).reshape(4, 6)
    x = ar.from_numpy(a, chunks=2)
    s, t, n = ar.persist(x.sum(axis=0), (x * x).T, 7)
    assert n == 7
    assert len(set(embedded.uploads)) == 1, "one task holds both"
    assert "placed when it runs" in ar.explain(s + 1), "explain says where the chunks come from"
    assert_same(s.compute(), a.sum(axis=0))
    assert_same(t.compute(), (a * a).T)
    (u,) = ar.persist(x[x > 10])  # a length from the data
    assert_same(u.compute(), a[a > 10])


def test_a_freed_or_closed_persist_is_a_clear_error(embedded):
    y = ar.from_numpy(np.ones(10), chunks=3).persist()
    (task,) = [t for t in embedded.uploads]
    embedded.free_upload(task)
    with pytest.raises(ar.TaskError, match="no longer held"):
        (y + 1).compute()
    y = ar.ones(10, chunks=3).persist()
    ar.close()
    with pytest.raises(ValueError, match="no longer the engine"):
        y.compute()


def _held_bytes(cluster, above=None, below=None, deadline=10.0) -> int:
    """The bytes of chunks the cluster's workers hold, from their heartbeats; waits (up to
    ``deadline``) for a heartbeat that shows it above or below the figure asked for."""
    if cluster is None:
        return 0
    end = time.monotonic() + deadline
    while True:
        req = urllib.request.Request(f"http://{cluster.web}/api/cluster/nodes",
                                     headers={"Authorization": f"Bearer {cluster.token}"})
        with urllib.request.urlopen(req) as r:
            nodes = json.load(r)["nodes"]
        held = sum(_memory_bytes(n) for n in nodes)
        done = (above is None or held >= above) and (below is None or held < below)
        if done or time.monotonic() > end:
            return held
        time.sleep(0.1)


def _memory_bytes(node) -> int:
    memory = node.get("memory") or {}
    return int(memory.get("memory_bytes", 0))


# -- from_array ------------------------------------------------------------------------------

class _Dataset:
    """An array-like as h5py's datasets and zarr's arrays are: ``shape``, ``dtype`` and
    slicing; it counts the rows read and refuses to become one NumPy array whole."""

    def __init__(self, values):
        self.values = values
        self.shape, self.dtype = values.shape, values.dtype
        self.reads: list[int] = []

    def __getitem__(self, index):
        part = self.values[index]
        self.reads.append(part.shape[0] if part.ndim else 1)
        return part.copy()

    def __array__(self, *args, **kwargs):
        raise AssertionError("from_array converted the whole array-like at once")


@pytest.mark.parametrize("remote", ["embedded", "native-upload"])
def test_from_array_reads_an_array_like_slab_by_slab(request, monkeypatch, remote):
    import ares._from_array as fa

    if remote == "embedded":
        ar.start(workers=2, slots=1)
    else:
        c = request.getfixturevalue("cluster")
        ar.connect(f"ares://{c.rpc}", secret=c.secret)
    try:
        values = np.random.default_rng(2).random((50, 7)).astype(np.float32)
        data = _Dataset(values)
        monkeypatch.setattr(fa, "SLAB_BYTES", 10 * 7 * 4)  # 10 rows a slab
        x = ar.from_array(data, chunks={0: 16})
        assert data.reads == [10] * 5, "five slabs of ten rows, never the whole"
        assert x.chunks == ((16, 16, 16, 2), (7,)) and x.dtype == np.float32
        assert_same(x.compute(), values)
        assert_same((x * 2).sum(axis=0).compute(), (values * 2).sum(axis=0), rtol=1e-6)
        small = ar.from_array(_Dataset(np.arange(6, dtype=np.int16).reshape(2, 3)))
        assert_same(small.compute(), np.arange(6, dtype=np.int16).reshape(2, 3))
    finally:
        ar.close()


def test_from_array_reads_an_npy_memmap_in_place(embedded, tmp_path, monkeypatch):
    from ares._numpy import spool_dir

    path = os.path.join(spool_dir(), "in-place.npy")
    np.save(path, A)
    mapped = np.load(path, mmap_mode="r")
    before = set(os.listdir(spool_dir()))
    x = ar.from_array(mapped, chunks=(4, -1))
    assert set(os.listdir(spool_dir())) == before, "nothing copied"
    assert "from_npy" in ar.explain(x) or "source" in ar.explain(x).lower()
    assert x.chunks == ((4, 2), (10,))
    assert_same(x.compute(), A)
    # A memmap of part of a file is copied, slab by slab.
    part = ar.from_array(mapped[1:4], chunks=-1)
    assert_same(part.compute(), A[1:4])
    assert ar.from_array(x, chunks={1: 5}).chunks == ((4, 2), (5, 5))
    assert_same(ar.from_array([[1, 2], [3, 4]]).compute(), np.array([[1, 2], [3, 4]]))
