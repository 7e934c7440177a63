#!/bin/bash
# The task stream's cost in instructions, not seconds: `ares bench tps` under
# `valgrind --tool=callgrind --trace-children=yes`, which counts every instruction of the
# supervisor and worker processes (repeatable whatever else the machine runs, unlike the
# A/B timings of tps_ab.sh). Each configuration runs at two sizes, so the per-subtask
# (marginal) count leaves out the nodes' start-up and shutdown.
#   benches/tps_instructions.sh ARES_BINARY [SHAPES] [N1] [N2]
# (defaults: "tree indep", 10000, 40000). Prints one line per run and, per shape, the
# instructions per subtask with the stream on and off and their ratio.
set -euo pipefail
bin=$1; shapes=${2:-"tree indep"}; n1=${3:-10000}; n2=${4:-40000}
out=$(mktemp -d /tmp/tps-instr.XXXX)
run() { # shape n mode -> "subtasks instructions"
  local dir="$out/$1-$2-$3"; mkdir -p "$dir"
  local flag=""; [ "$3" = off ] && flag="--no-task-stream"
  local json
  json=$(valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$dir/cg.%p" \
    "$bin" bench tps --shape "$1" --subtasks "$2" --repeat 1 $flag 2>/dev/null | tail -1)
  local subtasks; subtasks=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['subtasks'])" "$json")
  # The nodes' processes (the bench's own process only submits and waits).
  local total; total=$(grep -h '^summary:' $(grep -l '^cmd:.* node --role' "$dir"/cg.*) | awk '{s+=$2} END {print s}')
  echo "$subtasks $total"
}
for shape in $shapes; do
  declare -A r=()
  for mode in on off; do
    for n in $n1 $n2; do
      r[$mode-$n]=$(run "$shape" "$n" "$mode")
      echo "$shape stream $mode --subtasks $n: ${r[$mode-$n]} (subtasks, node instructions)"
    done
  done
  python3 - "$shape" "${r[on-$n1]}" "${r[on-$n2]}" "${r[off-$n1]}" "${r[off-$n2]}" <<'PY'
import sys
shape = sys.argv[1]
(s1, i1), (s2, i2), (t1, j1), (t2, j2) = [tuple(map(int, a.split())) for a in sys.argv[2:]]
on, off = (i2 - i1) / (s2 - s1), (j2 - j1) / (t2 - t1)
print(f"{shape}: {on:,.0f} instructions per subtask with the stream, {off:,.0f} without: "
      f"on/off {on / off:.4f} (+{on - off:,.0f} per subtask)")
PY
done
rm -rf "$out"
