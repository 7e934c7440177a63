"""NumPy baseline for `ares bench kernel`: (rand(n) + rand(n)).sum() on one core.

Runs the same computation as ares' kernel benchmark, whole-array (numpy's own way) and in
chunks of the same size (what a chunked runtime does), with numpy's default generator
(PCG64) and the legacy one (MT19937, np.random.rand). Prints one JSON line per variant.
Usage: OMP_NUM_THREADS=1 python3 benches/numpy_baseline.py [n] [chunk]
"""
import json
import sys
import time

import numpy as np

n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 100_000_000
chunk = int(float(sys.argv[2])) if len(sys.argv) > 2 else 1_000_000


def timed(name, f):
    start = time.perf_counter()
    value = f()
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "numpy", "variant": name, "elements": n, "chunk": chunk,
                      "seconds": seconds, "gb_per_s": 2 * n * 8 / seconds / 1e9, "result": float(value)}))


rng = np.random.default_rng(1)
timed("whole_pcg64", lambda: (rng.random(n) + rng.random(n)).sum())
timed("chunked_pcg64", lambda: sum(float((rng.random(min(chunk, n - i)) + rng.random(min(chunk, n - i))).sum())
                                   for i in range(0, n, chunk)))
np.random.seed(1)
timed("chunked_legacy_rand", lambda: sum(float((np.random.rand(min(chunk, n - i)) + np.random.rand(min(chunk, n - i))).sum())
                                         for i in range(0, n, chunk)))
