#if defined(KCOUNT_BENCH_LAUNCH_PATH) && KCOUNT_BENCH_LAUNCH_PATH == 5
#include <emmintrin.h>
#endif
#include "inject/callbacks.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "collector/clock.h"
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

// Callback id -> (string id of the API name, graph flag), per domain; filled once by initLaunchApiNames.
constexpr uint32_t kMaxCbid = 1024;
struct ApiSlot {
  uint32_t name_id;
  bool graph;
  bool memory;
};
ApiSlot g_runtime[kMaxCbid];
ApiSlot g_driver[kMaxCbid];

}  // namespace

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
std::atomic<const void*> g_last_context{nullptr};
std::atomic<bool> g_launch_names{false};
std::atomic<uint32_t> g_timing_threshold{0};  // UINT32_MAX / KCOUNT_LAUNCH_TIMING; 0: every call timed

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

// String id of a launch's kernel symbol (KCOUNT_GPU_TIME=0), through the launching thread's cache.
uint32_t kernelNameId(ThreadState* ts, const char* symbol) noexcept {
  static constexpr char kUnnamed[] = "(kernel name not given at launch)";
  if (symbol == nullptr || *symbol == '\0') symbol = kUnnamed;
  return cachedNameId(ts->kernel_names, ThreadState::kKernelNameSlots, symbol);
}
}  // namespace

void setLaunchNames(bool on) noexcept { g_launch_names.store(on, std::memory_order_relaxed); }

void setLaunchTiming(uint32_t sample) noexcept {
  g_timing_threshold.store(sample > 1 ? UINT32_MAX / sample : 0, std::memory_order_relaxed);
}

const void* lastLaunchContext() noexcept { return g_last_context.load(std::memory_order_acquire); }

namespace {
// Sets the process's last-launch context when this thread's changed (a store per context change, not
// per launch).
inline void noteContext(ThreadState* ts, const void* ctx) {
  if (ts->context != ctx && ctx != nullptr) {
    ts->context = ctx;
    g_last_context.store(ctx, std::memory_order_release);
  }
}

// A launch call longer than a LaunchSlot's 32-bit duration (a first launch that JIT-compiles PTX or loads
// a large module): recorded whole, in the HostEvent form.
[[gnu::noinline, gnu::cold]] void writeLongLaunch(ThreadState* ts, const OpenLaunch& l, uint64_t exit_ticks,
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
}  // namespace

// Windows: a launch is recorded when its API enter falls inside a window (the gate word carries the
// window's epoch). Its exit is completed even if the window closed meanwhile (CUPTI is detached only
// after the gate closed), so a launch is never half recorded. Enter: one atomic load of the gate.
void onLaunchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept {
  const uint32_t gate = Session::gateNow();
  if (data == nullptr) return;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if ((gate & kGateEpochMask) == 0) return;
  } else if ((gate & kGateLive) == 0) {
    return;
  }
  ThreadState* ts = threadState();
  if (ts == nullptr) return;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (ts->launch_gate != gate) [[unlikely]] {
      // First launch of this thread in a new window: calls left open when CUPTI was detached are gone.
      ts->launch_gate = gate;
      ts->open_launches = 0;
    }
    noteContext(ts, data->context);
    const uint32_t d = ts->open_launches;
    if (d > 0 && d <= ThreadState::kMaxOpenLaunches && ts->launches[d - 1].correlation_id == data->correlationId) {
      // The driver call inside a runtime launch (same correlation id): only the outermost call is timed
      // and recorded, so this one just keeps the nesting depth.
      if (d < ThreadState::kMaxOpenLaunches) ts->launches[d] = ts->launches[d - 1];
      ++ts->open_launches;
      return;
    }
    if (ts->open_launches < ThreadState::kMaxOpenLaunches) {
#if defined(KCOUNT_BENCH_LAUNCH_PATH) && KCOUNT_BENCH_LAUNCH_PATH == 1
      const bool timed = false;  // benchmark variant (bench/CMakeLists.txt): no timestamps
#else
      const bool timed = launchTimed(&ts->timing_draw, g_timing_threshold.load(std::memory_order_relaxed));
#endif
      ts->launches[ts->open_launches] =
          OpenLaunch{data->correlationId, timed ? hostTicks() : 0, ts->currentScope(), cbid,
                     static_cast<uint8_t>(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::kRuntime
                                                                                : ApiDomain::kDriver),
                     static_cast<uint8_t>(timed ? 0 : kLaunchUntimed)};
    } else {
      Session::get().counters().dropped_host_records.fetch_add(1, std::memory_order_relaxed);
    }
    ++ts->open_launches;
    return;
  }
  // API exit.
  if (ts->open_launches == 0) return;  // enabled between enter and exit
  if (ts->open_launches <= ThreadState::kMaxOpenLaunches &&
      ts->launches[ts->open_launches - 1].correlation_id != data->correlationId)
    return;  // the exit of a call whose enter was not recorded (it began before the window)
  const uint32_t d = --ts->open_launches;
  if (d >= ThreadState::kMaxOpenLaunches) return;
  const OpenLaunch& l = ts->launches[d];
  if (d > 0 && ts->launches[d - 1].correlation_id == l.correlation_id) return;  // inner call, same launch
