#!/usr/bin/env bash
# KCOUNT_GPU_TIME=0 on a real GPU: kernels counted and named at their launch callbacks (no activity
# records) must match what trace mode's kernel activity records say, for every direct launch.
#
#     bash tests/gpu/check_gpu_time.sh BUILD_DIR      (BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so)
#
# Each program runs twice under `kcount run` (trace mode, then KCOUNT_GPU_TIME=0) and both logs are
# exported to SQLite (tests/gpu/compare_gpu_time.py compares them). Environment: OUT (default
# /tmp/kcount-gpu-time), PYTHON (default python3). About a minute on an H200.
#
# Rows ("NAME  PASS|FAIL  details"), table last; exit 1 if any row failed:
#   g1 C++ launch paths   tests/gpu/launches.cu (runtime <<<>>>, cuLaunchKernel, stream capture, graph
#                         replay, 4 threads, exit without sync): per (range, kernel name) the kernel count
#                         equals trace mode's, graph replays' kernels included (read from the graph exec);
#                         launches equal; exported GPU fields NULL, metadata gpu_time=off
#   g2 geglu eager        examples/geglu.py --steps 20: the same comparison (cuBLAS nvjet GEMMs, ATen kernels)
#   g3 geglu compiled     examples/geglu.py --compile --steps 20: the same (Triton kernels via cuLaunchKernel)
#   g4 summary mode       geglu eager with KCOUNT_MODE=summary KCOUNT_GPU_TIME=0: summary totals and per-range
#                         kernels equal g2's KCOUNT_GPU_TIME=0 trace log
#   g5 graph changed      tests/gpu/graph_update.cu: a graph's kernel node given another kernel, the exec
#                         updated from another graph, a node disabled: per range and name as trace mode's,
#                         and fixed counts (before 40, params 40, updated 40, disabled 30)
#   g6 graphs (k1)        tests/gpu/cases/graphs.py: the replays' 500 kernels in `rep`; g6c: with
#                         --graph-view capture, 502 in `cap` and 0 in `rep` in both logs
#   g7 graphs summary     graphs.py with KCOUNT_MODE=summary KCOUNT_GPU_TIME=0: equal to g6's off log
#   g8 reduce-overhead    examples/geglu.py --compile --compile-mode reduce-overhead (Inductor's CUDA graph
#                         trees): the g1 comparison
#
# GPU_TIME_OFF_ENV (e.g. "KCOUNT_LAUNCH_CALLBACKS=driver", check_launch_callbacks.sh): more environment for
# every KCOUNT_GPU_TIME=0 run (trace runs keep the defaults); OFF_META: metadata those logs must carry.
set -u

BUILD_DIR=${1:?usage: check_gpu_time.sh BUILD_DIR}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
KCOUNT=$BUILD_DIR/bin/kcount
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
read -r -a OFF_ENV <<<"${GPU_TIME_OFF_ENV:-}"
# GPU_TIME_ROWS: the rows to run ("g1 g3 g8"; g2 includes g4, g6 includes g6c and g7); default all.
want_row() { [[ -z ${GPU_TIME_ROWS:-} || " $GPU_TIME_ROWS " == *" $1 "* ]]; }
OUTDIR=${OUT:-/tmp/kcount-gpu-time}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

