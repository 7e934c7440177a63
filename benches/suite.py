#!/usr/bin/env python3
"""Issue 13's table in one run: each row timed for ares and for its peer, side by side.

Why a script: the rows compare ares with NumPy and dask at equal thread counts, and the peers
are Python. Each row runs both sides alternately (A B A B ...), takes medians, and prints one
JSON line: the job seconds and peak RSS of each side, their ratio, and the row's target.

Job seconds are measured inside each process so interpreter start and imports (0.1-0.5 s for
dask) do not count: ares reports `timings.total - timings.cluster_start` of `ares run --json`,
the peers time their own computation (generation included) with perf_counter. Peak RSS is the
whole process's (`/usr/bin/time`), so the Python peers carry their interpreter's ~30-90 MiB.

NumPy runs with this machine's OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (they slow a current
NumPy) and 2 BLAS threads; dask uses the threaded scheduler with num_workers=2; ares 2 slots.

Usage: python3 benches/suite.py [--ares target/release/ares] [--runs 5] [--rows matmul,...]
Rows: matmul, matmul_cluster, strided_arange, strided_rand, mean_axis0, std, rand_add,
prepare, tps_tree, tps_indep (ares-only rows print no peer).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MATMUL = "a = rand((4000, 4000), chunk=1000, seed=1); b = rand((4000, 4000), chunk=1000, seed=2); sum(matmul(a, b))"
X_2D = "x = rand((20000, 5000), chunk=(2000, 5000), seed=1); "

# name -> (ares argv after the binary, peer python source or None, what the row must reach)
ROWS = {
    "matmul": (
        ["run", "--local", "--workers", "1", "--slots", "2", "--expr", MATMUL],
        "import numpy as np\nrng = np.random.default_rng(1)\n"
        "def job():\n a = rng.random((4000, 4000)); b = rng.random((4000, 4000)); return (a @ b).sum()\n",
        "ares/peer <= 1 (>= NumPy's GFLOP/s at 2 threads)",
    ),
    "matmul_cluster": (
        ["run", "--workers", "2", "--slots", "1", "--expr", MATMUL],
        None,
        "within 10% of the matmul row's --local time",
    ),
    "strided_arange": (
        ["run", "--workers", "1", "--slots", "2", "--expr",
         "x = arange(100000000, chunk=1000000); sum(x[10:90000000:7])"],
        "import numpy as np\ndef job():\n return np.arange(10**8)[10:90000000:7].sum()\n",
        "ares/peer <= 0.5 (peer: NumPy, 1 thread)",
    ),
    "strided_rand": (
        ["run", "--workers", "1", "--slots", "2", "--expr",
         "x = rand(100000000, chunk=1000000, seed=1); sum(x[10:90000000:7]) - sum(x[::-5])"],
        "import numpy as np\nrng = np.random.default_rng(1)\n"
        "def job():\n x = rng.random(10**8); return x[10:90000000:7].sum() - x[::-5].sum()\n",
        "ares/peer <= 0.5 (peer: NumPy, 1 thread)",
    ),
    "mean_axis0": (
        ["run", "--workers", "1", "--slots", "2", "--expr", X_2D + "mean(x, axis=0)"],
        "import dask, dask.array as da\ndask.config.set(scheduler='threads', num_workers=2)\n"
        "def job():\n x = da.random.random((20000, 5000), chunks=(2000, 5000)); return x.mean(axis=0).compute()\n",
        "peak RSS <= dask's",
    ),
    "std": (
        ["run", "--workers", "1", "--slots", "2", "--expr", X_2D + "std(x)"],
        "import dask, dask.array as da\ndask.config.set(scheduler='threads', num_workers=2)\n"
        "def job():\n x = da.random.random((20000, 5000), chunks=(2000, 5000)); return x.std().compute()\n",
        "peak RSS <= dask's",
    ),
    "rand_add": (["bench", "kernel", "--slots", "2"], None, "<= 0.12 s"),
    "prepare": (["bench", "prepare", "--chunks", "10000000", "--repeat", "1"], None,
                "<= 150 B/chunk of peak RSS at 10^7 chunks"),
    "tps_tree": (["bench", "tps", "--shape", "tree", "--subtasks", "266667", "--repeat", "5"], None,
                 ">= 400,000 subtasks/s"),
    "tps_indep": (["bench", "tps", "--shape", "indep", "--subtasks", "200000", "--repeat", "5"], None,
                  ">= 1,000,000 subtasks/s"),
}

PEER_MAIN = """
import json, time
{source}
job()  # warm-up: page in the libraries, spin up the pools
start = time.perf_counter()
value = job()
print(json.dumps({{"seconds": time.perf_counter() - start}}))
"""


def timed(argv, env=None):
    """Runs argv under /usr/bin/time; returns (stdout, peak RSS in MiB)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        out = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M"] + argv, env=env,
                             capture_output=True, text=True, check=True).stdout
        return out, int(rss.read().split()[-1]) / 1024


def ares_side(binary, argv):
    out, rss = timed([binary] + argv + (["--json"] if argv[0] == "run" else []))
    line = json.loads(out.strip().splitlines()[-1])
    if argv[0] == "run":
        t = line["timings"]
        return {"seconds": t["total"] - t.get("cluster_start", 0.0), "rss_mib": rss}
    line["rss_mib"] = rss
    return line


def peer_side(source, blas_threads):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env.update(OPENBLAS_NUM_THREADS=str(blas_threads), OMP_NUM_THREADS=str(blas_threads))
    out, rss = timed([sys.executable, "-c", PEER_MAIN.format(source=source)], env=env)
    return {"seconds": json.loads(out.strip().splitlines()[-1])["seconds"], "rss_mib": rss}


def median_of(samples, key):
    values = [s[key] for s in samples if isinstance(s.get(key), (int, float))]
    return statistics.median(values) if values else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ares", default="target/release/ares")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rows", default=",".join(ROWS))
    args = parser.parse_args()
    for name in args.rows.split(","):
        argv, source, target = ROWS[name]
        blas = 1 if name.startswith("strided") else 2
        ares, peer = [], []
        for _ in range(args.runs):
            ares.append(ares_side(args.ares, argv))
            if source:
                peer.append(peer_side(source, blas))
        row = {"row": name, "target": target, "runs": args.runs}
        for key in sorted({k for s in ares for k in s}):
            value = median_of(ares, key)
            if value is not None:
                row["ares_" + key] = value
        if peer:
            row["peer_seconds"] = median_of(peer, "seconds")
            row["peer_rss_mib"] = median_of(peer, "rss_mib")
            row["ratio_seconds"] = row["ares_seconds"] / row["peer_seconds"]
            row["ratio_rss"] = row["ares_rss_mib"] / row["peer_rss_mib"]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
