#!/usr/bin/env bash
# Runs every test of ax: checks formatting, clippy and rustdoc, makes PostgreSQL and MariaDB available
# (scripts/test-databases.sh), installs the Python example worker's and SDK's requirements, builds
# the TypeScript SDK, checks the web console's generated code and build and installs Chromium for its
# browser test, runs `cargo test` on the whole workspace, then scripts/conformance.sh (the
# proto's checks and the conformance kit against the three SDKs).
# Extra arguments go to cargo test (e.g. `./scripts/test.sh -p ax-scheduler`).
set -euo pipefail
cd "$(dirname "$0")/.."
# The lint gates come first: they need no database and fail in minutes, not after the whole test run.
# rustfmt and clippy are rustup components that a minimal toolchain lacks.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi
cargo fmt --all -- --check
# Every crate and target (tests, benches, examples) is linted; a warning fails, so none pile up.
cargo clippy --workspace --all-targets --locked -- -D warnings
# Broken intra-doc links and other rustdoc warnings fail too, so the API docs stay true.
RUSTDOCFLAGS='-D warnings' cargo doc --workspace --no-deps --locked
urls=$(./scripts/test-databases.sh)
while IFS= read -r line; do export "${line?}"; done <<<"$urls"
python3 -m pip install --quiet --disable-pip-version-check \
  -r sdks/python/requirements.txt
# The TypeScript SDK built, for tests/tests/suite/sdk_mtls.rs (its kit run in conformance.sh builds it again).
./scripts/ensure-node.sh
npm ci --prefix sdks/typescript --no-audit --no-fund --loglevel=error
npm run build --prefix sdks/typescript --silent
# The web console: its locked packages, console/src/gen and console/dist checked against what the
# sources make (console/check.sh), and Debian's Chromium for its browser test (tests/tests/console_e2e.rs).
npm ci --prefix console --no-audit --no-fund --loglevel=error
console/check.sh
./scripts/ensure-chromium.sh >/dev/null
# libfaketime lets the cluster tests run axd with a skewed wall clock.
if ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null \
    || { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; }
fi
# A test skipped outside CI (AX_SKIP_*_TESTS=1) says so on stderr and in target/<profile>/ax-tests-skipped.txt;
# the list is printed at the end, so that a skip never passes for a success.
target="${CARGO_TARGET_DIR:-target}"
rm -f "$target"/*/ax-tests-skipped.txt
skipped_summary() {
  local f
  for f in "$target"/*/ax-tests-skipped.txt; do
    [ -s "$f" ] || continue
    echo "" >&2
    echo "$(wc -l <"$f") test(s) SKIPPED (listed in $f):" >&2
    sed 's/^/  /' "$f" >&2
  done
}
trap skipped_summary EXIT
cargo test --workspace --locked "$@"
# The worker protocol as a product: buf lint, breaking check, docs/proto, and the conformance kit.
./scripts/conformance.sh
