#!/usr/bin/env bash
# GPU check of the example inference server (examples/serve.py: HTTP, a Llama-style model, static KV
# cache, the decode step one CUDA graph replay) started paused under kcount and switched on for a window
# with `kcount ctl`: per-range numbers exact, trace and summary modes equal, the exporter if there is one:
#
#     bash tests/gpu/check_server.sh [BUILD_DIR]        (BUILD_DIR defaults to "build")
#
# Uses BUILD_DIR/bin/kcount and BUILD_DIR/lib/libkcount.so; logs and each server's stderr go to
# ${OUT:-/tmp/kcount-gpu-server}. Set PYTHON to use another interpreter than python3. Prints rows
# "NAME  PASS|FAIL|SKIP  details" and a table last (tests/gpu/check_server.py says what each row checks);
# exits 1 if any check failed. Two server runs, well under 4 minutes on one H100.
set -u
BUILD_DIR=${1:-build}
BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd || echo "$BUILD_DIR")
OUTDIR=${OUT:-/tmp/kcount-gpu-server}
PY=${PYTHON:-python3}
mkdir -p "$OUTDIR"
PYTHON=$PY exec "$PY" "$(dirname "${BASH_SOURCE[0]}")/check_server.py" "$BUILD_DIR" "$OUTDIR"
