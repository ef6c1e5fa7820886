#include "tools/summary_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "collector/aggregator.h"
#include "collector/counted.h"
#include "tools/json_writer.h"
#include "tools/kernel_names.h"
#include "tools/log_state.h"
#include "tools/log_state_internal.h"
#include "tools/multi_log.h"
#include "tools/name_elision.h"
#include "tools/range_names.h"
#include "tools/range_names_internal.h"
#include "tools/range_tree.h"
#include "tools/self_cost.h"
#include "tools/table_width.h"
#include "tools/text.h"
#include "tools/text_table.h"
#include "tools/verdict.h"

namespace kc {

namespace {

using nlohmann::json;

/// Longest command line the table's header shows whole (characters); longer ones are shortened.
constexpr size_t kMaxCommandShown = 400;

/// A COUNTS object of `summary --format json`; `graph_spans` (a KCOUNT_GPU_TIME=graphs log): with the
/// graph launches' GPU spans, graph_gpu_launches and graph_gpu_ns.
json countsJson(const RangeStats& r, bool graph_spans) {
  json j{{"launches", r.launches},
              {"graph_launches", r.graph_launches},
              {"captured_launches", r.captured_launches},
              {"kernels", r.kernels},
              {"gpu_ns", r.gpu_ns},
              {"launch_api_ns", r.launch_api_ns},
              {"memcpy", {{"count", r.memcpy_count}, {"bytes", r.memcpy_bytes}, {"gpu_ns", r.memcpy_ns}}},
              {"memset", {{"count", r.memset_count}, {"bytes", r.memset_bytes}, {"gpu_ns", r.memset_ns}}}};
  if (graph_spans) {
    j["graph_gpu_launches"] = r.graph_gpu_launches;
    j["graph_gpu_ns"] = r.graph_gpu_ns;
  }
  return j;
}

/// The line under the summary table of a KCOUNT_GPU_TIME=graphs log: what `graph GPU` is, and how many of the
/// graph launches that ran had a span (a graph instantiated before kcount attached has none).
std::string graphSpansNote(const Summary& s) {
  const RangeStats r = s.inclusive.empty() ? RangeStats{} : s.inclusive[kRootScope];
  return fmt::format("graph GPU: GPU span of each graph launch, first node's start to last node's end "
                     "(KCOUNT_GPU_TIME=graphs): {} of {} graph launches; other launches have no GPU time",
                     r.graph_gpu_launches, r.graph_launches);
}

/// by_kernel sorted by count (descending), then by name.
std::vector<std::pair<std::string, KernelTally>> sortedKernels(const LogData& log, const RangeStats& r) {
  std::vector<std::pair<std::string, KernelTally>> v;
  v.reserve(r.by_kernel.size());
  for (const auto& [id, t] : r.by_kernel) v.emplace_back(std::string(log.str(id)), t);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.count != b.second.count ? a.second.count > b.second.count : a.first < b.first;
  });
  return v;
}

/// "k ×3, other ×2, +1 more": the `top` kernels of `r` by count; names by kernelNameFor(`full`, `text`).
/// In text, different kernels whose cut names are equal (cuBLAS names that differ past kMaxShortName
/// characters) are told apart (tellKernelsApart(), at kMaxShortName characters).
std::string topKernels(const LogData& log, const RangeStats& r, int top, bool full, bool text) {
  if (top <= 0) return {};
  const auto v = sortedKernels(log, r);
  const size_t n = std::min(v.size(), static_cast<size_t>(top));
  std::vector<std::string> shown, names;
  for (size_t i = 0; i < n; ++i) {
    shown.push_back(kernelNameFor(v[i].first, full, text));
    names.push_back(v[i].first);
  }
  if (text && !full) tellKernelsApart(shown, names, kMaxShortName);
  std::string s;
  if (!text) {
    // CSV: JSON text, so that names holding ", " (C++ templates) split exactly; names as CSV writes them.
    for (size_t i = 0; i < n; ++i)
      s += fmt::format("{}{{\"name\":{},\"count\":{}}}", i == 0 ? "" : ",", jsonString(escapeInvalidUtf8(shown[i])),
                       v[i].second.count);
    if (v.size() > n) s += fmt::format("{}{{\"more\":{}}}", n == 0 ? "" : ",", v.size() - n);
    return "[" + s + "]";
  }
  for (size_t i = 0; i < n; ++i) s += (i == 0 ? "" : ", ") + fmt::format("{} ×{}", shown[i], v[i].second.count);
  if (v.size() > n) s += fmt::format(", +{} more", v.size() - n);
  return s;
}

std::string perInstance(uint64_t kernels, uint64_t instances) {
  if (instances == 0) return "-";
  return fmt::format("{:.1f}", static_cast<double>(kernels) / static_cast<double>(instances));
}

}  // namespace

