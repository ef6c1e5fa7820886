// The NVTX injection library (InitializeInjectionNvtx2, nvtx_injection.cpp): what the rest of the library
// calls of it.
#pragma once

#include <cstddef>

namespace kc::inject {

/// Writes every process-wide NVTX range (nvtxRangeStart) still open as unclosed. Called by the final
/// flush, on the finishing thread.
void closeOpenStartedRanges() noexcept;

/// Length of a PyTorch NVTX profiler range name (torch.autograd.profiler.emit_nvtx) without its
/// per-call suffixes: "aten::addmm, seq = 12, op_id = 345" -> length of "aten::addmm". The name is cut
/// at the first ", seq = " or ", op_id = " after at least one character; other names keep `length`.
/// Applied to NVTX messages when KCOUNT_TORCH_OPS is set. Pure; thread-safe.
size_t torchOpNameLength(const char* text, size_t length) noexcept;

}  // namespace kc::inject
