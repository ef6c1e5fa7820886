#include "tools/multi_log.h"

#include <filesystem>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <ostream>

#include "tools/json_writer.h"
#include "tools/kernel_names.h"
#include "tools/log_state.h"
#include "tools/range_names.h"
#include "tools/range_tree.h"
#include "tools/self_cost.h"
#include "tools/summary_output.h"
#include "tools/table_width.h"
#include "tools/text.h"
#include "collector/analysis.h"

namespace kc {
namespace {

using nlohmann::json;

constexpr const char* kMetrics[] = {"launches", "kernels", "gpu_ns", "cpu_ns", "launch_api_ns"};

// The cell of a log whose numbers are not known (noSnapshotNumbers()), and the note under the table.
constexpr const char* kNoTotals = "no totals";
// The median cell when one of the two middle values is held at 2^64 - 1 (Spread::medianKnown()).
constexpr std::string_view kUnknownMedian = "unknown";

struct Cell {
  uint64_t v[5] = {0, 0, 0, 0, 0};  // in kMetrics order
  bool gpu = true;                    // false: the log has no GPU times (gpuTimeRecorded()); v[2] is not known
  bool cpu = true;                    // false: no instance (the "(no range)" row): v[3] was not measured

  /// Metric `m` is known (GPU time only where recorded, CPU time only where the range has instances).
  bool known(int m) const { return (m != 2 || gpu) && (m != 3 || cpu); }
};

struct RawPath {
  std::string path;
  std::optional<std::string> domain;
};

/// path -> per log (nullopt: the log has no such range). Paths are keyed as text tables show them
/// (displayPath(): a '/' inside a name is "\/", so a range named "a/b" and range b inside range a stay
/// two rows; a range's NVTX domain is in its key, "mylib: gemm"), in first-seen order; `raw`: that key ->
/// LogData::scopePath() (JSON's "path") and the range's domain (JSON's "domain", nullopt: the default one).
void collect(const std::vector<LoadedLog>& logs, std::vector<std::string>& paths,
             std::map<std::string, std::vector<std::optional<Cell>>>& cells, std::map<std::string, RawPath>& raw) {
  for (size_t i = 0; i < logs.size(); ++i) {
    // A summary-mode log without a complete snapshot has no numbers at all: no cell, not cells of zeros.
    if (noSnapshotNumbers(logs[i])) continue;
    const LogData& d = logs[i].data;
    const Summary& s = logs[i].summary;
    // (no range): what ran outside every range; records of an unknown range (damage) in a row of their own.
    const RangeStats no_range = noRangeStats(s);
    auto add = [&](const std::string& path, const std::string& text, const RangeStats& r, uint64_t cpu_ns,
                   uint64_t instances, std::optional<std::string> domain = std::nullopt) {
      auto [it, fresh] = cells.try_emplace(text, logs.size());
      if (fresh) paths.push_back(text);
      if (fresh) raw[text] = RawPath{path, std::move(domain)};
      Cell c;
      c.v[0] = r.launches;
      c.v[1] = r.kernels;
      c.v[2] = r.gpu_ns;
      c.v[3] = cpu_ns;
      c.v[4] = r.launch_api_ns;
      c.gpu = gpuTimeRecorded(d);
      // CPU time is the wall time of instances: without one (the root, an unknown range) it was not
      // measured, '-' and null as in summary's per-log table, not 0.
      c.cpu = instances > 0;
      it->second[i] = c;
    };
    for (uint32_t id : shownScopes(d, s)) {
      if (id == kRootScope) {
        add(d.scopePath(id), d.scopePath(id), no_range, no_range.cpu_ns, no_range.instances);
        if (hasUnresolved(s))
          add(std::string(kUnresolvedLabel), std::string(kUnresolvedLabel), s.unresolved, s.unresolved.cpu_ns, 0);
      } else {
        add(d.scopePath(id), displayPath(d, id), s.inclusive[id], s.exclusive[id].cpu_ns, s.exclusive[id].instances,
            rangeDomain(d, id));
      }
    }
  }
}

int metricIndex(AcrossMetric m) {
  switch (m) {
    case AcrossMetric::kLaunches: return 0;
    case AcrossMetric::kKernels: return 1;
    case AcrossMetric::kGpuNs: return 2;
    case AcrossMetric::kCpuNs: return 3;
    case AcrossMetric::kLaunchApiNs: return 4;
  }
  return 2;
}

}  // namespace

/// Labels of the runs: each log's file name without ".kcount"; logs whose file names are equal (one name
/// in several folders: run1/kcount.kcount, run2/kcount.kcount) get as many of their folders as tell them
/// apart ("run1/kcount"); a label still shared (equal paths) gets " (pid P)", then " #N" (argument order).
std::vector<std::string> fileLabels(const std::vector<LoadedLog>& logs) {
  const size_t n = logs.size();
  std::vector<std::vector<std::string>> parts(n);  // path components, file name first, ".kcount" dropped
  for (size_t i = 0; i < n; ++i) {
    const std::filesystem::path p = std::filesystem::path(logs[i].path).lexically_normal();
    std::string name = p.filename().string();
    if (name.size() > 7 && name.ends_with(".kcount")) name.resize(name.size() - 7);
    parts[i].push_back(name);
    for (std::filesystem::path dir = p.parent_path(); !dir.empty() && dir.has_filename(); dir = dir.parent_path())
      parts[i].push_back(dir.filename().string());
  }
  std::vector<size_t> used(n, 1);  // components in each label
  auto label = [&](size_t i) {
    std::string out;
    for (size_t c = used[i]; c-- > 0;) out += parts[i][c] + (c ? "/" : "");
    return out;
  };
  std::vector<std::string> labels(n);
  for (bool grew = true; grew;) {
    grew = false;
    std::map<std::string, std::vector<size_t>> by_label;
    for (size_t i = 0; i < n; ++i) by_label[labels[i] = label(i)].push_back(i);
    for (const auto& [_, same] : by_label)
      if (same.size() > 1)
        for (size_t i : same)
          if (used[i] < parts[i].size()) ++used[i], grew = true;
  }
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < n; ++i) seen[labels[i]]++;
  for (size_t i = 0; i < n; ++i) {
    if (seen[labels[i]] < 2) continue;
    const std::string pid = logs[i].data.meta("pid");
    labels[i] += pid.empty() ? "" : " (pid " + pid + ")";
  }
  seen.clear();
  for (size_t i = 0; i < n; ++i)
    if (const size_t k = ++seen[labels[i]]; k > 1) labels[i] += " #" + std::to_string(k);
  return labels;
}

