#include "collector/analysis.h"

#include <algorithm>
#include <unordered_map>

namespace kc {
namespace {

void addCounts(RangeStats& into, const RangeStats& from) {
  into.launches += from.launches;
  into.captured_launches += from.captured_launches;
  into.memcpy_count += from.memcpy_count;
  into.memcpy_bytes += from.memcpy_bytes;
  into.memcpy_ns += from.memcpy_ns;
  into.memset_count += from.memset_count;
  into.memset_bytes += from.memset_bytes;
  into.memset_ns += from.memset_ns;
  into.graph_launches += from.graph_launches;
  into.launch_api_ns += from.launch_api_ns;
  into.kernels += from.kernels;
  into.gpu_ns += from.gpu_ns;
  for (const auto& [name, t] : from.by_kernel) {
    KernelTally& k = into.by_kernel[name];
    k.count += t.count;
    k.gpu_ns += t.gpu_ns;
  }
}

uint64_t span(uint64_t begin, uint64_t end) { return end > begin ? end - begin : 0; }

}  // namespace

Summary summarize(const LogData& log, const JoinOptions& options) {
  Summary s;
  const size_t n = std::max<size_t>(log.scopes.size(), 1);
  s.exclusive.resize(n);
  for (size_t i = 0; i < n; ++i) s.exclusive[i].scope_id = static_cast<uint32_t>(i);
  // A scope id no Scope record defined (corrupt or lost chunk) is credited to the root.
  auto scopeOf = [&](uint32_t id) -> uint32_t { return id < n ? id : kRootScope; };

  // Launches: one per correlation id; a repeated id keeps the first launch.
  std::unordered_map<uint64_t, size_t> by_corr;
  by_corr.reserve(log.launches.size() * 2);
  size_t memop_calls = 0, captured = 0;
  for (size_t i = 0; i < log.launches.size(); ++i) {
    const LaunchBody& l = log.launches[i];
    by_corr.emplace(l.correlation_id, i);
    RangeStats& r = s.exclusive[scopeOf(l.scope_id)];
    if (l.flags & kLaunchMemOp) {  // a memcpy/memset call: counted with its GPU operation below
      ++memop_calls;
      continue;
    }
    ++r.launches;
    r.graph_launches += l.is_graph_launch ? 1 : 0;
    r.launch_api_ns += span(l.enter_ns, l.exit_ns);
    if (l.flags & kLaunchCaptured) {
      ++r.captured_launches;
      ++captured;
    }
  }
  s.launches = log.launches.size() - memop_calls;

  // Capture path: a replayed kernel's node -> (clones) -> the node created during capture -> its range.
  std::unordered_map<uint64_t, const GraphNodeBody*> nodes;
  if (options.graph_view == GraphView::kCapturePath) {
    for (const GraphNodeBody& g : log.graph_nodes) nodes.emplace(g.node_id, &g);
  }
  auto captureScope = [&](uint64_t node_id, uint32_t* scope) {
    for (int hops = 0; hops < 64; ++hops) {
      auto it = nodes.find(node_id);
      if (it == nodes.end()) return false;
      if (it->second->original_node_id == 0 || it->second->original_node_id == node_id) {
        *scope = it->second->scope_id;
        return true;
      }
      node_id = it->second->original_node_id;
    }
    return false;
  };

  std::vector<uint8_t> launch_has_kernel(log.launches.size(), 0);
  for (const KernelBody& k : log.kernels) {
    auto it = by_corr.find(k.correlation_id);
    if (it == by_corr.end()) {
      ++s.unmatched_kernels;  // credited to no range, not even the root
      continue;
    }
    launch_has_kernel[it->second] = 1;
    uint32_t scope = log.launches[it->second].scope_id;
    if (options.graph_view == GraphView::kCapturePath && k.graph_node_id != 0) captureScope(k.graph_node_id, &scope);
    RangeStats& r = s.exclusive[scopeOf(scope)];
    const uint64_t ns = span(k.start_ns, k.end_ns);
    ++r.kernels;
    r.gpu_ns += ns;
    KernelTally& t = r.by_kernel[k.name_id];
    ++t.count;
    t.gpu_ns += ns;
  }
  s.kernels = log.kernels.size();
  for (const KernelBody& k : log.kernels) s.kernel_gpu_ns += span(k.start_ns, k.end_ns);
  for (const MemOpBody& m : log.mem_ops) {
    auto it = by_corr.find(m.correlation_id);
    if (it == by_corr.end()) {
      ++s.unmatched_mem_ops;
      continue;
    }
    launch_has_kernel[it->second] = 1;
    RangeStats& r = s.exclusive[scopeOf(log.launches[it->second].scope_id)];
    const uint64_t ns = span(m.start_ns, m.end_ns);
    if (m.kind == static_cast<uint8_t>(MemOpKind::kMemset)) {
      ++r.memset_count;
      r.memset_bytes += m.bytes;
      r.memset_ns += ns;
    } else {
      ++r.memcpy_count;
      r.memcpy_bytes += m.bytes;
      r.memcpy_ns += ns;
    }
  }
  s.mem_ops = log.mem_ops.size();
  // Captured launches run nothing; memory calls without an operation record (e.g. synchronous copies
  // CUPTI reports differently) are not launches.
  for (size_t i = 0; i < launch_has_kernel.size(); ++i)
    if (!launch_has_kernel[i] && !(log.launches[i].flags & (kLaunchCaptured | kLaunchMemOp))) ++s.launches_without_kernel;
  s.captured_launches = captured;

  for (const RangeBody& rb : log.ranges) {
    RangeStats& r = s.exclusive[scopeOf(rb.scope_id)];
    ++r.instances;
    r.cpu_ns += span(rb.begin_ns, rb.end_ns);
  }

  buildRangeTree(log, s);
  return s;
}

void buildRangeTree(const LogData& log, Summary& s) {
  const size_t n = s.exclusive.size();
  // Tree: a parent id out of range, or a scope whose parent chain never reaches the root (a cycle),
  // hangs under the root.
  std::vector<uint32_t> parent(n, kRootScope);
  for (size_t i = 1; i < n; ++i) {
    uint32_t p = log.scopes[i].parent_id;
    if (p >= n || p == i) p = kRootScope;
    parent[i] = p;
  }
  // Walk each chain once (0 = not seen, 1 = on the current walk, 2 = reaches the root). A walk that
  // meets its own path found a cycle: the last node walked is cut from its parent and hung under the root.
  std::vector<uint8_t> state(n, 0);
  state[kRootScope] = 2;
  std::vector<uint32_t> path;
  for (size_t i = 1; i < n; ++i) {
    path.clear();
    uint32_t id = static_cast<uint32_t>(i);
    while (state[id] == 0) {
      state[id] = 1;
      path.push_back(id);
      id = parent[id];
    }
    if (state[id] == 1) parent[path.back()] = kRootScope;
    for (uint32_t p : path) state[p] = 2;
  }
  s.children.assign(n, {});
  for (size_t i = 1; i < n; ++i) s.children[parent[i]].push_back(static_cast<uint32_t>(i));

  s.children_order.reserve(n);
  std::vector<uint32_t> stack{kRootScope};
  while (!stack.empty()) {
    const uint32_t id = stack.back();
    stack.pop_back();
    s.children_order.push_back(id);
    const auto& kids = s.children[id];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }

  // Inclusive: own instances/cpu_ns, plus launch and kernel numbers of all descendants.
  s.inclusive = s.exclusive;
  for (auto it = s.children_order.rbegin(); it != s.children_order.rend(); ++it) {
    if (*it == kRootScope) continue;
    addCounts(s.inclusive[parent[*it]], s.inclusive[*it]);
  }
}

}  // namespace kc
