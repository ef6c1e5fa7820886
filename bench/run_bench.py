#!/usr/bin/env python3
"""kcount overhead benchmark: one command on a CUDA machine; prints a table last and writes JSON.

    python3 bench/run_bench.py --build-dir build --out /tmp/kcount-bench            # --quick (default)
    python3 bench/run_bench.py --build-dir build --out /tmp/kcount-bench --full
    python3 bench/run_bench.py --dry-run --out /tmp/kcount-bench-dry               # no GPU, no torch
    python3 bench/run_bench.py --build-dir build --plan [--jobs ... --configs ...]  # print the plan only

Uses BUILD_DIR/bin/kcount, BUILD_DIR/lib/libkcount.so and BUILD_DIR/lib/libcupti_floor.so (bench/
cupti_floor.cpp), compiles bench/launch_loop.cu with nvcc, and runs bench/python_workloads.py with the
same Python as this script (or --python). Method and configurations: docs/performance.md.

Jobs (one process per run, each run a fresh process):
  cpp          launch_loop all N M K: N <<<1,1>>> launches, N cuLaunchKernel launches, a graph of K kernels
               replayed M times (us per launch; graph: us per kernel)
  py           add_ loop (us per iteration), GeGLU MLP and transformer stack, eager, forward + backward
               (ms per step)
  py-compiled  the same two models under torch.compile, and the transformer under
               torch.compile(mode="reduce-overhead") (CUDA graph trees) (ms per step)
  server       examples/serve.py (decode step replayed as a CUDA graph) started in the configuration, driven
               with a fixed number of requests one at a time, stopped with SIGTERM (tokens per second)
--workloads keeps a subset of the selected jobs' workloads.

Configurations: none; cupti-floor (CUDA_INJECTION64_PATH=libcupti_floor.so: kcount's launch callbacks and
kernel activity, nothing else); kcount-trace (LD_PRELOAD=libkcount.so); kcount-summary (KCOUNT_MODE=summary)
and kcount-paused (KCOUNT_START=paused), run only when libkcount.so knows those variables; torch-profiler
(Python jobs); --full adds floor variants (no activity, no callbacks, driver ids only, 32 MiB buffers).
Some configurations run only when named with --configs (floor-duty, kcount-summary-nogpu-driver, ...).

Besides a table per job, the runner prints one "mode x workload" table (Markdown: configurations by
workloads, each cell the median and its change against none) and writes it into table.txt and the JSON.

Runs are interleaved: for repeat r, every job runs each of its configurations once, in the job's order
rotated by r. With --quick a time budget (--budget-s) stops starting rounds that would not fit.

Exit status: 0 when every run that was started worked (a budget FAIL is a result, not an error), 1 when
some run failed or nothing could run, 2 on bad arguments. With --dry-run: 0 when the self-checks pass.
"""

import argparse
import datetime
import glob
import importlib.util
import json
import os
import platform
import random
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "bench")
SCHEMA = 1

CONFIG_INFO = {
    "none": "no profiler",
    "cupti-floor": "bare CUPTI subscriber (libcupti_floor.so): kcount's launch callbacks and CONCURRENT_KERNEL "
                   "activity, empty handlers",
    "floor-no-activity": "floor with CUPTI_FLOOR_ACTIVITY=0 (launch callbacks only)",
    "floor-no-callbacks": "floor with CUPTI_FLOOR_CALLBACKS=none (kernel activity only)",
    "floor-driver-ids": "floor with CUPTI_FLOOR_CALLBACKS=driver (driver-API launch ids only) and activity",
    "floor-buffer-32mb": "floor with CUPTI_FLOOR_BUFFER_MB=32 (activity buffers of 32 MiB instead of 8)",
    "floor-graph-trace": "floor with CUPTI_FLOOR_GRAPH_TRACE=1 (GRAPH_TRACE activity: one record per graph launch)",
    "floor-duty": "floor with CUPTI_FLOOR_ACTIVITY_DUTY=10/100 (kernel activity on 10 ms in every 100 ms)",
    "floor-duty-1": "floor with CUPTI_FLOOR_ACTIVITY_DUTY=1/100 (kernel activity on 1 ms in every 100 ms)",
    "kcount-trace": "LD_PRELOAD=libkcount.so, trace mode (the default)",
    "kcount-summary": "LD_PRELOAD=libkcount.so, KCOUNT_MODE=summary",
    "kcount-paused": "LD_PRELOAD=libkcount.so, KCOUNT_START=paused (never started)",
    "kcount-summary-nogpu": "LD_PRELOAD=libkcount.so, KCOUNT_MODE=summary KCOUNT_GPU_TIME=0 (no activity records)",
    "kcount-paused-nogpu": "LD_PRELOAD=libkcount.so, KCOUNT_MODE=summary KCOUNT_GPU_TIME=0 KCOUNT_START=paused "
                           "(never started: only the graph watch's CUPTI subscriber)",
    "kcount-summary-nogpu-driver": "LD_PRELOAD=libkcount.so, KCOUNT_MODE=summary KCOUNT_GPU_TIME=0 "
                                   "KCOUNT_LAUNCH_CALLBACKS=driver (driver API launch callbacks only)",
    "kcount-summary-graphs": "LD_PRELOAD=libkcount.so, KCOUNT_MODE=summary KCOUNT_GPU_TIME=graphs (count-only launches "
                             "plus GRAPH_TRACE activity: one GPU span per graph launch)",
    "floor-no-activity-driver": "floor with CUPTI_FLOOR_ACTIVITY=0 CUPTI_FLOOR_CALLBACKS=driver (driver API launch "
                                "callbacks only, no activity: the floor of kcount-summary-nogpu-driver)",
    "torch-profiler": "torch.profiler.profile(CPU, CUDA) around the timed repeats (Python workloads only)",
}
FLOOR_ENV = {
    "cupti-floor": {},
    "floor-no-activity": {"CUPTI_FLOOR_ACTIVITY": "0"},
    "floor-no-callbacks": {"CUPTI_FLOOR_CALLBACKS": "none"},
    "floor-driver-ids": {"CUPTI_FLOOR_CALLBACKS": "driver"},
    "floor-buffer-32mb": {"CUPTI_FLOOR_BUFFER_MB": "32"},
    "floor-graph-trace": {"CUPTI_FLOOR_GRAPH_TRACE": "1"},
    "floor-duty": {"CUPTI_FLOOR_ACTIVITY_DUTY": "10/100"},
    "floor-duty-1": {"CUPTI_FLOOR_ACTIVITY_DUTY": "1/100"},
    "floor-no-activity-driver": {"CUPTI_FLOOR_ACTIVITY": "0", "CUPTI_FLOOR_CALLBACKS": "driver"},
}
KCOUNT_ENV = {
    "kcount-trace": {},
    "kcount-summary": {"KCOUNT_MODE": "summary"},
    "kcount-paused": {"KCOUNT_START": "paused"},
    "kcount-summary-nogpu": {"KCOUNT_MODE": "summary", "KCOUNT_GPU_TIME": "0"},
    "kcount-paused-nogpu": {"KCOUNT_MODE": "summary", "KCOUNT_GPU_TIME": "0", "KCOUNT_START": "paused"},
    "kcount-summary-nogpu-driver": {"KCOUNT_MODE": "summary", "KCOUNT_GPU_TIME": "0", "KCOUNT_LAUNCH_CALLBACKS": "driver"},
    "kcount-summary-graphs": {"KCOUNT_MODE": "summary", "KCOUNT_GPU_TIME": "graphs"},
}
# The environment variable a kcount configuration needs libkcount.so to know (detected from its strings).
KCOUNT_NEEDS = {"kcount-summary": "KCOUNT_MODE", "kcount-paused": "KCOUNT_START", "kcount-summary-nogpu": "KCOUNT_GPU_TIME",
                "kcount-paused-nogpu": "KCOUNT_GPU_TIME", "kcount-summary-nogpu-driver": "KCOUNT_LAUNCH_CALLBACKS",
                "kcount-summary-graphs": "GRAPH_TRACE"}
# GRAPH_TRACE: a word of the message of a failed cuptiActivityEnable(GRAPH_TRACE), in libraries that know
# KCOUNT_GPU_TIME=graphs.
KNOWN_VARIABLES = ("KCOUNT_START", "KCOUNT_MODE", "KCOUNT_GPU_TIME", "KCOUNT_LAUNCH_CALLBACKS", "GRAPH_TRACE")
# Configurations that run only when named with --configs; the dry run adds these to its plan so that
# they are exercised (where a job can run them).
DRY_RUN_EXTRA = ["floor-no-activity-driver", "kcount-summary-nogpu-driver", "kcount-summary-graphs"]

JOB_WORKLOADS = {
    "cpp": ["runtime", "driver", "graph"],
    "py": ["add_loop", "geglu_eager", "transformer_eager"],
    "py-compiled": ["geglu_compiled", "transformer_compiled", "transformer_reduce_overhead"],
    "server": ["server"],
}
WORKLOAD_INFO = {  # label, unit, metric key in the child's JSON
    "runtime": ("runtime <<<>>>", "us/launch", "us_per_launch"),
    "driver": ("driver cuLaunchKernel", "us/launch", "us_per_launch"),
    "graph": ("graph replay", "us/kernel", "us_per_kernel"),
    "add_loop": ("add_ loop", "us/iter", "value"),
    "geglu_eager": ("geglu eager", "ms/step", "value"),
    "transformer_eager": ("xfmr eager", "ms/step", "value"),
    "geglu_compiled": ("geglu compiled", "ms/step", "value"),
    "transformer_compiled": ("xfmr compiled", "ms/step", "value"),
    "transformer_reduce_overhead": ("xfmr reduce-overhead", "ms/step", "value"),
    "server": ("server", "tokens/s", "value"),
}
STEP_WORKLOADS = ["geglu_eager", "transformer_eager", "geglu_compiled", "transformer_compiled",
                  "transformer_reduce_overhead"]
# How a unit's change against none is shown: "abs" (median minus none's, in the unit) or "pct" (relative,
# in percent), and with how many decimals the median is printed. Higher is better only for tokens/s: its
# change is negative when the configuration is slower.
UNIT_CHANGE = {"us/launch": ("abs", 2), "us/kernel": ("abs", 3), "us/iter": ("abs", 2), "ms/step": ("pct", 3),
               "tokens/s": ("pct", 1)}
HIGHER_IS_BETTER = {"tokens/s"}

MODES = {
    "quick": {
        "launches": 100_000, "graph_replays": 100, "graph_kernels": 1000,
        "add_iters": 20_000, "steps": 10, "inner_repeats": 3, "warmup_steps": 3, "layers": 4,
        "repeats": {"cpp": 5, "py": 3, "py-compiled": 3, "server": 3}, "budget_s": 360.0, "export_trace": False,
        "server_requests": 8,
    },
    "full": {
        "launches": 1_000_000, "graph_replays": 1000, "graph_kernels": 1000,
        "add_iters": 200_000, "steps": 20, "inner_repeats": 3, "warmup_steps": 3, "layers": 4,
        "repeats": {"cpp": 7, "py": 5, "py-compiled": 5, "server": 5}, "budget_s": 0.0, "export_trace": True,
        "server_requests": 16,
    },
}
# The server job: examples/serve.py's model (small enough to start in seconds), its warm-up requests at
# start, and the requests the runner sends (one at a time; the first SERVER["warmup_requests"] untimed).
SERVER = {"layers": 4, "hidden": 1024, "max_seq": 256, "start_warmup": 2, "warmup_requests": 3, "prompt_len": 32,
          "new_tokens": 64}
