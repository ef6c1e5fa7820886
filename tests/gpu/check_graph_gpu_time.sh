#!/usr/bin/env bash
# KCOUNT_GPU_TIME=graphs on a real GPU: counts as exact as KCOUNT_GPU_TIME=0, plus one GPU span per graph
# launch (CUPTI GRAPH_TRACE), credited to the range around the launch.
#
#     bash tests/gpu/check_graph_gpu_time.sh BUILD_DIR
#
# 1. tests/gpu/check_gpu_time.sh with KCOUNT_GPU_TIME=graphs in each count-only run (rows g1 g5 g6 g8 by
#    default, GPU_TIME_ROWS to choose): per (range, kernel name) kernels and per range launches equal trace
#    mode's; g7: summary mode equal to the trace log.
# 2. tests/gpu/check_graph_spans.py on each pair of logs: every graph launch has exactly one span, spans per
#    range = graph launches (graphs.py: 100 in `rep`), each span's mean within 0.9x-10x of trace mode's kernel
#    GPU time per graph launch.
# 3. graphs.py's summary-mode log: `rep` has 100 graph spans in `kcount summary --format json`.
# Environment as check_gpu_time.sh (OUT default /tmp/kcount-graph-gpu-time). Table last; exit 1 on a FAIL.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD_DIR=$(cd "${1:?usage: check_graph_gpu_time.sh BUILD_DIR}" && pwd)
KCOUNT=$BUILD_DIR/bin/kcount
PY=${PYTHON:-python3}
export OUT=${OUT:-/tmp/kcount-graph-gpu-time}
mkdir -p "$OUT"
export GPU_TIME_ROWS=${GPU_TIME_ROWS:-g1 g5 g6 g8}
GPU_TIME_OFF_ENV="KCOUNT_GPU_TIME=graphs" OFF_GPU_TIME=graphs bash "$HERE/check_gpu_time.sh" "$BUILD_DIR" | tee "$OUT/counts.txt"
FAILED=${PIPESTATUS[0]}
ROWS=()
row() {
  ROWS+=("$(printf '%-20s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == PASS ]] || FAILED=1
}
for pair in "launches:" "graph-update:" "graphs:--expect rep=100" "geglu-ro:"; do
  tag=${pair%%:*}
  read -r -a expect <<<"${pair#*:}"
  [[ -f $OUT/$tag-off.kcount && -f $OUT/$tag-trace.kcount ]] || continue
  if detail=$("$PY" "$HERE/check_graph_spans.py" "$KCOUNT" "$OUT/$tag-trace.kcount" "$OUT/$tag-off.kcount" "${expect[@]}" \
              2>"$OUT/$tag-spans.stderr.txt"); then
    row "spans $tag" PASS "$detail"
  else
    row "spans $tag" FAIL "$detail $(tail -c 400 "$OUT/$tag-spans.stderr.txt")"
  fi
done
if [[ -f $OUT/graphs-summary-off.kcount ]]; then
  "$KCOUNT" summary --format json "$OUT/graphs-summary-off.kcount" >"$OUT/graphs-summary-off.json"
  if detail=$("$PY" "$HERE/check_summary.py" expect "$OUT/graphs-summary-off.json" rep:exclusive.graph_gpu_launches=100 \
              rep:exclusive.graph_launches=100 2>&1); then
    row "spans summary" PASS "$(tail -n 1 <<<"$detail")"
  else
    row "spans summary" FAIL "$(tail -n 3 <<<"$detail")"
  fi
fi
echo
echo "---- check_graph_gpu_time.sh: table"
grep -E '^(g[0-9]|---)' "$OUT/counts.txt" | grep -v '^----' || true
printf '%s\n' "${ROWS[@]}"
exit $FAILED
