#!/usr/bin/env bash
# The library's configuration and `kcount run` as a new user meets them, without a GPU: a device or a
# fifo as the log path, each KCOUNT_* warning printed once, a size cap below the minimum, the reasons
# kcount run gives when no log was written, its command not outliving it, and scripts/build.sh's -j.
# Usage: test_run_config.sh BUILD_DIR NVTX_PROGRAM
set -u
build=$(cd "$1" && pwd)
prog=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
kcount=$build/bin/kcount
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail=0
ok() { echo "PASS $1"; }
bad() { echo "FAIL $1"; fail=1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp  # where a log that cannot be created falls back to
mkdir -p "$TMPDIR"
export KCOUNT_OUTPUT=$work/logs/  # logs of the commands below that set no output of their own

# 1. /dev/null and a fifo: written as they are, no "/dev/null.1", no fallback file.
had_null1=0; [[ -e /dev/null.1 ]] && had_null1=1
"$kcount" run --output /dev/null -- "$prog" 2 >/dev/null 2>"$work/null.err"
rc=$?
if [[ $rc -eq 0 && $had_null1 -eq 0 && ! -e /dev/null.1 && -z $(ls -A "$TMPDIR") && -c /dev/null ]] &&
   grep -q "kcount: log: /dev/null (discarded: /dev/null keeps nothing)$" "$work/null.err"; then ok "--output /dev/null: written as it is, nothing created, said to be discarded"
else bad "--output /dev/null: rc=$rc, /dev/null.1: $(ls -l /dev/null.1 2>&1), tmp: $(ls -A "$TMPDIR"), $(tr '\n' ' ' <"$work/null.err")"; fi
mkfifo "$work/log.fifo"
timeout 60 cat "$work/log.fifo" >"$work/from-fifo.kcount" &
reader=$!
# The fifo has a reader from here on, whenever cat gets to open it (a loaded machine starts it late): this
# shell holds it open for reading and writing until the run is over, then cat reads to the end.
exec 3<>"$work/log.fifo"
KCOUNT_OUTPUT=$work/log.fifo KCOUNT_MAX_BYTES=64K "$kcount" run -- "$prog" 2 >/dev/null 2>"$work/fifo.err"
# Closed once cat (the child of timeout) has it open too, so the pipe keeps the log until cat reads it.
for _ in $(seq 100); do
  for c in $(pgrep -P "$reader"); do
    find "/proc/$c/fd" -lname "$work/log.fifo" 2>/dev/null | grep -q . && break 2
  done
  sleep 0.1
done
exec 3>&-
wait $reader
if "$kcount" check "$work/from-fifo.kcount" >/dev/null && [[ ! -e $work/log.fifo.1 && -p $work/log.fifo ]]; then
  ok "KCOUNT_OUTPUT=fifo: a complete log through the fifo, no rotation file"
else bad "KCOUNT_OUTPUT=fifo: $(ls "$work"), $(tr '\n' ' ' <"$work/fifo.err")"; fi

# 2. A warning is printed once, also when the program is started through a shell (one exec chain).
#    (kcount run's own closing line names a refused KCOUNT_MAX_BYTES again, as the reason no log was written.)
for setting in KCOUNT_MAX_BYTES=abc KCOUNT_MAX_FILES=0; do
  env "$setting" "$kcount" run -- sh -c "\"$prog\" 1" >/dev/null 2>"$work/twice.err"
  n=$(grep -c "^\[kcount\] warning: .*$setting" "$work/twice.err")
  [[ $n -eq 1 ]] && ok "$setting through sh: warned once" || bad "$setting warned $n times: $(cat "$work/twice.err")"
done

# The command's arguments reach it unchanged, with or without "--", options that kcount run also has
# included; an unknown option before the command is an error.
out=$("$kcount" run --output "$work/args.kcount" /usr/bin/printf '%s|' a --steps 20 --paused --output x 2>/dev/null)
out2=$("$kcount" run --output "$work/args2.kcount" -- /usr/bin/printf '%s|' -- b --lr 2>/dev/null)
"$kcount" run --no-such-option -- /bin/true 2>/dev/null; rc=$?
if [[ $out == 'a|--steps|20|--paused|--output|x|' && $out2 == '--|b|--lr|' && $rc -eq 2 ]]; then ok "command arguments unchanged with and without --"
else bad "command arguments: '$out' / '$out2' / unknown option rc=$rc"; fi

# Ctrl-C in Python (an unhandled KeyboardInterrupt: Python ends itself with kill(getpid(), SIGINT)): exit
# status 130 as without kcount, and a complete log with every range.
cat >"$work/kbi.py" <<'PY'
import ctypes, sys
nv = ctypes.CDLL(sys.argv[1]); nv.nvtxRangePushA.argtypes = [ctypes.c_char_p]
for i in range(1000):
    nv.nvtxRangePushA(b"step"); nv.nvtxRangePop()
raise KeyboardInterrupt
PY
nvtx_lib=$build/lib/libkc_nvtx_export.so
"$kcount" run --output "$work/kbi.kcount" -- python3 "$work/kbi.py" "$nvtx_lib" >/dev/null 2>&1; rc=$?
python3 "$work/kbi.py" "$nvtx_lib" >/dev/null 2>&1; rc_plain=$?
n=$("$kcount" summary --format json "$work/kbi.kcount" 2>/dev/null | python3 -c 'import json,sys; print(sum(r["instances"] for r in json.load(sys.stdin)["logs"][0]["ranges"] if r["path"] == "step"))' 2>/dev/null)
state=$("$kcount" summary "$work/kbi.kcount" 2>&1 | grep '^log ')
if [[ $rc -eq 130 && $rc_plain -eq 130 ]] && "$kcount" check "$work/kbi.kcount" >/dev/null 2>&1 && [[ $n == 1000 ]] &&
   [[ $state == "log complete; the process ended by SIGINT: ranges still open then end at the signal" ]]; then
  ok "KeyboardInterrupt: exit 130 as without kcount, complete log with 1000 ranges, ended by SIGINT"
else bad "KeyboardInterrupt: rc=$rc (plain $rc_plain), ranges '$n', state '$state', check: $("$kcount" check "$work/kbi.kcount" 2>&1 | tail -1)"; fi

# A small size cap and 3000 distinct range names: the chunks that defined them are kept out, the end
# reason's definition goes into the final chunk with an id far past what the kept bytes could define.
# The log reads as complete but lossy (not damaged, no sequence warning), and summary reads it.
KCOUNT_MAX_BYTES=4096 KCOUNT_MAX_FILES=1 "$kcount" run --output "$work/names.kcount" -- python3 -c 'import ctypes, sys
nv = ctypes.CDLL(sys.argv[1]); nv.nvtxRangePushA.argtypes = [ctypes.c_char_p]
for i in range(3000):
    nv.nvtxRangePushA(b"r%d" % i); nv.nvtxRangePop()' "$nvtx_lib" >/dev/null 2>&1
check_out=$("$kcount" check "$work/names.kcount" 2>&1); crc=$?
"$kcount" summary "$work/names.kcount" >/dev/null 2>&1; src=$?
if [[ $crc -eq 1 && $src -eq 0 && $(echo "$check_out" | tail -1) == "COMPLETE BUT LOSSY"* && $check_out != *warning:* && $check_out != *error:* ]]; then
  ok "size cap with 3000 range names: complete but lossy, no damage or sequence warning, summary reads it"
else bad "size cap with 3000 range names: check rc=$crc, summary rc=$src: $(echo "$check_out" | grep -E 'error|warning|^[A-Z]' | head -4)"; fi

# Two bad settings: two warning lines, each with the warning prefix.
KCOUNT_MAX_FILES=0 KCOUNT_INTERVAL=0 "$kcount" run -- "$prog" 1 >/dev/null 2>"$work/two.err"
if [[ $(grep -c '^\[kcount\] warning: ignoring KCOUNT_' "$work/two.err") -eq 2 ]]; then ok "two bad settings: two prefixed warning lines"
else bad "two bad settings: $(cat "$work/two.err")"; fi

# 3. KCOUNT_MAX_BYTES below the minimum: raised to it with a warning; the log has its header and check
#    says INCOMPLETE (exit 1), not DAMAGED; no mention of KCOUNT_MAX_FILES without a rotation.
KCOUNT_MAX_BYTES=10 KCOUNT_MAX_FILES=1 "$kcount" run --output "$work/cap.kcount" -- "$prog" 30000 >/dev/null 2>"$work/cap.err"
"$kcount" check "$work/cap.kcount" >"$work/cap.check" 2>&1
rc=$?
if [[ $rc -eq 1 && -s $work/cap.kcount ]] && grep -q "KCOUNT_MAX_BYTES=10: below the minimum of 4096" "$work/cap.err" &&
   grep -q "is full at KCOUNT_MAX_BYTES=4096" "$work/cap.err" && ! grep -q "KCOUNT_MAX_FILES" "$work/cap.err"; then
  ok "KCOUNT_MAX_BYTES=10: raised to 4096, log of $(stat -c %s "$work/cap.kcount") bytes, check exit 1"
else bad "KCOUNT_MAX_BYTES=10: check exit $rc ($(head -c 300 "$work/cap.check")), $(tr '\n' ' ' <"$work/cap.err")"; fi

# 4. Why no log was written.
"$kcount" run -- kcount-no-such-command >/dev/null 2>"$work/nf.err"
rc=$?
if [[ $rc -eq 127 ]] && grep -q "kcount-no-such-command: command not found" "$work/nf.err" && ! grep -q "no log" "$work/nf.err"
then ok "command not found: exit 127, said so"; else bad "command not found: rc=$rc, $(cat "$work/nf.err")"; fi
mkdir -p "$work/a-folder"
"$kcount" run -- "$work/a-folder" >/dev/null 2>"$work/dir.err"
rc=$?
if [[ $rc -eq 126 ]] && grep -q "cannot run $work/a-folder: Is a directory" "$work/dir.err" && ! grep -q "no log" "$work/dir.err"
then ok "a folder as the command: exit 126, 'Is a directory' as a shell says"; else bad "folder as command: rc=$rc, $(cat "$work/dir.err")"; fi
(cd "$work" && "$kcount" run --inject cuda -- "$prog" 3 _exit >/dev/null 2>"$work/exit.err")
if grep -q "no log written: libkcount.so was loaded by CUDA or NVTX" "$work/exit.err" && grep -q "_exit()" "$work/exit.err"
then ok "--inject cuda + _exit: the reason says the process left before its log was written"
else bad "--inject cuda + _exit: $(cat "$work/exit.err")"; fi
mkdir -p "$work/ro"
KCOUNT_OUTPUT=/proc/kcount-none/x.kcount "$kcount" run -- env TMPDIR=/proc/kcount-none "$prog" 1 >/dev/null 2>"$work/ro.err"
if grep -q "no log written: the log could not be created: cannot create log /proc/kcount-none/x.kcount" "$work/ro.err"
then ok "log that cannot be created: said so"; else bad "log that cannot be created: $(cat "$work/ro.err")"; fi

# 4b. A write that fails (file size limit; SIGXFSZ ignored, so write() returns EFBIG): the library warns
# when it happens, and kcount run says it again beside the log line; the log reads as incomplete.
(trap '' XFSZ; ulimit -f 1; "$kcount" run --output "$work/fsize.kcount" -- "$prog" 3000 >/dev/null 2>"$work/fsize.err"); rc=$?
line=$(grep '^kcount: writing a log failed' "$work/fsize.err")
check_out=$("$kcount" check "$work/fsize.kcount" 2>&1)
if [[ $rc -eq 0 && $line == "kcount: writing a log failed: File too large (pid "*"): the records from then on were not written"* &&
      $check_out == *"a write that failed such as a full disk"* ]]; then ok "a failed log write (file size limit): said by kcount run, and by check"
else bad "failed log write: rc=$rc, line '$line', check: $(echo "$check_out" | tail -2)"; fi

# 5. kcount run killed with SIGKILL: its command goes too (PR_SET_PDEATHSIG); its run report
# ($TMPDIR/kcount-run.PID.XXXXXX) is left, and the next kcount run removes it.
mkdir -p "$work/tmpdir"
TMPDIR=$work/tmpdir "$kcount" run -- sleep 60 2>/dev/null &
kpid=$!
child=""
for _ in $(seq 100); do
  child=$(cat /proc/$kpid/task/*/children 2>/dev/null | tr -d ' ')
  [[ -n $child ]] && break
  sleep 0.05
done
kill -KILL $kpid
wait $kpid 2>/dev/null
gone=0
for _ in $(seq 100); do
  kill -0 "$child" 2>/dev/null || { gone=1; break; }
  sleep 0.05
done
if [[ -n $child && $gone -eq 1 ]]; then ok "kcount run killed by SIGKILL: its command $child ended too"
else bad "kcount run killed by SIGKILL: command '$child' still running"; [[ -n $child ]] && kill "$child" 2>/dev/null; fi
left=$(ls "$work/tmpdir" | grep -c "^kcount-run\.$kpid\.")
touch "$work/tmpdir/kcount-run.$$.abcdef"  # a live process's (this shell's): kept
TMPDIR=$work/tmpdir "$kcount" run -- /bin/true 2>/dev/null
after=$(ls "$work/tmpdir" | tr '\n' ' ')
if [[ $left -eq 1 && $after == "kcount-run.$$.abcdef " ]]; then ok "the killed run's report is removed by the next run; a live pid's is kept"
else bad "stale run report: $left left by the killed run; after the next run: '$after'"; fi

# 6. --torch-modules on a command that is not Python: said (no Python process started the helper); a
# Python command starts it, and nothing is said.
"$kcount" run --torch-modules --output "$work/torch/" -- "$prog" 10 >/dev/null 2>"$work/torch-c.err"
rc_c=$?
"$kcount" run --torch-modules --output "$work/torch/" -- python3 -c 'pass' >/dev/null 2>"$work/torch-py.err"
rc_py=$?
if [[ $rc_c -eq 0 && $rc_py -eq 0 ]] && grep -q "no Python process of the command started kcount's helper" "$work/torch-c.err" &&
   ! grep -q "no Python process" "$work/torch-py.err"; then
  ok "--torch-modules: a non-Python command is told so; a Python one is not"
else bad "--torch-modules helper note: rc $rc_c/$rc_py; C: $(tr '\n' ' ' <"$work/torch-c.err"); Python: $(tr '\n' ' ' <"$work/torch-py.err")"; fi

# 8. A command that changes its directory before recording: the log is named by its absolute path (the
#    default name lands in the new directory), and a relative --output is taken from kcount run's directory.
mkdir -p "$work/cwd/sub"
(cd "$work/cwd" && env -u KCOUNT_OUTPUT "$kcount" run -- sh -c "cd sub && \"$prog\" 1" >/dev/null 2>"$work/cwd.err")
named=$(sed -n 's/^kcount: log: //p' "$work/cwd.err")
if [[ $named == "$work/cwd/sub/"*.kcount && -f $named ]]; then ok "a command that cd's first: kcount run names the log where it is"
else bad "cd before recording: named '$named'; $(tr '\n' ' ' <"$work/cwd.err"); $(ls -R "$work/cwd")"; fi
(cd "$work/cwd" && "$kcount" run --output rel.kcount -- sh -c "cd sub && \"$prog\" 1" >/dev/null 2>"$work/cwd2.err")
if grep -qx "kcount: log: $work/cwd/rel.kcount" "$work/cwd2.err" && [[ -f $work/cwd/rel.kcount ]]; then
  ok "--output rel.kcount is relative to kcount run's folder, not the command's"
else bad "--output relative: $(tr '\n' ' ' <"$work/cwd2.err"); $(ls -R "$work/cwd")"; fi

# 7. scripts/build.sh runs ninja on every CPU (a fake cmake and ninja record their arguments).
mkdir -p "$work/fake"
printf '#!/bin/sh\nexit 0\n' >"$work/fake/cmake"
printf '#!/bin/sh\necho "$@" >"%s"\n' "$work/ninja.args" >"$work/fake/ninja"
chmod +x "$work/fake/cmake" "$work/fake/ninja"
# KCOUNT_JOBS (README: for a shared machine) sets the count; unset, it is the CPU count.
KCOUNT_JOBS=1 PATH=$work/fake:$PATH BUILD_DIR=$work/fake-build2 bash "$root/scripts/build.sh" >/dev/null 2>&1
grep -q -- "-j1\( \|$\)" "$work/ninja.args" 2>/dev/null && ok "build.sh: KCOUNT_JOBS=1 gives ninja -j1" ||
  bad "build.sh with KCOUNT_JOBS=1: ninja called with '$(cat "$work/ninja.args" 2>&1)'"
env -u KCOUNT_JOBS PATH=$work/fake:$PATH BUILD_DIR=$work/fake-build bash "$root/scripts/build.sh" >/dev/null 2>&1
grep -q -- "-j$(nproc)" "$work/ninja.args" 2>/dev/null && ok "build.sh: ninja -j$(nproc)" ||
  bad "build.sh: ninja called with '$(cat "$work/ninja.args" 2>&1)'"
# 8. A kcount with no libkcount.so beside it (the main job without a GPU builds the tool only): exit 2 and
#    a message that names --lib and the build that makes the library; the command is not run.
mkdir -p "$work/toolonly/bin"
cp "$kcount" "$work/toolonly/bin/kcount"
"$work/toolonly/bin/kcount" run -- touch "$work/toolonly/ran" 2>"$work/toolonly.err"; rc=$?
if [[ $rc == 2 && ! -e $work/toolonly/ran ]] && grep -q "cannot find libkcount.so" "$work/toolonly.err" &&
   grep -q -- "--lib PATH" "$work/toolonly.err" && grep -q "scripts/build.sh" "$work/toolonly.err"; then
  ok "kcount without its library: exit 2, names --lib and scripts/build.sh"
else bad "kcount without its library: rc $rc, ran: $([[ -e $work/toolonly/ran ]] && echo yes || echo no); $(cat "$work/toolonly.err")"; fi
# 9. The log deleted while the command runs (a clean-up job): the library warns when it closes the log, and
#    kcount run says the log is not on disk instead of naming it as if it were there.
cat >"$work/del.py" <<'PY'
import ctypes, os, sys, time
nv = ctypes.CDLL(sys.argv[1]); nv.nvtxRangePushA.argtypes = [ctypes.c_char_p]
nv.nvtxRangePushA(b"step"); nv.nvtxRangePop()
for _ in range(200):  # the file is created at the library's first write
    if os.path.exists(sys.argv[2]): break
    time.sleep(0.05)
os.unlink(sys.argv[2])
for i in range(100):
    nv.nvtxRangePushA(b"step"); nv.nvtxRangePop()
PY
"$kcount" run --output "$work/del.kcount" -- python3 "$work/del.py" "$nvtx_lib" "$work/del.kcount" >/dev/null 2>"$work/del.err"; rc=$?
if [[ $rc == 0 ]] && grep -q "warning: the log file $work/del.kcount was deleted while recording: nothing of it is on disk" "$work/del.err" &&
   grep -qx "kcount: log: $work/del.kcount (not on disk: deleted while the command ran)" "$work/del.err"; then
  ok "a log deleted while recording: the library warns, kcount run says it is not on disk"
else bad "log deleted while recording: rc $rc; $(cat "$work/del.err")"; fi
exit $fail