namespace {

void printFooter(std::ostream& out, const LoadedLog& l, bool list_issues = true) {
  const Summary& s = l.summary;
  const StatsBody& st = l.data.stats;
  uint64_t graph = 0;
  for (const auto& r : s.exclusive) graph += r.graph_launches;
  if (noSnapshotNumbers(l))
    out << "totals: not known (no complete snapshot)\n";
  else
    out << fmt::format("totals: {} ({}{}), {}, {}, {}, GPU time {}\n", counted(s.launches, "launch", "launches"),
                       counted(graph, "graph launch", "graph launches"),
                       // Captured launches run nothing: said, so that kernels/launch below 1 is explained.
                       s.captured_launches == 0 ? std::string()
                                                : ", " + std::to_string(s.captured_launches) + " captured into graphs",
                       counted(s.kernels, "kernel"),
                       counted(s.unmatched_kernels, "unmatched kernel"),
                       counted(s.launches_without_kernel, "launch without kernel", "launches without kernel"),
                       !gpuTimeRecorded(l.data) ? std::string("not recorded") : formatDuration(s.kernel_gpu_ns));
  if (!noSnapshotNumbers(l)) out << joinCaveat(l);
  if (!gpuTimeRecorded(l.data))
    out << "GPU time: " << noKernelGpuTimeText(l.data) << ": kernels were counted at their launch calls, named from "
           "the launch; a graph launch's kernels were read from the graph when it was instantiated (a graph kcount "
           "could not read counts as a launch without kernel)\n";
  if (const std::string unknown = l.data.meta("graph_launch_unknown"); !unknown.empty())
    out << "graph launches without kernel: " << unknown << '\n';
  if (const std::string note = launchTimingNote(l.data); !note.empty()) out << note << '\n';
  out << snapshotLine(l);
  if (l.data.summary_mode && s.snapshot >= 0 && static_cast<size_t>(s.snapshot) < l.data.snapshots.size())
    if (const std::string t = droppedTalliesText(l.data.snapshots[static_cast<size_t>(s.snapshot)].begin); !t.empty())
      out << t << '\n';
  if (l.data.has_stats)
    out << fmt::format("dropped: {}, {}, {} refused, {}, {} not written; {} with no push\n",
                       counted(st.dropped_host_records, "host record"),
                       counted(st.dropped_activity_records, "activity record"),
                       counted(st.activity_buffers_refused, "activity buffer"),
                       counted(st.late_activity_records, "late activity record"), counted(st.bytes_dropped, "byte"),
                       counted(st.nvtx_pop_underflow, "NVTX pop"));
  else
    out << "dropped: unknown (the log has no stats record)\n";
  // Records kept out of the log at the size cap (KCOUNT_MAX_BYTES): the library's count, by kind.
  if (const std::string cut = l.data.meta("records_not_written"); !cut.empty()) out << "records " << cut << '\n';
  out << selfCostFooterLine(selfCostOf(l.data)) << rangeCostFooterLine(l.data);
  if (windowsShown(l.data)) {
    const auto segs = windowTotals(l);
    auto duration = [](const SegmentBody& sg) {
      return formatDuration(sg.stop_ns > sg.start_ns ? sg.stop_ns - sg.start_ns : 0);
    };
    if (l.data.summary_mode) {
      // Snapshots tally the whole run: no number in them is per window (docs/usage.md, capture windows).
      out << fmt::format("capture windows: {}; summary mode: the numbers above are cumulative over all of them "
                         "(per-window numbers need KCOUNT_MODE=trace)\n",
                         segs.size());
      for (const auto& t : segs)
        out << fmt::format("  segment {}: {} -> {}, {}\n", t.segment.index, t.reason, t.end_reason, duration(t.segment));
    } else {
      out << fmt::format("capture windows: {} (kcount summary --segment N shows one)\n", segs.size());
      for (const auto& t : segs)
        out << fmt::format("  segment {}: {} -> {}, {}, {}, {}, {} unmatched, GPU time {}\n", t.segment.index,
                           t.reason, t.end_reason, duration(t.segment), counted(t.launches, "launch", "launches"),
                           counted(t.kernels, "kernel"), t.unmatched_kernels,
                           !gpuTimeRecorded(l.data) ? std::string("not recorded") : formatDuration(t.gpu_ns));
    }
  }
  out << logStateLine(l, list_issues ? "listed below" : "above") << '\n';
  if (list_issues)
    for (const auto& i : l.data.issues) out << fmt::format("{}: {}\n", severityName(i.severity), i.message);
}

/// Indentation levels a tree-view row is shifted by at most: the library tracks ranges nested up to 256
/// deep (inject/thread_state.h kMaxDepth), so only a crafted log nests deeper, and indenting each of its
/// rows by its depth would make the table's size grow with the square of the depth.
constexpr uint32_t kMaxIndentLevels = 256;

/// Indentation of a tree-view row at `depth` (1: a top-level range): two spaces per level below the top,
/// at most kMaxIndentLevels levels; a deeper row says its depth, "(depth D) ", after the indentation.
std::string treeIndent(uint32_t depth) {
  const uint32_t levels = depth > 0 ? depth - 1 : 0;
  if (levels <= kMaxIndentLevels) return std::string(2 * levels, ' ');
  return std::string(2 * kMaxIndentLevels, ' ') + fmt::format("(depth {}) ", depth);
}

/// The marks a range row of a text table carries, each explained by a note under the table: a
/// placeholder row (isPlaceholder: kPlaceholderMark, kPlaceholderNote), a range whose tally was dropped at
/// KCOUNT_MAX_KEYS (kTallyDroppedMark, tallyDroppedNote()), a range still open when the log closed
/// (kUnclosedMark, kUnclosedNote).
struct RowMarks {
  bool placeholder = false;
  bool tally_dropped = false;
  bool unclosed = false;
};

/// The marks of the range `id` (a defined range, not the root or the unknown-range row).
RowMarks rowMarks(const Summary& s, uint32_t id) {
  return RowMarks{isPlaceholder(s, id), tallyDropped(s, id), id < s.exclusive.size() && s.exclusive[id].unclosed > 0};
}

/// Label of a range row in text tables: `shown`, its escaped name (tree view) or path (flat views) as
/// shortened for the table (elideDistinct), followed by its marks.
std::string rangeLabel(std::string shown, const RowMarks& marks) {
  std::string label = std::move(shown);
  if (marks.placeholder) label += " " + std::string(kPlaceholderMark);
  if (marks.tally_dropped) label += " " + std::string(kTallyDroppedMark);
  if (marks.unclosed) label += " " + std::string(kUnclosedMark);
  return label;
}

/// Rows of a summary (table, CSV, JSON): the shown scopes, with the row of records of unknown range
/// (kUnresolvedRow) right after the root's. ex: exclusive numbers (the root's without the unresolved
/// records), in: inclusive numbers, own: instances and CPU time. The root row is "(no range)", what ran
/// outside every range, so its inclusive numbers are its exclusive ones; the whole process is the
/// separate "(overall)" row (CSV) or "overall" object (JSON), from Summary::inclusive[kRootScope].
struct SummaryRow {
  uint32_t id = 0;
  bool unresolved = false;
  const RangeStats* ex = nullptr;
  const RangeStats* in = nullptr;
  const RangeStats* own = nullptr;
};

/// `no_range` holds noRangeStats(s) and must outlive the rows.
std::vector<SummaryRow> summaryRows(const LogData& d, const Summary& s, RangeStats& no_range) {
  no_range = noRangeStats(s);
  std::vector<uint32_t> shown = shownScopes(d, s);
  if (hasUnresolved(s)) shown.insert(shown.begin() + 1, kUnresolvedRow);
  std::vector<SummaryRow> rows;
  rows.reserve(shown.size());
  for (uint32_t id : shown) {
    SummaryRow r{id, id == kUnresolvedRow};
    r.ex = r.unresolved ? &s.unresolved : id == kRootScope ? &no_range : &s.exclusive[id];
    r.in = r.unresolved ? &s.unresolved : id == kRootScope ? &no_range : &s.inclusive[id];
    r.own = r.unresolved || id == kRootScope ? r.ex : r.in;
    rows.push_back(r);
  }
  return rows;
}

/// Reorders `rows` (summaryRows() order) as `opt.sort` asks (SummaryOptions::sort).
void sortSummaryRows(std::vector<SummaryRow>& rows, const Summary& s, const SummaryOptions& opt) {
  if (!opt.sort || rows.empty()) return;
  const AcrossMetric metric = *opt.sort;
  auto key = [&](const SummaryRow& r) -> uint64_t {
    const bool incl = r.id != kRootScope && !r.unresolved && opt.view != SummaryView::kInnermost;
    const RangeStats& x = incl ? s.inclusive[r.id] : *r.ex;
    switch (metric) {
      case AcrossMetric::kGpuNs: return x.gpu_ns;
      case AcrossMetric::kKernels: return x.kernels;
      case AcrossMetric::kLaunches: return x.launches;
      case AcrossMetric::kCpuNs: return r.own->cpu_ns;
      case AcrossMetric::kLaunchApiNs: return x.launch_api_ns;
    }
    return 0;
  };
  auto larger = [&](const SummaryRow& a, const SummaryRow& b) { return key(a) > key(b); };
  // The rows that stay first: the root ("(no range)") and the unknown range's.
  size_t fixed = 0;
  while (fixed < rows.size() && (rows[fixed].id == kRootScope || rows[fixed].unresolved)) ++fixed;
  if (opt.view != SummaryView::kTree) {
    std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(fixed), rows.end(), larger);
    return;
  }
  // Tree: siblings by the key, each followed by its subtree (rows are depth first: a row's subtree is the
  // rows after it until one of its depth or less).
  const std::vector<uint32_t> parent = scopeParents(s);
  std::map<uint32_t, std::vector<size_t>> kids;  // parent id -> its shown children (indices into rows)
  for (size_t i = fixed; i < rows.size(); ++i) kids[rows[i].id < parent.size() ? parent[rows[i].id] : kRootScope].push_back(i);
  std::vector<SummaryRow> out(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(fixed));
  std::vector<uint8_t> placed(rows.size(), 0);
  auto place = [&](auto&& self, uint32_t id, size_t depth) -> void {
    auto it = kids.find(id);
    if (it == kids.end() || depth > rows.size()) return;
    std::vector<size_t> order = it->second;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return larger(rows[a], rows[b]); });
    for (size_t i : order) {
      if (placed[i]) continue;
      placed[i] = 1;
      out.push_back(rows[i]);
      self(self, rows[i].id, depth + 1);
    }
  };
  place(place, kRootScope, 0);
  // A row whose parent is not shown (not expected: shownScopes() shows every parent) keeps its place at the end.
  for (size_t i = fixed; i < rows.size(); ++i)
    if (!placed[i]) out.push_back(rows[i]);
  rows = std::move(out);
}

