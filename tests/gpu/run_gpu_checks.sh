#!/usr/bin/env bash
# Every kcount check that needs a CUDA GPU, in one command:
#
#     bash tests/gpu/run_gpu_checks.sh [BUILD_DIR]        (BUILD_DIR defaults to "build")
#
# Uses BUILD_DIR/bin/kcount and BUILD_DIR/lib/libkcount.so. Logs, summaries (JSON) and each program's
# stdout/stderr go to ${OUT:-/tmp/kcount-gpu}. Set PYTHON to use another interpreter than python3.
# Keeps going after a failing check, prints a table last, exits 1 if any check failed.
#
# Rows:
#   a  linear eager          step x20: 20 launches, 20 kernels; step/linear one GEMM with "bias"
#   b  geglu eager           step x20: 100 kernels; gate/up/down one GEMM each; act 2 pointwise kernels
#   c  geglu compiled        step x20: 80 kernels; same GEMM names as (b) byte for byte + 1 triton_ kernel
#   d  last step             geglu eager --steps 1 --warmup 3: step kernels == 5 (no sync before exit)
#   e  torch.profiler        kernels per step of linear/geglu eager/geglu compiled equal kcount's (1, 5, 4)
#   f  --inject cuda         (b) again through CUDA_INJECTION64_PATH: step subtree identical to (b)
#   g  one libcupti          only one libcupti file mapped in a profiled PyTorch process
#   i  C++ launch paths    runtime, cuLaunchKernel, graph replay, 4 threads, exit without sync: exact
#   l  packed log format 1.4 the log of (i) is format 1.4, every chunk packed (zstd), under 16 bytes per kernel
#   h  no GPU work           LD_PRELOAD on python3 -c 'print(1)' and /bin/true: same output, no log file
#   j  one log per run       no run above left a second log (e.g. from torch.compile's worker processes)
#   k1..k10                  attribution cases (tests/gpu/cases/, docs/attribution.md)
#   x  feature checks        one row per script, each with its own table in the output (below):
#        control       tests/gpu/check_control.sh        paused start, kcount ctl windows, capture ranges
#        summary-mode  tests/gpu/check_summary_mode.sh   KCOUNT_MODE=summary vs trace, bounded log size
#        gpu-time      tests/gpu/check_gpu_time.sh       KCOUNT_GPU_TIME=0 kernels named at launch = trace's
#        torch-modules tests/gpu/check_torch_modules.sh  --torch-modules/--torch-ops on a Llama-style model
#        run-edges     tests/gpu/check_run_edges.sh      exec and SIGINT close the log; ctl start before CUDA init
#        rotation      tests/gpu/check_rotation.sh       KCOUNT_MAX_BYTES parts joined = one uncapped run; drops counted
#        ab-floor      tests/gpu/check_ab_floor.sh       same-process kcount vs floor switching, exact counts
#        host-clock    tests/gpu/check_host_clock.sh     TSC timestamps: counts as with clock_gettime, no kernel before its launch
#        server        tests/gpu/check_server.sh         example inference server, paused + ctl window: decode kernels = graph nodes
#        launch-callbacks tests/gpu/check_launch_callbacks.sh KCOUNT_LAUNCH_CALLBACKS=driver: gpu-time's rows, exact
#        profiler-graphs  tests/gpu/check_profiler_graphs.sh  count-only graph kernels per range and name = torch.profiler's
#        graph-gpu-time   tests/gpu/check_graph_gpu_time.sh   KCOUNT_GPU_TIME=graphs: exact counts, one GPU span per graph launch
#        range-cost       tests/gpu/check_range_cost.sh       kcount's own callbacks per range, exact (trace/summary, all/driver)
#
# GPU_CHECKS selects parts (a device call has a time limit): "core" (rows a..k10) and the feature names
# above; default "core control summary-mode gpu-time torch-modules run-edges rotation ab-floor host-clock server
# launch-callbacks profiler-graphs graph-gpu-time range-cost". Each feature script writes into $OUT/<name>/.

set -u

GPU_CHECKS=${GPU_CHECKS:-core control summary-mode gpu-time torch-modules run-edges rotation ab-floor host-clock server launch-callbacks profiler-graphs graph-gpu-time range-cost}
want_part() { [[ " $GPU_CHECKS " == *" $1 "* ]]; }
BUILD_DIR=${1:-build}
OUTDIR=${OUT:-/tmp/kcount-gpu}
PY=${PYTHON:-python3}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD_DIR=$(cd "$BUILD_DIR" 2>/dev/null && pwd || echo "$BUILD_DIR")
KCOUNT=$BUILD_DIR/bin/kcount
LIB=$BUILD_DIR/lib/libkcount.so
CHECK=("$PY" "$REPO/tests/gpu/check_summary.py")
EX=$REPO/examples
STEPS=20

mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

ROW_NAMES=()
ROW_STATUS=()
ROW_DETAIL=()
FAILED=0

add_row() {  # name status detail
  ROW_NAMES+=("$1")
  ROW_STATUS+=("$2")
  ROW_DETAIL+=("$3")
  [[ $2 == PASS ]] || FAILED=1
  echo "==> $1: $2 $3"
}

show_tail() {  # tag: last 20 lines of the captured stdout/stderr
  local f
  for f in "$OUTDIR/$1.stdout.txt" "$OUTDIR/$1.stderr.txt"; do
    if [[ -s $f ]]; then
      echo "---- last 20 lines of $f"
      tail -n 20 "$f"
    fi
  done
}

run_cmd() {  # tag cmd...: print, run, capture; returns the command's exit status
  local tag=$1; shift
  echo
  echo "+ $*"
  "$@" >"$OUTDIR/$tag.stdout.txt" 2>"$OUTDIR/$tag.stderr.txt"
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "!! exit status $rc"
    show_tail "$tag"
  fi
  return $rc
}

# kcount_run TAG INJECT_MODE(-|preload|cuda) PROGRAM_ARGS...
# Runs the program under `kcount run`, renames the process's log to $OUTDIR/TAG.kcount and writes its
# summary to $OUTDIR/TAG.json. On failure sets RUN_ERR (and returns 1).
RUN_ERR=""
EXTRA_LOGS=()
describe_log() {  # one line: pid, launches, kernels, ranges, command line of a log
  "$KCOUNT" summary --format json "$1" 2>/dev/null | "$PY" -c '
import json, sys
try:
    log = json.load(sys.stdin)["logs"][0]
    m, t = log.get("metadata", {}), log.get("totals", {})
    print("%s pid=%s launches=%s kernels=%s ranges=%d cmd=%s" % (
        sys.argv[1].rsplit("/", 1)[-1], m.get("pid"), t.get("launches"), t.get("kernels"),
        len(log.get("ranges", [])) - 1, m.get("command_line", "?")[:100]))
except Exception as exc:
    print("%s (unreadable: %s)" % (sys.argv[1].rsplit("/", 1)[-1], exc))
' "$1"
}
kcount_run() {
  local tag=$1 inject=$2; shift 2
  RUN_ERR=""
  rm -f "$OUTDIR/tmp-$tag-"*.kcount "$OUTDIR/$tag.extra-"*.kcount "$OUTDIR/$tag.kcount" "$OUTDIR/$tag.json"
  local cmd=("$KCOUNT" run)
  [[ $inject == - ]] || cmd+=(--inject "$inject")
  cmd+=(--output "$OUTDIR/tmp-$tag-%p.kcount" -- "$@")
  local rc
  run_cmd "$tag" "${cmd[@]}"
  rc=$?
  [[ $rc -eq ${WANT_RC:-0} ]] || RUN_ERR="kcount run exit status $rc (want ${WANT_RC:-0})"
  # The log: among the files kcount run names on stderr ("kcount: log: PATH") and the files matching
  # the pattern, the largest (the process that ran the kernels); more than one file is an error below.
  local logs=() named="" f size best=-1
  for f in "$OUTDIR/tmp-$tag-"*.kcount; do [[ -e $f ]] && logs+=("$f"); done
  while IFS= read -r f; do
    [[ -f $f ]] && logs+=("$f")
  done < <(sed -n 's/^.*kcount: log: //p' "$OUTDIR/$tag.stderr.txt")
  for f in "${logs[@]}"; do
    size=$(stat -c %s "$f" 2>/dev/null || echo 0)
    if [[ $size -gt $best ]]; then best=$size; named=$f; fi
  done
  # A file named twice (pattern and stderr) counts once.
  mapfile -t logs < <(for f in "${logs[@]}"; do realpath "$f"; done | sort -u)
  if [[ -z $named ]]; then
    RUN_ERR="${RUN_ERR:+$RUN_ERR; }no log found (${#logs[@]} files match tmp-$tag-*.kcount)"
    return 1
  fi
  named=$(realpath "$named")
  # Other logs of the same run (e.g. torch.compile's compile workers): kept as TAG.extra-N.kcount and
  # reported by row "j" (only the process that ran the GPU work should write a log).
  local n=0
  for f in "${logs[@]}"; do
    [[ $f == "$named" ]] && continue
    n=$((n + 1))
    mv -f "$f" "$OUTDIR/$tag.extra-$n.kcount"
    EXTRA_LOGS+=("$tag: $(describe_log "$OUTDIR/$tag.extra-$n.kcount")")
  done
  mv -f "$named" "$OUTDIR/$tag.kcount"
  echo "   log: $OUTDIR/$tag.kcount"
  if ! run_cmd "$tag-summary" "$KCOUNT" summary --format json "$OUTDIR/$tag.kcount"; then
    RUN_ERR="${RUN_ERR:+$RUN_ERR; }kcount summary failed"
    return 1
  fi
  cp "$OUTDIR/$tag-summary.stdout.txt" "$OUTDIR/$tag.json"
  [[ -z $RUN_ERR ]]
}

