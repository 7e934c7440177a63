"""`(a + b).sum()` over 10^8 float64 from Python: ares in process against dask.array (threaded
scheduler) and NumPy, runs alternating, same machine; and the Python layer's cost per job.

    python benches/python_sum.py [--n 1e8] [--chunk 1e6] [--repeat 3] [--threads 2]

Prints one JSON line per measurement, then a summary line. `ares` and `dask` use `--threads`
threads (ares: one embedded worker with that many slots; dask: its threaded scheduler with
that many workers); NumPy runs whole-array on one core. The overhead part times a trivial job
(`ones(1).sum()`) through `x.compute()` and through the Rust client alone on the same engine
(`Engine.time_rust`: submit, wait, fetch, free with no Python between), medians of 200 each,
in alternating blocks of 20. CPU seconds are the whole process's (every thread).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def timed(f):
    start = time.perf_counter()
    value = f()
    return time.perf_counter() - start, value


def timed_cpu(f):
    """Wall seconds, CPU seconds of the whole process (every thread), value."""
    cpu, start = time.process_time(), time.perf_counter()
    value = f()
    return time.perf_counter() - start, time.process_time() - cpu, value


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=float, default=1e8)
    p.add_argument("--chunk", type=float, default=1e6)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-dask", action="store_true")
    args = p.parse_args()
    n, chunk = int(args.n), int(args.chunk)

    import ares as ar

    ar.set_progress(False)
    ar.start(workers=1, slots=args.threads)
    runs: dict[str, list[float]] = {"ares": [], "dask": [], "numpy": []}
    cpu: dict[str, list[float]] = {"ares": [], "dask": [], "numpy": []}

    def ares_job():
        a = ar.random.rand(n, chunks=chunk, seed=1)
        b = ar.random.rand(n, chunks=chunk, seed=2)
        return (a + b).sum().compute()

    def dask_job():
        import dask
        import dask.array as da

        a = da.random.random(n, chunks=chunk)
        b = da.random.random(n, chunks=chunk)
        with dask.config.set(scheduler="threads", num_workers=args.threads):
            return float((a + b).sum().compute())

    def numpy_job():
        rng = np.random.default_rng(1)
        return float((rng.random(n) + rng.random(n)).sum())

    jobs = [("ares", ares_job), ("numpy", numpy_job)]
    if not args.no_dask:
        jobs.insert(1, ("dask", dask_job))
    ares_job()  # warm-up: the engine's first job allocates its pools
    for r in range(args.repeat):
        for name, job in jobs:
            seconds, cpu_seconds, value = timed_cpu(job)
            runs[name].append(seconds)
            cpu[name].append(cpu_seconds)
            print(json.dumps({"run": r, "system": name, "n": n, "chunk": chunk,
                              "threads": args.threads, "seconds": round(seconds, 4),
                              "cpu_seconds": round(cpu_seconds, 4), "result": value}),
                  flush=True)

    # The Python layer's cost per job: the same trivial job through compute() and through
    # the Rust client alone.
    trivial = ar.ones(1).sum()
    eng = ar.engine()
    for _ in range(20):
        trivial.compute()
    py_times, rust_times = [], []
    for _ in range(10):  # alternating blocks, so a busy moment hits both sides
        py_times += [timed(trivial.compute)[0] for _ in range(20)]
        rust_times += eng.time_rust(trivial._handle, 20)
    summary = {
        "summary": True,
        "median_seconds": {k: round(statistics.median(v), 4) for k, v in runs.items() if v},
        "median_cpu_seconds": {k: round(statistics.median(v), 4) for k, v in cpu.items() if v},
        "trivial_job_ms": {
            "python": round(statistics.median(py_times) * 1e3, 3),
            "rust": round(statistics.median(rust_times) * 1e3, 3),
        },
    }
    med = summary["median_seconds"]
    if "dask" in med:
        summary["ares_speedup_over_dask"] = round(med["dask"] / med["ares"], 2)
        pairs = [d / a for a, d in zip(runs["ares"], runs["dask"])]
        summary["ares_speedup_over_dask_paired_median"] = round(statistics.median(pairs), 2)
        summary["ares_cpu_advantage_over_dask"] = round(
            statistics.median(cpu["dask"]) / statistics.median(cpu["ares"]), 2)
    summary["ares_speedup_over_numpy"] = round(med["numpy"] / med["ares"], 2)
    summary["python_layer_ms_per_job"] = round(
        summary["trivial_job_ms"]["python"] - summary["trivial_job_ms"]["rust"], 3)
    print(json.dumps(summary), flush=True)
    ar.close()


if __name__ == "__main__":
    main()
