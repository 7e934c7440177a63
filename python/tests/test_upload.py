"""``from_numpy`` against a real cluster with no shared directory: the arrays are uploaded over
the native protocol and over HTTP, computed on like any tensor (compared with NumPy), listed
in their session (``GET /api/session/{sid}/tensor``) until the last tensor reading them is
gone or the engine is closed, and refused with a clear exception when they cannot go."""

from __future__ import annotations

import gc
import json
import urllib.request
import warnings

import numpy as np
import pytest

import ares as ar
from helpers import assert_same


@pytest.fixture(params=["native", "http"])
def remote(request, cluster):
    """The cluster over each protocol, with no ``upload_dir``: ``from_numpy`` uploads."""
    if request.param == "native":
        eng = ar.connect(f"ares://{cluster.rpc}", secret=cluster.secret)
        session = "default"
    else:
        eng = ar.connect(f"http://{cluster.web}", token=cluster.token, session="py-upload")
        session = "py-upload"
    yield eng, session
    ar.close()


def listed(cluster, session: str) -> list[str]:
    """The names of the session's tensors held on the workers."""
    req = urllib.request.Request(f"http://{cluster.web}/api/session/{session}/tensor",
                                 headers={"Authorization": f"Bearer {cluster.token}"})
    with urllib.request.urlopen(req) as r:
        return [t["name"] for t in json.load(r)["tensors"]]


CASES = [
    # (array, chunks)
    (np.linspace(-3.0, 7.0, 24).reshape(4, 6), (3, 4)),
    (np.arange(-50, 50, dtype=np.int64) ** 3, 7),
    (np.random.default_rng(1).random((5, 3, 4)) > 0.4, None),
    (np.random.default_rng(2).normal(size=(10, 9)), ((2, 3, 5), (4, 4, 1))),
    (np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308]), 2),
    (np.arange(7, dtype=np.int64), 1),
    (np.zeros((0, 3)), 2),  # empty: nothing to upload
    (np.float64(2.5), None),  # 0-d: a number
    (np.array(True), None),
]


@pytest.mark.parametrize("array, chunks", CASES,
                         ids=[f"{np.asarray(a).dtype}{np.shape(a)}" for a, _ in CASES])
def test_arrays_are_uploaded_and_computed_on(remote, cluster, array, chunks):
    eng, session = remote
    x = ar.from_numpy(array, chunks=chunks)
    assert x.shape == array.shape and x.dtype == array.dtype
    uploaded = array.ndim > 0 and array.size > 0
    assert len(eng.uploads) == (1 if uploaded else 0)
    if chunks is not None and uploaded:
        want = ar.zeros(array.shape, dtype=array.dtype, chunks=chunks).chunks
        assert x.chunks == want
    assert_same(x.compute(), array)
    if array.dtype == np.bool_:
        tensors = [~x, x.astype(ar.int64).sum(axis=0) if x.ndim else x]
        wants = [~array, array.astype(np.int64).sum(axis=0) if array.ndim else array]
    else:
        tensors = [x * 3, (x * 2 - 1).sum(axis=0)]
        with np.errstate(over="ignore", invalid="ignore"):
            wants = [array * 3, (array * 2 - 1).sum(axis=0)]
        if array.ndim:
            tensors.append(x[::-1] + x)
            wants.append(array[::-1] + array)
        if array.size:
            tensors.append(ar.max(x))
            wants.append(np.max(array))
    for g, w in zip(ar.compute(*tensors), wants):
        assert_same(g, w)
    if uploaded:
        assert len(listed(cluster, session)) == 1


def test_an_upload_is_freed_with_its_last_tensor_and_on_close(remote, cluster):
    eng, session = remote
    a = np.arange(30.0).reshape(5, 6)
    x = ar.from_numpy(a, chunks=2)
    y = ar.from_numpy(a > 10, chunks=3)
    z = x + 1  # reads x's upload too
    (task_x, task_y) = sorted(eng.uploads)
    assert len(listed(cluster, session)) == 2
    del x
    gc.collect()
    assert sorted(eng.uploads) == [task_x, task_y], "z still reads it"
    assert_same(z.compute(), a + 1)
    del z
    gc.collect()
    assert eng.uploads == [task_y]
    assert len(listed(cluster, session)) == 1
    assert_same(y.compute(), a > 10)
    ar.close()
    assert listed(cluster, session) == [], "close frees the uploads still held"
    with pytest.raises(ValueError, match="no longer the engine"):
        y.compute()


def test_two_arrays_in_one_expression_and_a_large_one(remote):
    rng = np.random.default_rng(3)
    a = rng.random((300, 400))  # ~1 MB: several pieces, several chunks
    b = rng.integers(-9, 9, size=(400,))
    x, y = ar.from_numpy(a, chunks=(100, 128)), ar.from_numpy(b, chunks=100)
    assert_same((x @ y.astype(ar.float64)).compute(), a @ b.astype(np.float64))
    # A non-native byte order and a non-contiguous view upload as their values.
    c = np.arange(12, dtype=">i8").reshape(3, 4)[:, ::2]
    assert_same(ar.from_numpy(c).compute(), c.astype(np.int64))


def test_upload_dir_is_still_the_fast_path(cluster, tmp_path):
    eng = ar.connect(f"ares://{cluster.rpc}", secret=cluster.secret, upload_dir=cluster.data)
    try:
        x = ar.from_numpy(np.arange(10.0), chunks=3)
        assert eng.uploads == [] and x._handle.op == "from_npy"
        assert_same((x * 2).compute(), np.arange(10.0) * 2)
    finally:
        ar.close()


@pytest.fixture(params=["native", "http"])
def small_cluster(request, tmp_path):
    """A cluster of its own (it is stopped by the test) taking uploads of at most 100 kB."""
    from conftest import Cluster

    c = Cluster(str(tmp_path), workers=1, extra_yaml="limits:\n  max_upload_bytes: 100000\n")
    address = f"ares://{c.rpc}" if request.param == "native" else f"http://{c.web}"
    try:
        yield c, address
    finally:
        ar.close()
        c.stop()


def test_too_large_and_lost_connections_are_clear_errors(small_cluster):
    c, address = small_cluster
    creds = {"secret": c.secret} if address.startswith("ares://") else {"token": c.token}
    eng = ar.connect(address, **creds)
    with pytest.raises(ValueError, match=r"over limits.max_upload_bytes \(100000 bytes\)"):
        ar.from_numpy(np.zeros(100_000))
    assert eng.uploads == []
    small = ar.from_numpy(np.ones(100))
    assert len(eng.uploads) == 1
    c.stop()
    with pytest.raises(ConnectionError, match="uploading the array to .*: connection lost: "):
        ar.from_numpy(np.zeros(100))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to free on a lost cluster: no warning
        del small
        gc.collect()
    assert eng.uploads == []


def test_explain_is_prepared_by_the_connected_cluster(remote, cluster):
    """``explain`` on a connected cluster asks its supervisor, which plans for its live workers
    and their slots (2 workers of 1 slot here) with its config, not for a placeholder 2 × 2."""
    x = ar.random.rand(64, chunks=2, seed=1) * 2
    text = ar.explain(x.sum(), limit=0)
    assert text.startswith("== tileable graph")
    assert "w0 slots=1" in text and "w1 slots=1" in text, text
    assert "slots=2" not in text and "w2 " not in text, text
