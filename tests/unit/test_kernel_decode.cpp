// Kernel name decoder: every kernel name in the shipped H200 logs, plus real names from other GPUs and
// libraries found in public sources (each cites where it came from). Grammars: docs/kernel-names.md.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tools/kernel_decode.h"

namespace {

using kc::KernelCategory;

std::string cat(const kc::DecodedKernel& d) { return std::string(kc::categoryName(d.category)); }

std::string raw(const kc::DecodedKernel& d, const std::string& key) {
  for (const auto& [k, v] : d.raw)
    if (k == key) return v;
  return "<absent>";
}

}  // namespace

// ---- Names in examples/logs/*.kcount and tests/data/launches.kcount (NVIDIA H200, PyTorch 2.11, cuBLAS of
// CUDA 13.0), dumped with `kcount kernels --format json`.

TEST_CASE("shipped: nvjet GEMMs of the GeGLU and Linear examples") {
  auto d = kc::decodeKernelName("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuBLAS (nvjet)");
  CHECK(d.grammar == "nvjet");
  CHECK(d.arch == "sm90");
  CHECK(d.tile == "256x128");
  CHECK(d.cluster == "1x2");
  CHECK(d.stages.empty());  // "64x4" is not documented: kept raw
  CHECK(raw(d, "shape2") == "64x4");
  CHECK(raw(d, "variant") == "tst");
  CHECK(raw(d, "h/v") == "h");
  CHECK(raw(d, "flags") == "bz coopA");
  CHECK(d.epilogue == "bias");
  CHECK(d.layout == "TNT");
  CHECK(d.dtype == "bf16");  // variant tst (t?t): bf16, as every tst kernel of the sweep logs ran in bf16 ranges
  CHECK(d.identity == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT");

  d = kc::decodeKernelName("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT");
  CHECK(d.tile == "256x128");
  CHECK(d.cluster == "1x2");
  CHECK(d.epilogue.empty());
  CHECK(d.layout == "TNT");

  d = kc::decodeKernelName("nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN");
  CHECK(cat(d) == "GEMM");
  CHECK(d.tile == "192x192");
  CHECK(d.cluster == "2x1");
  CHECK(raw(d, "h/v") == "v");
  CHECK(raw(d, "flags") == "bz coopB");
  CHECK(d.epilogue.empty());
  CHECK(d.layout == "TNN");

  // fp16 GEMMs of the sweep logs are hsh; variants whose outer letters differ or are unknown give no dtype.
  CHECK(kc::decodeKernelName("nvjet_sm90_hsh_128x256_64x4_2x1_v_bz_coopA_TNN").dtype == "fp16");
  CHECK(kc::decodeKernelName("nvjet_sm90_tsh_128x256_64x4_2x1_v_bz_coopA_TNN").dtype.empty());
  CHECK(kc::decodeKernelName("nvjet_sm90_qsq_128x256_64x4_2x1_v_bz_coopA_TNN").dtype.empty());
  CHECK(raw(kc::decodeKernelName("nvjet_sm90_qsq_128x256_64x4_2x1_v_bz_coopA_TNN"), "variant") == "qsq");
}


TEST_CASE("shipped: Inductor's fused GeGLU kernel, with an op that starts with '_'") {
  auto d = kc::decodeKernelName("triton_poi_fused__unsafe_view_gelu_mul_0");
  CHECK(cat(d) == "pointwise");
  CHECK(d.library == "Triton (Inductor)");
  CHECK(d.kind == "pointwise");
  CHECK(d.fused == "_unsafe_view_gelu_mul");
  CHECK(d.ops == std::vector<std::string>{"_unsafe_view", "gelu", "mul"});
  CHECK(raw(d, "counter") == "0");
  CHECK(d.identity == "triton_poi_fused__unsafe_view_gelu_mul");
  // The counter is not part of the identity: the same kernel from another graph matches.
  CHECK(kc::decodeKernelName("triton_poi_fused__unsafe_view_gelu_mul_7").identity == d.identity);
}

TEST_CASE("shipped: ATen elementwise kernels") {
  auto d = kc::decodeKernelName(
      "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c108BFloat16ES4_S4_NS0_15binary_"
      "internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_");
  CHECK(cat(d) == "pointwise");
  CHECK(d.library == "ATen");
  CHECK(d.kind == "vectorized_elementwise_kernel");
  CHECK(d.functor == "MulFunctor");
  CHECK(d.tile.empty());

  d = kc::decodeKernelName(
      "_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_"
      "8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_");
  CHECK(cat(d) == "pointwise");
  CHECK(d.functor == "GeluCUDAKernelImpl");

  for (const char* n :
       {"_ZN2at6native55_GLOBAL__N__11f7a751_22_DistributionUniform_cu_67fa25cf43distribution_elementwise_grid_"
        "stride_kernelIfLi4EZNS0_9templates4cuda21uniform_and_transformIN3c108BFloat16EfPNS_17CUDAGeneratorImplEZ"
        "ZZNS4_14uniform_kernelIS9_EEvRNS_18TensorIteratorBaseEddT_ENKUlvE_clEvENKUlvE2_clEvEUlfE_EEvSC_T1_T2_EUlP"
        "24curandStatePhilox4_32_10E0_ZNS1_27distribution_nullary_kernelIS7_f6float4S9_SL_SG_EEvSC_SI_RKT3_T4_EUli"
        "fE_EEvlNS_15PhiloxCudaStateESH_SI_",
        "_ZN2at6native54_GLOBAL__N__d8ceb000_21_DistributionNormal_cu_0c5b6e8543distribution_elementwise_grid_"
        "stride_kernelIfLi4EZNS0_9templates4cuda20normal_and_transformIN3c108BFloat16EfPNS_17CUDAGeneratorImplEZ"
        "ZZNS4_13normal_kernelIS9_EEvRKNS_10TensorBaseEddT_ENKUlvE_clEvENKUlvE2_clEvEUlfE_EEvRNS_18TensorIterator"
        "BaseET1_T2_EUlP24curandStatePhilox4_32_10E0_ZNS1_27distribution_nullary_kernelIS7_f6float4S9_SO_SH_EEvSJ_"
        "SL_RKT3_T4_EUlifE_EEvlNS_15PhiloxCudaStateESK_SL_"}) {
    d = kc::decodeKernelName(n);
    CHECK(cat(d) == "pointwise");
    CHECK(d.library == "ATen");
    CHECK(d.kind == "distribution_elementwise_grid_stride_kernel");
    CHECK(d.functor.empty());  // no functor argument in this kernel's template arguments
  }
}

TEST_CASE("shipped: ATen add and fill kernels (CUDA graph and torch.compile logs)") {
  auto d = kc::decodeKernelName(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIfEESt5arrayIPcLm2EEEEviT0_T1_");
  CHECK(cat(d) == "pointwise");
  CHECK(d.functor == "CUDAFunctorOnSelf_add");
  for (const char* n : {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_",
                        "_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_11FillFunctorIlEESt5arrayIPcLm1EEEEviT0_T1_",
                        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"}) {
    d = kc::decodeKernelName(n);
    CHECK(cat(d) == "copy/memset");
    CHECK(d.library == "ATen");
    CHECK(d.functor == "FillFunctor");
  }
}

TEST_CASE("shipped: a plain user kernel matches no grammar and is not guessed") {
  auto d = kc::decodeKernelName("_Z12empty_kernelPi");
  CHECK(cat(d) == "other");
  CHECK(d.library.empty());
  CHECK(d.grammar.empty());
  CHECK(d.tile.empty());
  CHECK(d.kind.empty());
  CHECK(d.raw.empty());
  CHECK(d.identity == "empty_kernel(int*)");
}

// ---- Real names from other GPUs and libraries.

TEST_CASE("public: nvjet names from other GPUs") {
  // H20 (sm90), public GitHub Markdown NCU notes found by exact-string search in a public code index.
  auto d = kc::decodeKernelName("nvjet_tst_128x8_64x12_2x1_v_bz_splitK_TNT");
  CHECK(d.arch.empty());  // no "smNN" token in this cuBLAS version's names
  CHECK(d.tile == "128x8");
  CHECK(raw(d, "shape2") == "64x12");
  CHECK(d.cluster == "2x1");
  CHECK(raw(d, "flags") == "bz splitK");
  CHECK(d.layout == "TNT");
  // Same index, a kernel table of a Kimi K2.5 layer: "2cta" stays a raw flag.
  d = kc::decodeKernelName("nvjet_tst_128x256_64x6_2x1_2cta_v_bz_TNT");
  CHECK(d.tile == "128x256");
  CHECK(d.cluster == "2x1");
  CHECK(raw(d, "flags") == "2cta bz");
  // Same index, a transformer probe's notes: bias epilogue.
  d = kc::decodeKernelName("nvjet_tst_128x96_64x7_4x1_v_bz_bias_TNT");
  CHECK(d.epilogue == "bias");
  CHECK(d.tile == "128x96");
  // Blackwell (sm100), same index.
  d = kc::decodeKernelName("nvjet_sm100_tst_64x16_64x16_2x4_2cta_h_bz_splitK_TNT");
  CHECK(d.arch == "sm100");
  CHECK(d.tile == "64x16");
  CHECK(d.cluster == "2x4");
  CHECK(raw(d, "flags") == "2cta bz splitK");
  // Consumer Blackwell (sm120), same index: a different token order. The shapes are not in the observed
  // positions, so nothing is read as tile or cluster; everything is kept raw.
  d = kc::decodeKernelName("nvjet_sm120_tst_mma_64x64x128_3_32x32x128_tmaAB_alignCD4_bz_TNNN");
  CHECK(cat(d) == "GEMM");
  CHECK(d.arch == "sm120");
  CHECK(d.tile.empty());
  CHECK(d.cluster.empty());
  CHECK(d.layout == "TNNN");
  CHECK(raw(d, "flags") == "mma 64x64x128 3 32x32x128 tmaAB alignCD4 bz");
}

TEST_CASE("public: CUTLASS 3.x procedural name") {
  // The form cutlass_library/gemm_operation.py (NVIDIA/cutlass, GemmOperation.procedural_name) emits for a
  // bf16 Hopper GEMM with a cooperative warp-specialized kernel schedule and a TMA epilogue.
  auto d = kc::decodeKernelName(
      "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_2x1x1_0_tnn_align8_warpspecialized_"
      "cooperative_epi_tma");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "CUTLASS 3.x");
  CHECK(d.arch == "sm90");
  CHECK(d.tile == "128x256x64");
  CHECK(d.cluster == "2x1x1");
  CHECK(d.stages == "0");
  CHECK(d.dtype == "bf16");
  CHECK(d.layout == "tnn");
  CHECK(raw(d, "types (A_B_acc_C_D)") == "bf16_bf16_f32_bf16_bf16");
  CHECK(raw(d, "alignment") == "8");
  CHECK(raw(d, "schedule") == "warpspecialized_cooperative_epi_tma");
  // Wrapped in CUTLASS's device_kernel template, as PyTorch's CUTLASS backend launches it.
  d = kc::decodeKernelName(
      "void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_64x128x64_1x2x1_0_ntn_"
      "align8_warpspecialized_epi_nosmem>(cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_64x128x64_1x2x1_0_"
      "ntn_align8_warpspecialized_epi_nosmem::Params)");
  CHECK(d.tile == "64x128x64");
  CHECK(d.cluster == "1x2x1");
  CHECK(d.dtype == "fp16");  // written f16 (cutlass_library DataTypeNames)
  CHECK(d.layout == "ntn");
}

TEST_CASE("public: cuBLAS sm90_xmma, legacy ampere_ and embedded CUTLASS 2.x names") {
  // NVIDIA developer forum, "Switch from sm90_xmma_gemm.._cublas / cutlass_80_tensorop_.. kernels with
  // CUDA-12.1 to nvjet_tst kernels with CUDA-12.8" (H100 NVL).
  auto d = kc::decodeKernelName(
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
      "kernel__5x_cublas");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuBLAS (xmma)");
  CHECK(d.arch == "sm90");
  CHECK(d.tile == "128x128x64");
  CHECK(d.cluster.empty());
  CHECK(d.dtype == "bf16");  // first type of the second group
  CHECK(raw(d, "types") == "bf16bf16_bf16f32_f32");  // as written
  CHECK(d.layout == "tn");
  CHECK(raw(d, "layout suffix") == "n");
  CHECK(raw(d, "warpgroupsize") == "1x1x1");
  CHECK(raw(d, "flags") == "execute_segment_k_off_kernel__5x_cublas");
  // The same grammar with cuDNN's suffix: a convolution run as an implicit GEMM (fprop: forward). The
  // suffix names the library as _cublas does (docs/kernel-names.md: a name carrying "cudnn" is cuDNN's).
  d = kc::decodeKernelName(
      "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_"
      "execute_kernel__5x_cudnn");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuDNN (xmma)");
  CHECK(d.kind == "fprop");
  CHECK(d.tile == "128x128x64");
  // Neither suffix: the name does not say which library shipped it.
  d = kc::decodeKernelName("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x2x1_ffma_kernel");
  CHECK(d.library == "xmma");
  CHECK(cat(d) == "GEMM");
  CHECK(d.dtype == "fp32");
  // A100 cuBLAS kernel (legacy names): "stages_64x3" labels K-tile x stages.
  d = kc::decodeKernelName("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuBLAS");
  CHECK(d.arch == "ampere");
  CHECK(d.tile == "128x128x64");
  CHECK(d.stages == "3");
  CHECK(d.dtype == "bf16");
  CHECK(d.layout == "tn");
  CHECK(raw(d, "flags") == "ldg8 f2f");
  // CUTLASS 2.x kernel inside cuBLAS (also in tests/unit/test_kernel_names.cpp): MxN_KxStages.
  d = kc::decodeKernelName("_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "CUTLASS 2.x");
  CHECK(d.arch == "sm80");
  CHECK(d.tile == "256x128x8");
  CHECK(d.stages == "4");
  CHECK(d.layout == "nn");
  CHECK(raw(d, "opclass") == "simt");
  // CUTLASS profiler kernel name (rioyokotalab/cutlass, run.sh): no architecture token.
  d = kc::decodeKernelName("cutlass_tensorop_s16816gemm_f16_128x128_32x5_nt_align8");
  CHECK(d.library == "CUTLASS 2.x");
  CHECK(d.arch.empty());
  CHECK(d.tile == "128x128x32");
  CHECK(d.stages == "5");
  CHECK(d.dtype == "fp16");
  CHECK(raw(d, "dtype as written") == "f16");
  CHECK(raw(d, "accumulator") == "fp32");  // s16816gemm: s = fp32 accumulator
  CHECK(d.layout == "nt");
}

TEST_CASE("public: NCCL kernels") {
  // NCCL's generated device table (src/device/generate.py output, e.g. zy-uestc/yccl
  // nccl/build/obj/device/gensrc/device_table.cu): <coll>[_<redop>_<type>]_<ALGO>_<PROTO>.
  auto d = kc::decodeKernelName("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(cat(d) == "communication");
  CHECK(d.library == "NCCL");
  CHECK(d.kind == "AllReduce");
  CHECK(d.dtype == "fp32");
  CHECK(raw(d, "dtype as written") == "f32");
  CHECK(raw(d, "reduction op") == "Sum");
  CHECK(raw(d, "algorithm") == "RING");
  CHECK(raw(d, "protocol") == "LL");
  d = kc::decodeKernelName("ncclDevKernel_AllGather_RING_LL");
  CHECK(d.kind == "AllGather");
  CHECK(d.dtype.empty());
  d = kc::decodeKernelName("ncclDevFunc_AllReduce_MinMax_bf16_NVLS_TREE_SIMPLE");  // a device function, not a kernel
  CHECK(d.library.empty());
  d = kc::decodeKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
  CHECK(d.kind == "SendRecv");
}

TEST_CASE("public: flash-attention and Inductor names") {
  // flash-attention 2 as vendored in PyTorch (pytorch_flash namespace), kernel traits
  // Flash_fwd_kernel_traits<kHeadDim, kBlockM, kBlockN, kNWarps, ..., elem_type> (csrc/flash_attn/src).
  auto d = kc::decodeKernelName(
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
      "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, "
      "true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)");
  CHECK(cat(d) == "attention");
  CHECK(d.library == "flash-attention (PyTorch)");
  CHECK(d.kind == "flash_fwd_kernel");
  CHECK(d.tile == "128x64");
  CHECK(raw(d, "head dim") == "128");
  CHECK(d.dtype == "bf16");
  // Inductor kernel categories (torch/_inductor/wrapper_benchmark.py) and op lists.
  d = kc::decodeKernelName("triton_red_fused_add_native_layer_norm_sum_3");
  CHECK(cat(d) == "normalization");
  CHECK(d.kind == "reduction");
  CHECK(d.ops == std::vector<std::string>{"add", "native_layer_norm", "sum"});
  // RMSNorm as Inductor decomposes it (x * rsqrt(mean(x^2) + eps), with the casts): a normalization,
  // although no norm op is named; a mean without rsqrt stays a reduction.
  d = kc::decodeKernelName("triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0");
  CHECK(cat(d) == "normalization");
  CHECK(d.ops == std::vector<std::string>{"_to_copy", "add", "mean", "mul", "pow", "rsqrt"});
  d = kc::decodeKernelName("triton_per_fused_add_rsqrt_sub_var_mean_1");
  CHECK(cat(d) == "normalization");
  d = kc::decodeKernelName("triton_red_fused_mean_0");
  CHECK(cat(d) == "reduction");
  d = kc::decodeKernelName("triton_poi_fused_add_mean_mul_rsqrt_2");  // pointwise stays pointwise
  CHECK(cat(d) == "pointwise");
  d = kc::decodeKernelName("triton_per_fused__log_softmax_2");
  CHECK(cat(d) == "reduction");
  CHECK(d.ops == std::vector<std::string>{"_log_softmax"});
  d = kc::decodeKernelName("triton_tem_fused_addmm_relu_1");
  CHECK(cat(d) == "GEMM");
  CHECK(d.ops == std::vector<std::string>{"addmm", "relu"});
  d = kc::decodeKernelName("triton_poi_fused_0");  // descriptive names with no ATen origin
  CHECK(d.ops.empty());
  CHECK(d.fused.empty());
  d = kc::decodeKernelName("triton_poi_0");  // not the Inductor grammar (no counter after the kind)
  CHECK(d.grammar.empty());
}

TEST_CASE("public: cuBLAS GEMV kernels (matrix-vector products, e.g. a Linear layer on one token)") {
  // Mangled names compared against in a public CUDA-graph tool's source (bf16 GEMV kernels of cuBLAS).
  auto d = kc::decodeKernelName(
      "_Z17gemv2T_kernel_valIii13__nv_bfloat16S0_S0_fLi128ELi16ELi4ELi4ELb0ELb1E18cublasGemvParamsExIi30cublasGemv"
      "TensorStridedBatchedIKS0_ES4_S2_IS0_EfEEvT11_T4_S8_");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuBLAS");
  CHECK(d.grammar == "cublas-kernel");
  CHECK(d.kind == "gemv2T_kernel_val");
  CHECK(d.dtype == "bf16/fp32");
  CHECK(d.tile.empty());  // the numeric template arguments are not documented
  d = kc::decodeKernelName(
      "_ZN8internal5gemvx6kernelIii13__nv_bfloat16S2_S2_fLb0ELb1ELb1ELb0ELi7ELb0E18cublasGemvParamsExIi30cublasGemv"
      "TensorStridedBatchedIKS2_ES6_S4_IS2_EfEEENSt9enable_ifIXntT5_EvE4typeET11_");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuBLAS");
  CHECK(d.kind == "gemvx::kernel");
  CHECK(d.dtype == "bf16/fp32");
  CHECK(raw(d, "dtype as written") == "__nv_bfloat16/float");
  // fp32 GEMV (a public script's list of the kernels of a small Linear + ReLU model).
  d = kc::decodeKernelName(
      "_Z17gemv2T_kernel_valIiiffffLi128ELi16ELi4ELi4ELb0ELb1E18cublasGemvParamsExIi30cublasGemvTensorStridedBatched"
      "IKfES3_S1_IfEfEEvT11_T4_S7_");
  CHECK(d.kind == "gemv2T_kernel_val");
  CHECK(d.dtype == "fp32");
  // A user kernel that merely contains the word is not cuBLAS's.
  // fp32 GEMM with a long K, TF32 off (recorded on the H200 by examples/sweep.py, cuBLAS 13).
  d = kc::decodeKernelName("_Z18sgemm_largek_lds64ILb1ELb0ELi5ELi5ELi4ELi4ELi4ELi34EEvPfPKfS2_iiiiiiS2_S2_ffiiPiS3_");
  CHECK(d.grammar == "cublas-kernel");
  CHECK(d.category == kc::KernelCategory::kGemm);
  CHECK(d.kind == "sgemm_largek_lds64");
  CHECK(d.dtype == "fp32");
  d = kc::decodeKernelName("_Z11scal_kernelIffLi1ELb1ELi6ELi5ELi5ELi3EEv21cublasTransposeParamsIT0_EPKT_PS3_PKS1_");
  CHECK(d.grammar == "cublas-kernel");
  CHECK(d.category == kc::KernelCategory::kPointwise);
  CHECK(d.kind == "scal_kernel");
  CHECK(d.dtype == "fp32");
  d = kc::decodeKernelName("my_gemv2T_kernel_val(float*)");
  CHECK(d.library.empty());
}

TEST_CASE("public: ATen copy and cast kernels (a transpose made contiguous, a dtype cast)") {
  // Mangled names from public profiles (Triton tutorial output, nsys tables): the elementwise kernel's
  // lambda sits in direct_copy_kernel_cuda.
  auto d = kc::decodeKernelName(
      "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_cudaERNS_"
      "18TensorIteratorBaseEENKUlvE1_clEvENKUlvE10_clEvEUlN3c108BFloat16EE_EEvS4_RKT_EUliE_EEviT1_");
  CHECK(cat(d) == "copy/memset");
  CHECK(d.library == "ATen");
  CHECK(d.kind == "elementwise_kernel");
  CHECK(d.functor == "direct_copy_kernel_cuda");
  d = kc::decodeKernelName(
      "_ZN2at6native27unrolled_elementwise_kernelIZZZNS0_23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE1_"
      "clEvENKUlvE5_clEvEUlfE_NS_6detail5ArrayIPcLi2EEE23TrivialOffsetCalculatorILi1EjESC_NS0_6memory12LoadWithCast"
      "ILi1EEENSD_13StoreWithCastILi1EEEEEviT_T0_T1_T2_T3_T4_");
  CHECK(cat(d) == "copy/memset");
  CHECK(d.functor == "direct_copy_kernel_cuda");
  // GELU stays pointwise (its lambda is not a copy).
  d = kc::decodeKernelName(
      "_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_"
      "8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_");
  CHECK(cat(d) == "pointwise");
}

TEST_CASE("public: PyTorch memory-efficient attention (SDPA's EFFICIENT backend)") {
  // Demangled form printed by torch.profiler in a public write-up on SDPA backends.
  auto d = kc::decodeKernelName(
      "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, "
      "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)");
  CHECK(cat(d) == "attention");
  CHECK(d.library == "memory-efficient attention (PyTorch)");
  CHECK(d.kind == "forward");
  CHECK(d.dtype == "bf16");
  CHECK(d.tile == "64x64");
  CHECK(d.arch == "sm80");
  CHECK(raw(d, "flags") == "aligned rf");
  // Backward kernel with a head-dim token (public notes comparing SDPA backends).
  d = kc::decodeKernelName("fmha_cutlassB_bf16_aligned_128x128_k128_sm80");
  CHECK(d.kind == "backward");
  CHECK(d.tile == "128x128");
  CHECK(raw(d, "flags") == "aligned k128");
  // cuDNN's SDPA kernel (same notes): library cuDNN, category attention.
  d = kc::decodeKernelName("cudnn_generated_fort_native_sdpa_sm80_knob_6_64x64x64_4x1x1_kernel0_0");
  CHECK(cat(d) == "attention");
  CHECK(d.library == "cuDNN");
}

TEST_CASE("public: fp16 and fp32 nvjet variants") {
  // fp16 GEMMs on an H100 (public kernel tables): the variant token differs from bf16's "tst".
  auto d = kc::decodeKernelName("nvjet_sm90_hsh_320x128_64x3_1x2_h_bz_coopB_TNT");
  CHECK(cat(d) == "GEMM");
  CHECK(raw(d, "variant") == "hsh");
  CHECK(d.tile == "320x128");
  CHECK(d.cluster == "1x2");
  CHECK(d.layout == "TNT");
  d = kc::decodeKernelName("nvjet_sm90_hsh_384x8_64x4_2x1_v_bz_NNT");
  CHECK(d.tile == "384x8");
  CHECK(d.layout == "NNT");
  // bf16 inputs with another output variant, split-K (public kernel filter of an MoE router GEMM).
  d = kc::decodeKernelName("nvjet_sm90_tss_64x8_64x16_4x1_v_bz_splitK_TNT");
  CHECK(raw(d, "variant") == "tss");
  CHECK(d.tile == "64x8");
  CHECK(raw(d, "flags") == "bz splitK");
}

TEST_CASE("Inductor fused-op splitting: ascending order and the multi-word list decide, or nothing") {
  CHECK(kc::splitInductorFusedOps("_unsafe_view_gelu_mul") ==
        std::vector<std::string>{"_unsafe_view", "gelu", "mul"});
  CHECK(kc::splitInductorFusedOps("add_mul") == std::vector<std::string>{"add", "mul"});
  CHECK(kc::splitInductorFusedOps("_to_copy_add_mean_mul_pow_rsqrt") ==
        std::vector<std::string>{"_to_copy", "add", "mean", "mul", "pow", "rsqrt"});
  CHECK(kc::splitInductorFusedOps("add__mul") == std::vector<std::string>{"add_", "mul"});  // in-place add_
  // Not ascending as single words and "mul_add" is no ATen op: no split qualifies, nothing is guessed.
  CHECK(kc::splitInductorFusedOps("mul_add").empty());
  CHECK(kc::splitInductorFusedOps("").empty());
}

TEST_CASE("JSON form of decoded fields") {
  auto j = kc::decodedJson(kc::decodeKernelName("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"));
  CHECK(j["category"] == "GEMM");
  CHECK(j["tile"] == "256x128");
  CHECK(j["stages"].is_null());
  CHECK(j["raw"]["h/v"] == "h");
  CHECK(j["ops"].is_array());
  j = kc::decodedJson(kc::decodeKernelName("triton_poi_fused__unsafe_view_gelu_mul_0"));
  CHECK(j["ops"] == nlohmann::json::array({"_unsafe_view", "gelu", "mul"}));
  CHECK(j["fused"] == "_unsafe_view_gelu_mul");
}

// ---- The three layers per range (tools/verdict.h, layerVerdict).
#include <map>

#include "tests/support/verdict_inputs.h"
#include "tools/kernels_output.h"
#include "tools/loaded_log.h"
#include "tools/summary_output.h"
#include "tools/verdict.h"

namespace {
/// The source tree's root: KC_SOURCE_DIR from CMake (__FILE__ is relative when ccache rewrites paths
/// under CCACHE_BASEDIR).
std::string sourceRoot() { return KC_SOURCE_DIR; }
}  // namespace

using kc::test::kernelRange;

TEST_CASE("layer verdict: which layer dominates, by the documented rule") {
  // 1 instance: 40 µs of launch calls for 6 µs of GPU work, 50 µs in the range.
  CHECK(kc::layerVerdict(kernelRange(1, 50000, 40000, 6000, 10, 10)) ==
        "launch-bound: 40.0 µs of launch calls for 6.00 µs of GPU work");
  // Per instance: 2 instances, the text divides by 2; the comparison does not depend on it.
  CHECK(kc::layerVerdict(kernelRange(2, 100000, 10000, 30000, 4, 4)) ==
        "CPU-bound: 50.0 µs in the range for 15.0 µs of GPU work (5.00 µs in launch calls) per instance");
  CHECK(kc::layerVerdict(kernelRange(1, 30000, 10000, 30000, 1, 1)) ==
        "GPU-bound: 30.0 µs of GPU work in 30.0 µs of range time");
  CHECK(kc::layerVerdict(kernelRange(1, 30000, 30000, 29999, 1, 1)).starts_with("launch-bound"));
  CHECK(kc::layerVerdict(kernelRange(3, 3000, 0, 0, 0, 0)) == "no GPU work: 1.00 µs in the range per instance");
  // Launch calls outlast the kernels but take under half of the range (25.5 ms in the range, 2.18 ms in
  // launch calls, 4.70 µs of GPU work, the warm-up range of tests/data/graphs.kcount): CPU-bound, and with
  // 4.66 ms per launch outside launch calls in a range that ran once, said to be first-call work.
  CHECK(kc::layerVerdict(kernelRange(1, 25500000, 2180000, 4700, 5, 5)) ==
        "CPU-bound: 25.5 ms in the range for 4.70 µs of GPU work (2.18 ms in launch calls); 4.66 ms per launch "
        "outside launch calls: ran once, most likely first-call work (compilation, autotuning, library or plan "
        "setup), not launch overhead");
  // The same per instance in a range that ran 10 times: first-call work or something else on the host.
  CHECK(kc::layerVerdict(kernelRange(10, 255000000, 21800000, 47000, 50, 50)) ==
        "CPU-bound: 25.5 ms in the range for 4.70 µs of GPU work (2.18 ms in launch calls) per instance; 4.66 ms "
        "per launch outside launch calls: first-call work, host work or waits, not launch overhead");
  // Under 1 ms per launch outside launch calls (eager dispatch): no note.
  CHECK(kc::layerVerdict(kernelRange(1, 900000, 100000, 50000, 1, 1)) ==
        "CPU-bound: 900 µs in the range for 50.0 µs of GPU work (100 µs in launch calls)");
  CHECK(kc::layerVerdict(kernelRange(1, 1100000, 100000, 50000, 1, 1)).find("first-call work") != std::string::npos);
  // One launch call of 4.17 ms (a first call loading its module): launch-bound, and said to be setup.
  CHECK(kc::layerVerdict(kernelRange(1, 4200000, 4170000, 6590, 1, 1)) ==
        "launch-bound: 4.17 ms of launch calls (4.17 ms per launch call: first-call setup such as loading the "
        "kernel's module, not the launch rate) for 6.59 µs of GPU work");
  CHECK(kc::layerVerdict(kernelRange(1, 50000, 40000, 6000, 10, 10)).find("first-call") ==
        std::string::npos);  // 4 µs each
  // Exactly half: launch-bound; just under half: CPU-bound.
  CHECK(kc::layerVerdict(kernelRange(1, 20000, 10000, 5000, 1, 1)).starts_with("launch-bound"));
  CHECK(kc::layerVerdict(kernelRange(1, 20002, 10000, 5000, 1, 1)).starts_with("CPU-bound"));
  CHECK(kc::layerVerdict(kernelRange(0, 0, 5000, 5000, 1, 1)).empty());
}

TEST_CASE("layer verdict with a sampled launch CPU (KCOUNT_LAUNCH_TIMING): estimated, capped, or not used") {
  // One launch whose call happened to be timed, counted 16 times (80 µs) in a range of 30 µs: too few
  // launches for the estimate; no launch-bound verdict from it.
  CHECK(kc::layerVerdict(kernelRange(1, 30000, 80000, 10000, 1, 1, 16)) ==
        "CPU-bound: 30.0 µs in the range for 10.0 µs of GPU work (launch CPU not estimated: 1 launch, 1 in 16 timed)");
  // The same range whose call was not timed: the same verdict (it no longer depends on the draw).
  CHECK(kc::layerVerdict(kernelRange(1, 30000, 0, 10000, 1, 1, 16)) ==
        kc::layerVerdict(kernelRange(1, 30000, 80000, 10000, 1, 1, 16)));
  // Enough launches (8 x 16): the estimate is used, and said to be one.
  CHECK(kc::layerVerdict(kernelRange(1, 1000000, 800000, 100000, 128, 128, 16)) ==
        "launch-bound: 800 µs of launch calls (estimated from 1 in 16 calls) for 100 µs of GPU work");
  CHECK(kc::layerVerdict(kernelRange(1, 1000000, 300000, 100000, 128, 128, 16)) ==
        "CPU-bound: 1.00 ms in the range for 100 µs of GPU work (300 µs in launch calls, estimated from 1 in 16 calls)");
  // An estimate above the range's own time is capped at it.
  CHECK(kc::layerVerdict(kernelRange(1, 1000000, 5000000, 100000, 128, 128, 16)) ==
        "launch-bound: 1.00 ms of launch calls (estimated from 1 in 16 calls) for 100 µs of GPU work");
  // GPU-bound needs no launch CPU: the same with or without sampling.
  CHECK(kc::layerVerdict(kernelRange(1, 30000, 80000, 50000, 1, 1, 16)) ==
        kc::layerVerdict(kernelRange(1, 30000, 80000, 50000, 1, 1)));
  // Sample 1 (every call timed): as before, no cap.
  CHECK(kc::layerVerdict(kernelRange(1, 30000, 80000, 10000, 1, 1, 1)).starts_with("launch-bound: 80.0 µs"));
}

TEST_CASE("layers on the shipped GeGLU eager log: GEMM and other GPU time, verdicts") {
  const kc::LoadedLog l = kc::loadLog(sourceRoot() + "/examples/logs/geglu-eager.kcount");
  const auto j = kc::summaryJson(l);
  std::map<std::string, nlohmann::json> by_path;
  for (const auto& r : j["ranges"]) by_path[r["path"].get<std::string>()] = r;
  const auto& step = by_path.at("step");
  // gate, up and down are nvjet GEMMs; act's GELU and mul are not.
  CHECK(step["gemm_gpu_ns"].get<uint64_t>() + step["other_gpu_ns"].get<uint64_t>() ==
        step["inclusive"]["gpu_ns"].get<uint64_t>());
  CHECK(step["other_gpu_ns"] == by_path.at("step/act")["inclusive"]["gpu_ns"]);
  CHECK(by_path.at("step/act")["gemm_gpu_ns"] == 0);
  CHECK(by_path.at("step/gate")["other_gpu_ns"] == 0);
  CHECK(step["kernels_per_launch"] == 1.0);
  CHECK(step["verdict"].get<std::string>().starts_with("GPU-bound"));
  // The first eager act (warm-up) spends more in launch calls (1.04 ms) than its kernels run (123 µs), but
  // most of its 8.05 ms elsewhere (first-call setup): CPU-bound, not launch-bound.
  CHECK(by_path.at("warmup/step/act")["verdict"].get<std::string>().starts_with("CPU-bound"));
  CHECK(by_path.at("(no range)")["verdict"].is_null());
  CHECK(step["layers"]["innermost"]["gemm_gpu_ns"] == 0);  // step itself launches nothing
}

// ---- kcount diff on the shipped GeGLU logs (eager vs torch.compile).
#include "tools/diff.h"

TEST_CASE("diff verdict on the shipped GeGLU logs: GEMMs identical, 2 pointwise kernels became 1") {
  const std::vector<kc::LoadedLog> a{kc::loadLog(sourceRoot() + "/examples/logs/geglu-eager.kcount")};
  const std::vector<kc::LoadedLog> b{kc::loadLog(sourceRoot() + "/examples/logs/geglu-compiled.kcount")};
  const auto j = kc::diffJson(a, b);
  std::map<std::string, std::vector<std::string>> verdicts;
  for (const auto& v : j["verdicts"]) verdicts[v["unit"]] = v["lines"].get<std::vector<std::string>>();
  REQUIRE(verdicts.count("step"));
  const auto& all_lines = verdicts["step"];
  // The regrouping first, as in the text (eager gate, up, act, down ran as compiled mlp), then its kernels.
  REQUIRE(all_lines.size() > 3);
  CHECK(all_lines[0] == "gate, up, act, down (5 kernels per step) in A ran as mlp (4 kernels per step) in B");
  CHECK(all_lines[1] == "A: 3 GEMM + MulFunctor + GeluCUDAKernelImpl");
  CHECK(all_lines[2] == "B: 3 GEMM + triton_poi_fused__unsafe_view_gelu_mul_0");
  const std::vector<std::string> step(all_lines.begin() + 3, all_lines.end());
  // Distinct GEMM names (gate and up share one) and GEMM kernels per step.
  CHECK(step[0] == "GEMM kernels identical: 2 of 2 distinct names equal; GEMM kernels 3 per step in A, 3 in B");
  CHECK(step[1].starts_with("pointwise: 2 kernels in A became 1 fused Triton kernel in B (kernels that differ run 2 "
                            "per step in A, 1 in B; "));
  // The Triton kernel's name is shown whole, so its fused ops are not listed again.
  CHECK(step[1].ends_with("B: triton_poi_fused__unsafe_view_gelu_mul_0)"));
  // The whole run says the same about the GEMMs and the fusion.
  REQUIRE(verdicts.count("(overall)"));
  CHECK(verdicts["(overall)"][0].starts_with("GEMM kernels identical: 2 of 2 distinct names equal"));
  bool fused = false;
  for (const auto& line : verdicts["(overall)"]) fused |= line.starts_with("pointwise: 2 kernels in A became 1 fused");
  CHECK(fused);
  // Ranges matched by path: step is in both; its children differ and that is reported.
  bool step_row = false;
  for (const auto& r : j["ranges"])
    if (r["path"] == "step") {
      step_row = true;
      CHECK(r["in"] == "both");
      CHECK(r["nesting_differs"] == true);
      CHECK(r["children_a"] == nlohmann::json::array({"act", "down", "gate", "up"}));
      CHECK(r["children_b"] == nlohmann::json::array({"mlp"}));
      CHECK(r["change"]["launches"] == -20);  // 5 -> 4 launches per step, 20 steps
      CHECK(r["change"]["kernels"] == -20);
    } else if (r["path"] == "step/mlp") {
      CHECK(r["in"] == "b");
    } else if (r["path"] == "step/act") {
      CHECK(r["in"] == "a");
    }
  CHECK(step_row);
  // Kernel identities: the two nvjet GEMMs are the same in both runs.
  int same_gemm = 0;
  for (const auto& k : j["kernels"]["same"]) same_gemm += k["category"] == "GEMM";
  CHECK(same_gemm == 2);
}

TEST_CASE("diff: a run against itself is identical everywhere") {
  const std::vector<kc::LoadedLog> a{kc::loadLog(sourceRoot() + "/examples/logs/geglu-eager.kcount")};
  const auto j = kc::diffJson(a, a);
  CHECK(j["kernels"]["only_a"].empty());
  CHECK(j["kernels"]["only_b"].empty());
  for (const auto& v : j["verdicts"])
    for (const auto& line : v["lines"]) {
      const std::string s = line;
      CHECK((s.find("identical") != std::string::npos || s.starts_with("launches")));
    }
}

// ---- Several logs: summary across logs, and diff with several logs per side.
#include "tools/multi_log.h"
#include "tools/kernel_names.h"

TEST_CASE("several logs: per-log values, total and spread per range") {
  CHECK(kc::spreadOf({3, 1, 2}).median == 2);
  CHECK(kc::spreadOf({4, 1, 3, 2}).median == 2.5);
  CHECK(kc::spreadOf({}).max == 0);
  // A value held at 2^64 - 1 stays exact in min and max; the mean of it and a plain value is not known.
  CHECK(kc::spreadOf({3000, UINT64_MAX}).max == UINT64_MAX);
  CHECK_FALSE(kc::spreadOf({3000, UINT64_MAX}).medianKnown());
  CHECK(kc::spreadOf({3000, UINT64_MAX, UINT64_MAX}).medianKnown());
  CHECK(kc::spreadOf({3000, UINT64_MAX, UINT64_MAX}).median_low == UINT64_MAX);
  const kc::LoadedLog eager = kc::loadLog(sourceRoot() + "/examples/logs/geglu-eager.kcount");
  const kc::LoadedLog compiled = kc::loadLog(sourceRoot() + "/examples/logs/geglu-compiled.kcount");
  const auto j = kc::acrossLogsJson({eager, eager, compiled});
  CHECK(j["logs"].size() == 3);
  CHECK(j["logs"][0] != j["logs"][1]);  // the same pid twice: labels made unique
  std::map<std::string, nlohmann::json> by_path;
  for (const auto& r : j["ranges"]) by_path[r["path"].get<std::string>()] = r;
  const auto& step = by_path.at("step");
  CHECK(step["in_logs"] == 3);
  CHECK(step["per_log"]["kernels"] == nlohmann::json::array({100, 100, 80}));
  CHECK(step["total"]["kernels"] == 280);
  CHECK(step["spread"]["kernels"]["min"] == 80.0);
  CHECK(step["spread"]["kernels"]["median"] == 100.0);
  CHECK(step["spread"]["kernels"]["max"] == 100.0);
  const auto& act = by_path.at("step/act");
  CHECK(act["in_logs"] == 2);
  CHECK(act["per_log"]["launches"][2].is_null());  // the compiled run has no act range
  CHECK(by_path.at("step/mlp")["in_logs"] == 1);
}

TEST_CASE("diff with two logs per side (ranks): counts add up, per-step verdicts do not change") {
  const kc::LoadedLog eager = kc::loadLog(sourceRoot() + "/examples/logs/geglu-eager.kcount");
  const kc::LoadedLog compiled = kc::loadLog(sourceRoot() + "/examples/logs/geglu-compiled.kcount");
  const auto j = kc::diffJson({eager, eager}, {compiled, compiled});
  CHECK(j["overall"]["a"]["kernels"] == 2 * eager.summary.kernels);
  for (const auto& v : j["verdicts"])
    if (v["unit"] == "step")
      CHECK(v["lines"][3] == "GEMM kernels identical: 2 of 2 distinct names equal; GEMM kernels 3 per step in A, 3 in B");
}

TEST_CASE("shipped sweep logs: every nvjet kernel's decoded dtype is its range's dtype") {
  // The evidence for reading the nvjet variant (tools/kernel_decode.cpp): the sweep's ranges name the dtype
  // the program used (dtype=bf16, dtype=fp16, ...); the decoded dtype must agree with it for every nvjet
  // kernel that carries one, and the two variants seen must both occur.
  size_t bf16 = 0, f16 = 0;
  for (const char* file : {"/examples/logs/sweep-eager.kcount", "/examples/logs/sweep-compiled.kcount"}) {
    const kc::LoadedLog l = kc::loadLog(sourceRoot() + file);
    const auto j = kc::kernelsJson({l});
    for (const auto& k : j["kernels"]) {
      const auto& dec = k["decoded"];
      if (dec["grammar"] != "nvjet" || dec["dtype"].is_null()) continue;
      const std::string dt = dec["dtype"].get<std::string>();
      for (const auto& [path, n] : k["ranges"].items()) {  // one log: the kernel's ranges directly
        const std::string want = "dtype=" + dt;
        const std::string what = path + " has an nvjet kernel decoded as " + dt;
        CHECK_MESSAGE(path.find(want) != std::string::npos, what);
        (dt == "bf16" ? bf16 : f16) += n.get<size_t>();
      }
    }
  }
  CHECK(bf16 == 1247);
  CHECK(f16 == 1040);
}

TEST_CASE("shipped sweep logs: every xmma and CUTLASS 2.x GEMM's decoded dtype is its range's dtype") {
  // The evidence for the xmma reading (the second type group's first type) and for the CUTLASS tensor-op
  // fp32 rule (tf32): in examples/sweep.py's logs the ranges name the dtype (dtype=fp32: TF32 off,
  // dtype=tf32: TF32 allowed); every such kernel's decoded dtype must match, and both must occur.
  std::map<std::string, size_t> seen;  // "grammar dtype" -> launches
  for (const char* file : {"/examples/logs/sweep-eager.kcount", "/examples/logs/sweep-compiled.kcount"}) {
    const kc::LoadedLog l = kc::loadLog(sourceRoot() + file);
    const auto j = kc::kernelsJson({l});
    for (const auto& k : j["kernels"]) {
      const auto& dec = k["decoded"];
      if (dec["grammar"] != "xmma" && dec["grammar"] != "cutlass2x") continue;
      REQUIRE(dec["dtype"].is_string());
      const std::string dt = dec["dtype"].get<std::string>();
      for (const auto& [path, n] : k["ranges"].items()) {
        const std::string what = path + " has a " + dec["grammar"].get<std::string>() + " kernel decoded as " + dt;
        CHECK_MESSAGE(path.find("dtype=" + dt + " ") != std::string::npos, what);
        seen[dec["grammar"].get<std::string>() + " " + dt] += n.get<size_t>();
      }
    }
  }
  CHECK(seen["xmma tf32"] > 0);
  CHECK(seen["xmma fp32"] > 0);
  CHECK(seen["cutlass2x tf32"] > 0);  // cutlass_80_tensorop_s1688gemm_...
  CHECK(seen["cutlass2x fp32"] > 0);  // cutlass_80_simt_sgemm_...
}

TEST_CASE("shipped: CUTLASS 2.x kernels inside cuBLAS, fp32 on TF32 tensor cores and on FMA units") {
  // Recorded on the H200 by examples/sweep.py (dtype=tf32 ranges): s = fp32 accumulator, 1688 = the 16x8x8
  // MMA, no "_<A type>" after the core: A is the accumulator's type, fp32; on tensor cores that is TF32
  // (NVIDIA/cutlass issues #466, #610).
  auto d = kc::decodeKernelName("_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4EEvNT_6ParamsE");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "CUTLASS 2.x");
  CHECK(d.arch == "sm80");
  CHECK(d.kind == "s1688gemm");
  CHECK(d.tile == "64x64x32");
  CHECK(d.stages == "6");
  CHECK(d.layout == "tn");
  CHECK(d.dtype == "tf32");
  CHECK(raw(d, "A") == "fp32");
  CHECK(raw(d, "accumulator") == "fp32");
  CHECK(raw(d, "dtype as written") == "<absent>");  // the name writes no type word
  // dtype=fp32 ranges (TF32 off): the SIMT sgemm runs in fp32.
  d = kc::decodeKernelName("_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x64_8x5_tn_align1EEvNT_6ParamsE");
  CHECK(d.dtype == "fp32");
  CHECK(d.tile == "128x64x8");
  CHECK(d.stages == "5");
}

TEST_CASE("public: CUTLASS 2.x element types from the core name") {
  // NVIDIA/cutlass issue #999 (profiler names): the intermediate type between the shape and "gemm" is the
  // MMA's type (fp32 operands run as TF32); "tf32_" before the core is C's type, "_tf32" after it A's.
  auto d = kc::decodeKernelName("cutlass_tensorop_s1688tf32gemm_256x128_16x3_nn_align4");
  CHECK(d.dtype == "tf32");
  CHECK(raw(d, "A") == "fp32");
  d = kc::decodeKernelName("cutlass_tensorop_tf32_s1688gemm_tf32_256x128_16x3_nn_align4");
  CHECK(d.dtype == "tf32");
  CHECK(raw(d, "A") == "tf32");
  CHECK(raw(d, "C type") == "tf32");
  CHECK(d.tile == "256x128x16");
  // NVIDIA/cutlass issue #1025 (a maintainer confirms the reading): fp16 C and A, fp32 accumulation, ReLU.
  d = kc::decodeKernelName("cutlass_80_tensorop_f16_s16816gemm_relu_f16_128x128_32x4_tn_align8");
  CHECK(d.dtype == "fp16");
  CHECK(raw(d, "dtype as written") == "f16");
  CHECK(raw(d, "accumulator") == "fp32");
  CHECK(raw(d, "C type") == "f16");
  CHECK(d.epilogue == "relu");
  // A cuBLASLt kernel in a public benchmark table: h = fp16 accumulator, so A (not written) is fp16 too.
  d = kc::decodeKernelName("cutlass_80_tensorop_h16816gemm_128x256_32x3_tn_align2");
  CHECK(d.dtype == "fp16");
  CHECK(raw(d, "accumulator") == "fp16");
  CHECK(d.tile == "128x256x32");
}

TEST_CASE("shipped: cuBLAS xmma names, labelled stages and the type groups") {
  // Recorded on the H200 by examples/sweep.py: TF32 GEMMs (dtype=tf32 ranges) and fp32 FMA GEMMs
  // (dtype=fp32 ranges, "stage3" labels the pipeline stages).
  auto d = kc::decodeKernelName(
      "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
      "5x_cublas");
  CHECK(d.dtype == "tf32");
  CHECK(raw(d, "types") == "f32f32_tf32f32_f32");
  CHECK(d.tile == "128x128x32");
  d = kc::decodeKernelName(
      "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_"
      "kernel__5x_cublas");
  CHECK(d.dtype == "fp32");
  CHECK(d.stages == "3");
  CHECK(d.tile == "128x128x8");
  CHECK(raw(d, "warpsize") == "2x2x1");
  CHECK(raw(d, "flags") == "ffma_aligna4_alignc4_execute_kernel__5x_cublas");
}

TEST_CASE("shipped: cuBLASLt split-K reduction and epilogue kernels") {
  // Recorded on the H200 by examples/sweep.py (bf16, fp16 and fp32 split-K GEMMs; the epilogue kernel in
  // fp32 Linear ranges).
  auto d = kc::decodeKernelName(
      "_ZN8cublasLt19splitKreduce_kernelILi32ELi16Eif13__nv_bfloat16fS1_Lb0EfS1_S1_Lb1ELb0ELb0ELb0EEEvNS_18cublasSplitK"
      "ParamsIT4_EEPKT2_PKT8_PT7_PT3_PKS3_SG_PKT9_S7_PSH_PvlPS3_PiSM_SM_SG_SG_SG_SG_SG_");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuBLAS");
  CHECK(d.grammar == "cublas-kernel");
  CHECK(d.kind == "split-K reduction");
  CHECK(raw(d, "function") == "splitKreduce_kernel");
  CHECK(d.dtype == "fp32/bf16");  // the element types among the template arguments, in written order
  CHECK(raw(d, "dtype as written") == "float/__nv_bfloat16");
  d = kc::decodeKernelName(
      "_ZN8cublasLt19splitKreduce_kernelILi32ELi16Eif6__halffS1_Lb0EfS1_S1_Lb1ELb0ELb0ELb0EEEvNS_18cublasSplitKParams"
      "IT4_EEPKT2_PKT8_PT7_PT3_PKS3_SG_PKT9_S7_PSH_PvlPS3_PiSM_SM_SG_SG_SG_SG_SG_");
  CHECK(d.kind == "split-K reduction");
  CHECK(d.dtype == "fp32/fp16");
  d = kc::decodeKernelName(
      "_ZN8cublasLt8epilogue4impl12globalKernelILi8ELi32EfffLb1ELb1ELi1EEEviilPT1_18cublasLtEpilogue_tiPT2_lPvlllPT3_"
      "lPi");
  CHECK(cat(d) == "GEMM");
  CHECK(d.library == "cuBLAS");
  CHECK(d.kind == "epilogue");
  CHECK(raw(d, "function") == "cublasLt::epilogue::impl::globalKernel");
  CHECK(d.dtype == "fp32");
  // Another function in the namespace is a cuBLAS helper, not read further.
  d = kc::decodeKernelName("cublasLt::other_kernel<float>(int)");
  CHECK(d.grammar == "cublas-namespace");
  CHECK(d.kind.empty());
}

TEST_CASE("shipped: cuDNN's generated SDPA kernel") {
  // Recorded on the H200 by examples/sweep.py (scaled_dot_product_attention, dtype=bf16 block ranges).
  auto d = kc::decodeKernelName(
      "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0");
  CHECK(cat(d) == "attention");
  CHECK(d.library == "cuDNN");
  CHECK(d.arch == "sm90");
  CHECK(d.kind == "fprop");
  CHECK(d.tile == "64x128x128");
  CHECK(d.cluster == "1x1x1");
  CHECK(raw(d, "shape2") == "4x1x1");
  CHECK(raw(d, "knob") == "7");
  CHECK(raw(d, "type") == "f16");
  CHECK(d.dtype.empty());  // "f16" ran in bf16 ranges: it does not say fp16
  CHECK(raw(d, "flags") == "fort native sdpa flash wgmma kernel0 0");
  // The sm80 form (public notes): no direction, cluster or type token.
  d = kc::decodeKernelName("cudnn_generated_fort_native_sdpa_sm80_knob_6_64x64x64_4x1x1_kernel0_0");
  CHECK(d.arch == "sm80");
  CHECK(d.kind.empty());
  CHECK(d.cluster.empty());
  CHECK(d.tile == "64x64x64");
}

TEST_CASE("dtype vocabulary: every grammar writes the same words") {
  // Names from the shipped logs and the public names above, each grammar spelling fp16 its own way.
  CHECK(kc::decodeKernelName("nvjet_sm90_hsh_128x128_64x6_2x1_v_bz_TNT").dtype == "fp16");
  auto d = kc::decodeKernelName(
      "void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_64x128x64_1x2x1_0_ntn_"
      "align8_warpspecialized_epi_nosmem>(cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_64x128x64_1x2x1_0_"
      "ntn_align8_warpspecialized_epi_nosmem::Params)");
  CHECK(d.dtype == "fp16");
  CHECK(raw(d, "types (A_B_acc_C_D)") == "f16_f16_f32_f16_f16");
  d = kc::decodeKernelName(
      "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c104HalfES4_S4_NS0_15binary_"
      "internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_");
  CHECK(d.dtype == "fp16");  // ATen: c10::Half, the tensors' type (MulFunctor<float> computes in float)
  CHECK(kc::decodeKernelName(
            "_ZN8cublasLt19splitKreduce_kernelILi32ELi16Eif6__halffS1_Lb0EfS1_S1_Lb1ELb0ELb0ELb0EEEvNS_18cublasSplitK"
            "ParamsIT4_EEPKT2_PKT8_PT7_PT3_PKS3_SG_PKT9_S7_PSH_PvlPS3_PiSM_SM_SG_SG_SG_SG_SG_")
            .dtype == "fp32/fp16");
  CHECK(kc::decodeKernelName("cutlass_80_tensorop_h16816gemm_128x256_32x3_tn_align2").dtype == "fp16");
}

// ---- ATen element types (docs/kernel-names.md, "ATen"): names of the shipped logs, dumped with
// `kcount kernels --format json` (the logs store them mangled).

namespace {

/// decodeKernelName(name).dtype ("" when the name writes no element type).
std::string atenDtype(const std::string& name) { return kc::decodeKernelName(name).dtype; }

}  // namespace

TEST_CASE("shipped: ATen kernels' dtype from their template arguments") {
  // BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, MulFunctor<float>>: bf16 tensors, float compute.
  auto d = kc::decodeKernelName(
      "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c108BFloat16ES4_S4_NS0_15binary_"
      "internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_");
  CHECK(d.dtype == "bf16");
  CHECK(raw(d, "dtype as written") == "c10::BFloat16");
  CHECK(raw(d, "compute type") == "fp32");
  // The fp16 and fp32 multiplies of the sweep log.
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c104HalfES4_S4_NS0_15binary_"
                  "internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_") == "fp16");
  d = kc::decodeKernelName("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfffNS0_15binary_"
                           "internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_");
  CHECK(d.dtype == "fp32");
  CHECK(raw(d, "dtype as written") == "float");
  CHECK(raw(d, "compute type") == "<absent>");
  // GELU: the lambda's parameter; GeluCUDAKernelImpl's own parameters (TensorIteratorBase&, GeluType) are not types.
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBase"
                  "ENS0_8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_") == "bf16");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBase"
                  "ENS0_8GeluTypeEENKUlvE0_clEvENKUlvE1_clEvEUlN3c104HalfEE_St5arrayIPcLm2EEEEviT0_T1_") == "fp16");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBase"
                  "ENS0_8GeluTypeEENKUlvE0_clEvENKUlvE0_clEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_") == "fp32");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_62_GLOBAL__N__7d4ed096_23_ActivationSiluKernel_"
                  "cu_751192d7_1559511silu_kernelERNS_18TensorIteratorBaseEENKUlvE_clEvENKUlvE4_clEvEUlN3c108BFloat16EE_"
                  "St5arrayIPcLm2EEEEviT0_T1_") == "bf16");
  // Fill and add functors: their type argument (int is int32, long is int64_t).
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_") ==
        "int32");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_11FillFunctorIlEESt5arrayIPcLm1EEEEviT0_T1_") ==
        "int64");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_") ==
        "fp32");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_11FillFunctorIN3c108BFloat16EEESt5arrayIPcLm1EEEE"
                  "viT0_T1_") == "bf16");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5arrayIPcLm3"
                  "EEEEviT0_T1_") == "bf16");
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_21CUDAFunctorOnSelf_addIfEESt5arrayIPcLm2EEEEviT0_"
                  "T1_") == "fp32");
  // LayerNorm<T = BFloat16, T_ACC = float>: the kernel's first type argument; its parameters are not read.
  d = kc::decodeKernelName("_ZN2at6native53_GLOBAL__N__21739cd4_20_layer_norm_kernel_cu_9c5ada8a28vectorized_layer_norm_"
                           "kernelIN3c108BFloat16EfLb0EEEviT0_PKT_S8_S8_PS5_S9_PS6_");
  CHECK(cat(d) == "normalization");
  CHECK(d.dtype == "bf16");
  // torch.randn into bf16: the kernel's first argument is the float it computes in; normal_and_transform<BFloat16, ...>.
  CHECK(atenDtype("_ZN2at6native54_GLOBAL__N__d8ceb000_21_DistributionNormal_cu_0c5b6e8543distribution_elementwise_grid_"
                  "stride_kernelIfLi4EZNS0_9templates4cuda20normal_and_transformIN3c108BFloat16EfPNS_17CUDAGeneratorImplEZ"
                  "ZZNS4_13normal_kernelIS9_EEvRKNS_10TensorBaseEddT_ENKUlvE_clEvENKUlvE2_clEvEUlfE_EEvRNS_18TensorIterator"
                  "BaseET1_T2_EUlP24curandStatePhilox4_32_10E0_ZNS1_27distribution_nullary_kernelIS7_f6float4S9_SO_SH_EEvSJ_"
                  "SL_RKT3_T4_EUlifE_EEvlNS_15PhiloxCudaStateESK_SL_") == "bf16");
  // A cast's lambda takes the source type (float); the function's name says the destination.
  CHECK(atenDtype("_ZN2at6native29vectorized_elementwise_kernelILi8EZNS0_25bfloat16_copy_kernel_cudaERNS_18TensorIterator"
                  "BaseEEUlfE_St5arrayIPcLm2EEEEviT0_T1_") == "fp32");
  // gpu_kernel_impl_nocast's index lambda {lambda(int)#1} is not read: the copy's lambda gives bf16.
  CHECK(atenDtype("_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_"
                  "cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE10_clEvEUlN3c108BFloat16EE_EEvS4_RKT_EUliE_EEviT1_") ==
        "bf16");
}

