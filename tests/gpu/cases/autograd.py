"""A small MLP: range `fwd` around forward, `bwd` around loss.backward(), 10 steps. Backward kernels run on
PyTorch's autograd device threads, so with multithreading on they are not inside `bwd` (pushed on the
main thread). --single-thread: torch.autograd.set_multithreading_enabled(False), then they land in `bwd`.
--torch-profiler PATH: no kcount; count the kernels of the 10 steps with torch.profiler instead."""
import argparse
import json

import torch

from common import nvtx

p = argparse.ArgumentParser()
p.add_argument("--single-thread", action="store_true")
p.add_argument("--torch-profiler")
a = p.parse_args()
torch.manual_seed(0)
with nvtx("setup"):
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for _ in range(3):  # warm-up outside the measured steps
        torch.nn.functional.cross_entropy(model(x), y).backward()
    model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


def steps():
    for _ in range(10):
        with nvtx("fwd"):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        with nvtx("bwd"):
            loss.backward()
        model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


ctx = torch.autograd.set_multithreading_enabled(False) if a.single_thread else None
if ctx is not None:
    ctx.__enter__()
if a.torch_profiler:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        steps()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
               and not e.name.startswith(("Memcpy", "Memset")) and not getattr(e, "is_user_annotation", False)]
    with open(a.torch_profiler, "w") as f:
        json.dump({"kernels": len(kernels)}, f)
else:
    steps()
if ctx is not None:
    ctx.__exit__(None, None, None)
print("autograd: done")
