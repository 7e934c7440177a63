"""Shared fixtures: a real cluster of separate `ares node` processes (the package's console
command) on loopback, ports chosen by the OS and read from ready files, as the Rust tests
start theirs (tests/common/cluster.rs)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time

import pytest
from hypothesis import settings

import ares as ar

# CI runs the same examples every time (`HYPOTHESIS_PROFILE=ci`, set by scripts/test.sh): a
# red CI then names a reproducible case, not a draw; a run without it explores new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

NODE_START_TIMEOUT = 60.0


def _ares_command() -> list[str]:
    # The console script the package installs; `python -m ares.cli` where it is not on PATH.
    exe = shutil.which("ares", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "ares.cli"]


def _wait_ready(path: str, proc: subprocess.Popen) -> dict:
    deadline = time.monotonic() + NODE_START_TIMEOUT
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        if proc.poll() is not None:
            raise RuntimeError(f"node exited with {proc.returncode} before it was ready")
        time.sleep(0.02)
    raise TimeoutError(f"{path} did not appear within {NODE_START_TIMEOUT} s")


class Cluster:
    """A supervisor (RPC and web on port 0, with a token) and `workers` worker processes."""

    def __init__(self, tmp: str, workers: int = 2, extra_yaml: str = ""):
        self.tmp = tmp
        self.secret = secrets.token_hex(16)
        self.token = secrets.token_hex(8)
        self.data = os.path.join(tmp, "data")
        os.makedirs(self.data)
        config = os.path.join(tmp, "node.yml")
        with open(config, "w") as f:
            f.write(
                "cluster:\n  listen: 127.0.0.1:0\n"
                "worker:\n  slots: 1\n  data_listen: 127.0.0.1:0\n  memory_limit: 1GiB\n"
                f"web:\n  listen: 127.0.0.1:0\n  token: {self.token}\n"
                f"data:\n  roots: [{json.dumps(self.data)}]\n"
                + extra_yaml
            )
        env = dict(os.environ, ARES_CLUSTER_SECRET=self.secret)
        self.procs: list[subprocess.Popen] = []
        ready = os.path.join(tmp, "supervisor.json")
        sup = self._spawn(["--role", "supervisor", "--config", config, "--ready-file", ready], env)
        info = _wait_ready(ready, sup)
        self.rpc, self.web = info["rpc"], info["web"]
        for i in range(workers):
            ready = os.path.join(tmp, f"worker{i}.json")
            w = self._spawn(["--role", "worker", "--config", config, "--supervisor", self.rpc,
                             "--ready-file", ready], env)
            _wait_ready(ready, w)

    def _spawn(self, args, env):
        log = open(os.path.join(self.tmp, f"node{len(self.procs)}.log"), "w")
        proc = subprocess.Popen(_ares_command() + ["node"] + args, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    c = Cluster(str(tmp_path_factory.mktemp("cluster")))
    try:
        yield c
    finally:
        ar.close()
        c.stop()


@pytest.fixture(params=["embedded", "native", "http"])
def any_engine(request):
    """Each test using this runs in process, and on the real cluster over both protocols."""
    if request.param == "embedded":
        ar.start(workers=2, slots=1)
        yield request.param
    else:
        c = request.getfixturevalue("cluster")
        if request.param == "native":
            ar.connect(f"ares://{c.rpc}", secret=c.secret, upload_dir=c.data)
        else:
            ar.connect(f"http://{c.web}", token=c.token, upload_dir=c.data)
        yield request.param
    ar.close()
