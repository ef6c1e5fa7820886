// What each instantiated CUDA graph runs, for counting its kernels without kernel activity records
// (KCOUNT_GPU_TIME=0): per graph exec, its kernel nodes with their kernel names, kept true through the
// changes made after instantiation (exec update, kernel node parameters, node enable/disable) and
// destruction. The CUPTI boundary (inject/cupti_graphs.cpp) fills it from resource and driver callbacks;
// the writer thread reads it when it takes a graph launch from a thread buffer and writes (or tallies) one
// kernel per enabled kernel node. CUDA- and CUPTI-free, so the rules are tested on the CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace kc::inject {

/// One kernel node of an instantiated graph (child graphs flattened into their parent).
struct GraphKernelNode {
  uint64_t node_id = 0;   // cuptiGetGraphNodeId of the node in the graph it was instantiated from
  uint32_t name_id = 0;   // string id of the kernel's (mangled) name
  bool enabled = true;    // cuGraphNodeSetEnabled: a disabled node runs nothing
};

/// What one launch of a graph exec runs, as far as it is known.
struct GraphProgram {
  std::vector<GraphKernelNode> kernels;
  uint32_t graph_id = 0;  // cuptiGetGraphId of the graph it was instantiated from
  bool known = true;      // false: it holds a node whose work cannot be known ahead (conditional node,
                          // device-launched graph, a child graph replaced after instantiation)
};

/// The graph execs of the process, by CUPTI's graph exec id, each as a short history of versions: a change
/// made by an API call with CUPTI correlation id C applies to the launches with a larger correlation id
/// (CUPTI numbers API calls of every thread in one sequence), so a launch drained after a later change
/// still gets what it ran. Thread-safe (one mutex): resource and driver callbacks on application threads,
/// lookups on the writer thread; never used on the launch hot path. Bounded: at most kMaxExecs execs
/// (more are not kept, and their launches count as unknown) and kMaxVersions versions per exec (the oldest
/// is folded away: a launch older than every version kept is credited with the oldest kept).
class GraphExecTable {
 public:
  static constexpr size_t kMaxExecs = 1u << 16;
  static constexpr size_t kMaxVersions = 8;

  /// Exec `exec_id` was instantiated (or re-instantiated in place) with `program`. Replaces its history.
  void instantiated(uint32_t exec_id, GraphProgram program);
  /// Exec `exec_id` was changed by the API call with correlation id `correlation_id`: `edit` receives a copy
  /// of its newest version to change. No-op for an exec not in the table.
  template <typename Edit>
  void changed(uint32_t exec_id, uint64_t correlation_id, Edit&& edit) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = execs_.find(exec_id);
    if (it == execs_.end() || it->second.empty()) return;
    auto next = std::make_shared<GraphProgram>(*it->second.back().program);
    edit(*next);
    pushVersion(it->second, correlation_id, std::move(next));
  }
  /// Exec `exec_id` is being destroyed. It is forgotten after the next drain that began after this call
  /// (the launches made before it are in the thread buffers by then): see drainEnded().
  void destroyed(uint32_t exec_id);
  /// The writer finished a drain that began at `drain_generation` (see drainBegins()): the execs destroyed
  /// before that drain began are forgotten.
  void drainEnded(uint64_t drain_generation);
  /// The writer begins a drain; returns its generation for drainEnded().
  uint64_t drainBegins();
  /// Forgets every exec (CUPTI is attached anew: what changed while it was detached is unknown).
  void clear();

  /// The program exec `exec_id` ran at the launch with CUPTI correlation id `correlation_id`, or null when
  /// the exec is not known (instantiated before recording, or dropped at the cap). The pointer stays valid
  /// while the caller holds it.
  std::shared_ptr<const GraphProgram> find(uint32_t exec_id, uint64_t correlation_id) const;

  /// Execs held now (tests).
  size_t size() const;

 private:
  struct Version {
    uint64_t from_correlation_id;  // 0: from instantiation
    std::shared_ptr<const GraphProgram> program;
  };
  static void pushVersion(std::vector<Version>& versions, uint64_t from, std::shared_ptr<const GraphProgram> p);

  mutable std::mutex mutex_;
  std::unordered_map<uint32_t, std::vector<Version>> execs_;
  std::vector<std::pair<uint32_t, uint64_t>> doomed_;  // (exec id, generation of the drain that may forget it)
  uint64_t generation_ = 0;                            // drains begun
};

/// The process's table (immortal: CUPTI may call back during exit). Any thread.
GraphExecTable& graphExecs() noexcept;

}  // namespace kc::inject
