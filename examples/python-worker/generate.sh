#!/usr/bin/env bash
# Generates the Python stubs of the ax.v1 contract (proto/ax/v1/*.proto) with grpcio-tools.
#
#   examples/python-worker/generate.sh [DIR]     (default DIR: examples/python-worker/gen)
#
# Afterwards DIR/ax/v1/{types,worker,admin}_pb2.py and *_pb2_grpc.py exist, with __init__.py files
# so that `import ax.v1.worker_pb2` works once DIR is on sys.path (worker.py --stubs DIR does that).
# Set PYTHON to use another interpreter than python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/gen}"
python="${PYTHON:-python3}"

if ! "$python" -c 'import grpc_tools' 2>/dev/null; then
  echo "generate.sh: grpcio-tools is not installed for $python;" \
    "run: $python -m pip install -r $here/requirements.txt" >&2
  exit 1
fi

mkdir -p "$out"
"$python" -m grpc_tools.protoc \
  -I "$repo/proto" \
  --python_out="$out" \
  --grpc_python_out="$out" \
  ax/v1/types.proto ax/v1/worker.proto ax/v1/admin.proto
# protoc writes modules, not packages: make ax and ax/v1 importable as regular packages.
touch "$out/ax/__init__.py" "$out/ax/v1/__init__.py"
echo "generated ax.v1 stubs in $out"
