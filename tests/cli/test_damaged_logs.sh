#!/usr/bin/env bash
# Exit codes and messages of kcount summary/kernels/check on damaged input (docs/reader-guarantees.md):
# not a log, empty, unsupported version, cut tail, flipped byte (checksum mismatch), each with and
# without --salvage. Damaged files are made from the shipped H200 log tests/data/launches.kcount.
# Usage: test_damaged_logs.sh BUILD_DIR
set -u
kcount=$(cd "$1" && pwd)/bin/kcount
py=${PYTHON:-python3}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src=$root/tests/data/launches.kcount
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0
fail=0
expect() {  # name want_rc stderr_regex cmd...: runs cmd, checks exit code and stderr
  local name=$1 want=$2 re=$3; shift 3
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $rc -eq $want ]] && { [[ -z $re ]] || grep -Eq -- "$re" "$work/err"; }; then
    echo "PASS $name: exit $rc"; pass=$((pass + 1))
  else
    echo "FAIL $name: exit $rc (want $want), stderr: $(head -c 400 "$work/err")"; fail=$((fail + 1))
  fi
}

printf '#!/bin/sh\necho this is not a kcount log\n' >"$work/script.sh"
: >"$work/empty.kcount"
cp "$src" "$work/v2.kcount" && chmod u+w "$work/v2.kcount"
printf '\x02\x00' | dd of="$work/v2.kcount" bs=1 seek=8 conv=notrunc status=none
size=$(stat -c %s "$src")
head -c $((size - 1000)) "$src" >"$work/cut.kcount"
cp "$src" "$work/flip.kcount" && chmod u+w "$work/flip.kcount"
printf '\xff' | dd of="$work/flip.kcount" bs=1 seek=$((size / 2)) conv=notrunc status=none

expect "summary: not a kcount log" 2 "error: not a kcount log: byte 0 holds 23 21 2f 62 .*starts with \"KCOUNTLG\"$" \
  "$kcount" summary "$work/script.sh"
expect "summary --salvage: not a kcount log (nothing intact)" 2 "nothing intact" \
  "$kcount" summary --salvage "$work/script.sh"
expect "summary: empty file" 2 "not a kcount log: empty file \(0 bytes\)" "$kcount" summary "$work/empty.kcount"
expect "summary: unsupported version" 2 "unsupported version 2\.[0-9]+ \(this reader supports 1\.x\)" \
  "$kcount" summary "$work/v2.kcount"
expect "summary: cut tail" 2 "truncated at byte $((size - 1000)) in chunk [0-9]+" "$kcount" summary "$work/cut.kcount"
[[ ! -s $work/out ]] && { echo "PASS summary: cut tail prints no table"; pass=$((pass + 1)); } ||
  { echo "FAIL summary: cut tail printed a table without --salvage"; fail=$((fail + 1)); }
expect "summary --salvage: cut tail" 0 "" "$kcount" summary --salvage "$work/cut.kcount"
# The error once: under the table's footer, not also on stderr.
grep -q "^error: truncated at byte" "$work/out" && ! grep -q "truncated at byte" "$work/err" &&
  { echo "PASS summary --salvage lists the error under the footer only"; pass=$((pass + 1)); } ||
  { echo "FAIL summary --salvage: the error not under the footer, or on stderr too"; fail=$((fail + 1)); }
grep -q "^totals: " "$work/out" && { echo "PASS summary --salvage prints the intact part"; pass=$((pass + 1)); } ||
  { echo "FAIL summary --salvage printed no table"; fail=$((fail + 1)); }
expect "summary: flipped byte" 2 "checksum mismatch in chunk [0-9]+ at byte [0-9]+" "$kcount" summary "$work/flip.kcount"
expect "summary --salvage --format json: flipped byte" 0 "checksum mismatch" \
  "$kcount" summary --salvage --format json "$work/flip.kcount"
if "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); l=d["logs"][0]; assert any(i["severity"]=="error" and "checksum mismatch" in i["message"] for i in l["issues"]); assert l["totals"]["launches"] + l["totals"]["kernels"] > 0' "$work/out"; then
  echo "PASS salvaged JSON lists the error and the intact records"; pass=$((pass + 1))
else
  echo "FAIL salvaged JSON"; fail=$((fail + 1))
fi
expect "summary: ids whose definitions were lost" 2 \
  "string id [0-9]+ out of range \([0-9]+ strings defined\): [0-9]+ records refer to it" \
  "$kcount" summary "$work/flip.kcount"
