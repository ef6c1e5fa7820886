#!/usr/bin/env bash
# `kcount run` and signals: a signal sent to kcount by another process (kill, a job scheduler) reaches
# the command once, and kcount exits with the command's status; no command is left running.
# Usage: test_run_signals.sh BUILD_DIR
set -u
kcount=$1/bin/kcount
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

# The command counts the signals it gets and exits 40 + count, after the trap ran.
# kcount starts with default dispositions (a background job of a script starts with SIGINT and SIGQUIT
# ignored, and a test harness may ignore SIGHUP: ignored signals stay ignored by design).
dfl=(python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])')
for sig in TERM HUP INT USR1; do
  cat >"$work/cmd.sh" <<EOS
n=0
trap 'n=\$((n + 1))' $sig
echo ready >"$work/ready"
i=0
while [ \$i -lt 100 ] && [ \$n -eq 0 ]; do sleep 0.05; i=\$((i + 1)); done
sleep 0.3
exit \$((40 + n))
EOS
  rm -f "$work/ready"
  KCOUNT_OUTPUT=$work/ "${dfl[@]}" "$kcount" run -- sh "$work/cmd.sh" 2>"$work/err" &
  kpid=$!
  for _ in $(seq 100); do [[ -f $work/ready ]] && break; sleep 0.05; done
  kill -s "$sig" "$kpid"
  wait "$kpid"
  rc=$?
  if [[ $rc -eq 41 ]]; then
    echo "PASS SIG$sig sent to kcount run reaches the command once (exit $rc)"
  else
    echo "FAIL SIG$sig sent to kcount run: exit $rc, expected 41 (the command saw the signal once)"
    cat "$work/err"
    fail=1
  fi
done
exit $fail
