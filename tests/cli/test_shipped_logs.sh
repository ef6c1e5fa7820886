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
  capture:exclusive.launches=5 capture:exclusive.kernels=0 replay:exclusive.launches=100 \
  replay:exclusive.graph_launches=100 replay:exclusive.kernels=500 worker:instances=4 \
  worker:exclusive.kernels=8000 exit:exclusive.kernels=50 totals.launches=9655 totals.kernels=10050
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
