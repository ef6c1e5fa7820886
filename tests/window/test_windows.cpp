// Capture windows through the library's real handlers, with launches, kernels and ranges built from the
// real CUPTI and NVTX3 structs: records outside a window never reach the log (by correlation id), a
// window opened inside a range credits launches to it, capture ranges count occurrences in any domain
// and across threads, stale per-thread launch state is reset by a new window, durations close windows.
#include <cupti.h>
#include <doctest/doctest.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <mutex>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "inject/callbacks.h"
#include "inject/session.h"

extern std::string g_log_path;
extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t);

namespace {

using namespace kc;
using namespace kc::inject;

NvtxFunctionPointer g_core_slots[NVTX_CBID_CORE_SIZE + 1];
NvtxFunctionPointer* g_core[NVTX_CBID_CORE_SIZE + 1];
NvtxFunctionPointer g_core2_slots[NVTX_CBID_CORE2_SIZE + 1];
NvtxFunctionPointer* g_core2[NVTX_CBID_CORE2_SIZE + 1];

int NVTX_API getModuleFunctionTable(NvtxCallbackModule module, NvtxFunctionTable* out, unsigned int* size) {
  if (module == NVTX_CB_MODULE_CORE) {
    *out = g_core;
    *size = NVTX_CBID_CORE_SIZE;
    return 1;
  }
  if (module == NVTX_CB_MODULE_CORE2) {
    *out = g_core2;
    *size = NVTX_CBID_CORE2_SIZE;
    return 1;
  }
  return 0;
}
const NvtxExportTableCallbacks g_callbacks{sizeof(NvtxExportTableCallbacks), &getModuleFunctionTable};
const void* NVTX_API getExportTable(uint32_t id) { return id == NVTX_ETID_CALLBACKS ? &g_callbacks : nullptr; }

int pushA(const char* m) { return reinterpret_cast<nvtxRangePushA_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangePushA])(m); }
int pop() { return reinterpret_cast<nvtxRangePop_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangePop])(); }
nvtxDomainHandle_t domainCreate(const char* n) {
  return reinterpret_cast<nvtxDomainCreateA_impl_fntype>(g_core2_slots[NVTX_CBID_CORE2_DomainCreateA])(n);
}
nvtxStringHandle_t registerString(nvtxDomainHandle_t d, const char* s) {
  return reinterpret_cast<nvtxDomainRegisterStringA_impl_fntype>(g_core2_slots[NVTX_CBID_CORE2_DomainRegisterStringA])(d, s);
}
int domainPush(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return reinterpret_cast<nvtxDomainRangePushEx_impl_fntype>(g_core2_slots[NVTX_CBID_CORE2_DomainRangePushEx])(d, a);
}
int domainPop(nvtxDomainHandle_t d) {
  return reinterpret_cast<nvtxDomainRangePop_impl_fntype>(g_core2_slots[NVTX_CBID_CORE2_DomainRangePop])(d);
}

void enter(uint64_t corr) {
  CUpti_CallbackData d{};
  d.correlationId = static_cast<uint32_t>(corr);
  d.callbackSite = CUPTI_API_ENTER;
  onLaunchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &d);
}
void exit_(uint64_t corr) {
  CUpti_CallbackData d{};
  d.correlationId = static_cast<uint32_t>(corr);
  d.callbackSite = CUPTI_API_EXIT;
  onLaunchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &d);
}
void launch(uint64_t corr) {
  enter(corr);
  exit_(corr);
}

void deliver(const std::vector<uint64_t>& corrs) {
  std::vector<CUpti_ActivityKernel10> records(corrs.size());
  std::vector<const CUpti_Activity*> ptrs;
  for (size_t i = 0; i < corrs.size(); ++i) {
    records[i].kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    records[i].correlationId = static_cast<uint32_t>(corrs[i]);
    records[i].name = "k";
    records[i].start = 1000 * corrs[i];
    records[i].end = records[i].start + 10;
    ptrs.push_back(reinterpret_cast<const CUpti_Activity*>(&records[i]));
  }
  onActivityRecords(ptrs.data(), ptrs.size());
}

