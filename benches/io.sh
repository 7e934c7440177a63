#!/usr/bin/env bash
# Zarr I/O throughput and memory (issue 10): ares against dask.array + zarr-python, on a
# float64 Zarr v3 array of MB MiB (zstd level 1) that the script writes once.
#   benches/io.sh [MB]          (default 256; the issue's figure: benches/io.sh 8192)
# Environment: IO_DIR (keep the store and outputs there and reuse them; default a temporary
# directory removed at exit; RUNS=0 only prepares it), LIMIT (worker.memory_limit, default 512MiB), RUNS (default 1),
# ONLY (a subset of "sum stats rechunk"), ARES (the binary; default target/release/ares).
#
# Three workloads on the same x = from_zarr(p.zarr) of shape (ROWS, 1024), store chunks of
# 1024 rows:
#   sum      (a) sum(x)
#   stats    (b) std(x) and mean(x, axis=0)
#   rechunk  (c) x rechunked from row bands to column bands (ROWS, RC) written to q.zarr
# each run three ways, alternately:
#   ares          1 supervisor + 2 workers as separate `ares node` processes, 1 slot each,
#                 worker.memory_limit LIMIT; prints each worker's peak RSS (VmHWM)
#   dask-threads  dask's threaded scheduler, 2 threads (no memory limit)
#   dask-cluster  distributed.LocalCluster, 2 worker processes x 1 thread, memory_limit LIMIT
# Whole processes (cluster start-up included) under /usr/bin/time; the results are compared
# against dask's threaded run (an independent reader and evaluation), and q.zarr against p.zarr
# (per-column sums, row-weighted sums and sampled blocks bit for bit).
# Needs: cargo build --release; python3 with numpy, zarr (3.x), dask and distributed
#   (pip install numpy zarr "dask[array,distributed]").
set -euo pipefail
MB=${1:-256}
RUNS=${RUNS:-1}
LIMIT=${LIMIT:-512MiB}
ONLY=${ONLY:-sum stats rechunk}
ARES=${ARES:-$(cd "$(dirname "$0")/.." && pwd)/target/release/ares}
if [ -n "${IO_DIR:-}" ]; then
  mkdir -p "$IO_DIR"
  DIR=$(cd "$IO_DIR" && pwd)
else
  DIR=$(mktemp -d)
  trap 'rm -rf "$DIR"' EXIT
fi
cd "$DIR"
COLS=1024
ROWS=$((MB * 1024 * 1024 / 8 / COLS))
# Output column bands of about 64 MiB each.
RC=$((8388608 / ROWS))
[ "$RC" -lt 1 ] && RC=1
[ "$RC" -gt "$COLS" ] && RC=$COLS

python3 - "$ROWS" "$COLS" <<'PY'
import os, sys, numpy as np, zarr
rows, cols = int(sys.argv[1]), int(sys.argv[2])
if os.path.exists("p.zarr"):
    z = zarr.open_array("p.zarr", mode="r")
    if z.shape == (rows, cols):
        print(f"p.zarr: reused, {rows} x {cols} float64")
        sys.exit(0)
z = zarr.create_array("p.zarr", shape=(rows, cols), chunks=(1024, cols), dtype="f8",
                      compressors=zarr.codecs.ZstdCodec(level=1), overwrite=True)
rng = np.random.default_rng(0)
for r in range(0, rows, 8192):
    n = min(8192, rows - r)
    z[r:r + n] = rng.standard_normal((n, cols))
print(f"p.zarr: {rows} x {cols} float64 ({rows * cols * 8 / 2**20:.0f} MiB), chunks (1024, {cols}), zstd 1")
PY
du -sh p.zarr

# The ares side: a supervisor and two workers as processes of their own, one `ares run`.
cat > ares_cluster.sh <<SH
#!/usr/bin/env bash
# ares_cluster.sh WHAT: one workload on a fresh 1 supervisor + 2 worker cluster.
set -euo pipefail
cd "$DIR"
T=\$(mktemp -d "$DIR/cluster.XXXX")
trap 'kill \$(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "\$T"' EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "\$T/secret"
cat > "\$T/cfg.yml" <<YAML
cluster:
  listen: 127.0.0.1:0
  secret_file: \$T/secret
worker:
  slots: 1
  memory_limit: $LIMIT
  spill_dir: \$T/spill
data:
  roots: [$DIR]
YAML
"$ARES" node --role supervisor --config "\$T/cfg.yml" --ready-file "\$T/sup.json" 2>"\$T/sup.log" &
for _ in \$(seq 1000); do [ -s "\$T/sup.json" ] && break; sleep 0.01; done
SUP=\$(sed 's/.*"rpc": *"\([^"]*\)".*/\1/' "\$T/sup.json")
PIDS=()
for i in 1 2; do
  "$ARES" node --role worker --config "\$T/cfg.yml" --supervisor "\$SUP" --ready-file "\$T/w\$i.json" 2>"\$T/w\$i.log" &
  PIDS+=(\$!)
