#!/usr/bin/env bash
# Runs every test of ax, in phases:
#   start     in the background, what needs no Rust build: PostgreSQL and MariaDB
#             (scripts/test-databases.sh), the Python SDK's requirements, the TypeScript SDK built,
#             the web console's packages and its generated code and build checked (console/check.sh),
#             Chromium for its browser test, libfaketime, PgBouncer; each logs to target/ci-logs/<step>.log
#   lints     cargo fmt --check and the features check; then, in the background and only on
#             otherwise idle CPU, rustdoc with warnings denied (target/lints)
#   build     every test binary, axd, axctl and the examples, built once (cargo nextest --no-run),
#             with clippy's lints, warnings denied, run by the same compilations
#             (scripts/clippy-rustc.sh)
#   setup     waits for the background steps but rustdoc; a failed one fails the run, with its log's tail
#   tests     cargo nextest run --profile ci (.config/nextest.toml: several tests at once, each
#             in its own process), then the doctests (cargo test --doc; nextest runs none)
#   docs      waits for rustdoc (usually done by then)
#   contract  waits for scripts/conformance.sh --prepared, started with the tests: the proto's
#             checks and the conformance kit against the three SDKs, at once
# and prints how long each phase took, also when one fails.
# Extra arguments go to cargo nextest run (e.g. `./scripts/test.sh -p ax-scheduler`, or a filter:
# `./scripts/test.sh -E 'test(/foreign::/)'`).
set -euo pipefail
cd "$(dirname "$0")/.."
# A CI build starts from nothing and is thrown away: incremental compilation only costs time there
# (and disk in target/).
if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ]; then export CARGO_INCREMENTAL=0; fi
target="${CARGO_TARGET_DIR:-target}"
logs=target/ci-logs
rm -rf "$logs"
mkdir -p "$logs"

# Phase times, printed at the end (by the EXIT trap, so a failed run shows them too).
phases=()
phase=""
phase_start=$SECONDS
run_start=$SECONDS
begin() { # name
  end_phase
  phase=$1
  phase_start=$SECONDS
  echo "== phase $phase" >&2
}
end_phase() {
  if [ -n "$phase" ]; then phases+=("$(printf '%-9s %4ds' "$phase" $((SECONDS - phase_start)))"); fi
  phase=""
}

# A test skipped outside CI (AX_SKIP_*_TESTS=1) says so on stderr and in target/<profile>/ax-tests-skipped.txt;
# the list is printed at the end, so that a skip never passes for a success.
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

# Background steps: name -> pid.
declare -A bg=()
finish() {
  local status=$?
  local failed=$phase
  end_phase
  # A run that fails early leaves no background step behind.
  local name
  for name in "${!bg[@]}"; do
    kill -- "-${bg[$name]}" 2>/dev/null || true
  done
  skipped_summary
  echo "" >&2
  echo "Phase times:" >&2
  printf '  %s\n' "${phases[@]}" >&2
  printf '  %-9s %4ds\n' total $((SECONDS - run_start)) >&2
  if [ "$status" != 0 ]; then echo "scripts/test.sh: FAILED in phase ${failed:-?} (exit $status)" >&2; fi
}
trap finish EXIT

# Starts `name` in the background: its commands (a function or a script), output to its log, in
# a process group of its own (monitor mode), so that a failed run can stop it with its children.
start() { # name command...
  local name=$1
  shift
  set -m
  ("$@") </dev/null >"$logs/$name.log" 2>&1 &
  bg[$name]=$!
  set +m
}
# Waits for the background steps named (every one without a name); prints the tail of each failed
# one's log; fails if one did.
wait_all() {
  local name failed=() names=("$@")
  if [ "${#names[@]}" = 0 ]; then mapfile -t names < <(printf '%s\n' "${!bg[@]}" | sort); fi
  for name in "${names[@]}"; do
    if wait "${bg[$name]}"; then
      echo "  $name: ok" >&2
    else
      failed+=("$name")
    fi
    unset "bg[$name]"
  done
  for name in "${failed[@]}"; do
    echo "" >&2
    echo "-- $name FAILED; the end of $logs/$name.log:" >&2
    tail -n 40 "$logs/$name.log" >&2
  done
  [ "${#failed[@]}" = 0 ]
}

