#!/usr/bin/env bash
# Builds the TypeScript worker SDK, runs its unit tests, and runs the conformance kit
# (conformance/, ax-conformance) against its worker, examples/conformance-worker.ts. Every scenario
# must pass. Run from anywhere; extra arguments go to ax-conformance (e.g. --only drain --logs DIR).
# A first argument `--prepared` skips `npm ci`, the build and the kit's build (scripts/conformance.sh
# and scripts/test.sh did them already). Exits with the kit's status.
set -euo pipefail
cd "$(dirname "$0")/../.."
prepared=false
if [ "${1:-}" = --prepared ]; then
  prepared=true
  shift
fi

if ! $prepared; then
  ./scripts/ensure-node.sh
  echo "== npm ci (sdks/typescript)"
  npm ci --prefix sdks/typescript --no-audit --no-fund --loglevel=error
  echo "== build (copy the .proto files, check the generated types, tsc)"
  npm run build --prefix sdks/typescript --silent
fi
echo "== unit tests"
npm test --prefix sdks/typescript --silent

echo "== ax-conformance against the TypeScript SDK (sdks/typescript/examples/conformance-worker.ts)"
if ! $prepared; then cargo build --locked -q -p ax-conformance; fi
target="${CARGO_TARGET_DIR:-target}"
status=0
"$target/debug/ax-conformance" "$@" -- node sdks/typescript/dist/examples/conformance-worker.js || status=$?
exit "$status"
