// Correlation join and per-range aggregation over a decoded log: the numbers behind `kcount summary`
// and `kcount kernels`. GPU-free, no CUDA headers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collector/log_reader.h"

namespace kc {

/// Per kernel name within one range: how many ran and for how long.
struct KernelTally {
  uint64_t count = 0;
  uint64_t gpu_ns = 0;
};

/// Numbers for one node of the range tree. "Exclusive" counts only launches made while this range was
/// the innermost open range of the launching thread; "inclusive" adds all descendants.
struct RangeStats {
  uint32_t scope_id = 0;
  uint64_t instances = 0;      // range instances closed (or unclosed at exit) with this path
  uint64_t cpu_ns = 0;         // sum over instances of (end - begin), host clock
  uint64_t launches = 0;       // launch API calls (once per correlation id)
  uint64_t graph_launches = 0; // of which cudaGraphLaunch/cuGraphLaunch
  uint64_t launch_api_ns = 0;  // sum of (exit - enter) of those launch calls
  uint64_t kernels = 0;        // GPU kernel records joined to those launches
  uint64_t gpu_ns = 0;         // sum of kernel (end - start)
  uint64_t captured_launches = 0;  // of `launches`, issued during stream capture (recorded, not run)
  uint64_t memcpy_count = 0, memcpy_bytes = 0, memcpy_ns = 0;  // GPU memory copies (format 1.1)
  uint64_t memset_count = 0, memset_bytes = 0, memset_ns = 0;  // GPU memsets (format 1.1)
  std::map<uint32_t, KernelTally> by_kernel;  // kernel name id -> tally
};

/// Where kernels replayed from a CUDA graph are credited.
enum class GraphView {
  kLaunch,       // the range open around cudaGraphLaunch (default)
  kCapturePath,  // the range that was open when the kernel was captured into the graph
};

struct JoinOptions {
  GraphView graph_view = GraphView::kLaunch;
};

/// Result of joining kernels to launches by correlation id.
struct Summary {
  std::vector<RangeStats> exclusive;  // indexed by scope id (same size as LogData::scopes)
  std::vector<RangeStats> inclusive;  // indexed by scope id; inclusive[0] is the whole process
  uint64_t launches = 0;
  uint64_t kernels = 0;
  uint64_t unmatched_kernels = 0;       // kernel records whose correlation id matches no launch
  uint64_t launches_without_kernel = 0; // launches no kernel record matched (captured launches excluded)
  uint64_t captured_launches = 0;       // launches issued during stream capture
  uint64_t mem_ops = 0;                 // memcpy/memset operations executed on the GPU
  uint64_t unmatched_mem_ops = 0;       // memory operations whose correlation id matches no API call
  uint64_t kernel_gpu_ns = 0;           // sum of (end - start) over every kernel record, matched or not
  /// Streaming join only (summarizeLogFile): launches that left the join window before any kernel or
  /// memory operation matched them, and kernels/operations that waited for their launch longer than the
  /// window. 0 means the streaming result equals summarize() on the whole log; see collector/stream_summary.h.
  uint64_t join_window_evicted = 0;
  std::vector<uint32_t> children_order; // scope ids in depth-first order of first appearance (root first)
  std::vector<std::vector<uint32_t>> children;  // children[scope] = child scope ids, in id order
};

/// Joins and aggregates. Unmatched kernels are counted, never credited to a range. O(launches + kernels).
/// Needs the records in memory (readLog with ReadOptions::keep_records); the streaming equivalent for
/// files of any size is summarizeLogFile() (collector/stream_summary.h).
Summary summarize(const LogData& log, const JoinOptions& options = {});

/// Completes a Summary whose `exclusive` (one entry per scope id of log.scopes, at least the root) is
/// filled: repairs the range tree (a parent out of range or a cycle hangs under the root), fills
/// children, children_order and inclusive. Used by summarize() and the streaming join.
void buildRangeTree(const LogData& log, Summary& s);

}  // namespace kc
