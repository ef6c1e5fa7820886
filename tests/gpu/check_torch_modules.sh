#!/usr/bin/env bash
# Per-module ranges for PyTorch (--torch-modules, --torch-ops, --torch-backward) on a CUDA GPU, with a
# small Llama-style model built from transformers' LlamaConfig (4 decoder layers, hidden 256, bf16,
# random weights, nothing downloaded; tests/gpu/cases/llama_modules.py):
#
#     bash tests/gpu/check_torch_modules.sh [BUILD_DIR]      (BUILD_DIR defaults to "build"; .carry on the GPU)
#
# Uses BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so and BUILD_DIR/share/kcount/python. Logs,
# summaries (JSON), diffs and each program's stdout/stderr go to ${OUT:-/tmp/kcount-torch-modules}.
# Prints a table last; exits 1 if a check failed.
#
# Rows:
#   m1 eager modules        every decoder layer has the same kernels per step, equal to torch.profiler's
#                           count for that module (m1p); self_attn, mlp, norms, q_proj, down_proj too
#   m2 modules off          without --torch-modules: no module range, same kernel total as m1
#   m3 compiled             torch.compile'd model under --torch-modules: the range around the compiled
#                           call; Dynamo's counters (graph breaks, graphs, frames) and the kernels per
#                           step equal those of the same compiled run without --torch-modules;
#                           kcount diff eager vs compiled
#   m4 ops                  --torch-ops: aten:: op ranges, one name per op, same kernel total as m1
#   m5 backward             --torch-backward with forward+backward: a backward range per decoder layer
#   m6 cost                 hooks' cost per module call: recording, and kcount paused (`kcount ctl stop`:
#                           no global hook may stay registered; the cost is reported)
#   m7 no kcount            KCOUNT_TORCH_MODULES=1 without kcount: program runs, no hook installed
set -u

BUILD_DIR=${1:-build}
OUTDIR=${OUT:-/tmp/kcount-torch-modules}
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd || echo "$BUILD_DIR")
KCOUNT=$BUILD_DIR/bin/kcount
HELPER=$BUILD_DIR/share/kcount/python
CHECK=("$PY" "$REPO/tests/gpu/check_torch_modules.py")
PROG=$REPO/tests/gpu/cases/llama_modules.py
STEPS=10
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
rm -f "$OUTDIR"/*.kcount
export TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

ROWS=()
FAILED=0
row() {  # name status detail
  ROWS+=("$(printf '%-22s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == PASS ]] || FAILED=1
  echo "==> $1: $2 $3"
}
run_cmd() {  # tag cmd...: run, capture stdout/stderr; shows the tail on failure
  local tag=$1; shift
  echo "+ $*"
  "$@" >"$OUTDIR/$tag.stdout.txt" 2>"$OUTDIR/$tag.stderr.txt"
  local rc=$?
  if [[ $rc -ne 0 ]]; then echo "!! exit status $rc"; tail -n 20 "$OUTDIR/$tag.stderr.txt"; fi
  return $rc
}
# krun TAG [kcount run options] -- PROGRAM ARGS: kcount run, log to TAG.kcount, summary to TAG.json
krun() {
  local tag=$1; shift
  local opts=()
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  run_cmd "$tag" "$KCOUNT" run "${opts[@]}" --output "$OUTDIR/$tag.kcount" -- "$PY" "$PROG" "$@" || return 1
  "$KCOUNT" summary --format json "$OUTDIR/$tag.kcount" >"$OUTDIR/$tag.json" 2>"$OUTDIR/$tag.summary.err" || return 1
}
check_row() {  # name check-args...
  local name=$1; shift
  local line
  line=$("${CHECK[@]}" "$@" 2>&1 | tail -n 1)
  row "$name" "${line%% *}" "${line#* }"
}

if [[ ! -x $KCOUNT || ! -f $HELPER/sitecustomize.py ]]; then
  echo "missing $KCOUNT or $HELPER/sitecustomize.py (build, or scripts/stage_gpu_build.sh for .carry)"; exit 1
fi
"$PY" -c 'import torch, transformers, sys; print("torch", torch.__version__, "transformers", transformers.__version__, "python", sys.version.split()[0])'

# m1: eager, --torch-modules; m1p: torch.profiler (no kcount) with the same module names
krun m1-eager --torch-modules -- --steps $STEPS || row "m1 eager modules" FAIL "run failed"
run_cmd m1p-profiler env KCOUNT_HELPER="$HELPER" "$PY" "$PROG" --steps $STEPS --torch-profiler "$OUTDIR/m1p-profiler.json" \
  || row "m1p torch.profiler" FAIL "run failed"
[[ -f $OUTDIR/m1-eager.json && -f $OUTDIR/m1p-profiler.json ]] && check_row "m1 eager modules" layers "$OUTDIR/m1-eager.json" "$OUTDIR/m1p-profiler.json"
"$KCOUNT" summary "$OUTDIR/m1-eager.kcount" --top 1 >"$OUTDIR/m1-eager.summary.txt" 2>&1

# m2: the same without --torch-modules
krun m2-off -- --steps $STEPS || row "m2 modules off" FAIL "run failed"
[[ -f $OUTDIR/m2-off.json && -f $OUTDIR/m1-eager.json ]] && check_row "m2 modules off" off "$OUTDIR/m2-off.json" "$OUTDIR/m1-eager.json"

# m3: compiled, --torch-modules; diff against eager
krun m3-compiled --torch-modules -- --steps $STEPS --compile --dynamo-json "$OUTDIR/m3-dynamo.json" \
  || row "m3 compiled" FAIL "run failed"
krun m3-compiled-off -- --steps $STEPS --compile --dynamo-json "$OUTDIR/m3-dynamo-off.json" \
  || row "m3 compiled" FAIL "run without --torch-modules failed"
if [[ -f $OUTDIR/m3-compiled.json && -f $OUTDIR/m3-compiled-off.json ]]; then
  # 55 kernels per step: the compiled Llama-style model of this script on PyTorch 2.11 (H200, H100).
  check_row "m3 compiled" compiled "$OUTDIR/m3-compiled.json" "$OUTDIR/m3-dynamo.json" \
    "$OUTDIR/m3-compiled-off.json" "$OUTDIR/m3-dynamo-off.json" --kernels-per-step "${COMPILED_KERNELS_PER_STEP:-55}"
  "$KCOUNT" summary "$OUTDIR/m3-compiled.kcount" --top 1 >"$OUTDIR/m3-compiled.summary.txt" 2>&1
  if "$KCOUNT" diff "$OUTDIR/m1-eager.kcount" "$OUTDIR/m3-compiled.kcount" >"$OUTDIR/m3-diff.txt" 2>&1; then
    row "m3 diff eager/compiled" PASS "$(sed -n '/^verdict for the whole run:/,$p' "$OUTDIR/m3-diff.txt" | grep -m1 -E '^  launches .* -> ' | sed 's/^ *//')"
  else
    row "m3 diff eager/compiled" FAIL "kcount diff failed: $(tail -n 1 "$OUTDIR/m3-diff.txt")"
  fi
