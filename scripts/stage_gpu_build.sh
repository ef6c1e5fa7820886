#!/usr/bin/env bash
# Copies the built kcount tool and library (stripped) into .carry/, the folder sent to a GPU machine
# (which has no spdlog/CLI11 to build with). Usage: scripts/stage_gpu_build.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rm -rf "$root/.carry"
mkdir -p "$root/.carry/bin" "$root/.carry/lib"
strip -o "$root/.carry/bin/kcount" "$build/bin/kcount"
strip -o "$root/.carry/lib/libkcount.so" "$build/lib/libkcount.so"
# The tool links cpp-httplib (kcount exporter), a shared library only in Debian, with its brotli
# libraries: carried beside it (the tool's RPATH is $ORIGIN/../lib). libssl, libcrypto and libz are
# taken from the GPU machine.
ldd "$build/bin/kcount" | awk '$3 ~ /libcpp-httplib|libbrotli/ {print $3}' | while read -r so; do
  cp -L "$so" "$root/.carry/lib/$(basename "$so")"
done
# The Python helper for --torch-modules/--torch-ops (lib/../share/kcount/python)
mkdir -p "$root/.carry/share/kcount"
cp -r "$build/share/kcount/python" "$root/.carry/share/kcount/python"
# The overhead benchmark's CUPTI floor (bench/), when built: bench/run_bench.py --build-dir .carry
if [[ -f $build/lib/libcupti_floor.so ]]; then
  strip -o "$root/.carry/lib/libcupti_floor.so" "$build/lib/libcupti_floor.so"
fi
# Its variants of the library (bench/ab_floor.py summary-cb-*), when built
for lib in "$build"/lib/libkcount_bench_cb*.so; do
  [[ -f $lib ]] && strip -o "$root/.carry/lib/$(basename "$lib")" "$lib"
done
du -sh "$root/.carry"
