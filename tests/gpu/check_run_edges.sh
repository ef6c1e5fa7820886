#!/usr/bin/env bash
# GPU checks of the ends of a process that kcount must close a log for, and of a paused process started
# before it initialized CUDA. Rows "NAME  PASS|FAIL  details":
#   e1 exec      run_edges exec: 100 steps then execl(/bin/true): log complete (check OK), 100 step, 100 kernels
#   e2 SIGINT    run_edges wait, then kill -INT from outside: exit 130, log complete, 100 step, 100 kernels
#   e3 paused    python (torch) under kcount run --paused: ctl start before its first CUDA call, then 10
#                add_ in range "late": 10 kernels in "late", log complete
# Usage: bash tests/gpu/check_run_edges.sh BUILD_DIR     (nvcc on PATH or in /usr/local/cuda/bin)
set -u
build=$(cd "${1:-build}" && pwd)
kcount=$build/bin/kcount
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-/tmp/kcount-gpu}/run-edges
rm -rf "$out"; mkdir -p "$out"
export KCOUNT_CONTROL_DIR=$out/ctl
PATH=$PATH:/usr/local/cuda/bin
fail=0
row() { printf '%-12s %s  %s\n' "$1" "$2" "$3"; [[ $2 == PASS ]] || fail=1; }
count() {  # count LOG RANGE FIELD: sum of FIELD (dotted path, e.g. exclusive.kernels) over ranges named RANGE
  "$kcount" summary --format json "$1" 2>/dev/null | python3 -c "import json,sys
def get(r, path):
    for k in path.split('.'): r = r[k]
    return r
print(sum(get(r, sys.argv[2]) for r in json.load(sys.stdin)['logs'][0]['ranges'] if r['path'] == sys.argv[1]))" "$2" "$3" 2>/dev/null
}
if ! nvcc -O2 -arch=sm_90 "$here/run_edges.cu" -o "$out/run_edges" 2>"$out/nvcc.err"; then
  row e1-exec FAIL "nvcc: $(tail -3 "$out/nvcc.err")"; exit 1
fi

"$kcount" run --output "$out/exec.kcount" -- "$out/run_edges" exec 2>"$out/exec.err"; rc=$?
st=$(count "$out/exec.kcount" step instances); k=$(count "$out/exec.kcount" step exclusive.kernels)
if [[ $rc -eq 0 ]] && "$kcount" check "$out/exec.kcount" >/dev/null 2>&1 && [[ $st == 100 && $k == 100 ]]; then
  row e1-exec PASS "exit 0, 100 step ranges, 100 kernels, End record"
else row e1-exec FAIL "rc=$rc step=$st kernels=$k $(tail -2 "$out/exec.err")"; fi

set -m
"$kcount" run --output "$out/int.kcount" -- "$out/run_edges" wait >"$out/int.out" 2>"$out/int.err" &
kp=$!
for _ in $(seq 300); do grep -q ready "$out/int.out" 2>/dev/null && break; sleep 0.05; done
child=$(cat /proc/$kp/task/*/children 2>/dev/null | awk '{print $1}')
kill -INT "$child"
wait $kp; rc=$?
set +m
st=$(count "$out/int.kcount" step instances); k=$(count "$out/int.kcount" step exclusive.kernels)
if [[ $rc -eq 130 ]] && "$kcount" check "$out/int.kcount" >/dev/null 2>&1 && [[ $st == 100 && $k == 100 ]]; then
  row e2-sigint PASS "exit 130, 100 step ranges, 100 kernels, End record"
else row e2-sigint FAIL "rc=$rc step=$st kernels=$k $(tail -2 "$out/int.err")"; fi

cat >"$out/late.py" <<'PY'
import os, sys, time
go = sys.argv[1]
while not os.path.exists(go): time.sleep(0.01)
import torch
x = torch.zeros(16, device="cuda")
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("late")
for _ in range(10): x.add_(1)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
PY
"$kcount" run --paused --output "$out/late.kcount" -- python3 "$out/late.py" "$out/go" 2>"$out/late.err" &
kp=$!
sleep 1
"$kcount" ctl $kp start >"$out/ctl.out" 2>&1; crc=$?
touch "$out/go"
wait $kp; rc=$?
k=$(count "$out/late.kcount" late exclusive.kernels)
if [[ $rc -eq 0 && $crc -eq 0 && $k == 10 ]] && "$kcount" check "$out/late.kcount" >/dev/null 2>&1; then
  row e3-paused PASS "ctl start before CUDA init, then 10 kernels in late"
else row e3-paused FAIL "rc=$rc ctl=$crc kernels=$k $(tail -2 "$out/ctl.out") $(tail -2 "$out/late.err")"; fi
exit $fail
