// The CUPTI glue of libkcount.so driven through its real entry points with a stub CUPTI (no GPU):
// InitializeInjection with the settings read from the environment, the subscriber callback trampoline,
// the activity buffer request and completion trampolines with buffers of real CUpti_Activity* records,
// detach (finalize at the next API exit) and attach again, a fork child, and the final flush at the end of
// the process. One session per process: the test cases run in file order, each from where the last left.
#include <cupti.h>
#include <doctest/doctest.h>
#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "inject/callbacks.h"
#include "inject/cupti_attach.h"
#include "inject/cupti_trampolines.h"
#include "inject/process_end.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/session_log_path.h"
#include "tests/support/stub_cupti.h"

extern "C" int InitializeInjection(void);

using namespace kc;
using namespace kc::inject;
using namespace kc::test;

namespace {

constexpr uint64_t kMiB = 1ull << 20;
// Kernel records handed to kcount, by the buffer they came in; the log must hold every one of them.
uint64_t g_kernels_delivered = 0;

void fill(ActivityBuffer& b, uint32_t first_corr, uint32_t count, const char* name) {
  for (uint32_t c = first_corr; c < first_corr + count; ++c) {
    REQUIRE(appendRecord(b, kernelActivity(c, name, 1000ull * c)));
    ++g_kernels_delivered;
  }
}

}  // namespace

TEST_CASE("InitializeInjection loads CUPTI through the configured path and attaches a window") {
  CHECK(std::string(cuptiState()) == "not loaded");
  CHECK(Session::get().state() == SessionState::kDormant);
  CHECK(InitializeInjection() == 1);
  CHECK(g_stub.loads == 1);
  CHECK(g_stub.configured_path == "/nonexistent/stub/libcupti.so.13");  // KCOUNT_CUPTI_PATH
  REQUIRE(Session::get().recording());
  CHECK(Session::recordingNow());  // KCOUNT_START defaults to on: the first window is open
  CHECK(std::string(cuptiState()) == "attached");
  CHECK(InitializeInjection() == 1);  // the driver calls it once; a second call does nothing
  CHECK(g_stub.loads == 1);

  // What the attach asked of CUPTI: one subscriber, every launch API, the memory API found by name, the
  // graph node callbacks, the activity callbacks and kinds, the timestamp callback.
  CHECK(g_stub.subscribes == 1);
  CHECK(g_stub.registrations == 1);
  CHECK(g_stub.timestamp_registrations == 1);
  CHECK((g_stub.callback == &onCallback));
  CHECK((g_stub.requested == &onBufferRequested));
  CHECK((g_stub.completed == &onBufferCompleted));
  size_t n = 0;
  const LaunchApi* apis = launchApis(&n);
  for (size_t i = 0; i < n; ++i) CHECK(g_stub.callbacks_enabled.count({apis[i].domain, apis[i].cbid}) == 1);
  CHECK(g_stub.callbacks_enabled.count({CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020}) == 1);
  CHECK(g_stub.callbacks_enabled.count({CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED}) == 1);
  CHECK(g_stub.callbacks_enabled.count({CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED}) == 1);
  CHECK(g_stub.callbacks_enabled.size() == n + 3);
  CHECK(g_stub.activity_kinds == std::set<int>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                               CUPTI_ACTIVITY_KIND_MEMSET});
}

TEST_CASE("launches through the callback trampoline, kernels through the buffer trampolines") {
  REQUIRE(installFakeNvtx() == 1);
  CHECK(pushA("step") == 0);
  for (uint32_t c = 1; c <= 10; ++c) runtimeLaunch(c);
  // A launch captured into a graph: the node is created inside the launch call.
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, CUPTI_API_ENTER);
  graphNodeCallback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 500, 9);
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 11, CUPTI_API_EXIT);
  // A memory API call, joined to a MEMCPY record.
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 12, CUPTI_API_ENTER);
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 12, CUPTI_API_EXIT);
  CHECK(pop() == 0);
  for (uint32_t c = 13; c <= 20; ++c) runtimeLaunch(c);  // no range

  // The buffer kcount hands CUPTI has KCOUNT_ACTIVITY_BUFFER_MB's size. Two full buffers, each ending
  // with a kernel record, and CUPTI's count of records it dropped.
  ActivityBuffer first = requestBuffer();
  REQUIRE(first.buffer != nullptr);
  CHECK(first.size == 1 * kMiB);
  fill(first, 1, 5, "gemm_kernel");
  completeBuffer(first, /*dropped=*/3);
  CHECK(Session::get().counters().dropped_activity_records == 3);
  ActivityBuffer second = requestBuffer();
  CHECK(second.buffer == first.buffer);  // recycled
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.bytes = 4096;
  copy.start = 800;
  copy.end = 900;
  copy.correlationId = 12;
  REQUIRE(appendRecord(second, copy));
  fill(second, 6, 5, "elementwise_kernel");
  completeBuffer(second);
  CHECK(activityBuffers().allocated() == 1);
}

