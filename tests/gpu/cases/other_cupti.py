"""Ranges before/during/after with 10 x.add_(1) each; torch.profiler (CUDA activity) around `during`."""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from common import nvtx

x = torch.zeros(16, device="cuda")
torch.cuda.synchronize()
with nvtx("before"):
    for _ in range(10):
        x.add_(1)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    with nvtx("during"):
        for _ in range(10):
            x.add_(1)
    torch.cuda.synchronize()
seen = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
           and not e.name.startswith(("Memcpy", "Memset")) and not getattr(e, "is_user_annotation", False))
with nvtx("after"):
    for _ in range(10):
        x.add_(1)
torch.cuda.synchronize()
print(json.dumps({"torch_profiler_kernels": seen, "x": int(x[0].item())}))
sys.exit(0 if int(x[0].item()) == 30 else 3)
