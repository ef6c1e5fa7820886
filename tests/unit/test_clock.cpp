// Host timestamps of the hot paths (collector/clock.h): when the TSC may stand in for CLOCK_MONOTONIC,
// and the conversion of ticks to ns: the line through the first and the latest anchor, with synthetic
// clocks (a known rate, drift, anchors out of order) and with this machine's real counters.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "collector/clock.h"

using namespace kc;

TEST_CASE("tscUsable: only the kernel's own clocksource 'tsc' (x86-64)") {
#if defined(__x86_64__)
  CHECK(tscUsable("tsc\n"));
  CHECK(tscUsable("  tsc "));
#else
  CHECK_FALSE(tscUsable("tsc\n"));
#endif
  CHECK_FALSE(tscUsable("kvm-clock\n"));
  CHECK_FALSE(tscUsable("hpet\n"));
  CHECK_FALSE(tscUsable("tsc-early\n"));
  CHECK_FALSE(tscUsable(""));
  CHECK_FALSE(tscUsable("\n"));
}

TEST_CASE("TickConverter: CLOCK_MONOTONIC source is the identity") {
  TickConverter c;
  c.start(HostClockSource::kMonotonic, TickAnchor{5, 5});
  c.anchor(TickAnchor{100, 100});
  CHECK(c.toNs(0) == 0);
  CHECK(c.toNs(123456789) == 123456789);
  CHECK(c.nsPerTick() == 1.0);
}

TEST_CASE("TickConverter: a 3 GHz counter converted through first and latest anchor") {
  // ns = 1e12 + ticks / 3 (ticks from 9e12: a machine up for about 50 minutes at 3 GHz).
  const uint64_t t0 = 9'000'000'000'000ull;
  const uint64_t n0 = 1'000'000'000'000ull;
  TickConverter c;
  c.start(HostClockSource::kTsc, TickAnchor{t0, n0});
  CHECK(c.toNs(t0 + 300) == n0);  // no rate before a second anchor: every tick maps to the first anchor
  c.anchor(TickAnchor{t0 + 300'000'000, n0 + 100'000'000});  // 100 ms later
  CHECK(c.nsPerTick() == doctest::Approx(1.0 / 3.0));
  CHECK(c.toNs(t0) == n0);                                    // exact at both anchors
  CHECK(c.toNs(t0 + 300'000'000) == n0 + 100'000'000);
  CHECK(c.toNs(t0 + 3000) == n0 + 1000);                      // between them
  CHECK(c.toNs(t0 + 300'000'000 + 30) == n0 + 100'000'010);   // a little after the latest
  CHECK(c.toNs(t0 - 3'000'000) == n0 - 1'000'000);            // before the first (a range pushed earlier)
  CHECK(c.toNs(0) == 0);  // 2e12 ns before boot: clamped
}

TEST_CASE("TickConverter: drift: the offset follows the latest anchor, the rate the whole run") {
  const uint64_t t0 = 1'000'000, n0 = 2'000'000'000;
  TickConverter c;
  c.start(HostClockSource::kTsc, TickAnchor{t0, n0});
  // 1 tick = 1 ns for 10 s, then the clock runs 10 ppm fast (NTP slew) for 100 ms.
  c.anchor(TickAnchor{t0 + 10'000'000'000ull, n0 + 10'000'000'000ull});
  const TickAnchor latest{t0 + 10'100'000'000ull, n0 + 10'100'001'000ull};
  c.anchor(latest);
  CHECK(c.toNs(latest.ticks) == latest.ns);  // records near the latest anchor: exact there
  // 50 ms before it the slewed clock read latest.ns - 50 ms * (1 + 1e-5); the line, with the run's rate
  // (1 + 1e-7), is off by the drift over that distance: 10 ppm of 50 ms, 500 ns, no more.
  const uint64_t want = latest.ns - 50'000'500;
  const uint64_t got = c.toNs(latest.ticks - 50'000'000);
  CHECK((got > want ? got - want : want - got) <= 500);
  CHECK(got < latest.ns - 50'000'000);  // and on the right side of the unslewed value
}

TEST_CASE("TickConverter: anchors that do not advance are ignored; results clamp at 0") {
  TickConverter c;
  c.start(HostClockSource::kTsc, TickAnchor{1000, 1000});
  c.anchor(TickAnchor{2000, 2000});
  c.anchor(TickAnchor{1999, 3000});  // another CPU's counter a few ticks behind: kept out
  c.anchor(TickAnchor{2500, 1500});  // ns behind the latest: kept out
  CHECK(c.nsPerTick() == doctest::Approx(1.0));
  CHECK(c.toNs(2000) == 2000);
  CHECK(c.toNs(500) == 500);
  CHECK(c.toNs(1500) == 1500);
  c.start(HostClockSource::kTsc, TickAnchor{5000, 1000});
  c.anchor(TickAnchor{6000, 2000});
  CHECK(c.toNs(3000) == 0);  // 1000 ns before 0: clamped
  CHECK(c.toNs(4500) == 500);
}

#if defined(__x86_64__)
TEST_CASE("TickConverter on this machine's TSC: ticks taken now convert to within 20 µs of clock_gettime") {
  const HostClockSource before = hostClockSource();
  setHostClockSource(HostClockSource::kTsc);
  TickConverter c;
  c.start(HostClockSource::kTsc, takeAnchor());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t ticks = hostTicks();
  const uint64_t ns = nowNs();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.anchor(takeAnchor());  // as the writer does: the anchor after the records
  setHostClockSource(before);
  const uint64_t got = c.toNs(ticks);
  const uint64_t diff = got > ns ? got - ns : ns - got;
  INFO("converted " << got << " vs clock_gettime " << ns << ", ns per tick " << c.nsPerTick());
  // A VM can be descheduled between the two reads; 20 µs is far above the two reads' own 30 ns.
  CHECK(diff < 20'000);
  CHECK(c.nsPerTick() > 0.0);
}
#endif
