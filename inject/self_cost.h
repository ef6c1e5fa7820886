// kcount's own cost on the program's threads (collector/self_cost.h): each handler that runs on an
// application thread counts itself here, and about one call in kSelfCostSample, drawn at random per thread,
// is timed with the host clock. No CUPTI types; header only, inlined into the hot paths.
#pragma once

#include <cstdint>

#include "collector/clock.h"
#include "collector/self_cost.h"
#include "inject/launch_sampling.h"
#include "inject/thread_state.h"

namespace kc::inject {

/// First xorshift32 state of a thread's self-cost draw (ThreadState::cost_draw): another sequence than its
/// launch-timing draw (launchTimingSeed), never 0. Pure.
inline uint32_t selfCostSeed(uint32_t thread_id) noexcept { return launchTimingSeed(thread_id ^ 0x5bd1e995u); }

/// Counts one callback on the calling thread, from construction to destruction (the handler's body, once it
/// has the thread's state), in the thread's CallbackTally; times it with two hostTicks() reads when the
/// thread's draw picks it (about 1 in kSelfCostSample: a random draw, not every Nth call, since a launch's
/// enter and exit callbacks alternate and a period would pick only one of them). Cost of an untimed
/// callback: one increment and one draw; no lock, no allocation, no atomic read-modify-write. `ts` must be
/// the calling thread's state, with its buffer. Not thread-safe beyond that: one scope per callback.
class CallbackCostScope {
 public:
  explicit CallbackCostScope(ThreadState* ts) noexcept : tally_(&ts->buffer->callbacks) {
    tally_->countCallback();
    if (launchTimed(&ts->cost_draw, UINT32_MAX / kSelfCostSample)) [[unlikely]] {
      timed_ = true;
      start_ = hostTicks();
    }
  }
  ~CallbackCostScope() {
    if (timed_) [[unlikely]] {
      const uint64_t end = hostTicks();
      tally_->countTimed(end > start_ ? end - start_ : 0);
    }
  }
  CallbackCostScope(const CallbackCostScope&) = delete;
  CallbackCostScope& operator=(const CallbackCostScope&) = delete;

 private:
  CallbackTally* tally_;
  uint64_t start_ = 0;
  bool timed_ = false;
};

}  // namespace kc::inject
