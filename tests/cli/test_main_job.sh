#!/usr/bin/env bash
# scripts/main_job.sh in its no-GPU path against the built tree (KCOUNT_NO_BUILD=1: nothing is built;
# KCOUNT_NO_GPU=1: the shipped logs are summarized even where a GPU is found): it exits 0, and every table it
# prints (a column line over a line of dashes) has a heading "== ..." above it, after the table before.
# Usage: test_main_job.sh BUILD_DIR
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
fail=0

BUILD_DIR=$1 KCOUNT_NO_BUILD=1 KCOUNT_NO_GPU=1 bash "$root/scripts/main_job.sh" >"$out" 2>"$err"
rc=$?
if [[ $rc -eq 0 ]]; then
  echo "PASS main_job.sh (no GPU, no build): exit 0"
else
  echo "FAIL main_job.sh (no GPU, no build): exit $rc"
  cat "$err"
  fail=1
fi
if grep -q "== building kcount" "$err"; then
  echo "FAIL main_job.sh with KCOUNT_NO_BUILD=1 built kcount"
  fail=1
fi

# Each table: the line of dashes under its column line; its heading is the last "== " line since the
# table before it.
tables=0
heading=""
prev=""
while IFS= read -r line; do
  if [[ $line =~ ^-{20,}$ ]]; then
    tables=$((tables + 1))
    if [[ -n $heading ]]; then
      echo "PASS table $tables (${prev:0:40}...) is headed: ${heading:0:100}"
    else
      echo "FAIL table $tables (${prev:0:60}...) has no '== ' heading line"
      fail=1
    fi
    heading=""
  elif [[ $line == "== "* ]]; then
    heading=$line
  fi
  prev=$line
done <"$out"
# Three summaries (linear-eager, geglu-eager, geglu-compiled) and the kernels of the two GeGLU logs.
if [[ $tables -eq 4 ]]; then
  echo "PASS four tables: three summaries and the kernels"
else
  echo "FAIL $tables tables, expected 4 (three summaries and the kernels)"
  fail=1
fi
if grep -q "^== kernels of geglu eager and geglu compiled" "$out"; then
  echo "PASS the kernels table's heading says what it is"
else
  echo "FAIL no heading for the kernels table"
  fail=1
fi
exit $fail
