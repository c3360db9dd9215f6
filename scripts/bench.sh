#!/usr/bin/env bash
# Runs every ax-bench scenario at its published size on one database and writes each result as
# JSON into a directory: the figures of the README's Performance section.
#
#   ./scripts/bench.sh sqlite|postgres|mysql [OUT_DIR]
#
# PostgreSQL and MariaDB come from scripts/test-databases.sh (started or installed if needed).
# Takes about 15 minutes per database on 2 cores (PostgreSQL 5 more: peer and idle); run it on an
# otherwise idle machine.
# AX_BENCH_LAG_SECS (180) and AX_BENCH_SCALE_SECS (60) shorten the fire-lag and scale windows.
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:?usage: scripts/bench.sh sqlite|postgres|mysql [OUT_DIR]}
case "$db" in
  sqlite|postgres|mysql) ;;
  *) echo "bench.sh: database must be sqlite, postgres or mysql, not '$db'" >&2; exit 2 ;;
esac
out=${2:-bench-results/$db}
mkdir -p "$out"
if [ "$db" != sqlite ]; then
  urls=$(./scripts/test-databases.sh)
  while IFS= read -r line; do export "${line?}"; done <<<"$urls"
fi
cargo build --release --locked -p ax-bench -p ax-scheduler -p axctl -p ax-worker --bins --examples
bench=./target/release/ax-bench
lag_secs=${AX_BENCH_LAG_SECS:-180}
scale_secs=${AX_BENCH_SCALE_SECS:-60}
failed=()
# A scenario that fails is tried once more; the others run either way, and the exit status says
# whether any failed for good.
run() {
  local name=$1; shift
  echo "== $name" >&2
  RUST_BACKTRACE=0 "$bench" --db "$db" --json "$out/$name.json" "$@" && return 0
  echo "== $name failed; once more" >&2
  RUST_BACKTRACE=0 "$bench" --db "$db" --json "$out/$name.json" "$@" || failed+=("$name")
}
run ceiling ceiling
run burn-down burn-down -n 100000 --workers 2 --capacity 256
run full-lifecycle full-lifecycle -n 100000 --manual-rate 500
run fire-lag-5k fire-lag --tasks 5000 --secs "$lag_secs"
# 100,000 tasks put 1,667 fires on every whole second: 2 x 1024 worker slots start them in one wave
# (2 x 256 needs four, each waiting for the previous wave's results).
run fire-lag-100k fire-lag --tasks 100000 --secs "$lag_secs" --capacity 1024
run scale scale --tasks 1000000 --active 1000 --secs "$scale_secs"
run streams streams --streams 10000 --window 20
run failover failover --kills 20
# PostgreSQL alone: graphile-worker side by side, and what idle axd cost in transactions.
if [ "$db" = postgres ]; then
  run peer peer -n 100000 --rounds 3
  run idle idle --axds 3 --secs 60
fi
echo "results in $out" >&2
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
