#!/usr/bin/env bash
# The Python array API standard's own conformance suite (data-apis/array-api-tests, kept
# outside the repository in ../shared/array-api-tests, see its README) against the installed
# package, failing when the pass rate falls under a floor.
#
#   scripts/array_api.sh PYTHON [EXAMPLES] [FLOOR] [PYTEST ARGS...]
#
# PYTHON: an interpreter with ares installed (scripts/test.sh passes its venv's). EXAMPLES:
# hypothesis examples per test (default 5: CI's budget; the suite's own default is 20, and
# TESTING.md records a 200-example run). FLOOR: the lowest pass rate accepted, in percent of
# the tests that ran (default 98, issue 29's target). ARES_ARRAY_API_TESTS: where the suite
# is (default ../shared/array-api-tests beside the repository); without it the run is skipped,
# saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${1:?usage: scripts/array_api.sh PYTHON [EXAMPLES] [FLOOR] [PYTEST ARGS...]}
examples=${2:-5}
floor=${3:-98}
shift $(( $# >= 3 ? 3 : $# ))
suite=${ARES_ARRAY_API_TESTS:-../shared/array-api-tests}
if [[ ! -f "$suite/run.sh" ]]; then
  echo "no array API conformance suite at $suite: skipped (set ARES_ARRAY_API_TESTS)"
  exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bash "$suite/run.sh" "$py" "$examples" "$@" | tee "$log"
read -r passed _ failed _ < <(tail -n 1 "$log")
"$py" - "$passed" "$failed" "$floor" <<'PY'
import sys
passed, failed, floor = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
ran = passed + failed
rate = 100.0 * passed / ran if ran else 0.0
print(f"array API conformance: {passed} of {ran} passed ({rate:.1f} %), floor {floor:g} %")
sys.exit(0 if ran and rate >= floor else 1)
PY
