// KCOUNT_LAUNCH_TIMING=N through the library's real handlers (no GPU, summary mode): every launch is
// counted, one call in N (at random) is timed, and the launch CPU sums are the timed calls counted N
// times. One session per process: the session test is one test case.
#include <cupti.h>
#include <doctest/doctest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "inject/callbacks.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/launch_calls.h"
#include "tests/support/session_log_path.h"

namespace {

using namespace kc;
using namespace kc::inject;
using namespace kc::test;
using Clock = std::chrono::steady_clock;

// Busy-waits `ns` (a launch call that takes that long on the host).
void spin(uint64_t ns) {
  const auto until = Clock::now() + std::chrono::nanoseconds(ns);
  while (Clock::now() < until) {
  }
}

// One cudaLaunchKernel call (with its nested cuLaunchKernel) that spends about `ns` inside; returns the
// call's own duration as the test measured it (ns).
uint64_t timedLaunch(uint32_t corr, uint64_t ns) {
  const auto t0 = Clock::now();
  launchCallAround(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr, nullptr,
                   /*nested_driver=*/true, [ns] { spin(ns); });
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

}  // namespace

TEST_CASE("launchTimed: one call in N on average, on every position of a periodic launch pattern") {
  uint32_t draw = 1;
  for (int i = 0; i < 1000; ++i) CHECK(launchTimed(&draw, 0));  // threshold 0: every call, no draw
  CHECK(draw == 1);
  for (const uint32_t n : {2u, 16u, 1024u}) {
    const uint32_t threshold = UINT32_MAX / n;
    constexpr uint32_t kCalls = 4'000'000, kPeriod = 8;  // e.g. a step of 8 launches
    uint32_t timed[kPeriod] = {};
    draw = 0x12345u;
    for (uint32_t i = 0; i < kCalls; ++i) timed[i % kPeriod] += launchTimed(&draw, threshold) ? 1 : 0;
    CHECK(draw != 0);
    uint64_t all = 0;
    const double expected = double(kCalls) / kPeriod / n;
    for (uint32_t p = 0; p < kPeriod; ++p) {
      all += timed[p];
      // Each position within 6 standard deviations of the binomial (and never 0 or every time).
      CHECK(std::abs(timed[p] - expected) < 6 * std::sqrt(expected));
    }
    CHECK(std::abs(double(all) - double(kCalls) / n) < 6 * std::sqrt(double(kCalls) / n));
  }
}

TEST_CASE("KCOUNT_LAUNCH_TIMING=16 (summary mode): every launch counted, launch CPU estimated from 1 in 16") {
  REQUIRE(installFakeNvtx() == 1);
  Session& session = Session::get();
  REQUIRE(session.config().launch_timing == 16);  // the test driver set KCOUNT_LAUNCH_TIMING=16
  setLaunchTiming(session.config().launch_timing);  // what InitializeInjection does
  CHECK(pushA("loop") == 0);
  REQUIRE(session.recording());
  initLaunchApiNames(session.strings());

  // 16,000 calls that each spend at least 2 us inside. This thread's draw is known (its seed and the
  // sequence, inject/callbacks.h), so each call goes into range "timed" or "untimed" by whether the library
  // will time it: the untimed range must get no launch CPU at all, the timed one each call's time 16 times,
  // which lies between 16 x 2 us per call and 16 x what the test measured around the call (the library's
  // enter..exit lies inside the test's window, preempted or not: the bounds hold on a loaded machine).
  constexpr uint32_t kLaunches = 16000, kSpinNs = 2000;
  uint32_t draw = launchTimingSeed(static_cast<uint32_t>(syscall(SYS_gettid)));
  const uint32_t threshold = UINT32_MAX / 16;
  uint64_t timed_calls = 0, timed_measured_ns = 0;
  for (uint32_t i = 0; i < kLaunches; ++i) {
    const bool timed = launchTimed(&draw, threshold);
    CHECK(pushA(timed ? "timed" : "untimed") >= 1);
    const uint64_t ns = timedLaunch(1 + i, kSpinNs);
    pop();
    if (timed) {
      ++timed_calls;
      timed_measured_ns += ns;
    }
  }
  CHECK(pop() == 0);

  session.finish(nullptr);
  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.complete);
  CHECK(log.summary_mode);
  CHECK(log.meta("launch_timing_sample") == "16");
  const Summary s = summarize(log);
  CHECK(s.launches == kLaunches);
  const RangeStats* timed = rangeAt(log, s, "loop/timed");
  const RangeStats* untimed = rangeAt(log, s, "loop/untimed");
  REQUIRE(timed != nullptr);
  REQUIRE(untimed != nullptr);
  // About 1 in 16 (the draw's rate is tested above); every launch counted where it was made.
  CHECK(timed_calls > kLaunches / 32);
  CHECK(timed_calls < kLaunches / 8);
  CHECK(timed->launches == timed_calls);
  CHECK(untimed->launches == kLaunches - timed_calls);
  CHECK(untimed->launch_api_ns == 0);
  INFO("timed calls ", timed_calls, ": estimate ", timed->launch_api_ns, " ns, test's windows x16 ",
       16 * timed_measured_ns, " ns");
  CHECK(timed->launch_api_ns >= 16 * timed_calls * kSpinNs);
  // 1 % for the conversion of the library's clock (TSC ticks) to ns.
  CHECK(double(timed->launch_api_ns) <= 16.0 * double(timed_measured_ns) * 1.01);
}
