// What the LD_PRELOAD constructor (preload.cpp) knows about the process that loaded the library, for the
// `kcount run` report: whether an entry point was reached, and the library's file name.
#pragma once

namespace kc::inject {

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
/// This library's file name ("libkcount.so" unless the constructor found another): what an exec's
/// LD_PRELOAD must name. Async-signal-safe (a fixed buffer written once, by the constructor).
const char* libraryFileName() noexcept;

}  // namespace kc::inject