// CUPTI attach/detach stand-ins: detach plays what CUPTI's forced flush delivers at a stop.
std::atomic<int> g_attached{0}, g_detached{0};
std::vector<uint64_t> g_on_detach_exit;     // launch exits that arrive after the gate closed
std::vector<uint64_t> g_on_detach_kernels;  // kernel records the final flush delivers
std::atomic<bool> g_cupti_finalized{false};  // attach after a finalize: CUPTI's ids start again
bool testAttach() {
  ++g_attached;
  if (g_cupti_finalized.exchange(false)) Session::get().beginCorrelationNumbering();
  return true;
}
std::mutex g_launch_mutex;            // window 4: one launch and its kernel at a time
std::atomic<bool> g_detach_waits{false};
uint64_t g_next_corr = 1000;          // guarded by g_launch_mutex
void testDetach() {
  ++g_detached;
  if (g_detach_waits) std::lock_guard<std::mutex> wait(g_launch_mutex);
  for (uint64_t c : g_on_detach_exit) exit_(c);
  deliver(g_on_detach_kernels);
  g_on_detach_exit.clear();
  g_on_detach_kernels.clear();
}

std::set<uint64_t> corrsOf(const std::vector<LaunchBody>& v) {
  std::set<uint64_t> s;
  for (const auto& l : v) s.insert(l.correlation_id);
  return s;
}
std::set<uint64_t> corrsOf(const std::vector<KernelBody>& v) {
  std::set<uint64_t> s;
  for (const auto& k : v) s.insert(k.correlation_id);
  return s;
}
// Summed over the scopes with that path (a range of another domain with the same name is another scope).
uint64_t instancesOf(const LogData& log, const Summary& s, const std::string& path) {
  uint64_t n = 0;
  for (uint32_t id = 0; id < log.scopes.size(); ++id)
    if (log.scopePath(id) == path) n += s.inclusive[id].instances;
  return n;
}
const RangeStats& statsOf(const LogData& log, const Summary& s, const std::string& path) {
  static const RangeStats none;
  for (uint32_t id = 0; id < log.scopes.size(); ++id)
    if (log.scopePath(id) == path) return s.exclusive[id];
  return none;
}
uint64_t launchesOf(const LogData& log, const Summary& s, const std::string& path) {
  return statsOf(log, s, path).launches;
}

}  // namespace

