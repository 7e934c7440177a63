#!/usr/bin/env bash
# Peak RSS of each worker against worker.memory_limit on a job over more data than the
# cluster's memory (issue 10). Starts 1 supervisor + W workers as `ares node` processes on
# loopback (each under its own limit), runs the two-pass variance of N random floats through
# `ares run --supervisor --json`, and prints the run's JSON, then each worker's VmHWM.
#   benches/memory_rss.sh [ELEMENTS=536870912 (4 GiB)] [LIMIT=512MiB] [WORKERS=2] [CHUNK=1048576]
# Needs a release build: cargo build --release.
set -euo pipefail
N=${1:-536870912}
LIMIT=${2:-512MiB}
W=${3:-2}
CHUNK=${4:-1048576}
BIN=${ARES_BIN:-target/release/ares}
DIR=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$DIR"' EXIT
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$DIR/secret"
cat > "$DIR/cfg.yml" <<YAML
cluster:
  listen: 127.0.0.1:0
  secret_file: $DIR/secret
  heartbeat_interval_ms: 500
worker:
  slots: 1
  memory_limit: $LIMIT
  spill_dir: $DIR/spill
YAML
"$BIN" node --role supervisor --config "$DIR/cfg.yml" --ready-file "$DIR/sup.json" 2>"$DIR/sup.log" &
for _ in $(seq 100); do [ -s "$DIR/sup.json" ] && break; sleep 0.1; done
SUP=$(sed 's/.*"rpc": *"\([^"]*\)".*/\1/' "$DIR/sup.json")
PIDS=()
for i in $(seq "$W"); do
  "$BIN" node --role worker --config "$DIR/cfg.yml" --supervisor "$SUP" --ready-file "$DIR/w$i.json" 2>"$DIR/w$i.log" &
  PIDS+=($!)
done
for i in $(seq "$W"); do for _ in $(seq 100); do [ -s "$DIR/w$i.json" ] && break; sleep 0.1; done; done
EXPR="x = rand($N, chunk=$CHUNK, seed=7); y = x - mean(x); sum(y * y) / $N"
ARES_CLUSTER_SECRET=$(cat "$DIR/secret") "$BIN" run --json --supervisor "$SUP" --expr "$EXPR"
for p in "${PIDS[@]}"; do
  echo "worker pid $p: $(grep VmHWM /proc/$p/status)"
done
echo "spilled files left: $(find "$DIR/spill" -type f | wc -l)"
