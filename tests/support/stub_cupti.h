// A stub CUPTI for driving the library's real entry points without a GPU or libcupti: a function table
// installed through setCuptiLoader (inject/cupti_api.h) whose functions record what kcount asked of CUPTI
// and keep what CUPTI would keep (the subscriber callback, the activity buffer callbacks, buffers filled and
// not yet handed back), and helpers that play CUPTI's part: API calls through the subscriber callback,
// activity buffers asked of kcount and filled with real CUpti_Activity* records from the CUPTI headers,
// handed back at once or at the next cuptiActivityFlushAll.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "inject/cupti_api.h"

namespace kc::test {

/// An activity buffer kcount handed out (through the registered request callback) and the bytes of
/// records written into it.
struct ActivityBuffer {
  uint8_t* buffer = nullptr;
  size_t size = 0;   // as kcount gave it
  size_t valid = 0;  // bytes of records written
};

/// What the library asked of the stub CUPTI, and what the stub holds. One per process (g_stub).
struct StubCupti {
  std::mutex mutex;  // guards the containers below (a forced flush may come from the writer thread)
  std::string configured_path;  // what the loader was given (KCOUNT_CUPTI_PATH)
  std::atomic<int> loads{0}, subscribes{0}, unsubscribes{0}, finalizes{0}, registrations{0}, flushes{0},
      timestamp_registrations{0};
  CUpti_CallbackFunc callback = nullptr;  // the subscriber callback (kcount's trampoline)
  void* userdata = nullptr;
  bool subscribed = false;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  CUpti_TimestampCallbackFunc timestamp = nullptr;
  std::set<std::pair<int, uint32_t>> callbacks_enabled;  // (domain, cbid)
  std::map<int, uint32_t> domains_enabled;               // domain -> last enable value
  std::set<int> activity_kinds;                          // enabled CUpti_ActivityKind values
  std::vector<ActivityBuffer> held;                      // filled, handed back at the next flush
  size_t dropped_next = 0;  // cuptiActivityGetNumDroppedRecords' answer for the next completed buffer
};
inline StubCupti g_stub;

/// Bytes a record of `a`'s kind takes in a stub buffer (its struct, 8-byte aligned).
inline size_t stubRecordBytes(const CUpti_Activity* a) {
  size_t n = sizeof(CUpti_Activity);
  if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || a->kind == CUPTI_ACTIVITY_KIND_KERNEL)
    n = sizeof(CUpti_ActivityKernel10);
  else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY)
    n = sizeof(CUpti_ActivityMemcpy6);
  else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET)
    n = sizeof(CUpti_ActivityMemset4);
  return (n + 7) / 8 * 8;
}

