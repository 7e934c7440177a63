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


# The configs the project ships (config/), for the cluster a new user starts.
SHIPPED_CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "config")


class Cluster:
    """A supervisor (RPC and web on port 0, with a token) and `workers` worker processes.

    By default one config for every node, with a data root; `shipped=True` starts them from
    the project's own `config/supervisor.yml` and `config/worker.yml` instead, changed only
    where a test must be (the supervisor's RPC and web ports are 0, the web API has a token):
    no data root, as a new user's cluster. `web_yaml` adds lines under `web:` (indented)."""

    def __init__(self, tmp: str, workers: int = 2, extra_yaml: str = "", shipped: bool = False,
                 web_yaml: str = ""):
        self.tmp = tmp
        self.secret = secrets.token_hex(16)
        self.token = secrets.token_hex(8)
        self.data = os.path.join(tmp, "data")
        os.makedirs(self.data)
        if shipped:
            sup_config, worker_config = self._shipped_configs()
        else:
            sup_config = worker_config = os.path.join(tmp, "node.yml")
            with open(sup_config, "w") as f:
                f.write(
                    "cluster:\n  listen: 127.0.0.1:0\n"
                    "worker:\n  slots: 1\n  data_listen: 127.0.0.1:0\n  memory_limit: 1GiB\n"
                    f"web:\n  listen: 127.0.0.1:0\n  token: {self.token}\n" + web_yaml +
                    f"data:\n  roots: [{json.dumps(self.data)}]\n"
                    + extra_yaml
                )
        env = dict(os.environ, ARES_CLUSTER_SECRET=self.secret)
        self.procs: list[subprocess.Popen] = []
        ready = os.path.join(tmp, "supervisor.json")
        sup = self._spawn(["--role", "supervisor", "--config", sup_config, "--ready-file", ready],
                          env)
        info = _wait_ready(ready, sup)
        self.rpc, self.web = info["rpc"], info["web"]
        for i in range(workers):
            ready = os.path.join(tmp, f"worker{i}.json")
            w = self._spawn(["--role", "worker", "--config", worker_config, "--supervisor",
                             self.rpc, "--ready-file", ready], env)
            _wait_ready(ready, w)

    def _shipped_configs(self) -> tuple[str, str]:
        def changed(name: str, edits: list[tuple[str, str]]) -> str:
            with open(os.path.join(SHIPPED_CONFIG, name)) as f:
                text = f.read()
            for old, new in edits:
                assert text.count(old) == 1, f"config/{name} no longer has {old!r} once"
                text = text.replace(old, new)
            path = os.path.join(self.tmp, name)
            with open(path, "w") as f:
                f.write(text)
            return path

        sup = changed("supervisor.yml", [
            ("listen: 127.0.0.1:7700", "listen: 127.0.0.1:0"),
            ("  listen: null", "  listen: 127.0.0.1:0"),
            ("  token: null", f"  token: {self.token}"),
        ])
        return sup, changed("worker.yml", [])

    def _spawn(self, args, env):
        log = open(os.path.join(self.tmp, f"node{len(self.procs)}.log"), "w")
        proc = subprocess.Popen(_ares_command() + ["node"] + args, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def stop(self):
        stop_processes(self.procs)


def stop_processes(procs: list) -> None:
    """Terminates the processes (the last started first) and reaps them; one that does not
    end in 30 s is killed."""
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
    for p in procs:
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


@pytest.fixture(scope="session")
def shipped_cluster(tmp_path_factory):
    """A cluster started from the shipped configs (no data root), as a new user starts one."""
    c = Cluster(str(tmp_path_factory.mktemp("shipped")), shipped=True)
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