JOB_TIMEOUT_S = {"cpp": 180.0, "py": 600.0, "py-compiled": 600.0, "server": 300.0}

BUDGET_TRACE_US = 0.2
BUDGET_SUMMARY_US = 0.1
BUDGET_STEP_PCT = 1.0
# Count-only summary mode (kcount-summary-nogpu) against none: step time, tokens per second, graph kernels.
BUDGET_COUNT_STEP_PCT = 1.0
BUDGET_COUNT_TOKENS_PCT = 1.0
BUDGET_COUNT_GRAPH_US = 0.05


# ---------------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------------

def describe(values):
    """Median, min, max, quartiles (inclusive method) and the values; None for no values."""
    if not values:
        return None
    v = sorted(values)
    d = {"n": len(v), "median": statistics.median(v), "min": v[0], "max": v[-1], "values": list(values)}
    if len(v) >= 2:
        q = statistics.quantiles(v, n=4, method="inclusive")
        d["q1"], d["q3"] = q[0], q[2]
    else:
        d["q1"] = d["q3"] = v[0]
    return d


def rotated(items, r):
    """items rotated left by r (the order of repeat r)."""
    if not items:
        return []
    k = r % len(items)
    return items[k:] + items[:k]


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def fmt_signed(v, digits=2):
    if v is None:
        return "-"
    text = f"{v:+.{digits}f}"
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def tail(path, chars=1500):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - chars))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def lib_knows(path, name):
    """True if the bytes of the file at path contain name (what `strings LIB | grep NAME` finds)."""
    try:
        with open(path, "rb") as f:
            return name.encode() in f.read()
    except OSError:
        return False


def parse_cpus(text):
    """CPU list "2-3,6" -> {2, 3, 6}; "" -> None (no pinning). ValueError on a malformed list."""
    if not text:
        return None
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def run_process(argv, env, cwd, stdout_path, stderr_path, timeout_s, cpus=None, drive=None):
    """Runs argv in its own session with stdout/stderr to files, on the CPUs in `cpus` (a set; None: no
    pinning). Returns (exit code, wall seconds, peak RSS in KiB of the child (ru_maxrss from wait4: the
    child and its waited-for descendants), timed out). On timeout the child's process group is killed.
    drive: for a child that runs until told to stop (the server): drive(pid, deadline) is called once the
    child has started (deadline on the time.perf_counter() clock) and talks to it; the child is then sent
    SIGTERM, unless it has ended already, and waited for as any other."""
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        t0 = time.perf_counter()
        try:
            p = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 start_new_session=True, preexec_fn=pin)
        except OSError as exc:
            err.write(f"run_bench: cannot start {argv[0]}: {exc}\n".encode())
            return 127, 0.0, 0, False
        if drive is not None:
            try:
                drive(p.pid, t0 + timeout_s)
            finally:
                if not has_ended(p.pid):
                    os.kill(p.pid, signal.SIGTERM)
        timed_out = False
        while True:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.perf_counter() - t0 > timeout_s:
                timed_out = True
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                pid, status, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        p.returncode = rc  # reaped here; keeps Popen from waiting again
    return rc, wall, int(ru.ru_maxrss), timed_out


