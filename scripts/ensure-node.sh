#!/usr/bin/env bash
# Makes node and npm available (Debian's packages), for buf (tools/buf) and the TypeScript SDK
# (sdks/typescript). Does nothing when npm is already on PATH.
set -euo pipefail
if ! command -v npm >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi
