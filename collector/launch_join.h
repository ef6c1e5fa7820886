// The launch/kernel join and the crediting of ranges, written once. A launch is counted once per
// correlation id (a runtime launch and the driver launch inside it are one record) in the range innermost
// at its API enter; memcpy/memset calls are not launches. A kernel or memory operation joins the launch held
// for its correlation id in its own capture window (the first launch record with the id; a repeat joins
// nothing) and is credited to that launch's range (a replayed graph kernel, under GraphView::kCapturePath,
// to the range open at its capture), or else is unmatched: credited to no range, not even the root. A
// launch that leaves its table with nothing joined is a launch without kernel, unless it was captured
// into a graph or is a memcpy/memset call. JoinRules applies these rules to its user's storage; each user
// holds launches in a table of its own, under its own memory bound, and decides when they leave it:
// summarize() (collector/analysis.cpp: the whole log), the streaming join (collector/stream_summary.cpp: a
// ring and capped tables), summary mode's aggregator (collector/aggregator.cpp: a settling window).
// GPU-free, header only, no allocation of its own.
#pragma once

#include <algorithm>
#include <cstdint>

#include "collector/log_format.h"
#include "collector/saturating.h"

namespace kc {

/// CUPTI callback ids of the launch calls that run one kernel per device under one correlation id:
/// cudaLaunchCooperativeKernelMultiDevice (runtime domain) and cuLaunchCooperativeKernelMultiDevice (driver
/// domain), from CUPTI's cupti_runtime_cbid.h and cupti_driver_cbid.h.
inline constexpr uint32_t kCbidRuntimeLaunchMultiDevice = 272;
inline constexpr uint32_t kCbidDriverLaunchMultiDevice = 480;

/// Whether launch record `l` may run several kernels: a graph launch, a multi-device cooperative launch (one
/// kernel per device). Any other kernel launch runs one kernel.
inline bool launchRunsSeveralKernels(const LaunchBody& l) {
  return l.is_graph_launch ||
         (l.domain == static_cast<uint8_t>(ApiDomain::kRuntime) && l.cbid == kCbidRuntimeLaunchMultiDevice) ||
         (l.domain == static_cast<uint8_t>(ApiDomain::kDriver) && l.cbid == kCbidDriverLaunchMultiDevice);
}

/// What a join table keeps of a launch besides its range and correlation id (one byte per launch held).
enum HeldFlags : uint8_t {
  kHeldGraph = 1,     // a graph launch: more kernels may follow
  kHeldCaptured = 2,  // kLaunchCaptured: recorded into a graph during stream capture, runs nothing
  kHeldMemOp = 4,     // kLaunchMemOp: a memcpy/memset call, joined by memory operations
  kHeldMatched = 8,   // a kernel or memory operation joined it
  kHeldSeveral = 16,  // launchRunsSeveralKernels(): several kernels are no sign of damage
};

/// The HeldFlags of launch record `l` as it enters a join table.
inline uint8_t heldFlags(const LaunchBody& l) {
  return static_cast<uint8_t>((l.is_graph_launch ? kHeldGraph : 0) | (launchRunsSeveralKernels(l) ? kHeldSeveral : 0) |
                              ((l.flags & kLaunchCaptured) ? kHeldCaptured : 0) |
                              ((l.flags & kLaunchMemOp) ? kHeldMemOp : 0));
}

/// Whether a launch that leaves its join table with these HeldFlags is a launch without kernel.
inline bool ranNothing(uint8_t flags) { return !(flags & (kHeldMatched | kHeldCaptured | kHeldMemOp)); }

/// `t` += one kernel of `ns` GPU ns: count, total, shortest and longest. `Tally`: KernelTally or a
/// snapshot's kernel row (SnapshotKernelBody).
template <typename Tally>
void addKernelNs(Tally& t, uint64_t ns) {
  t.min_ns = t.count == 0 ? ns : std::min(t.min_ns, ns);
  t.max_ns = t.count == 0 ? ns : std::max(t.max_ns, ns);
  satAdd(t.count, 1);
  satAdd(t.gpu_ns, ns);
}

/// Adds one GPU memory operation (`kind` a MemOpKind, its bytes and GPU ns) to the memcpy or memset numbers
/// of `r`, or a graph launch's GPU span (MemOpKind::kGraph) to its graph_gpu_* numbers: `r` a RangeStats,
/// or any row with the same memcpy_*/memset_*/graph_gpu_* fields.
template <typename Row>
void addMemOp(Row& r, uint8_t kind, uint64_t bytes, uint64_t ns) {
  if (kind == static_cast<uint8_t>(MemOpKind::kGraph)) {
    satAdd(r.graph_gpu_launches, 1);
    satAdd(r.graph_gpu_ns, ns);
    return;
  }
  const bool memset = kind == static_cast<uint8_t>(MemOpKind::kMemset);
  ++(memset ? r.memset_count : r.memcpy_count);
  satAdd(memset ? r.memset_bytes : r.memcpy_bytes, bytes);
  satAdd(memset ? r.memset_ns : r.memcpy_ns, ns);
}

/// The `n`th kernel record (1, 2, ...) joined a launch with this correlation id that runs one kernel (not
/// launchRunsSeveralKernels(), nor a memcpy/memset call): from the second on, counted in `t.extra_kernels`
/// (the launch in launches_many_kernels once; Summary's fields).
template <typename Totals>
void noteKernelsOfLaunch(Totals& t, uint64_t n, uint64_t correlation_id) {
  if (n < 2) return;
  if (n == 2) ++t.launches_many_kernels;
  ++t.extra_kernels;
  if (n > t.most_kernels_one_launch) {
    t.most_kernels_one_launch = n;
    t.most_kernels_id = correlation_id;
  }
}

/// The range a replayed graph kernel is credited to under GraphView::kCapturePath: its node -> (the
/// originals of clones) -> the node created during stream capture -> the range open then, in `*scope`.
/// `node(id)` gives the GraphNodeBody of a node id or nullptr. False, `*scope` unchanged, when the chain
/// breaks or is longer than 64 nodes.
template <typename FindNode>
bool captureScope(FindNode&& node, uint64_t node_id, uint32_t* scope) {
  for (int hops = 0; hops < 64; ++hops) {
    const GraphNodeBody* g = node(node_id);
    if (g == nullptr) return false;
    if (g->original_node_id == 0 || g->original_node_id == node_id) {
      *scope = g->scope_id;
      return true;
    }
    node_id = g->original_node_id;
  }
  return false;
}

/// What a range is credited with (Ranges::credit()'s first argument; the aggregator counts what its key
/// cap drops by it).
enum class Credit : uint8_t { kLaunch, kRange, kKernel, kMemOp };

/// The join's rules, applied to one user's storage; holds `Ranges` (a small handle) and a reference to
/// the totals. Not thread-safe: the caller's thread owns the storage.
///
/// `Ranges` holds the per-range rows:
///  - `bool credit(Credit what, uint32_t scope_id, Add&& add)` calls add(row) on the row or rows of range
///    scope_id (a type with RangeStats' field names) and returns true, or returns false when the range has
///    no row (the aggregator at its key cap);
///  - `kernelByName(scope_id, name_id, ns)` tallies a kernel credited to the range by its name;
///  - `unmatchedKernel(name_id, ns)` tallies a kernel no launch matched by its name.
/// `Totals` has Summary's count fields (a Summary, or a snapshot's SnapshotBeginBody).
template <typename Ranges, typename Totals>
struct JoinRules {
  Ranges ranges;
  Totals& t;

