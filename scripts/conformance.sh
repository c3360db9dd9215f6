#!/usr/bin/env bash
# The worker protocol as a product: buf lint and format, no breaking change against the released
# contract (tools/buf/baseline), docs/proto up to date, and the conformance kit passed by the
# workers of the three SDKs — Rust, Python, TypeScript — every scenario each. `./scripts/test.sh` runs it last; it also runs alone.
# buf comes from npm, pinned by tools/buf/package-lock.json (needs node and npm).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-node.sh
npm ci --prefix tools/buf --no-audit --no-fund --loglevel=error
buf=tools/buf/node_modules/.bin/buf

echo "== buf lint proto"
$buf lint proto
echo "== buf format proto"
$buf format --diff --exit-code proto
echo "== buf breaking proto --against tools/buf/baseline (the contract as released)"
$buf breaking proto --against tools/buf/baseline
echo "== docs/proto"
node tools/buf/proto-docs.mjs --check

echo "== ax-conformance against the Rust SDK (worker-sdk/examples/conformance-worker.rs)"
cargo build --locked -q -p ax-conformance
cargo build --locked -q -p ax-worker --example conformance-worker
target="${CARGO_TARGET_DIR:-target}"
"$target/debug/ax-conformance" -- "$target/debug/examples/conformance-worker"

echo "== ax-conformance against the Python SDK (sdks/python/run-kit.sh)"
sdks/python/run-kit.sh
echo "== ax-conformance against the TypeScript SDK (sdks/typescript/run-kit.sh)"
sdks/typescript/run-kit.sh
