#!/usr/bin/env bash
# Fails when the committed console/src/gen (generated from proto/ax/v1) or console/dist (the build
# that axd embeds) differ from what the sources and the locked packages make now, so neither goes
# stale. Needs `npm ci --prefix console` first (scripts/test.sh does it). To refresh both after a
# change to the .proto files or to console/src: `npm run regen --prefix console`, then commit.
set -euo pipefail
cd "$(dirname "$0")"
npm run --silent gen
npm run --silent build >/dev/null
if ! git diff --quiet -- src/gen dist || [ -n "$(git status --porcelain -- src/gen dist)" ]; then
  git status --short -- src/gen dist >&2
  echo "console/check.sh: console/src/gen or console/dist is stale; run \`npm run regen --prefix console\` and commit the result" >&2
  exit 1
fi
echo "console/check.sh: console/src/gen and console/dist are up to date"
