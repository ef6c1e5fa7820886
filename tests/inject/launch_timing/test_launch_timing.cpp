// KCOUNT_LAUNCH_TIMING=N through the library's real handlers (no GPU, summary mode): every launch is
// counted, one call in N (at random) is timed, and the launch CPU sums are the timed calls counted N
// times. One session per process: the session test is one test case.
#include <cupti.h>
#include <doctest/doctest.h>

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
  CUpti_CallbackData d{};
  d.correlationId = corr;
  d.callbackSite = CUPTI_API_ENTER;
  const auto t0 = Clock::now();
  onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &d);
  CUpti_CallbackData inner = d;
  onLaunchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &inner);
  spin(ns);
  inner.callbackSite = CUPTI_API_EXIT;
  onLaunchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &inner);
  d.callbackSite = CUPTI_API_EXIT;
  onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &d);
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

  // 16,000 calls of about 2 us: about 1,000 timed. The estimate's spread is the binomial's (about 3 %)
  // plus the calls' own spread; the bounds leave room for preemption on a loaded machine.
  constexpr uint32_t kLaunches = 16000;
  uint64_t measured_ns = 0;
  for (uint32_t i = 0; i < kLaunches; ++i) measured_ns += timedLaunch(1 + i, 2000);
  CHECK(pop() == 0);
  CHECK(pushA("short") == 0);  // 5 calls: most likely none timed; counted all the same
  for (uint32_t i = 0; i < 5; ++i) timedLaunch(100000 + i, 0);
  CHECK(pop() == 0);

  session.finish(nullptr);
  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.complete);
  CHECK(log.summary_mode);
  CHECK(log.meta("launch_timing_sample") == "16");
  const Summary s = summarize(log);
  CHECK(s.launches == kLaunches + 5);
  const RangeStats* loop = rangeAt(log, s, "loop");
  REQUIRE(loop != nullptr);
  CHECK(loop->launches == kLaunches);
  // The estimate: the timed calls' durations, each counted 16 times.
  const double ratio = double(loop->launch_api_ns) / double(measured_ns);
  INFO("estimated ", loop->launch_api_ns, " ns against ", measured_ns, " ns measured by the test");
  CHECK(ratio > 0.75);
  CHECK(ratio < 1.35);
  const RangeStats* shorter = rangeAt(log, s, "short");
  REQUIRE(shorter != nullptr);
  CHECK(shorter->launches == 5);
}
