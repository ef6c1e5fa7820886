// The CUPTI boundary of graph knowledge (KCOUNT_GPU_TIME=0): the resource callbacks of graph execs
// (created, destroyed) and the driver calls that change an exec after instantiation, read through the
// driver into graphExecs() (inject/graph_execs.h); and the graph exec id of a graph launch, read at its
// API exit on the launch path. Never throws.
#pragma once

#include <cupti.h>

#include <cstdint>

namespace kc::inject {

/// Enables the callbacks below on `subscriber`; CUPTI's result (a failure is reported by the caller).
CUptiResult enableGraphExecCallbacks(CUpti_SubscriberHandle subscriber) noexcept;

/// Whether a driver API callback id is one of the calls that change a graph exec (handled by
/// onGraphExecEdit, never by the launch path).
inline bool isGraphExecEdit(CUpti_CallbackId cbid) noexcept {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecKernelNodeSetParams_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecNodeSetParams:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetEnabled:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecUpdate_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphExecChildGraphNodeSetParams: return true;
    default: return false;
  }
}

/// GRAPHEXEC_CREATED: reads the kernel nodes of the graph it was instantiated from (child graphs
/// included) into graphExecs(). GRAPHEXEC_DESTROY_STARTING: the exec is forgotten after the next drain.
/// Application threads.
void onGraphExecResource(CUpti_CallbackId cbid, const CUpti_ResourceData* data) noexcept;

/// The API exit of a successful call that changes a graph exec (isGraphExecEdit): its new version from
/// the call's correlation id on. Application threads.
void onGraphExecEdit(CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept;

/// The launch path's key of the graph exec a cudaGraphLaunch/cuGraphLaunch callback launches: CUPTI's
/// graph exec id + 1, or 0 when CUPTI cannot tell. One CUPTI call; no allocation, no lock.
uint32_t graphExecKey(const CUpti_CallbackData* data) noexcept;

}  // namespace kc::inject