std::vector<std::string> labelsOf(const std::vector<LoadedLog>& logs) {
  // The ranks of a distributed run when every log has one; otherwise the file names (eager.kcount and
  // compiled.kcount read as "eager" and "compiled", not as two pids).
  std::vector<std::string> out;
  for (const auto& l : logs) {
    const std::string rank = l.data.meta("rank");
    if (rank.empty() || rank == "norank") return fileLabels(logs);
    out.push_back("rank " + rank);
  }
  std::map<std::string, int> seen;
  for (const auto& s : out) ++seen[s];
  for (size_t i = 0; i < out.size(); ++i)
    if (seen[out[i]] > 1) out[i] += fmt::format(" [{}]", i + 1);
  return out;
}

Spread spreadOf(std::vector<uint64_t> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median_low = v[(n - 1) / 2];
  s.median_high = v[n / 2];
  s.median = static_cast<double>(s.median_low) / 2.0 + static_cast<double>(s.median_high) / 2.0;
  return s;
}

namespace {

/// Spread::median in JSON: the middle value exactly (as an integer) when there is one, null when not
/// known (Spread::medianKnown()), else the mean of the two middle values.
json medianJson(const Spread& s) {
  if (s.median_low == s.median_high) return s.median_low;
  if (!s.medianKnown()) return nullptr;
  const uint64_t sum = s.median_low + s.median_high;  // both below 2^63 or the sum is past what ns can mean
  return sum >= s.median_low && sum % 2 == 0 ? json(sum / 2) : json(s.median);
}

}  // namespace

