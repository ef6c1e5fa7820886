// What kcount itself cost the profiled program: the callbacks the library handled on the program's threads
// (launch API enter and exit, NVTX push/pop/start/end, graph nodes created or cloned) and the host time of a
// random sample of them. The library counts them per thread (CallbackTally, in each ThreadBuffer), sums the
// tallies when it closes the log and writes the totals as three metadata keys of the final chunk
// (kMetaSelfCallbacks and the others, selfCostMetadata); the tools read them back (selfCostOf) for
// `kcount check` and the summary footer.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collector/log_format.h"

namespace kc {

struct LogData;

/// The library times on average one callback in this many (a random draw per thread, inject/self_cost.h).
inline constexpr uint32_t kSelfCostSample = 64;

/// Sums of callbacks, before (ticks) or after (ns) the host clock's ticks are converted.
struct CallbackCounts {
  uint64_t callbacks = 0;
  uint64_t timed = 0;
  uint64_t timed_time = 0;  // hostTicks() units (library) or ns, as the holder says
  CallbackCounts& operator+=(const CallbackCounts& o) noexcept;
};

/// One program thread's tally of kcount's callbacks on it. Threads: written by its own thread only, with a
/// relaxed load and a relaxed store (no read-modify-write, no lock: a plain increment in the owner's cache
/// line); read by any thread (the session, when it closes the log or frees the buffer of an exited thread)
/// with relaxed loads, which may miss a callback still running.
struct CallbackTally {
  std::atomic<uint64_t> callbacks{0};
  std::atomic<uint64_t> timed{0};
  std::atomic<uint64_t> timed_ticks{0};  // sum of the timed callbacks' durations in hostTicks() units

  /// Owner thread: one more callback.
  void countCallback() noexcept { bump(callbacks, 1); }
  /// Owner thread: one more timed callback, `ticks` long (hostTicks() units).
  void countTimed(uint64_t ticks) noexcept {
    bump(timed, 1);
    bump(timed_ticks, ticks);
  }
  /// The tally now (timed_time in ticks). Any thread.
  CallbackCounts read() const noexcept {
    return {callbacks.load(std::memory_order_relaxed), timed.load(std::memory_order_relaxed),
            timed_ticks.load(std::memory_order_relaxed)};
  }

 private:
  static void bump(std::atomic<uint64_t>& a, uint64_t n) noexcept {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
};

/// kcount's own cost as a log states it (the three keys), with the estimate of all callbacks' time.
struct SelfCost {
  uint64_t callbacks = 0;
  uint64_t timed = 0;     // the sample's size
  uint64_t timed_ns = 0;  // the sample's summed duration
  /// callbacks x (timed_ns / timed), rounded; nullopt when nothing was timed. Summed logs: the sum of each
  /// log's estimate (a log without one adds nothing; nullopt if none has one).
  std::optional<uint64_t> estimated_ns;

  /// Mean duration of a timed callback in ns (rounded); 0 when nothing was timed.
  uint64_t meanNs() const noexcept;
  /// Adds another log's numbers (saturating at 2^64 - 1).
  SelfCost& operator+=(const SelfCost& o) noexcept;
};

/// The SelfCost of `counts` whose timed_time is in ns. Pure.
SelfCost selfCostFromNs(const CallbackCounts& counts) noexcept;

/// The three metadata entries (key, decimal value) that state `cost`, in the order written. Pure.
std::vector<std::pair<std::string, std::string>> selfCostMetadata(const SelfCost& cost);

/// kcount's own cost inside one range (format 1.4, RangeCallbacks records): inclusive (every callback on the
/// range's thread while an instance of it was open, its child ranges' included; not its own push and pop) and
/// self (the inclusive counts less its child ranges' inclusive counts, each field held at 0: the callbacks
/// inside the range but in none of its child ranges, the child ranges' own push and pop among them).
/// timed_time in ns.
struct RangeCallbackCost {
  uint32_t scope_id = 0;  // the range (LogData's scope table index)
  CallbackCounts inclusive;
  CallbackCounts self;
  /// The self counts as a SelfCost: estimated_ns = self callbacks x (self timed_ns / self timed), nullopt
  /// when none of them was timed.
  SelfCost selfCost() const noexcept { return selfCostFromNs(self); }
};

/// Per range of `log` that has a RangeCallbacks record (records naming the same scope summed), ordered by
/// estimated self time, most first (ranges without one after those with one, by self callbacks), then by
/// scope id. Empty for a log without the records (written before 1.4, or cut before its final chunk).
/// Pure; thread-safe.
std::vector<RangeCallbackCost> rangeCallbackCostsOf(const LogData& log);

/// kcount's own cost as `log` states it: nullopt for a log without the three keys (written before them, or
/// cut before its final chunk), or with a value that is not a decimal number or more timed callbacks than
/// callbacks (damage). Pure; thread-safe.
std::optional<SelfCost> selfCostOf(const LogData& log);

}  // namespace kc
