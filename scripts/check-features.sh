#!/usr/bin/env bash
# Fails when building one package of the workspace would resolve a dependency's features
# differently from building the whole workspace with its tests: then `cargo build -p axctl` after
# `cargo build -p ax-scheduler` (or the tests after either) would compile that dependency, and
# everything above it, again. tools/workspace-hack lists the union; add what this reports there.
# Known and accepted: the certificate tests of axctl read certificates with x509-parser, which asks
# for more of `time` than rcgen does (the two are compiled once each), and the proto generator test
# (a dev-dependency of ax-proto only) asks for more of rustix.
set -euo pipefail
cd "$(dirname "$0")/.."
features() {
  cargo tree --locked "$@" -e features,normal,build --prefix none --format '{p}|{f}' |
    sed 's/ (\*)$//; s/ (proc-macro)//' | awk -F'|' 'NF == 2 { split($1, a, " "); print a[1] " " a[2] "|" $2 }' | sort -u
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
features --workspace -e dev >"$tmp/all"
status=0
for pkg in ax-scheduler axctl ax-worker ax-runner ax-egress ax-client ax-bench ax-conformance ax-tests; do
  features -p "$pkg" >"$tmp/$pkg"
  # Each line of the package's own resolution must be one the workspace resolves too (the
  # workspace's own crates aside: a package's optional features are its own business).
  missing=$(comm -23 "$tmp/$pkg" "$tmp/all" | grep -v -E '^(ax-[a-z-]+|time|rustix) ' || true)
  if [ -n "$missing" ]; then
    echo "check-features: -p $pkg resolves features that the workspace build does not:" >&2
    while IFS='|' read -r p f; do
      echo "  $p: [$f] (workspace: $(grep -F "$p|" "$tmp/all" | cut -d'|' -f2 | paste -sd' ' -))" >&2
    done <<<"$missing"
    status=1
  fi
done
[ "$status" = 0 ] && echo "check-features: every package resolves its dependencies' features as the workspace does"
exit "$status"
