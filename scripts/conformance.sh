#!/usr/bin/env bash
# The worker protocol as a product: buf lint and format, no breaking change against the released
# contract (tools/buf/baseline), docs/proto up to date, and the conformance kit passed by the
# workers of the three SDKs — Rust, Python, TypeScript — every scenario each. `./scripts/test.sh` runs it last; it also runs alone.
# buf comes from npm, pinned by tools/buf/package-lock.json (needs node and npm).
#
# The three kits run at once, each logging to target/ci-logs/conformance-<sdk>.log; a failed
# kit's log is printed. `--prepared` says that what the kits need is already there — tools/buf's and
# sdks/typescript's packages installed and the SDK built, the Python requirements installed,
# ax-conformance and the conformance-worker example built (scripts/test.sh does all that before) —
# so that nothing is installed or built again. Without it, this script does it first, once.
set -euo pipefail
cd "$(dirname "$0")/.."
prepared=false
case "${1:-}" in
  "") ;;
  --prepared) prepared=true ;;
  *) echo "usage: $0 [--prepared]" >&2; exit 2 ;;
esac
target="${CARGO_TARGET_DIR:-target}"
logs=target/ci-logs
mkdir -p "$logs"

./scripts/ensure-node.sh
if ! $prepared; then
  echo "== npm ci (tools/buf)"
  npm ci --prefix tools/buf --no-audit --no-fund --loglevel=error
fi
buf=tools/buf/node_modules/.bin/buf

echo "== buf lint proto"
$buf lint proto
echo "== buf format proto"
$buf format --diff --exit-code proto
echo "== buf breaking proto --against tools/buf/baseline (the contract as released)"
$buf breaking proto --against tools/buf/baseline
echo "== docs/proto"
node tools/buf/proto-docs.mjs --check

if ! $prepared; then
  # Once here rather than in each kit script: three cargo builds at once would only wait for
  # each other.
  echo "== build ax-conformance and the Rust SDK's conformance worker"
  cargo build --locked -q -p ax-conformance
  cargo build --locked -q -p ax-worker --example conformance-worker
  echo "== python SDK: requirements (sdks/python/requirements.txt)"
  "${PYTHON:-python3}" -m pip install --quiet --disable-pip-version-check -r sdks/python/requirements.txt
  echo "== TypeScript SDK: npm ci and build (sdks/typescript)"
  npm ci --prefix sdks/typescript --no-audit --no-fund --loglevel=error
  npm run build --prefix sdks/typescript --silent
fi

kit_rust() {
  echo "== ax-conformance against the Rust SDK (worker-sdk/examples/conformance-worker.rs)"
  "$target/debug/ax-conformance" --strict -- "$target/debug/examples/conformance-worker"
}
# --strict: a scenario an SDK skips is a scenario not checked, so it fails the kit here.
kit_python() {
  sdks/python/run-kit.sh --prepared --strict
}
kit_typescript() {
  sdks/typescript/run-kit.sh --prepared --strict
}

echo "== the conformance kit against the Rust, Python and TypeScript SDKs, at once (logs in $logs/conformance-<sdk>.log)"
declare -A pids=()
for sdk in rust python typescript; do
  "kit_$sdk" </dev/null >"$logs/conformance-$sdk.log" 2>&1 &
  pids[$sdk]=$!
done
failed=()
for sdk in rust python typescript; do
  if wait "${pids[$sdk]}"; then
    echo "  $sdk: $(grep -E '^conformance: ' "$logs/conformance-$sdk.log" | tail -n 1)"
  else
    failed+=("$sdk")
  fi
done
for sdk in "${failed[@]}"; do
  echo "" >&2
  echo "-- the conformance kit against the $sdk SDK FAILED; $logs/conformance-$sdk.log:" >&2
  cat "$logs/conformance-$sdk.log" >&2
done
[ "${#failed[@]}" = 0 ]
