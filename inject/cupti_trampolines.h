// The CUPTI callbacks of libkcount.so: static CUPTIAPI trampolines (Kineto's bufferRequestedTrampoline)
// that CUPTI calls and that forward to the handlers (callbacks.h) and to the activity buffer pool. The
// attach room (cupti_attach.cpp) registers them; tests call them as CUPTI would, through a stub CUPTI
// function table (cupti_api.h, setCuptiLoader). None throws: each catches everything.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

#include "inject/activity_buffers.h"

namespace kc::inject {

/// The activity buffer pool, created at the first request with KCOUNT_ACTIVITY_BUFFER_MB per buffer and
/// KCOUNT_MAX_ACTIVITY_MB / KCOUNT_ACTIVITY_BUFFER_MB buffers (at least 2) at most. Immortal; any thread.
ActivityBufferPool& activityBuffers() noexcept;

/// CUPTI asks for an activity buffer (CUPTI's thread): one from the pool, or none (*buffer nullptr, *size
/// 0) when the pool refuses; CUPTI then drops records and counts them, and the refusal is counted in the
/// session's activity_buffers_refused.
void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);

/// CUPTI hands back a buffer with `valid` bytes of records (CUPTI's thread, or the thread of a forced
/// flush): every record is read with cuptiActivityGetNextRecord and handed to onActivityRecords; CUPTI's
/// count of dropped records is added to the session's dropped_activity_records; the buffer returns to the
/// pool if it is one of the pool's.
void CUPTIAPI onBufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size, size_t valid);

/// The subscriber callback: runtime and driver API calls go to onLaunchCallback (the calls that change a
/// graph exec to onGraphExecEdit), graph node creation and cloning to onGraphNode, graph exec creation and
/// destruction to onGraphExecResource; while a detach is pending, a runtime or driver API exit finalizes CUPTI instead
/// (cupti_detach.h) and nothing of the call is recorded. Application threads; the launch hot path.
void CUPTIAPI onCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

/// CUPTI's timestamp callback: activity records on the host's CLOCK_MONOTONIC (collector/clock.h).
uint64_t CUPTIAPI onTimestamp();

}  // namespace kc::inject
