#include "inject/cupti_attach.h"

#include <cupti.h>

#include <atomic>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inject/callbacks.h"
#include "inject/cuda_driver.h"
#include "inject/cupti_api.h"
#include "inject/cupti_detach.h"
#include "inject/cupti_graphs.h"
#include "inject/cupti_trampolines.h"
#include "inject/graph_execs.h"
#include "inject/log.h"
#include "inject/session.h"

namespace kc::inject {

namespace {

CUpti_SubscriberHandle g_subscriber = nullptr;  // set while attached; attach/detach under the control lock
std::atomic<bool> g_cupti_active{false};        // attached: subscribed, callbacks and activity enabled
std::atomic<bool> g_reregister{true};           // activity callbacks to (re)register at the next attach
std::atomic<bool> g_ever_attached{false};       // for cuptiState()
std::atomic<bool> g_graph_watch{false};  // KCOUNT_GPU_TIME=0, no window: subscribed with graph exec callbacks only
thread_local bool t_keep_cupti = false;  // detach without finalizing (another subscriber is about to take CUPTI)
// Memory API callbacks found by name at the first attach, enabled at each attach.
std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>* g_memory_apis =
    new std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>();  // immortal

constexpr CUpti_ActivityKind kActivityKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_MEMSET};

// KCOUNT_GPU_TIME=graphs: one GRAPH_TRACE record per graph launch. CUPTI traces only graphs instantiated
// while it is enabled, so it stays enabled through the graph watch of a paused process.
bool graphTraceWanted() { return Session::get().config().graph_gpu_time; }

std::string failure(CUptiResult r, const char* call) {
  std::string hint;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    hint = " (another CUPTI client, e.g. torch.profiler or Nsight, already subscribed in this process)";
  return std::string(call) + " failed: " + cupti().describe(r) + hint;
}

// Finds the memcpy/memset API callbacks (runtime and driver) by name; they are enabled at each attach.
void findMemoryApis(Session& s) {
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    const uint32_t max = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                                                : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
    for (uint32_t cbid = 1; cbid < max; ++cbid) {
      const char* name = nullptr;
      if (cupti().getCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      const std::string_view n(name);
      const bool memory = n.starts_with("cudaMemcpy") || n.starts_with("cudaMemset") || n.starts_with("cuMemcpy") ||
                          n.starts_with("cuMemset");
      if (memory && registerMemoryApi(domain, cbid, name, s.strings())) g_memory_apis->emplace_back(domain, cbid);
    }
  }
}

void undoAttach() {
  for (CUpti_ActivityKind k : kActivityKinds) cupti().activityDisable(k);
  if (graphTraceWanted()) cupti().activityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  if (g_subscriber != nullptr) {
    for (CUpti_CallbackDomain d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RESOURCE})
      cupti().enableDomain(0, g_subscriber, d);
    cupti().unsubscribe(g_subscriber);
  }
  g_subscriber = nullptr;
  g_graph_watch.store(false);
}

// The callbacks of a window (launches, memory APIs, graph nodes) on or off; the graph exec callbacks of
// KCOUNT_GPU_TIME=0 stay as they are. KCOUNT_LAUNCH_CALLBACKS=driver: the runtime's launch ids are left
// off (a runtime launch calls a driver launch, whose callbacks carry the same correlation id and symbol).
CUptiResult enableWindowCallbacks(uint32_t on) {
  const CuptiApi& api = cupti();
  CUptiResult r = CUPTI_SUCCESS;
  size_t n = 0;
  const LaunchApi* apis = launchApis(&n);
  const bool driver_only = Session::get().config().driver_launch_callbacks;
  for (size_t i = 0; i < n; ++i) {
    if (driver_only && apis[i].domain == CUPTI_CB_DOMAIN_RUNTIME_API) continue;
    if ((r = api.enableCallback(on, g_subscriber, apis[i].domain, apis[i].cbid)) != CUPTI_SUCCESS) return r;
  }
  for (const auto& [domain, cbid] : *g_memory_apis)
    if ((r = api.enableCallback(on, g_subscriber, domain, cbid)) != CUPTI_SUCCESS) return r;
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED})
    if ((r = api.enableCallback(on, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid)) != CUPTI_SUCCESS) return r;
  return r;
}