json layersJson(const RangeLayers& y, const RangeStats& r) {
  return json{{"gemm_gpu_ns", y.gemm_gpu_ns},
              {"other_gpu_ns", y.other_gpu_ns},
              {"kernels_per_launch", r.launches ? json(y.kernels_per_launch) : json(nullptr)},
              {"verdict", y.verdict.empty() ? json(nullptr) : json(y.verdict)}};
}

}  // namespace

std::string tallyDroppedNote(const LoadedLog& l) {
  uint64_t max_keys = 0;
  if (l.summary.snapshot >= 0 && static_cast<size_t>(l.summary.snapshot) < l.data.snapshots.size())
    max_keys = l.data.snapshots[static_cast<size_t>(l.summary.snapshot)].begin.max_keys;
  return fmt::format("{}: no numbers: the range's tally was dropped at KCOUNT_MAX_KEYS{} (its instances, launches and "
                     "kernels count in the totals only; see 'tallies dropped' below)",
                     kTallyDroppedMark, max_keys > 0 ? "=" + std::to_string(max_keys) : std::string());
}

/// Sets to null, at any depth of `j`, what the log did not measure (its 0s are not zeros): without `gpu`
/// (KCOUNT_GPU_TIME=0 or graphs) every GPU time (keys gpu_ns, gemm_gpu_ns, other_gpu_ns); without `mem`
/// (memOpsRecorded() false: no activity records, or a 1.0 log) the memory operations' numbers (the
/// count and bytes of "memcpy" and "memset", "mem_ops", "unmatched_mem_ops").
static void nullUnrecorded(json& j, bool gpu, bool mem) {
  if (j.is_array()) {
    for (auto& e : j) nullUnrecorded(e, gpu, mem);
    return;
  }
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (!gpu && (k == "gpu_ns" || k == "gemm_gpu_ns" || k == "other_gpu_ns")) {
      it.value() = nullptr;
    } else if (!mem && (k == "mem_ops" || k == "unmatched_mem_ops")) {
      it.value() = nullptr;
    } else if (!mem && (k == "memcpy" || k == "memset") && it.value().is_object()) {
      for (auto& [_, v] : it.value().items()) v = nullptr;
    } else if (!(k == "ranges" && it.value().is_object())) {  // not a path -> count map
      nullUnrecorded(it.value(), gpu, mem);
    }
  }
}