TEST_CASE("ATen dtype: the rule's edges (demangled names as the demangler writes them)") {
  // Index lambdas and lambdas taking pointers are not read; a name without element types has no dtype.
  CHECK(atenDtype("void at::native::index_elementwise_kernel<128, 4, at::native::gpu_index_kernel<at::native::index_"
                  "kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
                  "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, "
                  "c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> "
                  ">(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, "
                  "long)#1} const&, bool)::{lambda(int)#1}>(long, at::native::gpu_index_kernel<at::native::index_kernel_"
                  "impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, c10::ArrayRef<long>, "
                  "c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, "
                  "c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> "
                  ">(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, "
                  "long)#1} const&, bool)::{lambda(int)#1})")
            .empty());
  // Two storage types, float not among them: the first written. float4 is not float; unsigned int is one type.
  CHECK(atenDtype("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<int, int, bool, "
                  "at::native::CompareEqFunctor<int> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<int, "
                  "int, bool, at::native::CompareEqFunctor<int> >, std::array<char*, 3ul>)") == "int32");
  CHECK(atenDtype("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
                  "at::native::func_wrapper_t<float, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>"
                  "::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::BFloat16, 4> >("
                  "at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, at::native::sum_functor<"
                  "c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, "
                  "unsigned int, c10::BFloat16, 4>)") == "bf16");
  CHECK(atenDtype("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<unsigned char>, "
                  "std::array<char*, 1ul> >(int, at::native::FillFunctor<unsigned char>, std::array<char*, 1ul>)") ==
        "uint8");
  CHECK(atenDtype("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::complex<float> >, "
                  "std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::complex<float> >, std::array<char*, 1ul>)") ==
        "complex64");
  CHECK(atenDtype("void at::native::vectorized_elementwise_kernel<16, at::native::FillFunctor<c10::Float8_e4m3fn>, "
                  "std::array<char*, 1ul> >(int, at::native::FillFunctor<c10::Float8_e4m3fn>, std::array<char*, 1ul>)") ==
        "fp8_e4m3");
  CHECK(atenDtype("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"
                  "at::native::foo_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#1}>("
                  "at::TensorIteratorBase&, at::native::foo_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() "
                  "const::{lambda()#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<...>)")
            .empty());
}