check_row() {  # row-name prefix-detail check_summary-args...: runs the checker, adds a row
  local row=$1 pre=$2; shift 2
  local out line rc
  echo "+ check_summary.py $*"
  out=$("${CHECK[@]}" "$@" 2>&1)
  rc=$?
  line=$(printf '%s\n' "$out" | tail -n 1)
  local status=${line%% *} detail=${line#* }
  if [[ $rc -ne 0 || $status != PASS ]]; then status=FAIL; fi
  if [[ -n $pre ]]; then
    status=FAIL
    detail="$pre | $detail"
  fi
  add_row "$row" "$status" "$detail"
}

# The table of every row so far, then exit: 1 if any row failed, else 0.
print_table_and_exit() {
  echo
  echo "kcount GPU checks ($OUTDIR)"
  printf '%-34s %-5s %s\n' CHECK RESULT DETAILS
  for i in "${!ROW_NAMES[@]}"; do
    printf '%-34s %-5s %s\n' "${ROW_NAMES[$i]}" "${ROW_STATUS[$i]}" "${ROW_DETAIL[$i]}"
  done
  if [[ $FAILED -ne 0 ]]; then
    echo "RESULT: FAIL"
    exit 1
  fi
  echo "RESULT: PASS"
  exit 0
}

echo "kcount GPU checks: kcount=$KCOUNT lib=$LIB out=$OUTDIR python=$PY"

if want_part core; then

# ---- setup
setup_err=""
[[ -x $KCOUNT ]] || setup_err+="no $KCOUNT; "
[[ -f $LIB ]] || setup_err+="no $LIB; "
if run_cmd setup "$PY" -c 'import torch; assert torch.cuda.is_available(); print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))'; then
  add_row "0 setup" "$([[ -z $setup_err ]] && echo PASS || echo FAIL)" "${setup_err}torch $(head -n 1 "$OUTDIR/setup.stdout.txt")"
else
  add_row "0 setup" FAIL "${setup_err}torch with CUDA not available"
  # Every check below needs CUDA: stop here rather than fail each of them (minutes on a machine without a GPU).
  print_table_and_exit
fi

# ---- a: linear eager
kcount_run linear-eager - "$PY" "$EX/linear.py" --steps $STEPS
check_row "a linear eager" "$RUN_ERR" linear "$OUTDIR/linear-eager.json" --steps $STEPS

# ---- b: geglu eager
kcount_run geglu-eager - "$PY" "$EX/geglu.py" --steps $STEPS
check_row "b geglu eager" "$RUN_ERR" geglu-eager "$OUTDIR/geglu-eager.json" --steps $STEPS

# ---- c: geglu compiled
kcount_run geglu-compiled - "$PY" "$EX/geglu.py" --compile --steps $STEPS
check_row "c geglu compiled" "$RUN_ERR" geglu-compiled "$OUTDIR/geglu-compiled.json" \
  --eager "$OUTDIR/geglu-eager.json" --steps $STEPS

# ---- d: the last step before exit is attributed exactly
kcount_run geglu-last-step - "$PY" "$EX/geglu.py" --steps 1 --warmup 3
check_row "d last step exact" "$RUN_ERR" last-step "$OUTDIR/geglu-last-step.json" --steps 1 --per-step 5

# ---- e: torch.profiler (without kcount) agrees on kernels per step
e_run() {  # row tag expect kcount-summary program-args...
  local row=$1 tag=$2 expect=$3 summary=$4; shift 4
  rm -f "$OUTDIR/$tag.json"
  local err=""
  run_cmd "$tag" "$PY" "$@" --steps $STEPS --torch-profiler "$OUTDIR/$tag.json" || err="example exit status $?"
  check_row "$row" "$err" torch-agree "$OUTDIR/$tag.json" "$summary" --expect "$expect"
}
e_run "e torch.profiler linear" torch-linear-eager 1 "$OUTDIR/linear-eager.json" "$EX/linear.py"
e_run "e torch.profiler geglu" torch-geglu-eager 5 "$OUTDIR/geglu-eager.json" "$EX/geglu.py"
e_run "e torch.profiler geglu compiled" torch-geglu-compiled 4 "$OUTDIR/geglu-compiled.json" \
  "$EX/geglu.py" --compile

# ---- f: CUDA_INJECTION64_PATH mode gives the same step subtree as (b)
kcount_run geglu-eager-inject-cuda cuda "$PY" "$EX/geglu.py" --steps $STEPS
check_row "f --inject cuda = b" "$RUN_ERR" same-subtree "$OUTDIR/geglu-eager.json" \
  "$OUTDIR/geglu-eager-inject-cuda.json" --root step

# ---- g: one libcupti in the process
kcount_run maps-probe - "$PY" "$REPO/tests/gpu/maps_probe.py" "$EX/geglu.py" --steps 2
check_row "g one libcupti" "$RUN_ERR" maps "$OUTDIR/maps-probe.stdout.txt"

# ---- i: C++ launch paths (runtime <<<>>>, cuLaunchKernel, CUDA graph, 4 threads, exit without sync)
LAUNCHES_BIN=$OUTDIR/launches
if run_cmd nvcc-launches nvcc -O2 -arch=sm_90 -I"$REPO" "$REPO/tests/gpu/launches.cu" -lcuda -o "$LAUNCHES_BIN"; then
  kcount_run launches - "$LAUNCHES_BIN"
  check_row "i C++ launch paths" "$RUN_ERR" expect "$OUTDIR/launches.json" \
    runtime:instances=1 runtime:exclusive.launches=1000 runtime:exclusive.kernels=1000 \
    driver:exclusive.launches=500 driver:exclusive.kernels=500 \
    capture:exclusive.kernels=0 \
    replay:exclusive.launches=100 replay:exclusive.graph_launches=100 replay:exclusive.kernels=500 \
    worker:instances=4 worker:exclusive.launches=8000 worker:exclusive.kernels=8000 \
    exit:exclusive.launches=50 exit:exclusive.kernels=50
  kcount_run launches-inject-cuda cuda "$LAUNCHES_BIN"
  check_row "i C++ launch paths (--inject cuda)" "$RUN_ERR" expect "$OUTDIR/launches-inject-cuda.json" \
    runtime:exclusive.kernels=1000 driver:exclusive.kernels=500 replay:exclusive.kernels=500 \
    worker:exclusive.kernels=8000 exit:exclusive.kernels=50
  # ---- l: the library writes format 1.4 (packed zstd chunks and compact batches since 1.2); a few bytes per kernel
  l_log=$OUTDIR/launches.kcount
  if [[ -f $l_log ]]; then
    "$KCOUNT" check "$l_log" >"$OUTDIR/launches-check.txt" 2>&1
    l_rc=$?
    l_head=$(sed -n 's/^format version \([0-9.]*\), \([0-9]*\) bytes\{0,1\}, \([0-9]*\) chunks\{0,1\} read (\([0-9]*\) packed).*/\1 \2 \3 \4/p' "$OUTDIR/launches-check.txt")
    read -r l_ver l_bytes l_chunks l_packed <<<"$l_head"
    l_kernels=$(sed -n 's/^records: .* \([0-9]*\) kernels, .*/\1/p' "$OUTDIR/launches-check.txt")
    l_bpk=$(awk -v b="${l_bytes:-0}" -v k="${l_kernels:-0}" 'BEGIN { if (k > 0) printf "%.2f", b / k; else print "inf" }')
    if [[ $l_rc -eq 0 && $l_ver == 1.4 && ${l_chunks:-0} -gt 0 && $l_packed == "$l_chunks" ]] &&
       awk -v x="$l_bpk" 'BEGIN { exit !(x < 16) }'; then
      add_row "l packed log format 1.4" PASS "$l_chunks chunks all packed, $l_bytes bytes for $l_kernels kernels: $l_bpk B/kernel (launches and ranges included)"
    else
      add_row "l packed log format 1.4" FAIL "check exit $l_rc, version ${l_ver:-?}, chunks ${l_chunks:-?} (${l_packed:-?} packed), $l_bpk B/kernel (want 1.4, all packed, < 16)"
    fi
  else
    add_row "l packed log format 1.4" FAIL "no log $l_log"
  fi
else
  add_row "i C++ launch paths" FAIL "nvcc failed"
fi

# ---- h: no CUDA, no NVTX: the preloaded library changes nothing and writes nothing
h_run() {  # row tag expected-stdout cmd...
  local row=$1 tag=$2 want=$3; shift 3
  local tmp errs="" rc files
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/kcount-h.XXXXXX")
  echo
  echo "+ (cd $tmp && LD_PRELOAD=$LIB $*)"
  (cd "$tmp" && LD_PRELOAD=$LIB "$@") >"$OUTDIR/$tag.stdout.txt" 2>"$OUTDIR/$tag.stderr.txt"
  rc=$?
  [[ $rc -eq 0 ]] || errs+="exit status $rc; "
  if ! printf '%s' "$want" | cmp -s - "$OUTDIR/$tag.stdout.txt"; then
    errs+="stdout '$(head -c 80 "$OUTDIR/$tag.stdout.txt" | tr '\n' ' ')' (want '$(printf '%s' "$want" | tr '\n' ' ')'); "
  fi
  [[ ! -s $OUTDIR/$tag.stderr.txt ]] || errs+="stderr not empty ($(wc -c <"$OUTDIR/$tag.stderr.txt") bytes); "
  files=$(cd "$tmp" && ls -A)
  if [[ -z $files ]]; then
    rmdir "$tmp"
  else
    errs+="files written: $(echo "$files" | tr '\n' ' ')(kept in $tmp); "
  fi
  if [[ -n $errs ]]; then
    show_tail "$tag"
    add_row "$row" FAIL "${errs%; }"
  else
    add_row "$row" PASS "rc=0, stdout as expected, no file written"
  fi
}
if [[ -f $LIB ]]; then
  h_run "h no GPU: python print(1)" nogpu-python $'1\n' "$PY" -c 'print(1)'
  h_run "h no GPU: /bin/true" nogpu-true "" /bin/true
else
  add_row "h no GPU" FAIL "no $LIB"
fi

# ---- j: one log per run (processes that ran no GPU work, e.g. torch.compile workers, write none)
if [[ ${#EXTRA_LOGS[@]} -eq 0 ]]; then
  add_row "j one log per run" PASS "no extra logs"
else
  for f in "${EXTRA_LOGS[@]}"; do echo "   extra log: $f"; done
  extra=$(printf '%s | ' "${EXTRA_LOGS[@]}")
  add_row "j one log per run" FAIL "${#EXTRA_LOGS[@]} extra logs: ${extra% | }"
fi

# ================================ attribution cases (tests/gpu/cases/) ================================
CASES=$REPO/tests/gpu/cases

# ---- k1: CUDA graphs: replays credited to `rep` (100 launches, 500 kernels), capture shows 5 captured.
# `cap` also runs 2 kernels for real: PyTorch's capture prologue fills its RNG seed/offset tensors
# (FillFunctor) before capture starts (seen on PyTorch 2.11: 7 launches = 5 captured + 2 executed).
kcount_run graphs - "$PY" "$CASES/graphs.py"
check_row "k1 graphs: launch view" "$RUN_ERR" expect "$OUTDIR/graphs.json" \
  rep:exclusive.launches=100 rep:exclusive.graph_launches=100 rep:exclusive.kernels=500 \
  cap:exclusive.captured_launches=5 cap:exclusive.launches=7 cap:exclusive.kernels=2
if [[ -f $OUTDIR/graphs.kcount ]]; then
  "$KCOUNT" summary --format json --graph-view capture "$OUTDIR/graphs.kcount" >"$OUTDIR/graphs-capture.json"
  check_row "k1 graphs: capture view" "" expect "$OUTDIR/graphs-capture.json" \
    cap:exclusive.kernels=502 rep:exclusive.kernels=0 rep:exclusive.launches=100
fi

# ---- k2: four threads with their own ranges and streams, main thread synchronizing
kcount_run threads - "$PY" "$CASES/threads.py"
check_row "k2 threads" "$RUN_ERR" expect "$OUTDIR/threads.json" \
  t0:exclusive.kernels=5000 t1:exclusive.kernels=5000 t2:exclusive.kernels=5000 t3:exclusive.kernels=5000 \
  t0:instances=1 t3:exclusive.launches=5000

# ---- k3: autograd threads
kcount_run autograd-multi - "$PY" "$CASES/autograd.py"
err=$RUN_ERR
kcount_run autograd-single - "$PY" "$CASES/autograd.py" --single-thread
err+=$RUN_ERR
run_cmd autograd-prof "$PY" "$CASES/autograd.py" --torch-profiler "$OUTDIR/autograd-prof.json" || err+="torch.profiler run failed"
check_row "k3 autograd threads" "$err" autograd "$OUTDIR/autograd-multi.json" "$OUTDIR/autograd-single.json" \
  "$OUTDIR/autograd-prof.json"

# ---- k4: exit paths
WANT_RC=0 kcount_run exit-_exit - "$PY" "$CASES/exit_paths.py" _exit
# The log says how the process ended: metadata end_signal (SIGTERM, SIGHUP), absent after _exit.
end_signal() {  # json: prints the log's end_signal metadata, "-" when absent
  "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["logs"][0]["metadata"].get("end_signal", "-"))' "$1" 2>/dev/null
}
[[ $(end_signal "$OUTDIR/exit-_exit.json") == - ]] || RUN_ERR+="end_signal set after os._exit; "
check_row "k4a os._exit(0)" "$RUN_ERR" expect "$OUTDIR/exit-_exit.json" work:exclusive.kernels=50
WANT_RC=143 kcount_run exit-sigterm - "$PY" "$CASES/exit_paths.py" sigterm
[[ $(end_signal "$OUTDIR/exit-sigterm.json") == SIGTERM ]] || RUN_ERR+="end_signal '$(end_signal "$OUTDIR/exit-sigterm.json")', want SIGTERM; "
check_row "k4b SIGTERM (exit 143)" "$RUN_ERR" expect "$OUTDIR/exit-sigterm.json" work:exclusive.kernels=50
WANT_RC=0 kcount_run exit-finalizer - "$PY" "$CASES/exit_paths.py" finalizer
check_row "k4c finalizer at shutdown" "$RUN_ERR" expect "$OUTDIR/exit-finalizer.json" \
  work:exclusive.kernels=55 work:instances=2
# d, e: a signal from outside 2 s after the work (exit_paths.py sigkill prints READY, then sleeps).
# signal_after_ready NAME SIGNAL: runs it under kcount run as NAME, sends SIGNAL to the Python process
# 2 s after READY; sets SIG_RC (kcount run's exit status) and SIG_ERR (what went wrong on the way).
signal_after_ready() {
  local name=$1 sig=$2 runpid victim=""
  rm -f "$OUTDIR/$name"*.kcount
  echo; echo "+ kcount run -- exit_paths.py sigkill (sent SIG$sig 2 s after READY)"
  "$KCOUNT" run --output "$OUTDIR/$name.kcount" -- "$PY" "$CASES/exit_paths.py" sigkill \
    >"$OUTDIR/$name.stdout.txt" 2>"$OUTDIR/$name.stderr.txt" &
  runpid=$!
  for _ in $(seq 1 600); do
    victim=$(sed -n 's/^READY \([0-9]*\)$/\1/p' "$OUTDIR/$name.stdout.txt")
    [[ -n $victim ]] && break
    sleep 0.1
  done
  SIG_ERR=""
  if [[ -n $victim ]]; then
    sleep 2
    kill -"$sig" "$victim"
  else
    SIG_ERR="no READY line; "
  fi
  wait $runpid
  SIG_RC=$?
  echo "   kcount run exit status $SIG_RC"
}
# d: SIGKILL: the log holds what the last periodic flush wrote
signal_after_ready exit-sigkill KILL
d_err=$SIG_ERR
"$KCOUNT" check "$OUTDIR/exit-sigkill.kcount" >"$OUTDIR/exit-sigkill.check.txt" 2>&1
crc=$?
cat "$OUTDIR/exit-sigkill.check.txt" | tail -n 5
[[ $crc -ne 0 ]] || d_err+="kcount check exit 0 on a killed process's log; "
"$KCOUNT" summary --format json "$OUTDIR/exit-sigkill.kcount" >"$OUTDIR/exit-sigkill.json" 2>/dev/null
check_row "k4d SIGKILL: log up to last flush" "$d_err" expect "$OUTDIR/exit-sigkill.json" --allow-incomplete \
  work:exclusive.kernels=50
# e: SIGHUP (the terminal closing): the library's handler closes the log, the process still ends by the
# signal (kcount run exits 129)
signal_after_ready exit-sighup HUP
e_err=$SIG_ERR
[[ $SIG_RC -eq 129 ]] || e_err+="kcount run exit $SIG_RC, want 129; "
"$KCOUNT" check "$OUTDIR/exit-sighup.kcount" >"$OUTDIR/exit-sighup.check.txt" 2>&1 || e_err+="kcount check not OK; "
"$KCOUNT" summary --format json "$OUTDIR/exit-sighup.kcount" >"$OUTDIR/exit-sighup.json" 2>/dev/null
[[ $(end_signal "$OUTDIR/exit-sighup.json") == SIGHUP ]] || e_err+="end_signal '$(end_signal "$OUTDIR/exit-sighup.json")', want SIGHUP; "
check_row "k4e SIGHUP: log closed (exit 129)" "$e_err" expect "$OUTDIR/exit-sighup.json" work:exclusive.kernels=50

# ---- k5: fork and DataLoader workers
kcount_run fork-workers - "$PY" "$CASES/fork_workers.py"
run_cmd fork-workers-bare "$PY" "$CASES/fork_workers.py"
t_k=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$OUTDIR/fork-workers.stdout.txt")
t_b=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$OUTDIR/fork-workers-bare.stdout.txt")
f_err=$RUN_ERR
if [[ -n $t_k && -n $t_b ]] && ! awk -v a="$t_k" -v b="$t_b" 'BEGIN{exit !(a - b < 1.0)}'; then
  f_err+="run time ${t_k}s vs ${t_b}s without kcount; "
fi
check_row "k5 fork + DataLoader workers (${t_k}s vs ${t_b}s)" "$f_err" expect "$OUTDIR/fork-workers.json" \
  step:instances=16 step:exclusive.kernels=16

# ---- k6: torch.profiler in the same process (observation: which CUPTI client gets what)
WANT_RC=0 kcount_run other-cupti - "$PY" "$CASES/other_cupti.py"
# docs/attribution.md: kcount, subscribed first, keeps CUPTI (10 kernels in each range); torch.profiler
# gets no GPU events (CUPTI 13.0 on driver r580 allows one subscriber).
k6_err=$RUN_ERR
k6_seen=$(sed -n 's/.*"torch_profiler_kernels": \([0-9]*\).*/\1/p' "$OUTDIR/other-cupti.stdout.txt")
[[ $k6_seen == 0 ]] || k6_err+="torch.profiler saw ${k6_seen:-?} kernels (0 documented); "
check_row "k6 torch.profiler inside" "$k6_err" expect "$OUTDIR/other-cupti.json" \
  before:exclusive.kernels=10 during:exclusive.kernels=10 after:exclusive.kernels=10
echo "   other_cupti stdout: $(tail -n 1 "$OUTDIR/other-cupti.stdout.txt")"
"$PY" - "$OUTDIR/other-cupti.json" <<'PYEOF' || true
import json, sys
log = json.load(open(sys.argv[1]))["logs"][0]
for r in log["ranges"]:
    if r["path"] in ("before", "during", "after"):
        print(f"   kcount {r['path']}: launches={r['exclusive']['launches']} kernels={r['exclusive']['kernels']}")
print("   totals:", {k: log["totals"][k] for k in ("launches", "kernels", "launches_without_kernel", "unmatched_kernels")})
PYEOF

# ---- k7: Triton, matmul, elementwise, _sleep in one range
kcount_run triton-mixed - "$PY" "$CASES/triton_mixed.py"
check_row "k7 triton + matmul + elementwise + sleep" "$RUN_ERR" expect "$OUTDIR/triton-mixed.json" \
  mixed:exclusive.launches=4 mixed:exclusive.kernels=4

# ---- k8: one launch per API; memory operations of their own kind (from the C++ program of row i)
if [[ -f $OUTDIR/launches.json ]]; then
  check_row "k8 one launch per API + memory ops" "" expect "$OUTDIR/launches.json" \
    api.chevron:exclusive.kernels=1 api.chevron:exclusive.launches=1 \
    api.cudaLaunchKernel:exclusive.kernels=1 api.cudaLaunchKernel:exclusive.launches=1 \
    api.cudaLaunchKernelExC:exclusive.kernels=1 api.cudaLaunchKernelExC:exclusive.launches=1 \
    api.cuLaunchKernel:exclusive.kernels=1 api.cuLaunchKernel:exclusive.launches=1 \
    api.cuLaunchKernelEx:exclusive.kernels=1 api.cuLaunchKernelEx:exclusive.launches=1 \
    memops:exclusive.launches=0 memops:exclusive.kernels=0 memops:exclusive.memcpy.count=3 \
    memops:exclusive.memcpy.bytes=12288 memops:exclusive.memset.count=1 memops:exclusive.memset.bytes=4096
fi

# ---- k9: no GPU visible; a program that sets CUDA_VISIBLE_DEVICES itself
h_run "k9 CUDA_VISIBLE_DEVICES= (CPU-only torch)" novis-python $'False\n' env CUDA_VISIBLE_DEVICES= "$PY" -c \
  'import torch; print(torch.cuda.is_available())'
want=$(cd /tmp && "$PY" -c "import os; os.environ['CUDA_VISIBLE_DEVICES']='0'; import torch; print(torch.cuda.device_count())" 2>/dev/null)
tmpd=$(mktemp -d); got=$(cd "$tmpd" && LD_PRELOAD=$LIB "$PY" -c "import os; os.environ['CUDA_VISIBLE_DEVICES']='0'; import torch; print(torch.cuda.device_count())" 2>"$OUTDIR/setvis.stderr.txt")
# CUDA_VISIBLE_DEVICES=0 leaves one device on any GPU machine: 1 with and without kcount.
if [[ $got == "$want" && $got == 1 ]]; then add_row "k9 program sets CUDA_VISIBLE_DEVICES" PASS "device_count=$got as without kcount; files: $(ls -A "$tmpd" | tr '\n' ' ')"
else add_row "k9 program sets CUDA_VISIBLE_DEVICES" FAIL "device_count=$got (without kcount: $want; 1 expected)"; fi

# ---- k10: a different CUPTI first on LD_LIBRARY_PATH
toolkit_cupti_dir=$(dirname "$(ls /usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13 2>/dev/null || echo /usr/local/cuda/lib64/libcupti.so.13)")
LD_LIBRARY_PATH=$toolkit_cupti_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} kcount_run wrong-cupti - "$PY" "$REPO/tests/gpu/maps_probe.py" "$EX/geglu.py" --steps 2
check_row "k10 other CUPTI on LD_LIBRARY_PATH" "$RUN_ERR" maps "$OUTDIR/wrong-cupti.stdout.txt"
echo "   log names CUPTI: $("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['logs'][0]['metadata'].get('cupti_path'))" "$OUTDIR/wrong-cupti.json" 2>/dev/null)"

fi  # core

# ================================ feature checks (their own scripts and tables) ===========================
feature_row() {  # part script: runs a feature script into $OUTDIR/part/, one row from its exit status
  local part=$1 script=$2 rows pass
  want_part "$part" || return 0
  if [[ ! -f $REPO/tests/gpu/$script ]]; then
    add_row "x $part" FAIL "tests/gpu/$script missing"
    return 0
  fi
  mkdir -p "$OUTDIR/$part"
  echo
  echo "+ OUT=$OUTDIR/$part bash tests/gpu/$script $BUILD_DIR"
  OUT=$OUTDIR/$part bash "$REPO/tests/gpu/$script" "$BUILD_DIR" >"$OUTDIR/$part.txt" 2>&1
  local rc=$?
  echo "---- $script: table (full output: $OUTDIR/$part.txt)"
  rows=$(grep -E '^[^ ].*[[:space:]](PASS|FAIL|SKIP)[[:space:]]' "$OUTDIR/$part.txt" | grep -vE '^(==>|\+ )' | sort -u)
  echo "$rows" | cut -c1-220
  pass=$(echo "$rows" | grep -cE '[[:space:]]PASS[[:space:]]')
  if [[ $rc -eq 0 ]]; then add_row "x $part" PASS "$pass rows PASS ($script)"
  else add_row "x $part" FAIL "exit $rc; failing: $(echo "$rows" | grep -E '[[:space:]]FAIL[[:space:]]' | cut -c1-60 | tr '\n' ';')"; fi
}
feature_row control check_control.sh
feature_row summary-mode check_summary_mode.sh
feature_row gpu-time check_gpu_time.sh
feature_row torch-modules check_torch_modules.sh
feature_row run-edges check_run_edges.sh
feature_row rotation check_rotation.sh
feature_row ab-floor check_ab_floor.sh
feature_row host-clock check_host_clock.sh
feature_row server check_server.sh
feature_row launch-callbacks check_launch_callbacks.sh
feature_row profiler-graphs check_profiler_graphs.sh
feature_row graph-gpu-time check_graph_gpu_time.sh
feature_row range-cost check_range_cost.sh

# ---- table
print_table_and_exit
