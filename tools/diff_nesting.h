// `kcount diff`: ranges matched across nesting. Where a range is on both sides but its children differ
// (eager step/gate, step/up, step/act, step/down against compiled step/mlp: compilation fused them), the
// children on one side only are compared as one group against those of the other side, under the nearest
// path both sides have. Pure functions of two DiffSide values (tools/diff.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/diff.h"

namespace kc {

/// Children of one common range that are on one side only, summed per side.
struct Regrouping {
  std::string parent;  // the common range's path (a DiffSide key; "(overall)" for top-level ranges)
  std::vector<std::string> paths_a, paths_b;  // the children only in A / only in B (DiffSide keys), depth-first
  std::vector<std::string> names_a, names_b;  // their own names as recorded (raw), same order
  DiffUnit a, b;  // the children of each side summed: kernels, GPU time, kernel identities (by_identity)
  uint64_t instances_a = 0, instances_b = 0;  // instances of the common range on each side (0: "(overall)")
};

/// Every range on both sides whose children differ, with the children only in A and only in B (either list
/// may be empty when the other side merely has more ranges), in A's depth-first order of the common
/// ranges. Top-level ranges of one side are not regrouped (they are different work: workDiff()). Children's subtrees are included in their numbers (inclusive), not listed apart. Pure;
/// thread-safe for distinct outputs; never throws but std::bad_alloc.
std::vector<Regrouping> regroupings(const DiffSide& a, const DiffSide& b);

/// The comparison line of a regrouping: "gate, up, act, down (5 kernels per step) in A ran as mlp (4 kernels
/// per step) in B". Kernels per unit are the children's kernels divided by the common range's instances
/// (two decimals when it does not divide; totals for "(overall)"). A side with no such children reads
/// "nothing". At most kMaxRegroupNames names a side, the rest counted ("and 3 more"). Names as recorded
/// (the caller escapes them for text).
std::string regroupLine(const Regrouping& r, const std::string& unit);

/// The kernel identities of each side of a regrouping, per instance of the common range, one line a side:
/// {"A: 3 GEMM + MulFunctor + GeluCUDAKernelImpl", "B: 3 GEMM + triton_poi_fused__unsafe_view_gelu_mul_0"}.
/// GEMM kernels are counted together by category; each other identity is named by compactKernelName(),
/// largest GPU time first, with "2× " where it runs more than once per instance; at most kMaxRegroupKernels
/// items a side, the rest counted ("and 2 more"). Empty when neither side ran a kernel there.
std::vector<std::string> regroupKernelsLines(const Regrouping& r);

/// Most items regroupKernelsLines() lists for a side.
inline constexpr size_t kMaxRegroupKernels = 8;
/// Most child names regroupLine() lists for a side.
inline constexpr size_t kMaxRegroupNames = 12;
/// Widest compactKernelName() (display columns), shortened in the middle beyond.
inline constexpr size_t kMaxCompactName = 48;

/// A kernel's name as a regrouping names it: the last template argument of its short name when it has
/// one that is a name (at::native::vectorized_elementwise_kernel<8, MulFunctor> -> MulFunctor), else the
/// short name without namespaces and template arguments; at most kMaxCompactName columns. Pure.
std::string compactKernelName(const DiffKernel& k);

/// JSON of a regrouping for diff's "verdicts" ("regrouped"): {"under" (the DiffSide key; diff JSON writes
/// its path key), "a": [names], "b": [names], "kernels_a", "kernels_b", "instances_a", "instances_b"}. Pure.
nlohmann::json regroupJson(const Regrouping& r);

}  // namespace kc
