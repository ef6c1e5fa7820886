"""A synthetic stand-in for the logs of examples/sweep.py, for testing scripts/case_study.py without a GPU.

The ranges are exactly the sweep's (configurations from examples/sweep.py, CONFIG/setup, CONFIG/warmup/step,
CONFIG/step/<layers>); the kernel names follow the simple rules below (real name grammars, made-up choices),
so a test can compute what the document must say. Logs are written with kc_make_log (tests/programs).

    python3 synthetic_sweep.py KC_MAKE_LOG OUT_DIR     -> OUT_DIR/sweep-eager.kcount, OUT_DIR/sweep-compiled.kcount
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import sweep  # noqa: E402

STEPS = 3
GEMV_FP32 = ("_Z17gemv2T_kernel_valIiiffffLi128ELi16ELi4ELi4ELb0ELb1E18cublasGemvParamsExIi30cublasGemvTensorStrided"
             "BatchedIKfES3_S1_IfEfEEvT11_T4_S7_")
XMMA_FP32 = ("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x16_warpgroupsize1x1x1_execute_segment_k_off_"
             "kernel__5x_cublas")
CUTLASS_TF32 = "cutlass_80_tensorop_s1688gemm_tf32_128x128_32x3_tn_align4"
ADD = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIfEESt5arrayIPcLm2EEEEviT0_T1_"
MUL = ("_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c108BFloat16ES4_S4_NS0_15binary_"
       "internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_")
GELU = ("_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_"
        "8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_")
FILL = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_"
LAYER_NORM = "_ZN2at6native28vectorized_layer_norm_kernelIfEEvi"
RMS_NORM_UNKNOWN = "my_rms_norm_kernel"  # matches no grammar on purpose: the document must list it
FLASH = ("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
         "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, "
         "true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)")
PEAK = {"bf16": 600e3, "fp16": 600e3, "fp32": 50e3, "tf32": 300e3}  # flops per ns


def nvjet_tile(dtype, t):
    """(tile, shape2, cluster, h/v) of the synthetic bf16/fp16 rule."""
    if t <= 16:
        tile = ("64x8", "64x16", "4x1", "v")
    elif t <= 256:
        tile = ("128x64", "64x8", "2x1", "v")
    else:
        tile = ("256x128", "64x4", "1x2", "h")
    if dtype == "fp16" and 32 <= t <= 64:
        tile = ("64x64",) + tile[1:]
    return tile


def gemm(dtype, t, bias, compiled=False):
    """The synthetic GEMM kernel names of one call, and whether a separate bias add runs."""
    if dtype in ("bf16", "fp16"):
        tile, shape2, cluster, hv = nvjet_tile(dtype, t)
        var = "tst" if dtype == "bf16" else "hsh"
        return f"nvjet_sm90_{var}_{tile}_{shape2}_{cluster}_{hv}_bz{'_bias' if bias else ''}_TNT", False
    if dtype == "fp32":
        if t == 1 and not compiled:
            return GEMV_FP32, bias
        return XMMA_FP32, bias
    return CUTLASS_TF32, bias


def gemm_ns(dtype, t, k, n):
    return int(2 * t * k * n / PEAK[dtype]) + 3000


def linear_call(cfg, compiled=False):
    name, extra_bias = gemm(cfg["dtype"], cfg["t"], True, compiled)
    ks = [("linear", name, gemm_ns(cfg["dtype"], cfg["t"], cfg["h"], cfg["h"]))]
    if extra_bias:
        ks.append(("linear", ADD, 1500))
    return ks


def mlp_call(dtype, t, h, i, act, compiled, prefix=""):
    g = gemm(dtype, t, False)[0]
    ks = [(prefix + "gate", g, gemm_ns(dtype, t, h, i)), (prefix + "up", g, gemm_ns(dtype, t, h, i))]
    if compiled:
        ks.append((prefix + "act", "triton_poi_fused_gelu_mul_1" if act == "geglu" else "triton_poi_fused_mul_silu_1",
                   2000 + t * i // 4000))
    else:
        ks += [(prefix + "act", GELU, 2000 + t * i // 3000), (prefix + "act", MUL, 2000 + t * i // 3000)]
    ks.append((prefix + "down", gemm(dtype, t, False)[0], gemm_ns(dtype, t, i, h)))
    return ks


def block_call(cfg, compiled):
    t, h, i = cfg["t"], cfg["h"], cfg["i"]
    norm = RMS_NORM_UNKNOWN if cfg["norm"] == "rms" else LAYER_NORM
    fused_norm = ("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_{}" if cfg["norm"] == "rms"
                  else "triton_per_fused_add_native_layer_norm_{}")
    ks = []
    if cfg["attn"] == "sdpa":
        ks.append(("norm1", fused_norm.format(0) if compiled else norm, 9000))
        ks.append(("attn/qkv", gemm("bf16", t, False)[0], gemm_ns("bf16", t, h, 3 * h)))
        ks.append(("attn/sdpa", FLASH, 90000))
        ks.append(("attn/out", gemm("bf16", t, False)[0], gemm_ns("bf16", t, h, h)))
        if compiled:
            ks.append(("norm2", fused_norm.format(2), 11000))
        else:
            ks += [("add1", ADD, 6000), ("norm2", norm, 9000)]
    else:
        ks.append(("norm2", fused_norm.format(0) if compiled else norm, 9000))
    ks += mlp_call("bf16", t, h, i, cfg["mlp"], compiled, prefix="mlp/")
    ks.append(("add2", "triton_poi_fused_add_3" if compiled else ADD, 6000))
    if compiled:  # one range around the compiled call
        ks = [("block", k, ns) for _, k, ns in ks]
    return ks


def step_kernels(cfg, compiled):
    if cfg["model"] == "linear":
        return linear_call(cfg, compiled)
    if cfg["model"] == "geglu":
        ks = mlp_call(cfg["dtype"], cfg["t"], cfg["h"], cfg["i"], "geglu", compiled)
        return [("mlp", k, ns) for _, k, ns in ks] if compiled else ks
    return block_call(cfg, compiled)


def script(mode):
    compiled = mode == "compiled"
    lines = [f"meta command_line python3 /synthetic/examples/sweep.py --mode {mode}", "meta gpu.0 synthetic (no GPU)",
             "meta kcount_version test", "meta host synthetic"]
    for name, cfg in sweep.configurations(mode, "all"):
        ks = step_kernels(cfg, compiled)
        lines += [f"push {name}", "push setup", f"kernel 1000 {FILL}", "pop", "push warmup"]
        for _ in range(2):
            lines.append("push step")
            if compiled:
                lines += [f"kernel 1000 {FILL}"] * 3
            for layer, k, ns in ks:
                lines += [f"push {p}" for p in layer.split("/")] + [f"kernel {ns} {k}"] + ["pop"] * len(layer.split("/"))
            lines.append("pop")
        lines.append("pop")
        for _ in range(STEPS):
            lines.append("push step")
            for layer, k, ns in ks:
                lines += [f"push {p}" for p in layer.split("/")] + [f"kernel {ns} {k}"] + ["pop"] * len(layer.split("/"))
            lines.append("pop")
        lines.append("pop")
    return "\n".join(lines) + "\n"


def write_logs(make_log, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for mode in ("eager", "compiled"):
        path = os.path.join(out_dir, f"sweep-{mode}.kcount")
        subprocess.run([make_log, path], input=script(mode), text=True, check=True)
        paths.append(path)
    return paths


if __name__ == "__main__":
    print("\n".join(write_logs(sys.argv[1], sys.argv[2])))
