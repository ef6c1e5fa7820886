// The launch hot path: what onLaunchCallback does at a launch API's enter and exit, written once as a
// template over a Path policy. The product instantiates it with FullPath (launch_callbacks.cpp); the
// overhead benchmark's variants, which leave parts of it out, instantiate it with their own policies in
// bench/launch_path_variants.cpp. Application threads; no allocation and no lock (but the first call of a
// new thread, threadState()); never throws.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>

#include "collector/clock.h"
#include "collector/host_buffer.h"
#include "inject/cupti_graphs.h"
#include "inject/launch_sampling.h"
#include "inject/self_cost.h"
#include "inject/session.h"
#include "inject/thread_state.h"

namespace kc::inject::launch_path {

/// Callback id -> (string id of the API name, graph flag, memory flag), per domain; filled once by
/// initLaunchApiNames and registerMemoryApi (callbacks.cpp) before callbacks are enabled, read-only after.
struct ApiSlot {
  uint32_t name_id;
  bool graph;
  bool memory;
};
inline constexpr uint32_t kMaxCbid = 1024;
extern ApiSlot g_runtime[kMaxCbid];
extern ApiSlot g_driver[kMaxCbid];
extern std::atomic<const void*> g_last_context;   // lastLaunchContext()
extern std::atomic<bool> g_launch_names;          // setLaunchNames (KCOUNT_GPU_TIME=0)
extern std::atomic<uint32_t> g_timing_threshold;  // UINT32_MAX / KCOUNT_LAUNCH_TIMING; 0: every call timed

/// String id of a launch's kernel symbol (KCOUNT_GPU_TIME=0), through the launching thread's cache.
uint32_t kernelNameId(ThreadState* ts, const char* symbol) noexcept;
/// A launch call longer than a LaunchSlot's 32-bit duration: recorded whole, in the HostEvent form.
void writeLongLaunch(ThreadState* ts, const OpenLaunch& l, uint64_t exit_ticks, const ApiSlot& slot,
                     uint32_t kernel_name, uint8_t flags) noexcept;

/// Sets the process's last-launch context when this thread's changed (a store per context change, not
/// per launch).
inline void noteContext(ThreadState* ts, const void* ctx) {
  if (ts->context != ctx && ctx != nullptr) {
    ts->context = ctx;
    g_last_context.store(ctx, std::memory_order_release);
  }
}

/// Where the path stops (benchmark variants stop early; the product never does).
enum class Stop { kNever, kAfterOpenLaunches, kBeforeRecord };

/// The product's path: every step, one 32-byte LaunchSlot per launch written field by field.
struct FullPath {
  static constexpr Stop kStop = Stop::kNever;
  static constexpr bool kTimestamps = true;   // KCOUNT_LAUNCH_TIMING's draw and the host clock reads
  static constexpr bool kWideRecord = false;  // every launch in the 64-byte HostEvent form
  static constexpr bool kSelfCost = true;     // each callback counted, a sample timed (inject/self_cost.h)
  /// Writes every byte of the slot `e` (then committed by the caller).
  static void writeSlot(LaunchSlot* e, const OpenLaunch& l, uint8_t slot_flags, uint32_t duration, uint32_t api_id,
                        uint32_t kernel_name) {
    e->tag = LaunchSlot::kTagLaunch;
    e->flags = slot_flags;
    e->cbid = static_cast<uint16_t>(l.cbid);
    e->correlation_id = static_cast<uint32_t>(l.correlation_id);
    e->enter_ticks = l.enter_ticks;
    e->duration_ticks = duration;
    e->scope_id = l.scope_id;
    e->api_id = api_id;
    e->kernel_name = kernel_name;
  }
};

/// Launch API enter: opens the call on this thread (the driver call inside a runtime launch, same
/// correlation id, only deepens the nesting).
template <typename Path>
inline void enterLaunch(ThreadState* ts, uint32_t gate, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const CUpti_CallbackData* data) {
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
    const bool timed = Path::kTimestamps &&
                       launchTimed(&ts->timing_draw, g_timing_threshold.load(std::memory_order_relaxed));
    ts->launches[ts->open_launches] =
        OpenLaunch{data->correlationId, timed ? hostTicks() : 0, ts->currentScope(), cbid,
                   static_cast<uint8_t>(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? ApiDomain::kRuntime
                                                                              : ApiDomain::kDriver),
                   static_cast<uint8_t>(timed ? 0 : kLaunchUntimed)};
  } else {
    Session::get().counters().dropped_host_records.fetch_add(1, std::memory_order_relaxed);
  }
  ++ts->open_launches;
}

