"""One range `mixed` with a @triton.jit kernel, a bf16 matmul, an elementwise op and torch.cuda._sleep:
4 launches and 4 kernels, nothing counted twice."""
import torch
import triton
import triton.language as tl

from common import nvtx


@triton.jit
def add_one(ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(ptr + i, tl.load(ptr + i, mask=m) + 1, mask=m)


x = torch.zeros(1024, device="cuda")
a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
b = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
add_one[(4,)](x, 1024, BLOCK=256)  # compile and warm up outside the range
c = a @ b
torch.cuda.synchronize()
with nvtx("mixed"):
    add_one[(4,)](x, 1024, BLOCK=256)
    c = a @ b
    x.mul_(2)
    torch.cuda._sleep(1000)
torch.cuda.synchronize()
print("triton_mixed: done", float(x[0]))
