#!/usr/bin/env bash
# Fails when src/parse.ts reads a duration otherwise than axd and axctl (proto/duration-cases.txt),
# or when the committed console/src/gen (generated from proto/ax/v1) or console/dist (the build
# that axd embeds) differ from what the sources and the locked packages make now, so neither goes
# stale. Needs `npm ci --prefix console` first (scripts/test.sh does it). To refresh both after a
# change to the .proto files or to console/src: `npm run regen --prefix console`, then commit.
#
# console/dist is rebuilt into a temporary directory and compared, never rewritten: axd's build
# script (scheduler/build.rs) reads it, and scripts/test.sh runs this check while cargo builds.
set -euo pipefail
cd "$(dirname "$0")"
npm run --silent gen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node_modules/.bin/tsc -p tsconfig.json
# The duration parser against ax's one duration syntax (proto/duration-cases.txt).
node scripts/duration-cases.mjs
node scripts/build.mjs --out "$tmp/dist" >/dev/null
stale=0
if ! git diff --quiet -- src/gen dist || [ -n "$(git status --porcelain -- src/gen dist)" ]; then
  git status --short -- src/gen dist >&2
  stale=1
fi
if ! diff -r "$tmp/dist" dist >&2; then
  stale=1
fi
if [ "$stale" = 1 ]; then
  echo "console/check.sh: console/src/gen or console/dist is stale; run \`npm run regen --prefix console\` and commit the result" >&2
  exit 1
fi
echo "console/check.sh: console/src/gen and console/dist are up to date"
