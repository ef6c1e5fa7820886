#!/usr/bin/env python3
"""Per-range kernel counts as torch.profiler reports them, compared with a kcount summary.

    torch_profiler_ranges.py record OUT_JSON -- SCRIPT [ARGS...]
        runs SCRIPT (a Python program that marks ranges with torch.cuda.nvtx.range_push/range_pop) without
        kcount, inside torch.profiler.profile(CPU, CUDA) from its first line to its exit; each NVTX push/pop
        is mirrored by a torch.profiler record_function named "nvtx:" + the message, so the profiler sees the
        same ranges. Writes
        {"kernels": {RANGE_PATH: {KERNEL_NAME: COUNT}}} to OUT_JSON.
    torch_profiler_ranges.py compare OUT_JSON SUMMARY_JSON [--roots step,rep,...]
        compares with `kcount summary --format json` of a run of the same program: per range path (only paths
        under the given roots, default all) and kernel name, the counts must be equal. Prints one line; exit 0
        if equal, 1 otherwise (differences on stderr).

How torch.profiler attributes a kernel to a range: Kineto's chrome trace gives every kernel the correlation id
of the runtime or driver API call that launched it (a graph's kernels: the graph launch's), and that call a
thread and a start time; the kernel belongs to the innermost record_function on that thread whose interval
holds the call's start (kcount's default graph view: the range around the launch). Kernels the driver runs
for a graph's memcpy/memset nodes (names memcpy*/memset*) are reported by torch.profiler but are not kernel
nodes: kcount without kernel activity does not count them; they are set apart and counted in the output.
"""
import ctypes
import json
import os
import re
import runpy
import sys
import tempfile
from collections import Counter, defaultdict

DRIVER_COPY = re.compile(r"mem(cpy|set)")
MARK = "nvtx:"  # the mirrored ranges' record_function names (torch.compile adds record_functions of its own)


def demangle(name, _lib=[]):
    """The name as torch.profiler shows it: demangled by the C++ runtime's __cxa_demangle, as Kineto does;
    a name that is not a mangled C++ name (Triton's) unchanged."""
    if not name.startswith("_Z"):
        return name
    if not _lib:
        lib = ctypes.CDLL("libstdc++.so.6")
        lib.__cxa_demangle.restype = ctypes.c_void_p
        lib.__cxa_demangle.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
        _lib.append(lib)
    status = ctypes.c_int(0)
    p = _lib[0].__cxa_demangle(name.encode(), None, None, ctypes.byref(status))
    if status.value != 0 or not p:
        return name
    out = ctypes.string_at(p).decode()
    ctypes.CDLL(None).free(ctypes.c_void_p(p))
    return out


def mirror_nvtx_ranges():
    """Makes every torch.cuda.nvtx range also a torch.profiler record_function (per-thread stack)."""
    import threading

    import torch

    stacks = threading.local()
    push, pop = torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop

    def range_push(msg):
        rf = torch.autograd.profiler.record_function(MARK + msg)
        rf.__enter__()
        if not hasattr(stacks, "s"):
            stacks.s = []
        stacks.s.append(rf)
        return push(msg)

    def range_pop():
        r = pop()
        if getattr(stacks, "s", None):
            stacks.s.pop().__exit__(None, None, None)
        return r

    torch.cuda.nvtx.range_push, torch.cuda.nvtx.range_pop = range_push, range_pop


def ranges_from_trace(events):
    """{(path, kernel name): count} from the chrome trace's events (see the module docstring)."""
    annotations = defaultdict(list)  # tid -> [(start, end, name)]
    calls = {}  # correlation id -> (tid, ts) of the API call
    kernels = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat == "user_annotation" and e.get("name", "").startswith(MARK):
            annotations[e["tid"]].append((e["ts"], e["ts"] + e.get("dur", 0), e["name"][len(MARK):]))
        elif cat in ("cuda_runtime", "cuda_driver"):
            corr = e.get("args", {}).get("correlation")
            if corr is not None:
                calls.setdefault(corr, (e["tid"], e["ts"]))
        elif cat == "kernel":
            kernels.append((e.get("args", {}).get("correlation"), e["name"]))
    counts = Counter()
    for corr, name in kernels:
        tid, ts = calls.get(corr, (None, None))
        # Enclosing annotations, outermost first (a longer interval holds a shorter one).
        enclosing = sorted((a for a in annotations.get(tid, []) if a[0] <= ts <= a[1]), key=lambda a: (a[0], -a[1]))
        path = "/".join(a[2] for a in enclosing) if enclosing else "(no range)"
        counts[(path, name)] += 1
    return counts


def record(out_json, argv):
    import torch
    from torch.profiler import ProfilerActivity, profile

    mirror_nvtx_ranges()
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))  # the script's own imports
    code = 0
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        try:
            runpy.run_path(argv[0], run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.load(open(f.name))
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    by_path = defaultdict(dict)
    for (path, name), n in sorted(ranges_from_trace(events).items()):
        by_path[path][name] = n
    with open(out_json, "w") as f:
        json.dump({"script": argv, "exit_status": code, "torch_version": torch.__version__, "kernels": by_path}, f,
                  indent=1)
    return code


def compare(out_json, summary_json, roots):
    prof = json.load(open(out_json))["kernels"]
    log = json.load(open(summary_json))["logs"][0]
    kc = {}
    for r in log["ranges"]:
        names = Counter()
        for k in r.get("kernels", []):
            names[demangle(k["name"])] += k["count"]
        kc[r["path"]] = dict(names)

    def wanted(path):
        return not roots or any(path == r or path.startswith(r + "/") for r in roots)

    problems, copies, total = [], 0, 0
    for path in sorted(p for p in set(prof) | set(kc) if wanted(p)):
        tp, km = dict(prof.get(path, {})), kc.get(path, {})
        for name in [n for n in tp if DRIVER_COPY.match(n) and n not in km]:
            copies += tp.pop(name)
        for name in sorted(set(tp) | set(km)):
            if tp.get(name, 0) != km.get(name, 0):
                problems.append(f"{path} {name[:70]}: torch.profiler {tp.get(name, 0)}, kcount {km.get(name, 0)}")
        total += sum(km.values())
    paths = sorted(p for p in kc if wanted(p) and kc[p])
    line = (f"{total} kernels in {len(paths)} ranges ({', '.join(paths)[:120]}) = torch.profiler's, per range and "
            f"name; {copies} driver copy kernels of graph memcpy/memset nodes set apart")
    if not paths:
        problems.append("no kernels in the compared ranges")
    print(line if not problems else f"{len(problems)} differences: " + "; ".join(problems)[:600])
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 4 and argv[0] == "record" and argv[2] == "--":
        return record(argv[1], argv[3:])
    if len(argv) >= 3 and argv[0] == "compare":
        roots = []
        if len(argv) == 5 and argv[3] == "--roots":
            roots = argv[4].split(",")
        return compare(argv[1], argv[2], roots)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
