#!/usr/bin/env bash
# Builds the TypeScript worker SDK, runs its unit tests, and runs the conformance kit
# (conformance/, ax-conformance) against its worker, examples/conformance-worker.ts. Every scenario
# must pass. Run from anywhere; extra arguments go to ax-conformance (e.g. --only drain --logs DIR).
# Exits with the kit's status.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v npm >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

echo "== npm ci (sdks/typescript)"
npm ci --prefix sdks/typescript --no-audit --no-fund --loglevel=error
echo "== build (copy the .proto files, check the generated types, tsc)"
npm run build --prefix sdks/typescript --silent
echo "== unit tests"
npm test --prefix sdks/typescript --silent

echo "== ax-conformance against the TypeScript SDK (sdks/typescript/examples/conformance-worker.ts)"
cargo build --locked -q -p ax-conformance
target="${CARGO_TARGET_DIR:-target}"
status=0
"$target/debug/ax-conformance" "$@" -- node sdks/typescript/dist/examples/conformance-worker.js || status=$?
exit "$status"
