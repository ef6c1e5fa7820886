#!/usr/bin/env bash
# Size cap and rotation on a real GPU: tests/gpu/launches.cu (exact launch and kernel counts, CUPTI
# activity records arriving after their launches) recorded with KCOUNT_MAX_BYTES.
#
#     bash tests/gpu/check_rotation.sh BUILD_DIR        (BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so)
#
# Environment: CAP (default 16K), OUT (default /tmp/kcount-rotation), PYTHON (default python3), PROGRAM
# (default: launches.cu built with nvcc into OUT; e.g. build/bin/nvtx_ranges to try the script's
# mechanics without a GPU). A few seconds in all.
#
# Rows ("NAME  PASS|FAIL  details"), table last; exit 1 if any row failed:
#   t1 runs              the uncapped run, the run with room (KCOUNT_MAX_FILES=1000) and the run without
#                        (KCOUNT_MAX_FILES=3) exit 0; the capped runs leave more than one file, each <= CAP
#   t2 joined == one     `kcount summary` of all parts of the run with room, in reverse order: one log,
#                        complete, whose totals (launches, kernels, unmatched kernels, launches without
#                        kernel) and per-range instances/launches/kernels equal the uncapped run's exactly
#                        (kernels in part k+1 join their launches in part k)
#   t3 parts check       `kcount check`: any part alone PARTIAL (exit 1), all
#                        parts together OK (exit 0, the last part "the last (parts 0..K-1 given too)")
#   t4 drops counted     KCOUNT_MAX_FILES=3: the closing "log:" line counts the launches (memcpy/memset
#                        calls included), kernels and ranges in the three files; those plus its "not
#                        written" counts equal what the library took (the Stats record, `kcount check`);
#                        the warning names the third file, part 2, as the last one
set -u

BUILD_DIR=${1:?usage: check_rotation.sh BUILD_DIR}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
KCOUNT=$BUILD_DIR/bin/kcount
LIB=$BUILD_DIR/lib/libkcount.so
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CAP=${CAP:-16K}
OUTDIR=${OUT:-/tmp/kcount-rotation}
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
case $CAP in *K) CAP_BYTES=$(( ${CAP%K} * 1024 ));; *M) CAP_BYTES=$(( ${CAP%M} * 1048576 ));; *) CAP_BYTES=$CAP;; esac

NAMES=(); STATUS=(); DETAIL=(); FAILED=0
row() {
  NAMES+=("$1"); STATUS+=("$2"); DETAIL+=("$3")
  [[ $2 == PASS ]] || FAILED=1
  echo "==> $1: $2 $3"
}

if [[ -z ${PROGRAM:-} ]]; then
  PROGRAM=$OUTDIR/launches
  if ! nvcc -O2 -arch=sm_90 -I"$REPO" "$REPO/tests/gpu/launches.cu" -lcuda -o "$PROGRAM" >"$OUTDIR/nvcc.err" 2>&1; then
    row "t1 runs" FAIL "nvcc failed: $(head -c 300 "$OUTDIR/nvcc.err")"
    PROGRAM=
  fi
fi

record() {  # name max_files(0: no cap)
  local d=$OUTDIR/$1
  mkdir -p "$d"
  if [[ $2 == 0 ]]; then
    (cd "$d" && "$KCOUNT" run --output "$d/r.kcount" -- $PROGRAM >"$d/out" 2>"$d/err")
  else
    (cd "$d" && KCOUNT_MAX_BYTES=$CAP KCOUNT_MAX_FILES=$2 "$KCOUNT" run --output "$d/r.kcount" -- $PROGRAM >"$d/out" 2>"$d/err")
  fi
}

