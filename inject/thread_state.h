// All per-thread state of the library in one struct (Proton's ThreadState): the NVTX range stack, the
// open launch calls, the thread's record buffer and a cache in front of the scope tree.
#pragma once

#include <cstdint>
#include <string>

#include "collector/host_buffer.h"
#include "collector/log_format.h"

namespace kc::inject {

/// One open NVTX push range on this thread.
struct OpenRange {
  uint64_t begin_ticks;  // hostTicks() at push (collector/clock.h): converted to ns when drained
  uint32_t scope_id;
  uint32_t name_id;
  uint32_t domain_id;  // kNoString for the default domain
  uint32_t epoch;      // window epoch at push (0: paused); bit kRangeEndsWindow: its pop closes the window
  /// The thread's CallbackTally (kcount's own callbacks, inject/self_cost.h) as read at the end of the push
  /// handler, after the push's own count and timing: its pop takes the difference (rangeCallbacksSince).
  CallbackCounts at_push;
};

/// kcount's own callbacks on this thread between a range's push and `now` (the tally read now, every field
/// at least `at_push`'s), into `r`: the callbacks counted since the push handler ended, less `own` (1 when
/// `now` was read inside the pop handler, whose own count is already in the tally while its timing is not:
/// the pop is left out whole, as the push is), and the timed ones with their ticks. So a range's counts
/// hold every callback strictly between its push and its pop on its thread, its child ranges' push and pop
/// included, its own push and pop not. Counts are held at UINT32_MAX. Loads and stores only.
inline void rangeCallbacksSince(const CallbackCounts& now, const CallbackCounts& at_push, uint64_t own,
                                HostRange* r) noexcept {
  auto diff = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
  const uint64_t callbacks = diff(now.callbacks, at_push.callbacks + own);
  const uint64_t timed = diff(now.timed, at_push.timed);
  r->callbacks = callbacks > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(callbacks);
  r->timed = timed > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(timed);
  r->timed_ticks = diff(now.timed_time, at_push.timed_time);
}

/// One launch API call between its enter and exit callbacks.
struct OpenLaunch {
  uint64_t correlation_id;
  uint64_t enter_ticks;  // hostTicks() at API enter
  uint32_t scope_id;
  uint32_t cbid;
  uint8_t domain;  // ApiDomain
  uint8_t flags;   // LaunchFlags gathered while the call is open (kLaunchCaptured)
};

/// Cache entry mapping (parent scope, domain, range message) to a scope id without taking a lock.
struct ScopeCacheEntry {
  uint64_t hash = 0;                 // XXH3 of the message, or id|1<<63 for registered strings
  const std::string* text = nullptr; // interned text (stable), nullptr for registered strings
  uint32_t parent = UINT32_MAX;
  uint32_t domain = 0;
  uint32_t scope = 0;
  uint32_t name_id = 0;
};

/// Cache entry mapping a launch's kernel symbol (CUpti_CallbackData::symbolName, a string owned by the
/// CUDA module) to its string id, for KCOUNT_GPU_TIME=0. The pointer is only a hint: a hit is confirmed by
/// comparing the text, since a module unloaded and another loaded may reuse the address.
struct KernelNameCacheEntry {
  const char* symbol = nullptr;
  const std::string* text = nullptr;  // interned text (stable for the session's lifetime)
  uint32_t name_id = 0;
};

/// One thread's state (threadState()). Ownership: allocated at the thread's first recorded call, freed
/// when the thread exits (its buffer goes to the session). Threads: touched only by its own thread, but
/// the buffer, which the writer thread drains. No lock.
struct ThreadState {
  static constexpr uint32_t kMaxDepth = 256;       // deeper pushes are counted but not tracked
  static constexpr uint32_t kMaxOpenLaunches = 8;  // nested launch API calls (runtime -> driver)
  static constexpr uint32_t kCacheSlots = 256;
  static constexpr uint32_t kKernelNameSlots = 64;

  uint32_t thread_id = 0;
  ThreadBuffer* buffer = nullptr;  // owned by the session once registered
  uint32_t depth = 0;              // may exceed kMaxDepth; only the first kMaxDepth are in stack
  OpenRange stack[kMaxDepth];
  uint32_t open_launches = 0;
  uint32_t launch_gate = 0;        // gate word when launches[] was last used (a new window resets it)
  OpenLaunch launches[kMaxOpenLaunches];
  const void* context = nullptr;   // CUDA context of this thread's last launch
  uint32_t timing_draw = 1;        // xorshift32 state choosing the launch calls timed (KCOUNT_LAUNCH_TIMING);
                                   // never 0, seeded from the thread id
  uint32_t cost_draw = 1;          // xorshift32 state choosing the callbacks timed for kcount's own cost
                                   // (inject/self_cost.h); never 0, seeded from the thread id
  ScopeCacheEntry cache[kCacheSlots];
  KernelNameCacheEntry kernel_names[kKernelNameSlots];

  /// Innermost open range of this thread (the scope a launch is attributed to); root if none.
  uint32_t currentScope() const {
    const uint32_t d = depth < kMaxDepth ? depth : kMaxDepth;
    return d == 0 ? kRootScope : stack[d - 1].scope_id;
  }
};

/// This thread's state, created and registered on first use (one allocation per thread). nullptr if
/// the session is not recording or memory ran out. Async-signal-unsafe.
ThreadState* threadState() noexcept;

/// Appends the calling thread's open push ranges as unclosed (RangeFlags::kRangeUnclosed), innermost
/// first, and forgets them. `from_signal_handler`: append without taking a new block (no lock).
void writeUnclosedRanges(bool from_signal_handler) noexcept;
/// The same for `ts`, which must be the calling thread's state (also while the thread exits, from its
/// thread-specific-data destructor). A thread that exits with push ranges open gets them written this way.
void writeUnclosedRanges(ThreadState* ts, bool from_signal_handler) noexcept;

}  // namespace kc::inject
