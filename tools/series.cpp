#include "tools/series.h"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <ostream>
#include <string>

#include "tools/json_writer.h"
#include "tools/kernel_names.h"
#include "tools/log_state.h"
#include "tools/range_names.h"
#include "tools/text.h"
#include "tools/text_table.h"
#include "collector/analysis.h"

namespace kc {
namespace {

using nlohmann::json;

uint64_t startNs(const LogData& d) {
  const std::string t = d.meta("start_ns");
  uint64_t v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

uint64_t minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

RangeStats change(const RangeStats& now, const RangeStats* before) {
  RangeStats d;
  d.scope_id = now.scope_id;
  auto f = [&](uint64_t RangeStats::*m) { d.*m = minus(now.*m, before ? before->*m : 0); };
  for (auto m : {&RangeStats::instances, &RangeStats::cpu_ns, &RangeStats::launches, &RangeStats::graph_launches,
                 &RangeStats::launch_api_ns, &RangeStats::kernels, &RangeStats::gpu_ns,
                 &RangeStats::captured_launches, &RangeStats::memcpy_count, &RangeStats::memcpy_bytes,
                 &RangeStats::memcpy_ns, &RangeStats::memset_count, &RangeStats::memset_bytes,
                 &RangeStats::memset_ns, &RangeStats::graph_gpu_launches, &RangeStats::graph_gpu_ns})
    f(m);
  return d;
}

bool changed(const RangeStats& d) {
  return d.instances || d.cpu_ns || d.launches || d.kernels || d.gpu_ns || d.launch_api_ns || d.graph_gpu_ns;
}

}  // namespace

std::vector<SeriesInterval> snapshotSeries(const LoadedLog& log) {
  const LogData& d = log.data;
  std::vector<SeriesInterval> out;
  if (!d.summary_mode) return out;
  Summary prev;
  bool have_prev = false;
  uint64_t prev_ns = startNs(d);
  for (size_t i = 0; i < d.snapshots.size(); ++i) {
    Summary cur = summarizeSnapshot(d, i);
    SeriesInterval iv;
    iv.sequence = d.snapshots[i].begin.sequence;
    iv.begin_ns = prev_ns;
    iv.end_ns = d.snapshots[i].begin.time_ns;
    iv.final_snapshot = (d.snapshots[i].begin.flags & kSnapshotFinal) != 0;
    for (uint32_t id : cur.children_order) {
      // The root row is the process's innermost numbers (launches with no range open), as in the table.
      const RangeStats& now = id == kRootScope ? cur.exclusive[id] : cur.inclusive[id];
      const RangeStats* before = nullptr;
      if (have_prev && id < prev.inclusive.size())
        before = id == kRootScope ? &prev.exclusive[id] : &prev.inclusive[id];
      RangeStats delta = change(now, before);
      if (changed(delta)) iv.ranges.emplace_back(id, std::move(delta));
    }
    out.push_back(std::move(iv));
    prev = std::move(cur);
    have_prev = true;
    prev_ns = d.snapshots[i].begin.time_ns;
  }
  return out;
}

namespace {

/// The element of an interval's "ranges" for range `id` of `l` and its change `r`.
json seriesRangeJson(const LoadedLog& l, uint32_t id, const RangeStats& r) {
  const bool gpu = gpuTimeRecorded(l.data);
  json j{{"path", l.data.scopePath(id)},
              {"domain", rangeDomain(l.data, id) ? json(*rangeDomain(l.data, id)) : json(nullptr)},
              {"instances", r.instances},
              {"cpu_ns", r.cpu_ns},
              {"launches", r.launches},
              {"graph_launches", r.graph_launches},
              {"kernels", r.kernels},
              {"gpu_ns", gpu ? json(r.gpu_ns) : json(nullptr)},  // null: KCOUNT_GPU_TIME=0
              {"launch_api_ns", r.launch_api_ns}};
  if (graphGpuTimeRecorded(l.data)) {  // KCOUNT_GPU_TIME=graphs: the graph launches' GPU spans
    j["graph_gpu_launches"] = r.graph_gpu_launches;
    j["graph_gpu_ns"] = r.graph_gpu_ns;
  }
  return j;
}

/// An element of "intervals" with "ranges" null: seriesRangeJson() gives its elements.
json intervalJsonWithoutRanges(const LoadedLog& l, const SeriesInterval& iv) {
  return json{{"sequence", iv.sequence},
              {"begin_ns", iv.begin_ns},
              {"end_ns", iv.end_ns},
              {"offset_ns", minus(iv.end_ns, startNs(l.data))},
              {"final", iv.final_snapshot},
              {"ranges", nullptr}};
}

/// An element of "logs" with "intervals" null.
json seriesLogJsonWithoutIntervals(const LoadedLog& l) {
  return json{{"path", l.path}, {"mode", l.data.summary_mode ? "summary" : "trace"}, {"gpu_time", gpuTimeRecorded(l.data)},
              {"launch_timing_sample", launchTimingSample(l.data)},  // > 1: launch_api_ns are estimates
              {"state", logState(l)},  // "complete", "incomplete", "lossy", ... (logState)
              {"intervals", nullptr}};
}

}  // namespace

json seriesJson(const std::vector<LoadedLog>& logs) {
  json arr = json::array();
  for (const auto& l : logs) {
    json intervals = json::array();
    for (const auto& iv : snapshotSeries(l)) {
      json ranges = json::array();
      for (const auto& [id, r] : iv.ranges) ranges.push_back(seriesRangeJson(l, id, r));
      json i = intervalJsonWithoutRanges(l, iv);
      i["ranges"] = std::move(ranges);
      intervals.push_back(std::move(i));
    }
    json log = seriesLogJsonWithoutIntervals(l);
    log["intervals"] = std::move(intervals);
    arr.push_back(std::move(log));
  }
  return json{{"logs", arr}};
}

void writeSeriesJson(std::ostream& out, const std::vector<LoadedLog>& logs) {
  JsonWriter w(out);
  w.object(json{{"logs", nullptr}}, {{"logs", [&] {
                                        w.beginArray();
                                        for (const auto& l : logs) {
                                          const std::vector<SeriesInterval> series = snapshotSeries(l);
                                          w.object(seriesLogJsonWithoutIntervals(l), {{"intervals", [&] {
                                                     w.beginArray();
                                                     for (const auto& iv : series)
                                                       w.object(intervalJsonWithoutRanges(l, iv), {{"ranges", [&] {
                                                                  w.beginArray();
                                                                  for (const auto& [id, r] : iv.ranges)
                                                                    w.value(seriesRangeJson(l, id, r));
                                                                  w.end();
                                                                }}});
                                                     w.end();
                                                   }}});
                                        }
                                        w.end();
                                      }}});
  out << '\n';
}

void printSeriesCsv(std::ostream& out, const LoadedLog& l, bool header) {
  if (header)
    out << "log,sequence,final,begin_ns,end_ns,offset_ns,path,instances,cpu_ns,launches,graph_launches,kernels,"
           "gpu_ns,launch_api_ns,graph_gpu_launches,graph_gpu_ns\n";
  const uint64_t start = startNs(l.data);
  const bool spans = graphGpuTimeRecorded(l.data);  // else the graph GPU fields are empty: not recorded
  for (const auto& iv : snapshotSeries(l))
    for (const auto& [id, r] : iv.ranges)
      out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csvField(l.path), iv.sequence,
                         iv.final_snapshot ? 1 : 0, iv.begin_ns, iv.end_ns, minus(iv.end_ns, start),
                         csvField(displayPath(l.data, id)), r.instances, r.cpu_ns, r.launches, r.graph_launches,
                         r.kernels, gpuTimeRecorded(l.data) ? std::to_string(r.gpu_ns) : std::string(),  // empty: not recorded
                         r.launch_api_ns,
                         spans ? fmt::format("{},{}", r.graph_gpu_launches, r.graph_gpu_ns) : std::string(","));
}

void printSeries(std::ostream& out, const LoadedLog& l, size_t max_width) {
  out << "== " << displayText(l.path) << '\n';
  if (!l.data.summary_mode) return;  // no snapshots: the caller says so on stderr
  if (l.data.snapshots.empty()) {
    out << noSnapshotText(l.data) << '\n';
    return;
  }
  const uint64_t start = startNs(l.data);
  Table t;
  t.head = {"t (s)", "snapshot", "range", "instances", "launches", "kernels", "GPU time", "CPU time", "launch CPU"};
  t.right.assign(t.head.size(), true);
  t.right[2] = false;  // range
  t.rule = Table::Rule::kFull;
  // The range paths narrowed, then columns dropped, to fit (fitColumns()); kept at any width: t (s), range,
  // launches, kernels, GPU time (docs/usage.md, "Fitting --width").
  t.max_width = max_width;
  t.drop = {0, 4, 0, 3, 0, 0, 0, 5, 6};
  const bool spans = graphGpuTimeRecorded(l.data);  // KCOUNT_GPU_TIME=graphs: a graph GPU column
  if (spans) {
    t.head.push_back("graph GPU");
    t.right.push_back(true);
    t.drop.push_back(1);
  }
  NameColumn paths;
  paths.index = 2;
  paths.widest = std::numeric_limits<size_t>::max();
  for (const auto& iv : snapshotSeries(l)) {
    for (const auto& [id, r] : iv.ranges) {
      paths.names.push_back(displayPath(l.data, id));
      t.rows.push_back({fmt::format("{:.3f}", static_cast<double>(minus(iv.end_ns, start)) / 1e9),
                        std::to_string(iv.sequence) + (iv.final_snapshot ? " (final)" : ""), paths.names.back(),
                        std::to_string(r.instances), std::to_string(r.launches), std::to_string(r.kernels),
                        gpuTimeRecorded(l.data) ? formatDuration(r.gpu_ns) : "-", formatDuration(r.cpu_ns),
                        formatDuration(r.launch_api_ns)});
      if (spans) t.rows.back().push_back(r.graph_gpu_launches ? formatDuration(r.graph_gpu_ns) : "-");
    }
  }
  t.fit.push_back(std::move(paths));
  t.print(out);
  if (t.rows.empty()) out << "(no complete snapshot with changes)\n";
  if (const std::string note = launchTimingNote(l.data); !note.empty()) out << note << '\n';
}

}  // namespace kc
