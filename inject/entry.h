// Shared pieces of the entry points (CUDA injection, NVTX injection, LD_PRELOAD constructor).
#pragma once

#define KC_EXPORT extern "C" __attribute__((visibility("default")))

namespace kc::inject {

/// Activates the session if it is dormant and makes sure the final flush runs at process exit.
/// Returns true if the session is recording. Thread-safe, never throws.
bool startRecording() noexcept;

/// Writes every process-wide NVTX range (nvtxRangeStart) still open as unclosed. Called by the final
/// flush, on the finishing thread.
void closeOpenStartedRanges() noexcept;

}  // namespace kc::inject