# Installs with apt (node, Chromium, libfaketime, the databases) take turns: two apt-get at once
# fail on dpkg's lock. (npm already there needs no turn.) `flock -o`: the command does not inherit
# the lock's descriptor, so a server it (re)starts does not hold the turn for as long as it runs
# (test-databases.sh restarts PostgreSQL to raise max_connections; that server kept the lock, and
# the libfaketime install waited for it forever).
apt_lock="$logs/apt.lock"
ensure_node() {
  command -v npm >/dev/null 2>&1 || flock -o "$apt_lock" ./scripts/ensure-node.sh
}
step_databases() {
  flock -o "$apt_lock" ./scripts/test-databases.sh >"$logs/databases.env"
}
step_python() {
  python3 -m pip install --quiet --disable-pip-version-check -r sdks/python/requirements.txt
}
# The TypeScript SDK built, for tests/tests/suite/sdk_mtls.rs and its conformance kit.
step_typescript() {
  ensure_node
  npm ci --prefix sdks/typescript --no-audit --no-fund --loglevel=error
  npm run build --prefix sdks/typescript --silent
}
# buf (tools/buf) for console/check.sh's code generation and the proto checks of conformance.sh;
# the console's locked packages; console/src/gen and console/dist checked against what the sources
# make (console/check.sh).
step_console() {
  ensure_node
  npm ci --prefix tools/buf --no-audit --no-fund --loglevel=error
  npm ci --prefix console --no-audit --no-fund --loglevel=error
  console/check.sh
}
# Debian's Chromium for the console's browser test (tests/tests/suite/console_e2e.rs).
step_chromium() {
  flock -o "$apt_lock" ./scripts/ensure-chromium.sh
}
# libfaketime lets the cluster tests run axd with a skewed wall clock.
step_faketime() {
  if ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1; then return 0; fi
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  flock -o "$apt_lock" sh -c "$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null \
    || { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; }"
}

# PgBouncer (transaction pooling) for tests/tests/suite/pgbouncer.rs, which starts one of its own;
# the package's own service is not used.
step_pgbouncer() {
  if command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then return 0; fi
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  flock -o "$apt_lock" sh -c "$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null \
    || { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null; }"
}

begin start
if ! command -v flock >/dev/null 2>&1; then
  echo "scripts/test.sh: flock (util-linux) is needed" >&2
  exit 1
fi
for s in databases python typescript console chromium faketime pgbouncer; do
  start "$s" "step_$s"
done
# rustfmt and clippy are rustup components that a minimal toolchain lacks; nextest is a cargo plugin.
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  rustup component add rustfmt clippy
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi

# The quick lint gates come before the build: they fail in seconds, not after the whole test run.
begin lints
cargo fmt --all -- --check
# Every package resolves its dependencies' features as the whole workspace does (tools/workspace-hack),
# so that building one never rebuilds what another built.
./scripts/check-features.sh
# Broken intra-doc links and other rustdoc warnings fail too, so the API docs stay true. rustdoc
# needs every dependency checked (a compilation of its own, which the build below cannot share), so
# it runs beside the build and the tests in a target directory of its own, as SCHED_IDLE: it gets a
# core only when no build or test wants it, and it is waited for after the tests.
# (Where SCHED_IDLE is refused, as in some containers, the lowest nice value instead.)
idle=(chrt --idle 0)
"${idle[@]}" true 2>/dev/null || idle=(nice -n 19)
step_docs() {
  CARGO_TARGET_DIR="$target/lints" RUSTDOCFLAGS='-D warnings' "${idle[@]}" cargo doc --workspace --no-deps --locked
}
start docs step_docs

# One build of every test binary; with them, the binaries the tests start (axd, axctl,
# ax-conformance) and the examples (demo-worker, conformance-worker, raw-worker), all with the
# features of the whole workspace. Every later cargo command of this run finds them built.
begin build
# clippy's lints in the build's own compilations of the workspace's crates, every target, warnings
# denied: a lint fails the build (scripts/clippy-rustc.sh). Every later cargo command of this run
# keeps the wrapper, so none of them compiles the workspace again.
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/clippy-rustc.sh"
cargo nextest run --workspace --locked --no-run
# ax-runner has no tests of its own that would build its binary; the suite runs it.
cargo build --workspace --locked --bins
# The tests take those binaries as they are instead of running `cargo build` themselves
# (tests/src/procs.rs): one cargo run per test process, each waiting on the build lock.
export AX_BINARIES_BUILT=1

begin setup
mapfile -t steps < <(printf '%s\n' "${!bg[@]}" | grep -vx docs | sort)
wait_all "${steps[@]}"
while IFS= read -r line; do
  if [ -n "$line" ]; then export "${line?}"; fi
done <"$logs/databases.env"

begin tests
# The worker protocol as a product (buf lint, breaking check, docs/proto, and the conformance kit
# against the three SDKs) runs beside the tests: it needs only what the build and setup made, and
# its kits spend most of their minute waiting on workers (about 48 CPU-seconds of 66), which here
# costs the tests far less than a phase of its own after them. Waited for in phase contract.
start contract ./scripts/conformance.sh --prepared
# --workspace unless the arguments pick packages (cargo ignores -p next to --workspace).
scope=(--workspace)
for arg in "$@"; do
  case "$arg" in -p | -p* | --package | --package=*) scope=() ;; esac
done
cargo nextest run "${scope[@]}" --locked --profile ci "$@"
# nextest runs no doctests. Only on a whole-workspace run, not when arguments pick some tests.
if [ "$#" = 0 ]; then
  cargo test --workspace --doc --locked
fi

begin docs
wait_all docs

begin contract
if wait_all contract; then
  grep -E '^  [a-z]+: conformance: ' "$logs/contract.log" >&2
else
  exit 1
fi
end_phase
