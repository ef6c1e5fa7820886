# Sourced by the shell tests that preload the library into an NVTX-only program (test_preload.sh,
# test_rotation.sh, test_log_path.sh), with their arguments BUILD_DIR NVTX_PROGRAM. Sets build,
# nvtx_prog, lib, kcount, a scratch folder work (removed at exit), the counters pass/fail with
# ok MESSAGE / bad MESSAGE, and finish NAME (prints the counts; exit status 1 if any check failed).
build=$(cd "$1" && pwd)
nvtx_prog=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
lib=$build/lib/libkcount.so
kcount=$build/bin/kcount
pass=0
fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
finish() { echo "${1:+$1: }$pass passed, $fail failed"; [[ $fail -eq 0 ]]; }
