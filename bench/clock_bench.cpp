// Cost of the host timestamps the launch and range hot paths can take (collector/clock.h), per call, on
// the machine it runs on, no GPU: clock_gettime(CLOCK_MONOTONIC) (nowNs), the time-stamp counter
// (hostTicks() with HostClockSource::kTsc) and, for reference, an empty loop. Each is called CALLS times
// in a loop, ROUNDS rounds in alternating order; prints ns per call of every round and their medians.
// Where the kernel's clocksource is not tsc, hostTicks() falls back to clock_gettime (as in the library).
// Not a test: numbers depend on the machine (docs/performance.md records them with the machine).
// Usage: kc_clock_bench [CALLS] [ROUNDS]     (defaults 10,000,000 and 5)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "collector/clock.h"

namespace {

volatile uint64_t g_sink = 0;  // keeps the loops from being optimized away

template <typename F>
double nsPerCall(F&& f, long calls) {
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t acc = 0;
  for (long i = 0; i < calls; ++i) acc += f();
  const auto t1 = std::chrono::steady_clock::now();
  g_sink = g_sink + acc;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
}

long argOr(int argc, char** argv, int i, long dflt) {
  if (argc <= i) return dflt;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1) {
    std::fprintf(stderr, "usage: kc_clock_bench [CALLS] [ROUNDS]   (positive integers)\n");
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argOr(argc, argv, 1, 10'000'000);
  const long rounds = argOr(argc, argv, 2, 5);
  const kc::HostClockSource selected = kc::tscUsableHere() ? kc::HostClockSource::kTsc : kc::HostClockSource::kMonotonic;
  struct Probe {
    const char* name;
    std::function<double()> run;
    std::vector<double> ns;
  };
  std::vector<Probe> probes;
  probes.push_back({"empty loop", [&] { return nsPerCall([i = uint64_t{0}]() mutable { return ++i; }, calls); }, {}});
  probes.push_back({"clock_gettime(CLOCK_MONOTONIC)", [&] { return nsPerCall([] { return kc::nowNs(); }, calls); }, {}});
  probes.push_back({selected == kc::HostClockSource::kTsc ? "hostTicks() = rdtsc" : "hostTicks() = clock_gettime (no tsc)",
                    [&] {
                      kc::setHostClockSource(selected);
                      return nsPerCall([] { return kc::hostTicks(); }, calls);
                    },
                    {}});
  for (long r = 0; r < rounds; ++r) {
    for (size_t k = 0; k < probes.size(); ++k) {
      Probe& p = probes[(k + static_cast<size_t>(r)) % probes.size()];
      p.ns.push_back(p.run());
    }
  }
  std::printf("hostTicks() source (the library's default, KCOUNT_HOST_CLOCK=auto): %s; %ld calls per round, %ld rounds\n",
              selected == kc::HostClockSource::kTsc ? "tsc" : "CLOCK_MONOTONIC", calls, rounds);
  for (Probe& p : probes) {
    std::vector<double> v = p.ns;
    std::sort(v.begin(), v.end());
    std::printf("%-36s median %6.2f ns per call; rounds:", p.name, v[v.size() / 2]);
    for (double x : p.ns) std::printf(" %.2f", x);
    std::printf("\n");
  }
  return 0;
}