  /// Launch record `l` arrives: a launch (not a memcpy/memset call) is counted and credited to its range,
  /// with the API ns `api_ns()` gives (called once, for a launch only). Returns the HeldFlags it enters its
  /// table with.
  template <typename ApiNs>
  uint8_t launch(const LaunchBody& l, ApiNs&& api_ns) {
    const uint8_t flags = heldFlags(l);
    if (flags & kHeldMemOp) return flags;  // counted with its GPU operation
    ++t.launches;
    if (flags & kHeldCaptured) ++t.captured_launches;
    const uint64_t ns = api_ns();
    ranges.credit(Credit::kLaunch, l.scope_id, [&](auto& r) {
      ++r.launches;
      satAdd(r.graph_launches, l.is_graph_launch ? 1 : 0);
      satAdd(r.launch_api_ns, ns);
      satAdd(r.captured_launches, (flags & kHeldCaptured) ? 1 : 0);
    });
    return flags;
  }
  /// A launch held with `flags` leaves its table (pushed out, or the join ends).
  void left(uint8_t flags) { t.launches_without_kernel += ranNothing(flags) ? 1 : 0; }
  /// Launch record number `seq` (with HeldFlags `flags`) repeats the correlation id of a launch held for
  /// the same window: the first keeps the id, this one joins nothing and leaves at once. True for the first
  /// repeat (Summary::first_repeated_*; totals without those fields count nothing more).
  bool repeated(uint8_t flags, uint64_t seq, uint64_t correlation_id) {
    left(flags);
    if constexpr (requires { t.repeated_launch_ids; }) {
      if (t.repeated_launch_ids++ == 0) {
        t.first_repeated_launch = seq;
        t.first_repeated_id = correlation_id;
        return true;
      }
    }
    return false;
  }
  /// A kernel joins a held launch: marks it matched (`flags`) and, where the table counts them
  /// (`kernels_joined` not null), counts it among the kernels of a launch that runs one.
  void kernelJoined(uint8_t& flags, uint32_t* kernels_joined, uint64_t correlation_id) {
    if constexpr (requires { t.extra_kernels; })
      if (kernels_joined != nullptr && !(flags & (kHeldSeveral | kHeldMemOp)))
        noteKernelsOfLaunch(t, ++*kernels_joined, correlation_id);
    flags |= kHeldMatched;
  }
  /// Credits a joined kernel (`ns` GPU ns) to range `scope` and to its name there.
  void creditKernel(uint32_t scope, uint32_t name_id, uint64_t ns) {
    if (ranges.credit(Credit::kKernel, scope, [&](auto& r) {
          ++r.kernels;
          satAdd(r.gpu_ns, ns);
        }))
      ranges.kernelByName(scope, name_id, ns);
  }
  /// kernelJoined(), then creditKernel() to `scope`: the launch's range, or the capture range.
  void kernel(uint8_t& flags, uint32_t* kernels_joined, uint64_t correlation_id, uint32_t scope, uint32_t name_id,
              uint64_t ns) {
    kernelJoined(flags, kernels_joined, correlation_id);
    creditKernel(scope, name_id, ns);
  }
  /// A memory operation (MemOpKind `kind`, bytes, GPU ns) joins a launch held with `flags` in range `scope`.
  /// A graph launch's GPU span (kGraph) adds GPU time only: its kernels are what makes it a launch with
  /// kernels (a graph kcount could not read stays a launch without kernel).
  void memOp(uint8_t& flags, uint32_t scope, uint8_t kind, uint64_t bytes, uint64_t ns) {
    if (kind != static_cast<uint8_t>(MemOpKind::kGraph)) flags |= kHeldMatched;
    ranges.credit(Credit::kMemOp, scope, [&](auto& r) { addMemOp(r, kind, bytes, ns); });
  }
  void memOp(uint8_t& flags, uint32_t scope, const MemOpBody& m) {
    memOp(flags, scope, m.kind, m.bytes, span(m.start_ns, m.end_ns));
  }
  /// A kernel (`ns` GPU ns) that no launch matched: counted, and by name; credited to no range.
  void unmatchedKernel(uint32_t name_id, uint64_t ns) {
    ++t.unmatched_kernels;
    if constexpr (requires { t.unmatched_kernel_gpu_ns; }) satAdd(t.unmatched_kernel_gpu_ns, ns);
    ranges.unmatchedKernel(name_id, ns);
  }
  void unmatchedMemOp() { ++t.unmatched_mem_ops; }
  /// A range instance credited to its range, with the host ns from begin to end that `cpu_ns()` gives,
  /// called for each row credited (summarize() notes a damaged range of an unknown scope once per row).
  template <typename CpuNs>
  void range(const RangeBody& rb, CpuNs&& cpu_ns) {
    if constexpr (requires { t.ranges; }) ++t.ranges;
    ranges.credit(Credit::kRange, rb.scope_id, [&](auto& r) {
      ++r.instances;
      if constexpr (requires { r.unclosed; }) r.unclosed += (rb.flags & kRangeUnclosed) ? 1 : 0;
      satAdd(r.cpu_ns, cpu_ns());
    });
  }
};

}  // namespace kc