namespace {

/// Calls f(json) with summary JSON's element of "ranges" for each row of `l` (summaryRows() order), with
/// null GPU times for a log without them; one element at a time.
template <typename F>
void forEachRangeJson(const LoadedLog& l, F&& f) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  const bool gpu_time = gpuTimeRecorded(d);
  const bool graph_spans = graphGpuTimeRecorded(d);
  const auto depth = scopeDepths(s);
  RangeStats no_range;
  for (const SummaryRow& row : summaryRows(d, s, no_range)) {
    const uint32_t id = row.id;
    const bool unresolved = row.unresolved;
    const RangeStats &ex = *row.ex, &in = *row.in, &own = *row.own;
    const bool lost = !unresolved && d.scopeLost(id);
    std::string path = unresolved ? std::string(kUnresolvedLabel) : lost ? lostRangeName(d.logScopeId(id)) : d.scopePath(id);
    std::string name = unresolved || lost || id == kRootScope ? path : std::string(d.str(d.scopes[id].name_id));
    json kernels = json::array();
    for (const auto& [kname, t] : sortedKernels(d, ex))
      kernels.push_back(json{{"name", kname}, {"short", shortKernelNameUncut(kname)}, {"count", t.count}, {"gpu_ns", t.gpu_ns}});
    // The root's inclusive numbers are its exclusive ones (summaryRows()). Records of an unknown range get
    // no verdict and no instances (their range's time is not known).
    const uint64_t instances = unresolved ? 0 : own.instances;
    json per_instance = nullptr;
    if (instances > 0) per_instance = static_cast<double>(in.kernels) / static_cast<double>(instances);
    const RangeLayers ly_in = rangeLayers(d, in, instances, own.cpu_ns, s.graph_view);
    RangeLayers ly_ex = rangeLayers(d, ex, instances, own.cpu_ns, s.graph_view);
    // The innermost verdict as `--view innermost` prints it (a parent's work may be in its children).
    ly_ex.verdict = innermostVerdict(d, ex, in, instances, own.cpu_ns, s.graph_view);
    json layers{{"inclusive", layersJson(ly_in, in)}, {"innermost", layersJson(ly_ex, ex)}};
    json flat = layersJson(ly_in, in);
    const auto domain = unresolved ? std::nullopt : rangeDomain(d, id);
    json r{{"path", path},
           {"name", name},
           // The NVTX domain the range was pushed in; null for the default domain. Ranges of one
           // path in two domains are two rows with the same path (scope_id tells them apart).
           {"domain", domain ? json(*domain) : json(nullptr)},
           {"scope_id", unresolved ? json(nullptr) : json(d.logScopeId(id))},
           // The tree without parsing paths (a name may hold '/': "a/b" at the top and b
           // inside a have the same path): null for the root, the unknown-range row and a
           // lost range (its Scope record, which named the parent, was lost).
           {"parent_scope_id", unresolved || lost || id == kRootScope || !d.scopeDefined(id)
                                   ? json(nullptr)
                                   : json(d.logScopeId(d.scopes[id].parent_id))},
           {"depth", unresolved ? 1 : depth[id]},
           {"unknown_range", unresolved},
           {"lost_range", lost},
           {"placeholder", !unresolved && isPlaceholder(s, id)},
           {"tally_dropped", !unresolved && tallyDropped(s, id)},
           {"instances", instances},
           // Of instances: still open when the log closed, their CPU time running to the close.
           {"unclosed_instances", unresolved ? 0 : ex.unclosed},
           // No instance (the "(no range)" row, a range never pushed in a window): no CPU
           // time, null as in kernels_per_instance (the table prints "-", CSV leaves it empty).
           {"cpu_ns", instances > 0 ? json(own.cpu_ns) : json(nullptr)},
           {"exclusive", countsJson(ex, graph_spans)},
           {"inclusive", countsJson(in, graph_spans)},
           {"kernels_per_instance", per_instance},
           {"kernels", kernels},
           {"gemm_gpu_ns", flat["gemm_gpu_ns"]},
           {"other_gpu_ns", flat["other_gpu_ns"]},
           {"kernels_per_launch", flat["kernels_per_launch"]},
           {"verdict", flat["verdict"]},
           {"layers", layers}};
    nullUnrecorded(r, gpu_time, memOpsRecorded(d));
    f(std::move(r));
  }
}

