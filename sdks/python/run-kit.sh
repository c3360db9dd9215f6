#!/usr/bin/env bash
# Checks the Python SDK (sdks/python) end to end:
#   1. installs its pinned requirements (grpcio, grpcio-tools, protobuf) for python3,
#   2. checks that the committed stubs in ax_worker/_proto match proto/ax/v1 (generate.sh --check),
#   3. runs its unit tests (standard library unittest),
#   4. builds the conformance kit and runs all its scenarios against
#      sdks/python/examples/conformance_worker.py, and exits with the kit's status.
# Extra arguments go to ax-conformance before `--` (e.g. --only drain,reconnect, or --logs DIR).
# A first argument `--prepared` skips step 1 and the kit's build (scripts/conformance.sh and
# scripts/test.sh did them already). Set PYTHON to use another interpreter than python3. Run from
# anywhere; it works from the repo root.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$repo"
python="${PYTHON:-python3}"
prepared=false
if [ "${1:-}" = --prepared ]; then
  prepared=true
  shift
fi

if ! $prepared; then
  echo "== python SDK: requirements (sdks/python/requirements.txt)"
  "$python" -m pip install --quiet --disable-pip-version-check -r sdks/python/requirements.txt
fi

echo "== python SDK: generated stubs are up to date"
PYTHON="$python" sdks/python/generate.sh --check

echo "== python SDK: unit tests"
# The worker and the tests import ax_worker from the source tree.
export PYTHONPATH="$repo/sdks/python${PYTHONPATH:+:$PYTHONPATH}"
"$python" -m unittest discover -s sdks/python/tests

echo "== ax-conformance against the Python SDK (sdks/python/examples/conformance_worker.py)"
if ! $prepared; then cargo build --locked -q -p ax-conformance; fi
target="${CARGO_TARGET_DIR:-target}"
status=0
"$target/debug/ax-conformance" "$@" -- "$python" sdks/python/examples/conformance_worker.py || status=$?
exit "$status"
