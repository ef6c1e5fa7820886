"""The torch part of examples/sweep.py (imported only when torch is installed); range names and the
configuration list are defined in sweep.py."""

import contextlib
import math
import sys
import time
import traceback

import torch
import torch.nn.functional as F

_TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}
_NVTX = True


@contextlib.contextmanager
def nvtx_range(name):
    """NVTX push/pop range on the calling thread (no-op with --device cpu)."""
    if _NVTX:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if _NVTX:
            torch.cuda.nvtx.range_pop()


def set_matmul_precision(label):
    """fp32 matmuls: TF32 allowed for "tf32", IEEE fp32 ("highest") otherwise (torch's public setter)."""
    torch.set_float32_matmul_precision("high" if label == "tf32" else "highest")


def _configure_dynamo():
    """Static shapes, and room for one compilation per configuration (the default limit is 8)."""
    import torch._dynamo

    cfg = torch._dynamo.config
    for attr in ("recompile_limit", "cache_size_limit", "accumulated_recompile_limit",
                 "accumulated_cache_size_limit"):
        if hasattr(cfg, attr):
            setattr(cfg, attr, 100000)
    if hasattr(cfg, "automatic_dynamic_shapes"):
        cfg.automatic_dynamic_shapes = False


def _weight(rows, cols, dtype, device, gen):
    w = torch.empty(rows, cols, dtype=torch.float32, device=device)
    w.uniform_(-1.0 / math.sqrt(cols), 1.0 / math.sqrt(cols), generator=gen)
    return w.to(dtype)


# ---- models as functions of explicit weights (the same code runs eager and compiled) ----

def linear_fn(x, w, b):
    return F.linear(x, w, b)


def mlp_fn(x, wg, wu, wd, act):
    a = F.gelu(F.linear(x, wg)) if act == "geglu" else F.silu(F.linear(x, wg))
    return F.linear(a * F.linear(x, wu), wd)


def _norm(x, kind, weight, bias):
    if kind == "rms":
        if hasattr(F, "rms_norm"):
            return F.rms_norm(x, (x.shape[-1],), weight, eps=1e-6)
        # torch < 2.4 (only for the CPU smoke test on old torch): the same formula
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)