if [[ -n $PROGRAM ]]; then
  record plain 0; rc_plain=$?
  record room 1000; rc_room=$?
  record full 3; rc_full=$?
  n_room=$(ls "$OUTDIR/room" | grep -c 'kcount$')
  n_full=$(ls "$OUTDIR/full" | grep -c 'kcount$')
  big=$(find "$OUTDIR/room" "$OUTDIR/full" -name '*.kcount' -size +"${CAP_BYTES}"c | tr '\n' ' ')
  if [[ $rc_plain -eq 0 && $rc_room -eq 0 && $rc_full -eq 0 && $n_room -gt 1 && $n_full -eq 3 && -z $big ]]; then
    row "t1 runs" PASS "exit 0 x3; $n_room files with room, 3 without; every file <= $CAP_BYTES bytes"
  else
    row "t1 runs" FAIL "exit $rc_plain/$rc_room/$rc_full, files $n_room/$n_full, over the cap: '$big'"
  fi

  mapfile -t parts < <(cd "$OUTDIR/room" && ls r*.kcount | sort -t. -k2 -n -r)
  (cd "$OUTDIR/room" && "$KCOUNT" summary --format json "${parts[@]}") >"$OUTDIR/room.json" 2>"$OUTDIR/room.json.err"
  "$KCOUNT" summary --format json "$OUTDIR/plain/r.kcount" >"$OUTDIR/plain.json" 2>/dev/null
  cmp=$("$PY" - "$OUTDIR/plain.json" "$OUTDIR/room.json" <<'PYEOF'
import json, sys
a = json.load(open(sys.argv[1]))["logs"]
b = json.load(open(sys.argv[2]))["logs"]
if len(a) != 1 or len(b) != 1:
    print(f"FAIL logs: {len(a)} uncapped, {len(b)} joined"); sys.exit()
a, b = a[0], b[0]
bad = []
for k in ("launches", "kernels", "unmatched_kernels", "launches_without_kernel"):
    if a["totals"][k] != b["totals"][k]:
        bad.append(f"{k} {a['totals'][k]} vs {b['totals'][k]}")
def rows(l):
    return {r["path"]: (r["instances"], r["inclusive"]["launches"], r["inclusive"]["kernels"]) for r in l["ranges"]}
ra, rb = rows(a), rows(b)
for p in sorted(set(ra) | set(rb)):
    if ra.get(p) != rb.get(p):
        bad.append(f"{p}: {ra.get(p)} vs {rb.get(p)}")
if not b["complete"] or not b["intact"]:
    bad.append("joined log not complete/intact")
print(("FAIL " + "; ".join(bad[:6])) if bad else
      f"PASS {a['totals']['launches']} launches, {a['totals']['kernels']} kernels, {len(ra)} ranges equal")
PYEOF
)
  row "t2 joined == one" "${cmp%% *}" "${cmp#* } ($(echo "${parts[@]}" | wc -w) parts, given in reverse order)"

  # Part 0 alone lacks the part it continues in, a later part alone its earlier parts (PARTIAL, exit 1);
  # every part given together is the whole run (exit 0, no PARTIAL, the last part says so).
  bad_parts=""
  last_k=$(( ${#parts[@]} - 1 ))
  for p in "${parts[@]}"; do
    out=$("$KCOUNT" check "$OUTDIR/room/$p"); rc=$?
    if [[ $p == r.kcount ]]; then
      [[ $rc -eq 1 && $out == *"PARTIAL: rotated part 0, continued in part 1 (not given)"* ]] || bad_parts+="$p alone(exit $rc) "
    else
      [[ $rc -eq 1 && $out == *"PARTIAL: rotated part"* ]] || bad_parts+="$p alone(exit $rc) "
    fi
  done
  all=()
  for p in "${parts[@]}"; do all+=("$OUTDIR/room/$p"); done
  out=$("$KCOUNT" check "${all[@]}"); rc=$?
  [[ $rc -eq 0 && $out != *PARTIAL* && $out == *"OK: rotated part $last_k, the last (parts 0..$((last_k - 1)) given too)"* ]] ||
    bad_parts+="all parts(exit $rc) "
  if [[ -z $bad_parts ]]; then
    row "t3 parts check" PASS "part 0 alone PARTIAL; parts 1..$last_k alone PARTIAL (exit 1); all ${#parts[@]} together OK (exit 0)"
  else row "t3 parts check" FAIL "$bad_parts"; fi

  d=$OUTDIR/full
  sum=$("$PY" - "$KCOUNT" "$d" <<'PYEOF'
import re, subprocess, sys, os
kcount, d = sys.argv[1], sys.argv[2]
files = [os.path.join(d, f) for f in ("r.kcount", "r.1.kcount", "r.2.kcount")]
have = [0, 0, 0]
for f in files:
    out = subprocess.run([kcount, "check", f], capture_output=True, text=True).stdout
    # "N launches" are kernel launches; memcpy/memset calls, named apart when a file has any
    # ("N launches (+M memcpy/memset calls)"), are launch records too in the library's count.
    m = re.search(r"^records: .*, (\d+) launch(?:es)?(?: \(\+(\d+) memcpy/memset calls?\))?, (\d+) kernels?, (\d+) ranges?$",
                  out, re.M)
    if not m:
        print(f"FAIL no records line for {f}"); sys.exit()
    launches, mem_calls, kernels, ranges = m.groups()
    have = [h + x for h, x in zip(have, [int(launches) + int(mem_calls or 0), int(kernels), int(ranges)])]
err = open(os.path.join(d, "err")).read()
closing = re.search(r"log: .* \((\d+) launches(?: \(\+(\d+) memcpy/memset calls\))?, (\d+) kernels, (\d+) ranges", err)
cut = re.search(r"not written: (\d+) launches, (\d+) kernels, (\d+) ranges", err)
stats = re.search(r"^stats: (\d+) launch records .*?, (\d+) kernel records, (\d+) range records taken",
                  subprocess.run([kcount, "check", files[2]], capture_output=True, text=True).stdout, re.M)
if not closing or not stats:
    print("FAIL no closing log: line or no stats line in check of part 2"); sys.exit()
launches, mem_calls, kernels, ranges = closing.groups()
written_n = [int(launches) + int(mem_calls or 0), int(kernels), int(ranges)]
cut_n = [int(x) for x in cut.groups()] if cut else [0, 0, 0]
took_n = [int(x) for x in stats.groups()]
ok = written_n == have and all(h + c == t for h, c, t in zip(have, cut_n, took_n))
warned = (not cut) or ("r.2.kcount (part 2, its last: KCOUNT_MAX_FILES=3 allows parts 0..2)" in err)
print(("PASS " if ok and warned else "FAIL ") +
      f"in files {have} (closing line {written_n}) + not written {cut_n} vs taken {took_n} (launches, kernels, "
      f"ranges); warning names part 2: {warned}")
PYEOF
)
  row "t4 drops counted" "${sum%% *}" "${sum#* }"
fi

echo
for i in "${!NAMES[@]}"; do printf '%-20s %-5s %s\n' "${NAMES[$i]}" "${STATUS[$i]}" "${DETAIL[$i]}"; done
exit $FAILED