def has_ended(pid):
    """True once the child `pid` has ended; it is not reaped (run_process's wait4 still gets its resource
    use and exit status)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def load_example_client():
    """examples/client.py (the requests of examples/serve.py) as a module."""
    spec = importlib.util.spec_from_file_location("kcount_example_client", os.path.join(REPO, "examples", "client.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SERVE_START = re.compile(r"^serve\.py: listening .* port=(\d+) pid=(\d+) ", re.M)


def drive_server(pid, deadline, stdout_path, params):
    """The server job's measurement, run by the runner while examples/serve.py (process `pid`) runs: waits
    for the server's start line on its stdout (it gives the port), sends SERVER["warmup_requests"] untimed
    requests, then params["server_requests"] timed ones, one at a time, each SERVER["prompt_len"] prompt
    tokens and SERVER["new_tokens"] new tokens, through examples/client.py. Returns the JSON objects a
    workload would print: {"workload": "info", ...} and {"workload": "server", ...} whose value is the
    median over the timed requests of the server's own tokens per second (new tokens over the request's
    time inside the server: prefill, decode steps and sampling, up to the last token on the host); the
    client's view (tokens over the wall time of all timed requests, HTTP included) is beside it. An
    {"error"} instead of the result when the server did not start or a request failed."""
    sv = params["server"]
    t_start = time.perf_counter()
    match = None
    while match is None:
        try:
            with open(stdout_path, encoding="utf-8", errors="replace") as f:
                match = SERVE_START.search(f.read())
        except OSError:
            pass
        if match is None:
            if has_ended(pid):
                return [{"workload": "server", "error": "the server ended before its start line"}]
            if time.perf_counter() > deadline:
                return [{"workload": "server", "error": "no start line before the time limit"}]
            time.sleep(0.05)
    line = match.string[match.start():].split("\n", 1)[0]
    nodes = re.search(r" graph_kernel_nodes=(\d+)", line)
    info = {"workload": "info", "startup_s": time.perf_counter() - t_start, "port": int(match.group(1)),
            "pid": int(match.group(2)), "start_line": line, "graph_kernel_nodes": int(nodes.group(1)) if nodes else None}
    client = load_example_client()
    base = f"http://127.0.0.1:{info['port']}"
    n, prompt, new = params["server_requests"], sv["prompt_len"], sv["new_tokens"]
    try:
        for _ in range(sv["warmup_requests"]):
            client.generate(base, prompt, new)
        answers, client_s = [], []
        t0 = time.perf_counter()
        for _ in range(n):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"time limit after {len(answers)} of {n} timed requests")
            t = time.perf_counter()
            answers.append(client.generate(base, prompt, new))
            client_s.append(time.perf_counter() - t)
        wall = time.perf_counter() - t0
    except Exception as exc:  # urllib's URLError, http.client's errors, client.py's RuntimeError
        return [info, {"workload": "server", "error": f"request failed: {type(exc).__name__}: {exc}"}]
    values = [a["tokens_per_s"] for a in answers]
    result = {"workload": "server", "unit": "tokens/s", "requests": n, "warmup_requests": sv["warmup_requests"],
              "prompt_len": prompt, "new_tokens": new, "values": values, "value": statistics.median(values),
              "client_tokens_per_s": n * new / wall, "client_values": [new / c for c in client_s],
              "decode_ms_per_token": statistics.median(a["decode_ms"] / (new - 1) for a in answers) if new > 1 else None,
              "prefill_ms": statistics.median(a["prefill_ms"] for a in answers)}
    return [info, result]


def parse_json_lines(path):
    """The JSON objects printed one per line (lines starting with '{'), in order."""
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(obj, dict):
                        out.append(obj)
    except OSError:
        pass
    return out


# ---------------------------------------------------------------------------------------------------
# Plan: jobs, configurations, commands
# ---------------------------------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(description="kcount overhead benchmark (docs/performance.md)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="fits about 6 minutes on an H200 (default)")
    mode.add_argument("--full", action="store_true", help="the issue's sizes (1M launches), more repeats")
    p.add_argument("--dry-run", action="store_true",
                   help="no GPU, no torch: fake workloads exercise the runner, then self-checks")
    p.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                   help="folder with bin/kcount, lib/libkcount.so, lib/libcupti_floor.so (default: build)")
    p.add_argument("--out", default="/tmp/kcount-bench", help="results folder (JSON, table, plot, run outputs)")
    p.add_argument("--work-dir", default=None, help="scratch folder for logs and the compiled program "
                                                      "(default: a new temporary folder)")
    p.add_argument("--jobs", default="cpp,py,py-compiled,server",
                   help="comma-separated: cpp, py, py-compiled, server (default: all four)")
    p.add_argument("--workloads", default=None,
                   help="comma-separated subset of the jobs' workloads (e.g. graph,add_loop,transformer_eager); "
                        "a job left without workloads is not run")
    p.add_argument("--configs", default=None, help="comma-separated subset of configurations to run")
    p.add_argument("--plan", action="store_true",
                   help="print the plan (configurations per job, each run's command and added environment) and exit")
    p.add_argument("--repeats", type=int, default=None, help="repeats (fresh processes) per configuration, all jobs")
    p.add_argument("--launches", type=int, default=None, help="launches per C++ loop (quick 100000, full 1000000)")
    p.add_argument("--graph-replays", type=int, default=None, help="graph replays (quick 100, full 1000)")
    p.add_argument("--graph-kernels", type=int, default=None, help="kernels per graph (1000)")
    p.add_argument("--add-iters", type=int, default=None, help="add_ iterations per timed repeat")
    p.add_argument("--steps", type=int, default=None, help="steps per timed repeat (MLP, transformer)")
    p.add_argument("--inner-repeats", type=int, default=None, help="timed repeats inside one Python process")
    p.add_argument("--layers", type=int, default=None, help="transformer blocks (4)")
    p.add_argument("--server-requests", type=int, default=None,
                   help="timed requests per server run (quick 8, full 16), after 3 untimed ones")
    p.add_argument("--budget-s", type=float, default=None,
                   help="stop starting rounds after this many seconds (quick 360, full: none; 0: none)")
    p.add_argument("--cpp-cpus", default="", help="CPU list for the C++ job's processes, e.g. 2-3 (sched_setaffinity; "
                                                  "same CPUs for every configuration; default: no pinning)")
    p.add_argument("--python", default=sys.executable, help="Python with PyTorch for the Python jobs")
    p.add_argument("--nvcc", default=None, help="nvcc (default: PATH, then /usr/local/cuda/bin/nvcc)")
    p.add_argument("--arch", default="sm_90", help="nvcc -arch for launch_loop.cu (sm_90: H100/H200)")
    p.add_argument("--keep-logs", action="store_true", help="keep the .kcount logs (in the work folder)")
    p.add_argument("--no-plot", action="store_true", help="do not run bench/plot.py")
    p.add_argument("--fake-child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rest and not args.fake_child:
        p.error(f"unexpected arguments: {' '.join(args.rest)}")
    args.mode = "full" if args.full else "quick"
    for name in ("repeats", "launches", "graph_replays", "graph_kernels", "add_iters", "steps", "inner_repeats",
                 "layers", "server_requests"):
        v = getattr(args, name)
        if v is not None and v < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    args.jobs = [j for j in args.jobs.split(",") if j]
    bad = [j for j in args.jobs if j not in JOB_WORKLOADS]
    if bad or not args.jobs:
        p.error(f"unknown or no jobs: {bad}; choose from {', '.join(JOB_WORKLOADS)}")
    if args.workloads is not None:
        args.workloads = [w for w in args.workloads.split(",") if w]
        bad = [w for w in args.workloads if w not in WORKLOAD_INFO]
        if bad or not args.workloads:
            p.error(f"unknown or no workloads: {bad}; choose from {', '.join(WORKLOAD_INFO)}")
        if not any(w in JOB_WORKLOADS[j] for j in args.jobs for w in args.workloads):
            p.error(f"none of the workloads {args.workloads} belongs to the jobs {args.jobs}")
    if args.configs is not None:
        args.configs = [c for c in args.configs.split(",") if c]
        bad = [c for c in args.configs if c not in CONFIG_INFO]
        if bad or not args.configs:
            p.error(f"unknown or no configurations: {bad}; choose from {', '.join(CONFIG_INFO)}")
    return args


def make_params(args):
    m = MODES[args.mode]
    params = {k: m[k] for k in ("launches", "graph_replays", "graph_kernels", "add_iters", "steps",
                                "inner_repeats", "warmup_steps", "layers", "export_trace", "server_requests")}
    for k in ("launches", "graph_replays", "graph_kernels", "add_iters", "steps", "inner_repeats", "layers",
              "server_requests"):
        if getattr(args, k) is not None:
            params[k] = getattr(args, k)
    params["server"] = dict(SERVER)
    params["repeats"] = {j: (args.repeats if args.repeats is not None else m["repeats"][j]) for j in JOB_WORKLOADS}
    params["budget_s"] = args.budget_s if args.budget_s is not None else m["budget_s"]
    # The workloads each job runs and reports (all of the job's, or those of --workloads).
    params["workloads"] = {j: [w for w in ws if args.workloads is None or w in args.workloads]
                           for j, ws in JOB_WORKLOADS.items()}
    return params


def job_workloads(params, job):
    """The workloads of a job in this run (params["workloads"]; a JSON without it: all of the job's)."""
    return params.get("workloads", {}).get(job, JOB_WORKLOADS[job])


def job_configs(job, mode, support, selected):
    """Configurations of a job, in order. support: {"KCOUNT_MODE": bool, ...} (KNOWN_VARIABLES)."""
    summary = ["kcount-summary"] if support.get("KCOUNT_MODE") else []
    if summary and support.get("KCOUNT_GPU_TIME"):
        summary.append("kcount-summary-nogpu")
    paused = ["kcount-paused"] if support.get("KCOUNT_START") else []
    floors = ["cupti-floor"]
    if mode == "full" and job == "cpp":
        floors += ["floor-no-activity", "floor-no-callbacks", "floor-driver-ids", "floor-buffer-32mb",
                   "floor-graph-trace"]
    if selected is not None:
        # kcount-paused-nogpu (the graph watch of a paused count-only process), kcount-summary-nogpu-driver
        # (driver launch callbacks only) and kcount-summary-graphs (GRAPH_TRACE spans) run only when asked for.
        nogpu_paused = ["kcount-paused-nogpu"] if paused and support.get("KCOUNT_GPU_TIME") else []
        nogpu_driver = (["kcount-summary-nogpu-driver"] if "kcount-summary-nogpu" in summary
                        and support.get("KCOUNT_LAUNCH_CALLBACKS") else [])
        graphs = (["kcount-summary-graphs"] if "kcount-summary-nogpu" in summary and support.get("GRAPH_TRACE")
                  else [])
        pool = ["none"] + list(FLOOR_ENV) + ["kcount-trace"] + summary + nogpu_driver + graphs + paused + nogpu_paused
        if job in ("py", "py-compiled"):  # serve.py has no torch.profiler switch
            pool.append("torch-profiler")
        return [c for c in pool if c in selected]
    if job == "cpp":
        return ["none"] + floors + ["kcount-trace"] + summary + paused
    if job == "server":  # kcount configurations record from the start
        if mode == "quick":
            return ["none"] + (summary or ["kcount-trace"])
        return ["none", "cupti-floor", "kcount-trace"] + summary + paused
    if job == "py":
        if mode == "quick":
            return ["none", "kcount-trace"] + summary + paused + ["torch-profiler"]
        return ["none", "cupti-floor", "kcount-trace"] + summary + paused + ["torch-profiler"]
    # py-compiled: in quick mode only what the "realistic steps" budget needs.
    if mode == "quick":
        return ["none"] + (summary or ["kcount-trace"])
    return ["none", "cupti-floor", "kcount-trace"] + summary + paused + ["torch-profiler"]


def job_argv(job, config, params, paths, python):
    workloads = job_workloads(params, job)
    if job == "cpp":
        if workloads == ["graph"]:
            return [paths["launch_loop"], "graph", str(params["graph_replays"]), str(params["graph_kernels"])]
        if workloads in (["runtime"], ["driver"]):
            return [paths["launch_loop"], workloads[0], str(params["launches"])]
        return [paths["launch_loop"], "all", str(params["launches"]), str(params["graph_replays"]),
                str(params["graph_kernels"])]
    if job == "server":
        sv = params["server"]
        return [python, os.path.join(REPO, "examples", "serve.py"), "--port", "0", "--layers", str(sv["layers"]),
                "--hidden", str(sv["hidden"]), "--max-seq", str(sv["max_seq"]), "--warmup", str(sv["start_warmup"])]
    warmup = params["warmup_steps"]
    argv = [python, os.path.join(BENCH, "python_workloads.py"), "--workloads", ",".join(workloads),
            "--add-iters", str(params["add_iters"]), "--repeats", str(params["inner_repeats"]),
            "--steps", str(params["steps"]), "--warmup-steps", str(warmup), "--layers", str(params["layers"])]
    if config == "torch-profiler":
        argv.append("--torch-profiler")
        if params["export_trace"]:
            argv.append("--export-trace")
    return argv


def floor_match(kcount_lib):
    """CUPTI_FLOOR_* settings that make the floor enable what this libkcount.so enables beyond launch
    callbacks and kernel activity, detected from the CUPTI calls named in its error messages."""
    # Older libraries named the activity call, current ones the memory API callbacks (inject/cupti_attach.cpp).
    memory = lib_knows(kcount_lib, "cuptiActivityEnable(MEMCPY)") or lib_knows(kcount_lib, "cuptiEnableCallback(memory API)")
    return {"CUPTI_FLOOR_MEMORY": "1" if memory else "0",
            "CUPTI_FLOOR_GRAPH_NODES": "1" if lib_knows(kcount_lib, "GRAPHNODE_CREATED") else "0"}


def config_env(config, base_env, paths, log_pattern, match=None):
    """Environment of a run and the variables this configuration added (for the JSON). match: the
    floor_match() settings, given to every floor configuration."""
    added = {}
    if config in FLOOR_ENV:
        added["CUDA_INJECTION64_PATH"] = paths["floor_lib"]
        added.update(match or {})
        added.update(FLOOR_ENV[config])
    elif config in KCOUNT_ENV:
        pre = base_env.get("LD_PRELOAD", "")
        added["LD_PRELOAD"] = paths["kcount_lib"] + (":" + pre if pre else "")
        added["KCOUNT_OUTPUT"] = log_pattern
        added.update(KCOUNT_ENV[config])
    env = dict(base_env)
    env.update(added)
    return env, added


def clean_base_env():
    """This process's environment without any profiler injection or KCOUNT_/CUPTI_FLOOR_ settings."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KCOUNT_", "CUPTI_FLOOR_"))
           and k not in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")}
    pre = [p for p in env.get("LD_PRELOAD", "").split(":") if p and "libkcount" not in p]
    if pre:
        env["LD_PRELOAD"] = ":".join(pre)
    else:
        env.pop("LD_PRELOAD", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def print_plan(plan, params, paths, args, notes):
    """--plan: what a run of these arguments would do, without doing it."""
    for n in notes:
        print(f"note: {n}")
    budget = params["budget_s"]
    print(f"plan ({args.mode}{', dry run' if args.dry_run else ''}; budget {f'{budget:.0f} s' if budget else 'none'}; "
          f"build {os.path.abspath(args.build_dir)}):")
    if not plan:
        print("  nothing to run")
    for job, configs in plan.items():
        print(f"  {job}: workloads {', '.join(job_workloads(params, job))}; up to {params['repeats'][job]} rounds x "
              f"{len(configs)} configurations, {JOB_TIMEOUT_S[job]:.0f} s per run at most")
        for c in configs:
            _, added = config_env(c, {}, paths, "WORK/logs/TAG-%p.kcount", floor_match(paths["kcount_lib"]))
            argv = job_argv(job, c, params, paths, args.python)
            env = " ".join(f"{k}={v}" for k, v in added.items())
            print(f"    {c}: {env + ' ' if env else ''}{' '.join(argv)}")
        if job == "server":
            sv = params["server"]
            print(f"    then, from the runner: {sv['warmup_requests']} + {params['server_requests']} requests "
                  f"(prompt {sv['prompt_len']}, {sv['new_tokens']} new tokens) to the port of the start line, SIGTERM")


# ---------------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------------

class Runner:
    def __init__(self, args, params, paths, support, out_dir, work_dir):
        self.args = args
        self.params = params
        self.paths = paths
        self.support = support
        self.out_dir = out_dir
        self.work_dir = work_dir
        self.runs = []
        self.notes = []
        self.base_env = clean_base_env()
        self.floor_match = floor_match(paths["kcount_lib"])
        self.t_start = time.perf_counter()
        self.last_wall = {}  # (job, config) -> wall seconds of the latest run
        self.sample_log = os.path.join(REPO, "tests", "data", "launches.kcount")
        os.makedirs(os.path.join(out_dir, "runs"), exist_ok=True)
        os.makedirs(os.path.join(work_dir, "logs"), exist_ok=True)

    def elapsed(self):
        return time.perf_counter() - self.t_start

    def note(self, text):
        self.notes.append(text)
        print(f"note: {text}", flush=True)

    def kcount_summary(self, log_path):
        """Runs `kcount summary --format json` on a log: (seconds, totals dict or None, error)."""
        kcount = self.paths["kcount"]
        if not os.path.exists(kcount):
            return None, None, f"no {kcount}"
        t0 = time.perf_counter()
        try:
            p = subprocess.run([kcount, "summary", "--format", "json", log_path], capture_output=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, None, f"kcount summary: {exc}"
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            return dt, None, f"kcount summary exit status {p.returncode}: {p.stderr.decode(errors='replace')[-300:]}"
        try:
            doc = json.loads(p.stdout)
            logs = doc["logs"]
            totals = dict(logs[0]["totals"])
            totals["complete"] = logs[0].get("complete")
            return dt, totals, None
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            return dt, None, f"kcount summary output not understood: {exc}"

    def run_one(self, job, config, repeat, order_index, hard_deadline):
        tag = f"{job}-{config}-r{repeat}"
        log_prefix = os.path.join(self.work_dir, "logs", tag)
        for old in glob.glob(log_prefix + "-*"):
            os.unlink(old)
        env, added = config_env(config, self.base_env, self.paths, log_prefix + "-%p.kcount", self.floor_match)
        argv = job_argv(job, config, self.params, self.paths, self.args.python)
        if self.args.dry_run:
            # The fake child gets the configuration's variables but no injected library.
            env.pop("CUDA_INJECTION64_PATH", None)
            if "LD_PRELOAD" in added:
                env.pop("LD_PRELOAD", None)
            env["KCOUNT_BENCH_FAKE_CONFIG"] = config
            env["KCOUNT_BENCH_FAKE_REPEAT"] = str(repeat)
            env["KCOUNT_BENCH_SAMPLE_LOG"] = self.sample_log
            argv = [sys.executable, os.path.abspath(__file__), "--fake-child", "--"] + argv
        stdout_path = os.path.join(self.out_dir, "runs", tag + ".stdout.txt")
        stderr_path = os.path.join(self.out_dir, "runs", tag + ".stderr.txt")
        timeout = JOB_TIMEOUT_S[job]
        if hard_deadline is not None:
            timeout = max(5.0, min(timeout, hard_deadline - self.elapsed()))
        # A child's ru_maxrss includes the memory of the process it was forked from (this runner) up to
        # its exec; a child peak at or below the runner's own peak is therefore not a measurement.
        runner_maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cpus = parse_cpus(self.args.cpp_cpus) if job == "cpp" else None
        driven = []  # the server job's results, measured here while the server runs
        drive = None
        if job == "server":
            def drive(pid, deadline):
                driven.extend(drive_server(pid, deadline, stdout_path, self.params))
        rc, wall, maxrss_kb, timed_out = run_process(argv, env, self.work_dir, stdout_path, stderr_path, timeout, cpus,
                                                     drive)
        self.last_wall[(job, config)] = wall

        run = {"job": job, "config": config, "repeat": repeat, "order": order_index, "argv": argv,
               "env_added": added, "exit_status": rc, "timed_out": timed_out, "wall_s": wall,
               "maxrss_kb": maxrss_kb, "runner_maxrss_kb": runner_maxrss_kb, "results": {}, "info": {},
               "problems": [], "invalid": [], "notes": []}
        if maxrss_kb <= runner_maxrss_kb:
            run["notes"].append(f"peak RSS {maxrss_kb} KiB not measured: not above the runner's own {runner_maxrss_kb} KiB")
        for obj in parse_json_lines(stdout_path) + driven:
            w = obj.get("workload")
            if w == "info":
                run["info"] = obj
            elif isinstance(w, str):
                run["results"][w] = obj
        if timed_out:
            run["problems"].append(f"timed out after {timeout:.0f} s")
            run["invalid"].append("timed out")
        elif rc != 0 and not (job == "server" and rc == -signal.SIGTERM):  # the server ends by SIGTERM
            run["problems"].append(f"exit status {rc}")
        for w in job_workloads(self.params, job):
            r = run["results"].get(w)
            if r is None:
                run["problems"].append(f"no result for {w}")
            elif "error" in r:
                run["problems"].append(f"{w}: {r['error']}")
            elif config == "torch-profiler" and "torch_profiler" not in r:
                run["problems"].append(f"{w}: no torch_profiler section")
                run["invalid"].append("torch.profiler not in effect")
        stderr_text = tail(stderr_path, 1 << 24)
        if config in FLOOR_ENV:
            active = [ln for ln in stderr_text.splitlines() if ln.startswith("cupti_floor:")]
            if not any(ln.startswith("cupti_floor: active") for ln in active):
                run["problems"].append("floor not in effect: " + (active[-1] if active else "no cupti_floor line"))
                run["invalid"].append("floor not in effect")
            else:
                run["floor"] = active[-1]
        if config in KCOUNT_ENV:
            self.collect_log(run, log_prefix)
        if run["problems"]:
            run["stderr_tail"] = tail(stderr_path)
        self.runs.append(run)
        return run

    def collect_log(self, run, log_prefix):
        """Finds the run's kcount log(s), times `kcount summary` on the largest, records size and totals."""
        config = run["config"]
        logs = sorted(glob.glob(log_prefix + "-*.kcount*"), key=lambda p: os.path.getsize(p), reverse=True)
        info = {"files": len(logs)}
        run["log"] = info
        if not logs:
            if config == "kcount-trace":
                run["problems"].append("kcount wrote no log (kcount not in effect?)")
                run["invalid"].append("no kcount log")
            else:
                run["notes"].append("no log written")
            return
        if len(logs) > 1:
            run["notes"].append(f"{len(logs)} logs written (largest used)")
        log = logs[0]
        info["bytes"] = os.path.getsize(log)
        seconds, totals, error = self.kcount_summary(log)
        info["summary_s"] = seconds
        if error:  # the run's timing still counts: the log exists, only reading it failed
            info["summary_error"] = error
            run["notes"].append(error)
        if totals:
            info["totals"] = totals
            kernels = totals.get("kernels") or 0
            info["kernels"] = kernels
            if kernels > 0:
                info["bytes_per_kernel"] = info["bytes"] / kernels
                if seconds is not None:
                    info["summary_s_per_million_kernels"] = seconds / kernels * 1e6
            dropped = {k: v for k, v in totals.items() if k.startswith("dropped") and v}
            if dropped:
                run["notes"].append(f"kcount dropped records: {dropped}")
            if config in ("kcount-paused", "kcount-paused-nogpu") and kernels > 0:
                run["notes"].append(f"paused run recorded {kernels} kernels (KCOUNT_START=paused not honored?)")
            if config == "kcount-trace" and kernels == 0:
                run["problems"].append("kcount log has no kernels")
                run["invalid"].append("kcount recorded no kernel")
        if not self.args.keep_logs:
            for p in logs:
                os.unlink(p)
        else:
            info["paths"] = logs

    def progress(self, run, total_repeats):
        parts = []
        for w in job_workloads(self.params, run["job"]):
            r = run["results"].get(w)
            key = WORKLOAD_INFO[w][2]
            if r is not None and key in r:
                parts.append(f"{w} {r[key]:.4g}")
        extra = ""
        log = run.get("log")
        if log and log.get("kernels"):
            extra = f", log {log['bytes'] / 1e6:.1f} MB {log['kernels']} kernels"
        status = "" if not run["problems"] else "  PROBLEM: " + "; ".join(run["problems"])[:200]
        print(f"[{self.elapsed():6.1f}s] {run['job']} r{run['repeat'] + 1}/{total_repeats} {run['config']}: "
              f"{' '.join(parts)} | {run['wall_s']:.1f} s, rss {run['maxrss_kb'] / 1024:.0f} MB{extra}{status}",
              flush=True)

    def run_all(self, plan):
        """plan: {job: [configs]}. Interleaved rounds; a round of a job is skipped when it would not fit
        the time budget, and a job is dropped when every run of its first round failed."""
        budget = self.params["budget_s"]
        hard = budget + 45.0 if budget and budget > 0 else None
        max_rounds = max(self.params["repeats"][j] for j in plan) if plan else 0
        dead_jobs = set()
        for r in range(max_rounds):
            for job, configs in plan.items():
                if job in dead_jobs or r >= self.params["repeats"][job]:
                    continue
                if budget and budget > 0:
                    known = [self.last_wall[(job, c)] for c in configs if (job, c) in self.last_wall]
                    estimate = (sum(known) + max(known) * (len(configs) - len(known))) if known else 0.0
                    if r > 0 and self.elapsed() + estimate > budget:
                        self.note(f"{job}: round {r + 1} skipped: {self.elapsed():.0f} s + estimated "
                                  f"{estimate:.0f} s > budget {budget:.0f} s")
                        continue
                    if r == 0 and self.elapsed() > budget:
                        self.note(f"{job}: not run: budget {budget:.0f} s used up")
                        continue
                order = rotated(configs, r)
                round_runs = []
                for i, config in enumerate(order):
                    if hard is not None and self.elapsed() > hard - 5:
                        self.note(f"{job}: round {r + 1} cut short at {config}: hard time limit")
                        break
                    run = self.run_one(job, config, r, i, hard)
                    round_runs.append(run)
                    self.progress(run, self.params["repeats"][job])
                if r == 0 and round_runs and not any(run_valid_for(run, w) for run in round_runs
                                                     for w in job_workloads(self.params, job)):
                    dead_jobs.add(job)
                    self.note(f"{job}: every run of the first round failed; job dropped (see runs/ and the JSON)")


# ---------------------------------------------------------------------------------------------------
# Analysis
# ---------------------------------------------------------------------------------------------------

def run_valid_for(run, workload):
    """A run's timing counts for a workload if the workload reported a result and the configuration was
    in effect (floor active, kcount wrote a log with kernels, not timed out). A failure of another
    workload of the same process, or a non-zero exit status after the results were printed, is reported
    but does not discard this workload's result."""
    r = run["results"].get(workload)
    if r is None or "error" in r:
        return False
    return WORKLOAD_INFO[workload][2] in r and not run.get("invalid")


def analyze(runs, plan, params):
    stats = {}  # job -> workload -> config -> describe()
    extra = {}  # job -> config -> {...}
    for job, configs in plan.items():
        stats[job] = {}
        for w in job_workloads(params, job):
            key = WORKLOAD_INFO[w][2]
            stats[job][w] = {}
            for c in configs:
                vals = [run["results"][w][key] for run in runs
                        if run["job"] == job and run["config"] == c and run_valid_for(run, w)]
                d = describe(vals)
                if d is not None:
                    stats[job][w][c] = d
            if w == "graph":
                stats[job]["graph_per_launch"] = {}
                for c in configs:
                    vals = [run["results"][w]["us_per_launch"] for run in runs
                            if run["job"] == job and run["config"] == c and run_valid_for(run, w)]
                    d = describe(vals)
                    if d is not None:
                        stats[job]["graph_per_launch"][c] = d
        extra[job] = {}
        for c in configs:
            mine = [run for run in runs if run["job"] == job and run["config"] == c]
            ok = [run for run in mine if not run.get("invalid") and run["results"]]
            e = {"runs": len(mine), "ok_runs": len(ok)}
            rss = describe([run["maxrss_kb"] for run in ok
                            if run["maxrss_kb"] and run["maxrss_kb"] > run.get("runner_maxrss_kb", 0)])
            if rss:
                e["maxrss_kb"] = rss
            logs = [run["log"] for run in ok if run.get("log")]
            for key in ("bytes", "kernels", "bytes_per_kernel", "summary_s", "summary_s_per_million_kernels"):
                d = describe([lg[key] for lg in logs if lg.get(key) is not None])
                if d:
                    e["log_" + key] = d
            if job == "server":
                for key, values in (("client_tokens_per_s", [r["results"].get("server", {}).get("client_tokens_per_s")
                                                              for r in ok]),
                                    ("decode_ms_per_token", [r["results"].get("server", {}).get("decode_ms_per_token")
                                                              for r in ok]),
                                    ("startup_s", [r["info"].get("startup_s") for r in ok])):
                    d = describe([v for v in values if v is not None])
                    if d:
                        e[key] = d
            if c == "torch-profiler":
                post, kernels, events = [], [], []
                for run in ok:
                    infos = [r["torch_profiler"] for r in run["results"].values() if "torch_profiler" in r]
                    if infos:
                        post.append(sum(i["postprocess_s"] for i in infos))
                        kernels.append(sum(i["kernel_events"] for i in infos))
                        events.append(sum(i["events"] for i in infos))
                if post:
                    e["profiler_postprocess_s"] = describe(post)
                    e["profiler_kernel_events"] = describe(kernels)
                    e["profiler_events"] = describe(events)
                    per_m = [p / k * 1e6 for p, k in zip(post, kernels) if k]
                    if per_m:
                        e["profiler_postprocess_s_per_million_kernels"] = describe(per_m)
            extra[job][c] = e
        none_rss = extra[job].get("none", {}).get("maxrss_kb")
        for c, e in extra[job].items():
            if none_rss and e.get("maxrss_kb"):
                e["extra_rss_mb"] = (e["maxrss_kb"]["median"] - none_rss["median"]) / 1024.0

    derived = {}
    for job in stats:
        derived[job] = {}
        for w, per_config in stats[job].items():
            if w == "graph_per_launch":
                continue
            base = per_config.get("none")
            floor = per_config.get("cupti-floor")
            derived[job][w] = {}
            higher_better = WORKLOAD_INFO[w][1] in HIGHER_IS_BETTER
            for c, d in per_config.items():
                x = {}
                if base:
                    # relative_pct: the change of the value itself (tokens/s: negative when slower);
                    # slower_pct: the change of the time per unit (positive when slower, every unit).
                    x["added_vs_none"] = d["median"] - base["median"]
                    x["relative_pct"] = (d["median"] / base["median"] - 1.0) * 100.0 if base["median"] else None
                    if higher_better:
                        x["slower_pct"] = (base["median"] / d["median"] - 1.0) * 100.0 if d["median"] else None
                    else:
                        x["slower_pct"] = x["relative_pct"]
                if floor:
                    x["added_vs_floor"] = d["median"] - floor["median"]
                derived[job][w][c] = x
    return stats, extra, derived


def find_stat(stats, workload, config):
    for job in stats:
        d = stats[job].get(workload, {}).get(config)
        if d is not None:
            return d
    return None


def budget_checks(stats, support, dry_run):
    """The issue's budget, as PASS/FAIL/SKIP lines (dicts: check, status, detail)."""
    checks = []

    def add(check, status, detail):
        checks.append({"check": check, "status": status, "detail": detail})

    def missing(cfg):
        if cfg in KCOUNT_NEEDS and not support.get(KCOUNT_NEEDS[cfg]) and not dry_run:
            return f"libkcount.so does not know {KCOUNT_NEEDS[cfg]}: {cfg} not run"
        return f"no valid {cfg} runs"

    for cfg, limit, label in (("kcount-trace", BUDGET_TRACE_US, "trace"), ("kcount-summary", BUDGET_SUMMARY_US, "summary")):
        for w in ("runtime", "driver"):
            name = f"{label} <= {limit} us/launch above floor ({WORKLOAD_INFO[w][0]})"
            k, f = find_stat(stats, w, cfg), find_stat(stats, w, "cupti-floor")
            if k is None or f is None:
                add(name, "SKIP", missing(cfg) if k is None else missing("cupti-floor"))
                continue
            diff = k["median"] - f["median"]
            add(name, "PASS" if diff <= limit else "FAIL",
                f"{diff:+.3f} us (kcount {k['median']:.3f} [{k['min']:.3f}..{k['max']:.3f}], "
                f"floor {f['median']:.3f} [{f['min']:.3f}..{f['max']:.3f}])")

    for w in ("runtime", "driver", "add_loop"):
        name = f"paused indistinguishable from none ({WORKLOAD_INFO[w][0]})"
        p, n = find_stat(stats, w, "kcount-paused"), find_stat(stats, w, "none")
        if p is None or n is None:
            add(name, "SKIP", missing("kcount-paused") if p is None else missing("none"))
            continue
        diff = p["median"] - n["median"]
        spread = max(p["max"] - p["min"], n["max"] - n["min"])
        add(name, "PASS" if abs(diff) <= spread else "FAIL",
            f"|{diff:+.3f}| vs spread {spread:.3f} {WORKLOAD_INFO[w][1]} (max of the two min..max ranges)")

    prof, none_add = find_stat(stats, "add_loop", "torch-profiler"), find_stat(stats, "add_loop", "none")
    for cfg in ("kcount-trace", "kcount-summary"):
        name = f"add_ loop: {cfg} added <= 1/2 of torch.profiler's"
        k = find_stat(stats, "add_loop", cfg)
        if k is None or prof is None or none_add is None:
            add(name, "SKIP", missing(cfg) if k is None else missing("torch-profiler" if prof is None else "none"))
            continue
        k_add, p_add = k["median"] - none_add["median"], prof["median"] - none_add["median"]
        ok = k_add <= 0.5 * p_add
        add(name, "PASS" if ok else "FAIL", f"kcount {k_add:+.2f} vs torch.profiler {p_add:+.2f} us/iter "
                                            f"(none {none_add['median']:.2f})")

    # The step and server lines are given for the workloads this run planned (stats has them).
    planned = {w for job in stats for w in stats[job]}
    for w in STEP_WORKLOADS:
        if w not in planned:
            continue
        name = f"summary <= {BUDGET_STEP_PCT:g}% added step time ({WORKLOAD_INFO[w][0]})"
        n = find_stat(stats, w, "none")
        s = find_stat(stats, w, "kcount-summary")
        if n is None:
            add(name, "SKIP", "no valid none runs")
            continue
        if s is None:
            t = find_stat(stats, w, "kcount-trace")
            info = f"; trace mode: {(t['median'] / n['median'] - 1) * 100:+.2f}%" if t else ""
            add(name, "SKIP", missing("kcount-summary") + info)
            continue
        pct = (s["median"] / n["median"] - 1.0) * 100.0
        add(name, "PASS" if pct <= BUDGET_STEP_PCT else "FAIL",
            f"{pct:+.2f}% ({s['median']:.3f} vs {n['median']:.3f} ms/step)")

    # Count-only summary mode (KCOUNT_GPU_TIME=0) against none: every step workload, the server's tokens
    # per second, the graph replay loop per kernel.
    count = "kcount-summary-nogpu"
    for w in STEP_WORKLOADS + ["server", "graph"]:
        if w not in planned:
            continue
        unit = WORKLOAD_INFO[w][1]
        if w == "graph":
            name = f"count-only summary <= +{BUDGET_COUNT_GRAPH_US:g} us per graph kernel vs none ({WORKLOAD_INFO[w][0]})"
        elif w == "server":
            name = f"count-only summary >= -{BUDGET_COUNT_TOKENS_PCT:g}% tokens/s vs none ({WORKLOAD_INFO[w][0]})"
        else:
            name = f"count-only summary <= +{BUDGET_COUNT_STEP_PCT:g}% step time vs none ({WORKLOAD_INFO[w][0]})"
        g, n = find_stat(stats, w, count), find_stat(stats, w, "none")
        if g is None or n is None:
            add(name, "SKIP", missing(count) if g is None else "no valid none runs")
            continue
        pct = (g["median"] / n["median"] - 1.0) * 100.0
        if w == "graph":
            diff = g["median"] - n["median"]
            ok = diff <= BUDGET_COUNT_GRAPH_US
            detail = f"{diff:+.4f} us ({g['median']:.4f} vs {n['median']:.4f} us/kernel)"
        elif w == "server":
            ok = pct >= -BUDGET_COUNT_TOKENS_PCT
            detail = f"{pct:+.2f}% ({g['median']:.1f} vs {n['median']:.1f} tokens/s)"
        else:
            ok = pct <= BUDGET_COUNT_STEP_PCT
            detail = f"{pct:+.2f}% ({g['median']:.3f} vs {n['median']:.3f} {unit})"
        add(name, "PASS" if ok else "FAIL", detail)
    return checks


# ---------------------------------------------------------------------------------------------------
# Table
# ---------------------------------------------------------------------------------------------------

def cell(d, digits=2):
    if d is None:
        return "-"
    return f"{d['median']:.{digits}f} [{d['min']:.{digits}f}..{d['max']:.{digits}f}]"


def grid(rows):
    """Rows of cells as text lines, each column padded to its widest cell, two spaces apart."""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(len(r) for r in rows))]
    return ["  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows]


def mode_table(doc):
    """The one table of a run: rows the configurations, columns the workloads, each cell the median over
    runs and its change against none: in the unit for us units, in percent for ms/step and tokens/s
    (UNIT_CHANGE; tokens/s is higher-is-better, so a slower configuration shows a negative change). Returns
    {"workloads", "configs", "cells": {config: {workload: {...}}}, "lines"}: lines are a caption and a
    Markdown table, ready to open docs/performance.md."""
    stats, plan, params, env = doc["stats"], doc["plan"], doc["parameters"], doc["environment"]
    workloads = [w for job in plan for w in job_workloads(params, job)]
    configs = []
    for cs in plan.values():
        configs += [c for c in cs if c not in configs]

    def unit_text(unit):
        return unit.replace("us/", "µs/")

    cells = {}
    rows = [["configuration"] + [f"`{w}` {unit_text(WORKLOAD_INFO[w][1])}" for w in workloads]]
    for c in configs:
        cells[c] = {}
        row = [f"`{c}`"]
        for w in workloads:
            unit = WORKLOAD_INFO[w][1]
            kind, digits = UNIT_CHANGE[unit]
            d, n = find_stat(stats, w, c), find_stat(stats, w, "none")
            if d is None:
                row.append("-")
                continue
            text = f"{d['median']:.{digits}f}"
            change = None
            if c != "none" and n is not None:
                if kind == "abs":
                    change = d["median"] - n["median"]
                    text += f" ({fmt_signed(change, digits)} µs)"
                elif n["median"]:
                    change = (d["median"] / n["median"] - 1.0) * 100.0
                    text += f" ({fmt_signed(change)} %)"
            cells[c][w] = {"median": d["median"], "n": d["n"], "change": change, "change_kind": kind, "unit": unit}
            row.append(text)
        rows.append(row)
    runs = []
    for job in plan:
        ns = [d["n"] for w in stats.get(job, {}) if w != "graph_per_launch" for d in stats[job][w].values()]
        if ns:
            runs.append(f"{job} {min(ns)}" + (f"-{max(ns)}" if max(ns) != min(ns) else ""))
    caption = (f"kcount overhead by mode and workload ({doc['mode']}{', DRY RUN: fake numbers' if doc['dry_run'] else ''}), "
               f"{doc['finished']}, {env.get('device', '?')}, driver {env.get('driver', '?')}, torch {env.get('torch', '-')}, "
               f"CUDA {env.get('cuda', '-')}: median over fresh processes (runs per cell: {', '.join(runs) or '-'}); "
               f"in brackets the change against `none`, in µs for µs units, in % for ms/step and tokens/s "
               f"(tokens/s: higher is better, negative = slower)")
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [caption, ""]
    for i, r in enumerate(rows):
        lines.append("| " + " | ".join(text.ljust(widths[k]) for k, text in enumerate(r)) + " |")
        if i == 0:
            lines.append("|" + "|".join("-" * (width + 2) for width in widths) + "|")
    lines.append("")
    return {"workloads": workloads, "configs": configs, "cells": cells, "lines": lines}


def table_lines(doc):
    lines = []
    env = doc["environment"]
    params = doc["parameters"]
    stats, extra, derived = doc["stats"], doc["extra"], doc["derived"]
    plan = doc["plan"]
    head = f"=== kcount overhead benchmark ({doc['mode']}{', DRY RUN: fake numbers' if doc['dry_run'] else ''}), " \
           f"{doc['finished']}: {env.get('device', '?')}, driver {env.get('driver', '?')}, " \
           f"torch {env.get('torch', '-')}, CUDA {env.get('cuda', '-')}"
    lines.append(head)
    lines.append(f"    out {doc['out']}; {len(doc['runs'])} runs in {doc['elapsed_s']:.0f} s; values: median [min..max] "
                 f"over runs (fresh processes, interleaved)")
    if "cpp" in plan:
        reps = params["repeats"]["cpp"]
        lines.append(f"C++ loop: {params['launches']} launches/run, graph {params['graph_kernels']} kernels x "
                     f"{params['graph_replays']} replays; up to {reps} runs; +none/+floor: added us vs none/cupti-floor")
        rows = [["config", "runtime us/launch", "+none", "+floor", "driver us/launch", "+none", "+floor",
                 "graph us/kernel", "+floor", "B/kernel", "+RSS MB", "n"]]
        for c in plan["cpp"]:
            row = [c]
            for w in ("runtime", "driver"):
                x = derived["cpp"].get(w, {}).get(c, {})
                row += [cell(stats["cpp"].get(w, {}).get(c)),
                        fmt_signed(x.get("added_vs_none") if c != "none" else None),
                        fmt_signed(x.get("added_vs_floor") if c not in ("none", "cupti-floor") else None)]
            x = derived["cpp"].get("graph", {}).get(c, {})
            e = extra["cpp"].get(c, {})
            row += [cell(stats["cpp"].get("graph", {}).get(c), 3),
                    fmt_signed(x.get("added_vs_floor") if c not in ("none", "cupti-floor") else None, 3),
                    fmt(e.get("log_bytes_per_kernel", {}).get("median"), 1),
                    fmt_signed(e.get("extra_rss_mb") if c != "none" else None, 0),
                    str(e.get("ok_runs", 0))]
            rows.append(row)
        lines += grid(rows)
    py_jobs = [j for j in ("py", "py-compiled") if j in plan]
    if py_jobs:
        workloads = [w for j in py_jobs for w in job_workloads(params, j)]
        configs = []
        for j in py_jobs:
            configs += [c for c in plan[j] if c not in configs]
        reps = "/".join(str(params["repeats"][j]) for j in py_jobs)
        lines.append(f"Python: add_ {params['add_iters']} iters, steps {params['steps']} (fwd+bwd, bf16); "
                     f"{params['inner_repeats']} timed repeats per process, up to {reps} runs ({'/'.join(py_jobs)}); "
                     f"(+x) added vs none")
        rows = [["config"] + [f"{WORKLOAD_INFO[w][0]} {WORKLOAD_INFO[w][1]}" for w in workloads] +
                [f"+RSS MB {j}" for j in py_jobs]]
        for c in configs:
            row = [c]
            for w in workloads:
                job = "py" if w in JOB_WORKLOADS["py"] else "py-compiled"
                d = stats.get(job, {}).get(w, {}).get(c)
                if d is None:
                    row.append("-")
                    continue
                x = derived[job][w].get(c, {})
                if w == "add_loop":
                    text = cell(d)
                    if c != "none" and x.get("added_vs_none") is not None:
                        text += f" ({x['added_vs_none']:+.2f})"
                elif c != "none" and x.get("relative_pct") is not None:
                    text = f"{d['median']:.3f} ({x['relative_pct']:+.1f}%)"
                else:
                    text = cell(d, 3)
                row.append(text)
            for j in py_jobs:
                row.append(fmt_signed(extra.get(j, {}).get(c, {}).get("extra_rss_mb") if c != "none" else None, 0))
            rows.append(row)
        lines += grid(rows)
    if "server" in plan:
        sv = params["server"]
        lines.append(f"Server: examples/serve.py --layers {sv['layers']} --hidden {sv['hidden']}; {sv['warmup_requests']} "
                     f"untimed + {params['server_requests']} timed requests of {sv['prompt_len']} prompt tokens and "
                     f"{sv['new_tokens']} new tokens, one at a time; up to {params['repeats']['server']} runs; tokens/s: "
                     f"median over a run's requests of the server's own tokens/s (client: tokens over the requests' wall time)")
        rows = [["config", "tokens/s", "(vs none)", "client tokens/s", "decode ms/token", "start s", "+RSS MB", "n"]]
        for c in plan["server"]:
            d = stats["server"].get("server", {}).get(c)
            rel = derived["server"].get("server", {}).get(c, {}).get("relative_pct") if c != "none" else None
            e = extra["server"].get(c, {})
            rows.append([c, cell(d, 1), "-" if rel is None else f"{rel:+.2f}%",
                         fmt(e.get("client_tokens_per_s", {}).get("median"), 1),
                         fmt(e.get("decode_ms_per_token", {}).get("median"), 3),
                         fmt(e.get("startup_s", {}).get("median"), 1),
                         fmt_signed(e.get("extra_rss_mb") if c != "none" else None, 0), str(e.get("ok_runs", 0))])
        lines += grid(rows)
    lines += doc["mode_table"]["lines"]
    # Post-processing: kcount summary per million kernels vs torch.profiler's.
    for job in plan:
        parts = []
        for c in ("kcount-trace", "kcount-summary"):
            e = extra.get(job, {}).get(c, {})
            d = e.get("log_summary_s_per_million_kernels")
            if d:
                parts.append(f"{c[7:]} {d['median']:.2f} s ({e['log_kernels']['median'] / 1e6:.3f} M kernels/log, "
                             f"{fmt(e.get('log_bytes_per_kernel', {}).get('median'), 1)} B/kernel)")
        if parts:
            lines.append(f"kcount summary per million kernels, {job}: " + "; ".join(parts))
    for job in plan:
        e = extra.get(job, {}).get("torch-profiler", {})
        d = e.get("profiler_postprocess_s_per_million_kernels")
        if d:
            lines.append(f"torch.profiler post-processing per million kernels: {job} {d['median']:.2f} s "
                         f"({e['profiler_postprocess_s']['median']:.2f} s for {e['profiler_kernel_events']['median'] / 1e6:.3f} "
                         f"M kernels, {e['profiler_events']['median'] / 1e6:.3f} M events)")
    bad = [r for r in doc["runs"] if r["problems"]]
    if bad:
        n_invalid = sum(1 for r in bad if r.get("invalid"))
        lines.append(f"Runs with problems: {len(bad)} ({n_invalid} left out of the statistics: configuration not in "
                     f"effect or timed out; details in the JSON)")
        for r in bad[:3]:
            lines.append(f"  {r['job']}/{r['config']}/r{r['repeat'] + 1}: {'; '.join(r['problems'])[:150]}")
    for n in doc["notes"][:4]:
        lines.append(f"note: {n[:170]}")
    if len(doc["notes"]) > 4:
        lines.append(f"note: ... {len(doc['notes']) - 4} more in the JSON")
    for b in doc["budget"]:
        lines.append(f"BUDGET {b['status']:<4} {b['check']}: {b['detail']}")
    counts = {s: sum(1 for b in doc["budget"] if b["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
    ok_runs = sum(1 for r in doc["runs"] if not r["problems"])
    lines.append(f"RESULT: budget {counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP; "
                 f"runs {ok_runs}/{len(doc['runs'])} ok; JSON {doc['json']}; plot {doc.get('plot') or 'none'}")
    return lines


# ---------------------------------------------------------------------------------------------------
# Environment, setup
# ---------------------------------------------------------------------------------------------------

def capture(argv, timeout=30):
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace").strip(), p.stderr.decode(errors="replace").strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, "", str(exc)


def find_nvcc(explicit):
    if explicit:
        return explicit
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def compile_launch_loop(nvcc, arch, work_dir):
    """nvcc -O2 -arch=ARCH launch_loop.cu -lcuda; retried with the toolkit's stub libcuda folder on the
    link path. Returns (binary path or None, message)."""
    out = os.path.join(work_dir, "launch_loop")
    src = os.path.join(BENCH, "launch_loop.cu")
    base = [nvcc, "-O2", f"-arch={arch}", "-o", out, src]
    cuda_root = os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if os.path.exists(nvcc) else "/usr/local/cuda"
    tries = [base + ["-lcuda"], base + [f"-L{cuda_root}/lib64/stubs", "-lcuda"]]
    msg = ""
    for argv in tries:
        rc, so, se = capture(argv, timeout=300)
        if rc == 0 and os.path.exists(out):
            return out, " ".join(argv)
        msg = f"{' '.join(argv)}: exit status {rc}: {(so + ' ' + se)[-400:]}"
    return None, msg


def environment_info(paths, dry_run):
    env = {"host": platform.node(), "platform": platform.platform(), "cpus": os.cpu_count(),
           "python_runner": sys.version.split()[0]}
    if dry_run:
        env.update({"device": "fake device (dry run)", "driver": "-"})
        return env
    rc, so, _ = capture(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    if rc == 0 and so:
        first = so.splitlines()[0].split(",")
        env["device"] = first[0].strip()
        if len(first) > 1:
            env["driver"] = first[1].strip()
        env["gpus"] = len(so.splitlines())
    if os.path.exists(paths["kcount"]):
        rc, so, _ = capture([paths["kcount"], "--version"])
        if rc == 0:
            env["kcount_version"] = so
    return env


# ---------------------------------------------------------------------------------------------------
# Dry run: fake child and self-checks
# ---------------------------------------------------------------------------------------------------

FAKE_US = {  # config -> (runtime, driver, graph per kernel) us; floor variants default to cupti-floor's
    "none": (4.50, 4.00, 1.00),
    "cupti-floor": (6.60, 6.00, 1.40),
    "kcount-trace": (6.75, 6.15, 1.45),     # +0.15 over the floor: PASS (<= 0.2)
    "kcount-summary": (6.75, 6.15, 1.42),   # +0.15 over the floor: FAIL (> 0.1)
    "kcount-paused": (4.50, 4.00, 1.00),    # same as none: PASS
    "floor-no-activity": (6.30, 5.80, 1.00),
    "floor-no-activity-driver": (5.90, 5.75, 1.00),
    "kcount-summary-nogpu": (6.45, 5.95, 1.02),          # graph +0.02 us/kernel vs none: PASS (<= 0.05)
    "kcount-summary-nogpu-driver": (6.05, 5.90, 1.02),
}
FAKE_PY_WORKLOADS = ["add_loop", "geglu_eager", "transformer_eager", "geglu_compiled", "transformer_compiled",
                     "transformer_reduce_overhead"]
FAKE_PY = {  # config -> add_loop us/iter, then ms/step of the other FAKE_PY_WORKLOADS
    "none": (9.0, 5.0, 12.0, 4.8, 9.0, 6.0),
    "cupti-floor": (10.5, 5.01, 12.2, 4.81, 9.02, 6.03),
    "kcount-trace": (10.8, 5.05, 12.4, 4.85, 9.1, 6.1),
    "kcount-summary": (10.6, 5.02, 12.3, 4.81, 9.05, 6.18),        # +0.4%, +2.5% (FAIL), +0.2%, +0.56%, +3% (FAIL)
    "kcount-summary-nogpu": (9.9, 5.01, 12.3, 4.81, 9.03, 6.02),   # +0.2%, +2.5% (FAIL), +0.2%, +0.33%, +0.33%
    "kcount-summary-nogpu-driver": (9.6, 5.0, 12.2, 4.8, 9.02, 6.01),
    "kcount-paused": (9.0, 5.0, 12.0, 4.8, 9.0, 6.0),
    "torch-profiler": (13.5, 5.5, 14.0, 5.3, 10.0, 7.0),           # add_: kcount +1.8/+1.6 vs profiler +4.5: PASS
}
FAKE_SERVER = {  # config -> the server's tokens/s per request; floor variants default to cupti-floor's
    "none": 10000.0,
    "cupti-floor": 9850.0,
    "kcount-trace": 9500.0,
    "kcount-summary": 9700.0,
    "kcount-summary-nogpu": 9800.0,          # -2%: FAIL (>= -1% wanted); a wrong sign would pass it
    "kcount-summary-nogpu-driver": 9950.0,
    "kcount-paused": 10000.0,
}
FAKE_BASE_RSS_MB = 192
FAKE_EXTRA_RSS_MB = {"kcount-trace": 24}
DRY_RUN_EXPECTED = {
    "trace <= 0.2 us/launch above floor (runtime <<<>>>)": "PASS",
    "trace <= 0.2 us/launch above floor (driver cuLaunchKernel)": "PASS",
    "summary <= 0.1 us/launch above floor (runtime <<<>>>)": "FAIL",
    "summary <= 0.1 us/launch above floor (driver cuLaunchKernel)": "FAIL",
    "paused indistinguishable from none (runtime <<<>>>)": "PASS",
    "paused indistinguishable from none (driver cuLaunchKernel)": "PASS",
    "paused indistinguishable from none (add_ loop)": "PASS",
    "add_ loop: kcount-trace added <= 1/2 of torch.profiler's": "PASS",
    "add_ loop: kcount-summary added <= 1/2 of torch.profiler's": "PASS",
    "summary <= 1% added step time (geglu eager)": "PASS",
    "summary <= 1% added step time (xfmr eager)": "FAIL",
    "summary <= 1% added step time (geglu compiled)": "PASS",
    "summary <= 1% added step time (xfmr compiled)": "PASS",
    "summary <= 1% added step time (xfmr reduce-overhead)": "FAIL",
    "count-only summary <= +1% step time vs none (geglu eager)": "PASS",
    "count-only summary <= +1% step time vs none (xfmr eager)": "FAIL",
    "count-only summary <= +1% step time vs none (geglu compiled)": "PASS",
    "count-only summary <= +1% step time vs none (xfmr compiled)": "PASS",
    "count-only summary <= +1% step time vs none (xfmr reduce-overhead)": "PASS",
    "count-only summary >= -1% tokens/s vs none (server)": "FAIL",
    "count-only summary <= +0.05 us per graph kernel vs none (graph replay)": "PASS",
}


def fake_child(argv):
    """Stands in for launch_loop / python_workloads.py / examples/serve.py in --dry-run: same argv, same JSON
    lines (the server: its start line, HTTP answers, the end by SIGTERM), numbers from the tables above
    with small seeded noise; simulates the floor's stderr line, kcount's log (a copy of a log recorded on
    an H200; the server writes it at SIGTERM, as kcount's handler does) and kcount's extra memory."""
    config = os.environ["KCOUNT_BENCH_FAKE_CONFIG"]
    repeat = int(os.environ.get("KCOUNT_BENCH_FAKE_REPEAT", "0"))
    if config in FLOOR_ENV:
        print(f"cupti_floor: active: dry run ({config})", file=sys.stderr)
    # Every fake child holds FAKE_BASE_RSS_MB (more than the runner, whose memory a child's peak includes)
    # and a kcount configuration FAKE_EXTRA_RSS_MB on top.
    ballast = b"\x01" * ((FAKE_BASE_RSS_MB + FAKE_EXTRA_RSS_MB.get(config, 0)) << 20)
    pattern = os.environ.get("KCOUNT_OUTPUT")
    writes_log = pattern and config in ("kcount-trace", "kcount-summary")
    server = any(a.endswith("serve.py") for a in argv)
    if writes_log and not server:
        shutil.copyfile(os.environ["KCOUNT_BENCH_SAMPLE_LOG"], pattern.replace("%p", str(os.getpid())))

    def noisy(x, w, rel):
        rng = random.Random(f"{config}/{repeat}/{w}")
        return x * (1.0 + rng.uniform(-rel, rel))

    if server:
        return fake_server(argv, FAKE_SERVER.get(config, FAKE_SERVER["cupti-floor"]), noisy,
                           pattern.replace("%p", str(os.getpid())) if writes_log else None)
    if any(a.endswith("python_workloads.py") for a in argv):
        workloads = argv[argv.index("--workloads") + 1].split(",")
        iters = int(argv[argv.index("--add-iters") + 1])
        repeats = int(argv[argv.index("--repeats") + 1])
        print(json.dumps({"workload": "info", "torch": "0.0-fake", "cuda": "fake", "device": "fake device"}))
        base = FAKE_PY.get(config, FAKE_PY["cupti-floor"])
        for w in workloads:
            v = noisy(base[FAKE_PY_WORKLOADS.index(w)], w, 0.002)
            res = {"workload": w, "unit": "us/iter" if w == "add_loop" else "ms/step", "repeats": repeats,
                   "values": [v] * repeats, "value": v}
            if "--torch-profiler" in argv:
                kernels = iters * repeats if w == "add_loop" else 100 * repeats
                res["torch_profiler"] = {"stop_s": kernels * 2e-5, "key_averages_s": kernels * 5e-6,
                                         "postprocess_s": kernels * 2.5e-5, "events": 3 * kernels,
                                         "kernel_events": kernels}
            print(json.dumps(res))
    else:
        mode = argv[1]  # launch_loop all N M K | graph M K | runtime N | driver N
        n = int(argv[2]) if mode != "graph" else 0
        m, k = (int(argv[3]), int(argv[4])) if mode == "all" else (int(argv[2]), int(argv[3])) if mode == "graph" else (0, 0)
        print(json.dumps({"workload": "info", "device": "fake device", "driver_version": 0, "runtime_version": 0}))
        base = FAKE_US.get(config, FAKE_US["cupti-floor"])
        for i, (w, launches, kernels) in enumerate((("runtime", n, n), ("driver", n, n), ("graph", m, m * k))):
            if mode not in ("all", w):
                continue
            us_kernel = noisy(base[i], w, 0.003)
            seconds = us_kernel * kernels / 1e6
            print(json.dumps({"workload": w, "n": launches, "launches": launches, "kernels": kernels,
                              "seconds": seconds, "us_per_launch": seconds * 1e6 / launches,
                              "us_per_kernel": us_kernel}))
    sys.stdout.flush()
    del ballast
    return 0


def fake_server(argv, tokens_per_s, noisy, log_path):
    """The dry run's examples/serve.py: listens on 127.0.0.1 (--port 0: a free port), prints serve.py's
    start line, answers POST /generate as serve.py does with tokens_per_s (seeded noise per request; it
    sleeps for the time that rate gives) and GET /health; on SIGTERM writes the sample log to log_path (a
    kcount configuration) and ends by the signal, as libkcount.so's handler does."""
    from http.server import BaseHTTPRequestHandler, HTTPServer
    served = [0]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def answer(self, code, obj):
            body = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.answer(200, {"ok": True, "requests": served[0], "pid": os.getpid(), "decode": "graph"})

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            new = req.get("max_new_tokens", 16)
            served[0] += 1
            rate = noisy(tokens_per_s, f"server/{served[0]}", 0.001)
            total_ms = new / rate * 1e3
            time.sleep(total_ms / 1e3)
            self.answer(200, {"tokens": [1] * new, "prompt_len": req.get("prompt_len"), "new_tokens": new,
                              "prefill_ms": total_ms * 0.1, "decode_ms": total_ms * 0.9, "total_ms": total_ms,
                              "tokens_per_s": rate})

    def on_term(sig, frame):
        if log_path:
            shutil.copyfile(os.environ["KCOUNT_BENCH_SAMPLE_LOG"], log_path)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    signal.signal(signal.SIGTERM, on_term)
    port = int(argv[argv.index("--port") + 1])
    httpd = HTTPServer(("127.0.0.1", port), Handler)
    port = httpd.server_address[1]
    print(f"serve.py: listening on http://127.0.0.1:{port} port={port} pid={os.getpid()} device=fake "
          f"layers={argv[argv.index('--layers') + 1]} decode=graph graph_kernel_nodes=42 (dry run)", flush=True)
    httpd.serve_forever()
    return 0


def is_default_plan(args):
    return args.configs is None and args.workloads is None and args.jobs == list(JOB_WORKLOADS)


def dry_run_checks(doc, runner, plan, build_dir):
    """Self-checks of --dry-run: returns a list of failures (empty: all good). The checks of particular
    numbers (budget verdicts, log size, memory, table cells) need the default plan (no --jobs, --workloads
    or --configs); the others hold for any plan."""
    fail = []
    runs = doc["runs"]
    default_plan = is_default_plan(runner.args)
    # 1. Interleaving: each round of a job runs each configuration once, as a cyclic shift of the job's
    #    order that starts at configuration r (mod the number of configurations), in the order run.
    for job, configs in plan.items():
        for r in range(doc["parameters"]["repeats"][job]):
            seq = [x["config"] for x in runs if x["job"] == job and x["repeat"] == r]
            start = configs[r % len(configs)]
            want = configs[configs.index(start):] + configs[:configs.index(start)]
            if seq != want:
                fail.append(f"{job} round {r}: ran {seq}, want {want}")
    want_runs = sum(doc["parameters"]["repeats"][j] * len(c) for j, c in plan.items())
    if len(runs) != want_runs:
        fail.append(f"{len(runs)} runs, want {want_runs}")
    bad = [f"{x['job']}/{x['config']}/r{x['repeat']}: {x['problems']}" for x in runs if x["problems"]]
    if bad:
        fail.append(f"runs with problems: {bad[:3]}")
    # 2. The JSON on disk reloads and its statistics match a recomputation from its own runs.
    with open(doc["json"]) as f:
        disk = json.load(f)
    stats, _, _ = analyze(disk["runs"], disk["plan"], disk["parameters"])
    if json.loads(json.dumps(stats)) != disk["stats"]:
        fail.append("statistics recomputed from the JSON's runs differ from the JSON's statistics")
    for job in plan:
        for w in job_workloads(doc["parameters"], job):
            for c in plan[job]:
                vals = [x["results"][w][WORKLOAD_INFO[w][2]] for x in runs if x["job"] == job and x["config"] == c]
                d = disk["stats"][job][w].get(c)
                if d is None or abs(d["median"] - statistics.median(vals)) > 1e-12:
                    fail.append(f"median of {job}/{w}/{c} wrong")
    # 3. Budget verdicts from the fake numbers.
    got = {b["check"]: b["status"] for b in doc["budget"]}
    for check, status in DRY_RUN_EXPECTED.items():
        if default_plan and got.get(check) != status:
            fail.append(f"budget '{check}': {got.get(check)}, want {status}")
    # 4. Log bytes per kernel from the real kcount, checked against the sample log's own numbers.
    kcount = os.path.join(build_dir, "bin", "kcount")
    if not default_plan:
        print("dry run: not the default plan: checks of particular numbers skipped", flush=True)
    elif os.path.exists(kcount):
        _, totals, err = runner.kcount_summary(runner.sample_log)
        if err or not totals or not totals.get("kernels"):
            fail.append(f"kcount summary of the sample log: {err or totals}")
        else:
            want = os.path.getsize(runner.sample_log) / totals["kernels"]
            got_bpk = doc["extra"]["cpp"]["kcount-trace"].get("log_bytes_per_kernel", {}).get("median")
            if got_bpk is None or abs(got_bpk - want) > 1e-9:
                fail.append(f"bytes per kernel {got_bpk}, want {want}")
    else:
        print(f"dry run: no {kcount}: log size/summary checks skipped", flush=True)
    # 5. The plot: a PNG when matplotlib is importable, else a note saying why there is none.
    has_mpl = subprocess.run([sys.executable, "-c", "import matplotlib"], capture_output=True).returncode == 0
    if doc.get("plot"):
        with open(doc["plot"], "rb") as f:
            if f.read(8) != b"\x89PNG\r\n\x1a\n":
                fail.append(f"{doc['plot']} is not a PNG")
    elif has_mpl and not runner.args.no_plot:
        fail.append("matplotlib is importable but no plot was made")
    # 6. Extra memory of the fake kcount-trace child (it holds FAKE_EXTRA_RSS_MB more than none).
    rss = doc["extra"]["cpp"]["kcount-trace"].get("extra_rss_mb") if default_plan else None
    want_rss = FAKE_EXTRA_RSS_MB["kcount-trace"]
    if default_plan and (rss is None or not (want_rss * 0.5 <= rss <= want_rss * 1.5)):
        fail.append(f"extra RSS of kcount-trace {rss} MB, want about {want_rss}")
    # 7. The configurations only --configs selects are in the plan (the dry run adds them).
    for c in DRY_RUN_EXTRA if default_plan else []:
        if c not in plan.get("cpp", []) or c not in plan.get("server", []):
            fail.append(f"{c} not planned for cpp and server: {plan}")
    # 8. The server: every run was stopped by the runner's SIGTERM, the start line was read, and the fake
    #    kcount log written at SIGTERM was found.
    for x in runs:
        if x["job"] != "server":
            continue
        tag = f"server/{x['config']}/r{x['repeat']}"
        if x["exit_status"] != -signal.SIGTERM or not x["info"].get("port"):
            fail.append(f"{tag}: exit status {x['exit_status']}, info {x['info']}")
        if x["config"] in ("kcount-trace", "kcount-summary") and (x.get("log") or {}).get("files") != 1:
            fail.append(f"{tag}: log {x.get('log')} (want 1 file, written at SIGTERM)")
        r = x["results"].get("server", {})
        if len(r.get("values", [])) != doc["parameters"]["server_requests"]:
            fail.append(f"{tag}: {len(r.get('values', []))} timed requests")
    # 9. The mode x workload table: recomputed from the JSON, every planned configuration and workload, the
    #    changes in each unit's sense (tokens/s of the slower count-only server negative).
    table = mode_table(disk)
    if json.loads(json.dumps(table)) != disk["mode_table"]:
        fail.append("mode table recomputed from the JSON differs from the JSON's")
    want_cols = [w for job in plan for w in job_workloads(doc["parameters"], job)]
    want_rows = list(dict.fromkeys(c for cs in plan.values() for c in cs))
    if table["workloads"] != want_cols or table["configs"] != want_rows:
        fail.append(f"mode table: columns {table['workloads']} rows {table['configs']}")
    if not default_plan:
        return fail
    server_cell = table["cells"].get("kcount-summary-nogpu", {}).get("server", {})
    if not server_cell or not server_cell["change"] < -1.0 or server_cell["change_kind"] != "pct":
        fail.append(f"mode table: count-only server cell {server_cell}, want a change below -1 %")
    graph_cell = table["cells"].get("kcount-summary-nogpu", {}).get("graph", {})
    if not graph_cell or graph_cell["change_kind"] != "abs" or not 0.0 < graph_cell["change"] < 0.05:
        fail.append(f"mode table: count-only graph cell {graph_cell}, want +0.0x us")
    if not any("| `kcount-summary-nogpu`" in line and "%)" in line for line in table["lines"]):
        fail.append("mode table: no Markdown row for kcount-summary-nogpu")
    return fail


# ---------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------

def main(argv=None):
    args = parse_args(argv)
    if args.fake_child:
        rest = args.rest[1:] if args.rest and args.rest[0] == "--" else args.rest
        return fake_child(rest)

    params = make_params(args)
    build_dir = os.path.abspath(args.build_dir)
    out_dir = os.path.abspath(args.out)
    work_dir = os.path.abspath(args.work_dir) if args.work_dir else None  # None: a new temporary folder, below
    paths = {"kcount": os.path.join(build_dir, "bin", "kcount"),
             "kcount_lib": os.path.join(build_dir, "lib", "libkcount.so"),
             "floor_lib": os.path.join(build_dir, "lib", "libcupti_floor.so"),
             "launch_loop": os.path.join(work_dir or "WORK", "launch_loop")}
    support = {name: lib_knows(paths["kcount_lib"], name) for name in KNOWN_VARIABLES}
    pre_notes = []
    asked = [("KCOUNT_MODE", "kcount-summary"), ("KCOUNT_START", "kcount-paused")]
    asked += [(KCOUNT_NEEDS[c], c) for c in args.configs or [] if c in KCOUNT_NEEDS and (KCOUNT_NEEDS[c], c) not in asked]
    unknown = [f"{name} ({cfg})" for name, cfg in asked if not support[name]]
    if unknown:
        pre_notes.append(f"libkcount.so does not contain {' or '.join(unknown)}: "
                         f"{'exercised anyway (dry run)' if args.dry_run else 'not run'}")
    if args.dry_run:
        support = {name: True for name in KNOWN_VARIABLES}

    plan = {}
    for job in args.jobs:
        if not job_workloads(params, job):
            continue  # --workloads left the job nothing to run
        configs = job_configs(job, args.mode, support, args.configs)
        if args.dry_run and args.configs is None:  # exercise the configurations only --configs selects
            configs += [c for c in job_configs(job, args.mode, support, DRY_RUN_EXTRA) if c not in configs]
        if configs:
            plan[job] = configs
    if args.plan:
        print_plan(plan, params, paths, args, pre_notes)
        return 0

    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "runs", "*.txt")):
        os.unlink(old)
    if work_dir is None:
        work_dir = tempfile.mkdtemp(prefix="kcount-bench-")
        paths["launch_loop"] = os.path.join(work_dir, "launch_loop")
    os.makedirs(work_dir, exist_ok=True)
    started = now_utc()
    t0 = time.perf_counter()
    print(f"kcount overhead benchmark: mode={args.mode}{' (dry run)' if args.dry_run else ''} build={build_dir} "
          f"out={out_dir} work={work_dir} budget={params['budget_s'] or 'none'} s", flush=True)
    setup = {}
    if not args.dry_run:
        missing = [p for k, p in paths.items() if k != "launch_loop" and not os.path.exists(p)]
        for p in missing:
            pre_notes.append(f"missing {p}: configurations that need it will fail")
        if "cpp" in plan:
            nvcc = find_nvcc(args.nvcc)
            tc = time.perf_counter()
            binary, msg = compile_launch_loop(nvcc, args.arch, work_dir)
            setup["nvcc"] = {"command": msg if binary else None, "error": None if binary else msg,
                             "seconds": time.perf_counter() - tc}
            rc, so, _ = capture([nvcc, "--version"])
            if rc == 0:
                setup["nvcc"]["version"] = so.splitlines()[-1] if so else ""
            if binary is None:
                pre_notes.append(f"launch_loop.cu did not compile; C++ job dropped: {msg}")
                del plan["cpp"]
    runner = Runner(args, params, paths, support, out_dir, work_dir)
    runner.t_start = t0
    if any(c in FLOOR_ENV for cs in plan.values() for c in cs):
        pre_notes.append("floor matched to libkcount.so: " +
                         ", ".join(f"{k}={v}" for k, v in runner.floor_match.items()))
    for n in pre_notes:
        runner.note(n)
    for job, configs in plan.items():
        print(f"plan: {job}: {params['repeats'][job]} rounds x {', '.join(configs)}", flush=True)
    runner.run_all(plan)

    stats, extra, derived = analyze(runner.runs, plan, params)
    env = environment_info(paths, args.dry_run)
    for run in runner.runs:  # versions reported by the workloads themselves
        info = run.get("info") or {}
        if run["job"] == "cpp" and info.get("driver_version") is not None and "cuda_driver_api" not in env:
            env["cuda_driver_api"] = info.get("driver_version")
            env["cuda_runtime"] = info.get("runtime_version")
            env.setdefault("device", info.get("device"))
        if run["job"] != "cpp" and info.get("torch") and "torch" not in env:
            env["torch"], env["cuda"] = info.get("torch"), info.get("cuda")
            env.setdefault("device", info.get("device"))
    env["kcount_supports"] = support
    env["floor_match"] = runner.floor_match
    doc = {
        "schema": SCHEMA, "mode": args.mode, "dry_run": args.dry_run, "started": started, "finished": now_utc(),
        "elapsed_s": time.perf_counter() - t0, "command": [sys.executable] + sys.argv, "out": out_dir,
        "work_dir": work_dir, "paths": paths, "environment": env, "setup": setup, "parameters": params,
        "plan": plan, "configs": {c: CONFIG_INFO[c] for cs in plan.values() for c in cs},
        "budget_limits": {"trace_us_above_floor": BUDGET_TRACE_US, "summary_us_above_floor": BUDGET_SUMMARY_US,
                          "summary_step_pct": BUDGET_STEP_PCT},
        "runs": runner.runs, "stats": stats, "extra": extra, "derived": derived,
        "budget": budget_checks(stats, support, args.dry_run), "notes": runner.notes,
        "json": os.path.join(out_dir, "results.json"),
    }
    doc["budget_limits"].update({"count_step_pct": BUDGET_COUNT_STEP_PCT, "count_tokens_pct": BUDGET_COUNT_TOKENS_PCT,
                                 "count_graph_us_per_kernel": BUDGET_COUNT_GRAPH_US})
    doc["mode_table"] = mode_table(doc)
    doc["plot"] = None
    with open(doc["json"], "w") as f:
        json.dump(doc, f, indent=1)
    if not args.no_plot:
        png = os.path.join(out_dir, "results.png")
        rc, so, se = capture([sys.executable, os.path.join(BENCH, "plot.py"), doc["json"], "--out", png], timeout=120)
        if rc == 0:
            doc["plot"] = png
        else:
            runner.note(f"plot not made: {(se or so).splitlines()[-1] if (se or so) else f'exit status {rc}'}")
            doc["notes"] = runner.notes
    with open(doc["json"], "w") as f:
        json.dump(doc, f, indent=1)

    status = 0
    if args.dry_run:
        failures = dry_run_checks(doc, runner, plan, build_dir)
        for msg in failures:
            print(f"DRY RUN CHECK FAILED: {msg}", flush=True)
        what = "interleaving, statistics, server runs, mode x workload table"
        if is_default_plan(args):
            what = f"{len(DRY_RUN_EXPECTED)} budget verdicts, {what}, log size, memory"
        print(f"dry run self-checks: {'FAIL' if failures else 'PASS'} ({what})", flush=True)
        status = 1 if failures else 0
    elif not runner.runs or any(r["problems"] for r in runner.runs):
        status = 1
    lines = table_lines(doc)
    with open(os.path.join(out_dir, "table.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print()
    print("\n".join(lines), flush=True)
    if not args.keep_logs and not args.work_dir:
        shutil.rmtree(work_dir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
