#!/usr/bin/env bash
# The main job. On a machine with a CUDA GPU and PyTorch: builds kcount, profiles the examples
# (Linear with bias, GeGLU eager and compiled) and prints the per-range tables. Without a GPU: builds
# the tool and summarizes the logs that were recorded on an NVIDIA H200 (examples/logs/).
# KCOUNT_NO_BUILD=1: use the kcount already built in BUILD_DIR (no build); KCOUNT_NO_GPU=1: summarize the
# shipped logs even where a CUDA GPU is found (tests/cli/test_main_job.sh runs both).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$root/build}
kcount=$BUILD_DIR/bin/kcount
py=${PYTHON:-python3}
# Where a CUDA GPU and PyTorch are, the examples are profiled (the library, the tool and its Python helper
# are built); elsewhere the shipped logs are summarized, which needs the kcount tool only.
gpu=0
if [[ ${KCOUNT_NO_GPU:-0} != 1 ]] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  gpu=1
fi
if [[ ${KCOUNT_NO_BUILD:-0} == 1 ]]; then
  if [[ ! -x $kcount ]]; then
    echo "== KCOUNT_NO_BUILD=1, but $kcount is not built" >&2
    exit 1
  fi
  echo "== using the kcount built in $BUILD_DIR (KCOUNT_NO_BUILD=1)" >&2
else
  build_log=$(mktemp)
  targets=""
  [[ $gpu == 1 ]] || targets=kcount
  echo "== building kcount${targets:+ (the tool only: no GPU here)} in $BUILD_DIR (installs missing Debian packages;" \
       "a first build takes several minutes; KCOUNT_NO_BUILD=1 reuses a build)" >&2
  start=$SECONDS
  # A progress line a minute from ninja's [done/total] counter; the full output only if the build fails.
  ( while sleep 60; do
      p=$(grep -o '^\[[0-9]*/[0-9]*\]' "$build_log" 2>/dev/null | tail -n 1)
      [[ -n $p ]] && echo "== building: step ${p//[\[\]]/} after $((SECONDS - start)) s" >&2
    done ) &
  progress=$!
  if ! KCOUNT_DEPS=${KCOUNT_DEPS:-build} KCOUNT_TARGETS=$targets bash "$root/scripts/build.sh" >"$build_log" 2>&1; then
    kill "$progress" 2>/dev/null || true
    cat "$build_log" >&2
    echo "== build failed (output above)" >&2
    rm -f "$build_log"
    exit 1
  fi
  kill "$progress" 2>/dev/null || true
  wait "$progress" 2>/dev/null || true
  rm -f "$build_log"
  echo "== built in $((SECONDS - start)) s" >&2
fi
if [[ $gpu == 1 ]]; then
  out=${KCOUNT_EXAMPLES_OUT:-$root/out}
  mkdir -p "$out"
  echo "== CUDA GPU found: profiling the examples (logs in $out)"
  for ex in "linear eager:examples/linear.py" "geglu eager:examples/geglu.py" "geglu compiled:examples/geglu.py --compile"; do
    name=${ex%%:*}
    log=$out/${name// /-}.kcount
    rm -f "$log"
    # shellcheck disable=SC2086
    "$kcount" run --output "$log" -- "$py" $root/${ex#*:}
    "$kcount" summary "$log"
  done
else
  echo "== no CUDA GPU here: summarizing the logs recorded on an NVIDIA H200 (examples/logs/)"
  for log in linear-eager geglu-eager geglu-compiled; do
    "$kcount" summary "$root/examples/logs/$log.kcount"
    echo
  done
  echo "== kernels of geglu eager and geglu compiled (kcount kernels): per kernel name, most GPU time first"
  "$kcount" kernels "$root/examples/logs/geglu-eager.kcount" "$root/examples/logs/geglu-compiled.kcount"
fi
