#!/usr/bin/env bash
# Summary mode on a real GPU (issue "Summary mode (always on)"): the GeGLU example for a long run in trace
# mode and in summary mode (KCOUNT_MODE=summary, KCOUNT_INTERVAL=1s), at two step counts.
#
#     bash tests/gpu/check_summary_mode.sh BUILD_DIR        (BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so)
#
# Environment: STEPS_SHORT (default 2000), STEPS_LONG (default 10000), SIZE_BOUND bytes (default 262144),
# OUT (default /tmp/kcount-summary-mode), PYTHON (default python3), PROGRAM (the command run with the
# step count appended; default "$PYTHON examples/geglu.py --steps", e.g. build/bin/nvtx_ranges to try the
# script's mechanics without a GPU). About 1.5 ms of GPU work per step on
# an H200: about two minutes in all.
#
# Rows ("NAME  PASS|FAIL  details"), table last; exit 1 if any row failed:
#   s1 runs               the four runs exit 0 and each leaves one log; summary logs say mode=summary
#   s2 totals N           for N = both step counts: totals (launches, kernels, unmatched kernels, launches
#                         without kernel, memory operations) of the summary log equal the trace log's exactly
#   s3 ranges N           per range path: instances, launches, kernels (innermost and inclusive), and per
#                         kernel name the count, equal trace mode's exactly
#   s4 size bound         both summary logs under SIZE_BOUND bytes (a bound that does not depend on the
#                         steps), and bytes per snapshot of the long run within 10% + 1 KiB of the short run's
#   s5 final snapshot     the summary logs' last snapshot is final (flags) with nothing in flight
#   s6 series             kcount summary --series --format json: per-interval launches of "step" add up to
#                         the total, and at least 5 intervals have step launches (KCOUNT_INTERVAL=1s)
#   s7 export refused     kcount export of a summary log exits 2 and says it is a summary-mode log
#   s8 launch timing      KCOUNT_LAUNCH_TIMING=16 (one launch call in 16 timed) at the short step count:
#                         totals and ranges equal trace mode's exactly, the log says launch_timing_sample 16,
#                         and the estimated launch CPU of "step" (inclusive) is within 0.5x..2x of the
#                         unsampled summary run's
#   s9 fixed counts N     for N = both step counts, in the trace and the summary log: the counts GeGLU eager
#                         must give whatever the run (step: N instances, 5N launches and kernels; gate, up,
#                         down: N kernels each; act: 2N), so both modes cannot agree on a wrong number.
#                         EXPECT_PER_STEP overrides ("path=kernels ..."; empty: row skipped, e.g. for PROGRAM)
set -u

BUILD_DIR=${1:?usage: check_summary_mode.sh BUILD_DIR}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
KCOUNT=$BUILD_DIR/bin/kcount
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-/tmp/kcount-summary-mode}
STEPS_SHORT=${STEPS_SHORT:-2000}
STEPS_LONG=${STEPS_LONG:-10000}
SIZE_BOUND=${SIZE_BOUND:-262144}
read -r -a PROGRAM_CMD <<<"${PROGRAM:-$PY $REPO/examples/geglu.py --steps}"
# Kernels per step of examples/geglu.py (eager, bf16, on an H100 or H200): docs/attribution.md, README.
default_expect="step=5 step/gate=1 step/up=1 step/act=2 step/down=1"
[[ -n ${PROGRAM:-} ]] && default_expect=""
EXPECT_PER_STEP=${EXPECT_PER_STEP-$default_expect}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