// Before an attach: cancels a pending finalize (the subscriber is still there: undone, then attached as
// new), or waits for one in progress (at most 10 s) and forgets the finalized subscriber. False if the
// finalize did not end in time.
bool settleDetach() {
  if (cancelPendingFinalize()) {
    undoAttach();
    return true;
  }
  bool in_time = true;
  if (settleFinalize(&in_time)) {
    g_subscriber = nullptr;  // finalized with CUPTI
    g_reregister.store(true);
  }
  return in_time;
}

// First attach only: the memory API callbacks, found by name.
void prepareCuptiOnce() {
  static bool done = false;
  if (done) return;
  done = true;
  findMemoryApis(Session::get());
}

// Registers the timestamp callback (process-wide, gone after cuptiFinalize); the first time, records in
// the log's metadata which clock activity records use.
void registerTimestampCallback() {
  const bool ok = cupti().activityRegisterTimestampCallback != nullptr &&
                  cupti().activityRegisterTimestampCallback(&onTimestamp) == CUPTI_SUCCESS;
  static bool said = false;
  if (said) return;
  said = true;
  if (ok) {
    Session::get().addMetadata("kernel_clock", "CLOCK_MONOTONIC (CUPTI timestamp callback)");
  } else {
    Session::get().addMetadata("kernel_clock", "CUPTI default (not aligned with host times)");
    KC_LOG(warn, "cuptiActivityRegisterTimestampCallback unavailable: GPU times are on CUPTI's own clock");
  }
}

// After a finalize (and at the first attach): the buffer and timestamp callbacks, process-wide settings
// gone after cuptiFinalize (a subscriber kcount yielded to may have replaced them). CUPTI's correlation ids
// start again then, so the session renumbers them to stay unique in the log.
CUptiResult registerActivityCallbacks() {
  if (!g_reregister.exchange(false)) return CUPTI_SUCCESS;
  if (g_ever_attached.load()) Session::get().beginCorrelationNumbering();
  const CUptiResult r = cupti().activityRegisterCallbacks(&onBufferRequested, &onBufferCompleted);
  if (r != CUPTI_SUCCESS) {
    g_reregister.store(true);
    return r;
  }
  registerTimestampCallback();
  return r;
}

bool failAttach(CUptiResult r, const char* call) {
  KC_LOG(error, "cannot start recording: {}", failure(r, call));
  undoAttach();
  return false;
}

// Subscribes (unless the graph watch already holds the subscriber) and enables every callback kcount takes
// (launches, memory APIs, graph nodes).
bool subscribeAndEnable() {
  const CuptiApi& api = cupti();
  CUptiResult r = CUPTI_SUCCESS;
  if (g_subscriber == nullptr && (r = api.subscribe(&g_subscriber, &onCallback, nullptr)) != CUPTI_SUCCESS) {
    g_subscriber = nullptr;
    return failAttach(r, "cuptiSubscribe");
  }
  g_graph_watch.store(false);
  if ((r = enableWindowCallbacks(1)) != CUPTI_SUCCESS) return failAttach(r, "cuptiEnableCallback");
  // KCOUNT_GPU_TIME=0: a graph launch's kernels are read from the graph (inject/cupti_graphs.h).
  if (!Session::get().config().gpu_time && (r = enableGraphExecCallbacks(g_subscriber)) != CUPTI_SUCCESS)
    return failAttach(r, "cuptiEnableCallback(graph exec)");
  return true;
}

}  // namespace