namespace {

/// What acrossLogsJson() is made from: collect()'s paths, cells and raw paths.
struct AcrossRanges {
  std::vector<std::string> paths;
  std::map<std::string, std::vector<std::optional<Cell>>> cells;
  std::map<std::string, RawPath> raw;
};

/// The element of acrossLogsJson()'s "ranges" for path `p` (a key of a.cells).
json acrossRangeJson(const AcrossRanges& a, const std::string& p) {
  const auto& row = a.cells.at(p);
  json per_log = json::object(), total = json::object(), spread = json::object();
  size_t in = 0;
  for (const auto& c : row) in += c.has_value();
  for (int m = 0; m < 5; ++m) {
    json vals = json::array();
    uint64_t sum = 0;  // held at 2^64 - 1, as each log's sums
    std::vector<uint64_t> present;
    for (const auto& c : row) {
      if (!c || !c->known(m)) {  // no such range, or GPU time not recorded: null
        vals.push_back(nullptr);
        continue;
      }
      vals.push_back(c->v[m]);
      satAdd(sum, c->v[m]);
      present.push_back(c->v[m]);
    }
    const Spread s = spreadOf(present);
    per_log[kMetrics[m]] = vals;
    if (present.empty()) {  // no log with the range recorded GPU time, or measured its CPU time
      total[kMetrics[m]] = nullptr;
      spread[kMetrics[m]] = nullptr;
      continue;
    }
    total[kMetrics[m]] = sum;
    spread[kMetrics[m]] = json{{"min", s.min}, {"median", medianJson(s)}, {"max", s.max}};
  }
  const RawPath& r = a.raw.at(p);
  return json{{"path", r.path},
              {"domain", r.domain ? json(*r.domain) : json(nullptr)},
              {"in_logs", in}, {"per_log", per_log}, {"total", total}, {"spread", spread}};
}

/// acrossLogsJson() with "ranges" null: acrossRangeJson() gives its elements.
json acrossLogsJsonWithoutRanges(const std::vector<LoadedLog>& logs) {
  json gpu_time = json::array();  // per log: false for KCOUNT_GPU_TIME=0 (its gpu_ns are null)
  for (const auto& l : logs) gpu_time.push_back(gpuTimeRecorded(l.data));
  json launch_timing = json::array();  // per log: N > 1 when its launch_api_ns are estimates (KCOUNT_LAUNCH_TIMING)
  for (const auto& l : logs) launch_timing.push_back(launchTimingSample(l.data));
  json totals_known = json::array();  // per log: false for a summary-mode log without a snapshot (all null)
  for (const auto& l : logs) totals_known.push_back(!noSnapshotNumbers(l));
  size_t with_cost = 0;  // logs that state kcount's own cost: summed
  json cost = selfCostJson(selfCostOfLogs(logs, &with_cost));
  if (!cost.is_null()) cost["logs"] = with_cost;
  return json{{"logs", labelsOf(logs)},
              {"gpu_time", gpu_time},
              {"launch_timing_sample", launch_timing},
              {"totals_known", totals_known},
              {"kcount_cost", cost},
              {"ranges", nullptr}};
}

}  // namespace

json acrossLogsJson(const std::vector<LoadedLog>& logs) {
  AcrossRanges a;
  collect(logs, a.paths, a.cells, a.raw);
  json out = acrossLogsJsonWithoutRanges(logs);
  json ranges = json::array();
  for (const auto& p : a.paths) ranges.push_back(acrossRangeJson(a, p));
  out["ranges"] = std::move(ranges);
  return out;
}

void writeAcrossLogsJson(JsonWriter& w, const std::vector<LoadedLog>& logs) {
  AcrossRanges a;
  collect(logs, a.paths, a.cells, a.raw);
  w.object(acrossLogsJsonWithoutRanges(logs), {{"ranges", [&] {
                                                   w.beginArray();
                                                   for (const auto& p : a.paths) w.value(acrossRangeJson(a, p));
                                                   w.end();
                                                 }}});
}