ROWS=()
FAILED=0
row() {  # name status detail
  ROWS+=("$(printf '%-20s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == PASS ]] || FAILED=1
  echo "==> $1: $2 $3"
}

# run_one TAG ENV... -- CMD...: one run under kcount run with the given environment; the log becomes
# $OUTDIR/TAG.kcount (exactly one log expected).
run_one() {
  local tag=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  rm -f "$OUTDIR/$tag".* "$OUTDIR/tmp-$tag-"*
  env "${envs[@]}" "$KCOUNT" run --output "$OUTDIR/tmp-$tag-%p.kcount" -- "$@" \
    >"$OUTDIR/$tag.stdout.txt" 2>"$OUTDIR/$tag.stderr.txt"
  local rc=$?
  local logs=("$OUTDIR/tmp-$tag-"*.kcount)
  if [[ $rc -ne 0 || ${#logs[@]} -ne 1 || ! -f ${logs[0]} ]]; then
    echo "   $tag: exit $rc, logs: ${logs[*]}"
    tail -n 20 "$OUTDIR/$tag.stderr.txt"
    return 1
  fi
  mv "${logs[0]}" "$OUTDIR/$tag.kcount"
}

# Kernels made innermost in each range by examples/geglu.py --steps 20 (eager: one GEMM in gate, up, down,
# GELU and mul in act; docs/attribution.md): both logs must give them, not only agree with each other.
GEGLU_EXPECT=(--expect step/gate=20 step/up=20 step/act=40 step/down=20)

# pair ROW TAG [--expect PATH=N ...] -- CMD...: trace run and KCOUNT_GPU_TIME=0 run of CMD, compared.
pair() {
  local name=$1 tag=$2
  shift 2
  local expect=()
  while [[ $# -gt 0 && $1 != -- ]]; do expect+=("$1"); shift; done
  shift
  if ! run_one "$tag-trace" KCOUNT_MODE=trace -- "$@"; then row "$name" FAIL "trace run failed"; return; fi
  if ! run_one "$tag-off" KCOUNT_MODE=trace KCOUNT_GPU_TIME=0 "${OFF_ENV[@]}" -- "$@"; then
    row "$name" FAIL "KCOUNT_GPU_TIME=0 run failed"
    return
  fi
  local detail
  detail=$("$PY" "$REPO/tests/gpu/compare_gpu_time.py" "$KCOUNT" "$OUTDIR/$tag-trace.kcount" "$OUTDIR/$tag-off.kcount" \
           "${expect[@]}" 2>"$OUTDIR/$tag-compare.stderr.txt")
  if [[ $? -eq 0 ]]; then row "$name" PASS "$detail"; else row "$name" FAIL "$detail $(tail -c 300 "$OUTDIR/$tag-compare.stderr.txt")"; fi
}

if want_row g1; then
  LAUNCHES_BIN=$OUTDIR/launches
  if nvcc -O2 -arch=sm_90 -I"$REPO" "$REPO/tests/gpu/launches.cu" -lcuda -o "$LAUNCHES_BIN" >"$OUTDIR/nvcc.txt" 2>&1; then
    pair "g1 C++ launch paths" launches -- "$LAUNCHES_BIN"
  else
    row "g1 C++ launch paths" FAIL "nvcc failed: $(tail -c 300 "$OUTDIR/nvcc.txt")"
  fi
fi
if want_row g2; then
  pair "g2 geglu eager" geglu "${GEGLU_EXPECT[@]}" -- "$PY" "$REPO/examples/geglu.py" --steps 20
fi
if want_row g3; then
  # torch.compile's first run in a fresh machine autotunes inside the warmup range (300 launches there against
  # 20 once the Inductor cache is warm): one run without kcount first, so that both runs compared find it warm.
  "$PY" "$REPO/examples/geglu.py" --compile --steps 2 >"$OUTDIR/geglu-compiled-cache.txt" 2>&1
  pair "g3 geglu compiled" geglu-compiled -- "$PY" "$REPO/examples/geglu.py" --compile --steps 20
fi

if want_row g2; then
  if run_one geglu-summary-off KCOUNT_MODE=summary KCOUNT_GPU_TIME=0 "${OFF_ENV[@]}" -- "$PY" "$REPO/examples/geglu.py" --steps 20 &&
     [[ -f $OUTDIR/geglu-off.kcount ]]; then
    detail=$("$PY" "$REPO/tests/gpu/compare_gpu_time.py" --summary "$KCOUNT" "$OUTDIR/geglu-off.kcount" \
             "$OUTDIR/geglu-summary-off.kcount" "${GEGLU_EXPECT[@]}" 2>"$OUTDIR/summary-compare.stderr.txt")
    if [[ $? -eq 0 ]]; then row "g4 summary mode" PASS "$detail"; else row "g4 summary mode" FAIL "$detail"; fi
  else
    row "g4 summary mode" FAIL "run failed or no g2 log"
  fi
fi

if want_row g5; then
  GU_BIN=$OUTDIR/graph_update
  if nvcc -O2 -arch=sm_90 -I"$REPO" "$REPO/tests/gpu/graph_update.cu" -o "$GU_BIN" >"$OUTDIR/nvcc-graph-update.txt" 2>&1; then
    pair "g5 graph changed" graph-update --expect capture=0 before=40 params=40 updated=40 disabled=30 -- "$GU_BIN"
  else
    row "g5 graph changed" FAIL "nvcc failed: $(tail -c 300 "$OUTDIR/nvcc-graph-update.txt")"
  fi
fi
if want_row g6; then
  pair "g6 graphs (k1)" graphs --expect rep=500 cap=2 -- "$PY" "$REPO/tests/gpu/cases/graphs.py"
  if [[ -f $OUTDIR/graphs-off.kcount && -f $OUTDIR/graphs-trace.kcount ]]; then
    details=()
    ok=1
    for tag in graphs-trace graphs-off; do
      "$KCOUNT" summary --format json --graph-view capture "$OUTDIR/$tag.kcount" >"$OUTDIR/$tag-capture.json"
      d=$("$PY" "$REPO/tests/gpu/check_summary.py" expect "$OUTDIR/$tag-capture.json" cap:exclusive.kernels=502 \
          rep:exclusive.kernels=0 rep:exclusive.launches=100 2>&1) || ok=0
      details+=("$tag: $(tail -n 1 <<<"$d")")
    done
    if [[ $ok -eq 1 ]]; then row "g6c capture view" PASS "${details[*]}"; else row "g6c capture view" FAIL "${details[*]}"; fi
    if run_one graphs-summary-off KCOUNT_MODE=summary KCOUNT_GPU_TIME=0 "${OFF_ENV[@]}" -- "$PY" "$REPO/tests/gpu/cases/graphs.py"; then
      detail=$("$PY" "$REPO/tests/gpu/compare_gpu_time.py" --summary "$KCOUNT" "$OUTDIR/graphs-off.kcount" \
               "$OUTDIR/graphs-summary-off.kcount" --expect rep=500 cap=2 2>"$OUTDIR/graphs-summary-compare.stderr.txt")
      if [[ $? -eq 0 ]]; then row "g7 graphs summary" PASS "$detail"; else row "g7 graphs summary" FAIL "$detail"; fi
    else
      row "g7 graphs summary" FAIL "run failed"
    fi
  fi
fi
if want_row g8; then
  "$PY" "$REPO/examples/geglu.py" --compile --compile-mode reduce-overhead --steps 2 >"$OUTDIR/geglu-ro-cache.txt" 2>&1
  pair "g8 reduce-overhead" geglu-ro -- "$PY" "$REPO/examples/geglu.py" --compile --compile-mode reduce-overhead --steps 20
fi

echo
echo "---- check_gpu_time.sh: table"
printf '%s\n' "${ROWS[@]}"
exit $FAILED
