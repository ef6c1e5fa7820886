"""KCOUNT_YIELD with torch.profiler in the same process: ranges before/during/after with 10 x.add_(1)
each, torch.profiler (CUDA activity) around `during`, 0.5 s pause after it (kcount resumes within
100 ms of the profiler unsubscribing). Prints {"torch_profiler_kernels", "x"}; exit 0 if x == 30."""
import json
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile


def rng(name):
    class R:
        def __enter__(self):
            torch.cuda.nvtx.range_push(name)

        def __exit__(self, *a):
            torch.cuda.nvtx.range_pop()
    return R()


x = torch.zeros(16, device="cuda")
torch.cuda.synchronize()
with rng("before"):
    for _ in range(10):
        x.add_(1)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    with rng("during"):
        for _ in range(10):
            x.add_(1)
    torch.cuda.synchronize()
seen = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
           and not e.name.startswith(("Memcpy", "Memset")) and not getattr(e, "is_user_annotation", False))
time.sleep(0.5)
with rng("after"):
    for _ in range(10):
        x.add_(1)
torch.cuda.synchronize()
print(json.dumps({"torch_profiler_kernels": seen, "x": int(x[0].item())}))
sys.exit(0 if int(x[0].item()) == 30 else 3)
