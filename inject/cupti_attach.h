// Attaching CUPTI to a capture window and detaching it when the window closes, and the activity flushes
// of the writer thread and of the process's end. The header names no CUPTI type: the session lifecycle
// (recording.cpp, process_end.cpp) calls these without including <cupti.h>.
//
// CUPTI is not touched before the first window opens: the activity callbacks, the timestamp callback and
// the memory API names are set up at the first attach, so a process loaded paused runs with CUPTI loaded
// but never initialized; except with KCOUNT_GPU_TIME=0, where a subscriber with only the graph exec
// callbacks watches graphs between windows (watchGraphs). Detach is CUPTI's dynamic detach (cupti_detach.h): after the last records are
// flushed and every activity kind is disabled, kcount enables the callbacks of every runtime and driver
// API and calls cuptiFinalize inside the first API exit callback that comes. Unsubscribing without
// finalizing leaves CUPTI's instrumentation in the driver: measured on the H200, a launch loop stayed 32%
// slower after a stop (docs/performance.md). A window that opens before the finalize happened cancels it
// and keeps the subscriber; one that opens after it subscribes again (CUPTI re-initializes at its next
// call). Detach for another subscriber (KCOUNT_YIELD) only unsubscribes: that client is about to use CUPTI.
#pragma once

namespace kc::inject {

/// Subscribes, enables the launch, memory API and graph node callbacks and (KCOUNT_GPU_TIME on) the
/// kernel, memcpy and memset activity kinds. False on failure, with one message, everything undone.
/// The session's attach hook: called under its control lock, never from a CUPTI callback, with no other
/// kcount lock held.
bool attachCupti();
/// Waits for queued GPU work when it can, flushes activity, disables it, and finalizes CUPTI at the next
/// API exit (or only unsubscribes: keepCuptiAtDetach, KCOUNT_CUPTI_FINALIZE=0). The session's detach hook
/// (same rules as attachCupti).
void detachCupti();
/// True while attached: subscribed, callbacks and activity enabled. Any thread (one atomic load).
bool cuptiAttached() noexcept;
/// KCOUNT_GPU_TIME=0 with no window open (started paused, or after a stop): keeps a CUPTI subscriber with
/// only the graph exec callbacks (inject/cupti_graphs.h: instantiation, changes, destruction; no launch
/// callback, no activity), so that graphs instantiated between windows, e.g. a server's decode graph
/// captured at startup, are known when a window opens. A stop in that mode returns to this state instead of
/// finalizing CUPTI. While it holds CUPTI, another CUPTI client is refused unless KCOUNT_YIELD=1
/// (releaseGraphWatch). True if watching. Same rules as attachCupti.
bool watchGraphs();
/// KCOUNT_YIELD: another CUPTI client subscribes while the graph watch holds CUPTI and no window is open:
/// unsubscribes and forgets every graph (later windows count launches of older graphs as without kernel).
/// True if a watch was released. Any thread; never throws.
bool releaseGraphWatch() noexcept;
/// On the calling thread: the next detach unsubscribes without finalizing (another subscriber is about to
/// take CUPTI, KCOUNT_YIELD).
void keepCuptiAtDetach(bool keep) noexcept;
/// The next attach registers the activity and timestamp callbacks again (a client kcount yielded to may
/// have replaced them or finalized CUPTI).
void reregisterAtNextAttach() noexcept;

/// Final activity flush (Session::finish's flush_activity): records the devices' names, then, if attached,
/// waits for GPU work the program already queued on this thread's context (its kernel records exist only
/// once the kernels ended) and makes CUPTI hand over every buffer. Calls back into the session: no kcount
/// lock may be held.
void flushActivityForExit();
/// The writer thread's periodic flush: hands over what CUPTI holds, so a process killed without warning
/// (SIGKILL, OOM killer) leaves a log complete up to the last second.
void periodicActivityFlush();

/// Where CUPTI stands, for `kcount ctl status`: "not loaded" (no CUDA injection yet), "not initialized"
/// (loaded, no window opened yet), "attached" (a window is open), "watching graphs (KCOUNT_GPU_TIME=0)"
/// (watchGraphs), "finalize pending" (a window closed;
/// CUPTI is finalized at the next CUDA API exit), "finalizing", "finalized" (detached: the process runs
/// without CUPTI until the next window), "unsubscribed" (detached without finalizing: KCOUNT_YIELD or
/// KCOUNT_CUPTI_FINALIZE=0). Atomic loads only; thread-safe.
const char* cuptiState() noexcept;

}  // namespace kc::inject