ROWS=()
FAILED=0
row() {  # name status detail
  ROWS+=("$(printf '%-22s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == PASS ]] || FAILED=1
  echo "==> $1: $2 $3"
}

# run_mode TAG MODE STEPS: one run under kcount run; the log becomes $OUTDIR/TAG.kcount.
run_mode() {
  local tag=$1 mode=$2 steps=$3
  rm -f "$OUTDIR/$tag".* "$OUTDIR/tmp-$tag-"*
  local t0=$SECONDS
  # KCOUNT_INTERVAL only in summary mode: trace mode warns that it does not read it.
  local interval=()
  [[ $mode == summary ]] && interval=(KCOUNT_INTERVAL=1s)
  env KCOUNT_MODE="$mode" "${interval[@]}" "$KCOUNT" run --output "$OUTDIR/tmp-$tag-%p.kcount" -- \
    "${PROGRAM_CMD[@]}" "$steps" >"$OUTDIR/$tag.stdout.txt" 2>"$OUTDIR/$tag.stderr.txt"
  local rc=$?
  local logs=("$OUTDIR/tmp-$tag-"*.kcount)
  echo "   $tag: exit $rc, $((SECONDS - t0)) s, logs: ${logs[*]}"
  if [[ $rc -ne 0 || ${#logs[@]} -ne 1 || ! -f ${logs[0]} ]]; then
    tail -n 20 "$OUTDIR/$tag.stderr.txt"
    return 1
  fi
  mv "${logs[0]}" "$OUTDIR/$tag.kcount"
  "$KCOUNT" summary --format json "$OUTDIR/$tag.kcount" >"$OUTDIR/$tag.json" 2>>"$OUTDIR/$tag.stderr.txt"
}

run_errs=""
for n in "$STEPS_SHORT" "$STEPS_LONG"; do
  for mode in trace summary; do
    run_mode "$mode-$n" "$mode" "$n" || run_errs+=" $mode-$n"
  done
done
sampled_ok=1
KCOUNT_LAUNCH_TIMING=16 run_mode "sampled-$STEPS_SHORT" summary "$STEPS_SHORT" || sampled_ok=0
if [[ -z $run_errs ]]; then
  modes=$("$PY" -c 'import json,sys; print(" ".join(json.load(open(f))["logs"][0].get("mode","?") for f in sys.argv[1:]))' \
    "$OUTDIR/trace-$STEPS_SHORT.json" "$OUTDIR/summary-$STEPS_SHORT.json" "$OUTDIR/trace-$STEPS_LONG.json" "$OUTDIR/summary-$STEPS_LONG.json")
  if [[ $modes == "trace summary trace summary" ]]; then row "s1 runs" PASS "4 runs, one log each; modes: $modes"
  else row "s1 runs" FAIL "modes: $modes"; fi
else
  row "s1 runs" FAIL "failed:$run_errs (see $OUTDIR/*.stderr.txt)"
fi

# compare TRACE_JSON SUMMARY_JSON: prints "totals OK|DIFF ..." and "ranges OK|DIFF ..." lines.
compare() {
  "$PY" - "$1" "$2" <<'EOF'
import json, sys
a = json.load(open(sys.argv[1]))["logs"][0]
b = json.load(open(sys.argv[2]))["logs"][0]
keys = ["launches", "kernels", "unmatched_kernels", "launches_without_kernel", "captured_launches", "mem_ops",
        "unmatched_mem_ops", "graph_launches"]
diff = [f"{k}: trace {a['totals'].get(k)} summary {b['totals'].get(k)}" for k in keys
        if a["totals"].get(k) != b["totals"].get(k)]
t = a["totals"]
print(("totals OK " if not diff else "totals DIFF ") +
      (f"launches={t['launches']} kernels={t['kernels']} unmatched={t['unmatched_kernels']} "
       f"without_kernel={t['launches_without_kernel']}" if not diff else "; ".join(diff)))
def ranges(log):
    out = {}
    for r in log["ranges"]:
        out[r["path"]] = {
            "instances": r["instances"],
            "launches": (r["exclusive"]["launches"], r["inclusive"]["launches"]),
            "kernels": (r["exclusive"]["kernels"], r["inclusive"]["kernels"]),
            "names": sorted((k["name"], k["count"]) for k in r["kernels"]),
        }
    return out
ra, rb = ranges(a), ranges(b)
diff = []
for p in sorted(set(ra) | set(rb)):
    if ra.get(p) != rb.get(p):
        diff.append(f"{p}: trace {ra.get(p)} summary {rb.get(p)}")
step = ra.get("step", {})
names = len({n for r in ra.values() for n, _ in r["names"]})
print(("ranges OK " if not diff else "ranges DIFF ") +
      (f"{len(ra)} ranges, {names} kernel names; step: {step.get('instances')} instances, "
       f"{step.get('kernels', (0, 0))[1]} kernels" if not diff else " | ".join(diff)[:600]))
EOF
}

for n in "$STEPS_SHORT" "$STEPS_LONG"; do
  if [[ -f $OUTDIR/trace-$n.json && -f $OUTDIR/summary-$n.json ]]; then
    out=$(compare "$OUTDIR/trace-$n.json" "$OUTDIR/summary-$n.json" 2>&1)
    tl=$(grep '^totals' <<<"$out"); rl=$(grep '^ranges' <<<"$out")
    [[ $tl == "totals OK"* ]] && row "s2 totals $n" PASS "${tl#totals OK }" || row "s2 totals $n" FAIL "${tl:-$out}"
    [[ $rl == "ranges OK"* ]] && row "s3 ranges $n" PASS "${rl#ranges OK }" || row "s3 ranges $n" FAIL "${rl:-$out}"
  else
    row "s2 totals $n" FAIL "missing summaries"
    row "s3 ranges $n" FAIL "missing summaries"
  fi
done

# fixed_counts JSON N: every "path=k" of EXPECT_PER_STEP holds (inclusive kernels k*N; step: N instances, 5N
# launches); prints "OK ..." or the differences.
fixed_counts() {
  "$PY" - "$1" "$2" "$EXPECT_PER_STEP" <<'EOF'
import json, sys
log = json.load(open(sys.argv[1]))["logs"][0]
n = int(sys.argv[2])
ranges = {r["path"]: r for r in log["ranges"]}
bad = []
for item in sys.argv[3].split():
    path, per = item.split("=")
    r = ranges.get(path)
    got = r["inclusive"]["kernels"] if r else None
    if got != int(per) * n:
        bad.append(f"{path}: {got} kernels, want {int(per) * n}")
step = ranges.get("step")
if step is None or step["instances"] != n or step["inclusive"]["launches"] != 5 * n:
    bad.append(f"step: {step and step['instances']} instances, {step and step['inclusive']['launches']} launches, "
               f"want {n}, {5 * n}")
print("OK " + sys.argv[3].replace(" ", ", ") + f" per step x {n}" if not bad else "; ".join(bad))
EOF
}

if [[ -n $EXPECT_PER_STEP ]]; then
  for n in "$STEPS_SHORT" "$STEPS_LONG"; do
    msgs=""
    for mode in trace summary; do
      if [[ -f $OUTDIR/$mode-$n.json ]]; then
        got=$(fixed_counts "$OUTDIR/$mode-$n.json" "$n" 2>&1)
        [[ $got == OK* ]] || msgs+="$mode: $got "
      else
        msgs+="$mode: no summary "
      fi
    done
    if [[ -z $msgs ]]; then row "s9 fixed counts $n" PASS "trace and summary: $EXPECT_PER_STEP per step"
    else row "s9 fixed counts $n" FAIL "$msgs"; fi
  done
fi

# Size: bound, and bytes per snapshot.
size_line=$("$PY" - "$OUTDIR" "$STEPS_SHORT" "$STEPS_LONG" "$SIZE_BOUND" <<'EOF' 2>&1
import json, os, sys
d, s1, s2, bound = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def info(mode, n):
    p = f"{d}/{mode}-{n}.kcount"
    j = json.load(open(f"{d}/{mode}-{n}.json"))["logs"][0]
    return os.path.getsize(p), j.get("snapshots", 0), j
z1, n1, _ = info("summary", s1)
z2, n2, _ = info("summary", s2)
t1, _, _ = info("trace", s1)
t2, _, _ = info("trace", s2)
per1, per2 = z1 / max(n1, 1), z2 / max(n2, 1)
ok = z1 <= bound and z2 <= bound and per2 <= per1 * 1.1 + 1024 and n1 > 0 and n2 > 0
print(("PASS " if ok else "FAIL ") +
      f"summary {z1} B ({n1} snapshots, {per1:.0f} B each) at {s1} steps, {z2} B ({n2} snapshots, {per2:.0f} B each) "
      f"at {s2} steps; bound {bound} B; trace logs {t1} B and {t2} B")
EOF
)
row "s4 size bound" "${size_line%% *}" "${size_line#* }"

fin_line=$("$PY" - "$OUTDIR/summary-$STEPS_SHORT.json" "$OUTDIR/summary-$STEPS_LONG.json" <<'EOF' 2>&1
import json, sys
bad, desc = [], []
for f in sys.argv[1:]:
    s = json.load(open(f))["logs"][0].get("snapshot") or {}
    desc.append(f"seq {s.get('sequence')} final={s.get('final')} inflight={s.get('inflight_launches')} "
                f"dropped={s.get('dropped_tallies')} evicted={s.get('evicted_launches')}")
    if not (s.get("final") and s.get("inflight_launches") == 0 and s.get("waiting_activity") == 0
            and s.get("dropped_tallies") == 0 and s.get("evicted_launches") == 0):
        bad.append(f)
print(("PASS " if not bad else "FAIL ") + "; ".join(desc))
EOF
)
row "s5 final snapshot" "${fin_line%% *}" "${fin_line#* }"

series_line=$("$KCOUNT" summary --series --format json "$OUTDIR/summary-$STEPS_LONG.kcount" 2>&1 | "$PY" -c '
import json, sys
total = json.load(open(sys.argv[1]))["logs"][0]
want = next((r["inclusive"]["launches"] for r in total["ranges"] if r["path"] == "step"), None)
s = json.load(sys.stdin)["logs"][0]
per = [sum(r["launches"] for r in iv["ranges"] if r["path"] == "step") for iv in s["intervals"]]
busy = sum(1 for p in per if p > 0)
ok = want is not None and sum(per) == want and busy >= 5
more = " ..." if len(per) > 8 else ""
print(("PASS " if ok else "FAIL ") + f"{len(per)} intervals, {busy} with step launches, sum {sum(per)} = total {want}; "
      f"per interval: {per[:8]}{more}")
' "$OUTDIR/summary-$STEPS_LONG.json" 2>&1)
row "s6 series" "${series_line%% *}" "${series_line#* }"

"$KCOUNT" export --format json -o "$OUTDIR/export.json" "$OUTDIR/summary-$STEPS_SHORT.kcount" >/dev/null 2>"$OUTDIR/export.stderr.txt"
rc=$?
if [[ $rc -eq 2 ]] && grep -q "summary-mode log" "$OUTDIR/export.stderr.txt"; then
  row "s7 export refused" PASS "exit 2: $(head -c 120 "$OUTDIR/export.stderr.txt")"
else
  row "s7 export refused" FAIL "exit $rc: $(head -c 200 "$OUTDIR/export.stderr.txt")"
fi

if [[ $sampled_ok -eq 1 && -f $OUTDIR/trace-$STEPS_SHORT.json && -f $OUTDIR/summary-$STEPS_SHORT.json ]]; then
  out=$(compare "$OUTDIR/trace-$STEPS_SHORT.json" "$OUTDIR/sampled-$STEPS_SHORT.json" 2>&1)
  est=$("$PY" - "$OUTDIR/summary-$STEPS_SHORT.json" "$OUTDIR/sampled-$STEPS_SHORT.json" <<'EOF' 2>&1
import json, sys
full = json.load(open(sys.argv[1]))["logs"][0]
samp = json.load(open(sys.argv[2]))["logs"][0]
def step_api(log):
    return next((r["inclusive"]["launch_api_ns"] for r in log["ranges"] if r["path"] == "step"), None)
a, b = step_api(full), step_api(samp)
ratio = b / a if a and b is not None else float("nan")
ok = samp.get("launch_timing_sample") == 16 and full.get("launch_timing_sample") == 1 and 0.5 <= ratio <= 2.0
print(("OK " if ok else "BAD ") + f"launch_timing_sample {samp.get('launch_timing_sample')}; step launch CPU "
      f"{b} ns estimated vs {a} ns timed in full (x{ratio:.3f})")
EOF
)
  if [[ $out == *"totals OK"*"ranges OK"* && $est == OK* ]]; then
    row "s8 launch timing" PASS "counts equal trace's; ${est#OK }"
  else
    row "s8 launch timing" FAIL "$(tr '\n' ' ' <<<"$out") ${est}"
  fi
else
  row "s8 launch timing" FAIL "the KCOUNT_LAUNCH_TIMING=16 run failed (see $OUTDIR/sampled-$STEPS_SHORT.stderr.txt)"
fi

echo
echo "kcount summary mode checks ($OUTDIR)"
printf '%-22s %-5s %s\n' CHECK RESULT DETAILS
printf '%s\n' "${ROWS[@]}"
if [[ $FAILED -ne 0 ]]; then
  echo "RESULT: FAIL"
  exit 1
fi
echo "RESULT: PASS"
