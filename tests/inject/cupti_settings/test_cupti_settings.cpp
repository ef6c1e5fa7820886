// InitializeInjection's settings wiring, read from the environment (cupti_settings/main.cpp) rather than set
// through the handlers' setters: KCOUNT_START=paused with KCOUNT_GPU_TIME=0 subscribes for the graph exec
// callbacks only (the graph watch) until a window opens, KCOUNT_GPU_TIME=0 enables no activity and names
// kernels at their launch, KCOUNT_LAUNCH_TIMING=4 times one launch call in four, KCOUNT_LAUNCH_CALLBACKS=driver
// enables the driver's launch ids only; the window's close returns
// to the graph watch (neither finalizing nor unsubscribing, whatever KCOUNT_CUPTI_FINALIZE=0 says), and
// KCOUNT_YIELD's release of the watch unsubscribes. A stub CUPTI (no GPU).
#include <cupti.h>
#include <doctest/doctest.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <map>
#include <string>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "inject/callbacks.h"
#include "inject/cupti_attach.h"
#include "inject/launch_path.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/session_log_path.h"
#include "tests/support/stub_cupti.h"

extern "C" int InitializeInjection(void);

using namespace kc;
using namespace kc::inject;
using namespace kc::test;

// The (domain, cbid) pairs the stub has enabled that are launch callbacks of kcount's table (of `domain`
// only, unless it is CUPTI_CB_DOMAIN_INVALID).
size_t launchCallbacksEnabled(CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_INVALID) {
  size_t n = 0, on = 0;
  const LaunchApi* apis = launchApis(&n);
  for (size_t i = 0; i < n; ++i)
    if (domain == CUPTI_CB_DOMAIN_INVALID || apis[i].domain == domain)
      on += g_stub.callbacks_enabled.count({apis[i].domain, apis[i].cbid});
  return on;
}
size_t launchApisOf(CUpti_CallbackDomain domain) {
  size_t n = 0, of = 0;
  const LaunchApi* apis = launchApis(&n);
  for (size_t i = 0; i < n; ++i) of += apis[i].domain == domain ? 1 : 0;
  return of;
}
bool graphExecCallbacksEnabled() {
  return g_stub.callbacks_enabled.count({CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED}) == 1 &&
         g_stub.callbacks_enabled.count({CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING}) == 1 &&
         g_stub.callbacks_enabled.count({CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2}) == 1;
}

TEST_CASE("KCOUNT_START=paused, KCOUNT_GPU_TIME=0: InitializeInjection subscribes for graph exec callbacks only") {
  CHECK(InitializeInjection() == 1);
  CHECK(g_stub.loads == 1);
  CHECK(g_stub.configured_path.empty());  // no KCOUNT_CUPTI_PATH
  Session& s = Session::get();
  CHECK(s.recording());
  CHECK_FALSE(Session::recordingNow());
  CHECK(std::string(cuptiState()) == "watching graphs (KCOUNT_GPU_TIME=0)");
  CHECK(g_stub.subscribes == 1);
  CHECK(graphExecCallbacksEnabled());
  CHECK(launchCallbacksEnabled() == 0);  // a paused process's launches reach no kcount callback
  CHECK(g_stub.activity_kinds.empty());
  CHECK(g_stub.registrations == 0);
  CHECK(launch_path::g_timing_threshold.load() == UINT32_MAX / 4);  // KCOUNT_LAUNCH_TIMING=4
  CHECK(launch_path::g_launch_names.load());                        // KCOUNT_GPU_TIME=0
}

TEST_CASE("KCOUNT_GPU_TIME=0: a window subscribes without activity; kernels are named at their launch") {
  Session& s = Session::get();
  std::string error;
  REQUIRE(s.startCapture("ctl", 0, &error));
  CHECK(std::string(cuptiState()) == "attached");
  CHECK(g_stub.subscribes == 1);  // the graph watch's subscriber
  // KCOUNT_LAUNCH_CALLBACKS=driver: every driver launch id, no runtime one.
  CHECK(launchCallbacksEnabled(CUPTI_CB_DOMAIN_DRIVER_API) == launchApisOf(CUPTI_CB_DOMAIN_DRIVER_API));
  CHECK(launchCallbacksEnabled(CUPTI_CB_DOMAIN_RUNTIME_API) == 0);
  CHECK(graphExecCallbacksEnabled());
  CHECK(g_stub.activity_kinds.empty());
  REQUIRE(installFakeNvtx() == 1);
  CHECK(pushA("layer") == 0);
  for (uint32_t c = 1; c <= 400; ++c) runtimeLaunchAsEnabled(c, c % 2 == 0 ? "_Z4evenv" : "_Z3oddv");
  CHECK(pop() == 0);
}

TEST_CASE("KCOUNT_GPU_TIME=0: the window's close returns to the graph watch; KCOUNT_YIELD releases it") {
  Session& s = Session::get();
  std::string error;
  REQUIRE(s.stopCapture("ctl", &error));
  CHECK(g_stub.unsubscribes == 0);
  CHECK(g_stub.finalizes == 0);
  CHECK(std::string(cuptiState()) == "watching graphs (KCOUNT_GPU_TIME=0)");
  CHECK(launchCallbacksEnabled() == 0);
  CHECK(graphExecCallbacksEnabled());
  CHECK(releaseGraphWatch());  // another CUPTI client subscribes (KCOUNT_YIELD)
  CHECK(g_stub.unsubscribes == 1);
  CHECK_FALSE(releaseGraphWatch());
  CHECK(std::string(cuptiState()) == "unsubscribed");
}

TEST_CASE("the log: summary mode, GPU time off, every launch counted and its kernel named") {
  Session& s = Session::get();
  s.finish(&flushActivityForExit);
  CHECK(s.closed());
  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.summary_mode);
  CHECK(log.meta("gpu_time") == "off");
  CHECK(log.meta("launch_callbacks") == "driver");
  CHECK(log.meta("cupti_path") == "/stub/libcupti.so.13");
  const Summary sum = summarize(log);
  CHECK(sum.launches == 400);
  CHECK(sum.kernels == 400);
  CHECK(sum.kernel_gpu_ns == 0);
  std::map<std::string, uint64_t> by_name;
  for (uint32_t id = 0; id < log.scopes.size(); ++id)
    for (const auto& [name_id, t] : sum.exclusive[id].by_kernel) by_name[std::string(log.str(name_id))] += t.count;
  CHECK(by_name["_Z4evenv"] == 200);
  CHECK(by_name["_Z3oddv"] == 200);
}
