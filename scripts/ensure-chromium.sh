#!/usr/bin/env bash
# Makes Debian's Chromium available at /usr/bin/chromium for the console's browser tests
# (console/e2e, driven by playwright-core, which never downloads a browser of its own). Does nothing
# when it is already installed; installs the Debian package `chromium` otherwise (with sudo unless
# root). Prints the path of the browser.
set -euo pipefail
browser=${AX_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$browser" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "ensure-chromium: installing chromium from Debian packages" >&2
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# (Debian's wrapper script complains on stderr about its own memory check; only the version matters.)
{ "$browser" --version 2>/dev/null; } >&2
echo "$browser"
