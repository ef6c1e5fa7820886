"""Shared helpers of the attribution cases (tests/gpu/cases/*.py): NVTX ranges and small CUDA work."""
import contextlib

import torch


@contextlib.contextmanager
def nvtx(name):
    torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()


def launch_adds(x, n):
    """n kernels: x.add_(1) n times (one vectorized elementwise kernel each)."""
    for _ in range(n):
        x.add_(1)
