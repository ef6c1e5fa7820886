#!/usr/bin/env bash
# KCOUNT_MAX_BYTES with KCOUNT_MAX_FILES on a real run of the library (an NVTX-only program, no GPU):
# every file at most the cap and filled until the last one, ranges in the files plus the ranges counted as
# not written equal to the ranges pushed, the closing line counts the ranges in the files (not those taken)
# and the Stats record and `summary`/`check` name the ranges not written; the warning names the right file; `kcount check` calls
# non-last parts OK when the part they continue in is given (PARTIAL alone), `summary` reads the parts as one run in any argument order and names a missing part;
# a taken name gets a duplicate name that keeps ".kcount".
# Usage: test_rotation.sh BUILD_DIR NVTX_PROGRAM
set -u
source "$(dirname "${BASH_SOURCE[0]}")/preload_test_lib.sh"

# Ranges of one file, from `kcount check` ("records: ... N ranges").
ranges_in() { "$kcount" check "$1" | sed -n 's/^records: .*, \([0-9]*\) ranges\{0,1\}$/\1/p'; }

# Steps enough to overflow three files whatever the chunks compress to (ranges of regular timing pack to
# about 0.3 bytes each: 300,000 steps once fitted in 3 x 64 KiB under load).
for cap_steps in 4096:20000 64K:1000000; do
  cap=${cap_steps%%:*}
  steps=${cap_steps##*:}
  bytes=$cap
  [[ $cap == 64K ]] && bytes=65536
  d=$work/cap-$cap
  mkdir -p "$d"
  KCOUNT_MAX_BYTES=$cap KCOUNT_MAX_FILES=3 KCOUNT_OUTPUT=$d/r.kcount NVTX_INJECTION64_PATH=$lib \
    "$nvtx_prog" "$steps" >/dev/null 2>"$d/err"
  files=("$d/r.kcount" "$d/r.1.kcount" "$d/r.2.kcount")
  # Ranges the program pushed: 2 per step, and 4 more (domain, ex, crossing, open at exit).
  pushed=$((2 * steps + 4))
  # The closing line: the ranges in the files, then what was kept out.
  closing=$(grep 'info: log: ' "$d/err")
  in_log=$(sed -n 's/.*log: .* ([0-9]* launches, [0-9]* kernels, \([0-9]*\) ranges.*/\1/p' <<<"$closing")
  not_written=$(sed -n 's/.*; not written: [0-9]* launches, [0-9]* kernels, \([0-9]*\) ranges.*/\1/p' <<<"$closing")
  if [[ $(ls "$d" | grep -c 'kcount$') -eq 3 && -s ${files[0]} && -s ${files[1]} && -s ${files[2]} ]]; then
    ok "$cap: three files r.kcount, r.1.kcount, r.2.kcount"
  else
    bad "$cap: files: $(ls -l "$d" | tr '\n' ' '); stderr: $(tr '\n' ' ' <"$d/err")"
    continue
  fi
  sizes_ok=1
  in_files=0
  for f in "${files[@]}"; do
    s=$(stat -c %s "$f")
    # At most the cap, and filled: no more than the writer's reserve and one chunk's slack left.
    if (( s > bytes || s < bytes - 1024 )); then sizes_ok=0; fi
    in_files=$((in_files + $(ranges_in "$f")))
  done
  if [[ $sizes_ok -eq 1 ]]; then ok "$cap: each file at most $bytes bytes and filled ($(stat -c %s "${files[@]}" | tr '\n' ' '))"
  else bad "$cap: sizes $(stat -c %s "${files[@]}" | tr '\n' ' ') for a cap of $bytes"; fi
  if [[ $in_log == "$in_files" && -n $not_written && $((in_files + not_written)) -eq $pushed ]]; then
    ok "$cap: closing line: $in_files ranges (those in the files) + $not_written not written == $pushed pushed"
  else
    bad "$cap: in files $in_files, closing line '$in_log' ranges and '$not_written' not written, pushed $pushed; stderr: $(tr '\n' ' ' <"$d/err")"
  fi
  # summary's footer, check's DROPS line and the JSON name the ranges not written (the Stats record's count).
  foot=$("$kcount" summary "${files[@]}" | grep '^log complete but LOSSY')
  drops=$("$kcount" check "${files[@]}" | grep '^DROPS:')
  json_nw=$("$kcount" summary --format json "${files[@]}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["logs"][0]["drops"]["counters"].get("not_written_ranges"))')
  if [[ $foot == *"ranges not written: $not_written (in the bytes not written)"* &&
        $drops == *"ranges not written: $not_written (in the bytes not written)"* && $json_nw == "$not_written" ]]; then
    ok "$cap: summary footer, check DROPS and JSON drops name the $not_written ranges not written"
  else
    bad "$cap: records not written by kind: footer '$foot' DROPS '$drops' json '$json_nw'"
  fi
  # Parts numbered from 0 as the tools number them: the third file, r.2.kcount, is part 2.
  if grep -q "log $d/r.2.kcount (part 2, its last: KCOUNT_MAX_FILES=3 allows parts 0..2) is full at KCOUNT_MAX_BYTES=$bytes" "$d/err" &&
     grep -q "from part 2 ($d/r.2.kcount) on" "$d/err" && ! grep -q "r.kcount (part\|r.1.kcount (part\|file [0-9]" "$d/err" &&
     "$kcount" check "${files[2]}" | grep -q "records_not_written = .*, from part 2 on, at KCOUNT_MAX_BYTES"; then
    ok "$cap: the warning and the closing line name the last file as part 2 (of parts 0..2), as kcount does"
  else
    bad "$cap: warning text: $(tr '\n' ' ' <"$d/err")"
  fi
  # check: part 0 alone lacks the part it continues in, parts 1 and 2 alone lack part 0 (all PARTIAL,
  # exit 1, none damaged or incomplete); the last part is closed (End record) with drops.
  out0=$("$kcount" check "${files[0]}"); rc0=$?
  out1=$("$kcount" check "${files[1]}"); rc1=$?
  out2=$("$kcount" check "${files[2]}"); rc2=$?
  if [[ $rc0 -eq 1 && $rc1 -eq 1 && $out0 == *"PARTIAL: rotated part 0, continued in part 1 (not given)"* &&
        $out1 == *"PARTIAL: rotated part 1; part 0 not given, continued in part 2 (not given)"* && $out0 != *INCOMPLETE* &&
        $rc2 -eq 1 && $out2 == *"records_not_written = not written:"* && $out2 != *"no end record"* &&
        $out2 == *"PARTIAL: rotated part 2; parts 0..1 not given; the numbers cover this part only"*"LOSSY"* ]]; then
    ok "$cap: check: parts 0, 1 and 2 alone PARTIAL (exit 1), the last one's drops named"
  else
    bad "$cap: check exit $rc0 $rc1 $rc2: $(echo "$out0" | tail -1) / $(echo "$out1" | tail -1) / $(echo "$out2" | tail -1)"
  fi
  # check of every part (any order): the run is whole, so no part is PARTIAL; exit 1 for the drops only.
  out=$("$kcount" check "${files[2]}" "${files[1]}" "${files[0]}"); rc=$?
  if [[ $rc -eq 1 && $out != *PARTIAL* && $out == *"OK: rotated part 1, continued in part 2"* &&
        $out == *"OK: rotated part 0, continued in part 1"* && $out == *"COMPLETE BUT LOSSY"* ]]; then
    ok "$cap: check of all parts: parts 1 and 2 not PARTIAL (their earlier parts were given), the drops still exit 1"
  else
    bad "$cap: check of all parts: exit $rc: $(grep -E '^(OK|PARTIAL|COMPLETE)' <<<"$out" | tr '\n' ' ')"
  fi
  # summary: the parts in any order are one run.
  sum=$("$kcount" summary "${files[2]}" "${files[0]}" "${files[1]}"); rc=$?
  if [[ $rc -eq 0 && $(grep -c '^== ' <<<"$sum") -eq 1 && $sum == *"(3 rotated files joined)"* &&
        $sum == *"== ${files[0]} + ${files[1]} + ${files[2]}"* && $sum != *"across"* ]]; then
    ok "$cap: summary of the three files in another order: one run, parts in order"
  else
    bad "$cap: summary exit $rc: $(head -3 <<<"$sum" | tr '\n' ' ')"
  fi
  steps_json=$("$kcount" summary --format json "$d"/r*.kcount | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(len(j["logs"]))')
  if [[ $steps_json == 1 ]]; then ok "$cap: summary --format json of r*.kcount: one log"; else bad "$cap: json logs: $steps_json"; fi
  err=$("$kcount" summary "${files[0]}" "${files[2]}" 2>&1 >/dev/null); rc=$?
  if [[ $rc -eq 0 && $err == *"rotated run: part 1 not given"* ]]; then ok "$cap: a missing part is named (partial, exit 0)"
  else bad "$cap: missing part: exit $rc: $err"; fi
  # The last part alone: not "log complete"; JSON state "rotated part".
  sum=$("$kcount" summary "${files[2]}"); rc=$?
  state=$("$kcount" summary --format json "${files[2]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["logs"][0]["state"])')
  if [[ $sum == *"rotated part 2; parts 0..1 not given"* && $sum != *"log complete"* && $state == "rotated part" ]]; then
    ok "$cap: the last part alone: footer and JSON state say rotated part 2, parts 0..1 not given"
  else bad "$cap: last part alone: exit $rc state '$state': $(tail -2 <<<"$sum" | tr '\n' ' ')"; fi
  # kernels, export, report and each side of diff name the lossy (and partial) last part on stderr.
  err=$("$kcount" kernels "${files[2]}" 2>&1 >/dev/null)
  err_x=$("$kcount" export --format json -o "$d/x.json" "${files[2]}" 2>&1 >/dev/null)
  err_r=$("$kcount" report -o "$d/x.html" "${files[2]}" 2>&1 >/dev/null)
  if [[ $err == *"warning: rotated part 2; parts 0..1 not given"*"LOSSY"* && $err_x == *"rotated part 2"* &&
        $err_r == *"rotated part 2"* ]] && grep -q 'rotated part 2; parts 0..1 not given' "$d/x.html"; then
    ok "$cap: kernels, export and report warn about the partial, lossy last part (and the page shows it)"
  else bad "$cap: state warnings: kernels '$err' export '$err_x' report '$err_r'"; fi
  # The same file twice is read once; diff of two parts of one run warns.
  sum=$("$kcount" summary "${files[0]}" "$d/./r.kcount" "${files[1]}" "${files[2]}" 2>"$d/dup.err")
  if [[ $(grep -c '^== ' <<<"$sum") -eq 1 && $sum == *"(3 rotated files joined)"* ]] && grep -q "given twice): read once" "$d/dup.err"; then
    ok "$cap: a file given twice is named and read once (one joined run)"
  else bad "$cap: file twice: $(grep '^== ' <<<"$sum" | tr '\n' ' ') $(tr '\n' ' ' <"$d/dup.err")"; fi
  err=$("$kcount" diff "${files[0]}" "${files[1]}" 2>&1 >/dev/null)
  if [[ $err == *"are parts of one rotated run"* ]]; then ok "$cap: diff of two parts of one run warns"
  else bad "$cap: diff of two parts: '$err'"; fi
  err=$("$kcount" summary "${files[0]}" "${files[1]}" 2>&1 >/dev/null); rc=$?
  if [[ $rc -eq 0 && $err == *"rotated run continues in part 2 (not given): the numbers cover parts 0..1 only"* ]]; then ok "$cap: a missing last part is named (partial, not damage: exit 0)"
  else bad "$cap: missing last part: exit $rc: $err"; fi
done

# Duplicate names keep ".kcount" and do not collide with rotated parts.
d=$work/dup
mkdir -p "$d"
for i in 1 2; do
  KCOUNT_OUTPUT=$d/same.kcount NVTX_INJECTION64_PATH=$lib "$nvtx_prog" 10 >/dev/null 2>"$d/err$i"
done
KCOUNT_MAX_BYTES=4096 KCOUNT_MAX_FILES=2 KCOUNT_OUTPUT=$d/same.kcount NVTX_INJECTION64_PATH=$lib "$nvtx_prog" 20000 \
  >/dev/null 2>"$d/err3"
names=$(cd "$d" && ls *.kcount | tr '\n' ' ')
if [[ $names == "same-1.kcount same-2.kcount same-2.1.kcount same.kcount " || $names == "same-1.kcount same-2.1.kcount same-2.kcount same.kcount " ]] &&
   "$kcount" check "$d/same-1.kcount" >/dev/null; then
  ok "taken names: same-1.kcount, then same-2.kcount rotated into same-2.1.kcount; all match *.kcount"
else
  bad "duplicate names: $names; $(cat "$d"/err* | tr '\n' ' ')"
fi
# A rotated run with room for every file (no drops), every part given: OK, exit 0. 8000 steps give at
# least three parts (3000 steps gave 7.9 to 8.5 KB, sometimes only 2 files, and the parts 0..2 used below).
w=$work/whole
mkdir -p "$w"
KCOUNT_MAX_BYTES=4096 KCOUNT_MAX_FILES=1000 KCOUNT_OUTPUT=$w/r.kcount NVTX_INJECTION64_PATH=$lib "$nvtx_prog" 8000 \
  >/dev/null 2>"$w/err"
last=$(cd "$w" && ls r.*.kcount | sort -t. -k2 -n | tail -1)
k=$(cut -d. -f2 <<<"$last")
out=$("$kcount" check "$w"/*.kcount); rc=$?
if [[ $k -ge 2 && $rc -eq 0 && $out == *"OK: rotated part $k, the last (parts 0..$((k - 1)) given too)"* && $out != *PARTIAL* ]]; then
  ok "check of all $((k + 1)) parts of a run without drops: OK, exit 0"
else
  bad "check of all parts ($last): exit $rc: $(grep -E '^(OK|PARTIAL|COMPLETE|DROPS)' <<<"$out" | tr '\n' ' ')"
fi
out=$("$kcount" summary "$d"/*.kcount); rc=$?
if [[ $rc -eq 0 && $(grep -c "^== $d" <<<"$out") -eq 3 ]]; then ok "summary of *.kcount: three runs (the rotated one joined)"
else bad "summary of the duplicates: exit $rc, $(grep '^== ' <<<"$out" | tr '\n' ' ')"; fi

# A middle part cut short after the run (copied with a size limit, truncated): the run went on in part 2,
# so part 1 is a damaged part, not "crash, kill, a write that failed such as a full disk, or still running"; its last part, cut, is still a crash.
c=$work/cut
mkdir -p "$c"
cp "$w/r.kcount" "$w/r.1.kcount" "$w/r.2.kcount" "$c/"
truncate -s -100 "$c/r.1.kcount"
out=$("$kcount" check "$c/r.1.kcount"); rc=$?
if [[ $rc -eq 2 && $out == *"error: rotated part 1 is cut short: it has no end record and was not closed for rotation (no continued_in_file key), yet part 2 of the same run ($c/r.2.kcount) follows it"* &&
      $out != *"crash, kill"* && $(tail -1 <<<"$out") == DAMAGED ]]; then
  ok "check of a truncated middle part (part 2 beside it): cut short, a damaged part of the run (exit 2)"
else
  bad "truncated middle part: exit $rc: $(grep -E '^(error|warning|DAMAGED|INCOMPLETE)' <<<"$out" | tr '\n' ' ')"
fi
err=$("$kcount" summary "$c/r.kcount" "$c/r.1.kcount" "$c/r.2.kcount" 2>&1 >/dev/null); rc=$?
if [[ $rc -eq 2 && $err == *"part 1 ($c/r.1.kcount): rotated part 1 is cut short"* && $err != *"crash, kill"* ]]; then
  ok "summary of the parts with part 1 truncated: part 1 named as cut short (exit 2)"
else bad "summary with part 1 truncated: exit $rc: $err"; fi
# Cut at a chunk boundary (nothing half-written): still no end record and no continued_in_file key.
at=$(sed -n 's/.*last intact chunk [0-9]* ends at byte \([0-9]*\).*/\1/p' <<<"$out" | head -1)
truncate -s "${at:-0}" "$c/r.1.kcount"
out=$("$kcount" check "$c/r.1.kcount"); rc=$?
if [[ -n $at && $rc -eq 2 && $out == *"rotated part 1 is cut short"* && $out != *"truncated at byte"* && $out != *"crash, kill"* ]]; then
  ok "check of a middle part cut at a chunk boundary (byte $at): cut short, exit 2"
else bad "middle part cut at byte '$at': exit $rc: $(grep -E '^(error|warning|DAMAGED|INCOMPLETE)' <<<"$out" | tr '\n' ' ')"; fi
rm "$c/r.2.kcount"
out=$("$kcount" check "$c/r.1.kcount"); rc=$?
if [[ $rc -eq 1 && $out == *"crash, kill, a write that failed such as a full disk, or still running"* && $out != *"cut short"* ]]; then
  ok "the same file without a later part beside it: the run may have ended there (no end record, exit 1)"
else bad "cut part without later part: exit $rc: $(grep -E '^(error|warning|PARTIAL|INCOMPLETE)' <<<"$out" | tr '\n' ' ')"; fi

# A command line too long for the first file at the smallest cap: the run's identity (host, pid, start_ns)
# still goes into part 0, so the parts join as one run (the command line moves to part 1's preamble).
l=$work/long-cmdline
mkdir -p "$l"
long_arg=$(printf 'A%.0s' $(seq 3800))
KCOUNT_MAX_BYTES=4096 KCOUNT_MAX_FILES=3 KCOUNT_OUTPUT=$l/r.kcount NVTX_INJECTION64_PATH=$lib \
  "$nvtx_prog" 2000 normal "$long_arg" >/dev/null 2>"$l/err"
out=$("$kcount" summary "$l/r.kcount" "$l/r.1.kcount" "$l/r.2.kcount" 2>&1); rc=$?
if [[ $rc -le 1 && $out == *"rotated files joined"* && $out != *"not given"* && $out != *"rotated run continues"* ]] &&
   "$kcount" check "$l/r.kcount" | grep -q '^  start_ns = '; then
  ok "a 3800-byte command line at KCOUNT_MAX_BYTES=4096: part 0 holds the run's identity, the parts join"
else bad "long command line: exit $rc: $(grep -E 'warning|joined|error' <<<"$out" | tr '\n' ' ')"; fi

# Many distinct range names ("step 0", "step 1", ...) under a small cap, files enough for the whole run:
# each part holds the definitions of its own records only, so every part has ranges and reads alone, and
# the parts read together give the ranges of the same run unrotated.
n=$work/distinct
mkdir -p "$n/rot" "$n/one"
KCOUNT_MAX_BYTES=16K KCOUNT_MAX_FILES=1000 KCOUNT_OUTPUT=$n/rot/r.kcount NVTX_INJECTION64_PATH=$lib \
  "$nvtx_prog" 20000 distinct >/dev/null 2>"$n/err"
KCOUNT_OUTPUT=$n/one/r.kcount NVTX_INJECTION64_PATH=$lib "$nvtx_prog" 20000 distinct >/dev/null 2>"$n/err1"
# Range instances of every row of summary's JSON.
instances() { "$kcount" summary --format json "$@" 2>/dev/null | python3 -c '
import json, sys
print(sum(r["instances"] for r in json.load(sys.stdin)["logs"][0]["ranges"]))'; }
parts=("$n/rot/r.kcount")
for ((k = 1; ; ++k)); do [[ -f $n/rot/r.$k.kcount ]] || break; parts+=("$n/rot/r.$k.kcount"); done
alone_ok=1
for f in "${parts[@]}"; do
  out=$("$kcount" check "$f"); rc=$?
  r=$(ranges_in "$f")
  strings=$(sed -n 's/^records: \([0-9]*\) strings.*/\1/p' <<<"$out")
  # Alone: partial (exit 1 but for the last part), never damaged; ranges in it; the names of some 4000
  # steps at most, not the run's 20000.
  if [[ $rc -eq 2 || -z $r || $r -eq 0 || -z $strings || $strings -ge 10000 ]] || ! "$kcount" summary "$f" >/dev/null 2>&1 ||
     ! "$kcount" kernels "$f" >/dev/null 2>&1; then
    alone_ok=0
    echo "  $f: check exit $rc, $r ranges, $strings strings: $(grep -E '^(records|error)' <<<"$out" | tr '\n' ' ')"
  fi
done
want=$(instances "$n/one/r.kcount")
got=$(instances "${parts[@]}")
if [[ ${#parts[@]} -ge 4 && $alone_ok -eq 1 ]]; then
  ok "distinct names at 16K: ${#parts[@]} parts, each with ranges and its own names only, each read alone (check, summary, kernels)"
else bad "distinct names at 16K: ${#parts[@]} parts; stderr: $(tr '\n' ' ' <"$n/err")"; fi
out=$("$kcount" check "${parts[@]}"); rc=$?
if [[ $rc -eq 0 && $out != *PARTIAL* && $out != *error* && -n $want && $got == "$want" && $want -eq 40004 ]]; then
  ok "distinct names: the ${#parts[@]} parts read as one run (check OK) with the $want range instances of the run unrotated"
else bad "distinct names: check exit $rc, instances $got of $want: $(grep -E '^(error|PARTIAL|DAMAGED)' <<<"$out" | head -3 | tr '\n' ' ')"; fi

finish rotation
