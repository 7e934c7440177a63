"""User functions on a real cluster (issue 31): code runs only where it may.

* A cluster without ``cluster.allow_code`` refuses a graph with a Python function at
  submission, over the native protocol and HTTP, naming the key.
* A cluster with one ``python -m ares worker`` and one worker of the Rust ``ares`` binary
  (which cannot run Python): every block of a ``map_blocks`` runs on the Python worker
  (one on the Rust worker would fail the task), NumPy's answer comes back, and plain work
  still uses both workers.
* With only the Rust binary's worker, such a task fails at once naming
  ``python -m ares worker``.
* A function that kills the worker running it (SIGSEGV, as a crashing C extension would)
  is a lost worker: its block runs again on another worker, and a function that kills
  every worker it meets fails the task once the retries are spent, naming the function.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import ares as ar
from conftest import _ares_command, _wait_ready, stop_processes
from helpers import assert_same

REPO = os.path.join(os.path.dirname(__file__), "..", "..")


def _rust_binary() -> str | None:
    """The Rust ``ares`` binary: ``ARES_BIN``, else the workspace's debug or release build."""
    candidates = [os.environ.get("ARES_BIN")]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    candidates += [os.path.join(target, p, "ares") for p in ("debug", "release")]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


class CodeCluster:
    """A supervisor (the package's command) and the workers named: "python" (``python -m
    ares worker``) or "rust" (the Rust binary's ``ares node --role worker``)."""

    def __init__(self, tmp: str, workers: list[str], allow_code: bool = True,
                 retries: int = 3):
        self.tmp = tmp
        self.secret = secrets.token_hex(16)
        self.token = secrets.token_hex(8)
        config = os.path.join(tmp, "node.yml")
        with open(config, "w") as f:
            f.write(
                f"cluster:\n  listen: 127.0.0.1:0\n  allow_code: {str(allow_code).lower()}\n"
                "worker:\n  slots: 1\n  data_listen: 127.0.0.1:0\n  memory_limit: 1GiB\n"
                f"scheduling:\n  subtask_max_retries: {retries}\n"
                f"web:\n  listen: 127.0.0.1:0\n  token: {self.token}\n")
        self.env = dict(os.environ, ARES_CLUSTER_SECRET=self.secret)
        self.procs: list[subprocess.Popen] = []
        ready = os.path.join(tmp, "supervisor.json")
        sup = self._spawn(_ares_command() + ["node", "--role", "supervisor", "--config", config,
                                             "--ready-file", ready])
        info = _wait_ready(ready, sup)
        self.rpc, self.web = info["rpc"], info["web"]
        for i, kind in enumerate(workers):
            ready = os.path.join(tmp, f"worker{i}.json")
            if kind == "python":
                cmd = [sys.executable, "-m", "ares", "worker"]
            else:
                cmd = [_rust_binary(), "node", "--role", "worker"]
            w = self._spawn(cmd + ["--config", config, "--supervisor", self.rpc,
                                   "--ready-file", ready])
            _wait_ready(ready, w)

    def _spawn(self, cmd):
        log = open(os.path.join(self.tmp, f"node{len(self.procs)}.log"), "w")
        proc = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def stop(self):
        stop_processes(self.procs)


needs_rust = pytest.mark.skipif(_rust_binary() is None,
                                reason="no Rust `ares` binary (cargo build, or set ARES_BIN)")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    c = CodeCluster(str(tmp_path_factory.mktemp("mixed")), ["python", "rust"])
    try:
        yield c
    finally:
        ar.close()
        c.stop()


@pytest.mark.parametrize("protocol", ["native", "http"])
def test_without_allow_code_the_graph_is_refused_naming_the_key(cluster, protocol):
    if protocol == "native":
        ar.connect(f"ares://{cluster.rpc}", secret=cluster.secret)
    else:
        ar.connect(f"http://{cluster.web}", token=cluster.token)
    try:
        x = ar.arange(10.0, chunks=3)
        with pytest.raises(ar.TaskError, match="cluster.allow_code"):
            ar.map_blocks(lambda b: b + 1, x).compute()
        # Everything else still runs.
        assert_same((x + 1).compute(), np.arange(10.0) + 1)
    finally:
        ar.close()


@needs_rust
@pytest.mark.parametrize("protocol", ["native", "http"])
def test_code_runs_only_on_the_python_worker(mixed, protocol):
    if protocol == "native":
        ar.connect(f"ares://{mixed.rpc}", secret=mixed.secret)
    else:
        ar.connect(f"http://{mixed.web}", token=mixed.token)
    try:
        a = np.arange(400.0).reshape(40, 10)
        x = ar.arange(400.0, chunks=10).reshape(40, 10).rechunk((1, 10))
        scale = 3.0
        y = ar.map_blocks(lambda b: np.sin(b) * scale, x)
        assert_same(y.compute(), np.sin(a) * scale, rtol=1e-12)
        m = ar.map_overlap(lambda b: b * 2, x, depth=1, boundary="periodic")
        assert_same(m.compute(), a * 2)
        r = ar.reduction(x, np.sum, np.sum, axis=0)
        assert_same(r.compute(), a.sum(axis=0), rtol=1e-12)
        assert_same(((x + 1) * 2).sum().compute(), ((a + 1) * 2).sum(), rtol=1e-12)
    finally:
        ar.close()


@needs_rust
def test_with_only_native_workers_the_task_fails_naming_python_workers(tmp_path):
    c = CodeCluster(str(tmp_path), ["rust"])
    try:
        ar.connect(f"ares://{c.rpc}", secret=c.secret)
        x = ar.arange(10.0, chunks=3)
        with pytest.raises(ar.TaskError, match="python -m ares worker"):
            ar.map_blocks(lambda b: b + 1, x).compute()
    finally:
        ar.close()
        c.stop()


def _crash_once(marker):
    """A function that kills the first worker to call it (the marker file says whether
    that happened) and adds 1 everywhere else."""

    def first_call_crashes(b):
        if not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGSEGV)
        return b + 1

    return first_call_crashes


def _dead(procs, expected, timeout=10.0):
    """How many of ``procs`` have exited, waiting up to ``timeout`` for ``expected`` of them
    (a killed worker's socket can close before its exit is reaped)."""
    deadline = time.monotonic() + timeout
    while True:
        dead = sum(p.poll() is not None for p in procs)
        if dead >= expected or time.monotonic() > deadline:
            return dead
        time.sleep(0.05)


def test_a_function_that_crashes_its_worker_runs_again_elsewhere(tmp_path):
    c = CodeCluster(str(tmp_path), ["python", "python", "python"], retries=1)
    try:
        ar.connect(f"ares://{c.rpc}", secret=c.secret)
        x = ar.arange(40.0, chunks=10)
        # dtype= given: the function is never called in this process to find it.
        got = ar.map_blocks(_crash_once(str(tmp_path / "crashed")), x, dtype=float).compute()
        assert_same(got, np.arange(40.0) + 1)
        workers = c.procs[1:]
        assert _dead(workers, 1) == 1, "one worker was killed"
        # A function that kills every worker it meets: one run and one retry (the cap),
        # then the task fails naming it. (Defined here, so cloudpickle sends it by value.)
        def segfaulting_filter(b):
            os.kill(os.getpid(), signal.SIGSEGV)
            return b

        with pytest.raises(ar.TaskError, match="segfaulting_filter") as failed:
            ar.map_blocks(segfaulting_filter, ar.arange(10.0, chunks=10), dtype=float).compute()
        assert "subtask_max_retries = 1" in str(failed.value)
        assert _dead(workers, 3) == 3
    finally:
        ar.close()
        c.stop()