/// Launch API exit: closes the call; the outermost call of a launch writes its record.
template <typename Path>
inline void exitLaunch(ThreadState* ts, const CUpti_CallbackData* data) {
  if (ts->open_launches == 0) return;  // enabled between enter and exit
  if (ts->open_launches <= ThreadState::kMaxOpenLaunches &&
      ts->launches[ts->open_launches - 1].correlation_id != data->correlationId)
    return;  // the exit of a call whose enter was not recorded (it began before the window)
  const uint32_t d = --ts->open_launches;
  if (d >= ThreadState::kMaxOpenLaunches) return;
  const OpenLaunch& l = ts->launches[d];
  if (d > 0 && ts->launches[d - 1].correlation_id == l.correlation_id) return;  // inner call, same launch
  if constexpr (Path::kStop == Stop::kAfterOpenLaunches) return;
  const ApiSlot* table = l.domain == static_cast<uint8_t>(ApiDomain::kRuntime) ? g_runtime : g_driver;
  const ApiSlot slot = l.cbid < kMaxCbid ? table[l.cbid] : ApiSlot{0, false, false};
  // KCOUNT_GPU_TIME=0: the kernel a direct launch runs, named at the call; for a graph launch, the key of
  // the graph exec whose kernels the writer reads from graphExecs() (memory operations and captured
  // launches run no kernel of their own here).
  uint32_t kernel_name = 0;
  if (g_launch_names.load(std::memory_order_relaxed) && !slot.memory && (l.flags & kLaunchCaptured) == 0)
    kernel_name = slot.graph ? graphExecKey(data) : kernelNameId(ts, data->symbolName);
  const uint64_t exit_ticks = (l.flags & kLaunchUntimed) != 0 ? 0 : hostTicks();
  if constexpr (Path::kStop == Stop::kBeforeRecord) {
    asm volatile("" : : "r"(exit_ticks), "r"(kernel_name));  // timestamps taken, no record
    return;
  }
  const uint8_t flags = static_cast<uint8_t>(l.flags | (slot.memory ? kLaunchMemOp : 0));
  if (Path::kWideRecord || exit_ticks - l.enter_ticks > UINT32_MAX) [[unlikely]] {
    writeLongLaunch(ts, l, exit_ticks, slot, kernel_name, flags);
    return;
  }
  // One 32-byte slot written in place (ThreadBuffer::reserveLaunch: no copy through the stack); every
  // byte is set. The callback id (< kMaxCbid) and CUPTI's correlation id fit their fields.
  LaunchSlot* e = ts->buffer->reserveLaunch();
  if (e == nullptr) return;  // the buffer counted the drop
  const auto slot_flags =
      static_cast<uint8_t>(flags | (slot.graph ? LaunchSlot::kSlotGraphLaunch : 0) |
                           (l.domain == static_cast<uint8_t>(ApiDomain::kDriver) ? LaunchSlot::kSlotDriverApi : 0));
  Path::writeSlot(e, l, slot_flags, static_cast<uint32_t>(exit_ticks - l.enter_ticks), slot.name_id, kernel_name);
  ts->buffer->commit();
}

/// The enter or exit of `data` on this thread (ts: its state).
template <typename Path>
inline void onLaunchOf(ThreadState* ts, uint32_t gate, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const CUpti_CallbackData* data) {
  if (data->callbackSite == CUPTI_API_ENTER)
    enterLaunch<Path>(ts, gate, domain, cbid, data);
  else
    exitLaunch<Path>(ts, data);
}

/// onLaunchCallback along `Path`. Windows: a launch is recorded when its API enter falls inside a window
/// (the gate word carries the window's epoch). Its exit is completed even if the window closed meanwhile
/// (CUPTI is detached only after the gate closed), so a launch is never half recorded. Enter: one atomic
/// load of the gate. Each enter and exit that reaches the thread's state counts in kcount's own cost.
template <typename Path>
inline void onLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept {
  const uint32_t gate = Session::gateNow();
  if (data == nullptr) return;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if ((gate & kGateEpochMask) == 0) return;
  } else if ((gate & kGateLive) == 0) {
    return;
  }
  ThreadState* ts = threadState();
  if (ts == nullptr) return;
  if constexpr (Path::kSelfCost) {
    const CallbackCostScope cost(ts);
    onLaunchOf<Path>(ts, gate, domain, cbid, data);
  } else {
    onLaunchOf<Path>(ts, gate, domain, cbid, data);
  }
}

}  // namespace kc::inject::launch_path
