#!/usr/bin/env bash
# Records the sweep of examples/sweep.py on a GPU: one kcount run per mode, then checks the logs.
#
#   bash examples/run_sweep.sh OUTDIR [BUILD_DIR]      (BUILD_DIR: folder with bin/kcount and lib/libkcount.so;
#                                                      default build)
#
# Writes OUTDIR/sweep-eager.kcount and OUTDIR/sweep-compiled.kcount (copy them to examples/logs/, then
# regenerate docs/case-study.md: see scripts/case_study.py), OUTDIR/sweep-*.out (the sweep's stdout and
# stderr), and prints one row per check: "NAME  PASS|FAIL  details" (exit status, log intact and complete,
# 0 unmatched kernels, 0 dropped records, every configuration recorded, every kernel name decoded).
# Environment: SWEEP_EAGER_MAX_SECONDS (default 120) and SWEEP_COMPILED_MAX_SECONDS (default 160) bound
# each run: configurations not started by then are skipped and listed (and the "configurations" check
# fails).
set -u
out=${1:?usage: run_sweep.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kcount=$(cd "$build" && pwd)/bin/kcount
py=${PYTHON:-python3}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
for mode in eager compiled; do
  extra=(--max-seconds "${SWEEP_EAGER_MAX_SECONDS:-120}")
  [[ $mode == compiled ]] && extra=(--max-seconds "${SWEEP_COMPILED_MAX_SECONDS:-160}")
  log="$out/sweep-$mode.kcount"
  rm -f "$log"
  start=$(date +%s)
  "$kcount" run --output "$log" -- "$py" "$root/examples/sweep.py" --mode "$mode" "${extra[@]}" \
    >"$out/sweep-$mode.out" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  if [[ $rc -eq 0 && -f $log ]]; then
    echo "sweep $mode  PASS  exit 0 in ${secs} s, $(stat -c %s "$log") bytes: $(grep '^sweep: done' "$out/sweep-$mode.out")"
  else
    echo "sweep $mode  FAIL  exit $rc in ${secs} s; failed configurations and last lines of $out/sweep-$mode.out:"
    grep '^failed: ' "$out/sweep-$mode.out"
    tail -n 15 "$out/sweep-$mode.out"
    fail=1
    [[ -f $log ]] || continue
  fi
  "$kcount" check "$log" >"$out/sweep-$mode.check" 2>&1
  rc=$?
  if [[ $rc -eq 0 ]]; then echo "kcount check $mode  PASS  OK"; else
    echo "kcount check $mode  FAIL  exit $rc: $(tail -n 1 "$out/sweep-$mode.check")"; fail=1; fi
  "$kcount" summary --format json "$log" >"$work/summary.json" 2>>"$out/sweep-$mode.check"
  "$kcount" kernels --format json "$log" >"$work/kernels.json" 2>>"$out/sweep-$mode.check"
  "$py" - "$work/summary.json" "$root/examples" "$mode" "$work/kernels.json" <<'EOF' || fail=1
import json, subprocess, sys
path, examples, mode, kernels_path = sys.argv[1:5]
sys.path.insert(0, examples)
from sweep import configurations
log = json.load(open(path))["logs"][0]
t = log["totals"]
ok = True
def row(name, good, details):
    global ok
    ok = ok and good
    print(f"{name} {mode}  {'PASS' if good else 'FAIL'}  {details}")
row("unmatched kernels", t["unmatched_kernels"] == 0, f"{t['unmatched_kernels']} unmatched of {t['kernels']} kernels")
dropped = {k: t[k] for k in ("dropped_host_records", "dropped_activity_records", "activity_buffers_refused",
                             "late_activity_records")}
row("dropped records", not any(dropped.values()), json.dumps(dropped))
paths = {r["path"] for r in log["ranges"]}
want = [name for name, _ in configurations(mode, "all")]
missing = [n for n in want if f"{n}/step" not in paths]
row("configurations", not missing, f"{len(want) - len(missing)} of {len(want)} recorded"
    + (f"; missing: {missing[:5]}{' ...' if len(missing) > 5 else ''}" if missing else ""))
kernels = json.load(open(kernels_path))["kernels"]
unknown = sorted(k["short"] for k in kernels if not k["decoded"]["grammar"])
row("kernel names decoded", not unknown, f"{len(kernels) - len(unknown)} of {len(kernels)} distinct names matched a "
    f"grammar" + (f"; not decoded: {unknown}" if unknown else ""))
sys.exit(0 if ok else 1)
EOF
done
exit $fail
