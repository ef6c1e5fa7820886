// The few CUDA driver calls the library makes at its edges (never on the launch hot path), found with
// dlsym in the libcuda.so.1 the process already loaded: kcount never loads or links CUDA itself. No CUDA or
// CUPTI header: contexts are passed as void*. Each does nothing if the driver is not loaded.
#pragma once

#include <string>

namespace kc::inject {

class Session;

/// The driver function `name` (e.g. "cuGraphGetNodes") of the libcuda.so.1 the process already loaded,
/// or null without a loaded driver or when it lacks the symbol. Any thread; never throws.
void* cudaDriverSymbol(const char* name) noexcept;
/// The driver's version (cuDriverGetVersion), "" without a loaded driver or on failure. Any thread.
std::string cudaDriverVersion() noexcept;
/// Adds metadata "gpu.N" = device name for each device (at most 64). Any thread; never throws.
void recordDeviceMetadata(Session& session) noexcept;
/// Waits for the work queued on the calling thread's current context (cuCtxSynchronize). Any thread.
void synchronizeCurrentContext() noexcept;
/// Waits for the GPU work queued so far: a kernel's activity record exists only once the kernel ended.
/// On a thread with a current context (a capture range closing on the application thread) that context;
/// otherwise (the control or writer thread) `fallback` (the context of the last launch, a CUcontext),
/// made current for the call. Never throws.
void waitForQueuedWork(const void* fallback) noexcept;

}  // namespace kc::inject
