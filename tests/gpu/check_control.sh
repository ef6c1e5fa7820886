#!/usr/bin/env bash
# GPU checks of the production control features (capture windows, kcount ctl, pause/resume cost):
#
#     bash tests/gpu/check_control.sh [BUILD_DIR]        (BUILD_DIR defaults to "build"; ".carry" on the GPU)
#
# Uses BUILD_DIR/bin/kcount and BUILD_DIR/lib/libkcount.so; logs and stderr of each program go to
# ${OUT:-/tmp/kcount-gpu-control}. Set PYTHON to use another interpreter than python3. Prints rows
# "NAME  PASS|FAIL  details" and a table last (tests/gpu/check_control.py says what each row checks);
# exits 1 if any check failed. About 2-3 minutes on one H200.
set -u
BUILD_DIR=${1:-build}
BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd || echo "$BUILD_DIR")
OUTDIR=${OUT:-/tmp/kcount-gpu-control}
PY=${PYTHON:-python3}
mkdir -p "$OUTDIR"
exec "$PY" "$(dirname "${BASH_SOURCE[0]}")/check_control.py" "$BUILD_DIR" "$OUTDIR"
