"""GeGLU MLP in bf16 on x [8, 512, 4096]: down(gelu(gate(x)) * up(x)), gate/up 4096->11008 and down
11008->4096, no bias.

Eager: 5 kernels per step, ranges step/{gate,up,act,down} (act = GELU and mul, 2 pointwise kernels).
--compile: the whole forward is compiled (ranges inside it would break the graph), so each measured step
is step/mlp around the compiled call; expected 4 kernels (3 GEMMs + 1 fused Triton pointwise kernel).
Warm-up steps (at least 3 with --compile, so compilation and autotuning happen there) are inside the
range 'warmup'.

    kcount run -- python3 examples/geglu.py [--steps 20] [--warmup 5] [--compile [--compile-mode reduce-overhead]]
    python3 examples/geglu.py --torch-profiler out.json      # without kcount
"""

import torch
import torch.nn.functional as F
from torch import nn

from _common import nvtx_range, parse_args, run_example


class GeGLU(nn.Module):
    def __init__(self, dim=4096, hidden=11008, device=None, dtype=None):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False, device=device, dtype=dtype)
        self.up = nn.Linear(dim, hidden, bias=False, device=device, dtype=dtype)
        self.down = nn.Linear(hidden, dim, bias=False, device=device, dtype=dtype)

    def forward(self, x):
        return self.down(F.gelu(self.gate(x)) * self.up(x))


def main():
    args = parse_args("GeGLU MLP (4096 -> 11008 -> 4096, bf16) on x [8, 512, 4096]",
                      min_compile_warmup=3)
    torch.manual_seed(0)
    device = "cuda"
    dtype = torch.bfloat16
    mlp = GeGLU(device=device, dtype=dtype)
    mlp.eval()
    x = torch.randn(8, 512, 4096, device=device, dtype=dtype)

    if args.compile:
        compiled = torch.compile(mlp, mode=args.compile_mode)

        def step():
            with nvtx_range("mlp"):
                return compiled(x)
    else:
        def step():
            with nvtx_range("gate"):
                g = mlp.gate(x)
            with nvtx_range("up"):
                u = mlp.up(x)
            with nvtx_range("act"):
                h = F.gelu(g) * u
            with nvtx_range("down"):
                return mlp.down(h)

    run_example("geglu", args, step)


if __name__ == "__main__":
    main()
