"""PyTorch workloads of the overhead benchmark (bench/run_bench.py). Needs PyTorch with a CUDA GPU.

    python3 bench/python_workloads.py --workloads add_loop,geglu_eager,transformer_eager [--torch-profiler]

Workloads (each prints one JSON object on its own line of stdout):

  add_loop              `x.add_(1)` on a 16-element float32 tensor, --add-iters times per timed repeat
                        (PyTorch dispatch-bound: one kernel launch per iteration). Unit: us per iteration.
  geglu_eager           GeGLU MLP of examples/geglu.py (x [8, 512, 4096] bf16, 4096 -> 11008 -> 4096, no
                        bias), forward + backward per step. Unit: ms per step.
  geglu_compiled        the same under torch.compile.
  transformer_eager     a stack of --layers pre-norm transformer blocks built here (d_model 1024, 16 heads,
                        MLP 4096 with GELU, causal scaled_dot_product_attention, bf16, x [8, 512, 1024]),
                        forward + backward per step. Unit: ms per step.
  transformer_compiled  the same under torch.compile.
  transformer_reduce_overhead
                        the same under torch.compile(mode="reduce-overhead"): Inductor's CUDA graph trees,
                        forward and backward each replayed as CUDA graphs; at least 3 warm-up steps (compile
                        and the trees' own warm-up run, recording, a first replay) whatever --warmup-steps
                        says. The result also gives `cudagraph_skips`: Inductor's count of graphs it did not
                        record as CUDA graphs (0 when every compiled graph replays).

Timing: warm-up first (--warmup-steps steps, or --add-warmup iterations; with torch.compile the first
warm-up step compiles and autotunes), then --repeats timed repeats; each repeat is
`synchronize; t0; <iterations or steps>; synchronize; t1` with time.perf_counter. The reported value is
the median over the repeats; all repeats are listed. Each step is inside an NVTX range "step"
(torch.cuda.nvtx), unless --no-nvtx, so that kcount attributes the step's kernels as in real use.

--torch-profiler wraps each workload's timed repeats (not the warm-up) in torch.profiler.profile with CPU
and CUDA activities and also reports its post-processing: the time to leave the profiler's context
(stop and parse the trace: `stop_s`), the time of prof.key_averages() (`key_averages_s`), the number of
events and of kernel events; with --export-trace, also the time of prof.export_chrome_trace(). Do not
combine it with kcount or another CUPTI client: CUPTI 13.0 allows one subscriber per process.

The first line is {"workload": "info", ...} with the torch, CUDA and device versions.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

WORKLOADS = ("add_loop", "geglu_eager", "geglu_compiled", "transformer_eager", "transformer_compiled",
             "transformer_reduce_overhead")
# torch.compile(mode="reduce-overhead"): the first step compiles (and runs the CUDA graph trees' warm-up),
# the second records the graphs, the third replays them; timing starts after at least this many steps.
MIN_WARMUP_REDUCE_OVERHEAD = 3


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="PyTorch workloads of the kcount overhead benchmark")
    p.add_argument("--workloads", default="add_loop,geglu_eager,transformer_eager",
                   help="comma-separated, from: " + ", ".join(WORKLOADS))
    p.add_argument("--add-iters", type=int, default=200_000, help="add_ iterations per timed repeat")
    p.add_argument("--add-warmup", type=int, default=2_000, help="add_ iterations before timing")
    p.add_argument("--steps", type=int, default=10, help="steps per timed repeat (MLP, transformer)")
    p.add_argument("--warmup-steps", type=int, default=3, help="steps before timing (at least 1)")
    p.add_argument("--repeats", type=int, default=3, help="timed repeats per workload")
    p.add_argument("--layers", type=int, default=4, help="transformer blocks in the stack")
    p.add_argument("--torch-profiler", action="store_true",
                   help="profile the timed repeats with torch.profiler and report its post-processing time")
    p.add_argument("--export-trace", action="store_true",
                   help="with --torch-profiler: also time export_chrome_trace (to a temporary file)")
    p.add_argument("--no-nvtx", action="store_true", help="no NVTX range around each step")
    p.add_argument("--ab-control", action="store_true",
                   help="same-process A/B: the process runs under libkcount.so started paused with its control "
                        "socket in $KCOUNT_CONTROL_DIR; each round times one repeat with recording off and one "
                        "with it on (kcount's control socket, order alternating), so both sides share the process")
    p.add_argument("--ab-null", action="store_true",
                   help="with --ab-control: never switch recording on (a 'status' request instead of 'start'): "
                        "the A/B method's own noise, both sides unrecorded")
    p.add_argument("--ab-torch-profiler", action="store_true",
                   help="same-process A/B without kcount: each round times one repeat plain and one inside "
                        "torch.profiler.profile(CPU, CUDA) (started before the settle steps, stopped after the "
                        "timed repeat: its post-processing is not timed), order alternating")
    p.add_argument("--ab-settle-steps", type=int, default=3,
                   help="untimed steps (add_: 1000 iterations per step) after each switch, --ab-control only")
    args = p.parse_args(argv)
    args.workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown or not args.workloads:
        p.error(f"unknown or no workloads: {unknown}; choose from {', '.join(WORKLOADS)}")
    for name in ("add_iters", "steps", "repeats", "layers", "warmup_steps"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.add_warmup < 0:
        p.error("--add-warmup must not be negative")
    if (args.ab_control or args.ab_torch_profiler) and args.torch_profiler:
        p.error("--ab-control / --ab-torch-profiler and --torch-profiler exclude each other")
    if args.ab_control and args.ab_torch_profiler:
        p.error("--ab-control and --ab-torch-profiler exclude each other (torch.profiler's CUPTI subscriber "
                "and kcount's cannot both be on)")
    if args.ab_control and not os.environ.get("KCOUNT_CONTROL_DIR"):
        p.error("--ab-control needs KCOUNT_CONTROL_DIR (the folder of the process's kcount control socket)")
    if args.ab_null and not args.ab_control:
        p.error("--ab-null needs --ab-control")
    return args


def emit(obj):
    print(json.dumps(obj), flush=True)


def main(argv=None):
    args = parse_args(argv)
    import torch
    import torch.nn.functional as F
    from torch import nn

    if not torch.cuda.is_available():
        print("python_workloads: torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    device = "cuda"
    torch.manual_seed(0)
    emit({"workload": "info", "torch": torch.__version__, "cuda": torch.version.cuda,
          "device": torch.cuda.get_device_name(0), "python": sys.version.split()[0], "pid": os.getpid()})

    def sync():
        torch.cuda.synchronize()

    nvtx = not args.no_nvtx

    def push(name):
        if nvtx:
            torch.cuda.nvtx.range_push(name)

    def pop():
        if nvtx:
            torch.cuda.nvtx.range_pop()

    # ---- models -------------------------------------------------------------------------------------
    class GeGLU(nn.Module):
        """examples/geglu.py's MLP: down(gelu(gate(x)) * up(x)), no bias."""

        def __init__(self, dim=4096, hidden=11008):
            super().__init__()
            self.gate = nn.Linear(dim, hidden, bias=False)
            self.up = nn.Linear(dim, hidden, bias=False)
            self.down = nn.Linear(hidden, dim, bias=False)

        def forward(self, x):
            return self.down(F.gelu(self.gate(x)) * self.up(x))

    class Block(nn.Module):
        """Pre-norm transformer block: x + attn(ln1(x)); x + mlp(ln2(x)); causal SDPA."""

        def __init__(self, dim=1024, heads=16, hidden=4096):
            super().__init__()
            self.heads = heads
            self.ln1 = nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.ln2 = nn.LayerNorm(dim)
            self.fc1 = nn.Linear(dim, hidden)
            self.fc2 = nn.Linear(hidden, dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            shape = (b, t, self.heads, d // self.heads)
            q = q.view(shape).transpose(1, 2)
            k = k.view(shape).transpose(1, 2)
            v = v.view(shape).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    def training_step_fn(model, x):
        """One step: forward, backward with a fixed output gradient, gradients set to None after."""
        params = list(model.parameters())
        grad_out = None

        def step():
            nonlocal grad_out
            out = model(x)
            if grad_out is None:
                grad_out = torch.randn_like(out)
            out.backward(grad_out)
            for p in params:
                p.grad = None

        return step

    def make_step(name):
        if name.startswith("geglu"):
            model = GeGLU().to(device=device, dtype=torch.bfloat16)
            x = torch.randn(8, 512, 4096, device=device, dtype=torch.bfloat16)
        else:
            model = nn.Sequential(*[Block() for _ in range(args.layers)]).to(device=device, dtype=torch.bfloat16)
            x = torch.randn(8, 512, 1024, device=device, dtype=torch.bfloat16)
        if name.endswith("_compiled"):
            model = torch.compile(model)
        elif name.endswith("_reduce_overhead"):
            model = torch.compile(model, mode="reduce-overhead")
        step = training_step_fn(model, x)
        if not name.endswith("_reduce_overhead"):
            return step

        def graph_tree_step():
            # A new iteration of the CUDA graph trees (the previous step's outputs may be overwritten).
            torch.compiler.cudagraph_mark_step_begin()
            step()

        return graph_tree_step

    # ---- torch.profiler -----------------------------------------------------------------------------
    def profiled(fn):
        """Runs fn() inside torch.profiler.profile(CPU, CUDA); returns fn's result and the profiler's
        post-processing measurements."""
        from torch.profiler import ProfilerActivity, profile

        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
        try:
            result = fn()
        finally:
            t0 = time.perf_counter()
            prof.__exit__(None, None, None)
            stop_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        prof.key_averages()
        key_averages_s = time.perf_counter() - t0
        events = prof.events()
        cuda = getattr(torch.autograd, "DeviceType", None) or torch._C._autograd.DeviceType
        kernels = sum(1 for e in events if e.device_type == cuda.CUDA and not getattr(e, "is_user_annotation", False)
                      and not (e.name or "").startswith(("Memcpy", "Memset")))
        info = {"stop_s": stop_s, "key_averages_s": key_averages_s, "postprocess_s": stop_s + key_averages_s,
                "events": len(events), "kernel_events": kernels}
        if args.export_trace:
            fd, path = tempfile.mkstemp(suffix=".json", prefix="kcount-bench-trace-")
            os.close(fd)
            try:
                t0 = time.perf_counter()
                prof.export_chrome_trace(path)
                info["export_chrome_trace_s"] = time.perf_counter() - t0
                info["chrome_trace_bytes"] = os.path.getsize(path)
            finally:
                os.unlink(path)
        return result, info

    # ---- same-process A/B (--ab-control) ------------------------------------------------------------
    def control(cmd):
        """One request to this process's kcount control socket (docs/usage.md, "Protocol"); the answer."""
        import socket
        path = os.path.join(os.environ["KCOUNT_CONTROL_DIR"], f"{os.getpid()}.sock")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(path)
            s.sendall((json.dumps({"cmd": cmd}) + "\n").encode())
            answer = b""
            while not answer.endswith(b"\n"):
                part = s.recv(4096)
                if not part:
                    break
                answer += part
        reply = json.loads(answer.decode() or "{}")
        error = str(reply.get("error", ""))
        if (cmd == "stop" and "no capture window is open" in error) or \
                (cmd == "start" and "a capture window is already open" in error):
            return reply  # already off / already on
        if not reply.get("ok"):
            raise RuntimeError(f"kcount control '{cmd}' failed: {reply}")
        return reply

    def ab_repeats(body, count, settle):
        """args.repeats rounds of one timed body() with recording off and one with it on, the order
        alternating by round; `settle()` runs untimed after each switch. {"off": [...], "on": [...]}, in
        seconds per unit."""
        out = {"off": [], "on": []}
        for r in range(args.repeats):
            for state in (("off", "on") if r % 2 == 0 else ("on", "off")):
                prof = None
                if args.ab_torch_profiler:
                    if state == "on":
                        from torch.profiler import ProfilerActivity, profile
                        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
                        prof.__enter__()
                else:
                    control(("status" if args.ab_null else "start") if state == "on" else "stop")
                settle()
                sync()
                t0 = time.perf_counter()
                body()
                sync()
                out[state].append((time.perf_counter() - t0) / count)
                if prof is not None:
                    prof.__exit__(None, None, None)  # its post-processing, outside the timed part
                    del prof
        if not args.ab_torch_profiler:
            control("stop")
        return out

    # ---- timing -------------------------------------------------------------------------------------
    def timed_repeats(body, count):
        """args.repeats x (synchronize; body(); synchronize): seconds per unit (count units per body)."""
        out = []
        for _ in range(args.repeats):
            sync()
            t0 = time.perf_counter()
            body()
            sync()
            out.append((time.perf_counter() - t0) / count)
        return out

    def run_add_loop():
        x = torch.zeros(16, device=device)
        for _ in range(args.add_warmup):
            x.add_(1)
        sync()
        n = args.add_iters

        def body():
            for _ in range(n):
                x.add_(1)

        def settle():
            for _ in range(args.ab_settle_steps * 1000):
                x.add_(1)

        if args.ab_control or args.ab_torch_profiler:
            return {"unit": "us/iter", "scale": 1e6, "iters": n}, lambda: ab_repeats(body, n, settle)
        return {"unit": "us/iter", "scale": 1e6, "iters": n}, lambda: timed_repeats(body, n)

    def cudagraph_skips():
        """Inductor's count of compiled graphs not run as CUDA graphs (None where torch has no such counter)."""
        try:
            from torch._dynamo.utils import counters
            return int(counters["inductor"]["cudagraph_skips"])
        except Exception:
            return None

    def run_steps(name):
        step = make_step(name)
        warmup_steps = args.warmup_steps
        if name.endswith("_reduce_overhead"):
            warmup_steps = max(warmup_steps, MIN_WARMUP_REDUCE_OVERHEAD)
        skips_before = cudagraph_skips()
        t0 = time.perf_counter()
        for _ in range(warmup_steps):
            push("warmup_step")
            step()
            pop()
        sync()
        warmup_s = time.perf_counter() - t0
        steps = args.steps

        def body():
            for _ in range(steps):
                push("step")
                step()
                pop()

        def settle():
            for _ in range(args.ab_settle_steps):
                push("settle_step")
                step()
                pop()

        meta = {"unit": "ms/step", "scale": 1e3, "steps": steps, "warmup_steps": warmup_steps,
                "warmup_s": warmup_s}
        if name.endswith("_reduce_overhead"):
            skips = cudagraph_skips()
            meta["cudagraph_skips"] = None if skips is None or skips_before is None else skips - skips_before
        if args.ab_control or args.ab_torch_profiler:
            return meta, lambda: ab_repeats(body, steps, settle)
        return meta, lambda: timed_repeats(body, steps)

    status = 0
    for name in args.workloads:
        try:
            meta, measure = run_add_loop() if name == "add_loop" else run_steps(name)
            prof_info = None
            if args.torch_profiler:
                seconds, prof_info = profiled(measure)
            else:
                seconds = measure()
            scale = meta.pop("scale")
            if isinstance(seconds, dict):  # --ab-control: both sides of one process
                off = [s * scale for s in seconds["off"]]
                on = [s * scale for s in seconds["on"]]
                result = {"workload": name, **meta, "repeats": len(on), "values_off": off, "values_on": on,
                          "value_off": statistics.median(off), "value_on": statistics.median(on),
                          "value": statistics.median(on)}
                emit(result)
                continue
            values = [s * scale for s in seconds]
            result = {"workload": name, **meta, "repeats": len(values), "values": values,
                      "value": statistics.median(values)}
            if prof_info is not None:
                result["torch_profiler"] = prof_info
            emit(result)
        except Exception as exc:  # report and go on with the next workload
            status = 1
            emit({"workload": name, "error": f"{type(exc).__name__}: {exc}"})
            print(f"python_workloads: {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            torch.cuda.empty_cache()
    return status


if __name__ == "__main__":
    sys.exit(main())
