"""GPU check workload of tests/gpu/check_range_cost.sh: 20 steps, each one range `step` holding `add` (10
in-place adds: 10 runtime kernel launches) and `mul` (5 in-place multiplies), nothing else inside a range
(no allocation, no copy), so kcount's callbacks per range are known exactly."""
import torch

x = torch.ones(1 << 16, device="cuda")
torch.cuda.synchronize()
for _ in range(20):
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_push("add")
    for _ in range(10):
        x.add_(1.0)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("mul")
    for _ in range(5):
        x.mul_(1.0)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
