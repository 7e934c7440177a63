"""Issue 29 (branch numpyfuncs): median/percentile of 10^8 float64 on 2 slots against
np.median on one core, and einsum's matmul-shaped contraction against matmul: the same
process, one warm-up, best and median (see BENCHMARKS.md)."""
import statistics
import sys
import time

import numpy as np

import ares as ar


def timed(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        v = f()
        times.append(time.perf_counter() - t)
    return v, min(times), statistics.median(times)


ar.start(workers=1, slots=2)
n = int(sys.argv[1]) if len(sys.argv) > 1 else 10**8
x = ar.random.rand(n, chunks=10**6, seed=1)
a = x.compute()
xs = ar.from_numpy(a, chunks=10**6)
ar.median(xs).compute()  # warm-up
m_np, b_np, md_np = timed(lambda: np.median(a), 3)
m_ar, b_ar, md_ar = timed(lambda: ar.median(xs).compute(), 3)
assert m_ar == m_np, (m_ar, m_np)
print(f"median n={n}: NumPy 1 core best {b_np:.2f} s median {md_np:.2f} s; "
      f"ares 2 slots best {b_ar:.2f} s median {md_ar:.2f} s; ratio {md_ar / md_np:.2f}")
q = [1, 50, 99]
p_np, b_np, md_np = timed(lambda: np.percentile(a, q), 3)
p_ar, b_ar, md_ar = timed(lambda: ar.percentile(xs, q).compute(), 3)
assert np.array_equal(p_ar, p_np)
print(f"percentile {q}: NumPy best {b_np:.2f} s median {md_np:.2f} s; "
      f"ares best {b_ar:.2f} s median {md_ar:.2f} s; ratio {md_ar / md_np:.2f}")
del a
k = 3000
A = ar.random.rand(k, k, chunks=1000, seed=2)
B = ar.random.rand(k, k, chunks=1000, seed=3)
(A @ B).sum().compute()  # warm-up
r_mm, b_mm, md_mm = timed(lambda: (A @ B).compute(), 3)
r_es, b_es, md_es = timed(lambda: ar.einsum("ij,jk->ik", A, B).compute(), 3)
np.testing.assert_allclose(r_es, r_mm, rtol=1e-12)
print(f"einsum ij,jk->ik {k}x{k}: matmul best {b_mm:.2f} s median {md_mm:.2f} s; einsum best "
      f"{b_es:.2f} s median {md_es:.2f} s; ratio {md_es / md_mm:.2f}")
r_mm, b_mm, md_mm = timed(lambda: (A[None] @ B[None]).compute(), 3)
r_es, b_es, md_es = timed(lambda: ar.einsum("bij,bjk->bik", A[None], B[None]).compute(), 3)
print(f"einsum bij,bjk->bik 1x{k}x{k}: matmul median {md_mm:.2f} s; einsum median {md_es:.2f} s; "
      f"ratio {md_es / md_mm:.2f}")
r_mm, b_mm, md_mm = timed(lambda: (A.T @ B).compute(), 3)
r_es, b_es, md_es = timed(lambda: ar.einsum("ji,jk->ik", A, B).compute(), 3)
print(f"einsum ji,jk->ik: A.T @ B median {md_mm:.2f} s; einsum median {md_es:.2f} s; "
      f"ratio {md_es / md_mm:.2f}")
ar.close()
