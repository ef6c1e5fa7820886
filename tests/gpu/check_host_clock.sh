#!/usr/bin/env bash
# Launch and range timestamps taken from the TSC (collector/clock.h) on a real GPU: the same program
# under the default host clock and under KCOUNT_HOST_CLOCK=monotonic (clock_gettime on the hot path)
# must give the same exact counts, and the converted CPU times must sit on CUPTI's GPU time axis (the
# library hands CUPTI CLOCK_MONOTONIC through its timestamp callback): no kernel starts before the call
# that launched it entered.
#
#     bash tests/gpu/check_host_clock.sh BUILD_DIR     (BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so)
#
# Environment: OUT (default /tmp/kcount-host-clock), PYTHON (default python3). About 20 s on an H200.
# Rows ("NAME  PASS|FAIL  details"), table last; exit 1 if any row failed:
#   c1 default clock    tests/gpu/launches.cu (runtime <<<>>>, cuLaunchKernel, graph replay, 4 threads, exit
#                       without sync): launches 9660, kernels 10055; metadata host_clock names the source
#                       (tsc where the machine's clocksource is tsc); every kernel starts at or after its
#                       launch's enter time (1 µs slack), every launch exit >= enter
#   c2 monotonic        the same with KCOUNT_HOST_CLOCK=monotonic: same counts, host_clock CLOCK_MONOTONIC
#   c3 same timing      median launch-call duration and median launch-exit-to-kernel-start of c1 and c2
#                       reported side by side (informative: different processes)
set -u

BUILD_DIR=${1:?usage: check_host_clock.sh BUILD_DIR}
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
KCOUNT=$BUILD_DIR/bin/kcount
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUTDIR=${OUT:-/tmp/kcount-host-clock}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

ROWS=()
FAILED=0
row() {  # name status detail
  ROWS+=("$(printf '%-20s %-5s %s' "$1" "$2" "$3")")
  [[ $2 == PASS ]] || FAILED=1
  echo "==> $1: $2 $3"
}

clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)
echo "clocksource: $clocksource"
BIN=$OUTDIR/launches
if ! nvcc -O2 -arch=sm_90 -I"$REPO" "$REPO/tests/gpu/launches.cu" -lcuda -o "$BIN" >"$OUTDIR/nvcc.txt" 2>&1; then
  row "c1 default clock" FAIL "nvcc failed: $(tail -c 300 "$OUTDIR/nvcc.txt")"
  BIN=
fi

declare -A STATS
one() {  # name tag expected_host_clock env...
  local name=$1 tag=$2 want=$3
  shift 3
  rm -f "$OUTDIR/$tag".* "$OUTDIR/tmp-$tag-"*
  env "$@" "$KCOUNT" run --output "$OUTDIR/tmp-$tag-%p.kcount" -- "$BIN" >"$OUTDIR/$tag.stdout.txt" 2>"$OUTDIR/$tag.stderr.txt"
  local rc=$? logs=("$OUTDIR/tmp-$tag-"*.kcount)
  if [[ $rc -ne 0 || ${#logs[@]} -ne 1 || ! -f ${logs[0]} ]]; then
    row "$name" FAIL "exit $rc, logs: ${logs[*]}: $(tail -c 300 "$OUTDIR/$tag.stderr.txt")"
    return
  fi
  mv "${logs[0]}" "$OUTDIR/$tag.kcount"
  local out
  out=$("$PY" "$REPO/tests/gpu/host_clock_times.py" "$KCOUNT" "$OUTDIR/$tag.kcount" "$want" 2>"$OUTDIR/$tag.check.txt")
  local ok=$?
  STATS[$tag]=$(sed -n 's/.*timing: //p' <<<"$out")
  if [[ $ok -eq 0 ]]; then row "$name" PASS "$out"; else row "$name" FAIL "$out $(tail -c 300 "$OUTDIR/$tag.check.txt")"; fi
}

if [[ -n $BIN ]]; then
  want=CLOCK_MONOTONIC
  [[ $clocksource == tsc ]] && want=tsc
  one "c1 default clock" default "$want" KCOUNT_MODE=trace
  one "c2 monotonic" monotonic CLOCK_MONOTONIC KCOUNT_MODE=trace KCOUNT_HOST_CLOCK=monotonic
  row "c3 same timing" PASS "default (${want}): ${STATS[default]:-?}; monotonic: ${STATS[monotonic]:-?}"
fi

echo
for r in "${ROWS[@]}"; do echo "$r"; done
exit $FAILED
