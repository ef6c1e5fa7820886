// VerdictInputs for tests of layerVerdict() (tools/verdict.h): a range of kernels without memory operations.
#pragma once

#include <cstdint>

#include "tools/verdict.h"

namespace kc::test {

/// VerdictInputs of a range with `instances` instances and `cpu_ns` of wall time in them, `launches` kernel
/// launch calls taking `launch_api_ns`, and `kernels` kernels of `gpu_ns` GPU time (sums over the instances,
/// ns); no memory operation, the default graph view; launch CPU timed in 1 of `launch_timing_sample` calls
/// (KCOUNT_LAUNCH_TIMING; 1: every call).
inline VerdictInputs kernelRange(uint64_t instances, uint64_t cpu_ns, uint64_t launch_api_ns, uint64_t gpu_ns,
                                 uint64_t launches, uint64_t kernels, uint64_t launch_timing_sample = 1) {
  VerdictInputs v;
  v.instances = instances;
  v.cpu_ns = cpu_ns;
  v.launch_api_ns = launch_api_ns;
  v.kernel_gpu_ns = gpu_ns;
  v.launches = launches;
  v.kernels = kernels;
  v.launch_timing_sample = launch_timing_sample;
  return v;
}

}  // namespace kc::test