#if defined(KCOUNT_BENCH_LAUNCH_PATH) && KCOUNT_BENCH_LAUNCH_PATH == 1
  return;  // benchmark variant: the open-launch bookkeeping only, no record
#endif
  const ApiSlot* table = l.domain == static_cast<uint8_t>(ApiDomain::kRuntime) ? g_runtime : g_driver;
  const ApiSlot slot = l.cbid < kMaxCbid ? table[l.cbid] : ApiSlot{0, false, false};
  // KCOUNT_GPU_TIME=0: the kernel a direct launch runs, named at the call (graph launches, memory
  // operations and captured launches run no kernel of their own here).
  const uint32_t kernel_name = g_launch_names.load(std::memory_order_relaxed) && !slot.memory && !slot.graph &&
                                       (l.flags & kLaunchCaptured) == 0
                                   ? kernelNameId(ts, data->symbolName)
                                   : 0;
  const uint64_t exit_ticks = (l.flags & kLaunchUntimed) != 0 ? 0 : hostTicks();
#if defined(KCOUNT_BENCH_LAUNCH_PATH) && KCOUNT_BENCH_LAUNCH_PATH == 2
  asm volatile("" : : "r"(exit_ticks), "r"(kernel_name));  // benchmark variant: timestamps taken, no record
  return;
#endif
  const uint8_t flags = static_cast<uint8_t>(l.flags | (slot.memory ? kLaunchMemOp : 0));
#if defined(KCOUNT_BENCH_LAUNCH_PATH) && KCOUNT_BENCH_LAUNCH_PATH == 4
  constexpr bool kWideRecord = true;  // benchmark variant: every launch in the 64-byte HostEvent form
#else
  constexpr bool kWideRecord = false;
#endif
  if (kWideRecord || exit_ticks - l.enter_ticks > UINT32_MAX) [[unlikely]] {
    writeLongLaunch(ts, l, exit_ticks, slot, kernel_name, flags);
    return;
  }
  // One 32-byte slot written in place (ThreadBuffer::reserveLaunch: no copy through the stack); every
  // byte is set. The callback id (< kMaxCbid) and CUPTI's correlation id fit their fields.
  LaunchSlot* e = ts->buffer->reserveLaunch();
  if (e == nullptr) return;  // the buffer counted the drop
#if defined(KCOUNT_BENCH_LAUNCH_PATH) && KCOUNT_BENCH_LAUNCH_PATH == 5
  {
    // Benchmark variant: the slot written with two non-temporal 16-byte stores (no read for ownership of
    // a line the writer thread read last), fenced before commit()'s release stores publish it.
    const uint8_t slot_flags =
        static_cast<uint8_t>(flags | (slot.graph ? LaunchSlot::kSlotGraphLaunch : 0) |
                             (l.domain == static_cast<uint8_t>(ApiDomain::kDriver) ? LaunchSlot::kSlotDriverApi : 0));
    const uint64_t w0 = uint64_t{LaunchSlot::kTagLaunch} | uint64_t{slot_flags} << 8 |
                        uint64_t{static_cast<uint16_t>(l.cbid)} << 16 |
                        uint64_t{static_cast<uint32_t>(l.correlation_id)} << 32;
    const uint64_t w2 = uint64_t{static_cast<uint32_t>(exit_ticks - l.enter_ticks)} | uint64_t{l.scope_id} << 32;
    const uint64_t w3 = uint64_t{slot.name_id} | uint64_t{kernel_name} << 32;
    auto* out = reinterpret_cast<__m128i*>(e);
    _mm_stream_si128(out, _mm_set_epi64x(static_cast<long long>(l.enter_ticks), static_cast<long long>(w0)));
    _mm_stream_si128(out + 1, _mm_set_epi64x(static_cast<long long>(w3), static_cast<long long>(w2)));
    _mm_sfence();
    ts->buffer->commit();
    return;
  }
#endif
  e->tag = LaunchSlot::kTagLaunch;
  e->flags = static_cast<uint8_t>(flags | (slot.graph ? LaunchSlot::kSlotGraphLaunch : 0) |
                                  (l.domain == static_cast<uint8_t>(ApiDomain::kDriver) ? LaunchSlot::kSlotDriverApi : 0));
  e->cbid = static_cast<uint16_t>(l.cbid);
  e->correlation_id = static_cast<uint32_t>(l.correlation_id);
  e->enter_ticks = l.enter_ticks;
  e->duration_ticks = static_cast<uint32_t>(exit_ticks - l.enter_ticks);
  e->scope_id = l.scope_id;
  e->api_id = slot.name_id;
  e->kernel_name = kernel_name;
  ts->buffer->commit();
}

void onGraphNode(GraphNodeBody node, bool created) noexcept {
  if (!Session::recordingNow()) return;
  ThreadState* ts = threadState();
  if (ts == nullptr) return;
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
      } else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY || a->kind == CUPTI_ACTIVITY_KIND_MEMSET)
        mem_ops.push_back(toMemOpBody(*a));
    }
    s.addKernels(kernels.data(), kernels.size());
    s.addMemOps(mem_ops.data(), mem_ops.size());
  } catch (...) {
    s.counters().dropped_kernel_records.fetch_add(count, std::memory_order_relaxed);
  }
}

}  // namespace kc::inject
