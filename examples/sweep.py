"""Kernel-choice and fusion sweep: which GEMM kernel runs per shape and dtype, and what torch.compile fuses.

Three parts (--part), run in one process per mode (--mode eager | compiled):

  gemm    Linear (x @ W.T + b, bias=True) and GeGLU MLP (down(gelu(gate(x)) * up(x)), no bias,
          intermediate size I = H * 43 / 16, i.e. 11008 for H = 4096) on x of shape [T, H],
          for T (tokens) and H (hidden size) from the grids below and dtypes bf16, fp16, fp32 (TF32 off:
          torch.set_float32_matmul_precision("highest")) and tf32 (fp32 tensors, TF32 allowed: "high").
          Eager: every T in TOKENS x every H in HIDDEN x 4 dtypes x 2 models.
          Compiled: the subset COMPILED_TOKENS x COMPILED_HIDDEN (compilation, not the GPU, is the cost:
          every static shape is one Dynamo/Inductor compilation of a few seconds), run in priority order
          (see configurations) so that a time limit drops the least informative configurations.
  block   A pre-norm transformer block: h = x + attn(norm1(x)); y = h + mlp(norm2(h)) with norm RMSNorm or
          LayerNorm, mlp GeGLU or SwiGLU, attention by torch's scaled_dot_product_attention (causal) or none;
          bf16, x of shape [4, 1024, 2048] (T = 4096 tokens, 16 heads of 128).

Range names (the parse rule used by scripts/case_study.py; see parse_config_name):

  CONFIG            one top-level NVTX range per configuration, named
                    "<model> key=value key=value ..." with model in {linear, geglu, block}; keys:
                    dtype (bf16|fp16|fp32|tf32), t (tokens), h (hidden size), i (intermediate size),
                    and for blocks norm (rms|layer), mlp (geglu|swiglu), attn (sdpa|none).
                    The name does not contain "/", so range paths stay unambiguous.
  CONFIG/setup      creating the inputs (and, compiled, the weights): excluded from the analysis
  CONFIG/warmup/step/...   warm-up calls (compilation and autotuning happen here): excluded
  CONFIG/step/...   the recorded steps (--steps of them). Inner ranges:
                      linear:          step/linear
                      geglu eager:     step/gate, step/up, step/act (GELU and mul), step/down
                      geglu compiled:  step/mlp (one compiled call)
                      block eager:     step/norm1, step/attn/{qkv,sdpa,out}, step/add1, step/norm2,
                                       step/mlp/{gate,up,act,down}, step/add2 (attn absent with attn=none)
                      block compiled:  step/block (one compiled call)
  setup KEY=VALUE...   top-level ranges creating weights shared by the eager gemm configurations of one
                    (model, dtype, H): excluded

A configuration's range is the same in both modes, so `kcount diff eager.kcount compiled.kcount` matches
them by path.

Run (one process per mode; each writes one log):

    kcount run --output LOGDIR/sweep-eager.kcount -- python3 examples/sweep.py --mode eager
    kcount run --output LOGDIR/sweep-compiled.kcount -- python3 examples/sweep.py --mode compiled
    python3 examples/sweep.py --mode eager --dry-run      # list the configurations; needs no torch
    python3 examples/sweep.py --mode eager --device cpu --tiny   # smoke test on the CPU (needs torch)
"""

import argparse
import os
import sys
import time

TOKENS = [1 << k for k in range(15)]              # 1, 2, 4, ..., 16384
HIDDEN = [1024, 2048, 4096, 8192]
DTYPES = ["bf16", "fp16", "fp32", "tf32"]
COMPILED_TOKENS = [1, 128, 4096, 16384]
COMPILED_HIDDEN = [4096]
MODELS = ("linear", "geglu", "block")
BLOCK_SHAPE = {"b": 4, "s": 1024, "h": 2048, "heads": 16}
BLOCK_VARIANTS = [  # (norm, mlp, attn)
    ("rms", "geglu", "sdpa"),
    ("rms", "swiglu", "sdpa"),
    ("layer", "geglu", "sdpa"),
    ("layer", "swiglu", "sdpa"),
    ("rms", "swiglu", "none"),
]
TINY = {"tokens": [1, 4, 32], "hidden": [64, 128], "compiled_tokens": [1, 32], "compiled_hidden": [64],
        "block": {"b": 2, "s": 16, "h": 64, "heads": 4}}


def intermediate_size(h):
    """MLP intermediate size for hidden size h: h * 43 / 16 (11008 for 4096, as in LLaMA-7B)."""
    return h * 43 // 16


