#!/usr/bin/env bash
# Where the library creates its log (an NVTX-only program, no GPU): missing folders of KCOUNT_OUTPUT are
# created (0700) and the closing line says which; a symbolic link at the log's name is never written
# through, whatever it points to (a device, a fifo, a file, nothing): the library disables itself with one
# message and the program's output and exit status are unchanged; a symbolic link among the folders is
# followed.
# Usage: test_log_path.sh BUILD_DIR NVTX_PROGRAM
set -u
source "$(dirname "${BASH_SOURCE[0]}")/preload_test_lib.sh"

want_out=$("$nvtx_prog" 10)
run() {  # run OUTPUT ERRFILE: the program with the library, KCOUNT_OUTPUT=OUTPUT; prints "rc stdout-same"
  local out rc
  out=$(KCOUNT_OUTPUT=$1 NVTX_INJECTION64_PATH=$lib "$nvtx_prog" 10 2>"$2"); rc=$?
  [[ $out == "$want_out" ]] && echo "$rc same" || echo "$rc differs"
}

# 1. Missing folders: created with mode 0700, named once in the closing line; not named when they exist.
r=$(run "$work/new/deeper/" "$work/new.err")
log=$(ls "$work"/new/deeper/*.kcount 2>/dev/null)
if [[ $r == "0 same" && -n $log && $(stat -c %a "$work/new") == 700 && $(stat -c %a "$work/new/deeper") == 700 &&
      $(grep -c 'created folder' "$work/new.err") -eq 1 ]] &&
   grep -q "info: log: $log (.*; created folders $work/new, $work/new/deeper; CUPTI" "$work/new.err" &&
   "$kcount" check "$log" >/dev/null; then
  ok "missing folders created (0700) and named once in the closing line"
else
  bad "missing folders: run '$r', log '$log', modes $(stat -c %a "$work/new" "$work/new/deeper" 2>&1 | tr '\n' ' '): $(cat "$work/new.err")"
fi
r=$(run "$work/new/deeper/again.kcount" "$work/again.err")
if [[ $r == "0 same" && -s $work/new/deeper/again.kcount ]] && ! grep -q 'created folder' "$work/again.err"; then
  ok "existing folders: no 'created folder' in the closing line"
else
  bad "existing folders: run '$r': $(cat "$work/again.err")"
fi
r=$(run "$work/one/r.kcount" "$work/one.err")
if [[ $r == "0 same" && -s $work/one/r.kcount ]] && grep -q "; created folder $work/one; CUPTI" "$work/one.err"; then
  ok "one missing folder: 'created folder DIR'"
else
  bad "one missing folder: run '$r': $(cat "$work/one.err")"
fi

# 2. A symbolic link at the log's name, to /dev/null, a fifo, a regular file, or nothing.
mkdir "$work/links"
mkfifo "$work/links/fifo"
: >"$work/links/file"
ln -s /dev/null "$work/links/null.kcount"
ln -s fifo "$work/links/fifo.kcount"
ln -s "$work/links/file" "$work/links/file.kcount"
ln -s "$work/links/nothing" "$work/links/dangling.kcount"
for name in null fifo file dangling; do
  link=$work/links/$name.kcount
  to=$(readlink "$link")
  r=$(run "$link" "$work/$name.err")
  if [[ $r == "0 same" && $(wc -l <"$work/$name.err") -eq 1 && ! -e $work/links/$name-1.kcount &&
        ! -e $work/links/nothing && ! -s $work/links/file && -L $link ]] &&
     grep -q "^\[kcount\] error: disabled: the log path $link is a symbolic link (to $to): kcount never writes its log through a symbolic link" "$work/$name.err" &&
     grep -q "the program continues unprofiled$" "$work/$name.err"; then
    ok "symbolic link to $name at the log's name: one message, disabled, nothing written, program unchanged"
  else
    bad "symbolic link to $name: run '$r', files $(ls "$work/links" | tr '\n' ' '): $(cat "$work/$name.err")"
  fi
done
# With kcount run: the run's report says the library disabled itself and why.
"$kcount" run --output "$work/links/file.kcount" -- "$nvtx_prog" 10 >/dev/null 2>"$work/run.err"; rc=$?
if grep -q "is a symbolic link" "$work/run.err" && [[ ! -s $work/links/file ]]; then
  ok "kcount run with a symbolic link as --output: the reason is shown (exit $rc), nothing written"
else
  bad "kcount run with a symbolic link: exit $rc: $(cat "$work/run.err")"
fi

# 3. A symbolic link among the folders is followed (the folder is the user's choice).
mkdir "$work/real"
ln -s "$work/real" "$work/via"
r=$(run "$work/via/r.kcount" "$work/via.err")
if [[ $r == "0 same" && -f $work/real/r.kcount && ! -L $work/real/r.kcount ]] && "$kcount" check "$work/real/r.kcount" >/dev/null; then
  ok "a symbolic link among the folders is followed: the log is in the folder it points to"
else
  bad "folder link: run '$r', $(ls -l "$work/real" | tr '\n' ' '): $(cat "$work/via.err")"
fi

# 4. kcount run names a log whose path holds a newline, tab or escape on one line, quoted and escaped
# (a plain path as it is): the line does not split, and the path is one log, not two.
mkdir "$work/odd"
odd="$work/odd/a"$'\n'"b"$'\t'"c"$'\e'"d.kcount"
"$kcount" run --output "$odd" -- "$nvtx_prog" 10 >/dev/null 2>"$work/odd.err"; rc=$?
shown="kcount: log: \"$work/odd/a\\nb\\tc\\x1bd.kcount\""
if [[ $rc -eq 0 && -s $odd && $(grep -c "^kcount: log: " "$work/odd.err") -eq 1 ]] && grep -qxF "$shown" "$work/odd.err"; then
  ok "kcount run: a log path with a newline, tab and escape is one line, quoted and escaped"
else
  bad "kcount run with an odd path: exit $rc: $(cat -A "$work/odd.err")"
fi
# The library's own closing line (no kcount run) shows such a path the same way: one line.
odd2="$work/odd/e"$'\n'"f"$'\t'"g.kcount"
r=$(run "$odd2" "$work/odd2.err")
if [[ $r == "0 same" && -s $odd2 && $(grep -c "info: log: " "$work/odd2.err") -eq 1 ]] &&
   grep -qF "info: log: \"$work/odd/e\\nf\\tg.kcount\" (" "$work/odd2.err"; then
  ok "library closing line: a log path with a newline and tab is one line, quoted and escaped"
else
  bad "library closing line with an odd path: run '$r': $(cat -A "$work/odd2.err")"
fi
"$kcount" run --output "$work/odd/plain name.kcount" -- "$nvtx_prog" 10 >/dev/null 2>"$work/plain.err"
grep -qxF "kcount: log: $work/odd/plain name.kcount" "$work/plain.err" && ok "kcount run: a plain path is shown as it is" ||
  bad "kcount run with a plain path: $(cat "$work/plain.err")"

# A file that refuses every write (a full disk: /dev/full): the closing warning names only the losses there
# were ("0 launch/range, 0 kernel" before "6004 ranges not written" read as a contradiction).
if [[ -w /dev/full ]]; then
  "$kcount" run --output /dev/full -- "$nvtx_prog" 30 >/dev/null 2>"$work/full.err"; rc=$?
  line=$(grep "records dropped: " "$work/full.err")
  losses=${line%%(*}  # before the "(not written: ...)" breakdown, which gives every kind
  if [[ $rc -eq 0 && $line == *"records dropped: "*" bytes not written (not written: "*" ranges"* && $losses != *" 0 "* ]]; then
    ok "a refused log: the closing warning names only the losses there were"
  else
    bad "a refused log: exit $rc: $(cat "$work/full.err")"
  fi
fi

finish log_path
