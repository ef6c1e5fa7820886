#!/usr/bin/env python3
"""CPU self-test of tests/gpu/torch_profiler_ranges.py: credits kernels of a made-up chrome trace to ranges, and
compares a made-up profiler result with a made-up kcount summary (equal, different, driver copy kernels)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_profiler_ranges as tpr  # noqa: E402

FAILS = []


def check(what, ok):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def X(cat, name, tid, ts, dur=1, corr=None):
    e = {"ph": "X", "cat": cat, "name": name, "tid": tid, "ts": ts, "dur": dur}
    if corr is not None:
        e["args"] = {"correlation": corr}
    return e


events = [
    X("user_annotation", "nvtx:rep", 1, 0, 100), X("user_annotation", "nvtx:inner", 1, 10, 20),
    X("user_annotation", "Torch-Compiled Region: 0/0", 1, 5, 90),  # not a mirrored NVTX range
    X("cuda_runtime", "cudaGraphLaunch", 1, 15, corr=7), X("cuda_driver", "cuLaunchKernel", 1, 50, corr=8),
    X("cuda_runtime", "cudaLaunchKernel", 2, 50, corr=9),  # another thread: no range there
    X("kernel", "k", 9, 60, corr=7), X("kernel", "k", 9, 61, corr=7), X("kernel", "k2", 9, 62, corr=8),
    X("kernel", "k3", 9, 63, corr=9),
]
got = tpr.ranges_from_trace(events)
check("graph kernels to the innermost mirrored range of the launch call", got[("rep/inner", "k")] == 2)
check("driver launch outside the inner range", got[("rep", "k2")] == 1)
check("a launch on a thread without ranges", got[("(no range)", "k3")] == 1)
check("nothing else", sum(got.values()) == 4)
check("demangled as the profiler shows names", tpr.demangle("_Z3fooi") == "foo(int)" and tpr.demangle("triton_x") == "triton_x")


def compare(prof, ranges, roots=""):
    with tempfile.TemporaryDirectory() as tmp:
        p, s = os.path.join(tmp, "p.json"), os.path.join(tmp, "s.json")
        json.dump({"kernels": prof}, open(p, "w"))
        json.dump({"logs": [{"ranges": [{"path": k, "kernels": [{"name": n, "count": c} for n, c in v.items()]}
                                         for k, v in ranges.items()]}]}, open(s, "w"))
        args = [sys.executable, os.path.join(HERE, "torch_profiler_ranges.py"), "compare", p, s]
        if roots:
            args += ["--roots", roots]
        return subprocess.run(args, capture_output=True, text=True)


r = compare({"rep": {"foo(int)": 500, "memcpy32_post": 100}, "cap": {"foo(int)": 2}},
            {"rep": {"_Z3fooi": 500}, "cap": {"_Z3fooi": 2}})
check("equal counts (mangled kcount names, driver copy kernels set apart): exit 0",
      r.returncode == 0 and "502 kernels" in r.stdout and "100 driver copy" in r.stdout)
r = compare({"rep": {"foo(int)": 499}}, {"rep": {"_Z3fooi": 500}})
check("one count differs: exit 1", r.returncode == 1 and "torch.profiler 499, kcount 500" in r.stderr)
r = compare({"step": {"foo(int)": 20}, "warmup/step": {"foo(int)": 7}}, {"step": {"_Z3fooi": 20}}, roots="step")
check("--roots leaves other ranges out", r.returncode == 0)
r = compare({"rep": {"foo(int)": 5}}, {"other": {"_Z3fooi": 5}}, roots="rep")
check("a root without kcount kernels fails", r.returncode == 1)

print(f"{len(FAILS)} failed")
sys.exit(1 if FAILS else 0)
