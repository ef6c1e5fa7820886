// The verdict of a range: which layer dominates it (CPU in the range, CPU inside launch calls, GPU work),
// from its tallies (layerVerdict(), rangeLayers(), innermostVerdict()); docs/usage.md, "Verdict".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "collector/analysis.h"
#include "collector/log_reader.h"

namespace kc {

/// The three layers of one range (CPU in the range, CPU inside launch calls, GPU in kernels), for one view
/// (inclusive or innermost numbers).
struct RangeLayers {
  uint64_t gemm_gpu_ns = 0;   // GPU time of kernels the decoder classifies as GEMM (tools/kernel_decode.h)
  uint64_t other_gpu_ns = 0;  // gpu_ns - gemm_gpu_ns
  double kernels_per_launch = 0;  // kernels / launches; meaningful only if launches > 0
  std::string verdict;        // layerVerdict(); "" when the range has no instance (the "(no range)" row)
};

/// What a verdict weighs for one range: sums over its instances (docs/usage.md, "Verdict").
struct VerdictInputs {
  uint64_t instances = 0;
  uint64_t cpu_ns = 0;         // c: wall time in the range (RangeStats::cpu_ns)
  uint64_t launch_api_ns = 0;  // l: time inside kernel and graph launch calls (memcpy/memset calls are not in it)
  uint64_t launches = 0;       // kernel and graph launch calls (RangeStats::launches)
  uint64_t kernels = 0;        // kernels run on the GPU
  uint64_t kernel_gpu_ns = 0;  // their GPU time
  uint64_t memcpy_count = 0, memset_count = 0;  // memory operations run on the GPU
  uint64_t mem_gpu_ns = 0;     // their GPU time (memcpy_ns + memset_ns)
  uint64_t launch_timing_sample = 1;  // N of KCOUNT_LAUNCH_TIMING (launchTimingSample())
  /// Summary built with --graph-view capture (Summary::graph_view == GraphView::kCapturePath): the
  /// kernels of a graph launch are credited to the range each was captured in, not to the launch's.
  bool capture_view = false;
  uint64_t graph_launches = 0;     // of `launches`, cudaGraphLaunch/cuGraphLaunch calls
  uint64_t captured_launches = 0;  // of `launches`, issued during stream capture (recorded, not run)
  /// kernel_gpu_ns holds the GPU spans of the range's graph launches (KCOUNT_GPU_TIME=graphs: first node's
  /// start to last node's end), not its kernels' own GPU time: the verdict names them ("(graph spans)").
  bool graph_spans = false;
};

/// VerdictInputs of `r` (inclusive or exclusive stats of one range) whose range has `instances`
/// instances and `cpu_ns` wall time, in a log whose launch CPU is sampled 1 in `launch_timing_sample`.
VerdictInputs verdictInputs(const RangeStats& r, uint64_t instances, uint64_t cpu_ns, uint64_t launch_timing_sample,
                            GraphView graph_view);

/// Which layer dominates a range. Rule (docs/usage.md, "Verdict"), with c = CPU wall time in the range,
/// l = CPU time inside its kernel and graph launch calls, g = GPU time of the kernels and memory
/// operations (memcpy, memset) it issued (all summed over the range's instances; the text shows them per
/// instance). "GPU work" is followed by what it holds, "(kernels and memory copies)", when memory
/// operations are part of it and take 1% of g or more, or the range ran no kernel:
///   no launch, no kernel, no memory operation -> "no GPU work: C in the range"
///   g >= c                            -> "GPU-bound: G of GPU work in C of range time"
///   c > g, l >= g and l >= c / 2      -> "launch-bound: L of launch calls for G of GPU work"; when the
///                                        mean launch call is 100 µs or more, "(M per launch call: first-call
///                                        setup ..., not the launch rate)" follows "launch calls"
///   c > g, otherwise                  -> "CPU-bound: C in the range for G of GPU work (L in launch calls)",
///                                        "(no kernel launch calls)" for a range without launches
/// memcpy/memset API calls are not launch calls: their CPU time is in c, not in l.
/// Under --graph-view capture (v.capture_view), a range with graph launches or captured launches gets no
/// bound verdict (its CPU time and the GPU time credited to it come from different calls): "graph launches:
/// their kernels are credited to the ranges they were captured in (--graph-view capture, no bound
/// verdict): L of launch calls in C of range time", or for a range that captured kernels "captured
/// kernels: their replays' GPU work is credited here (--graph-view capture, no bound verdict): G of GPU
/// work, C in the range, L in launch calls".
/// Returns "" if instances == 0 (no CPU time is known). Per-instance durations are rounded to the nearest ns (formatMeanDuration()).
/// `launch_timing_sample` N > 1 (KCOUNT_LAUNCH_TIMING, launchTimingSample()): l is an estimate (one call in
/// N timed, counted N times). It is capped at c (a range's launch calls lie inside it), the verdicts that
/// show it say "estimated from 1 in N calls", and with fewer than kMinTimedLaunchesForVerdict x N launches
/// (too few timed calls to split launch CPU off) no launch-bound verdict is given: "CPU-bound: C in the
/// range for G of GPU work (launch CPU not estimated: M launches, 1 in N timed)". Pure; thread-safe.
std::string layerVerdict(const VerdictInputs& v);

/// Expected timed launch calls (launches / N) below which a sampled launch CPU is not used for a verdict.
inline constexpr uint64_t kMinTimedLaunchesForVerdict = 8;

/// Layers of `r` (inclusive or exclusive stats of one range) whose range has `instances` instances and
/// `cpu_ns` wall time, in a summary joined with `graph_view` (Summary::graph_view). GEMM classification
/// decodes each kernel name of r.by_kernel; the verdict is layerVerdict(verdictInputs(...)) where the log
/// has kernel GPU times; in a log with graph GPU spans only (KCOUNT_GPU_TIME=graphs) it weighs the spans
/// (VerdictInputs::graph_spans) for a range whose every launch is a graph launch with a span and that ran
/// no memory operation (a decode step replayed as one graph), and is "" for any other range, as for every
/// range of a log without GPU times (KCOUNT_GPU_TIME=0).
RangeLayers rangeLayers(const LogData& log, const RangeStats& r, uint64_t instances, uint64_t cpu_ns,
                        GraphView graph_view = GraphView::kLaunch);

/// Text that starts the verdict of a range shown with its own numbers (`--view innermost`) whose child
/// ranges issued work: its verdict is then that of its inclusive numbers (its wall time covers its
/// children's), after this prefix.
inline constexpr std::string_view kWithChildRanges = "with its child ranges: ";
/// Verdict of a range row shown with its own (exclusive) numbers `ex` (`--view innermost`, JSON
/// "layers.innermost"): rangeLayers(ex).verdict when no child range issued work (the launches, kernels
/// and memory operations of `in`, its inclusive numbers, are its own); else kWithChildRanges followed by
/// rangeLayers(in).verdict, since its wall time `cpu_ns` covers its children's work. "" where
/// rangeLayers() gives no verdict.
std::string innermostVerdict(const LogData& log, const RangeStats& ex, const RangeStats& in, uint64_t instances,
                             uint64_t cpu_ns, GraphView graph_view = GraphView::kLaunch);

}  // namespace kc