done
for i in 1 2; do for _ in \$(seq 1000); do [ -s "\$T/w\$i.json" ] && break; sleep 0.01; done; done
RUN=("$ARES" run --json --config "\$T/cfg.yml" --supervisor "\$SUP" --input x=p.zarr)
case "\$1" in
  sum) "\${RUN[@]}" --expr 'sum(x)' --output ares_sum.npy ;;
  stats) "\${RUN[@]}" --expr 'concatenate((reshape(std(x), 1), mean(x, axis=0)))' --output ares_stats.npy ;;
  rechunk) "\${RUN[@]}" --expr "rechunk(x, ($ROWS, $RC))" --output q.zarr ;;
esac > "ares_\$1.json"
for i in 1 2; do
  echo "ares \$1 worker \$i: \$(grep VmHWM /proc/\${PIDS[\$((i - 1))]}/status | tr -s ' \t' ' ')" >> rss.log
done
SH

# The dask side: the same workloads, threaded or on a LocalCluster with the same limit.
cat > dask_run.py <<PY
import sys, numpy as np, dask, dask.array as da

def main(what, mode):
    if mode == "cluster":
        from distributed import Client, LocalCluster
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="$LIMIT",
                               dashboard_address=None, processes=True)
        client = Client(cluster)
    else:
        dask.config.set(scheduler="threads", num_workers=2)
    x = da.from_zarr("p.zarr")
    if what == "sum":
        np.save(f"dask_{mode}_sum.npy", np.asarray(x.sum().compute()))
    elif what == "stats":
        s, m = dask.compute(x.std(), x.mean(axis=0))
        np.save(f"dask_{mode}_stats.npy", np.concatenate(([s], m)))
    else:
        x.rechunk(($ROWS, $RC)).to_zarr(f"q_dask_{mode}.zarr", overwrite=True)

if __name__ == "__main__":  # LocalCluster's worker processes import this file again
    main(sys.argv[1], sys.argv[2])
PY

cat > check.py <<'PY'
import sys, numpy as np, zarr
what = sys.argv[1]
if what in ("sum", "stats"):
    a = np.load(f"ares_{what}.npy")
    ref = np.load(f"dask_threads_{what}.npy")
    ok = np.allclose(a, ref, rtol=1e-9, atol=1e-9)
    print(f"check {what}: ares {a.ravel()[:3]} dask {ref.ravel()[:3]} -> {'OK' if ok else 'WRONG'}")
    sys.exit(0 if ok else 1)
p, q = zarr.open_array("p.zarr", mode="r"), zarr.open_array(sys.argv[2], mode="r")
assert p.shape == q.shape, (p.shape, q.shape)
rows, cols = p.shape
w = (np.arange(rows) % 1009).astype("f8")
ps, pw = np.zeros(cols), np.zeros(cols)
for r in range(0, rows, 8192):
    b = p[r:r + 8192]
    ps += b.sum(axis=0)
    pw += w[r:r + 8192] @ b
qc = q.chunks[1]
qs, qw = np.zeros(cols), np.zeros(cols)
for c in range(0, cols, qc):
    b = q[:, c:c + qc]
    qs[c:c + qc] = b.sum(axis=0)
    qw[c:c + qc] = w @ b
rng = np.random.default_rng(1)
same = True
for _ in range(4):
    r, c = int(rng.integers(0, max(1, rows - 1000))), int(rng.integers(0, max(1, cols - 8)))
    same &= bool(np.array_equal(p[r:r + 1000, c:c + 8], q[r:r + 1000, c:c + 8]))
ok = same and np.allclose(ps, qs, rtol=1e-9, atol=1e-6) and np.allclose(pw, qw, rtol=1e-9, atol=1e-6)
print(f"check {sys.argv[2]} against p.zarr: chunks {q.chunks}, sampled blocks equal {same} -> {'OK' if ok else 'WRONG'}")
sys.exit(0 if ok else 1)
PY

if [ "$RUNS" = 0 ]; then
  echo "prepared in $DIR: bash ares_cluster.sh WHAT, python3 dask_run.py WHAT threads|cluster, python3 check.py WHAT"
  exit 0
fi
TIME=(/usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak (largest process)")
uptime
for what in $ONLY; do
  echo "== $what"
  for run in $(seq "$RUNS"); do
    echo "-- run $run: ares"
    "${TIME[@]}" bash ares_cluster.sh "$what"
    echo "-- run $run: dask-threads"
    "${TIME[@]}" python3 dask_run.py "$what" threads
    echo "-- run $run: dask-cluster"
    "${TIME[@]}" sh -c 'exec python3 dask_run.py "$1" cluster 2>dask_cluster.log' _ "$what" ||
      echo "dask-cluster failed: $(tail -3 dask_cluster.log)"
  done
  cat rss.log && rm -f rss.log
  grep -h '"execute"' "ares_$what.json" | head -1 || true
  if [ "$what" = rechunk ]; then
    python3 check.py rechunk q.zarr
  else
    python3 check.py "$what"
  fi
done
uptime