// ---- The stub's CUPTI functions ---------------------------------------------------------------------------
inline CUptiResult CUPTIAPI stubGetVersion(uint32_t* v) {
  *v = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubGetResultString(CUptiResult, const char** s) {
  *s = "CUPTI_STUB_ERROR";
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubSubscribe(CUpti_SubscriberHandle* h, CUpti_CallbackFunc fn, void* userdata) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  if (g_stub.subscribed) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  g_stub.subscribed = true;
  g_stub.callback = fn;
  g_stub.userdata = userdata;
  g_stub.callbacks_enabled.clear();
  g_stub.domains_enabled.clear();
  ++g_stub.subscribes;
  *h = reinterpret_cast<CUpti_SubscriberHandle>(&g_stub);
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubUnsubscribe(CUpti_SubscriberHandle h) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  if (h != reinterpret_cast<CUpti_SubscriberHandle>(&g_stub) || !g_stub.subscribed) return CUPTI_ERROR_INVALID_PARAMETER;
  g_stub.subscribed = false;
  ++g_stub.unsubscribes;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain d,
                                               CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  if (enable != 0)
    g_stub.callbacks_enabled.insert({d, cbid});
  else
    g_stub.callbacks_enabled.erase({d, cbid});
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubEnableDomain(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain d) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  g_stub.domains_enabled[d] = enable;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubActivityEnable(CUpti_ActivityKind k) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  g_stub.activity_kinds.insert(k);
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubActivityDisable(CUpti_ActivityKind k) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  g_stub.activity_kinds.erase(k);
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                  CUpti_BuffersCallbackCompleteFunc done) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  g_stub.requested = req;
  g_stub.completed = done;
  ++g_stub.registrations;
  return CUPTI_SUCCESS;
}
/// Hands back every held buffer through the registered completion callback, as a forced flush does.
inline CUptiResult CUPTIAPI stubFlushAll(uint32_t) {
  std::vector<ActivityBuffer> held;
  CUpti_BuffersCallbackCompleteFunc done = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_stub.mutex);
    held.swap(g_stub.held);
    done = g_stub.completed;
  }
  ++g_stub.flushes;
  for (const ActivityBuffer& b : held) done(nullptr, 0, b.buffer, b.size, b.valid);
  return CUPTI_SUCCESS;
}
/// CUPTI's contract: *record null starts at the buffer's first record; the next call moves past it.
inline CUptiResult CUPTIAPI stubGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  const size_t at = *record == nullptr
                        ? 0
                        : static_cast<size_t>(reinterpret_cast<uint8_t*>(*record) - buffer) + stubRecordBytes(*record);
  if (at >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + at);
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubGetNumDropped(CUcontext, uint32_t, size_t* dropped) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  *dropped = g_stub.dropped_next;
  g_stub.dropped_next = 0;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubRegisterTimestamp(CUpti_TimestampCallbackFunc fn) {
  g_stub.timestamp = fn;
  ++g_stub.timestamp_registrations;
  return CUPTI_SUCCESS;
}
/// Finalizing drops the subscriber and the process-wide activity callbacks.
inline CUptiResult CUPTIAPI stubFinalize() {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  ++g_stub.finalizes;
  g_stub.subscribed = false;
  g_stub.requested = nullptr;
  g_stub.completed = nullptr;
  g_stub.timestamp = nullptr;
  g_stub.activity_kinds.clear();
  return CUPTI_SUCCESS;
}
/// Names for two runtime callback ids: one memory API (kcount enables it) and one launch (it does not
/// register it as a memory API); every other id has no name.
inline CUptiResult CUPTIAPI stubGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char** name) {
  if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020) {
    *name = "cudaMemcpyAsync_v3020";
    return CUPTI_SUCCESS;
  }
  if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    *name = "cudaLaunchKernel_v7000";
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}
/// Graph and node handles are their ids.
inline CUptiResult CUPTIAPI stubGetGraphNodeId(CUgraphNode node, uint64_t* id) {
  *id = reinterpret_cast<uintptr_t>(node);
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI stubGetGraphId(CUgraph graph, uint32_t* id) {
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(graph));
  return CUPTI_SUCCESS;
}

/// The loader that setCuptiLoader installs: fills the table with the stub's functions ("loaded" from
/// "/stub/libcupti.so.13") and notes the configured path.
inline bool stubCuptiLoader(kc::inject::CuptiApi& api, const std::string& configured_path, std::string*) {
  g_stub.configured_path = configured_path;
  ++g_stub.loads;
  api.handle = &g_stub;
  api.path = "/stub/libcupti.so.13";
  api.how = "stub";
  api.version = CUPTI_API_VERSION;
  api.getVersion = &stubGetVersion;
  api.getResultString = &stubGetResultString;
  api.subscribe = &stubSubscribe;
  api.unsubscribe = &stubUnsubscribe;
  api.enableCallback = &stubEnableCallback;
  api.enableDomain = &stubEnableDomain;
  api.activityEnable = &stubActivityEnable;
  api.activityDisable = &stubActivityDisable;
  api.activityRegisterCallbacks = &stubRegisterCallbacks;
  api.activityFlushAll = &stubFlushAll;
  api.activityGetNextRecord = &stubGetNextRecord;
  api.activityGetNumDroppedRecords = &stubGetNumDropped;
  api.activityRegisterTimestampCallback = &stubRegisterTimestamp;
  api.finalize = &stubFinalize;
  api.getCallbackName = &stubGetCallbackName;
  api.getGraphNodeId = &stubGetGraphNodeId;
  api.getGraphId = &stubGetGraphId;
  return true;
}

// ---- CUPTI's part -------------------------------------------------------------------------------------------
/// One API callback through the subscriber callback kcount registered (the callback trampoline).
inline void apiCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t corr, CUpti_ApiCallbackSite site,
                        const char* symbol = nullptr) {
  CUpti_CallbackData d{};
  d.correlationId = corr;
  d.callbackSite = site;
  d.symbolName = symbol;
  g_stub.callback(g_stub.userdata, domain, cbid, &d);
}

