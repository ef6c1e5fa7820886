"""A small Llama-style model (transformers' LlamaConfig, random weights, nothing downloaded) for the
per-module range checks (tests/gpu/check_torch_modules.sh).

    warmup                 (one range around the warm-up steps)
      step ...
    step  x --steps        (one range per measured step; the model's forward inside)

Run under `kcount run [--torch-modules|--torch-ops|--torch-backward]`. Modes:
  (default)           eager forward under torch.no_grad()
  --compile           the model through torch.compile; writes Dynamo's counters to --dynamo-json
  --train             forward + loss.backward() per step (for --torch-backward)
  --torch-profiler P  no kcount: torch.profiler around the measured steps, with one record_function per
                      module call named by the same qualified names (kcount_torch.modules.ModuleRanges),
                      and the kernels launched inside each module's annotation counted from the trace
                      (kernel -> launch API event by correlation id, else the aten op by External
                      id -> enclosing annotations on that thread); writes {"steps", "kernels",
                      "unmatched", "placed_by_op", "per_module": {name: kernels}} to P
  --bench P           cost of the hooks per module call: forward times with the helper's hooks
                      (recording), without hooks, and with the hooks but kcount's state read as not
                      recording, interleaved; writes JSON to P
"""
import argparse
import collections
import json
import os
import sys
import tempfile
import time

import torch


def build_model(layers=4, hidden=256):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=1024, hidden_size=hidden, intermediate_size=4 * hidden, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=512)
    torch.manual_seed(0)
    model = LlamaForCausalLM(cfg).to(device="cuda", dtype=torch.bfloat16).eval()
    ids = torch.randint(0, cfg.vocab_size, (2, 128), device="cuda")
    return model, ids


def nvtx(name):
    class R:
        def __enter__(self):
            torch.cuda.nvtx.range_push(name)

        def __exit__(self, *a):
            torch.cuda.nvtx.range_pop()
    return R()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--train", action="store_true")
    p.add_argument("--dynamo-json", default=None)
    p.add_argument("--torch-profiler", default=None)
    p.add_argument("--bench", default=None)
    p.add_argument("--kcount", default="kcount", help="kcount binary, for --bench (kcount ctl)")
    args = p.parse_args()

    model, ids = build_model()
    fwd = torch.compile(model) if args.compile else model

    def step():
        if args.train:
            out = fwd(input_ids=ids, labels=ids, use_cache=False)
            out.loss.backward()
            return out.loss
        with torch.no_grad():
            return fwd(input_ids=ids, use_cache=False).logits

    if args.bench:
        return bench(args, step)

    with nvtx("warmup"):
        for _ in range(args.warmup):
            with nvtx("step"):
                step()
    torch.cuda.synchronize()

    if args.torch_profiler:
        return profile(args, step)

    for _ in range(args.steps):
        with nvtx("step"):
            step()

    if args.dynamo_json:
        from torch._dynamo.utils import counters
        with open(args.dynamo_json, "w") as f:
            json.dump({k: dict(v) for k, v in counters.items()}, f)
    return 0