TEST_CASE("shipped: ATen kernels that differ only by element type differ in the dtype column") {
  // The sweep's fp16 and bf16 multiplies have one short name; dtype tells them apart (before: both '-').
  const std::string half = "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c104HalfES4_S4_NS0_15"
                           "binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_";
  const std::string bf16 = "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_13BinaryFunctorIN3c108BFloat16ES4_S4_NS0"
                           "_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_";
  const auto a = kc::decodeKernelName(half), b = kc::decodeKernelName(bf16);
  CHECK(a.short_name == b.short_name);
  CHECK(a.dtype != b.dtype);
  // Every ATen kernel of the shipped logs: no two rows of one log show the same short name and dtype, and
  // each float16/bfloat16 sweep range's pointwise kernels carry that range's dtype or fp32 (casts' source).
  for (const char* file : {"/examples/logs/sweep-eager.kcount", "/examples/logs/sweep-compiled.kcount",
                           "/examples/logs/geglu-eager.kcount", "/examples/logs/geglu-compiled.kcount",
                           "/examples/logs/linear-eager.kcount", "/tests/data/graphs.kcount"}) {
    const kc::LoadedLog l = kc::loadLog(sourceRoot() + file);
    std::map<std::string, std::string> shown;  // short name + dtype -> name
    size_t aten = 0;
    const nlohmann::json j = kc::kernelsJson({l});
    for (const auto& k : j["kernels"]) {
      const auto& dec = k["decoded"];
      if (dec["grammar"] != "aten") continue;
      ++aten;
      CHECK_MESSAGE(dec["dtype"].is_string(), k["name"].get<std::string>());
      const std::string key = k["short"].get<std::string>() + " " + (dec["dtype"].is_string() ? dec["dtype"].get<std::string>() : "-");
      const auto [it, fresh] = shown.emplace(key, k["name"].get<std::string>());
      CHECK_MESSAGE(fresh, (std::string(file) + ": " + key + " shown for two kernels"));
      if (!dec["dtype"].is_string()) continue;
      const std::string dt = dec["dtype"].get<std::string>();
      for (const auto& [path, n] : k["ranges"].items())
        for (const char* want : {"bf16", "fp16"})
          if (path.find(std::string("dtype=") + want + " ") != std::string::npos)
            CHECK_MESSAGE((dt == want || dt == "fp32" || dt == "int32"), (path + ": " + k["short"].get<std::string>() + " " + dt));
    }
    CHECK(aten > 0);
  }
}