/// A cudaLaunchKernel with the cuLaunchKernel inside it (same correlation id), as CUPTI reports it.
inline void runtimeLaunch(uint32_t corr, const char* symbol = nullptr) {
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr, CUPTI_API_ENTER, symbol);
  apiCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr, CUPTI_API_ENTER, symbol);
  apiCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr, CUPTI_API_EXIT, symbol);
  apiCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, corr, CUPTI_API_EXIT, symbol);
}

/// runtimeLaunch's four callbacks, each delivered only if kcount enabled it (as CUPTI does): with
/// KCOUNT_LAUNCH_CALLBACKS=driver, only the cuLaunchKernel pair arrives.
inline void runtimeLaunchAsEnabled(uint32_t corr, const char* symbol = nullptr) {
  const std::pair<CUpti_CallbackDomain, CUpti_CallbackId> rt{CUPTI_CB_DOMAIN_RUNTIME_API,
                                                             CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000};
  const std::pair<CUpti_CallbackDomain, CUpti_CallbackId> drv{CUPTI_CB_DOMAIN_DRIVER_API,
                                                              CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel};
  const bool r = g_stub.callbacks_enabled.count(rt) == 1, d = g_stub.callbacks_enabled.count(drv) == 1;
  if (r) apiCallback(rt.first, rt.second, corr, CUPTI_API_ENTER, symbol);
  if (d) apiCallback(drv.first, drv.second, corr, CUPTI_API_ENTER, symbol);
  if (d) apiCallback(drv.first, drv.second, corr, CUPTI_API_EXIT, symbol);
  if (r) apiCallback(rt.first, rt.second, corr, CUPTI_API_EXIT, symbol);
}

/// A graph node resource callback (GRAPHNODE_CREATED or _CLONED) for kernel node `node` of graph `graph`.
inline void graphNodeCallback(CUpti_CallbackId cbid, uint64_t node, uint32_t graph, uint64_t original = 0) {
  CUpti_GraphData g{};
  g.graph = reinterpret_cast<CUgraph>(uintptr_t{graph});
  g.node = reinterpret_cast<CUgraphNode>(uintptr_t{node});
  g.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
  g.originalNode = reinterpret_cast<CUgraphNode>(uintptr_t{original});
  CUpti_ResourceData r{};
  r.resourceDescriptor = &g;
  g_stub.callback(g_stub.userdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, &r);
}

/// Asks kcount for an activity buffer through the registered request callback.
inline ActivityBuffer requestBuffer() {
  ActivityBuffer b;
  size_t max_records = 0;
  g_stub.requested(&b.buffer, &b.size, &max_records);
  return b;
}

/// Appends `record` (a CUpti_Activity* struct) to `b`; false if it does not fit.
template <typename Record>
bool appendRecord(ActivityBuffer& b, const Record& record) {
  const size_t n = stubRecordBytes(reinterpret_cast<const CUpti_Activity*>(&record));
  if (b.buffer == nullptr || b.valid + n > b.size) return false;
  std::memset(b.buffer + b.valid, 0, n);
  std::memcpy(b.buffer + b.valid, &record, sizeof(record));
  b.valid += n;
  return true;
}

/// Hands `b` back now through the registered completion callback, as CUPTI does with a full buffer.
inline void completeBuffer(const ActivityBuffer& b, size_t dropped = 0) {
  {
    std::lock_guard<std::mutex> lock(g_stub.mutex);
    g_stub.dropped_next = dropped;
  }
  g_stub.completed(nullptr, 0, b.buffer, b.size, b.valid);
}

/// Keeps `b` until the next cuptiActivityFlushAll, as CUPTI does with a buffer not yet full.
inline void holdBuffer(const ActivityBuffer& b) {
  std::lock_guard<std::mutex> lock(g_stub.mutex);
  g_stub.held.push_back(b);
}

/// A kernel activity record of launch `corr`: `name`, [start, start + 1000) ns, grid 132, block 256.
inline CUpti_ActivityKernel10 kernelActivity(uint32_t corr, const char* name, uint64_t start) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.correlationId = corr;
  k.name = name;
  k.start = start;
  k.end = start + 1000;
  k.streamId = 7;
  k.gridX = 132;
  k.gridY = k.gridZ = 1;
  k.blockX = 256;
  k.blockY = k.blockZ = 1;
  return k;
}

}  // namespace kc::test