def profile(args, step):
    """torch.profiler with one record_function per module call (same names as kcount's ranges)."""
    sys.path.insert(0, os.environ["KCOUNT_HELPER"])
    from kcount_torch import modules as km
    from torch.profiler import ProfilerActivity, profile as tprofile
    import threading
    tls = threading.local()

    def push(name):
        rf = torch.autograd.profiler.record_function(name)
        rf.__enter__()
        tls.__dict__.setdefault("s", []).append(rf)

    def pop():
        tls.s.pop().__exit__(None, None, None)

    ranges = km.ModuleRanges(push, pop, lambda: True)
    mm = torch.nn.modules.module
    h1 = mm.register_module_forward_pre_hook(ranges.pre_forward)
    h2 = mm.register_module_forward_hook(ranges.post_forward, always_call=True)
    with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(args.steps):
            step()
        torch.cuda.synchronize()
    h1.remove()
    h2.remove()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    launches = {}     # correlation id -> (tid, begin, end) of the launch API call
    cpu_ops = {}      # External id -> (tid, begin, end) of the aten op (when a launch has no event)
    annotations = collections.defaultdict(list)  # tid -> [(begin, end, name)]
    kernels = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        a = e.get("args", {})
        span = (e.get("tid"), float(e.get("ts", 0)), float(e.get("ts", 0)) + float(e.get("dur", 0)))
        if cat == "kernel":
            kernels.append((a.get("correlation"), a.get("External id")))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in a:
            launches[a["correlation"]] = span
        elif cat == "cpu_op" and "External id" in a:
            cpu_ops.setdefault(a["External id"], span)
        elif cat == "user_annotation":
            annotations[e["tid"]].append((span[1], span[2], e["name"]))
    per_module = collections.Counter()
    unmatched = by_op = 0
    for corr, ext in kernels:
        launch = launches.get(corr)
        if launch is None:
            launch = cpu_ops.get(ext)
            by_op += launch is not None
        if launch is None:
            unmatched += 1
            continue
        tid, b, en = launch
        for ab, ae, name in annotations.get(tid, []):
            if ab <= b and en <= ae:
                per_module[name] += 1
    with open(args.torch_profiler, "w") as f:
        json.dump({"steps": args.steps, "kernels": len(kernels), "unmatched": unmatched, "placed_by_op": by_op,
                   "per_module": dict(per_module)}, f)
    return 0


def bench(args, step):
    """Forward CPU time per module call, four states interleaved in one process (7 rounds of 50 forwards):
    kcount recording (`kcount ctl PID start`) with and without the helper, kcount paused (`kcount ctl PID
    stop`) with the helper (its switch removed the hooks) and without it. The states are set through
    kcount's control socket (--kcount); the switch is synced right after each change."""
    from kcount_torch import modules as km
    import kcount_torch
    import subprocess
    if km.installed.ranges is None:
        print("bench: the helper's hooks are not installed (run under kcount run --torch-modules)", file=sys.stderr)
        return 2
    recording, backend = km.installed.recording, km.installed.backend
    mm = torch.nn.modules.module
    calls = [0]

    def count(m, a):
        calls[0] += 1
    h = mm.register_module_forward_pre_hook(count)
    step()
    h.remove()
    per_forward = calls[0]
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()

    def timed(n=50):
        # CPU time of each forward call alone: the GPU is idle when it starts (synchronize before), so its
        # 182 launches never wait for room in the launch queue and GPU time does not leak into the figure.
        total = 0.0
        for _ in range(n):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step()
            total += time.perf_counter() - t0
        torch.cuda.synchronize()
        return total / n

    def ctl(cmd):
        r = subprocess.run([args.kcount, "ctl", str(os.getpid()), cmd], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("kcount ctl %s: exit %d: %s" % (cmd, r.returncode, r.stderr.strip()))

    def registered():
        return len(mm._global_forward_pre_hooks) + len(mm._global_forward_hooks)

    opts = kcount_torch.Options(modules=True)
    res = collections.defaultdict(list)
    hooks = collections.defaultdict(list)

    def measure(state):
        hooks[state].append(registered())
        res[state].append(timed())

    for _ in range(7):
        km.installed.switch.sync()
        measure("recording")              # kcount records, the helper's hooks push ranges
        km.remove()
        measure("recording-no-helper")    # kcount records, no helper
        ctl("stop")
        measure("paused-no-helper")       # kcount paused, no helper
        km.install(torch, opts, recording=recording, backend=backend)
        km.installed.switch.sync()
        measure("paused")                 # kcount paused, the helper loaded: its switch removed the hooks
        ctl("start")
    med = {k: sorted(v)[len(v) // 2] * 1e6 for k, v in res.items()}
    out = {"module_calls_per_forward": per_forward, "forward_us": med,
           "per_module_call_us": {"recording": (med["recording"] - med["recording-no-helper"]) / per_forward,
                                  "paused": (med["paused"] - med["paused-no-helper"]) / per_forward},
           "spread_us": {k: (max(v) - min(v)) * 1e6 for k, v in res.items()},
           "hooks_registered": {k: sorted(set(v)) for k, v in hooks.items()},
           "recording_state": recording.mode}
    with open(args.bench, "w") as f:
        json.dump(out, f)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