expect "kernels: flipped byte" 2 "checksum mismatch" "$kcount" kernels "$work/flip.kcount"
expect "kernels --salvage: flipped byte" 0 "checksum mismatch" "$kcount" kernels --salvage "$work/flip.kcount"
expect "check: cut tail" 2 "" "$kcount" check "$work/cut.kcount"
grep -q "^DAMAGED" "$work/out" && { echo "PASS check says DAMAGED"; pass=$((pass + 1)); } ||
  { echo "FAIL check output: $(tail -3 "$work/out")"; fail=$((fail + 1)); }
expect "check --salvage: flipped byte (still exit 2, prints the intact part)" 2 "" \
  "$kcount" check --salvage "$work/flip.kcount"
grep -q "^intact part:" "$work/out" && { echo "PASS check --salvage prints the intact part"; pass=$((pass + 1)); } ||
  { echo "FAIL check --salvage printed no summary"; fail=$((fail + 1)); }
# Damaged chunks in a row (a payload byte flipped in chunks 1 and 2, the last two of the log's three): one error per chunk with its own
# number, and chunks read + skipped = chunks in the file.
"$py" - "$src" "$work/row.kcount" <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read()); off = 16; i = 0
while off + 32 <= len(d):
    h = 32 if d[off:off + 4] == b"CKHZ" else 24
    n = struct.unpack_from("<I", d, off + 4)[0]
    if i in (1, 2): d[off + h + min(50, n - 1)] ^= 0xff
    off += h + n; i += 1
open(sys.argv[2], "wb").write(d)
PYEOF
chunks=$("$kcount" check "$src" | sed -nE 's/.* ([0-9]+) chunks? read .*/\1/p')
expect "check: damaged chunks in a row" 2 "" "$kcount" check "$work/row.kcount"
if [[ $(grep -Ec "^error: checksum mismatch in chunk [12] at byte" "$work/out") -eq 2 ]] &&
   grep -Eq "^format version .*, ([0-9]+) chunks? read \([0-9]+ packed\), 2 chunks skipped" "$work/out" &&
   [[ $(sed -nE 's/.* ([0-9]+) chunks? read .*/\1/p' "$work/out") -eq $((chunks - 2)) ]]; then
  echo "PASS check names each damaged chunk, read + skipped = $chunks"; pass=$((pass + 1))
else
  echo "FAIL check on damaged chunks in a row ($chunks chunks): $(grep -E 'chunks|error' "$work/out" | head -5)"; fail=$((fail + 1))
fi
# A chunk header's record count flipped (the header is not covered by the checksum): damage, not OK.
cp "$src" "$work/count.kcount" && chmod u+w "$work/count.kcount"
"$py" -c 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[16+20]^=1; open(p,"wb").write(d)' "$work/count.kcount"
expect "check: record count of a chunk header flipped" 2 "" "$kcount" check "$work/count.kcount"
grep -q "^error: chunk 0 header announces [0-9]* records, its payload (checksum verified) holds" "$work/out" &&
  grep -q "^DAMAGED" "$work/out" && { echo "PASS check says DAMAGED for a bad record count"; pass=$((pass + 1)); } ||
  { echo "FAIL check on a bad record count: $(tail -3 "$work/out")"; fail=$((fail + 1)); }
expect "summary: intact log" 0 "" "$kcount" summary "$src"
expect "summary: intact and damaged log together" 2 "damaged log" "$kcount" summary "$src" "$work/cut.kcount"
# A byte flipped in the last chunk, which holds the End record: the End record was lost to damage, so
# nothing may say that the process did not close the log.
geglu=$root/examples/logs/geglu-eager.kcount
cp "$geglu" "$work/lastchunk.kcount" && chmod u+w "$work/lastchunk.kcount"
"$py" -c 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[-100]^=0xff; open(p,"wb").write(d)' "$work/lastchunk.kcount"
noend="log has no intact end record: the bytes from byte [0-9]+ to the end of the file \(chunk [0-9]+ on\) are damaged or cut short, and the end record may be among them; last intact chunk [0-9]+ ends at byte [0-9]+"
expect "summary: last chunk damaged: no intact end record" 2 "warning: $noend" "$kcount" summary "$work/lastchunk.kcount"
for cmd in summary check; do
  "$kcount" $cmd "$work/lastchunk.kcount" >"$work/out" 2>&1
  if grep -q "did not close" "$work/out"; then
    echo "FAIL $cmd of a damaged last chunk says the process did not close the log: $(grep 'did not close' "$work/out")"; fail=$((fail + 1))
  else
    echo "PASS $cmd of a damaged last chunk does not say the process did not close the log"; pass=$((pass + 1))
  fi
