// The session lifecycle of the process: the one start of recording (activation, the exit and fork hooks,
// the first window) by whichever entry point comes first (CUDA injection, an NVTX call, `kcount ctl`).
// No CUPTI here: the CUPTI side is reached through cupti_attach.h.
#pragma once

namespace kc::inject {

/// Activates the session if it is dormant and makes sure the final flush runs at process exit
/// (atexit, after-fork child hook, signal handlers, periodic CUPTI flush, control socket), then applies
/// KCOUNT_START / KCOUNT_CAPTURE_*. One thread starts; others return at once. Returns true if the session
/// is recording. Thread-safe, never throws.
bool startRecording() noexcept;
/// True once the session's start (activation and first window) has completed, or there is nothing to
/// start (one atomic load).
bool startDone() noexcept;
/// Waits (at most 2 s) until startDone(): for NVTX threads that arrive while another thread starts the
/// session. Takes no lock.
void waitForStart() noexcept;

}  // namespace kc::inject