/// summaryJson() of `l` with "ranges" null: forEachRangeJson() gives its elements.
json summaryJsonWithoutRanges(const LoadedLog& l) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  json meta = json::object();
  for (const auto& [k, v] : d.metadata) meta[k] = v;
  json issues = json::array();
  for (const auto& i : d.issues)
    issues.push_back(json{{"severity", severityName(i.severity)},
                          {"offset", i.offset == ReadIssue::kNoOffset ? json(nullptr) : json(i.offset)},
                          {"chunk", i.chunk},
                          {"message", i.message}});
  uint64_t graph = 0;
  for (const auto& r : s.exclusive) graph += r.graph_launches;
  json totals{{"launches", s.launches},
              {"graph_launches", graph},
              {"kernels", s.kernels},
              {"unmatched_kernels", s.unmatched_kernels},
              {"launches_without_kernel", s.launches_without_kernel},
              {"captured_launches", s.captured_launches},
              {"mem_ops", s.mem_ops},
              {"unmatched_mem_ops", s.unmatched_mem_ops},
              {"gpu_ns", s.kernel_gpu_ns},
              {"dropped_host_records", d.stats.dropped_host_records},
              {"dropped_activity_records", d.stats.dropped_activity_records},
              {"activity_buffers_refused", d.stats.activity_buffers_refused},
              {"late_activity_records", d.stats.late_activity_records},
              {"nvtx_pop_underflow", d.stats.nvtx_pop_underflow},
              {"bytes_dropped", d.stats.bytes_dropped}};
  json segments = json::array();
  // A summary-mode log's snapshots are cumulative over every window: its per-window counts are not known.
  auto count = [&](uint64_t n) { return d.summary_mode ? json(nullptr) : json(n); };
  for (const auto& t : windowTotals(l))
    segments.push_back(json{{"index", t.segment.index},
                            {"reason", t.reason},
                            {"end_reason", t.end_reason},
                            {"start_ns", t.segment.start_ns},
                            {"stop_ns", t.segment.stop_ns},
                            {"duration_ns", t.segment.stop_ns > t.segment.start_ns ? t.segment.stop_ns - t.segment.start_ns : 0},
                            {"first_correlation_id", t.segment.first_correlation_id},
                            {"last_correlation_id", t.segment.last_correlation_id},
                            {"activity_discarded", (t.segment.flags & kSegmentActivityDiscarded) != 0},
                            {"launches", count(t.launches)},
                            {"kernels", count(t.kernels)},
                            {"unmatched_kernels", count(t.unmatched_kernels)},
                            {"gpu_ns", count(t.gpu_ns)},
                            {"ranges", count(t.ranges)},
                            {"mem_ops", count(t.mem_ops)}});
  // The whole process: every matched launch, kernel and memory operation, ranges or not.
  const bool graph_spans = graphGpuTimeRecorded(d);
  json overall = s.inclusive.empty() ? countsJson(RangeStats{}, graph_spans)
                                     : countsJson(s.inclusive[kRootScope], graph_spans);
  json out{{"path", l.path},   {"metadata", meta}, {"complete", d.complete}, {"intact", d.intact()}, {"issues", issues},
           {"totals", totals}, {"overall", overall}, {"ranges", nullptr}, {"segments", segments}};
  if (noSnapshotNumbers(l)) {
    // No complete snapshot: the numbers are not known (not zeros), as "no totals" across logs.
    out["totals"] = nullptr;
    out["overall"] = nullptr;
  }
  out["mode"] = d.summary_mode ? "summary" : "trace";
  out["gpu_time"] = gpuTimeRecorded(d);  // false: KCOUNT_GPU_TIME=0: every GPU time is null (not measured)
  if (graph_spans) out["graph_gpu_time"] = true;  // KCOUNT_GPU_TIME=graphs: COUNTS have graph_gpu_*
  nullUnrecorded(out, gpuTimeRecorded(d), memOpsRecorded(d));
  // KCOUNT_LAUNCH_TIMING=N: launch_api_ns are estimates (one call in N timed, counted N times).
  out["launch_timing_sample"] = launchTimingSample(d);
  out["kcount_cost"] = selfCostJson(selfCostOf(d));  // null: a log written before the library counted it
  if (const auto by_range = rangeCostJson(d); by_range && out["kcount_cost"].is_object())
    out["kcount_cost"]["by_range"] = *by_range;  // format 1.4 logs only
  {
    const LogLosses loss = logLosses(l);
    json counters = json::object();
    for (const auto& c : loss.counters) counters[c.json_key] = c.count;
    out["state"] = logState(l);
    out["lossy"] = loss.any();
    out["drops"] = json{{"records", loss.records}, {"bytes", loss.bytes}, {"untallied_events", loss.untallied},
                        {"counters", counters}, {"text", loss.text()}};
  }
  if (d.summary_mode) {
    json snap = nullptr;
    if (s.snapshot >= 0) {
      const SnapshotBeginBody& b = d.snapshots[static_cast<size_t>(s.snapshot)].begin;
      snap = json{{"sequence", b.sequence},
                  {"time_ns", b.time_ns},
                  {"final", (b.flags & kSnapshotFinal) != 0},
                  {"inflight_launches", b.inflight_launches},
                  {"waiting_activity", b.waiting_activity},
                  {"dropped_tallies", b.dropped_tallies},
                  {"evicted_launches", b.evicted_launches}};
      // What dropped_tallies holds, by kind (null in a log of an earlier writer, which does not say).
      const bool known = b.max_keys > 0;
      auto detail = [&](uint64_t v) { return known ? json(v) : json(nullptr); };
      snap["max_keys"] = detail(b.max_keys);
      snap["dropped_ranges"] = detail(b.dropped_ranges);
      snap["dropped_range_instances"] = detail(b.dropped_range_instances);
      snap["dropped_launches"] = detail(b.dropped_launches);
      snap["dropped_kernels"] = detail(b.dropped_kernels);
      snap["dropped_mem_ops"] = detail(b.dropped_mem_ops);
      snap["unnamed_kernels"] = detail(b.unnamed_kernels);
    }
    out["snapshot"] = snap;
    out["snapshots"] = d.snapshots.size();
    out["incomplete_snapshots"] = d.incomplete_snapshots;
    out["snapshots_skipped"] = snapshotsSkipped(d);
  }
  return out;
}

}  // namespace

json summaryJson(const LoadedLog& l) {
  json out = summaryJsonWithoutRanges(l);
  if (!noSnapshotNumbers(l)) {  // no complete snapshot: "ranges" stays null
    json ranges = json::array();
    forEachRangeJson(l, [&](json r) { ranges.push_back(std::move(r)); });
    out["ranges"] = std::move(ranges);
  }
  return out;
}

json summaryJson(const std::vector<LoadedLog>& logs) {
  json arr = json::array();
  for (const auto& l : logs) arr.push_back(summaryJson(l));
  return json{{"logs", arr}};
}

void writeSummaryJson(std::ostream& out, const std::vector<LoadedLog>& logs) {
  JsonWriter w(out);
  json doc{{"logs", nullptr}};
  if (logs.size() > 1) doc["across_logs"] = nullptr;  // written by writeAcrossLogsJson()
  w.object(doc, {{"across_logs", [&] { writeAcrossLogsJson(w, logs); }},
                 {"logs", [&] {
                   w.beginArray();
                   for (const auto& l : logs) {
                     const json skeleton = summaryJsonWithoutRanges(l);
                     if (noSnapshotNumbers(l)) {
                       w.value(skeleton);
                       continue;
                     }
                     w.object(skeleton, {{"ranges", [&] {
                                            w.beginArray();
                                            forEachRangeJson(l, [&](const json& r) { w.value(r); });
                                            w.end();
                                          }}});
                   }
                   w.end();
                 }}});
  out << '\n';
}