void printAcrossLogs(std::ostream& out, const std::vector<LoadedLog>& logs, AcrossMetric metric, size_t max_width,
                     bool sum) {
  std::vector<std::string> paths;
  std::map<std::string, std::vector<std::optional<Cell>>> cells;
  std::map<std::string, RawPath> raw;
  collect(logs, paths, cells, raw);
  const int m = metricIndex(metric);
  const bool time = m >= 2;
  // A value exactly (a sum held at 2^64 - 1 as formatDuration() shows it, "≥18446744074 s").
  auto fmtv = [&](uint64_t v) { return time ? formatDuration(v) : fmt::format("{}", v); };
  // The median: the middle value, or the mean of the two middle ones (rounded half up for a time; one
  // decimal for a count), "unknown" when one of them is held at 2^64 - 1 and the other is not.
  auto fmtMedian = [&](const Spread& s) {
    if (s.median_low == s.median_high) return fmtv(s.median_low);
    if (!s.medianKnown()) return std::string(kUnknownMedian);
    const uint64_t half = s.median_low / 2 + s.median_high / 2, odd = (s.median_low % 2) + (s.median_high % 2);
    if (time) return formatDuration(half + (odd > 0 ? 1 : 0));
    return odd == 2 ? fmtv(half + 1) : odd == 1 ? fmt::format("{}.5", half) : fmtv(half);
  };
  static const char* kTitles[] = {"launches", "kernels", "GPU time", "CPU time", "launch CPU"};
  out << fmt::format("== across {} logs: {} per range (inclusive; spread over the logs that have the range)\n",
                     logs.size(), kTitles[m]);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head{"range"};
  for (const auto& l : labelsOf(logs)) head.push_back(l);
  if (sum) head.push_back("total");
  for (const char* h : {"min", "median", "max", "in logs"}) head.push_back(h);
  rows.push_back(head);
  for (const auto& p : paths) {
    std::vector<std::string> r{p};
    std::vector<uint64_t> present;
    uint64_t total = 0;  // held at 2^64 - 1, as each log's sums
    size_t in = 0;
    const auto& row = cells.at(p);
    for (size_t i = 0; i < row.size(); ++i) {
      const auto& c = row[i];
      in += c.has_value();
      if (noSnapshotNumbers(logs[i])) {  // not known whether it has the range, nor its numbers
        r.push_back(kNoTotals);
        continue;
      }
      if (!c || !c->known(m)) {  // no such range, or GPU time not recorded
        r.push_back("-");
        continue;
      }
      r.push_back(fmtv(c->v[m]));
      present.push_back(c->v[m]);
      satAdd(total, c->v[m]);
    }
    const Spread s = spreadOf(present);
    const bool none = present.empty();  // GPU time recorded, or CPU time measured, by no log with the range
    if (sum) r.push_back(none ? "-" : fmtv(total));
    r.push_back(none ? "-" : fmtv(s.min));
    r.push_back(none ? "-" : fmtMedian(s));
    r.push_back(none ? "-" : fmtv(s.max));
    r.push_back(fmt::format("{}/{}", in, logs.size()));
    rows.push_back(r);
  }
  NameColumn names;  // the range paths, narrowed to fit max_width
  names.widest = std::numeric_limits<size_t>::max();
  for (size_t k = 1; k < rows.size(); ++k) names.names.push_back(rows[k][0]);
  bool unknown_median = false;
  for (size_t k = 1; k < rows.size(); ++k) unknown_median = unknown_median || rows[k][rows[k].size() - 3] == kUnknownMedian;
  // Kept at any width: the range and total (--sum); dropped first: in logs, min, max, median, then the logs'
  // own columns, the last log's first (docs/usage.md, "Fitting --width").
  std::vector<unsigned> drop{0};
  for (size_t i = 0; i < logs.size(); ++i) drop.push_back(static_cast<unsigned>(i + 1));
  const auto n = static_cast<unsigned>(logs.size());
  if (sum) drop.push_back(0);                                           // total
  for (unsigned r : {n + 3, n + 1, n + 2, n + 4}) drop.push_back(r);  // min, median, max, in logs
  const DroppedColumns dropped = fitColumns(rows, 1, {names}, 0, max_width, drop);
  if (!dropped.empty()) out << droppedColumnsLine(dropped, max_width) << '\n';
  std::vector<size_t> w(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], displayWidth(r[i]));
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line;
    for (size_t i = 0; i < rows[k].size(); ++i) {
      const std::string pad(w[i] - displayWidth(rows[k][i]), ' ');
      line += i == 0 ? rows[k][i] + pad : "  " + pad + rows[k][i];
    }
    out << line << '\n';
    if (k == 0) out << std::string(displayWidth(line), '-') << '\n';
  }
  if (unknown_median)
    out << kUnknownMedian << ": a median of two values, one held at 2^64 - 1 (its true value is larger; only "
           "implausible records give one, see the warnings)\n";
  const auto labels = labelsOf(logs);
  std::string unknown;
  for (size_t i = 0; i < logs.size(); ++i)
    if (noSnapshotNumbers(logs[i])) unknown += (unknown.empty() ? "" : ", ") + labels[i];
  if (!unknown.empty())
    out << kNoTotals << ": " << unknown
        << " (summary-mode log without a complete snapshot, so without numbers): left out of "
        << (sum ? "total, " : "") << "spread and in logs\n";
  // The logs without kernel GPU times, by setting: "a, b (KCOUNT_GPU_TIME=0), c (KCOUNT_GPU_TIME=graphs)".
  std::string off;
  for (const bool graphs : {false, true}) {
    std::string these;
    for (size_t i = 0; i < logs.size(); ++i)
      if (!gpuTimeRecorded(logs[i].data) && graphGpuTimeRecorded(logs[i].data) == graphs)
        these += (these.empty() ? "" : ", ") + labels[i];
    if (!these.empty())
      off += (off.empty() ? "" : ", ") + these + (graphs ? " (KCOUNT_GPU_TIME=graphs)" : " (KCOUNT_GPU_TIME=0)");
  }
  if (!off.empty())
    out << "GPU time: not recorded in " << off
        << (m == 2 ? (sum ? ": '-', left out of total and spread\n" : ": '-', left out of the spread\n") : "\n");
  std::string sampled;
  for (size_t i = 0; i < logs.size(); ++i)
    if (const uint64_t n = launchTimingSample(logs[i].data); n > 1)
      sampled += (sampled.empty() ? "" : ", ") + labels[i] + " (1 in " + std::to_string(n) + ")";
  if (!sampled.empty()) out << "launch CPU: estimated in " << sampled << " (KCOUNT_LAUNCH_TIMING)\n";
  size_t with_cost = 0;
  const std::optional<SelfCost> cost = selfCostOfLogs(logs, &with_cost);
  out << selfCostFooterLine(cost, fmt::format("kcount's own cost, {} of {} logs added up", with_cost, logs.size()));
  if (!sum)
    out << "not added up: each log's " << kTitles[m]
        << " in its own column; --sum adds a total column (the logs' sum per range)\n";
}

}  // namespace kc
