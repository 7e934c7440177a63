"""NumPy's side of the BENCHMARKS.md `solve` figure: `numpy.linalg.solve` of an n × n float64
system (LAPACK's getrf/getrs in OpenBLAS, its threads fixed by OPENBLAS_NUM_THREADS), the
matrix drawn from a normal generator as ares draws it. Prints the time of the draw and of
the solve apart, and this process's peak RSS. Usage:
    OPENBLAS_NUM_THREADS=2 python numpy_solve.py 8000 1
"""

import resource
import sys
import time

import numpy as np


def main():
    n, k = int(sys.argv[1]), int(sys.argv[2])
    start = time.perf_counter()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, k))
    drawn = time.perf_counter()
    x = np.linalg.solve(a, b)
    value = np.abs(x).sum()
    done = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"numpy solve {n}x{n} ({k} rhs): draw {drawn - start:.2f} s, solve {done - drawn:.2f} s, "
          f"total {done - start:.2f} s, peak RSS {peak:.0f} MiB, value {value:.6g}")


if __name__ == "__main__":
    main()
