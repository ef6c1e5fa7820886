"""Shared code of the kcount example programs (linear.py, geglu.py; serve.py uses graph_node_counts).

Every example has the same shape:

    warmup            (one range around all warm-up steps)
      step            (one per warm-up step)
        <inner ranges>
    torch.cuda.synchronize()
    step              (one per measured step; no synchronize after the last one)
      <inner ranges>

The inner ranges are pushed by the example's step function. Inputs and weights are created before the
warm-up, so a measured step launches only the kernels of the forward pass.

With --torch-profiler PATH the same program runs without kcount; only the measured steps are wrapped in
torch.profiler.profile (CPU + CUDA activities) and a small JSON file with the kernel counts is written.
"""

import argparse
import collections
import contextlib
import ctypes
import json
import os
import sys
import tempfile

import torch


def parse_args(description, min_compile_warmup=0, argv=None):
    """Arguments shared by all examples: --steps, --warmup, --compile [--compile-mode MODE],
    --torch-profiler PATH."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--steps", type=int, default=20, help="measured steps (default 20)")
    p.add_argument("--warmup", type=int, default=5,
                   help="warm-up steps, all inside the NVTX range 'warmup' (default 5)")
    p.add_argument("--compile", action="store_true",
                   help="run the model through torch.compile (default mode)")
    p.add_argument("--compile-mode", metavar="MODE", default=None,
                   help="torch.compile's mode with --compile, e.g. reduce-overhead (Inductor's CUDA graph "
                        "trees: each step replays a graph)")
    p.add_argument("--torch-profiler", metavar="PATH", default=None,
                   help="profile the measured steps with torch.profiler (run WITHOUT kcount: CUPTI "
                        "allows one subscriber) and write kernel counts as JSON to PATH")
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error("--steps must be at least 1")
    if args.warmup < 0:
        p.error("--warmup must not be negative")
    if args.compile_mode and not args.compile:
        p.error("--compile-mode needs --compile")
    if args.compile and args.warmup < min_compile_warmup:
        p.error(f"--compile needs --warmup >= {min_compile_warmup} so that compilation and "
                f"autotuning happen inside the 'warmup' range")
    return args


@contextlib.contextmanager
def nvtx_range(name):
    """NVTX push/pop range (torch.cuda.nvtx, i.e. nvtxRangePushA/nvtxRangePop of the calling thread)."""
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


def _cuda_device_type():
    dt = getattr(torch.autograd, "DeviceType", None)
    if dt is None:
        dt = torch._C._autograd.DeviceType
    return dt.CUDA


def _is_kernel_event(evt, cuda):
    if evt.device_type != cuda:
        return False
    name = evt.name or ""
    if name.startswith("Memcpy") or name.startswith("Memset"):
        return False
    # record_function ranges (e.g. torch.compile's "Torch-Compiled Region") also appear on the GPU
    # timeline as user annotations with device type CUDA: they are not kernels.
    if getattr(evt, "is_user_annotation", False):
        return False
    return True


def _chrome_trace_kernel_count(prof):
    """Cross-check: number of events of category 'kernel' in Kineto's chrome trace (None on failure)."""
    fd, path = tempfile.mkstemp(suffix=".json", prefix="kcount-example-trace-")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
        events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
        return sum(1 for e in events
                   if isinstance(e, dict) and e.get("cat") == "kernel" and e.get("ph") == "X")
    except Exception as exc:  # the cross-check must never break the example
        print(f"warning: chrome trace cross-check failed: {exc}", file=sys.stderr)
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _run_measured(steps, step_fn):
    out = None
    for _ in range(steps):
        with nvtx_range("step"):
            out = step_fn()
    return out


def _run_profiled(args, step_fn):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        out = _run_measured(args.steps, step_fn)
        torch.cuda.synchronize()

    cuda = _cuda_device_type()
    names = collections.Counter(e.name for e in prof.events() if _is_kernel_event(e, cuda))
    kernels = sum(names.values())
    result = {
        "steps": args.steps,
        "kernels": kernels,
        "kernels_per_step": kernels / args.steps,
        "kernel_names": dict(sorted(names.items())),
        "kernels_chrome_trace": _chrome_trace_kernel_count(prof),
        "torch_version": torch.__version__,
    }
    if result["kernels_chrome_trace"] is not None and result["kernels_chrome_trace"] != kernels:
        print(f"warning: torch.profiler events() counted {kernels} kernels, the chrome trace "
              f"{result['kernels_chrome_trace']}", file=sys.stderr)
    directory = os.path.dirname(os.path.abspath(args.torch_profiler))
    os.makedirs(directory, exist_ok=True)
    with open(args.torch_profiler, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    return out


def run_example(name, args, step_fn):
    """Warm-up (range 'warmup'), synchronize, then the measured steps (range 'step' each).

    step_fn() performs one step's forward pass, pushing its own inner ranges, and returns the output.
    Nothing synchronizes after the last measured step unless --torch-profiler is given.
    """
    with torch.inference_mode():
        out = None
        with nvtx_range("warmup"):
            for _ in range(args.warmup):
                with nvtx_range("step"):
                    out = step_fn()
        torch.cuda.synchronize()
        if args.torch_profiler:
            out = _run_profiled(args, step_fn)
        else:
            out = _run_measured(args.steps, step_fn)
    # Only metadata of the output: reading its values would synchronize (and launch kernels).
    mode = "compiled" if args.compile else "eager"
    print(f"{name}: mode={mode} warmup={args.warmup} steps={args.steps} "
          f"output={list(out.shape)} dtype={str(out.dtype).replace('torch.', '')}", flush=True)
    return out


def graph_node_counts(handle):
    """{node type: count} of the CUDA graph `handle` (a cudaGraph_t as an int, e.g. from
    torch.cuda.CUDAGraph(keep_graph=True).raw_cuda_graph()), child graphs walked, through the CUDA driver
    API (cuGraphGetNodes, cuGraphNodeGetType) of libcuda.so.1. Types: "kernel", "memcpy", "memset",
    "host", "graph" (child graph nodes; their own nodes are counted too), "empty", "wait_event",
    "event_record", else "typeN". The kernel nodes are the kernels one launch of the graph runs.
    Raises OSError without libcuda, RuntimeError on a driver error. No kernel is launched."""
    cuda = ctypes.CDLL("libcuda.so.1")
    names = {0: "kernel", 1: "memcpy", 2: "memset", 3: "host", 4: "graph", 5: "empty", 6: "wait_event",
             7: "event_record"}
    counts = {}

    def call(fn, *a):
        rc = fn(*a)
        if rc != 0:
            raise RuntimeError(f"{fn.__name__} returned CUresult {rc}")

    def walk(graph):
        n = ctypes.c_size_t(0)
        call(cuda.cuGraphGetNodes, ctypes.c_void_p(graph), None, ctypes.byref(n))
        nodes = (ctypes.c_void_p * n.value)()
        call(cuda.cuGraphGetNodes, ctypes.c_void_p(graph), nodes, ctypes.byref(n))
        for node in nodes[:n.value]:
            kind = ctypes.c_int(-1)
            call(cuda.cuGraphNodeGetType, ctypes.c_void_p(node), ctypes.byref(kind))
            if kind.value == 4:  # CU_GRAPH_NODE_TYPE_GRAPH: a child graph
                child = ctypes.c_void_p()
                call(cuda.cuGraphChildGraphNodeGetGraph, ctypes.c_void_p(node), ctypes.byref(child))
                walk(child.value)
            name = names.get(kind.value, f"type{kind.value}")
            counts[name] = counts.get(name, 0) + 1

    walk(handle)
    return counts