bool attachCupti() {
  if (g_cupti_active.load()) return true;
  if (!settleDetach()) {
    KC_LOG(error, "cannot start recording: CUPTI is still finalizing the previous window's detach");
    return false;
  }
  prepareCuptiOnce();
  CUptiResult r;
  if ((r = registerActivityCallbacks()) != CUPTI_SUCCESS) return failAttach(r, "cuptiActivityRegisterCallbacks");
  // What changed in a graph exec while CUPTI was detached is unknown: graphs are read again from here on
  // (not after a graph watch: it kept them true).
  if (g_ever_attached.load() && !g_graph_watch.load()) Session::get().forgetGraphExecs();
  if (!subscribeAndEnable()) return false;
  // KCOUNT_GPU_TIME=0: no activity at all (kernels are named at their launch callbacks); kernel activity
  // is most of CUPTI's cost per launch, and all of it for graph replays (docs/performance.md, Run 5).
  if (Session::get().config().gpu_time)
    for (CUpti_ActivityKind k : kActivityKinds)
      if ((r = cupti().activityEnable(k)) != CUPTI_SUCCESS) return failAttach(r, "cuptiActivityEnable");
  if (graphTraceWanted() && (r = cupti().activityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE)) != CUPTI_SUCCESS)
    return failAttach(r, "cuptiActivityEnable(GRAPH_TRACE)");
  g_cupti_active.store(true);
  g_ever_attached.store(true);
  return true;
}

void detachCupti() {
  if (!g_cupti_active.load()) return;
  const CuptiApi& api = cupti();
  waitForQueuedWork(lastLaunchContext());
  api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind k : kActivityKinds) api.activityDisable(k);
  api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_cupti_active.store(false);
  // KCOUNT_GPU_TIME=graphs: GRAPH_TRACE stays enabled with the graph watch below (records of graph launches
  // while paused are discarded and counted); undoAttach() disables it.
  // KCOUNT_GPU_TIME=0: no activity was enabled; the subscriber stays with the graph exec callbacks only, so
  // a graph instantiated before the next window is known in it.
  if (!Session::get().config().gpu_time && !t_keep_cupti && g_subscriber != nullptr &&
      enableWindowCallbacks(0) == CUPTI_SUCCESS) {
    g_graph_watch.store(true);
    return;
  }
  const bool finalize = api.finalize != nullptr && !t_keep_cupti && g_subscriber != nullptr &&
                        Session::get().config().cupti_finalize;
  if (finalize && api.enableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS &&
      api.enableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS) {
    api.enableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE);
    markFinalizePending();  // finalized at the next API exit
    return;
  }
  undoAttach();
}

bool cuptiAttached() noexcept { return g_cupti_active.load(); }

bool watchGraphs() {
  if (Session::get().config().gpu_time || g_cupti_active.load()) return false;
  if (g_graph_watch.load()) return true;
  if (!settleDetach()) return false;
  prepareCuptiOnce();
  const CuptiApi& api = cupti();
  CUptiResult r = api.subscribe(&g_subscriber, &onCallback, nullptr);
  if (r == CUPTI_SUCCESS) r = enableGraphExecCallbacks(g_subscriber);
  if (r == CUPTI_SUCCESS && graphTraceWanted() && (r = registerActivityCallbacks()) == CUPTI_SUCCESS)
    r = api.activityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  if (r != CUPTI_SUCCESS) {
    KC_LOG(debug, "graph watch not started: {}", failure(r, "cuptiSubscribe/cuptiEnableCallback"));
    undoAttach();
    return false;
  }
  g_graph_watch.store(true);
  return true;
}

bool releaseGraphWatch() noexcept {
  try {
    if (g_cupti_active.load() || !g_graph_watch.exchange(false)) return false;
    undoAttach();
    graphExecs().clear();  // what happens to graphs from here on is not seen
    return true;
  } catch (...) {
    return false;
  }
}

void keepCuptiAtDetach(bool keep) noexcept { t_keep_cupti = keep; }

void reregisterAtNextAttach() noexcept { g_reregister.store(true); }

void flushActivityForExit() {
  recordDeviceMetadata(Session::get());
  if (!g_cupti_active.load()) return;  // no window open: CUPTI holds nothing of ours
  synchronizeCurrentContext();
  cupti().activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void periodicActivityFlush() {
  if (g_cupti_active.load()) cupti().activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

const char* cuptiState() noexcept {
  switch (detachState()) {
    case kDetachPending: return "finalize pending";
    case kDetachFinalizing: return "finalizing";
    case kDetachDone: return "finalized";
    default: break;
  }
  if (g_cupti_active.load()) return "attached";
  if (g_graph_watch.load()) return "watching graphs (KCOUNT_GPU_TIME=0)";
  if (cupti().handle == nullptr) return "not loaded";
  return g_ever_attached.load() ? "unsubscribed" : "not initialized";
}

}  // namespace kc::inject