def _sdpa(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # torch < 2.0 (only for the CPU smoke test on old torch): causal softmax attention
    s = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v


def _attention(x, p, heads):
    b, s, h = x.shape
    qkv = F.linear(x, p["wqkv"]).view(b, s, 3, heads, h // heads).permute(2, 0, 3, 1, 4)
    o = _sdpa(qkv[0], qkv[1], qkv[2])
    return F.linear(o.transpose(1, 2).reshape(b, s, h), p["wo"])


def block_fn(x, p, cfg, heads):
    h = x
    if cfg["attn"] == "sdpa":
        h = x + _attention(_norm(x, cfg["norm"], p["n1w"], p.get("n1b")), p, heads)
    return h + mlp_fn(_norm(h, cfg["norm"], p["n2w"], p.get("n2b")), p["wg"], p["wu"], p["wd"], cfg["mlp"])


def block_eager_ranges(x, p, cfg, heads):
    """block_fn with one NVTX range per layer (eager only: ranges inside a compiled region break it)."""
    h = x
    if cfg["attn"] == "sdpa":
        b, s, hid = x.shape
        with nvtx_range("norm1"):
            n = _norm(x, cfg["norm"], p["n1w"], p.get("n1b"))
        with nvtx_range("attn"):
            with nvtx_range("qkv"):
                qkv = F.linear(n, p["wqkv"]).view(b, s, 3, heads, hid // heads).permute(2, 0, 3, 1, 4)
            with nvtx_range("sdpa"):
                o = _sdpa(qkv[0], qkv[1], qkv[2])
            with nvtx_range("out"):
                a = F.linear(o.transpose(1, 2).reshape(b, s, hid), p["wo"])
        with nvtx_range("add1"):
            h = x + a
    with nvtx_range("norm2"):
        n = _norm(h, cfg["norm"], p["n2w"], p.get("n2b"))
    with nvtx_range("mlp"):
        m = mlp_eager_ranges(n, p["wg"], p["wu"], p["wd"], cfg["mlp"])
    with nvtx_range("add2"):
        return h + m


def mlp_eager_ranges(x, wg, wu, wd, act):
    with nvtx_range("gate"):
        g = F.linear(x, wg)
    with nvtx_range("up"):
        u = F.linear(x, wu)
    with nvtx_range("act"):
        a = (F.gelu(g) if act == "geglu" else F.silu(g)) * u
    with nvtx_range("down"):
        return F.linear(a, wd)


# ---- one configuration ----

def _gemm_weights(cfg, dtype, device, gen):
    h = cfg["h"]
    if cfg["model"] == "linear":
        return {"w": _weight(h, h, dtype, device, gen), "b": _weight(1, h, dtype, device, gen).view(h)}
    i = cfg["i"]
    return {"wg": _weight(i, h, dtype, device, gen), "wu": _weight(i, h, dtype, device, gen),
            "wd": _weight(h, i, dtype, device, gen)}


def _block_weights(cfg, dtype, device, gen):
    h, i = cfg["h"], cfg["i"]
    p = {"wg": _weight(i, h, dtype, device, gen), "wu": _weight(i, h, dtype, device, gen),
         "wd": _weight(h, i, dtype, device, gen),
         "n2w": torch.ones(h, dtype=dtype, device=device)}
    if cfg["attn"] == "sdpa":
        p["wqkv"] = _weight(3 * h, h, dtype, device, gen)
        p["wo"] = _weight(h, h, dtype, device, gen)
        p["n1w"] = torch.ones(h, dtype=dtype, device=device)
    if cfg["norm"] == "layer":
        p["n2b"] = torch.zeros(h, dtype=dtype, device=device)
        if "n1w" in p:
            p["n1b"] = torch.zeros(h, dtype=dtype, device=device)
    return p


def _step_fn(cfg, p, x, compiled, heads):
    model = cfg["model"]
    if model == "linear":
        fn = torch.compile(linear_fn, dynamic=False) if compiled else linear_fn

        def step():
            with nvtx_range("linear"):
                return fn(x, p["w"], p["b"])
        return step
    if model == "geglu":
        if compiled:
            fn = torch.compile(mlp_fn, dynamic=False)

            def step():
                with nvtx_range("mlp"):
                    return fn(x, p["wg"], p["wu"], p["wd"], "geglu")
            return step
        return lambda: mlp_eager_ranges(x, p["wg"], p["wu"], p["wd"], "geglu")
    if compiled:
        fn = torch.compile(block_fn, dynamic=False)

        def step():
            with nvtx_range("block"):
                return fn(x, p, cfg, heads)
        return step
    return lambda: block_eager_ranges(x, p, cfg, heads)


def run_config(name, cfg, args, shared, compiled, block_shape):
    """One configuration: CONFIG/setup, CONFIG/warmup/step..., then --steps x CONFIG/step."""
    device = args.device
    dtype = _TORCH_DTYPES[cfg["dtype"]]
    set_matmul_precision(cfg["dtype"])
    gen = torch.Generator(device=device)
    gen.manual_seed(0)
    heads = block_shape["heads"]
    with nvtx_range(name):
        with nvtx_range("setup"):
            if cfg["model"] == "block":
                p = _block_weights(cfg, dtype, device, gen)
                shape = (block_shape["b"], block_shape["s"], cfg["h"])
            else:
                p = shared if shared is not None else _gemm_weights(cfg, dtype, device, gen)
                shape = (cfg["t"], cfg["h"])
            x = torch.empty(shape, dtype=torch.float32, device=device).normal_(generator=gen).to(dtype)
        step = _step_fn(cfg, p, x, compiled, heads)
        with nvtx_range("warmup"):
            for _ in range(args.warmup):
                with nvtx_range("step"):
                    step()
        if device == "cuda":
            torch.cuda.synchronize()
        out = None
        for _ in range(args.steps):
            with nvtx_range("step"):
                out = step()
    if device == "cuda":
        torch.cuda.synchronize()
    return out


def run_sweep(args, configs):
    """Runs the configurations in order; prints one line per configuration and a closing summary."""
    global _NVTX
    _NVTX = args.device == "cuda"
    if args.device == "cuda" and not torch.cuda.is_available():
        print("sweep: CUDA is not available (use --device cpu --tiny for a CPU smoke test)", file=sys.stderr)
        return 3
    compiled = args.mode == "compiled"
    if compiled:
        _configure_dynamo()
    block_shape = args.block_shape
    dev_name = torch.cuda.get_device_name() if args.device == "cuda" else "cpu"
    print(f"sweep: mode={args.mode} part={args.part} steps={args.steps} warmup={args.warmup} "
          f"configurations={len(configs)} device={dev_name} torch={torch.__version__}", flush=True)
    t0 = time.monotonic()
    skipped = []
    failed = []
    shared_key, shared = None, None
    with torch.inference_mode():
        for n, (name, cfg) in enumerate(configs):
            if args.max_seconds and time.monotonic() - t0 > args.max_seconds:
                skipped.append((name, f"--max-seconds {args.max_seconds:g}"))
                continue
            if args.device == "cpu" and cfg["dtype"] == "fp16":
                skipped.append((name, "fp16 matmul on the CPU is missing in older torch"))
                continue
            shared_for_cfg = None
            if not compiled and cfg["model"] in ("linear", "geglu"):
                # Eager: the weights of one (model, dtype, H) are made once, in a top-level setup range.
                key = (cfg["model"], cfg["dtype"], cfg["h"])
                if key != shared_key:
                    shared = None
                    gen = torch.Generator(device=args.device)
                    gen.manual_seed(0)
                    with nvtx_range(f"setup model={cfg['model']} dtype={cfg['dtype']} h={cfg['h']}"):
                        shared = _gemm_weights(cfg, _TORCH_DTYPES[cfg["dtype"]], args.device, gen)
                    shared_key = key
                shared_for_cfg = shared
            t = time.monotonic()
            try:
                out = run_config(name, cfg, args, shared_for_cfg, compiled, block_shape)
            except Exception:  # one failing configuration must not cost the others
                failed.append(name)
                print(f"[{n + 1}/{len(configs)}] {name}: FAILED after {time.monotonic() - t:.2f} s:", flush=True)
                traceback.print_exc(file=sys.stdout)
                sys.stdout.flush()
                continue
            print(f"[{n + 1}/{len(configs)}] {name}: {time.monotonic() - t:.2f} s, output "
                  f"{list(out.shape)} {str(out.dtype).replace('torch.', '')}", flush=True)
    for name, why in skipped:
        print(f"skipped ({why}): {name}", flush=True)
    for name in failed:
        print(f"failed: {name}", flush=True)
    print(f"sweep: done, {len(configs) - len(skipped) - len(failed)} configurations run, {len(skipped)} skipped, "
          f"{len(failed)} failed, {time.monotonic() - t0:.1f} s", flush=True)
    return 1 if failed else 0
