// A log at its size cap (KCOUNT_MAX_BYTES, one file) when the process exits: the kernels CUPTI delivers in
// the final flush (a program that exits without synchronizing) arrive while the capture window closes and
// are held, then written at the close. They must not share the final chunk: that chunk (Segment, Stats,
// End) has to fit in the writer's tail reserve, or the log loses its Stats and End records and reads as
// cut off. Records built from the real CUPTI and NVTX3 structs, driven through the library's handlers.
#include <cupti.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <sys/stat.h>

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

constexpr uint32_t kLaunches = 3000;
std::vector<std::string> g_names;

// What cuptiActivityFlushAll delivers at exit: one kernel per launch, varied names and times (so that the
// chunk holding them does not compress into the tail reserve by accident).
void deliverKernelsAtExit() {
  std::vector<CUpti_ActivityKernel10> records(kLaunches);
  std::vector<const CUpti_Activity*> ptrs;
  uint64_t t = 1'000'000;
  for (uint32_t i = 0; i < kLaunches; ++i) {
    CUpti_ActivityKernel10& k = records[i];
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = i + 1;
    k.name = g_names[i % g_names.size()].c_str();
    t += 1000 + (i * 7919u) % 4093u;
    k.start = t;
    k.end = t + 500 + (i * 104729u) % 8191u;
    k.streamId = 7 + i % 3;
    k.gridX = 1 + i % 257;
    k.gridY = k.gridZ = 1;
    k.blockX = 128;
    k.blockY = k.blockZ = 1;
    ptrs.push_back(reinterpret_cast<const CUpti_Activity*>(&k));
  }
  onActivityRecords(ptrs.data(), ptrs.size());
}

}  // namespace

TEST_CASE("capped log at exit: kernels flushed at exit are counted, the log still ends with Stats and End") {
  for (int i = 0; i < 40; ++i) g_names.push_back("kernel_" + std::to_string(i * 7919));
  REQUIRE(installFakeNvtx() == 1);
  Session& session = Session::get();
  CHECK(pushA("step") == 0);  // the first range starts recording
  REQUIRE(session.recording());
  for (uint32_t c = 1; c <= kLaunches; ++c)
    launchCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, c);
  CHECK(pop() == 0);
  session.flushNow();  // the launches reach the writer (and the cap) before the exit
  session.finish(&deliverKernelsAtExit);
  REQUIRE(session.state() == SessionState::kFinished);

  struct stat st{};
  REQUIRE(stat(g_log_path.c_str(), &st) == 0);
  CHECK(st.st_size <= 4096);
  const LogData log = readLogFile(g_log_path);
  INFO("log issues: " << log.issues.size());
  CHECK(log.complete);  // the End record is there
  REQUIRE(log.has_stats);
  REQUIRE(log.has_not_written_stats);
  CHECK(log.stats.kernels == kLaunches);  // taken: every kernel, held at the close
  CHECK(log.stats.launches == kLaunches);
  CHECK(log.stats.not_written_kernels > 0);
  // What the log holds plus what it says was not written is what the library took.
  CHECK(log.kernels.size() + log.stats.not_written_kernels == kLaunches);
  CHECK(log.launches.size() + log.stats.not_written_launches == kLaunches);
}
