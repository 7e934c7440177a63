"""User functions on blocks (issue 31): ares against dask distributed, the per-block overhead,
and how slots share the GIL.

    python benches/python_map_blocks.py [--part cluster|overhead|gil|all] [--blocks 10000]
                                        [--repeat 3]

* cluster: ``map_blocks(lambda b: b + 1)`` over ``--blocks`` blocks of 10 float64, then
  ``.sum()``, on a cluster of two Python-capable workers (a supervisor and two ``python -m
  ares worker`` processes of one slot, on loopback) against dask distributed's
  ``LocalCluster(n_workers=2, threads_per_worker=1)``; runs alternate, medians reported.
* overhead: the embedded engine (1 worker, 1 slot): the same job with ``lambda b: b`` against
  the same graph with the engine's own ``x + 0`` in its place; the difference per block is
  what a Python call costs (taking the GIL, the blocks to NumPy, the call, the result back),
  and that cost split by the runner's own clocks (``ares._ares._block_call_times``): waiting
  for the GIL, making the arguments, the call (the ``ares._blocks`` wrapper and the
  function), taking the result back; the rest is the engine's (a subtask more per block
  than ``x + 0``'s fused chain, the function's lookup). ``lambda b: b`` called directly on
  a NumPy block (``timeit``) is printed beside it.
* gil: the embedded engine with 1 and then 2 slots: ``np.sort`` of 32 blocks of 10^6
  float64 (NumPy releases the GIL) and a pure-Python loop over 32 blocks (it does not).

Prints one JSON line per measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def timed(f):
    start = time.perf_counter()
    value = f()
    return time.perf_counter() - start, value


def emit(**kw):
    kw["load"] = os.getloadavg()[0]
    print(json.dumps(kw), flush=True)


def _wait(path, proc, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
        if proc.poll() is not None:
            raise RuntimeError(f"node exited with {proc.returncode}")
        time.sleep(0.05)
    raise TimeoutError(path)


def ares_cluster(tmp):
    config = os.path.join(tmp, "node.yml")
    with open(config, "w") as f:
        f.write("cluster:\n  listen: 127.0.0.1:0\n  allow_code: true\n"
                "worker:\n  slots: 1\n  data_listen: 127.0.0.1:0\n")
    env = dict(os.environ, ARES_CLUSTER_SECRET=secrets.token_hex(16))
    procs = []
    ready = os.path.join(tmp, "sup.json")
    procs.append(subprocess.Popen([sys.executable, "-m", "ares", "node", "--role", "supervisor",
                                   "--config", config, "--ready-file", ready], env=env,
                                  stderr=subprocess.DEVNULL))
    rpc = _wait(ready, procs[0])["rpc"]
    for i in range(2):
        ready = os.path.join(tmp, f"w{i}.json")
        procs.append(subprocess.Popen([sys.executable, "-m", "ares", "worker", "--config",
                                       config, "--supervisor", rpc, "--ready-file", ready],
                                      env=env, stderr=subprocess.DEVNULL))
        _wait(ready, procs[-1])
    return rpc, env["ARES_CLUSTER_SECRET"], procs


def part_cluster(blocks, repeat):
    import ares as ar
    import dask.array as da
    from distributed import Client, LocalCluster

    n = blocks * 10
    want = float(np.arange(n, dtype=np.float64).sum() + n)
    with tempfile.TemporaryDirectory() as tmp:
        rpc, secret, procs = ares_cluster(tmp)
        lc = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None)
        client = Client(lc)
        try:
            times = {"ares": [], "dask": []}
            for _ in range(repeat):
                ar.connect(f"ares://{rpc}", secret=secret)
                x = ar.arange(float(n), chunks=10)
                t, v = timed(lambda: ar.map_blocks(lambda b: b + 1, x).sum().compute())
                assert v == want, (v, want)
                times["ares"].append(t)
                ar.close()
                y = da.arange(n, chunks=10, dtype=np.float64)
                t, v = timed(lambda: y.map_blocks(lambda b: b + 1).sum().compute())
                assert v == want, (v, want)
                times["dask"].append(t)
            a, d = statistics.median(times["ares"]), statistics.median(times["dask"])
            emit(part="cluster", blocks=blocks, ares_s=a, dask_s=d, ratio=d / a,
                 ares_blocks_per_s=blocks / a, dask_blocks_per_s=blocks / d, runs=times)
        finally:
            client.close()
            lc.close()
            for p in reversed(procs):
                p.terminate()
            for p in procs:
                p.wait()


def part_overhead(blocks, repeat):
    import ares as ar

    ar.start(workers=1, slots=1)
    n = blocks * 10
    x = ar.arange(float(n), chunks=10)
    runs = {"python": [], "native": []}
    split = []
    for _ in range(repeat):
        ar._ares._block_call_times(reset=True)
        t, _ = timed(lambda: ar.map_blocks(lambda b: b, x).sum().compute())
        runs["python"].append(t)
        split.append(ar._ares._block_call_times(reset=True))
        t, _ = timed(lambda: (x + 0).sum().compute())
        runs["native"].append(t)
    p, q = statistics.median(runs["python"]), statistics.median(runs["native"])

    def per_call_us(key):
        return statistics.median(s[key] / max(s["calls"], 1) / 1e3 for s in split)

    import timeit
    block = np.arange(10.0)
    f = lambda b: b  # noqa: E731
    bare = min(timeit.repeat(lambda: f(block), number=100000, repeat=5)) / 100000 * 1e6
    emit(part="overhead", blocks=blocks, python_s=p, native_s=q,
         per_block_us=(p - q) / blocks * 1e6,
         split_us={k: per_call_us(k + "_ns") for k in ("gil", "arguments", "call", "result")},
         calls=[s["calls"] for s in split], bare_function_us=bare, runs=runs)
    ar.close()


def _pure_python(b):
    total = 0.0
    for v in b.tolist():
        total += v * v
    return np.full(b.shape, total)


def part_gil(repeat):
    import ares as ar

    blocks, size = 32, 10**6
    for name, func, n in (("np.sort", np.sort, size), ("pure python", _pure_python, 2 * 10**5)):
        data = np.random.default_rng(1).random(blocks * n)
        x = None
        seconds = {}
        for slots in (1, 2):
            ar.start(workers=1, slots=slots)
            x = ar.from_numpy(data, chunks=n)
            x.sum().compute()  # warm the engine and the page cache
            ts = []
            for _ in range(repeat):
                t, _ = timed(lambda: ar.map_blocks(func, x).sum().compute())
                ts.append(t)
            seconds[slots] = statistics.median(ts)
            ar.close()
        emit(part="gil", function=name, blocks=blocks, block=n, one_slot_s=seconds[1],
             two_slots_s=seconds[2], scaling=seconds[1] / seconds[2])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--part", default="all", choices=["cluster", "overhead", "gil", "all"])
    p.add_argument("--blocks", type=int, default=10000)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    if a.part in ("overhead", "all"):
        part_overhead(a.blocks, a.repeat)
    if a.part in ("gil", "all"):
        part_gil(a.repeat)
    if a.part in ("cluster", "all"):
        part_cluster(a.blocks, a.repeat)


if __name__ == "__main__":
    main()