fi

# m4: --torch-ops (with modules)
krun m4-ops --torch-modules --torch-ops -- --steps $STEPS || row "m4 ops" FAIL "run failed"
[[ -f $OUTDIR/m4-ops.json ]] && check_row "m4 ops" ops "$OUTDIR/m4-ops.json" "$OUTDIR/m1-eager.json"

# m5: --torch-backward, forward + backward
krun m5-backward --torch-backward -- --steps 3 --warmup 1 --train || row "m5 backward" FAIL "run failed"
[[ -f $OUTDIR/m5-backward.json ]] && check_row "m5 backward" backward "$OUTDIR/m5-backward.json"

# m6: cost per module call, in one process under kcount (hooks installed by the helper)
# (the cost figures go to m6-cost.json: krun writes the run's summary to m6-bench.json)
krun m6-bench --torch-modules -- --warmup 3 --bench "$OUTDIR/m6-cost.json" --kcount "$KCOUNT" || row "m6 cost" FAIL "run failed"
[[ -f $OUTDIR/m6-cost.json ]] && check_row "m6 cost" bench "$OUTDIR/m6-cost.json"

# m7: the switch without kcount: the program runs and no hook is registered
if run_cmd m7-nokcount env PYTHONPATH="$HELPER" KCOUNT_TORCH_MODULES=1 "$PY" -c \
    'import torch; import torch.nn.modules.module as m; print(len(m._global_forward_pre_hooks), len(m._global_forward_hooks))'; then
  got=$(tail -n 1 "$OUTDIR/m7-nokcount.stdout.txt")
  warn=$(grep -c "not injected" "$OUTDIR/m7-nokcount.stderr.txt")
  [[ $got == "0 0" && $warn == 1 ]] && row "m7 no kcount" PASS "no hook registered, one warning" \
    || row "m7 no kcount" FAIL "hooks '$got', warnings $warn"
else
  row "m7 no kcount" FAIL "program failed"
fi

echo
echo "---- kcount summary (eager, --torch-modules), first 30 rows: $OUTDIR/m1-eager.summary.txt"
head -n 32 "$OUTDIR/m1-eager.summary.txt" | cut -c1-160
echo "---- kcount diff eager compiled (verdicts): $OUTDIR/m3-diff.txt"
grep -A3 -E '^verdict' "$OUTDIR/m3-diff.txt" | head -n 24 | cut -c1-200
echo
echo "elapsed: ${SECONDS}s; outputs in $OUTDIR"
printf '%-22s %-5s %s\n' check status details
for r in "${ROWS[@]}"; do echo "$r"; done
exit $FAILED
