// KCOUNT_LAUNCH_TIMING's per-thread draw: which launch calls are timed. No CUPTI types: the session
// seeds each thread's draw (session.cpp) and the launch hot path advances it (callbacks.cpp).
#pragma once

#include <cstdint>

namespace kc::inject {

/// First xorshift32 state of a thread's launch-timing draw (ThreadState::timing_draw): a different
/// sequence per thread id, never 0. Pure.
inline uint32_t launchTimingSeed(uint32_t thread_id) noexcept { return (thread_id * 2654435761u) | 1u; }

/// Whether the launch call now entering on this thread is timed under setLaunchTiming(sample), given
/// the threshold UINT32_MAX / sample (0: every call): advances `draw` (xorshift32, never 0). Pure but for
/// `draw`; exposed for the unit test of the sampling rate.
inline bool launchTimed(uint32_t* draw, uint32_t threshold) noexcept {
  if (threshold == 0) return true;
  uint32_t x = *draw;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *draw = x;
  return x <= threshold;
}

}  // namespace kc::inject
