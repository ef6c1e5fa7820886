#include "tools/summary_focus.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "collector/counted.h"
#include "tools/range_names.h"
#include "tools/range_tree.h"

namespace kc {
namespace {

/// The `n` ids of `ids` with the largest `key` (ties: the earlier in `ids`), key 0 never picked.
template <typename Key>
std::vector<uint32_t> largest(std::vector<uint32_t> ids, size_t n, Key key) {
  std::stable_sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) { return key(a) > key(b); });
  std::vector<uint32_t> out;
  for (uint32_t id : ids) {
    if (out.size() == n || key(id) == 0) break;
    out.push_back(id);
  }
  return out;
}

/// The most repeated range: among those with about the most instances (amongMostRepeated()), the most
/// inclusive GPU time, then kernels, then launches, then instances; none (root) when no range has more
/// than one instance.
uint32_t mostRepeated(const Summary& s, const std::vector<uint32_t>& ranges) {
  uint64_t most = 0;
  for (uint32_t id : ranges) most = std::max(most, s.inclusive[id].instances);
  uint32_t best = kRootScope;
  auto rank = [&](uint32_t id) {
    const RangeStats& r = s.inclusive[id];
    return std::tuple(r.gpu_ns, r.kernels, r.launches, r.instances);
  };
  for (uint32_t id : ranges)
    if (s.inclusive[id].instances > 1 && amongMostRepeated(s.inclusive[id].instances, most) &&
        (best == kRootScope || rank(id) > rank(best)))
      best = id;
  return best;
}

/// The default choice of a large tree (focusScopes()): `pick` set to 1 for the ranges that matter.
void pickDefault(const Summary& s, const std::vector<uint32_t>& ranges, std::vector<uint8_t>& pick) {
  if (const uint32_t steady = mostRepeated(s, ranges); steady != kRootScope) {
    pick[steady] = 1;
    if (steady < s.children.size())
      for (uint32_t c : s.children[steady])
        if (c < pick.size()) pick[c] = 1;
  }
  // By their own (innermost) numbers: the ranges that ran the work, their parents coming along.
  for (uint32_t id : largest(ranges, kFocusTop, [&](uint32_t i) { return s.exclusive[i].gpu_ns; })) pick[id] = 1;
  for (uint32_t id : largest(ranges, kFocusTop, [&](uint32_t i) { return s.exclusive[i].launches; })) pick[id] = 1;
}

}  // namespace

FocusedScopes focusScopes(const LogData& log, const Summary& s, const std::vector<uint32_t>& shown,
                          const SummaryFocus& focus) {
  FocusedScopes f;
  f.keep.assign(s.inclusive.size(), 0);
  std::vector<uint32_t> ranges;
  for (uint32_t id : shown)
    if (id != kRootScope && id < s.inclusive.size()) ranges.push_back(id);
  f.ranges = ranges.size();
  if (!f.keep.empty()) f.keep[kRootScope] = 1;
  const bool everything = focus.all || (focus.depth < 0 && focus.range.empty() && ranges.size() <= kFocusAllUpTo);
  if (everything) {
    for (uint32_t id : ranges) f.keep[id] = 1;
    return f;
  }
  const std::vector<uint32_t> parent = scopeParents(s);
  const std::vector<uint32_t> depth = scopeDepths(s);
  std::vector<uint8_t> pick(s.inclusive.size(), 0);
  if (!focus.range.empty()) {
    // The range and everything under it: a range is picked when the named one is among its ancestors.
    bool found = false;
    std::vector<uint8_t> named(s.inclusive.size(), 0);
    for (uint32_t id : ranges)
      if (displayPath(log, id) == focus.range) named[id] = 1, found = true;
    if (!found) throw std::invalid_argument("--range " + focus.range + ": no such range in the table (a path as the verdict lines show it, e.g. step/attn)");
    for (uint32_t id : ranges)
      for (uint32_t a = id; a != kRootScope && a < named.size(); a = parent[a])
        if (named[a]) {
          pick[id] = 1;
          break;
        }
  }
  if (focus.depth >= 0)  // the top levels (of the named subtree, with --range)
    for (uint32_t id : ranges)
      pick[id] = depth[id] <= static_cast<uint64_t>(focus.depth) && (focus.range.empty() || pick[id]) ? 1 : 0;
  if (focus.range.empty() && focus.depth < 0) pickDefault(s, ranges, pick);
  // Every picked range with its parents, so the tree never indents under nothing.
  for (uint32_t id : ranges)
    if (pick[id])
      for (uint32_t a = id; a != kRootScope && a < f.keep.size() && !f.keep[a]; a = parent[a]) f.keep[a] = 1;
  for (uint32_t id : ranges) f.hidden += f.keep[id] ? 0 : 1;
  return f;
}

std::string focusNote(const FocusedScopes& f, const SummaryFocus& focus) {
  if (f.hidden == 0) return {};
  const std::string chosen =
      !focus.range.empty() ? "--range " + focus.range
      : focus.depth >= 0   ? fmt::format("--depth {}", focus.depth)
                           : fmt::format("shown: the most repeated range and its children, the {} of most GPU time and "
                                         "the {} of most launches of their own, and their parents",
                                         kFocusTop, kFocusTop);
  return fmt::format("{} of {} not shown ({}); kcount summary --all shows every range, --depth N the top N levels, "
                     "--range PATH one range's subtree; CSV and JSON carry every range",
                     f.hidden, counted(f.ranges, "range"), chosen);
}

}  // namespace kc
