"""User functions on blocks (issue 31): map_blocks, blockwise, map_overlap, apply_gufunc and
reduction, each against NumPy on the whole array (dask's documented examples among them),
in process and on a real cluster; lambdas and closures; the errors (a block of the wrong
shape or dtype, an exception in the function) name the block."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ares as ar
from helpers import assert_same, chunks_for


@pytest.fixture(scope="module", autouse=True)
def embedded():
    ar.start(workers=2, slots=1)
    yield
    ar.close()


def test_map_blocks_lambda_and_closure_match_numpy():
    a = np.arange(30.0).reshape(5, 6)
    x = ar.from_numpy(a, chunks=(2, 4))
    assert_same(ar.map_blocks(lambda b: b + 1, x).compute(), a + 1)
    offset = 7.5

    def shift(b):
        return b * 2 - offset

    assert_same(x.map_blocks(shift).compute(), a * 2 - offset)
    # The dtype is found on zero-size blocks: int64 in, bool out.
    y = ar.from_numpy(np.arange(10), chunks=3)
    z = ar.map_blocks(lambda b: b % 2 == 0, y)
    assert z.dtype == np.dtype(bool)
    assert_same(z.compute(), np.arange(10) % 2 == 0)


def test_map_blocks_two_inputs_kwargs_and_broadcast():
    a = np.arange(24.0).reshape(4, 6)
    b = np.linspace(0, 1, 6)
    x = ar.from_numpy(a, chunks=(3, 2))
    # Another chunking of the same shape is unified; a 1-d input broadcasts on the last axis.
    y = ar.from_numpy(a[::-1].copy(), chunks=(2, 3))
    v = ar.from_numpy(b, chunks=2)
    got = ar.map_blocks(lambda p, q, r, scale=1.0: (p - q) * scale + r, x, y, v, scale=3.0)
    assert_same(got.compute(), (a - a[::-1]) * 3.0 + b)


def test_map_blocks_chunks_drop_axis_new_axis_dtype():
    a = np.arange(40.0).reshape(8, 5)
    x = ar.from_numpy(a, chunks=(3, 5))
    # dask's example: a function that changes the block shape declares chunks=.
    first_rows = ar.map_blocks(lambda b: b[:1], x, chunks=(1, 5))
    want = np.concatenate([a[0:1], a[3:4], a[6:7]])
    assert_same(first_rows.compute(), want)
    # drop_axis: the function sums axis 1 away; split axes are concatenated first.
    x2 = ar.from_numpy(a, chunks=(3, 2))
    s = ar.map_blocks(lambda b: b.sum(axis=1), x2, drop_axis=1)
    assert s.shape == (8,)
    assert_same(s.compute(), a.sum(axis=1))
    # new_axis: dask's example, a new leading axis of length 1.
    n = ar.map_blocks(lambda b: b[None, :, :], x, new_axis=0)
    assert n.shape == (1, 8, 5)
    assert_same(n.compute(), a[None])
    # Declared dtype.
    i = ar.map_blocks(lambda b: b.astype(np.int32), x, dtype=np.int32)
    assert_same(i.compute(), a.astype(np.int32))


def test_map_blocks_block_id():
    x = ar.from_numpy(np.zeros((4, 6)), chunks=(2, 3))

    def tag(b, block_id=None):
        return b + 10 * block_id[0] + block_id[1]

    want = np.zeros((4, 6))
    want[:2, 3:] = 1
    want[2:, :3] = 10
    want[2:, 3:] = 11
    assert_same(ar.map_blocks(tag, x).compute(), want)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_map_blocks_any_chunking(data):
    shape = data.draw(st.lists(st.integers(0, 6), min_size=1, max_size=3).map(tuple))
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    x = ar.from_numpy(a, chunks=data.draw(chunks_for(shape)))
    assert_same(ar.map_blocks(np.sqrt, x).compute(), np.sqrt(a))


def test_blockwise_matches_numpy():
    a = np.arange(12.0).reshape(3, 4)
    b = np.arange(20.0).reshape(4, 5)
    x = ar.from_numpy(a, chunks=(2, 2))
    y = ar.from_numpy(b, chunks=(2, 3))
    # Transpose by index (dask's example), and a contraction over j (concatenated).
    t = ar.blockwise(lambda m: m.T, "ji", x, "ij")
    assert_same(t.compute(), a.T)
    m = ar.blockwise(np.dot, "ik", x, "ij", y, "jk", concatenate=True)
    assert_same(m.compute(), a @ b)
    # An outer product with a constant argument.
    u = ar.from_numpy(np.arange(4.0), chunks=3)
    w = ar.from_numpy(np.arange(5.0), chunks=2)
    o = ar.blockwise(lambda p, q, c: np.multiply.outer(p, q) + c, "ij", u, "i", w, "j",
                     2.0, None)
    assert_same(o.compute(), np.multiply.outer(np.arange(4.0), np.arange(5.0)) + 2.0)


def test_blockwise_concatenate_false_passes_the_lists_of_blocks():
    a = np.arange(35.0).reshape(5, 7)
    b = np.arange(28.0).reshape(7, 4)
    # The contracted index j has other chunks in each input: they are unified first, and
    # the function receives the blocks along j as lists (dask's default).
    x = ar.from_numpy(a, chunks=(2, 3))
    y = ar.from_numpy(b, chunks=(4, 2))
    seen = []

    def dot_of_lists(p, q):
        assert isinstance(p, list) and isinstance(q, list) and len(p) == len(q)
        seen.append(len(p))
        return sum(u @ v for u, v in zip(p, q))

    m = ar.blockwise(dot_of_lists, "ik", x, "ij", y, "jk", dtype=float)
    assert_same(m.compute(), a @ b)
    assert seen and set(seen) == {3}, seen  # j in blocks of 3, 3, 1
    # Two contracted indices nest, outermost first; concatenate=True still concatenates.
    c = np.arange(60.0).reshape(3, 4, 5)
    z = ar.from_numpy(c, chunks=(1, 2, 5))

    def total(blocks):
        assert len(blocks) == 2 and all(len(row) == 1 for row in blocks)
        return np.array([sum(p.sum() for row in blocks for p in row)])

    assert_same(ar.blockwise(total, "i", z, "ijk", dtype=float).compute(), c.sum(axis=(1, 2)))
    whole = ar.blockwise(lambda p: p.sum(axis=(1, 2)), "i", z, "ijk", concatenate=True)
    assert_same(whole.compute(), c.sum(axis=(1, 2)))


def test_map_blocks_block_info_as_dask_documents_it():
    # dask's example: 1000 elements in blocks of 100; block k is [100k, 100k + 100).
    x = ar.ones(1000, chunks=100)

    def check(b, block_info=None):
        k = block_info[None]["chunk-location"][0]
        assert block_info[0] == {
            "shape": (1000,), "num-chunks": (10,), "chunk-location": (k,),
            "array-location": [(100 * k, 100 * k + 100)]}, block_info
        out = block_info[None]
        assert (out["shape"], out["num-chunks"], out["chunk-shape"]) == ((1000,), (10,), (100,))
        assert out["array-location"] == [(100 * k, 100 * k + 100)] and out["dtype"] == np.float64
        return b * k

    assert_same(ar.map_blocks(check, x, dtype=float).compute(), np.repeat(np.arange(10.0), 100))
    # In 2-d, with a second input at position 2 (a constant between them) that broadcasts.
    a = np.zeros((5, 7))
    v = ar.from_numpy(np.arange(7.0), chunks=3)

    def where(p, c, q, block_info=None):
        (r0, _), (c0, _) = block_info[None]["array-location"]
        assert block_info[2]["array-location"] == [(c0, c0 + q.shape[0])]
        assert 1 not in block_info
        return p + r0 * 100 + c0 + c - q

    got = ar.map_blocks(where, ar.from_numpy(a, chunks=(2, 3)), 0.5, v).compute()
    rows = np.repeat([0, 2, 4], [2, 2, 1])[:, None] * 100
    cols = np.repeat([0, 3, 6], [3, 3, 1])[None, :]
    assert_same(got, rows + cols + 0.5 - np.arange(7.0))


def _window_sum(b):
    # A 3-point moving sum along every axis of the block (uses one element of halo).
    out = b.copy()
    for axis in range(b.ndim):
        lo = np.take(b, range(0, b.shape[axis] - 2), axis=axis)
        mid = np.take(b, range(1, b.shape[axis] - 1), axis=axis)
        hi = np.take(b, range(2, b.shape[axis]), axis=axis)
        inner = [slice(None)] * b.ndim
        inner[axis] = slice(1, b.shape[axis] - 1)
        out2 = out.copy()
        out2[tuple(inner)] = lo + mid + hi
        out = out2
    return out


@pytest.mark.parametrize("boundary,mode,kw", [
    ("reflect", "symmetric", {}),
    ("periodic", "wrap", {}),
    ("nearest", "edge", {}),
    (-3.0, "constant", {"constant_values": -3.0}),
])
def test_map_overlap_every_padding_boundary_against_np_pad(boundary, mode, kw):
    a = np.random.default_rng(1).random((9, 7))
    x = ar.from_numpy(a, chunks=(4, 3))
    depth = 1

    def f(b):
        # Sliding 3x3 sum over the extended block: the halo makes it exact everywhere.
        return _window_sum(b)

    got = ar.map_overlap(f, x, depth=depth, boundary=boundary).compute()
    padded = np.pad(a, depth, mode=mode, **kw)
    want = _window_sum(padded)[depth:-depth, depth:-depth]
    assert_same(got, want, rtol=1e-12)


def test_map_overlap_none_boundary_and_depth_per_axis():
    a = np.arange(20.0)
    x = ar.from_numpy(a, chunks=6)
    # 'none': the outer blocks get no halo at the array's ends; a depth of 2.
    got = ar.map_overlap(lambda b: np.cumsum(b), x, depth=2, boundary="none").compute()
    want = []
    for k, s in enumerate(range(0, 20, 6)):
        e = min(s + 6, 20)
        lo, hi = max(s - 2, 0), min(e + 2, 20)
        block = np.cumsum(a[lo:hi])
        want.append(block[s - lo: len(block) - (hi - e)])
    assert_same(got, np.concatenate(want))
    # trim=False gives the extended blocks; a dict depth touches only its axis.
    b2 = np.arange(24.0).reshape(4, 6)
    x2 = ar.from_numpy(b2, chunks=(2, 3))
    ext = ar.map_overlap(lambda b: b, x2, depth={1: 1}, boundary="periodic", trim=False)
    assert ext.chunks == ((2, 2), (5, 5))
    padded = np.pad(b2, ((0, 0), (1, 1)), mode="wrap")
    assert_same(ext.compute(), np.concatenate([padded[:, 0:5], padded[:, 3:8]], axis=1))


def test_reduction_tree_matches_numpy():
    a = np.random.default_rng(2).random((10, 9))
    x = ar.from_numpy(a, chunks=(2, 2))  # 5 x 5 blocks: two levels of a fan-in-4 tree
    total = ar.reduction(x, np.sum, np.sum)
    assert_same(total.compute(), a.sum(), rtol=1e-12)
    rows = ar.reduction(x, np.max, np.max, axis=1)
    assert_same(rows.compute(), a.max(axis=1))
    kept = ar.reduction(x, np.min, np.min, axis=0, keepdims=True)
    assert_same(kept.compute(), a.min(axis=0, keepdims=True))

    # A user reduction with its own partials: count of values above 0.5 per column.
    def chunk(b, axis, keepdims):
        return np.sum(b > 0.5, axis=axis, keepdims=keepdims)

    counts = ar.reduction(x, chunk, np.sum, axis=0, combine=np.sum, dtype=np.int64)
    assert_same(counts.compute(), (a > 0.5).sum(axis=0))


def test_apply_gufunc_matches_numpy():
    a = np.random.default_rng(3).random((6, 4))
    b = np.random.default_rng(4).random((6, 4))
    x = ar.from_numpy(a, chunks=(2, 4))
    y = ar.from_numpy(b, chunks=(3, 2))
    # dask's example: a mean over the core dimension.
    m = ar.apply_gufunc(lambda v: v.mean(axis=-1), "(i)->()", x)
    assert_same(m.compute(), a.mean(axis=-1))
    dot = ar.apply_gufunc(lambda p, q: np.einsum("...i,...i->...", p, q), "(i),(i)->()", x, y,
                          allow_rechunk=True)
    assert_same(dot.compute(), np.einsum("ij,ij->i", a, b), rtol=1e-12)
    with pytest.raises(ValueError, match="allow_rechunk"):
        ar.apply_gufunc(lambda p, q: (p * q).sum(-1), "(i),(i)->()", x, y)
    # vectorize, and two outputs.
    v = ar.apply_gufunc(lambda row: row.max() - row.min(), "(i)->()", x, vectorize=True,
                        output_dtypes=float)
    assert_same(v.compute(), a.max(axis=1) - a.min(axis=1))
    lo, hi = ar.apply_gufunc(lambda r: (r.min(-1), r.max(-1)), "(i)->(),()", x)
    assert_same(lo.compute(), a.min(axis=1))
    assert_same(hi.compute(), a.max(axis=1))


def test_blocks_are_lent_read_only_without_a_copy_and_outlive_the_call():
    a = np.arange(2 * 10**4 * 2, dtype=np.float64).reshape(2 * 10**4, 2)
    x = ar.from_numpy(a, chunks=(2 * 10**4, 1))  # blocks of 160 KB: lent (from 64 KiB)
    seen = []

    def look(b):
        # The engine's own memory: read-only, owned by something else (no copy was made).
        if b.size:  # not the zero-size block the dtype is found on
            seen.append((b.flags.writeable, b.flags.owndata, b.base is not None))
            kept.append(b)
        return b * 1

    kept: list = []
    assert_same(ar.map_blocks(look, x).compute(), a)
    assert len(seen) == 2 and all(s == (False, False, True) for s in seen)
    # A block the function kept still holds its values after the job (the engine's store
    # may have dropped its chunk: the array's base keeps the memory alive).
    ar.map_blocks(lambda b: b + 1, ar.ones((1000, 1000), chunks=250)).sum().compute()
    assert_same(np.concatenate(sorted(kept, key=lambda b: b[0, 0]), axis=1), a)
    # Small blocks are copies of their own (writable: a copy costs less than lending).
    small = []
    ar.map_blocks(lambda b: small.append(b.flags.writeable) or b,
                  ar.from_numpy(np.arange(8.0), chunks=4)).compute()
    assert small and all(small)


def test_a_function_writing_into_its_block_gets_a_copy_and_the_store_is_untouched():
    a = np.arange(3 * 10**4, dtype=np.float64)
    x = ar.from_numpy(a, chunks=10**4)  # blocks of 80 KB: lent

    def clamp_in_place(b):
        b[b > 5] = 5  # NumPy refuses on a lent block: the call is repeated on a copy
        return b

    def sort_in_place(b):
        b.sort()
        return b[::-1].copy()

    y = x[::-1]
    assert_same(ar.map_blocks(clamp_in_place, x).compute(), np.minimum(a, 5))
    assert_same(ar.map_blocks(sort_in_place, y).compute(),
                np.concatenate([np.sort(c)[::-1] for c in np.split(a[::-1], 3)]))
    # The inputs the functions wrote into are unchanged for whoever reads them next.
    assert_same((x + y).compute(), a + a[::-1])


def test_a_block_of_another_shape_or_dtype_fails_naming_the_block():
    x = ar.from_numpy(np.arange(10.0), chunks=4)
    bad = ar.map_blocks(lambda b, block_id=None: b[:-1] if block_id == (0,) else b, x)
    with pytest.raises(ar.TaskError, match=r"block \(0,\) of shape \(3,\) float64 where \(4,\) "
                                           r"float64 was declared"):
        bad.compute()
    wrong_dtype = ar.map_blocks(lambda b: b.astype(np.int64), x, dtype=np.float64)
    with pytest.raises(ar.TaskError, match="int64 where"):
        wrong_dtype.compute()
    unsupported = ar.map_blocks(lambda b: b.astype(np.float16), x, dtype=np.float64)
    with pytest.raises(ar.TaskError, match="dtype float16"):
        unsupported.compute()


def test_an_exception_fails_the_task_with_the_traceback_and_block():
    x = ar.from_numpy(np.arange(10.0), chunks=4)

    def explode(b, block_id=None):
        if block_id == (2,):
            raise ZeroDivisionError("no blocks past the second, please")
        return b

    with pytest.raises(ar.TaskError) as e:
        ar.map_blocks(explode, x).compute()
    text = str(e.value)
    assert "explode raised on block (2,)" in text
    assert "ZeroDivisionError: no blocks past the second, please" in text
    # The engine is still usable afterwards.
    assert_same(ar.map_blocks(lambda b: b, x).compute(), np.arange(10.0))


def test_bad_arguments_raise_at_once():
    x = ar.from_numpy(np.arange(10.0), chunks=4)
    with pytest.raises(TypeError, match="callable"):
        ar.map_blocks(3, x)
    with pytest.raises(ValueError, match="Tensor"):
        ar.map_blocks(np.sin, np.arange(3))
    with pytest.raises(ValueError, match="name 2 blocks; there are 3"):
        ar.map_blocks(lambda b: b, x, chunks=((1, 1),))
    with pytest.raises(ValueError, match="boundary"):
        ar.map_overlap(lambda b: b, x, depth=1, boundary="mirror")


def test_an_unpicklable_function_runs_in_the_embedded_engine():
    lock = threading.Lock()  # cloudpickle cannot pickle a lock
    seen = []

    def count(b):
        with lock:
            seen.append(len(b))
        return b * 2

    x = ar.from_numpy(np.arange(10.0), chunks=4)
    assert_same(ar.map_blocks(count, x).compute(), np.arange(10.0) * 2)
    assert sorted(n for n in seen if n) == [2, 4, 4]  # (0: the call finding the dtype)


def test_cancelling_while_a_function_runs_frees_the_slot_when_it_returns():
    ar.start(workers=1, slots=1)
    try:
        eng = ar.engine()
        started, release = threading.Event(), threading.Event()
        calls = []

        def slow(b):
            calls.append(len(b))
            started.set()
            release.wait(60)
            return b

        x = ar.from_numpy(np.arange(80.0), chunks=10)
        job = ar.map_blocks(slow, x, dtype=float).sum()  # dtype given: no call to find it
        sent = []

        def interrupt_once(fraction, subtasks):
            if not sent and started.is_set():
                sent.append(time.monotonic())
                os.kill(os.getpid(), signal.SIGINT)

        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            with pytest.raises(KeyboardInterrupt):
                eng.run([job._handle], interrupt_once, 0.05)
        finally:
            signal.signal(signal.SIGINT, previous)
        # Cancelled at once, while the call still runs (it cannot be interrupted).
        assert eng.task_status(eng.last_task) == "Cancelled"
        assert not release.is_set() and calls == [10]
        # Once it returns, its slot (the only one) runs the next job. Of the cancelled task's
        # 8 blocks, only those of the subtask that was running ran (coloring groups 2 initial
        # chunks per subtask): the queued subtasks never started.
        release.set()
        assert ar.map_blocks(lambda b: b + 1, x).sum().compute() == float(np.arange(80.0).sum() + 80)
        assert 1 <= len(calls) <= 2, calls
    finally:
        release.set()
        ar.start(workers=2, slots=1)
