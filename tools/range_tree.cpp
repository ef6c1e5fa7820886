#include "tools/range_tree.h"



namespace kc {

std::vector<uint32_t> scopeParents(const Summary& s) {
  std::vector<uint32_t> parent(s.inclusive.size(), kRootScope);
  for (size_t p = 0; p < s.children.size(); ++p)
    for (uint32_t c : s.children[p])
      if (c < parent.size()) parent[c] = static_cast<uint32_t>(p);
  return parent;
}

std::vector<uint32_t> scopeDepths(const Summary& s) {
  std::vector<uint32_t> depth(s.children.size(), 0);
  for (uint32_t id : s.children_order)
    if (id < s.children.size())
      for (uint32_t c : s.children[id])
        if (c < depth.size()) depth[c] = depth[id] + 1;
  return depth;
}

namespace {
bool hasNumbers(const RangeStats& r) { return r.instances > 0 || r.launches > 0 || r.kernels > 0; }
}  // namespace

std::vector<uint32_t> shownScopes(const LogData&, const Summary& s) {
  const size_t n = s.inclusive.size();
  std::vector<uint8_t> show(n, 0);
  const std::vector<uint32_t> parent = scopeParents(s);
  for (size_t id = 0; id < n; ++id) show[id] = id == kRootScope || hasNumbers(s.inclusive[id]);
  // The parents of a shown range are shown too (a placeholder row when they have no numbers of their
  // own, e.g. a range open across a whole capture window), so the tree never indents under nothing.
  // The repaired tree has no cycle: each walk ends at the root or at a range already shown.
  for (size_t id = 1; id < n; ++id)
    if (show[id])
      for (uint32_t p = parent[id]; p != kRootScope && !show[p]; p = parent[p]) show[p] = 1;
  std::vector<uint32_t> out;
  for (uint32_t id : s.children_order)
    if (id < n && show[id]) out.push_back(id);
  return out;
}

bool isPlaceholder(const Summary& s, uint32_t id) {
  return id != kRootScope && id < s.inclusive.size() && !hasNumbers(s.inclusive[id]) && !tallyDropped(s, id);
}

bool tallyDropped(const Summary& s, uint32_t id) { return id < s.tally_dropped.size() && s.tally_dropped[id] != 0; }

}  // namespace kc
