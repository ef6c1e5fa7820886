#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test that needs no GPU
# (unit tests, the library's handlers from real CUPTI/NVTX structs, the library preloaded into
# processes without a GPU, the reader on logs recorded on an H200). GPU checks: tests/gpu/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$root/build}
bash "$root/scripts/build.sh"
cd "$BUILD_DIR"
ctest --output-on-failure
