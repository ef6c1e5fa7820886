#!/usr/bin/env bash
# CUDA graph kernels counted without kernel activity (KCOUNT_MODE=summary KCOUNT_GPU_TIME=0) against what
# torch.profiler reports for the same program, per range and kernel name (issue "always on with CUDA graphs").
#
#     bash tests/gpu/check_profiler_graphs.sh BUILD_DIR      (BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so)
#
# Each program runs twice: under torch.profiler without kcount (tests/gpu/torch_profiler_ranges.py record:
# NVTX ranges mirrored as record_functions, kernels credited through their launch call's correlation id),
# and under `kcount run` in count-only summary mode; torch_profiler_ranges.py compare checks every (range,
# kernel name) count. Environment: OUT (default /tmp/kcount-profiler-graphs), PYTHON (default python3).
#
# Rows ("NAME  PASS|FAIL  details"), table last; exit 1 if any row failed:
#   p1 graphs (k1)         tests/gpu/cases/graphs.py: every range (warm, cap, rep: the replays' 500 kernels)
#   p2 reduce-overhead     examples/geglu.py --compile --compile-mode reduce-overhead --steps 20: the measured
#                          `step` ranges (Inductor's CUDA graph trees replay a graph per step)
#   p3 graphs, driver ids  p1 with KCOUNT_LAUNCH_CALLBACKS=driver
set -u

BUILD_DIR=${1:?usage: check_profiler_graphs.sh BUILD_DIR}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
KCOUNT=$BUILD_DIR/bin/kcount
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-/tmp/kcount-profiler-graphs}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
TPR=$REPO/tests/gpu/torch_profiler_ranges.py

ROWS=()
FAILED=0
row() {  # name status detail
  ROWS+=("$(printf '%-22s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == PASS ]] || FAILED=1
  echo "==> $1: $2 $3"
}

# case ROW TAG ROOTS ENV... -- CMD...: torch.profiler run and count-only summary run of CMD, compared.
case_row() {
  local name=$1 tag=$2 roots=$3
  shift 3
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  if ! "$PY" "$TPR" record "$OUTDIR/$tag-profiler.json" -- "$@" >"$OUTDIR/$tag-profiler.txt" 2>&1; then
    row "$name" FAIL "torch.profiler run failed: $(tail -c 300 "$OUTDIR/$tag-profiler.txt")"
    return
  fi
  rm -f "$OUTDIR/tmp-$tag-"*
  env KCOUNT_MODE=summary KCOUNT_GPU_TIME=0 "${envs[@]}" "$KCOUNT" run --output "$OUTDIR/tmp-$tag-%p.kcount" -- "$PY" "$@" \
    >"$OUTDIR/$tag-kcount.txt" 2>&1
  local rc=$? logs=("$OUTDIR/tmp-$tag-"*.kcount)
  if [[ $rc -ne 0 || ${#logs[@]} -ne 1 || ! -f ${logs[0]} ]]; then
    row "$name" FAIL "kcount run: exit $rc, logs ${logs[*]}: $(tail -c 300 "$OUTDIR/$tag-kcount.txt")"
    return
  fi
  mv "${logs[0]}" "$OUTDIR/$tag.kcount"
  "$KCOUNT" summary --format json "$OUTDIR/$tag.kcount" >"$OUTDIR/$tag.json"
  local detail roots_arg=()
  [[ -n $roots ]] && roots_arg=(--roots "$roots")
  detail=$("$PY" "$TPR" compare "$OUTDIR/$tag-profiler.json" "$OUTDIR/$tag.json" "${roots_arg[@]}" \
           2>"$OUTDIR/$tag-compare.txt")
  if [[ $? -eq 0 ]]; then row "$name" PASS "$detail"; else row "$name" FAIL "$detail"; fi
}

case_row "p1 graphs (k1)" graphs "" -- "$REPO/tests/gpu/cases/graphs.py"
# A warm Inductor cache for both runs (the first compile in a fresh machine autotunes).
"$PY" "$REPO/examples/geglu.py" --compile --compile-mode reduce-overhead --steps 2 >"$OUTDIR/geglu-ro-cache.txt" 2>&1
case_row "p2 reduce-overhead" geglu-ro step -- \
  "$REPO/examples/geglu.py" --compile --compile-mode reduce-overhead --steps 20
case_row "p3 graphs, driver ids" graphs-driver "" KCOUNT_LAUNCH_CALLBACKS=driver -- "$REPO/tests/gpu/cases/graphs.py"

echo
echo "---- check_profiler_graphs.sh: table"
printf '%s\n' "${ROWS[@]}"
exit $FAILED
