#!/usr/bin/env bash
# Runs every test of ax: makes PostgreSQL and MariaDB available (scripts/test-databases.sh), installs
# the Python example worker's requirements, then runs `cargo test` on the whole workspace.
# Extra arguments go to cargo test (e.g. `./scripts/test.sh -p ax-scheduler`).
set -euo pipefail
cd "$(dirname "$0")/.."
urls=$(./scripts/test-databases.sh)
while IFS= read -r line; do export "${line?}"; done <<<"$urls"
python3 -m pip install --quiet --disable-pip-version-check -r examples/python-worker/requirements.txt
# libfaketime lets the cluster tests run axd with a skewed wall clock.
if ! ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null \
    || { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; }
fi
cargo test --workspace --locked "$@"
# The worker protocol as a product: buf lint, breaking check, docs/proto, and the conformance kit.
./scripts/conformance.sh
