#!/usr/bin/env bash
# The library preloaded into NVTX-only programs that trip it (tests/programs/nvtx_host_cases.cpp):
#  - 32 threads whose first NVTX calls race with the session's start: every range is in the log, exactly
#    (5 runs: the race showed in about one run of three before it was fixed);
#  - a daemon-style closefrom(3) after the first flush: the program's own file is never written by kcount,
#    the program's output and exit status are unchanged, and kcount says why its log ended;
#  - kcount_recording() polled while the session starts in the first NVTX call: 2 (armed) then 1
#    (recording), never 0 in between (20 runs: without the fix a 0 showed in most runs).
# Usage: test_host_cases.sh BUILD_DIR PROGRAM
set -u
build=$1
prog=$2
kcount=$build/bin/kcount
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

for run in 1 2 3 4 5; do
  log=$work/threads-$run.kcount
  if ! "$kcount" run --output "$log" -- "$prog" threads >/dev/null 2>"$work/threads.err"; then
    echo "FAIL threads run $run: exit status"; cat "$work/threads.err"; fail=1; continue
  fi
  got=$("$kcount" summary --format json "$log" | python3 -c '
import json, sys
r = {x["path"]: x["instances"] for x in json.load(sys.stdin)["logs"][0]["ranges"]}
print(" ".join(str(r.get(k, 0)) for k in ("odd", "even", "odd/in", "even/in")))')
  if [[ $got == "320000 320000 320000 320000" ]]; then
    echo "PASS threads run $run: odd, even, odd/in, even/in = $got"
  else
    echo "FAIL threads run $run: odd, even, odd/in, even/in = $got (want 320000 each)"; fail=1
  fi
done

mine=$work/mine.txt
KCOUNT_OUTPUT=$work/closefrom.kcount LD_PRELOAD=$build/lib/libkcount.so "$prog" closefrom "$mine" \
  >"$work/cf.out" 2>"$work/cf.err"
rc=$?
if [[ $rc -eq 0 && "$(cat "$mine")" == "hello" && $(stat -c %s "$mine") -eq 6 ]]; then
  echo "PASS closefrom: the program's file holds only its own bytes, exit 0"
else
  echo "FAIL closefrom: exit $rc, program file: $(od -c "$mine" | head -3)"; fail=1
fi
if grep -q "closed kcount's log descriptor" "$work/cf.err"; then
  echo "PASS closefrom: kcount says its log ended because the descriptor was closed"
else
  echo "FAIL closefrom: no message; stderr:"; cat "$work/cf.err"; fail=1
fi
bad=0
for run in $(seq 1 20); do
  got=$(KCOUNT_OUTPUT=$work/state.kcount LD_PRELOAD=$build/lib/libkcount.so "$prog" state 2>"$work/state.err")
  [[ $got == "2 1" ]] || { echo "FAIL state run $run: kcount_recording() gave '$got' (want '2 1')"; cat "$work/state.err"; bad=1; }
done
if [[ $bad -eq 0 ]]; then echo "PASS state: kcount_recording() armed then recording, never 0 across the start (20 runs)"; else fail=1; fi
exit $fail