TEST_CASE("demangled ATen names decode as their mangled form") {
  // A log may store kernel names demangled; each shipped ATen name, demangled, must decode to the same
  // fields (category, functor, dtype, identity...) and show the same short name. Before: category "other".
  size_t n = 0;
  for (const char* file : {"/examples/logs/sweep-eager.kcount", "/examples/logs/sweep-compiled.kcount",
                           "/examples/logs/geglu-eager.kcount", "/tests/data/graphs.kcount"}) {
    const kc::LoadedLog l = kc::loadLog(sourceRoot() + file);
    const nlohmann::json j = kc::kernelsJson({l});
    for (const auto& k : j["kernels"]) {
      const std::string mangled = k["name"].get<std::string>();
      if (!mangled.starts_with("_Z")) continue;
      const std::string demangled = kc::demangleKernelName(mangled);
      REQUIRE(demangled != mangled);
      const auto a = kc::decodeKernelName(mangled), b = kc::decodeKernelName(demangled);
      CHECK_MESSAGE(kc::decodedJson(a) == kc::decodedJson(b), demangled);
      CHECK(a.short_name == b.short_name);
      CHECK(kc::shortKernelName(mangled) == kc::shortKernelName(demangled));
      if (a.grammar == "aten") ++n;
    }
  }
  CHECK(n >= 15);
  // The form from a demangled log, as the demangler writes it.
  const auto d = kc::decodeKernelName(
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> "
      ">(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)");
  CHECK(cat(d) == "copy/memset");
  CHECK(d.library == "ATen");
  CHECK(d.kind == "vectorized_elementwise_kernel");
  CHECK(d.functor == "FillFunctor");
  CHECK(d.dtype == "fp32");
  CHECK(d.short_name == "at::native::vectorized_elementwise_kernel<4, FillFunctor>");
  const auto m = kc::decodeKernelName("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_");
  CHECK(kc::decodedJson(m) == kc::decodedJson(d));
  // Plain names are not taken for demangled ones.
  CHECK_FALSE(kc::isDemangledFunctionName("triton_poi_fused_gelu_mul_0"));
  CHECK_FALSE(kc::isDemangledFunctionName("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_"));
  CHECK_FALSE(kc::isDemangledFunctionName("odd(name"));
}
