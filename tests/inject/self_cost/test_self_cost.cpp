// kcount's own cost through the library's real handlers (no GPU): every launch API enter and exit, NVTX
// push, pop, start and end and graph node callback on the program's threads counts once in the closed log's
// kcount_callbacks, whether its thread exited before the close or not, and the timed sample is the one the
// threads' draws pick (inject/self_cost.h). One session per process: the session test is one test case.
#include <cupti.h>
#include <doctest/doctest.h>
#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "collector/log_reader.h"
#include "collector/self_cost.h"
#include "inject/callbacks.h"
#include "inject/self_cost.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/launch_calls.h"
#include "tests/support/session_log_path.h"

namespace {

using namespace kc;
using namespace kc::inject;
using namespace kc::test;

uint32_t threadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// How many of a thread's first `callbacks` callbacks its draw times (the library's own draw, replayed).
uint64_t timedOf(uint32_t thread_id, uint64_t callbacks) {
  uint32_t draw = selfCostSeed(thread_id);
  uint64_t timed = 0;
  for (uint64_t i = 0; i < callbacks; ++i) timed += launchTimed(&draw, UINT32_MAX / kSelfCostSample) ? 1 : 0;
  return timed;
}

nvtxRangeId_t startA(const char* m) {
  return reinterpret_cast<nvtxRangeStartA_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangeStartA])(m);
}
void end(nvtxRangeId_t id) { reinterpret_cast<nvtxRangeEnd_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangeEnd])(id); }

// `n` driver launches (enter and exit: 2 callbacks each) with correlation ids from `first`.
void launches(uint32_t first, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    launchCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, first + i);
}

}  // namespace

TEST_CASE("kcount's own cost: every callback on the program's threads counted, a random sample timed") {
  REQUIRE(installFakeNvtx() == 1);
  Session& session = Session::get();
  CHECK(pushA("outer") == 0);  // the first range starts recording
  REQUIRE(session.recording());
  initLaunchApiNames(session.strings());
  uint64_t main_callbacks = 1;

  // Main thread: 20,000 ranges around a launch (push, enter, exit, pop), 1,000 runtime launches with the
  // driver call inside (4 callbacks each), 500 start/end ranges, a cloned graph node, a pop with nothing
  // pushed (counted: the handler ran).
  constexpr uint32_t kRanges = 20000, kNested = 1000, kStarted = 500;
  for (uint32_t i = 0; i < kRanges; ++i) {
    pushA("step");
    launchCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 1 + i);
    pop();
  }
  main_callbacks += 4 * kRanges;
  for (uint32_t i = 0; i < kNested; ++i)
    launchCall(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 100000 + i, nullptr,
               /*nested_driver=*/true);
  main_callbacks += 4 * kNested;
  for (uint32_t i = 0; i < kStarted; ++i) end(startA("io"));
  main_callbacks += 2 * kStarted;
  onGraphNode(GraphNodeBody{600, 500, 0, 8, 0, 0, 0}, /*created=*/false);
  CHECK(pop() == 0);
  CHECK(pop() == -1);
  main_callbacks += 3;
  const uint64_t main_timed = timedOf(threadId(), main_callbacks);

  // A thread that exits before the log is closed (its buffer is freed by the writer) and one still alive
  // when it is closed.
  constexpr uint32_t kExited = 30000, kLive = 10000;
  uint32_t exited_tid = 0, live_tid = 0;
  std::thread([&] {
    exited_tid = threadId();
    launches(200000, kExited);
  }).join();
  session.flushNow();  // the writer frees the exited thread's buffer
  std::mutex m;
  std::condition_variable cv;
  bool launched = false, closed = false;
  std::thread live([&] {
    live_tid = threadId();
    pushA("live");
    launches(300000, kLive);
    pop();
    std::unique_lock<std::mutex> lock(m);
    launched = true;
    cv.notify_all();
    cv.wait(lock, [&] { return closed; });
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return launched; });
  }
  session.finish(nullptr);
  {
    std::lock_guard<std::mutex> lock(m);
    closed = true;
  }
  cv.notify_all();
  live.join();

  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.complete);
  const uint64_t callbacks = main_callbacks + 2 * kExited + (2 + 2 * kLive);
  const uint64_t timed = main_timed + timedOf(exited_tid, 2 * kExited) + timedOf(live_tid, 2 + 2 * kLive);
  CHECK(log.meta(kMetaSelfCallbacks) == std::to_string(callbacks));
  CHECK(log.meta(kMetaSelfTimed) == std::to_string(timed));
  const std::optional<SelfCost> cost = selfCostOf(log);
  REQUIRE(cost.has_value());
  CHECK(cost->callbacks == callbacks);
  CHECK(cost->timed == timed);
  CHECK(cost->timed <= cost->callbacks);
  CHECK(cost->timed > callbacks / kSelfCostSample / 2);  // about 1 in 64: a sample of about 2,700
  CHECK(cost->timed < callbacks / kSelfCostSample * 2);
  REQUIRE(cost->estimated_ns.has_value());
  // A callback takes some ns; well under 100 µs on average even on a loaded machine.
  CHECK(cost->timed_ns > 0);
  CHECK(cost->meanNs() < 100'000);
  MESSAGE("CPU-only test figure: ", cost->callbacks, " callbacks, ", cost->timed, " timed, mean ", cost->meanNs(),
          " ns per callback, about ", *cost->estimated_ns / 1000, " µs in all");
}