namespace {
/// The lines above a summary table: "== PATH  host=H  pid=P  rank=R" and the command line, shortened in
/// the middle when long.
void printSummaryHeader(std::ostream& out, const LoadedLog& l) {
  const LogData& d = l.data;
  out << "== " << displayText(l.path);
  for (const char* key : {"host", "pid", "rank"}) {
    std::string v = d.meta(key);
    if (!v.empty()) out << "  " << key << "=" << v;
  }
  out << '\n';
  // A command line of many kilobytes (generated arguments) is shortened in the middle to kMaxCommandShown
  // characters, with its length; JSON keeps it whole (metadata command_line).
  if (const std::string cmd = d.meta("command_line"); !cmd.empty()) {
    const size_t chars = displayWidth(cmd);
    out << "   command: "
        << (chars > kMaxCommandShown ? elideMiddle(cmd, kMaxCommandShown) + fmt::format(" ({} characters)", chars) : cmd)
        << '\n';
  }
}
/// The summary table without rows: its column heads, their alignment (the range and the free text of
/// --wide left-aligned, numbers right-aligned) and the order they are dropped in to fit a width. Memory
/// operation columns with `mem`, the graph launches' GPU spans with `graph_spans`.
Table summaryTableColumns(const LogData& d, const SummaryOptions& opt, bool mem, bool graph_spans) {
  const bool tree = opt.view == SummaryView::kTree;
  const char* top = tree ? "top kernels (self)" : "top kernels";
  Table t;
  t.head = {"range", "instances", "launches", "kernels"};
  if (tree) t.head.push_back("self");
  for (const char* h : {"kernels/inst", "GPU time", "GEMM GPU", "other GPU", "CPU time", "launch CPU", "kernels/launch"})
    t.head.push_back(h);
  if (mem)
    for (const char* h : {"mem ops", "mem GPU"}) t.head.push_back(h);
  if (graph_spans) t.head.insert(t.head.end(), {"graph GPU", "graph GPU/inst"});
  if (opt.wide) {
    t.head.push_back("verdict");
    t.head.push_back(top);
  }
  t.right.assign(t.head.size(), true);
  t.right.front() = false;
  if (opt.wide) {
    t.right.back() = false;
    t.right[t.head.size() - 2] = false;  // verdict
  }
  // Kept at any width: the range, launches, kernels, GPU time (docs/usage.md, "Fitting --width"). In a log
  // without GPU times (KCOUNT_GPU_TIME=0) the GPU columns, all '-', go first and kernels per instance, the
  // answer such a log gives, goes last but for self and instances.
  if (gpuTimeRecorded(d))
    t.dropOrder({top, "verdict", "kernels/inst", "kernels/launch", "mem GPU", "mem ops", "launch CPU", "CPU time",
                 "other GPU", "GEMM GPU", "self", "instances"});
  else
    t.dropOrder({"GEMM GPU", "other GPU", "GPU time", top, "verdict", "kernels/launch", "mem GPU", "mem ops",
                 "launch CPU", "CPU time", "kernels/inst", "self", "instances"});
  return t;
}
}  // namespace

