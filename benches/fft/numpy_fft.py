"""NumPy's side of the FFT benchmarks (BENCHMARKS.md, "FFT"): the same computations as the
`ares run` commands there, timed in this process on one thread, best of `repeat`.

    python benches/fft/numpy_fft.py fft 22        # fft of 2^22 complex128 values
    python benches/fft/numpy_fft.py rfft0 4096    # rfft along axis 0 of 4096 x 4096 float64

Each prints the time of the transform alone (to compare with the kernel figures of `cargo
bench -p ares-core --bench fft`), and with an `abs`/`sum` reduction and that reduction alone.
The input is drawn outside the timing.
"""

import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def best(f, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    what, size = sys.argv[1], int(sys.argv[2])
    rng = np.random.default_rng(1)
    if what == "fft":
        x = rng.standard_normal(1 << size).astype(np.complex128)
        alone = best(lambda: np.fft.fft(x))
        full = best(lambda: np.abs(np.fft.fft(x)).sum())
        base = best(lambda: np.abs(x).sum())
    elif what == "rfft0":
        x = rng.standard_normal((size, size))
        alone = best(lambda: np.fft.rfft(x, axis=0))
        full = best(lambda: np.abs(np.fft.rfft(x, axis=0)).sum())
        base = best(lambda: np.abs(x).sum())
    else:
        raise SystemExit(f"unknown benchmark {what}")
    print(f"numpy {what} {size}: transform alone {alone:.4f} s; {full:.4f} s with the "
          f"reduction, {base:.4f} s reduction alone")


if __name__ == "__main__":
    main()
