// Shared pieces of the entry points (CUDA injection, NVTX injection, LD_PRELOAD constructor).
#pragma once

#include <cstddef>

#define KC_EXPORT extern "C" __attribute__((visibility("default")))

namespace kc::inject {

/// Activates the session if it is dormant and makes sure the final flush runs at process exit.
/// Returns true if the session is recording. Thread-safe, never throws.
bool startRecording() noexcept;
/// True once the session's start (activation and first window) has completed, or there is nothing to
/// start (one atomic load).
bool startDone() noexcept;
/// Waits (at most 2 s) until startDone(): for NVTX threads that arrive while another thread starts the
/// session. Takes no lock.
void waitForStart() noexcept;

/// Closes this process's log (final flush: the last records, Stats and End) if its session is recording,
/// and removes its control socket: called before the process ends or replaces its image without
/// running atexit handlers (_exit, a signal sent to itself, exec). Nothing in a fork child. Keeps errno.
/// Never throws.
void finishBeforeProcessEnds() noexcept;

/// Marks that CUDA (InitializeInjection) or NVTX (InitializeInjectionNvtx2) called into the library:
/// the process made a call kcount records. One atomic store; async-signal-safe.
void noteEntryPointCalled() noexcept;
/// Under `kcount run` (KCOUNT_RUN_REPORT set), at the end of a process that loaded the library through
/// LD_PRELOAD and never reached an entry point (no CUDA initialization, no NVTX call): appends an "idle"
/// note to the run report, so `kcount run` can say that nothing was written because there was nothing to
/// record. Only in the process that loaded the library (not a fork child), and not after kcount was
/// disabled (that has its own note). Called by the library's destructor and by the _exit interposer.
/// Never throws.
void noteIdleProcess() noexcept;

/// Where CUPTI stands, for `kcount ctl status`: "not loaded" (no CUDA injection yet), "not initialized"
/// (loaded, no window opened yet), "attached" (a window is open), "finalize pending" (a window closed;
/// CUPTI is finalized at the next CUDA API exit), "finalizing", "finalized" (detached: the process runs
/// without CUPTI until the next window), "unsubscribed" (detached without finalizing: KCOUNT_YIELD or
/// KCOUNT_CUPTI_FINALIZE=0). One atomic load per answer; thread-safe.
const char* cuptiState() noexcept;

/// Writes every process-wide NVTX range (nvtxRangeStart) still open as unclosed. Called by the final
/// flush, on the finishing thread.
void closeOpenStartedRanges() noexcept;

/// Length of a PyTorch NVTX profiler range name (torch.autograd.profiler.emit_nvtx) without its
/// per-call suffixes: "aten::addmm, seq = 12, op_id = 345" -> length of "aten::addmm". The name is cut
/// at the first ", seq = " or ", op_id = " after at least one character; other names keep `length`.
/// Applied to NVTX messages when KCOUNT_TORCH_OPS is set. Pure; thread-safe.
size_t torchOpNameLength(const char* text, size_t length) noexcept;

}  // namespace kc::inject