TEST_CASE("activity buffers are capped at KCOUNT_MAX_ACTIVITY_MB: the next request is refused and counted") {
  // CUPTI holds three buffers (the cap: 3 MiB of 1 MiB buffers); a fourth request gets none.
  std::vector<ActivityBuffer> held{requestBuffer(), requestBuffer(), requestBuffer()};
  for (const ActivityBuffer& b : held) REQUIRE(b.buffer != nullptr);
  CHECK(activityBuffers().allocated() == 3);
  const uint64_t refused_before = Session::get().counters().activity_buffers_refused;
  ActivityBuffer refused = requestBuffer();
  CHECK(refused.buffer == nullptr);
  CHECK(refused.size == 0);
  CHECK(Session::get().counters().activity_buffers_refused == refused_before + 1);
  // Their records come at the next forced flush: the window's close.
  fill(held[0], 13, 4, "late_kernel");
  fill(held[1], 17, 4, "late_kernel");
  holdBuffer(held[0]);
  holdBuffer(held[1]);
  holdBuffer(held[2]);  // empty
  // A buffer kcount never handed out (another CUPTI client's) is read but not taken into the pool.
  alignas(8) static uint8_t foreign[256];
  ActivityBuffer other{foreign, sizeof(foreign), 0};
  completeBuffer(other);
  CHECK(activityBuffers().allocated() == 3);
}

TEST_CASE("a window closing detaches CUPTI; it is finalized at the next API exit; a new window attaches again") {
  Session& s = Session::get();
  const int flushes = g_stub.flushes;
  std::string error;
  REQUIRE(s.stopCapture("ctl", &error));
  CHECK(g_stub.flushes >= flushes + 2);  // the held buffers came back before activity was disabled
  CHECK(g_stub.activity_kinds.empty());
  CHECK(std::string(cuptiState()) == "finalize pending");
  CHECK(g_stub.domains_enabled[CUPTI_CB_DOMAIN_RUNTIME_API] == 1);
  CHECK(g_stub.domains_enabled[CUPTI_CB_DOMAIN_DRIVER_API] == 1);
  CHECK(g_stub.domains_enabled[CUPTI_CB_DOMAIN_RESOURCE] == 0);
  // Any API's enter does nothing; its exit finalizes CUPTI. Nothing of that call is recorded.
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 90, CUPTI_API_ENTER);
  CHECK(g_stub.finalizes == 0);
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 90, CUPTI_API_EXIT);
  CHECK(g_stub.finalizes == 1);
  CHECK(std::string(cuptiState()) == "finalized");

  // After cuptiFinalize CUPTI numbers correlation ids from 1 again: the new window's launches 1..4 and their
  // kernels join each other, not the first window's.
  REQUIRE(s.startCapture("ctl", 0, &error));
  CHECK(std::string(cuptiState()) == "attached");
  CHECK(g_stub.subscribes == 2);
  CHECK(g_stub.registrations == 2);  // finalized: the activity callbacks are registered again
  CHECK(g_stub.activity_kinds.size() == 3);
  CHECK(pushA("after") == 0);
  for (uint32_t c = 1; c <= 4; ++c) runtimeLaunch(c);
  CHECK(pop() == 0);
  ActivityBuffer b = requestBuffer();
  REQUIRE(b.buffer != nullptr);
  fill(b, 1, 2, "second_window_kernel");
  completeBuffer(b);
  ActivityBuffer last = requestBuffer();  // the rest comes with the final flush at the end of the process
  REQUIRE(last.buffer != nullptr);
  fill(last, 3, 2, "second_window_kernel");
  holdBuffer(last);
}

TEST_CASE("a fork child records nothing and leaves the parent's session alone") {
  fflush(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The after-fork hook ran: the child's session is disabled and its launches are not recorded.
    const bool ok = Session::get().state() == SessionState::kDisabled && !Session::recordingNow();
    runtimeLaunch(77);
    finishBeforeProcessEnds();  // nothing in a fork child
    syscall(SYS_exit_group, ok ? 0 : 1);
  }
  int status = -1;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(Session::get().recording());
  CHECK(Session::recordingNow());
}

TEST_CASE("the end of the process flushes CUPTI and every record of every buffer is in the log") {
  finishBeforeProcessEnds();  // what _exit, exec and a signal sent to itself run
  Session& s = Session::get();
  CHECK(s.state() == SessionState::kFinished);
  CHECK(s.closed());
  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.complete);
  CHECK(log.meta("cupti_path") == "/stub/libcupti.so.13");
  CHECK(log.meta("kernel_clock") == "CLOCK_MONOTONIC (CUPTI timestamp callback)");
  CHECK(log.stats.dropped_activity_records == 3);
  CHECK(log.stats.activity_buffers_refused == 1);
  CHECK(log.segments.size() == 2);
  CHECK(log.kernels.size() == g_kernels_delivered);
  const Summary sum = summarize(log);
  CHECK(sum.launches == 19 + 4);  // 1..11 and 13..20, then 1..4 (12 is a memory call)
  CHECK(sum.kernels == g_kernels_delivered);
  CHECK(sum.unmatched_kernels == 0);
  CHECK(sum.launches_without_kernel == 0);  // the captured launch runs nothing by design
  CHECK(sum.captured_launches == 1);
  CHECK(sum.mem_ops == 1);
  const RangeStats* step = rangeAt(log, sum, "step");
  const RangeStats* after = rangeAt(log, sum, "after");
  REQUIRE(step != nullptr);
  REQUIRE(after != nullptr);
  CHECK(step->launches == 11);
  CHECK(step->kernels == 10);
  CHECK(after->launches == 4);
  CHECK(after->kernels == 4);
}
