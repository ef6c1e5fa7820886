// CUPTI-facing handlers of libkcount.so. The static CUPTIAPI trampolines in cupti_trampolines.cpp forward
// here; tests call these directly with CUpti_CallbackData and CUpti_ActivityKernel10 values built from
// the real CUPTI headers (Kineto's MockCuptiActivityBuffer style), no GPU needed.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "collector/log_format.h"
#include "collector/string_table.h"
#include "inject/launch_sampling.h"

namespace kc::inject {

/// One kernel launch entry point kcount subscribes to.
struct LaunchApi {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const char* name;
  bool graph_launch;  // one launch, many kernels
};

/// Every kernel launch entry point of CUPTI 13's runtime and driver callback id lists (including the
/// _ptsz variants, cooperative launches, the CUDA 13 __cudaLaunchKernel ids and graph launches).
/// Source: cupti_runtime_cbid.h and cupti_driver_cbid.h of CUDA 13.0.
const LaunchApi* launchApis(size_t* count);

/// Interns the API names into `strings`; call once before callbacks are enabled.
void initLaunchApiNames(StringTable& strings);

/// Registers a memcpy/memset API (from cuptiGetCallbackName) so its calls are recorded like launches,
/// flagged kLaunchMemOp, and joined to MEMCPY/MEMSET activity records. Call before enabling it.
/// Returns false if the callback id is out of the table's range.
bool registerMemoryApi(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* name, StringTable& strings);

/// A CUDA graph kernel node was created (stream capture or explicit) or cloned (instantiation), on the
/// calling thread. For a node created inside a launch API call (stream capture), that launch is
/// marked captured and the node carries its correlation id and range.
void onGraphNode(GraphNodeBody node, bool created) noexcept;

/// Launch API enter/exit on the calling (application) thread. Records one LaunchBody per correlation
/// id at the exit of the outermost call (a runtime launch and the driver launch inside it share the
/// id). No allocation, no lock, except the first call on a new thread. Never throws.
void onLaunchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept;

/// KCOUNT_GPU_TIME=0 (on = true): each direct kernel launch also carries the string id of its kernel's
/// name in HostEvent::reserved, taken from CUpti_CallbackData::symbolName at the API exit of the outermost
/// call (per-thread cache; a new name takes the string table's lock once per thread). The session writes
/// a KernelBody for it (start = end = launch exit, no GPU time) instead of waiting for an activity record.
/// Set before the first window opens. Thread-safe.
void setLaunchNames(bool on) noexcept;

/// KCOUNT_LAUNCH_TIMING=N (summary mode): of the direct and graph launch calls and memory calls, one in
/// `sample` on average is timed (two host clock reads, enter and exit), chosen by a per-thread xorshift32
/// draw so that no periodic launch pattern is always or never timed; the others are recorded with
/// kLaunchUntimed and no times. The aggregator counts each timed call `sample` times (an unbiased
/// estimate of launch_api_ns; see Aggregator::Limits::launch_timing_sample). 1 (the default): every
/// call timed, no draw. Set before the first window opens. Thread-safe.
void setLaunchTiming(uint32_t sample) noexcept;

/// CUDA context (CUcontext) of the most recent launch whose thread's context changed; nullptr before the
/// first launch. Used to wait for queued GPU work when a window is stopped from another thread.
const void* lastLaunchContext() noexcept;

/// Converts one CUPTI kernel activity record whose kernel name has string id `name_id` (onActivityRecords
/// interns names through a cache keyed by the name's address). Pure.
KernelBody toKernelBody(const CUpti_ActivityKernel10& record, uint32_t name_id) noexcept;

/// Converts one CUPTI memcpy, memset or graph trace (MemOpKind::kGraph: a graph launch's GPU span) activity record.
MemOpBody toMemOpBody(const CUpti_Activity& record) noexcept;

/// Converts the kernel (CONCURRENT_KERNEL/KERNEL), memory (MEMCPY/MEMSET) and graph (GRAPH_TRACE) records among `records`
/// and hands them to the session. Records of other kinds are ignored. Called on CUPTI's buffer thread.
void onActivityRecords(const CUpti_Activity* const* records, size_t count) noexcept;

}  // namespace kc::inject
