#!/usr/bin/env bash
# Generates the Python stubs of the ax.v1 contract (proto/ax/v1/{types,worker,admin}.proto) into
# sdks/python/ax_worker/_proto, where they are committed (so that `pip install ./sdks/python` needs
# no code generator).
#
#   sdks/python/generate.sh           regenerate ax_worker/_proto
#   sdks/python/generate.sh --check   exit 1 if ax_worker/_proto is not what the .proto files give
#                                     today (CI runs this; regenerate and commit to fix)
#
# protoc writes `from ax.v1 import types_pb2` into the generated modules (their package is ax.v1).
# A top-level package named `ax` would clash with unrelated packages of that name, so the stubs
# live inside ax_worker and those imports are rewritten to relative ones (`from . import
# types_pb2`): the package then works installed and from the source tree alike.
# Needs grpcio-tools (python3 -m pip install -r sdks/python/requirements.txt); set PYTHON to use
# another interpreter than python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
python="${PYTHON:-python3}"
dest="$here/ax_worker/_proto"

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if ! "$python" -c 'import grpc_tools' 2>/dev/null; then
  echo "generate.sh: grpcio-tools is not installed for $python;" \
    "run: $python -m pip install -r $here/requirements.txt" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" -m grpc_tools.protoc \
  -I "$repo/proto" \
  --python_out="$tmp" \
  --grpc_python_out="$tmp" \
  --pyi_out="$tmp" \
  ax/v1/types.proto ax/v1/worker.proto ax/v1/admin.proto

out="$tmp/out"
mkdir -p "$out"
for f in "$tmp"/ax/v1/*.py "$tmp"/ax/v1/*.pyi; do
  # `from ax.v1 import x_pb2 as y` -> `from . import x_pb2 as y` (see above).
  sed -E 's/^from ax\.v1 import /from . import /' "$f" >"$out/$(basename "$f")"
done
cat >"$out/__init__.py" <<'PY'
"""Generated stubs of the ax.v1 contract (proto/ax/v1/*.proto). Do not edit: run generate.sh."""
PY

if $check; then
  if diff -r -q -x __pycache__ "$out" "$dest" >/dev/null 2>&1; then
    echo "generate.sh: $dest is up to date"
    exit 0
  fi
  echo "generate.sh: $dest is stale (it differs from what proto/ax/v1 gives):" >&2
  diff -r -x __pycache__ "$out" "$dest" | head -40 >&2 || true
  echo "run sdks/python/generate.sh and commit the result" >&2
  exit 1
fi

rm -rf "$dest"
mkdir -p "$dest"
cp "$out"/* "$dest"/
echo "generated ax.v1 stubs in $dest"
