#!/bin/bash
# Two ares binaries' `ares bench tps` side by side: A B A B, PAIRS times; prints each run's
# subtasks/s, preparation seconds and supervisor CPU per subtask, then both medians and how
# many pairs B won.
#   benches/tps_ab.sh PAIRS BIN_A BIN_B [bench tps args]
# (default args: --shape indep --subtasks 200000 --repeat 3)
n=$1; A=$2; B=$3; shift 3
args=${@:-"--shape indep --subtasks 200000 --repeat 3"}
ra=(); rb=()
for i in $(seq $n); do
  for which in A B; do
    bin=$A; [ $which = B ] && bin=$B
    r=$($bin bench tps $args 2>/dev/null | tail -1 | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print('%.0f %.3f %.2f' % (d['subtasks_per_s'], d['prepare_s'], d['supervisor_cpu_us_per_subtask']))")
    echo "$which $r"
    if [ $which = A ]; then ra+=(${r%% *}); else rb+=(${r%% *}); fi
  done
done
python3 -c "
import statistics as s; a=[float(x) for x in '${ra[*]}'.split()]; b=[float(x) for x in '${rb[*]}'.split()]
print('median A %.0f  B %.0f  B/A %.3f  B wins %d/%d' % (s.median(a), s.median(b), s.median(b)/s.median(a), sum(y>x for x,y in zip(a,b)), len(a)))"
