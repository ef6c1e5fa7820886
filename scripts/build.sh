#!/usr/bin/env bash
# Configures and builds kcount into BUILD_DIR (default build/). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/install_deps.sh" "${KCOUNT_DEPS:-all}"  # KCOUNT_DEPS=build: the build's packages only
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
# All CPUs unless KCOUNT_JOBS says otherwise (a shared build machine); every target unless KCOUNT_TARGETS
# names some (the main job without a GPU needs the kcount tool only).
# shellcheck disable=SC2086  # KCOUNT_TARGETS is a list of target names
ninja -C "$build" -j"${KCOUNT_JOBS:-$(nproc)}" ${KCOUNT_TARGETS:-}