void printSummaryTable(std::ostream& out, const LoadedLog& l, const SummaryOptions& opt) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  printSummaryHeader(out, l);
  if (noSnapshotNumbers(l)) {
    // A summary-mode log holds its numbers only in snapshots: a table from none would be rows of zeros.
    out << "no numbers: no complete snapshot in this summary-mode log (see the summary mode line below)\n";
    printFooter(out, l, opt.list_issues);
    return;
  }
  const bool tree = opt.view == SummaryView::kTree;
  // Memory operations get columns only in logs that have them (format 1.1 and later, with copies).
  const bool mem = !s.inclusive.empty() && (s.inclusive[kRootScope].memcpy_count + s.inclusive[kRootScope].memset_count) > 0;
  const bool graph_spans = graphGpuTimeRecorded(d);  // KCOUNT_GPU_TIME=graphs: the graph launches' GPU spans
  Table t = summaryTableColumns(d, opt, mem, graph_spans);
  // Without --wide, each range's verdict and top kernels follow the table, one line each, so the table
  // itself stays narrow enough for a terminal.
  std::vector<std::string> notes;
  bool placeholders = false;  // a row marked kPlaceholderMark: explained under the table
  bool dropped_rows = false;  // a row marked kTallyDroppedMark: explained under the table
  bool lost_rows = false;     // a "(lost range P)" row: explained under the table (kLostRangeNote)
  bool unclosed_rows = false; // a row marked kUnclosedMark: explained under the table
  const auto depth = scopeDepths(s);
  RangeStats no_range;
  std::vector<SummaryRow> rows = summaryRows(d, s, no_range);
  // The ranges that matter (SummaryOptions::focus); the root and unknown-range rows always.
  const FocusedScopes focused = focusScopes(d, s, shownScopes(d, s), opt.focus);
  std::erase_if(rows, [&](const SummaryRow& r) { return !r.unresolved && r.id < focused.keep.size() && !focused.keep[r.id]; });
  sortSummaryRows(rows, s, opt);
  // Labels and verdict-line paths shortened together, so that different ranges stay distinguishable.
  std::vector<std::string> names, paths;
  for (const SummaryRow& sr : rows) {
    const bool real = sr.id != kRootScope && !sr.unresolved;
    names.push_back(!real                ? std::string()
                    : d.scopeLost(sr.id) ? lostRangeName(d.logScopeId(sr.id))
                    : tree               ? displayRangeName(d, sr.id)
                                         : displayPath(d, sr.id));
    paths.push_back(rowPath(d, sr.id));
  }
  // --full-names: whole, as kernel names are (a sweep's range names differ in the part elided); else the
  // labels may be narrowed further to fit opt.width (whole names, indents and marks kept).
  NameColumn labels;
  if (!opt.full_names) {
    labels.names = names;
    t.max_width = opt.width;
    names = elideDistinct(names);
    paths = elideDistinct(paths);
  }
  for (size_t row_i = 0; row_i < rows.size(); ++row_i) {
    const SummaryRow& sr = rows[row_i];
    const uint32_t id = sr.id;
    const bool unresolved = sr.unresolved;
    // The root row shows what ran outside every range: its exclusive numbers, in every view.
    const RangeStats& ex = *sr.ex;
    const bool incl = id != kRootScope && !unresolved && opt.view != SummaryView::kInnermost;
    const RangeStats& r = incl ? s.inclusive[id] : ex;
    std::string label;
    const RowMarks marks = id != kRootScope && !unresolved ? rowMarks(s, id) : RowMarks{};
    placeholders = placeholders || marks.placeholder;
    dropped_rows = dropped_rows || marks.tally_dropped;
    unclosed_rows = unclosed_rows || marks.unclosed;
    // A range whose definition was lost: its own instances, CPU time and kernels are not known (its
    // records are in the unknown-range row); its other numbers are those of the ranges under it.
    const bool lost = !unresolved && d.scopeLost(id);
    lost_rows = lost_rows || lost;
    if (id == kRootScope || unresolved)
      labels.prefix.push_back(rowPath(d, id));
    else if (tree)
      labels.prefix.push_back(treeIndent(depth[id]));
    else
      labels.prefix.emplace_back();
    labels.suffix.push_back(rangeLabel("", marks));
    label = labels.prefix.back() + names[row_i] + labels.suffix.back();
    // The unknown-range row holds records of ranges of several lost definitions: their instances and wall
    // times (nested in one another) do not add up to one range's, so they are not shown (as in JSON).
    const uint64_t instances = unresolved ? 0 : ex.instances;
    std::vector<std::string> row{label,
                                 lost || unresolved ? "-" : std::to_string(ex.instances),
                                 std::to_string(r.launches),
                                 std::to_string(r.kernels)};
    if (tree) row.push_back(lost ? "-" : std::to_string(ex.kernels));
    row.push_back(perInstance(r.kernels, instances));
    RangeLayers ly = rangeLayers(d, r, ex.instances, ex.cpu_ns, s.graph_view);
    const bool no_gpu = !gpuTimeRecorded(d);
    // Innermost rows hold a range's own numbers, but its wall time covers its child ranges: a parent whose
    // children issued work gets the verdict of its inclusive numbers, saying so (innermostVerdict()).
    if (!incl && id != kRootScope && !unresolved)
      ly.verdict = innermostVerdict(d, ex, s.inclusive[id], ex.instances, ex.cpu_ns, s.graph_view);
    if (unresolved) ly.verdict.clear();  // no verdict for records whose range is not known
    row.push_back(no_gpu ? "-" : formatDuration(r.gpu_ns));
    row.push_back(no_gpu ? "-" : formatDuration(ly.gemm_gpu_ns));
    row.push_back(no_gpu ? "-" : formatDuration(ly.other_gpu_ns));
    row.push_back(instances ? formatDuration(ex.cpu_ns) : "-");
    row.push_back(formatDuration(r.launch_api_ns));
    row.push_back(r.launches ? fmt::format("{:.2f}", ly.kernels_per_launch) : "-");
    if (mem) {
      row.push_back(std::to_string(r.memcpy_count + r.memset_count));
      row.push_back(formatDuration(r.memcpy_ns + r.memset_ns));
    }
    if (graph_spans)
      row.insert(row.end(), {r.graph_gpu_launches ? formatDuration(r.graph_gpu_ns) : "-",
                             r.graph_gpu_launches && instances ? formatDuration(r.graph_gpu_ns / instances) : "-"});
    const std::string verdict = ly.verdict.empty() ? "-" : ly.verdict;
    const std::string top = topKernels(d, opt.view == SummaryView::kInclusive ? r : ex, opt.top_kernels, opt.full_names, true);
    if (opt.wide) {
      row.push_back(verdict);
      row.push_back(top);
    } else if (!ly.verdict.empty() || !top.empty()) {
      std::string note = "  " + paths[row_i] + ": ";
      note += ly.verdict.empty() ? "" : ly.verdict;
      if (!top.empty()) note += (ly.verdict.empty() ? "" : "; ") + std::string("top: ") + top;
      notes.push_back(std::move(note));
    }
    t.rows.push_back(std::move(row));
  }
  if (!opt.full_names) t.fit.push_back(std::move(labels));
  t.print(out);
  if (graph_spans) out << graphSpansNote(s) << '\n';
  if (placeholders) out << kPlaceholderNote << '\n';
  if (dropped_rows) out << tallyDroppedNote(l) << '\n';
  if (lost_rows) out << kLostRangeNote << '\n';
  if (unclosed_rows) out << kUnclosedNote << '\n';
  if (const std::string hidden = focusNote(focused, opt.focus); !hidden.empty()) out << hidden << '\n';
  if (!notes.empty()) {
    out << (tree || opt.view == SummaryView::kInnermost ? "verdicts, top kernels (self):\n" : "verdicts, top kernels:\n");
    for (const auto& n : notes) out << n << '\n';
  }
  printFooter(out, l, opt.list_issues);
}

namespace {
/// `summary --format csv`'s memcpy and memset fields of `r` (the JSON's "memcpy" and "memset" objects):
/// count, bytes, GPU ns of each, comma-separated; six empty fields where `mem` is false (memory operations
/// not recorded: memOpsRecorded()).
std::string memSplitFields(const RangeStats& r, bool mem) {
  if (!mem) return ",,,,,";
  return fmt::format("{},{},{},{},{},{}", r.memcpy_count, r.memcpy_bytes, r.memcpy_ns, r.memset_count, r.memset_bytes,
                     r.memset_ns);
}
}  // namespace

