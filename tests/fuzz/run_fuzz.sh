#!/usr/bin/env bash
# Builds the log reader's libFuzzer target (clang++ -fsanitize=fuzzer,address,undefined) and fuzzes the
# whole read path for a bounded time. Fails on any crash, leak, timeout, out-of-memory or UB finding;
# prints libFuzzer's final statistics (executions, coverage). A finding is saved under
# $FUZZ_BUILD_DIR/artifacts/: copy it to tests/data/fuzz-regressions/ (ctest replays that folder
# through the reader without libFuzzer: test fuzz_regressions), then fix the reader.
# Usage: tests/fuzz/run_fuzz.sh [SECONDS]          (default 120; FUZZ_BUILD_DIR default build-fuzz/)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
secs=${1:-120}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
cxx=${FUZZ_CXX:-clang++}
mkdir -p "$build/obj-fuzz" "$build/obj-seeds" "$build/corpus" "$build/artifacts"

common=(-std=c++20 -g -O1 -I"$root" -DXXH_INLINE_ALL -DFMT_HEADER_ONLY -Wall -Wno-unused-command-line-argument)
fuzz_flags=(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
# The read path: every GPU-free collector file, and the tool's sources the fuzz target reaches: each
# tools/NAME.h it includes, directly or through them, brings tools/NAME.cpp (so the list follows the code).
sources=("$root"/collector/*.cpp)
declare -A seen=()
queue=("$root/tests/fuzz/fuzz_log_reader.cpp")
while ((${#queue[@]})); do
  file=${queue[0]}
  queue=("${queue[@]:1}")
  for name in $(sed -n 's|^#include "tools/\([A-Za-z0-9_]*\)\.h".*|\1|p' "$file"); do
    [[ -n ${seen[$name]:-} ]] && continue
    seen[$name]=1
    queue+=("$root/tools/$name.h")
    if [[ -f $root/tools/$name.cpp ]]; then
      sources+=("$root/tools/$name.cpp")
      queue+=("$root/tools/$name.cpp")
    fi
  done
done

compile() {  # objdir flags... -- sources...: compiles in parallel (one job per core), prints objects
  local dir=$1; shift
  local flags=()
  while [[ $1 != -- ]]; do flags+=("$1"); shift; done; shift
  printf '%s\n' "$@" | xargs -P "$(nproc)" -I{} sh -c \
    'src={}; obj='"$dir"'/$(echo "$src" | tr / _).o; [ "$obj" -nt "$src" ] || exec "$0" "$@" -c "$src" -o "$obj"' \
    "$cxx" "${flags[@]}"
  for s in "$@"; do echo "$dir/$(echo "$s" | tr / _).o"; done
}

echo "== building the fuzzer ($cxx, $(command -v "$cxx"))"
# Objects are rebuilt when their source is newer; headers changing is caught by a clean build folder
# (CI clones fresh). KCOUNT_FUZZ_CLEAN=1 forces it locally.
[[ ${KCOUNT_FUZZ_CLEAN:-0} == 1 ]] && rm -f "$build"/obj-fuzz/*.o "$build"/obj-seeds/*.o
mapfile -t objs < <(compile "$build/obj-fuzz" "${common[@]}" "${fuzz_flags[@]}" -- "${sources[@]}" \
  "$root/tests/fuzz/fuzz_log_reader.cpp")
# zstd from its static archive, as in the CMake build (packed chunks).
zstd_lib=${ZSTD_LIB:-/usr/lib/x86_64-linux-gnu/libzstd.a}
# utf8proc likewise (display widths of the text tables, tools/kernel_names.cpp).
utf8proc_lib=${UTF8PROC_LIB:-/usr/lib/x86_64-linux-gnu/libutf8proc.a}
"$cxx" -fsanitize=fuzzer,address,undefined "${objs[@]}" "$zstd_lib" "$utf8proc_lib" -o "$build/fuzz_log_reader"
mapfile -t seed_objs < <(compile "$build/obj-seeds" "${common[@]}" -- "$root"/collector/*.cpp \
  "$root/tests/fuzz/make_seeds.cpp")
"$cxx" "${seed_objs[@]}" "$zstd_lib" "$utf8proc_lib" -pthread -o "$build/make_seeds"

rm -rf "$build/seeds"
"$build/make_seeds" "$build/seeds" "$root"
rm -f "$build"/artifacts/*

echo "== fuzzing for $secs s"
set +e
"$build/fuzz_log_reader" "$build/corpus" "$build/seeds" "$root/tests/data/fuzz-regressions" \
  -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -dict="$root/tests/fuzz/kcount.dict" -print_final_stats=1 -artifact_prefix="$build/artifacts/" \
  >"$build/fuzz.log" 2>&1
rc=$?
set -e
grep -E '^INFO: seed corpus|^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|^Done [0-9]+ runs' "$build/fuzz.log" || true
findings=$(ls -A "$build/artifacts")
if [[ $rc -ne 0 || -n $findings ]]; then
  tail -n 60 "$build/fuzz.log"
  echo "FAIL fuzz_log_reader: exit $rc, findings: ${findings:-none} (in $build/artifacts/)"
  echo "     copy each to tests/data/fuzz-regressions/ and fix the reader"
  exit 1
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/fuzz.log")
cov=$(sed -n 's/^#[0-9]*[[:space:]]*DONE.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 edges, \2 features/p' "$build/fuzz.log")
echo "PASS fuzz_log_reader: $execs executions in $secs s, coverage $cov, no findings"
