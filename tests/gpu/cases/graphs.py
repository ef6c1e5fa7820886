"""CUDA graphs: 5 x.add_(1) warmed up, captured into a CUDAGraph inside range `cap`, replayed 100 times
inside range `rep`. x must grow by 505 (5 warm-up + 100 x 5 replayed; capture runs nothing)."""
import sys

import torch

from common import nvtx

x = torch.zeros(16, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    with nvtx("warm"):
        for _ in range(5):
            x.add_(1)
torch.cuda.current_stream().wait_stream(s)
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with nvtx("cap"):
    with torch.cuda.graph(g):
        for _ in range(5):
            x.add_(1)
torch.cuda.synchronize()
with nvtx("rep"):
    for _ in range(100):
        g.replay()
torch.cuda.synchronize()
grew = int(x[0].item())
print(f"graphs: x grew by {grew}")
sys.exit(0 if grew == 505 else 3)