done
grep -Eq "^warning: $noend" "$work/out" && grep -q "^DAMAGED" "$work/out" &&
  { echo "PASS check: a damaged last chunk: no intact end record, DAMAGED"; pass=$((pass + 1)); } ||
  { echo "FAIL check on a damaged last chunk: $(grep -E '^(warning|error|DAMAGED)' "$work/out")"; fail=$((fail + 1)); }
# The log cut short (the user's head -c): the truncation makes it damaged (exit 2), so it is an error,
# and the --salvage texts point where the errors are: under the footer line on stdout, before the
# warning on stderr.
head -c 20000 "$geglu" >"$work/head.kcount"
expect "summary: cut short: the truncation is an error" 2 "^kcount: .*: error: truncated at byte 20000 in chunk" \
  "$kcount" summary "$work/head.kcount"
grep -q "warning: truncated" "$work/err" && { echo "FAIL truncation printed as a warning"; fail=$((fail + 1)); } ||
  { echo "PASS truncation is not called a warning"; pass=$((pass + 1)); }
"$kcount" summary --salvage "$work/head.kcount" >"$work/out" 2>/dev/null
foot=$(grep -n "^log DAMAGED" "$work/out" | cut -d: -f1)
errl=$(grep -n "^error: truncated at byte 20000" "$work/out" | cut -d: -f1)
if [[ -n $foot && -n $errl && $errl -gt $foot ]] &&
   grep -q "^log DAMAGED: numbers are from the intact part only (salvaged; see the errors listed below); no intact end record$" "$work/out"; then
  echo "PASS summary --salvage footer points at the errors listed below it"; pass=$((pass + 1))
else
  echo "FAIL summary --salvage footer: $(grep -nE '^(log|error|warning)' "$work/out")"; fail=$((fail + 1))
fi
"$kcount" kernels --salvage "$work/head.kcount" >/dev/null 2>"$work/err"
warn=$(grep -n "warning: log DAMAGED: .*(salvaged; see the errors above)" "$work/err" | cut -d: -f1)
errl=$(grep -n "error: truncated at byte 20000" "$work/err" | cut -d: -f1)
if [[ -n $warn && -n $errl && $errl -lt $warn ]]; then
  echo "PASS kernels --salvage: its state warning points at the errors printed above it"; pass=$((pass + 1))
else
  echo "FAIL kernels --salvage stderr: $(cat "$work/err")"; fail=$((fail + 1))
fi
# Each issue names its place once: no "(byte B, chunk K)" after a message that says where, and a second
# offset says what it is (the file's end, the cut chunk's start).
"$kcount" check "$work/head.kcount" "$root/tests/data/sigkill.kcount" "$work/row.kcount" >"$work/out" 2>&1
if grep -Eq "^error: truncated at byte 20000 in chunk [0-9]+, which starts at byte [0-9]+ \(payload needs" "$work/out" &&
   grep -q "ends at byte 14274$" "$work/out" && ! grep -Eq "\(byte [0-9]+(, chunk [0-9]+)?\)$" "$work/out"; then
  echo "PASS each issue names its place once"; pass=$((pass + 1))
else
  echo "FAIL issue places: $(grep -E '^(error|warning)' "$work/out")"; fail=$((fail + 1))
fi
# A file cut inside its 16-byte file header has no format version: check says the header is cut short.
head -c 10 "$src" >"$work/ten.kcount"
expect "check: cut inside the file header" 2 "" "$kcount" check "$work/ten.kcount"
if grep -q "^file header cut short (a header is 16 bytes): no format version, 10 bytes, 0 chunks read" "$work/out" &&
   grep -q "^error: truncated at byte 10 in the file header: the file is cut short (10 bytes, a file header is 16 bytes)$" "$work/out" &&
   ! grep -q "format version 0" "$work/out"; then
  echo "PASS check names a cut file header, no made-up version"; pass=$((pass + 1))
else
  echo "FAIL check of a 10-byte log: $(cat "$work/out")"; fail=$((fail + 1))
fi
# Output that cannot be written is an error too (a full disk: /dev/full).
if [[ -w /dev/full ]]; then
  for sub in summary kernels; do
    "$kcount" $sub "$src" >/dev/full 2>"$work/err"
    rc=$?
    if [[ $rc -eq 2 ]] && grep -q "cannot write to standard output" "$work/err"; then
      echo "PASS $sub > /dev/full: exit 2"; pass=$((pass + 1))
    else
      echo "FAIL $sub > /dev/full: exit $rc, stderr: $(cat "$work/err")"; fail=$((fail + 1))
    fi
  done
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
