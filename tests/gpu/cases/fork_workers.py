"""CUDA initialized, then a DataLoader with 4 forked workers: 16 batches, 1 kernel per batch in range
`step`. Also subprocess.run(["/bin/true"]) and a forked child that calls os._exit(0)."""
import os
import subprocess
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Data(Dataset):
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return torch.full((4,), float(i))


t0 = time.perf_counter()
x = torch.zeros(16, device="cuda")
torch.cuda.synchronize()
loader = DataLoader(Data(), batch_size=1, num_workers=4, multiprocessing_context="fork")
n = 0
for batch in loader:
    torch.cuda.nvtx.range_push("step")
    x.add_(1)
    torch.cuda.nvtx.range_pop()
    n += 1
subprocess.run(["/bin/true"], check=True)
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
torch.cuda.synchronize()
print(f"fork_workers: batches={n} x={int(x[0].item())} seconds={time.perf_counter() - t0:.3f}")
assert n == 16 and int(x[0].item()) == 16
