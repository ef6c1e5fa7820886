// CUPTI's "dynamic detach" state (https://docs.nvidia.com/cupti/r_main.html#r_dynamic_detach): after a
// window closes, CUPTI is finalized inside the next CUDA API exit callback, on whichever program thread
// makes the next CUDA call. CUPTI allows cuptiFinalize only there: called from another thread it races
// with threads inside CUPTI (PyTorch Kineto hit a crash in cuptiActivityFlushAll that way and moved its
// teardown to the API exit callsite, pytorch/kineto commit c7c76c3 "Safely teardown CUPTI (#686)").
// Shared by the attach/detach room (cupti_attach.cpp), which starts and settles a detach, and the
// callback trampoline (cupti_trampolines.cpp), which finalizes at the API exit. Lock-free (one atomic).
#pragma once

#include <cupti.h>

namespace kc::inject {

/// kDetachNone: attached or never detached; kDetachPending: every runtime/driver API calls back until one
/// exits; kDetachFinalizing: that callback is in cuptiFinalize; kDetachDone: CUPTI is finalized (the next
/// attach subscribes and registers the activity callbacks again).
enum DetachState : int { kDetachNone = 0, kDetachPending = 1, kDetachFinalizing = 2, kDetachDone = 3 };

/// The current state (acquire load). Any thread.
DetachState detachState() noexcept;
/// True unless kDetachNone (relaxed load): the callback trampoline's one check per call.
bool detachUnderway() noexcept;
/// Marks a finalize pending (the detach enabled every runtime and driver API callback). Control thread.
void markFinalizePending() noexcept;
/// kDetachPending -> kDetachNone; true if a pending finalize was cancelled (its subscriber still exists).
bool cancelPendingFinalize() noexcept;
/// Waits (at most 10 s) while a finalize is in progress; then resets the state to kDetachNone and returns
/// whether CUPTI had been finalized (kDetachDone). *in_time false if the finalize did not end in time
/// (state left as it was). Control thread.
bool settleFinalize(bool* in_time) noexcept;
/// In a CUPTI callback while a detach is pending: at a runtime or driver API exit, finalizes CUPTI (once).
/// Not while the session closes: the process is exiting and CUPTI's own teardown follows. Never throws.
void finalizeAtApiExit(CUpti_CallbackDomain domain, const void* data) noexcept;

}  // namespace kc::inject
