// The launch API table, graph node and activity record handlers, and what the launch hot path
// (launch_path.h, launch_callbacks.cpp) reads: the callback id tables and the switches set at initialization.
#include "inject/callbacks.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "collector/clock.h"
#include "inject/launch_path.h"
#include "inject/self_cost.h"
#include "inject/session.h"
#include "inject/thread_state.h"

namespace kc::inject {

namespace {

constexpr LaunchApi kLaunchApis[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020, "cudaLaunch", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000, "cudaLaunch_ptsz", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, "cudaLaunchKernel_ptsz", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
     "cudaLaunchCooperativeKernel", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
     "cudaLaunchCooperativeKernel_ptsz", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
     "cudaLaunchCooperativeKernelMultiDevice", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, "cudaGraphLaunch", true},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, "cudaGraphLaunch_ptsz", true},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, "cudaLaunchKernelExC", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
     "cudaLaunchKernelExC_ptsz", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel", false},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
     "__cudaLaunchKernel_ptsz", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunch, "cuLaunch", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid, "cuLaunchGrid", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync, "cuLaunchGridAsync", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel",
     false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
     "cuLaunchCooperativeKernel_ptsz", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice,
     "cuLaunchCooperativeKernelMultiDevice", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch", true},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, "cuGraphLaunch_ptsz", true},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx", false},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz", false},
};

}  // namespace

namespace launch_path {
ApiSlot g_runtime[kMaxCbid];
ApiSlot g_driver[kMaxCbid];
std::atomic<const void*> g_last_context{nullptr};
std::atomic<bool> g_launch_names{false};
std::atomic<uint32_t> g_timing_threshold{0};
}  // namespace launch_path

using namespace launch_path;

const LaunchApi* launchApis(size_t* count) {
  *count = sizeof(kLaunchApis) / sizeof(kLaunchApis[0]);
  return kLaunchApis;
}

void initLaunchApiNames(StringTable& strings) {
  for (const LaunchApi& api : kLaunchApis) {
    if (api.cbid >= kMaxCbid) continue;
    ApiSlot* table = api.domain == CUPTI_CB_DOMAIN_RUNTIME_API ? g_runtime : g_driver;
    table[api.cbid] = ApiSlot{strings.intern(api.name), api.graph_launch, false};
  }
}

