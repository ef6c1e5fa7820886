#include "tools/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "tools/kernel_decode.h"
#include "tools/log_state.h"
#include "tools/text.h"

namespace kc {

// A launch call this long on average is not the launch rate (see layerVerdict).
constexpr uint64_t kSlowLaunchCallNs = 100'000;
// CPU time outside launch calls per launch from which a CPU-bound range is said to spend it on something
// other than issuing work (see layerVerdict).
constexpr uint64_t kSlowHostPerLaunchNs = 1'000'000;

namespace {

/// What the GPU work of a verdict holds, for the words after "of GPU work": "" for kernels alone (or
/// nothing), else " (kernels and memory copies)", " (memsets)", " (kernels, memory copies and memsets)".
std::string gpuWorkWhat(uint64_t kernels, uint64_t memcpy_count, uint64_t memset_count) {
  if (memcpy_count == 0 && memset_count == 0) return {};
  std::vector<std::string_view> parts;
  if (kernels != 0) parts.push_back("kernels");
  if (memcpy_count != 0) parts.push_back("memory copies");
  if (memset_count != 0) parts.push_back("memsets");
  std::string out = " (";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out + ")";
}

/// The verdict of `r` (rangeLayers()): kernel GPU times where the log has them, else the graph launches'
/// GPU spans where they are all of the range's GPU work, else "".
std::string verdictOf(const LogData& log, const RangeStats& r, uint64_t instances, uint64_t cpu_ns,
                      GraphView graph_view) {
  VerdictInputs v = verdictInputs(r, instances, cpu_ns, launchTimingSample(log), graph_view);
  if (gpuTimeRecorded(log)) return layerVerdict(v);
  const bool spans_only = r.launches != 0 && r.graph_gpu_launches == r.launches && r.memcpy_count == 0 &&
                          r.memset_count == 0;
  if (!graphGpuTimeRecorded(log) || !spans_only) return {};
  v.kernel_gpu_ns = r.graph_gpu_ns;
  v.graph_spans = true;
  return layerVerdict(v);
}

}  // namespace

VerdictInputs verdictInputs(const RangeStats& r, uint64_t instances, uint64_t cpu_ns, uint64_t launch_timing_sample,
                            GraphView graph_view) {
  VerdictInputs v;
  v.instances = instances;
  v.cpu_ns = cpu_ns;
  v.launch_api_ns = r.launch_api_ns;
  v.launches = r.launches;
  v.kernels = r.kernels;
  v.kernel_gpu_ns = r.gpu_ns;
  v.memcpy_count = r.memcpy_count;
  v.memset_count = r.memset_count;
  v.mem_gpu_ns = r.memcpy_ns;
  satAdd(v.mem_gpu_ns, r.memset_ns);
  v.launch_timing_sample = launch_timing_sample;
  v.capture_view = graph_view == GraphView::kCapturePath;
  v.graph_launches = r.graph_launches;
  v.captured_launches = r.captured_launches;
  return v;
}

std::string layerVerdict(const VerdictInputs& v) {
  const uint64_t instances = v.instances, cpu_ns = v.cpu_ns, launches = v.launches,
                 launch_timing_sample = v.launch_timing_sample;
  uint64_t launch_api_ns = v.launch_api_ns;
  // GPU work: kernels and memory operations (memcpy/memset) alike.
  uint64_t gpu_ns = v.kernel_gpu_ns;
  satAdd(gpu_ns, v.mem_gpu_ns);
  const uint64_t mem_ops = v.memcpy_count + v.memset_count;
  // Memory operations are named where they matter: without kernels, or at 1% of the GPU work and more
  // (cuBLAS workspace memsets of a few µs beside ms of GEMMs are not worth a word on every line).
  const bool name_mem = v.kernels == 0 || v.mem_gpu_ns >= gpu_ns / 100;
  const std::string what = v.graph_spans ? std::string(" (graph spans)")
                           : name_mem    ? gpuWorkWhat(v.kernels, v.memcpy_count, v.memset_count)
                                         : std::string();
  if (instances == 0) return {};
  const bool sampled = launch_timing_sample > 1;
  if (sampled) launch_api_ns = std::min(launch_api_ns, cpu_ns);  // an estimate can overshoot; the calls cannot
  // Per instance, rounded as every per-instance time of the tool's text (formatMeanDuration).
  const std::string c = formatMeanDuration(cpu_ns, instances), l = formatMeanDuration(launch_api_ns, instances),
                    g = formatMeanDuration(gpu_ns, instances);
  const std::string per = instances > 1 ? " per instance" : "";
  if (launches == 0 && v.kernels == 0 && mem_ops == 0) return fmt::format("no GPU work: {} in the range{}", c, per);
  // --graph-view capture: a graph launch's kernels are credited to the range they were captured in, so a
  // range with graph launches holds their launch CPU without their GPU time, and one that captured kernels
  // holds their replays' GPU time without the CPU time that launched them. Weighing one against the other
  // would compare different calls: what the view shows is said instead, without a bound verdict.
  if (v.capture_view && (v.graph_launches != 0 || v.captured_launches != 0)) {
    const std::string estimated = sampled ? fmt::format(" (estimated from 1 in {} calls)", launch_timing_sample) : "";
    if (v.captured_launches == 0)
      return fmt::format(
          "graph launches: their kernels are credited to the ranges they were captured in (--graph-view capture, "
          "no bound verdict): {} of launch calls{} in {} of range time{}{}",
          l, estimated, c, v.kernels + mem_ops != 0 ? fmt::format(", {} of GPU work{} credited to it", g, what) : "",
          per);
    return fmt::format(
        "captured kernels: their replays' GPU work is credited here (--graph-view capture, no bound verdict): {} of "
        "GPU work{}, {} in the range, {} in launch calls{}{}",
        g, what, c, l, estimated, per);
  }
  if (gpu_ns >= cpu_ns) return fmt::format("GPU-bound: {} of GPU work{} in {} of range time{}", g, what, c, per);
  // memcpy/memset API calls are not launch calls (launches and l hold kernel and graph launches only).
  const std::string calls_what = what.empty() ? "" : what.substr(2, what.size() - 3) + "; ";
  if (sampled && launches != 0 && launches < kMinTimedLaunchesForVerdict * launch_timing_sample)
    return fmt::format("CPU-bound: {} in the range for {} of GPU work ({}launch CPU not estimated: {}, 1 in {} timed){}",
                       c, g, calls_what,
                       launches == 1 ? std::string("1 launch") : fmt::format("{} launches", launches),
                       launch_timing_sample, per);
  const std::string estimated = sampled ? fmt::format("estimated from 1 in {} calls", launch_timing_sample) : "";
  // Launch-bound only where the launch calls are at least half of the range's CPU time: a range that spends
  // most of its time elsewhere (Python, the framework, first-call setup) is CPU-bound even when its launch
  // calls outlast its kernels, and fewer launches would not make it much faster.
  if (launches != 0 && launch_api_ns >= gpu_ns && launch_api_ns >= cpu_ns - std::min(cpu_ns, launch_api_ns)) {
    // Launch calls of 100 µs and more on average (a launch takes a few µs: FIELD-NOTES, 4.3-4.8 µs on the
    // H200) are first-call work inside the call (loading the kernel's module, lazy initialization), which
    // fewer launches or CUDA graphs would not remove: said, with the mean per call.
    const uint64_t per_call = launches != 0 ? launch_api_ns / launches : 0;
    const std::string slow = per_call >= kSlowLaunchCallNs
                                 ? fmt::format(" ({} per launch call: first-call setup such as loading the kernel's "
                                               "module, not the launch rate)",
                                               formatMeanDuration(launch_api_ns, launches))
                                 : std::string();
    return fmt::format("launch-bound: {} of launch calls{}{} for {} of GPU work{}{}", l,
                       sampled ? " (" + estimated + ")" : std::string(), slow, g, what, per);
  }
  // Issuing a kernel from PyTorch eager costs some 10-50 µs of CPU (dispatch and launch); a millisecond and
  // more outside launch calls per launch is other work: said, because fewer launches or CUDA graphs would
  // not remove it. A range that ran once is most likely first-call work (compilation, autotuning, library
  // or plan setup); in a repeated one it may be that (in its first instances: a step inside a warm-up) or
  // host work or waits between its launches, which the tallies cannot tell apart.
  std::string outside;
  if (launches != 0 && cpu_ns > launch_api_ns) {
    const uint64_t host = cpu_ns - launch_api_ns;
    if (host / launches >= kSlowHostPerLaunchNs)
      outside = fmt::format(
          "; {} per launch outside launch calls: {}", formatMeanDuration(host, launches),
          instances == 1 ? "ran once, most likely first-call work (compilation, autotuning, library or plan "
                           "setup), not launch overhead"
                         : "first-call work, host work or waits, not launch overhead");
  }
  const std::string calls = launches == 0 ? std::string("no kernel launch calls")
                                          : fmt::format("{} in launch calls{}", l, sampled ? ", " + estimated : std::string());
  return fmt::format("CPU-bound: {} in the range for {} of GPU work ({}{}){}{}", c, g, calls_what, calls, per, outside);
}

RangeLayers rangeLayers(const LogData& log, const RangeStats& r, uint64_t instances, uint64_t cpu_ns,
                        GraphView graph_view) {
  RangeLayers y;
  for (const auto& [name_id, t] : r.by_kernel)
    if (decodeKernelName(log.str(name_id)).category == KernelCategory::kGemm) y.gemm_gpu_ns += t.gpu_ns;
  y.other_gpu_ns = r.gpu_ns > y.gemm_gpu_ns ? r.gpu_ns - y.gemm_gpu_ns : 0;
  y.kernels_per_launch = r.launches ? static_cast<double>(r.kernels) / static_cast<double>(r.launches) : 0.0;
  y.verdict = verdictOf(log, r, instances, cpu_ns, graph_view);
  return y;
}

std::string innermostVerdict(const LogData& log, const RangeStats& ex, const RangeStats& in, uint64_t instances,
                             uint64_t cpu_ns, GraphView graph_view) {
  const bool child_work = in.launches != ex.launches || in.kernels != ex.kernels ||
                          in.memcpy_count != ex.memcpy_count || in.memset_count != ex.memset_count;
  if (!child_work) return verdictOf(log, ex, instances, cpu_ns, graph_view);
  const std::string v = verdictOf(log, in, instances, cpu_ns, graph_view);
  return v.empty() ? v : std::string(kWithChildRanges) + v;
}

}  // namespace kc
