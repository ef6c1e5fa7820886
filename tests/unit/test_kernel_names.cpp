// Kernel name demangling and short names (names as recorded from PyTorch on real GPUs).
#include <doctest/doctest.h>

#include <string>

#include "tools/kernel_names.h"
#include "tools/run.h"

TEST_CASE("unmangled names stay as they are") {
  for (const char* n : {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT",
                        "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN", "triton_poi_fused_gelu_mul_0"}) {
    CHECK(kc::shortKernelName(n) == n);
    CHECK(kc::displayKernelName(n, true) == n);
  }
  // A long name without templates (a generated C kernel): cut like any short name, whole when full.
  const std::string long_c = "fused_" + std::string(400, 'x') + "_kernel";
  const std::string s = kc::shortKernelName(long_c);
  CHECK(s.starts_with("fused_xxx"));
  CHECK(s.ends_with("…"));
  CHECK(s.size() == kc::kMaxShortName - 1 + std::string("…").size());
  CHECK(kc::displayKernelName(long_c, true) == long_c);
  CHECK(kc::shortKernelNameUncut(long_c) == long_c);
}

TEST_CASE("ATen elementwise kernels show the functor") {
  CHECK(kc::shortKernelName("_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_18GeluCUDAKernelImplERNS_"
                            "18TensorIteratorBaseENS0_8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_NS_"
                            "6detail5ArrayIPcLi2EEEEEviT0_T1_") ==
        "at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>");
  CHECK(kc::shortKernelName("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13AUnaryFunctorIN3c104HalfES4_"
                            "S4_NS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm2EEEEviT0_T1_") ==
        "at::native::vectorized_elementwise_kernel<4, MulFunctor>");
  CHECK(kc::shortKernelName("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIN3c108BFloat16E"
                            "S4_S4_NS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_") ==
        "at::native::vectorized_elementwise_kernel<4, MulFunctor>");
  CHECK(kc::shortKernelName("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEENS_6detail5Arr"
                            "ayIPcLi1EEEEEviT0_T1_") == "at::native::vectorized_elementwise_kernel<4, FillFunctor>");
  CHECK(kc::shortKernelName("_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implINS0_22CUDAFunctorOn"
                            "Other_addIbEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_") ==
        "at::native::elementwise_kernel<128, 4, CUDAFunctorOnOther_add>");
}

TEST_CASE("other mangled kernels: qualified name and short template arguments") {
  CHECK(kc::shortKernelName("_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE") ==
        "cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>");
  CHECK(kc::shortKernelName("_ZN2at6native43_GLOBAL__N__b6de9c8c_10_SoftMax_cu_9f978f6319cunn_SoftMaxForwardILi8EN"
                            "3c104HalfEfS4_NS1_22SoftMaxForwardEpilogueEEEvPT2_PKT0_i") ==
        "at::native::(anonymous namespace)::cunn_SoftMaxForward<8, Half, float, Half, SoftMaxForwardEpilogue>");
  CHECK(kc::shortKernelName("_Z12plain_kernelPfi") == "plain_kernel");
  CHECK(kc::shortKernelName("_ZN12_GLOBAL__N_111anon_kernelEPf") == "(anonymous namespace)::anon_kernel");
}

TEST_CASE("full names are the demangled names") {
  CHECK(kc::displayKernelName("_Z12plain_kernelPfi", true) == "plain_kernel(float*, int)");
  CHECK(kc::demangleKernelName("_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE") ==
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(cutlass_80_simt_sgemm_256x128_8x4_nn_"
        "align1::Params)");
}

TEST_CASE("names the demangler rejects are kept, cut at the limit") {
  CHECK(kc::shortKernelName("_Zgarbage") == "_Zgarbage");
  const std::string long_bad = "_Z" + std::string(300, 'q');
  const std::string s = kc::shortKernelName(long_bad);
  CHECK(s.starts_with("_Zqqq"));
  CHECK(s.ends_with("…"));
  CHECK(s.size() == kc::kMaxShortName - 1 + std::string("…").size());
}

TEST_CASE("ellipsize counts characters, not bytes") {
  CHECK(kc::ellipsize("abcdef", 10) == "abcdef");
  CHECK(kc::ellipsize("abcdef", 6) == "abcdef");
  CHECK(kc::ellipsize("abcdefg", 6) == "abcde…");
  CHECK(kc::ellipsize("µµµµµµµ", 4) == "µµµ…");
}

TEST_CASE("names recorded demangled get the short name of their mangled form") {
  for (const char* m :
       {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
        "_ZN2at6native29vectorized_elementwise_kernelILi8EZZZNS0_18GeluCUDAKernelImplERNS_18TensorIteratorBaseENS0_"
        "8GeluTypeEENKUlvE0_clEvENKUlvE2_clEvEUlN3c108BFloat16EE_St5arrayIPcLm2EEEEviT0_T1_",
        "_ZN2at6native43_GLOBAL__N__b6de9c8c_10_SoftMax_cu_9f978f6319cunn_SoftMaxForwardILi8EN3c104HalfEfS4_NS1_22"
        "SoftMaxForwardEpilogueEEEvPT2_PKT0_i",
        "_Z12plain_kernelPfi"}) {
    const std::string demangled = kc::demangleKernelName(m);
    REQUIRE(demangled != m);
    CHECK(kc::isDemangledFunctionName(demangled));
    CHECK(kc::shortKernelName(demangled) == kc::shortKernelName(m));
    CHECK(kc::shortKernelNameUncut(demangled) == kc::shortKernelNameUncut(m));
    CHECK(kc::displayKernelName(demangled, true) == demangled);
  }
  CHECK(kc::shortKernelName("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                            "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)") ==
        "at::native::vectorized_elementwise_kernel<4, FillFunctor>");
  // Not function names: kept as recorded.
  for (const char* n : {"triton_poi_fused_gelu_mul_0", "kernel (odd", "a) b (c"}) {
    CHECK_FALSE(kc::isDemangledFunctionName(n));
    CHECK(kc::shortKernelName(n) == n);
  }
}