TEST_CASE("capture windows: only records of launches inside a window reach the log") {
  for (unsigned i = 0; i <= NVTX_CBID_CORE_SIZE; ++i) g_core[i] = &g_core_slots[i];
  for (unsigned i = 0; i <= NVTX_CBID_CORE2_SIZE; ++i) g_core2[i] = &g_core2_slots[i];
  REQUIRE(InitializeInjectionNvtx2(&getExportTable) == 1);
  Session& s = Session::get();
  s.setCaptureHooks(&testAttach, &testDetach);
  initLaunchApiNames(s.strings());
  std::string error;

  // Paused: the range stack is kept, nothing is recorded.
  CHECK(pushA("boot") == 0);
  REQUIRE(s.recording());
  CHECK_FALSE(Session::recordingNow());
  CHECK(s.modeName() == "paused");
  launch(1);
  deliver({1});
  enter(9);  // a launch call in flight when the window opens

  // Window 0 (ctl): opened inside "boot".
  REQUIRE(s.startCapture("ctl", 0, &error));
  CHECK(g_attached == 1);
  CHECK(Session::recordingNow());
  CHECK_FALSE(s.startCapture("ctl", 0, &error));  // one window at a time
  exit_(9);  // its enter was not recorded: not recorded either
  CHECK(pushA("step") == 1);
  for (uint64_t c = 10; c <= 14; ++c) launch(c);
  deliver({8, 10, 11});  // 8: launched before the window
  enter(15);             // its exit comes after the gate closed, before CUPTI is detached
  g_on_detach_exit = {15};
  g_on_detach_kernels = {9, 12, 13, 14, 15, 16};  // 9: enter before the window; 16: launched after it
  REQUIRE(s.stopCapture("ctl", &error));
  CHECK(g_detached == 1);
  CHECK_FALSE(Session::recordingNow());
  CHECK(pop() == 1);  // step closes while paused: not written
  launch(17);
  deliver({17});
  CHECK_FALSE(s.stopCapture("ctl", &error));
  CHECK(error == "no capture window is open");

  // Window 1: 9 launch calls left open (deeper than the 8 tracked); window 2 must start clean.
  REQUIRE(s.startCapture("ctl", 0, &error));
  for (uint64_t c = 20; c < 29; ++c) enter(c);
  REQUIRE(s.stopCapture("ctl", &error));
  REQUIRE(s.startCapture("ctl", 0, &error));
  launch(40);
  deliver({40});
  REQUIRE(s.stopCapture("ctl", &error));

  // Window 3: capture range "step", occurrences 3-5, counted in any domain.
  REQUIRE(s.armRange("step", 2, 3, 0, &error));
  CHECK_FALSE(s.startCapture("ctl", 0, &error));  // armed: a ctl window would collide
  nvtxDomainHandle_t dom = domainCreate("mylib");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = registerString(dom, "step");
  for (uint64_t i = 0; i < 8; ++i) {
    const bool in_domain = i % 2 == 1;
    if (in_domain)
      domainPush(dom, &attr);
    else
      pushA("step");
    pushA("inner");
    launch(100 + i);
    deliver({100 + i});
    pop();
    if (in_domain)
      domainPop(dom);
    else
      pop();
  }
  CHECK_FALSE(s.windowOpen());
  CHECK(s.triggerNameId() == 0);  // fires once

  // Window 4: capture range over 4 threads; kernels of launches outside the window must not appear.
  // As in CUPTI, correlation ids increase process-wide in the order of the API calls; the stand-in for
  // CUPTI's buffer thread delivers each kernel right after its launch, and the final flush at a stop
  // (the detach hook) waits for launches under way, as the real one waits for queued GPU work.
  REQUIRE(s.armRange("tstep", 10, 20, 0, &error));
  g_detach_waits = true;
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (uint64_t i = 0; i < 50; ++i) {
        pushA("tstep");
        {
          std::lock_guard<std::mutex> lock(g_launch_mutex);
          const uint64_t c = g_next_corr++;
          launch(c);
          deliver({c});
        }
        pop();
      }
    });
  }
  for (auto& th : threads) th.join();
  g_detach_waits = false;
  CHECK_FALSE(s.windowOpen());

  // Window 5: closes by its duration (the writer thread sleeps until the deadline).
  REQUIRE(s.startCapture("ctl", 300000000ull, &error));
  launch(9000);
  deliver({9000});
  for (int i = 0; i < 150 && s.windowOpen(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(s.windowOpen());
  launch(9001);
  deliver({9001});

  // Window 6: asked for from a context that must not take locks (another CUPTI subscriber left, with
  // KCOUNT_YIELD): the writer thread opens it within 100 ms.
  s.requestResume("resume after yield");
  for (int i = 0; i < 50 && !s.windowOpen(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(s.windowOpen());
  launch(9500);
  deliver({9500});
  REQUIRE(s.stopCapture("yield", &error));

  // Window 7: CUPTI was finalized after window 6 and numbers its correlation ids again, here from where
  // window 0 began (on the H200 a window after a finalize started again at 1).
  g_cupti_finalized = true;
  REQUIRE(s.startCapture("ctl", 0, &error));
  CHECK(pushA("again") == 1);
  for (uint64_t c = 10; c <= 14; ++c) launch(c);
  deliver({10, 11, 12, 13, 14});
  CHECK(pop() == 1);
  REQUIRE(s.stopCapture("ctl", &error));

  CHECK(pop() == 0);  // boot
  s.finish(nullptr);
  CHECK(g_attached == 8);
  CHECK(g_detached == 8);

  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.minor == kc::kLogMinor);
  REQUIRE(log.segments.size() == 8);
  for (uint32_t i = 0; i < 8; ++i) CHECK(log.segments[i].index == i);

  // Window 0.
  const SegmentBody& w0 = log.segments[0];
  CHECK(log.str(w0.reason_id) == "ctl");
  CHECK(log.str(w0.end_reason_id) == "ctl");
  CHECK(w0.first_correlation_id == 10);
  CHECK(w0.last_correlation_id == 15);
  CHECK((w0.flags & kSegmentActivityDiscarded) != 0);
  const LogData p0 = selectSegment(log, 0);
  CHECK(corrsOf(p0.launches) == std::set<uint64_t>{10, 11, 12, 13, 14, 15});
  CHECK(corrsOf(p0.kernels) == std::set<uint64_t>{10, 11, 12, 13, 14, 15});
  const Summary sum0 = summarize(p0);
  CHECK(launchesOf(p0, sum0, "boot/step") == 6);  // credited to the ranges open before the window
  CHECK(sum0.unmatched_kernels == 0);
  CHECK(p0.ranges.empty());  // step closed after the window

  // Nothing outside a window anywhere in the log.
  const std::set<uint64_t> all_launches = corrsOf(log.launches), all_kernels = corrsOf(log.kernels);
  for (uint64_t c : {1, 8, 9, 16, 17, 9001}) {
    CHECK(all_launches.count(c) == 0);
    CHECK(all_kernels.count(c) == 0);
  }

  // Windows 1 and 2: the stale open calls of window 1 did not leak into window 2.
  CHECK(log.segments[1].first_correlation_id == 0);  // no launch completed in window 1
  const LogData p2 = selectSegment(log, 2);
  CHECK(corrsOf(p2.launches) == std::set<uint64_t>{40});
  CHECK(corrsOf(p2.kernels) == std::set<uint64_t>{40});

  // Window 3: occurrences 3, 4, 5 of "step" (default, mylib, default domain).
  const SegmentBody& w3 = log.segments[3];
  CHECK(log.str(w3.reason_id) == "capture-range step 3-5");
  CHECK(log.str(w3.end_reason_id) == "range end");
  const LogData p3 = selectSegment(log, 3);
  CHECK(corrsOf(p3.launches) == std::set<uint64_t>{102, 103, 104});
  CHECK(corrsOf(p3.kernels) == std::set<uint64_t>{102, 103, 104});
  const Summary sum3 = summarize(p3);
  CHECK(instancesOf(p3, sum3, "boot/step") == 3);  // "boot" is still open
  CHECK(instancesOf(p3, sum3, "boot/step/inner") == 3);

  // Window 4: threads. Every kernel in the window has its launch; none outside the window's ids.
  const SegmentBody& w4 = log.segments[4];
  CHECK(log.str(w4.reason_id) == "capture-range tstep 11-30");
  const LogData p4 = selectSegment(log, 4);
  const Summary sum4 = summarize(p4);
  CHECK(sum4.unmatched_kernels == 0);
  CHECK(sum4.kernels == sum4.launches);
  CHECK(sum4.launches >= 1);
  CHECK(corrsOf(log.kernels) == corrsOf(log.launches));  // over the whole log too

  // Window 5: duration.
  CHECK(log.str(log.segments[5].end_reason_id) == "duration");
  {
    // Its length: the 300 ms asked for, closed by the writer at the deadline (before, at its next 100 ms
    // drain: up to 100 ms late). 80 ms of slack for a loaded or instrumented (TSan) run.
    const uint64_t len = log.segments[5].stop_ns - log.segments[5].start_ns;
    INFO("window 5 lasted " << len << " ns");
    CHECK(len >= 300000000ull);
    CHECK(len < 380000000ull);
  }
  CHECK(corrsOf(selectSegment(log, 5).launches) == std::set<uint64_t>{9000});

  // Totals per window as the tools show them.
  // Window 7: CUPTI's ids 10-14 again, after the largest id taken before (9500): unique in the log, and
  // each kernel joins its own launch in "again", not window 0's launches in "boot/step".
  const SegmentBody& w7 = log.segments[7];
  CHECK(w7.first_correlation_id == 9500 + 10);
  CHECK(w7.last_correlation_id == 9500 + 14);
  const LogData p7 = selectSegment(log, 7);
  CHECK(corrsOf(p7.launches) == std::set<uint64_t>{9510, 9511, 9512, 9513, 9514});
  CHECK(corrsOf(p7.kernels) == corrsOf(p7.launches));
  const Summary whole = summarize(log);
  CHECK(whole.unmatched_kernels == 0);
  CHECK(launchesOf(log, whole, "boot/again") == 5);
  CHECK(statsOf(log, whole, "boot/again").kernels == 5);
  CHECK(statsOf(log, whole, "boot/step").kernels == 6);  // window 0's, no more
  std::set<uint64_t> seen;
  for (const LaunchBody& l : log.launches) CHECK(seen.insert(l.correlation_id).second);

  const auto totals = segmentTotals(log);
  REQUIRE(totals.size() == 8);
  CHECK(totals[7].kernels == 5);
  CHECK(totals[6].reason == "resume after yield");
  CHECK(totals[6].end_reason == "yield");
  CHECK(totals[6].kernels == 1);
  CHECK(totals[0].kernels == 6);
  CHECK(totals[3].kernels == 3);
  CHECK(s.counters().activity_outside_windows.load() >= 5);  // 1, 8, 9, 16, 17 at least
}