void printSummaryCsv(std::ostream& out, const LoadedLog& l, bool header, const SummaryOptions& opt) {
  // Columns only grow at the end (scripts read them by position too); docs/usage.md lists them.
  if (header)
    out << "log,path,depth,instances,cpu_ns,excl_launches,excl_graph_launches,excl_kernels,excl_gpu_ns,"
           "excl_launch_api_ns,incl_launches,incl_graph_launches,incl_kernels,incl_gpu_ns,incl_launch_api_ns,"
           "kernels_per_instance,top_kernels,excl_gemm_gpu_ns,excl_other_gpu_ns,excl_mem_ops,excl_mem_gpu_ns,"
           "incl_gemm_gpu_ns,incl_other_gpu_ns,incl_mem_ops,incl_mem_gpu_ns,kernels_per_launch,domain,"
           "excl_memcpy_ops,excl_memcpy_bytes,excl_memcpy_gpu_ns,excl_memset_ops,excl_memset_bytes,excl_memset_gpu_ns,"
           "incl_memcpy_ops,incl_memcpy_bytes,incl_memcpy_gpu_ns,incl_memset_ops,incl_memset_bytes,incl_memset_gpu_ns,"
           "excl_graph_gpu_launches,excl_graph_gpu_ns,incl_graph_gpu_launches,incl_graph_gpu_ns\n";
  if (noSnapshotNumbers(l)) return;  // no numbers, so no row (not rows of zeros); kcount warns on stderr
  const LogData& d = l.data;
  const Summary& s = l.summary;
  const auto depth = scopeDepths(s);
  RangeStats no_range;
  // Fields not measured are empty, never 0: KCOUNT_GPU_TIME=0 leaves every GPU time unknown and records
  // no memory operation (no activity records); a 1.0 log predates memory operation records.
  const bool gpu = gpuTimeRecorded(d);
  const bool mem = memOpsRecorded(d);
  auto gpuField = [&](uint64_t ns) { return gpu ? std::to_string(ns) : std::string(); };
  auto memFields = [&](const RangeStats& r) {
    uint64_t ns = r.memcpy_ns;
    satAdd(ns, r.memset_ns);
    return mem ? fmt::format("{},{}", r.memcpy_count + r.memset_count, ns) : std::string(",");
  };
  // GEMM and other GPU time, memory operations and their GPU time, as the table's columns of that name.
  auto layerFields = [&](const RangeStats& r) {
    const RangeLayers y = rangeLayers(d, r, 0, 0, s.graph_view);
    return fmt::format("{},{},{}", gpuField(y.gemm_gpu_ns), gpuField(y.other_gpu_ns), memFields(r));
  };
  auto perLaunch = [](const RangeStats& r) {
    return r.launches ? fmt::format("{:.3f}", double(r.kernels) / double(r.launches)) : std::string();
  };
  // Graph launches' GPU spans and how many had one: only a KCOUNT_GPU_TIME=graphs log records them.
  const bool graph_spans = graphGpuTimeRecorded(d);
  auto graphFields = [&](const RangeStats& r) {
    return graph_spans ? fmt::format("{},{}", r.graph_gpu_launches, r.graph_gpu_ns) : std::string(",");
  };
  std::vector<SummaryRow> rows = summaryRows(d, s, no_range);
  sortSummaryRows(rows, s, opt);
  for (const SummaryRow& row : rows) {
    const uint32_t id = row.id;
    const bool unresolved = row.unresolved;
    const RangeStats &ex = *row.ex, &in = *row.in, &own = *row.own;
    // CPU time is the wall time of the range's instances: not measured for a row without any ((no range),
    // a placeholder, records of an unknown range), which the table shows as '-'.
    const auto domain = unresolved ? std::nullopt : rangeDomain(d, id);
    const uint64_t instances = unresolved ? 0 : own.instances;  // as in JSON: not one range's instances
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csvField(l.path),
                       csvField(rowPath(d, id)), unresolved ? 1 : depth[id], instances,
                       instances ? std::to_string(own.cpu_ns) : std::string(), ex.launches, ex.graph_launches,
                       ex.kernels, gpuField(ex.gpu_ns), ex.launch_api_ns, in.launches, in.graph_launches, in.kernels,
                       gpuField(in.gpu_ns), in.launch_api_ns,
                       instances ? fmt::format("{:.3f}", double(in.kernels) / double(instances)) : "",
                       csvField(topKernels(d, ex, opt.top_kernels, opt.full_names, false)), layerFields(ex),
                       layerFields(in), perLaunch(in), domain ? csvField(*domain) : std::string(),
                       memSplitFields(ex, mem), memSplitFields(in, mem), graphFields(ex), graphFields(in));
  }
  // The whole process, named as such: every matched launch and kernel, ranges or not. Its depth, instances,
  // CPU time and exclusive fields are empty (it is no range), so sums of a column over a log's ranges stay
  // what the ranges hold.
  const RangeStats all = s.inclusive.empty() ? RangeStats{} : s.inclusive[kRootScope];
  out << fmt::format("{},{},,,,,,,,,{},{},{},{},{},,,,,,,{},{},,,,,,,,{},,,{}\n", csvField(l.path), kOverallRow,
                     all.launches, all.graph_launches, all.kernels, gpuField(all.gpu_ns), all.launch_api_ns,
                     layerFields(all), perLaunch(all), memSplitFields(all, mem), graphFields(all));
}

std::string_view acrossMetricName(AcrossMetric metric) {
  switch (metric) {
    case AcrossMetric::kGpuNs: return "gpu";
    case AcrossMetric::kKernels: return "kernels";
    case AcrossMetric::kLaunches: return "launches";
    case AcrossMetric::kCpuNs: return "cpu";
    case AcrossMetric::kLaunchApiNs: return "launch-cpu";
  }
  return "gpu";
}

std::optional<AcrossMetric> parseAcrossMetric(std::string_view word) {
  for (AcrossMetric m : kAcrossMetrics)
    if (acrossMetricName(m) == word) return m;
  return std::nullopt;
}

}  // namespace kc
