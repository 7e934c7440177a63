"""``ar.from_numpy`` against a remote cluster with no shared directory: the upload rate over the
native protocol and over HTTP, on loopback.

Starts a supervisor and two workers (``ares node``, the package's console command, as the
package's tests do: ``python/tests/conftest.py``), then for each protocol uploads a float64
array of ``--mb`` megabytes ``--repeat`` times, alternating the protocols (A B, B A, ...), and prints each
run's seconds and MB/s (10^6 bytes) and the median. A run is the whole ``from_numpy`` call:
the bytes over the connection to the supervisor's spool file, and the workers loading their
chunks of it; the upload is freed before the next run. ``--warmup`` untimed uploads per
protocol go first (the workers' first large allocations). The first run's sum is checked
against NumPy's. For reference, ``np.save`` of the same array to the spool directory (what
``upload_dir=`` does instead; the workers then read it at compute time) is timed once.

    python -m venv .venv && .venv/bin/pip install ./python pytest
    .venv/bin/python benches/python_upload.py --mb 800 --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python", "tests"))
from conftest import Cluster  # noqa: E402

import ares as ar  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=800, help="array size in MB (10^6 bytes)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--chunks", type=int, default=1 << 20, help="elements per chunk")
    p.add_argument("--warmup", type=int, default=1, help="untimed uploads per protocol first")
    p.add_argument("--protocols", default="native,http", help="which, in this order")
    args = p.parse_args()
    n = args.mb * 1_000_000 // 8
    a = np.random.default_rng(1).random(n)
    with tempfile.TemporaryDirectory() as tmp:
        cluster = Cluster(tmp, workers=2)
        try:
            every = {"native": f"ares://{cluster.rpc}", "http": f"http://{cluster.web}"}
            addresses = {k: every[k] for k in args.protocols.split(",")}
            times: dict[str, list[float]] = {k: [] for k in addresses}
            for _ in range(args.warmup):
                # The workers' first large allocations and the page cache warm up here.
                for address in addresses.values():
                    ar.connect(address, secret=cluster.secret, token=cluster.token)
                    ar.from_numpy(a, chunks=args.chunks)
                    gc.collect()
                    ar.close()
            for run in range(args.repeat):
                # A B, then B A: neither protocol always follows the other's free.
                order = list(addresses.items())
                for kind, address in order if run % 2 == 0 else order[::-1]:
                    ar.connect(address, secret=cluster.secret, token=cluster.token)
                    start = time.perf_counter()
                    x = ar.from_numpy(a, chunks=args.chunks)
                    seconds = time.perf_counter() - start
                    times[kind].append(seconds)
                    print(f"{kind:6} run {run}: {seconds:6.2f} s  {a.nbytes / 1e6 / seconds:7.1f} MB/s",
                          flush=True)
                    if run == 0:
                        got = x.sum().compute()
                        assert abs(got - a.sum()) <= 1e-9 * abs(a.sum()), (got, a.sum())
                    del x
                    gc.collect()
                    ar.close()
            for kind, ts in times.items():
                med = statistics.median(ts)
                print(f"{kind:6} median {med:6.2f} s  {a.nbytes / 1e6 / med:7.1f} MB/s "
                      f"(min {min(ts):.2f} s, max {max(ts):.2f} s)")
            path = os.path.join(tmp, "ref.npy")
            start = time.perf_counter()
            np.save(path, a)
            seconds = time.perf_counter() - start
            print(f"np.save (upload_dir=) {seconds:6.2f} s  {a.nbytes / 1e6 / seconds:7.1f} MB/s")
        finally:
            ar.close()
            cluster.stop()


if __name__ == "__main__":
    main()