bool registerMemoryApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, StringTable& strings) {
  if (cbid >= kMaxCbid) return false;
  std::string_view n(name != nullptr ? name : "");
  if (const size_t v = n.rfind("_v"); v != std::string_view::npos && v + 2 < n.size() &&
                                      n.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
    n = n.substr(0, v);  // "cudaMemcpyAsync_v3020" -> "cudaMemcpyAsync"
  ApiSlot* table = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? g_runtime : g_driver;
  table[cbid] = ApiSlot{strings.intern(n), false, true};
  return true;
}

namespace {
// String id of a kernel name through a small cache keyed by the name's address (CUPTI hands one pointer
// per function: CUpti_CallbackData::symbolName, CUpti_ActivityKernel10::name): a hit costs one text
// comparison; a miss interns the name (the string table's lock, once per name per cache and after a slot
// is reused). The address is only a hint, confirmed by the text: a module unloaded and another loaded
// may reuse it.
uint32_t cachedNameId(KernelNameCacheEntry* cache, size_t slots, const char* name) noexcept {
  const auto h = static_cast<uint32_t>((reinterpret_cast<uintptr_t>(name) >> 4) * 0x9E3779B1u);
  KernelNameCacheEntry& c = cache[h % slots];
  if (c.symbol == name && c.text != nullptr && std::strcmp(c.text->c_str(), name) == 0) return c.name_id;
  StringTable& strings = Session::get().strings();
  const uint32_t id = strings.intern(name);
  c = KernelNameCacheEntry{name, strings.lookup(id), id};
  return id;
}

}  // namespace

uint32_t launch_path::kernelNameId(ThreadState* ts, const char* symbol) noexcept {
  static constexpr char kUnnamed[] = "(kernel name not given at launch)";
  if (symbol == nullptr || *symbol == '\0') symbol = kUnnamed;
  return cachedNameId(ts->kernel_names, ThreadState::kKernelNameSlots, symbol);
}

void setLaunchNames(bool on) noexcept { g_launch_names.store(on, std::memory_order_relaxed); }

void setLaunchTiming(uint32_t sample) noexcept {
  g_timing_threshold.store(sample > 1 ? UINT32_MAX / sample : 0, std::memory_order_relaxed);
}

const void* lastLaunchContext() noexcept { return g_last_context.load(std::memory_order_acquire); }

// A launch call longer than a LaunchSlot's 32-bit duration (a first launch that JIT-compiles PTX or loads
// a large module): recorded whole, in the HostEvent form.
[[gnu::noinline, gnu::cold]] void launch_path::writeLongLaunch(ThreadState* ts, const OpenLaunch& l, uint64_t exit_ticks,
                                                  const ApiSlot& slot, uint32_t kernel_name, uint8_t flags) noexcept {
  HostEvent* e = ts->buffer->reserveEvent();
  if (e == nullptr) return;  // the buffer counted the drop
  *e = HostEvent{};
  e->kind = HostEvent::kLaunch;
  e->reserved = kernel_name;
  LaunchBody& b = e->launch;
  b.correlation_id = l.correlation_id;
  b.enter_ns = l.enter_ticks;
  b.exit_ns = exit_ticks;
  b.scope_id = l.scope_id;
  b.thread_id = ts->thread_id;
  b.api_id = slot.name_id;
  b.cbid = l.cbid;
  b.domain = l.domain;
  b.is_graph_launch = static_cast<uint8_t>(slot.graph ? 1 : 0);
  b.flags = flags;
  ts->buffer->commit();
}

void onGraphNode(GraphNodeBody node, bool created) noexcept {
  if (!Session::recordingNow()) return;
  ThreadState* ts = threadState();
  if (ts == nullptr) return;
  const CallbackCostScope cost(ts);
  node.thread_id = ts->thread_id;
  if (created) {
    node.scope_id = ts->currentScope();
    const uint32_t d = ts->open_launches;
    if (d > 0 && d <= ThreadState::kMaxOpenLaunches) {
      // Created inside a launch call: the launch was captured into a graph, not executed. Mark every
      // open call of the same launch (runtime and driver share the correlation id).
      OpenLaunch& l = ts->launches[d - 1];
      node.correlation_id = l.correlation_id;
      for (uint32_t i = 0; i < d; ++i)
        if (ts->launches[i].correlation_id == l.correlation_id) ts->launches[i].flags |= kLaunchCaptured;
    }
  }
  HostEvent e;
  e.kind = HostEvent::kGraphNode;
  e.reserved = 0;
  e.graph_node = node;
  ts->buffer->append(e);
}

KernelBody toKernelBody(const CUpti_ActivityKernel10& r, uint32_t name_id) noexcept {
  KernelBody k{};
  k.correlation_id = r.correlationId;
  k.start_ns = r.start;
  k.end_ns = r.end;
  k.graph_node_id = r.graphNodeId;
  k.name_id = name_id;
  k.device_id = r.deviceId;
  k.context_id = r.contextId;
  k.stream_id = r.streamId;
  k.grid[0] = r.gridX;
  k.grid[1] = r.gridY;
  k.grid[2] = r.gridZ;
  k.block[0] = r.blockX;
  k.block[1] = r.blockY;
  k.block[2] = r.blockZ;
  k.graph_id = r.graphId;
  k.shared_bytes = static_cast<uint32_t>(r.staticSharedMemory) + static_cast<uint32_t>(r.dynamicSharedMemory);
  k.cluster[0] = r.clusterX;
  k.cluster[1] = r.clusterY;
  k.cluster[2] = r.clusterZ;
  k.registers = r.registersPerThread;
  return k;
}

MemOpBody toMemOpBody(const CUpti_Activity& a) noexcept {
  MemOpBody m{};
  if (a.kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
    const auto& r = reinterpret_cast<const CUpti_ActivityMemcpy6&>(a);
    m = MemOpBody{r.correlationId, r.start, r.end, r.bytes, r.deviceId, r.streamId,
                  static_cast<uint8_t>(MemOpKind::kMemcpy), r.copyKind, {}};
  } else if (a.kind == CUPTI_ACTIVITY_KIND_MEMSET) {
    const auto& r = reinterpret_cast<const CUpti_ActivityMemset4&>(a);
    m = MemOpBody{r.correlationId, r.start, r.end, r.bytes, r.deviceId, r.streamId,
                  static_cast<uint8_t>(MemOpKind::kMemset), 0, {}};
  } else if (a.kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE) {
    const auto& r = reinterpret_cast<const CUpti_ActivityGraphTrace2&>(a);
    m = MemOpBody{r.correlationId, r.start, r.end, 0, r.deviceId, r.streamId,
                  static_cast<uint8_t>(MemOpKind::kGraph), 0, {}};
  }
  return m;
}

void onActivityRecords(const CUpti_Activity* const* records, size_t count) noexcept {
  Session& s = Session::get();
  thread_local std::vector<KernelBody> kernels;  // CUPTI's buffer thread only
  thread_local std::vector<MemOpBody> mem_ops;
  // Kernel name address -> id, per delivering thread. On the heap, not in TLS: the library's TLS block
  // is static TLS (t_state is initial-exec), which a dlopen()ed library gets only a few hundred bytes
  // of (the rest of glibc's surplus is taken by the process's other libraries).
  thread_local std::unique_ptr<KernelNameCacheEntry[]> names;
  try {
    kernels.clear();
    mem_ops.clear();
    if (!names) names.reset(new (std::nothrow) KernelNameCacheEntry[ThreadState::kKernelNameSlots]);
    for (size_t i = 0; i < count; ++i) {
      const CUpti_Activity* a = records[i];
      if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || a->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        const auto& k = *reinterpret_cast<const CUpti_ActivityKernel10*>(a);
        const uint32_t name_id = k.name == nullptr ? kNoString
                                 : names        ? cachedNameId(names.get(), ThreadState::kKernelNameSlots, k.name)
                                                : s.strings().intern(k.name);
        kernels.push_back(toKernelBody(k, name_id));
      } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY || a->kind == CUPTI_ACTIVITY_KIND_MEMSET ||
                 a->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE)
        mem_ops.push_back(toMemOpBody(*a));
    }
    s.addKernels(kernels.data(), kernels.size());
    s.addMemOps(mem_ops.data(), mem_ops.size());
  } catch (...) {
    s.counters().dropped_kernel_records.fetch_add(count, std::memory_order_relaxed);
  }
}

}  // namespace kc::inject
