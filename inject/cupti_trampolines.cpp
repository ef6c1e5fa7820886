#include "inject/cupti_trampolines.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "collector/clock.h"
#include "inject/callbacks.h"
#include "inject/cupti_api.h"
#include "inject/cupti_detach.h"
#include "inject/cupti_graphs.h"
#include "inject/session.h"

namespace kc::inject {

ActivityBufferPool& activityBuffers() noexcept {
  static ActivityBufferPool& pool = *[] {
    const Config& c = Session::get().config();
    return new ActivityBufferPool(c.activity_buffer_bytes,
                                  std::max<uint64_t>(2, c.max_activity_bytes / c.activity_buffer_bytes));
  }();  // immortal: CUPTI may complete a buffer during exit
  return pool;
}

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *size = 0;
  try {
    ActivityBufferPool& pool = activityBuffers();
    *buffer = pool.take();
    if (*buffer != nullptr) {
      *size = pool.bufferBytes();
    } else {
      // CUPTI drops the records it cannot store and counts them (cuptiActivityGetNumDroppedRecords).
      Session::get().counters().activity_buffers_refused.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {
    *buffer = nullptr;
  }
}

void CUPTIAPI onBufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  const CuptiApi& api = cupti();
  try {
    thread_local std::vector<const CUpti_Activity*> records;
    records.clear();
    CUpti_Activity* record = nullptr;
    while (valid > 0 && api.activityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) records.push_back(record);
    onActivityRecords(records.data(), records.size());
    size_t dropped = 0;
    if (api.activityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0)
      Session::get().counters().dropped_activity_records.fetch_add(dropped, std::memory_order_relaxed);
  } catch (...) {
  }
  activityBuffers().give(buffer);  // a buffer of another CUPTI client (KCOUNT_YIELD) is left alone
}

namespace {
void onGraphResource(CUpti_CallbackId cbid, const CUpti_ResourceData* data) {
  const auto* g = data != nullptr ? static_cast<const CUpti_GraphData*>(data->resourceDescriptor) : nullptr;
  if (g == nullptr || g->nodeType != CU_GRAPH_NODE_TYPE_KERNEL) return;
  const CuptiApi& api = cupti();
  GraphNodeBody node{};
  if (api.getGraphNodeId(g->node, &node.node_id) != CUPTI_SUCCESS) return;
  if (g->graph != nullptr) api.getGraphId(g->graph, &node.graph_id);
  const bool created = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED;
  if (!created && g->originalNode != nullptr) api.getGraphNodeId(g->originalNode, &node.original_node_id);
  onGraphNode(node, created);
}
}  // namespace

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  try {
    if (detachUnderway()) [[unlikely]] {
      finalizeAtApiExit(domain, data);  // a window closed: nothing of this call is recorded
      return;
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      if (domain == CUPTI_CB_DOMAIN_DRIVER_API && isGraphExecEdit(cbid)) [[unlikely]]
        onGraphExecEdit(cbid, static_cast<const CUpti_CallbackData*>(data));
      else
        onLaunchCallback(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)
        onGraphResource(cbid, static_cast<const CUpti_ResourceData*>(data));
      else if (cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING)
        onGraphExecResource(cbid, static_cast<const CUpti_ResourceData*>(data));
    }
  } catch (...) {
  }
}

uint64_t CUPTIAPI onTimestamp() { return nowNs(); }

}  // namespace kc::inject
