"""dask's side of the BENCHMARKS.md linalg figures: QR (TSQR) of a float64 matrix chunked
along rows, and svd_compressed, on the threads scheduler with 2 workers. Prints the wall time
and this process's peak RSS. Usage:
    python dask_qr.py qr 2000000 100 100000
    python dask_qr.py svdc 200000 1000 10000 10
"""

import resource
import sys
import time

import dask
import dask.array as da


def main():
    what, m, n, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    x = da.random.default_rng(1).standard_normal((m, n), chunks=(rows, n))
    if what == "qr":
        q, r = da.linalg.qr(x)
        out = abs(q).sum() + abs(r).sum()
    else:
        k = int(sys.argv[5])
        u, s, v = da.linalg.svd_compressed(x, k, seed=2)
        out = abs(u).sum() + s.sum() + abs(v).sum()
    start = time.perf_counter()
    value = dask.compute(out, scheduler="threads", num_workers=2)[0]
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"dask {what} {m}x{n} chunks {rows}: {wall:.2f} s, peak RSS {peak:.0f} MiB, value {value:.6g}")


if __name__ == "__main__":
    main()
