#!/usr/bin/env bash
# Zarr I/O throughput: ares vs dask.array + zarr-python (threads), with farm-bench.
#   benches/io.sh [MB]      (default 256: a float64 Zarr v3 array of MB MiB, zstd level 1)
# Needs a release build (cargo build --release), python3 with numpy, dask and zarr, and
# farm-bench. Prints farm-bench's reports; the figures in BENCHMARKS.md come from it.
set -euo pipefail
MB=${1:-256}
ARES=${ARES:-$(cd "$(dirname "$0")/.." && pwd)/target/release/ares}
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
COLS=1024
ROWS=$((MB * 1024 * 1024 / 8 / COLS))
python3 - "$ROWS" "$COLS" <<'PY'
import sys, numpy as np, zarr
rows, cols = int(sys.argv[1]), int(sys.argv[2])
z = zarr.create_array("p.zarr", shape=(rows, cols), chunks=(1024, cols), dtype="f8",
                      compressors=zarr.codecs.ZstdCodec(level=1))
rng = np.random.default_rng(0)
for r in range(0, rows, 8192):
    n = min(8192, rows - r)
    z[r:r + n] = rng.standard_normal((n, cols))
print(f"p.zarr: {rows} x {cols} float64 ({rows * cols * 8 / 2**20:.0f} MiB), chunks (1024, {cols}), zstd 1")
PY
du -sh p.zarr
cat > dask_run.py <<'PY'
import sys, dask, dask.array as da
dask.config.set(scheduler="threads", num_workers=2)
x = da.from_zarr("p.zarr")
what = sys.argv[1]
if what == "sum":
    print(float(x.sum().compute()))
elif what == "stats":
    s, m = dask.compute(x.std(), x.mean(axis=0))
    print(float(s), float(m.sum()))
else:
    x.rechunk((x.shape[0], 128)).to_zarr("q_dask.zarr", overwrite=True)
PY
RUN="$ARES run --workers 2 --slots 1 --input x=p.zarr"
echo "== (a) sum(x)"
farm-bench -n 3 --timeout 600 --vs "python3 dask_run.py sum" -- $RUN --expr 'sum(x)'
echo "== (b) std(x) and mean(x, axis=0)"
farm-bench -n 3 --timeout 600 --vs "python3 dask_run.py stats" -- $RUN --expr 'concatenate((reshape(std(x), 1), mean(x, axis=0)))'
echo "== (c) rows -> columns rechunk, written to Zarr"
farm-bench -n 3 --timeout 900 --vs "python3 dask_run.py rechunk" -- $RUN --expr "rechunk(x, ($ROWS, 128))" --output q.zarr
