// Host clock shared by every timestamp in a log: CLOCK_MONOTONIC in ns. CUPTI is told to use it too
// (cuptiActivityRegisterTimestampCallback), so CPU and GPU times are on one axis.
//
// The launch and range hot paths (inject/callbacks.cpp, inject/nvtx_injection.cpp) take their timestamps
// with hostTicks(): the CPU's time-stamp counter where the kernel itself keeps time with it, else
// CLOCK_MONOTONIC. The writer thread converts ticks to CLOCK_MONOTONIC ns (TickConverter) when it drains
// the records, before anything reads them, so the log holds ns only. Measured on the 2-core build VM
// (2026-11-30, a loop of 10 million calls of each): clock_gettime 23 ns, rdtsc 10 ns; a launch takes two.
// The same scheme as PyTorch's profiler (c10::getApproximateTime and its converter to Unix time).
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>
#include <string_view>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace kc {

/// CLOCK_MONOTONIC in ns. Thread-safe, async-signal-safe, no allocation (vDSO, about 20 ns).
inline uint64_t nowNs() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

/// What hostTicks() reads.
enum class HostClockSource : uint8_t {
  kMonotonic = 0,  // clock_gettime(CLOCK_MONOTONIC): ticks are ns already
  kTsc = 1,        // rdtsc (x86-64): converted by TickConverter
};

namespace detail {
inline std::atomic<uint8_t> g_host_clock{0};
}

/// Sets the source of hostTicks(). Call once, before any hot-path timestamp is taken (the session does
/// it when it reads its configuration, before any callback can run); changing it while ticks are in
/// flight would mix units. kTsc on a CPU other than x86-64 is ignored.
inline void setHostClockSource(HostClockSource s) noexcept {
#if !defined(__x86_64__)
  s = HostClockSource::kMonotonic;
#endif
  detail::g_host_clock.store(static_cast<uint8_t>(s), std::memory_order_relaxed);
}

inline HostClockSource hostClockSource() noexcept {
  return static_cast<HostClockSource>(detail::g_host_clock.load(std::memory_order_relaxed));
}

/// A host timestamp in the unit of hostClockSource(): TSC ticks or CLOCK_MONOTONIC ns. Thread-safe,
/// async-signal-safe, no allocation, no lock. Only for timestamps that go through TickConverter::toNs.
inline uint64_t hostTicks() noexcept {
#if defined(__x86_64__)
  if (detail::g_host_clock.load(std::memory_order_relaxed) == static_cast<uint8_t>(HostClockSource::kTsc))
    return __rdtsc();
#endif
  return nowNs();
}

/// True when the TSC may stand in for CLOCK_MONOTONIC: x86-64, and `clocksource` (the text of
/// /sys/devices/system/clocksource/clocksource0/current_clocksource) is "tsc", i.e. the kernel found the
/// counter invariant and synchronized across CPUs and keeps its own time with it (it switches to another
/// clocksource, e.g. hpet, when it finds the TSC unstable). Surrounding white space is ignored.
bool tscUsable(std::string_view clocksource) noexcept;

/// Reads the current clocksource and applies tscUsable(). False if the file cannot be read.
bool tscUsableHere() noexcept;

/// One (ticks, ns) pair read back to back.
struct TickAnchor {
  uint64_t ticks = 0;
  uint64_t ns = 0;
};

/// Reads hostTicks() and nowNs() together: of three tries, the one whose ticks reads lie closest around
/// the nowNs() read, ticks taken as their midpoint. Thread-safe.
TickAnchor takeAnchor() noexcept;

/// Converts hostTicks() values to CLOCK_MONOTONIC ns with a line through the first anchor (taken when
/// recording starts) and the latest one (taken by the writer thread at each drain, after it has taken
/// the records it converts): the rate comes from the whole run (precise after the first drain interval,
/// 100 ms), the offset from the latest anchor (records are converted within about one drain interval of
/// it). Between two drains the lines differ by the clock's drift against the TSC over one interval (NTP
/// slew, a few ppm: below 1 µs per 100 ms). With HostClockSource::kMonotonic, toNs() is the identity.
/// Not thread-safe: one owner (the writer thread, under the session's writer lock).
class TickConverter {
 public:
  /// Starts the line at `first` and sets the source (kMonotonic: identity).
  void start(HostClockSource source, TickAnchor first) noexcept {
    source_ = source;
    first_ = last_ = first;
    ns_per_tick_ = 0.0;
  }
  /// A later anchor: moves the offset to it and recomputes the rate over [first, a]. An anchor that does
  /// not advance in ticks or ns (another CPU's counter a few ticks behind) is ignored.
  void anchor(TickAnchor a) noexcept;
  /// CLOCK_MONOTONIC ns of `ticks`. Before a second anchor (no rate yet) every tick maps to the first
  /// anchor's ns. Results below 0 are 0.
  uint64_t toNs(uint64_t ticks) const noexcept;
  HostClockSource source() const noexcept { return source_; }
  /// ns per tick of the current line (0 before a second anchor; 1 for kMonotonic).
  double nsPerTick() const noexcept { return source_ == HostClockSource::kMonotonic ? 1.0 : ns_per_tick_; }

 private:
  HostClockSource source_ = HostClockSource::kMonotonic;
  TickAnchor first_;
  TickAnchor last_;
  double ns_per_tick_ = 0.0;
};

}  // namespace kc
