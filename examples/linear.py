"""One bf16 nn.Linear(4096, 4096, bias=True) on x [8, 512, 4096]: one GEMM kernel per step (the bias is
added in the GEMM epilogue).

Ranges: warmup/step/linear for the warm-up steps, then step/linear for each measured step.

    kcount run -- python3 examples/linear.py [--steps 20] [--warmup 5] [--compile]
    python3 examples/linear.py --torch-profiler out.json     # without kcount
"""

import torch
from torch import nn

from _common import nvtx_range, parse_args, run_example


def main():
    args = parse_args("bf16 nn.Linear(4096, 4096, bias=True) on x [8, 512, 4096]",
                      min_compile_warmup=1)
    torch.manual_seed(0)
    device = "cuda"
    dtype = torch.bfloat16
    model = nn.Linear(4096, 4096, bias=True, device=device, dtype=dtype)
    model.eval()
    x = torch.randn(8, 512, 4096, device=device, dtype=dtype)
    forward = torch.compile(model, mode=args.compile_mode) if args.compile else model

    def step():
        with nvtx_range("linear"):
            return forward(x)

    run_example("linear", args, step)


if __name__ == "__main__":
    main()
