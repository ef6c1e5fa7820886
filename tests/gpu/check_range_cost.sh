#!/usr/bin/env bash
# kcount's own cost per range (format 1.4, RangeCallbacks records) on a real GPU, with exact expected
# numbers: tests/gpu/cases/range_cost.py runs 20 steps, each `step` holding `add` (10 PyTorch kernel
# launches, runtime API) and `mul` (5). A runtime launch is 4 callbacks with both launch domains (runtime
# and driver enter and exit), 2 with KCOUNT_LAUNCH_CALLBACKS=driver; a range's callbacks are those strictly
# between its push and pop on its thread, its children's push and pop included. So per run:
#   add self 200 x C, mul self 100 x C, step self 80 (the children's 2 x 2 x 20 pushes and pops),
#   step inclusive 80 + 300 x C; timed <= callbacks in each; with C = 4 (all) or 2 (driver).
#
#     bash tests/gpu/check_range_cost.sh BUILD_DIR     (BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so)
#
# Environment: OUT (default /tmp/kcount-range-cost), PYTHON (default python3). About 30 s.
# Rows r1..r4: trace and summary mode, each with both launch domains and with driver callbacks only.
set -u
BUILD_DIR=$(cd "${1:?usage: check_range_cost.sh BUILD_DIR}" && pwd)
KCOUNT=$BUILD_DIR/bin/kcount
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-/tmp/kcount-range-cost}
mkdir -p "$OUTDIR"
FAILED=0
one() {  # row mode callbacks C
  local row=$1 mode=$2 cb=$3 c=$4 dir=$OUTDIR/$1
  rm -rf "$dir" && mkdir -p "$dir"
  KCOUNT_MODE=$mode KCOUNT_LAUNCH_CALLBACKS=$cb KCOUNT_OUTPUT=$dir/ \
    "$KCOUNT" run -- "$PY" "$REPO/tests/gpu/cases/range_cost.py" >"$dir/run.txt" 2>&1
  local log
  log=$(ls "$dir"/*.kcount 2>/dev/null | head -1)
  if [[ -z $log ]]; then
    printf '%-14s FAIL  no log (%s)\n' "$row $mode/$cb" "$(tail -1 "$dir/run.txt")"
    FAILED=1
    return
  fi
  "$KCOUNT" summary --format json "$log" >"$dir/summary.json"
  if ! "$PY" - "$dir/summary.json" "$c" "$row $mode/$cb" <<'PYEOF'; then FAILED=1; fi
import json, sys
j = json.load(open(sys.argv[1]))["logs"][0]
c, name = int(sys.argv[2]), sys.argv[3]
rows = {r["path"]: r for r in (j.get("kcount_cost") or {}).get("by_range", [])}
want = {"step/add": (200 * c, 200 * c), "step/mul": (100 * c, 100 * c), "step": (80, 80 + 300 * c)}
got = {p: (rows[p]["self_callbacks"], rows[p]["callbacks"]) if p in rows else None for p in want}
bad = [p for p in want if got[p] != want[p]]
bad += [p for p, r in rows.items() if r["timed"] > r["callbacks"] or r["self_timed"] > r["self_callbacks"]]
ok = not bad
print(f"{name:<14} {'PASS' if ok else 'FAIL'}  self/inclusive callbacks {got} (want {want}); "
      f"timed {[rows[p]['self_timed'] for p in want if p in rows]}")
sys.exit(0 if ok else 1)
PYEOF
}
one r1 trace all 4
one r2 trace driver 2
one r3 summary all 4
one r4 summary driver 2
exit $FAILED
