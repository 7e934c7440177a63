#!/usr/bin/env bash
# Everything CI tests (the README's test command): the Rust tests, the actor-restart tests,
# then the Python package, built from python/ by `pip install` in a fresh venv (maturin comes
# from PyPI through pip's build isolation) and tested with pytest against NumPy.
#
#   scripts/test.sh            # all of it
#   scripts/test.sh --python   # only the Python package
#
# ARES_TEST_VENV: where the fresh venv goes (default target/test-venv, recreated each run).
# ARES_WHEEL_PROFILE: the cargo profile of the package's native module (default `dev`, which
# reuses what `cargo test` compiled: a release build of the module costs 5-10 more minutes
# on 2 cores; `pip install ./python` without this script builds it in release).
set -euo pipefail
cd "$(dirname "$0")/.."

python_only=false
[[ "${1:-}" == "--python" ]] && python_only=true

if ! $python_only; then
  # The dashboard's browser test (tests/web/dashboard.rs) renders it in headless Chromium,
  # and the Python package's `Tensor.visualize` test draws PNGs with Graphviz's `dot`:
  # Debian's packages, installed here when absent; without apt those parts are skipped,
  # saying so.
  wanted=()
  command -v chromium > /dev/null || wanted+=(chromium)
  command -v dot > /dev/null || wanted+=(graphviz)
  if ((${#wanted[@]})); then
    if command -v apt-get > /dev/null && [[ $(id -u) == 0 ]]; then
      echo "== apt-get install ${wanted[*]} (the dashboard's browser test, visualize's Graphviz formats)"
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${wanted[@]}" > /dev/null; } \
        || echo "${wanted[*]} could not be installed: the tests that need them will be skipped"
    else
      echo "no ${wanted[*]} and no apt-get (as root): the tests that need them will be skipped"
    fi
  fi
  echo "== cargo test"
  cargo test
  echo "== cargo test --features fault-injection --test faults_restart (actor restarts)"
  cargo test --features fault-injection --test faults_restart
fi

echo "== the Python package: fresh venv, pip install ./python, pytest"
python=${PYTHON:-python3}
venv=${ARES_TEST_VENV:-target/test-venv}
rm -rf "$venv"
"$python" -m venv "$venv"
venv=$(cd "$venv" && pwd)
"$venv/bin/python" -m pip install --quiet --upgrade pip
profile=${ARES_WHEEL_PROFILE:-dev}
# The workspace's target dir, so the module shares the test build's compiled dependencies.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
MATURIN_PEP517_ARGS="--profile $profile" \
  "$venv/bin/python" -m pip install --quiet ./python pytest hypothesis 'numpy>=2'
# Outside the source tree, so the tests import the installed package, not python/ares.
cd python/tests
# Hypothesis draws the same examples on every CI run (see conftest.py); unset it to explore.
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
"$venv/bin/python" -m pytest -q -p no:cacheprovider .

# The array API standard's own conformance suite, from ../shared/array-api-tests beside the
# repository (skipped, saying so, where it is absent): every module, few examples per test to
# fit CI's budget, failing under a floor of the pass rate (TESTING.md lists what fails, and
# why). ARES_ARRAY_API_EXAMPLES / ARES_ARRAY_API_FLOOR override them.
cd ../..
echo "== the array API conformance suite (scripts/array_api.sh)"
bash scripts/array_api.sh "$venv/bin/python" "${ARES_ARRAY_API_EXAMPLES:-3}" "${ARES_ARRAY_API_FLOOR:-80}"
