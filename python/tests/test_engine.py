"""The engine side: results and their types, errors and their classes, Ctrl-C, progress,
explain, repr, sources and the console command; in process and on a real cluster over the
native protocol and HTTP."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ares as ar
from conftest import Cluster
from helpers import assert_same


def test_same_results_in_process_and_on_a_cluster(any_engine):
    a = np.arange(24.0).reshape(4, 6)
    x = ar.from_numpy(a, chunks=(3, 4))
    got = ar.compute((x * 2).sum(axis=0), x[1:, ::2], x[x > 10], ar.unique((x > 5).astype(ar.int64)), 3)
    want = ((a * 2).sum(axis=0), a[1:, ::2], a[a > 10], np.unique((a > 5).astype(np.int64)), 3)
    for g, w in zip(got, want):
        assert_same(g, w)
    # a data-dependent length in a result of one chunk (its fetch once kept the upper bound)
    y = ar.arange(4.0)
    assert_same(y[y > 1].compute(), np.array([2.0, 3.0]))
    s = (ar.random.rand(10**5, chunks=10**4, seed=1) + ar.random.rand(10**5, chunks=10**4, seed=2)).sum()
    value = s.compute()
    assert isinstance(value, float) and 99_000 < value < 101_000
    assert ar.engine().kind == any_engine


def test_results_are_numpy_arrays_owning_the_fetched_buffer_or_python_scalars():
    ar.start(workers=1, slots=2)
    r = ar.arange(10**6, chunks=10**5).compute()
    assert isinstance(r, np.ndarray) and r.dtype == np.int64 and r[-1] == 10**6 - 1
    # NumPy holds the Rust buffer without a copy: the array is a view whose base owns it.
    assert not r.flags.owndata and r.base is not None and r.flags.writeable
    assert type(ar.ones(3).sum().compute()) is float
    assert type(ar.arange(3).sum().compute()) is int
    assert type((ar.ones(3) > 0).all().compute()) is bool


def test_errors_building_tensors_are_value_errors_with_the_engines_message():
    with pytest.raises(ValueError, match=r"add: operands could not be broadcast together with shapes \(3,\) \(4,\)"):
        ar.ones(3) + ar.ones(4)
    with pytest.raises(ValueError, match="unknown keyword argument 'colour' for cumsum"):
        ar.cumsum(ar.ones(3), colour=1)
    with pytest.raises(ValueError, match="reshape"):
        ar.ones(6).reshape(4, 2)
    with pytest.raises(AttributeError):
        ar.frobnicate
    with pytest.raises(IndexError):
        ar.ones(3)["a"]


def test_a_failed_task_raises_task_error_and_the_engine_goes_on():
    ar.start(workers=1, slots=1)
    x = ar.from_numpy(np.arange(10.0))
    (path,) = [k.path for k in x._keep]
    os.remove(path)
    with pytest.raises(ar.TaskError, match="from_npy|No such file|npy"):
        (x + 1).compute()
    assert issubclass(ar.TaskError, RuntimeError)
    assert ar.arange(4).sum().compute() == 6


def test_ctrl_c_cancels_the_running_task():
    ar.start(workers=1, slots=2)
    eng = ar.engine()
    long_job = ar.random.rand(10**10, chunks=10**6, seed=1).sum()
    sent = []

    def interrupt_once(fraction, subtasks):
        # SIGINT while the task runs, as Ctrl-C would: Python's handler only sets a flag;
        # the engine's wait loop must notice it, cancel the task and raise.
        if not sent:
            sent.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    # Python's own SIGINT handler, as in a terminal (a shell's background job starts Python
    # with SIGINT ignored, and Python then installs none).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            eng.run([long_job._handle], interrupt_once, 0.05)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent and time.monotonic() - sent[0] < 5.0
    assert eng.task_status(eng.last_task) == "Cancelled"
    # The engine goes on.
    assert ar.arange(100).sum().compute() == 4950


def test_progress_is_reported_while_a_job_runs_and_an_error_in_it_cancels(capsys):
    ar.start(workers=1, slots=2)
    calls = []

    class Enough(Exception):
        pass

    def progress(fraction, subtasks):
        calls.append((fraction, subtasks))
        if len(calls) == 3:
            raise Enough

    eng = ar.engine()
    x = ar.random.rand(10**10, chunks=10**6, seed=1).sum()
    with pytest.raises(Enough):
        eng.run([x._handle], progress, 0.02)
    assert len(calls) == 3
    assert all(0.0 <= f <= 1.0 and n > 0 for f, n in calls)
    assert [f for f, _ in calls] == sorted(f for f, _ in calls)
    assert eng.task_status(eng.last_task) == "Cancelled"
    assert ar.arange(10).sum().compute() == 45
    # ares' own bar (no tqdm) once the job has run half a second
    import ares._engine as engine_mod
    bar = engine_mod._Progress()
    bar.start -= 1.0
    bar.plain = True
    bar(0.5, 10)
    bar.close()
    assert "50.0%" in capsys.readouterr().err


def test_explain_prints_what_the_cli_prints():
    x = ar.random.rand(100, chunks=10, seed=1) + 1
    text = ar.explain(x.sum())
    assert text.startswith("== tileable graph")
    assert "FUSE[" in text and "== subtasks" in text
    cli = shutil.which("ares-cli-for-tests") or os.environ.get("ARES_CLI")
    if cli:
        out = subprocess.run([cli, "explain", "--expr", "sum(rand(100, chunk=10, seed=1) + 1)"],
                             capture_output=True, text=True, check=True).stdout
        assert out == ar._ares.explain([x.sum()._handle], 2, 2, 50)


def test_repr_shows_shape_dtype_and_chunks():
    x = ar.ones((100, 30), chunks=(40, 30))
    assert repr(x) == "ares.Tensor<full, shape=(100, 30), dtype=float64, chunksize=(40, 30), npartitions=3>"
    assert x.chunks == ((40, 40, 20), (30,))
    # A length that depends on the data is unknown (`?`), never the planning bound.
    assert "shape=(?,)" in repr(ar.unique(x))
    assert x.dtype == ar.float64 and x.ndim == 2 and x.size == 3000 and len(x) == 100


def test_sources_and_sinks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = np.arange(20).reshape(4, 5)
    np.save(tmp_path / "a.npy", a)
    ar.close()
    import ares._engine as engine_mod
    monkeypatch.setattr(engine_mod, "_roots", None)
    x = ar.from_npy("a.npy", chunks=2)
    assert_same((x + 1).compute(), a + 1)
    assert ar.to_npy(x * 2, "b.npy", compute=False).compute() == a.nbytes
    assert_same(np.load(tmp_path / "b.npy"), a * 2)
    assert ar.to_zarr(x, "z.zarr") is None
    assert_same(ar.from_zarr("z.zarr").compute(), a)
    ar.close()
    monkeypatch.setattr(engine_mod, "_roots", None)


def test_spool_files_go_with_their_last_tensor():
    a = ar.from_numpy(np.arange(5))
    (path,) = [k.path for k in a._keep]
    b = a + 1
    del a
    assert os.path.exists(path), "b still reads it"
    del b
    import gc
    gc.collect()
    assert not os.path.exists(path)


def test_console_command_starts_nodes_and_prints_its_version():
    exe = shutil.which("ares", path=os.path.dirname(sys.executable))
    cmd = [exe] if exe else [sys.executable, "-m", "ares.cli"]
    out = subprocess.run(cmd + ["--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"ares {ar.__version__}"
    bad = subprocess.run(cmd + ["node", "--role", "worker", "--supervisor", "127.0.0.1:1"],
                         capture_output=True, text=True, env=dict(os.environ, ARES_CLUSTER_SECRET="x" * 32),
                         timeout=120)
    assert bad.returncode != 0


def test_connect_errors_are_connection_errors():
    with pytest.raises(ConnectionError):
        ar.connect("ares://127.0.0.1:1", timeout=0.2)
    with pytest.raises(ConnectionError):
        ar.connect("http://127.0.0.1:1", timeout=0.2)


def test_cluster_auth_is_checked(cluster):
    with pytest.raises(ConnectionError):
        ar.connect(f"ares://{cluster.rpc}", secret="wrong" * 8, timeout=2)
    with pytest.raises(ConnectionError):
        ar.connect(f"http://{cluster.web}", token="wrong", timeout=2)


def _self_signed(tmp: str) -> tuple[str, str]:
    """A fresh self-signed leaf certificate for 127.0.0.1 (openssl), as tests/hostile_limits.rs
    makes its own: (cert.pem, key.pem)."""
    cert, key = os.path.join(tmp, "cert.pem"), os.path.join(tmp, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-addext", "basicConstraints=critical,CA:FALSE",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


@pytest.fixture(scope="module")
def https_cluster(tmp_path_factory):
    """A supervisor whose web API serves HTTPS with a self-signed certificate, one worker."""
    certs = str(tmp_path_factory.mktemp("certs"))
    cert, key = _self_signed(certs)
    c = Cluster(str(tmp_path_factory.mktemp("https")), workers=1,
                web_yaml=f"  tls_cert: {json.dumps(cert)}\n  tls_key: {json.dumps(key)}\n")
    c.cert = cert
    try:
        yield c
    finally:
        ar.close()
        c.stop()


def test_https_connect_trusts_ca_file_and_nothing_else(https_cluster, monkeypatch):
    c = https_cluster
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    url = f"https://{c.web}"
    ar.connect(url, token=c.token, ca_file=c.cert)
    try:
        m = ar.ones((40, 30), chunks=7)
        assert float(ar.sum(m @ m.T)) == 48000.0
    finally:
        ar.close()
    # Without ca_file the self-signed certificate is refused at once, naming the fix.
    start = time.monotonic()
    with pytest.raises(ConnectionError, match=r"certificate not trusted: pass --ca-file / "
                       r"ca_file= or set SSL_CERT_FILE"):
        ar.connect(url, token=c.token, timeout=10)
    assert time.monotonic() - start < 5
    # SSL_CERT_FILE names it instead.
    monkeypatch.setenv("SSL_CERT_FILE", c.cert)
    ar.connect(url, token=c.token)
    try:
        assert float(ar.sum(ar.arange(100, chunks=7))) == 4950.0
    finally:
        ar.close()
    monkeypatch.delenv("SSL_CERT_FILE")
    with pytest.raises(ConnectionError, match="nonexistent-ca.pem"):
        ar.connect(url, token=c.token, ca_file="/nonexistent-ca.pem")
    with pytest.raises(ValueError, match="https://"):
        ar.connect(f"http://{c.web}", token=c.token, ca_file=c.cert)
