#!/usr/bin/env bash
# The reader and the analysis on logs recorded on an NVIDIA H200 (examples/logs/, tests/data/):
# the same exact checks as the GPU run (tests/gpu/run_gpu_checks.sh), on the shipped files.
# Usage: test_shipped_logs.sh BUILD_DIR
set -u
kcount=$(cd "$1" && pwd)/bin/kcount
py=${PYTHON:-python3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
check=("$py" "$root/tests/gpu/check_summary.py")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
run_check() {  # name check-args...
  local name=$1; shift
  local line
  if line=$("${check[@]}" "$@" 2>&1); then echo "PASS $name: $line"; pass=$((pass + 1));
  else echo "FAIL $name: $line"; fail=$((fail + 1)); fi
}
for log in linear-eager geglu-eager geglu-compiled; do
  if "$kcount" check "$root/examples/logs/$log.kcount" >"$work/$log.check"; then
    echo "PASS kcount check $log"; pass=$((pass + 1))
  else
    echo "FAIL kcount check $log"; cat "$work/$log.check"; fail=$((fail + 1))
  fi
  "$kcount" summary --format json "$root/examples/logs/$log.kcount" >"$work/$log.json"
done
"$kcount" summary --format json "$root/tests/data/launches.kcount" >"$work/launches.json"
run_check "linear eager (H200 log)" linear "$work/linear-eager.json" --steps 20
run_check "geglu eager (H200 log)" geglu-eager "$work/geglu-eager.json" --steps 20
run_check "geglu compiled (H200 log)" geglu-compiled "$work/geglu-compiled.json" --eager "$work/geglu-eager.json" --steps 20
run_check "C++ launch paths (H200 log)" expect "$work/launches.json" \
  runtime:exclusive.launches=1000 runtime:exclusive.kernels=1000 driver:exclusive.kernels=500 \
  capture:exclusive.launches=5 capture:exclusive.captured_launches=5 capture:exclusive.kernels=0 \
  replay:exclusive.launches=100 replay:exclusive.graph_launches=100 replay:exclusive.kernels=500 \
  worker:instances=4 worker:exclusive.kernels=8000 exit:exclusive.kernels=50 \
  api.cudaLaunchKernelExC:exclusive.kernels=1 api.cuLaunchKernelEx:exclusive.kernels=1 \
  memops:exclusive.launches=0 memops:exclusive.memcpy.count=3 memops:exclusive.memcpy.bytes=12288 \
  memops:exclusive.memset.count=1 totals.launches=9660 totals.kernels=10055 totals.captured_launches=5
"$kcount" summary --format json "$root/tests/data/graphs.kcount" >"$work/graphs.json"
"$kcount" summary --format json --graph-view capture "$root/tests/data/graphs.kcount" >"$work/graphs-capture.json"
run_check "CUDA graph replay, launch view (H200 log)" expect "$work/graphs.json" \
  rep:exclusive.launches=100 rep:exclusive.graph_launches=100 rep:exclusive.kernels=500 \
  cap:exclusive.captured_launches=5 cap:exclusive.kernels=2
run_check "CUDA graph replay, capture view (H200 log)" expect "$work/graphs-capture.json" \
  cap:exclusive.kernels=502 rep:exclusive.kernels=0
# A process killed with SIGKILL 2 s after its work: readable up to the last periodic flush.
"$kcount" check "$root/tests/data/sigkill.kcount" >"$work/sigkill.check" 2>&1
rc=$?
if [[ $rc -eq 1 ]] && grep -q "no end record" "$work/sigkill.check"; then
  echo "PASS kcount check on a SIGKILLed process's log: exit 1, no end record reported"; pass=$((pass + 1))
else
  echo "FAIL kcount check on sigkill.kcount: exit $rc"; cat "$work/sigkill.check"; fail=$((fail + 1))
fi
"$kcount" summary --format json "$root/tests/data/sigkill.kcount" >"$work/sigkill.json"
run_check "SIGKILLed process: work kept (H200 log)" expect "$work/sigkill.json" --allow-incomplete work:exclusive.kernels=50
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