def config_name(model, **fields):
    """The NVTX range name of one configuration: "<model> k=v k=v ..." (keys in the given order)."""
    parts = [model] + [f"{k}={v}" for k, v in fields.items()]
    name = " ".join(parts)
    assert "/" not in name
    return name


def parse_config_name(name):
    """Inverse of config_name: {"model": ..., key: value, ...} with integer values as int; None if the
    name is not a configuration range (first word not in MODELS, or a word without "=")."""
    words = name.split(" ")
    if not words or words[0] not in MODELS:
        return None
    cfg = {"model": words[0]}
    for w in words[1:]:
        if "=" not in w:
            return None
        k, v = w.split("=", 1)
        cfg[k] = int(v) if v.isdigit() else v
    return cfg


def configurations(mode, part, tiny=False):
    """The configurations of one run, in run order: list of (range name, config dict)."""
    tokens = TINY["tokens"] if tiny else TOKENS
    hidden = TINY["hidden"] if tiny else HIDDEN
    if mode == "compiled":
        tokens = TINY["compiled_tokens"] if tiny else COMPILED_TOKENS
        hidden = TINY["compiled_hidden"] if tiny else COMPILED_HIDDEN
    bs = TINY["block"] if tiny else BLOCK_SHAPE
    out = []
    if part in ("block", "all"):
        for norm, mlp, attn in BLOCK_VARIANTS:
            name = config_name("block", norm=norm, mlp=mlp, attn=attn, dtype="bf16", t=bs["b"] * bs["s"],
                               h=bs["h"], i=intermediate_size(bs["h"]))
            out.append((name, parse_config_name(name)))
    if part in ("gemm", "all"):
        for model in ("linear", "geglu"):
            for dtype in DTYPES:
                for h in hidden:
                    for t in tokens:
                        if model == "linear":
                            name = config_name(model, dtype=dtype, t=t, h=h)
                        else:
                            name = config_name(model, dtype=dtype, t=t, h=h, i=intermediate_size(h))
                        out.append((name, parse_config_name(name)))
    if mode == "compiled":
        # Compilation dominates the compiled run's time; if --max-seconds stops it early, what was run first
        # matters most: two blocks (fusion: both norms, both MLPs), then bf16/fp16 GeGLU and Linear, the other blocks, then fp32/TF32.
        def priority(item):
            cfg = item[1]
            if cfg["model"] == "block":
                first = {("rms", "swiglu", "sdpa"), ("layer", "geglu", "sdpa")}  # both norms, both MLPs
                return 0 if (cfg["norm"], cfg["mlp"], cfg["attn"]) in first else 3
            low = cfg["dtype"] in ("bf16", "fp16")
            return (1 if low else 4) if cfg["model"] == "geglu" else (2 if low else 5)
        out.sort(key=priority)  # stable: the grid order within one priority
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="GEMM kernel choice and Inductor fusion sweep (see the module "
                                            "docstring for the range names)")
    p.add_argument("--mode", choices=["eager", "compiled"], required=True)
    p.add_argument("--part", choices=["all", "gemm", "block"], default="all")
    p.add_argument("--steps", type=int, default=3, help="recorded steps per configuration (default 3)")
    p.add_argument("--warmup", type=int, default=None,
                   help="warm-up calls per configuration, inside CONFIG/warmup (default: 1 eager, where the "
                        "first call only adds host work, 2 compiled, where it compiles; compiled needs >= 2)")
    p.add_argument("--dry-run", action="store_true", help="print the configurations and exit (no torch)")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (smoke test, no NVTX)")
    p.add_argument("--tiny", action="store_true", help="tiny shapes (smoke test)")
    p.add_argument("--max-seconds", type=float, default=0,
                   help="start no new configuration after this many seconds (0: no limit); the skipped "
                        "ones are listed on stdout")
    args = p.parse_args(argv)
    if args.warmup is None:
        args.warmup = 2 if args.mode == "compiled" else 1
    if args.steps < 1:
        p.error("--steps must be at least 1")
    if args.warmup < (2 if args.mode == "compiled" else 0):
        p.error("--warmup must be at least 2 with --mode compiled (the first call compiles)")
    return args


def main(argv=None):
    args = parse_args(argv)
    configs = configurations(args.mode, args.part, args.tiny)
    if args.dry_run:
        for name, _ in configs:
            print(name)
        print(f"{len(configs)} configurations, mode={args.mode} part={args.part}", file=sys.stderr)
        return 0
    try:
        import torch  # noqa: F401
    except ImportError:
        print("sweep: torch is not installed; only --dry-run works without it", file=sys.stderr)
        return 3
    args.block_shape = TINY["block"] if args.tiny else BLOCK_SHAPE
    from _sweep_run import run_sweep
    return run_sweep(args, configs)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
