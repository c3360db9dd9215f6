#!/usr/bin/env bash
# Fails when building one package of the workspace would resolve a dependency's features
# differently from building the whole workspace with its tests: then `cargo build -p axctl` after
# `cargo build -p ax-scheduler` (or the tests after either) would compile that dependency, and
# everything above it, again. tools/workspace-hack lists the union; add what this reports there.
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
# `workspace` is the whole workspace without its tests' dependencies: `cargo build --workspace
# --bins` after the tests' build (scripts/test.sh) must find everything built.
for pkg in workspace ax-scheduler axctl ax-worker ax-runner ax-egress ax-client ax-bench ax-conformance ax-tests; do
  if [ "$pkg" = workspace ]; then features --workspace >"$tmp/$pkg"; else features -p "$pkg" >"$tmp/$pkg"; fi
  # Each line of the package's own resolution must be one the workspace resolves too (the
  # workspace's own crates aside: a package's optional features are its own business).
  missing=$(comm -23 "$tmp/$pkg" "$tmp/all" | grep -v -E '^ax-[a-z-]+ ' || true)
  if [ -n "$missing" ]; then
    echo "check-features: ${pkg/#workspace/the workspace without its tests} resolves features that the build of the workspace with its tests does not:" >&2
    while IFS='|' read -r p f; do
      echo "  $p: [$f] (workspace: $(grep -F "$p|" "$tmp/all" | cut -d'|' -f2 | paste -sd' ' -))" >&2
    done <<<"$missing"
    status=1
  fi
done
[ "$status" = 0 ] && echo "check-features: every package resolves its dependencies' features as the workspace does"
exit "$status"
