#include "collector/clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cmath>

namespace kc {

bool tscUsable(std::string_view clocksource) noexcept {
#if defined(__x86_64__)
  const size_t b = clocksource.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return false;
  const size_t e = clocksource.find_last_not_of(" \t\r\n");
  return clocksource.substr(b, e - b + 1) == "tsc";
#else
  (void)clocksource;
  return false;
#endif
}

bool tscUsableHere() noexcept {
  // open/read (no stdio, no allocation): the session calls this while it reads its configuration.
  const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[64];
  const ssize_t n = ::read(fd, text, sizeof(text));
  ::close(fd);
  return n > 0 && tscUsable(std::string_view(text, static_cast<size_t>(n)));
}

TickAnchor takeAnchor() noexcept {
  TickAnchor best;
  uint64_t best_gap = UINT64_MAX;
  for (int i = 0; i < 3; ++i) {
    const uint64_t t0 = hostTicks();
    const uint64_t ns = nowNs();
    const uint64_t t1 = hostTicks();
    const uint64_t gap = t1 >= t0 ? t1 - t0 : UINT64_MAX - 1;
    if (gap < best_gap) {
      best_gap = gap;
      best = TickAnchor{t0 + gap / 2, ns};
    }
  }
  return best;
}

void TickConverter::anchor(TickAnchor a) noexcept {
  if (source_ == HostClockSource::kMonotonic) return;
  if (a.ticks <= last_.ticks || a.ns < last_.ns) return;
  last_ = a;
  ns_per_tick_ = static_cast<double>(last_.ns - first_.ns) / static_cast<double>(last_.ticks - first_.ticks);
}

uint64_t TickConverter::toNs(uint64_t ticks) const noexcept {
  if (source_ == HostClockSource::kMonotonic) return ticks;
  // Signed distance from the latest anchor in ticks, times the run's rate; added to the anchor's ns in
  // integers (a double holds ns since boot exactly only up to 2^53 ns, 104 days).
  const double dt = ticks >= last_.ticks ? static_cast<double>(ticks - last_.ticks)
                                         : -static_cast<double>(last_.ticks - ticks);
  const double d = std::nearbyint(dt * ns_per_tick_);
  if (d >= 0.0) {
    if (d >= static_cast<double>(UINT64_MAX - last_.ns)) return UINT64_MAX;
    return last_.ns + static_cast<uint64_t>(d);
  }
  if (-d >= static_cast<double>(last_.ns)) return 0;
  return last_.ns - static_cast<uint64_t>(-d);
}

}  // namespace kc
