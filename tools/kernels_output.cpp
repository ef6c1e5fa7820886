#include "tools/kernels_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <ostream>
#include <unordered_map>

#include "collector/counted.h"
#include "collector/shown_value.h"
#include "tools/json_writer.h"
#include "tools/kernel_decode.h"
#include "tools/kernel_names.h"
#include "tools/log_state.h"
#include "tools/multi_log.h"
#include "tools/name_elision.h"
#include "tools/range_names.h"
#include "tools/range_names_internal.h"
#include "tools/table_width.h"
#include "tools/text.h"
#include "tools/text_table.h"

namespace kc {

std::string noKernelsWarning(const LoadedLog& l, std::string_view range) {
  if (noSnapshotNumbers(l)) return {};  // no numbers at all: noTotalsWarning() says so
  const Summary& s = l.summary;
  if (!s.unmatched_by_kernel.empty()) return {};
  for (const RangeStats& r : s.exclusive)
    if (!r.by_kernel.empty()) return {};
  const LogData& d = l.data;
  const uint64_t kernels = s.kernels + s.unmatched_kernels;
  if (!range.empty())
    return fmt::format("no kernels: none ran in range {} or the ranges nested in it ({} in the whole log)",
                       shownPath(range), counted(kernels, "kernel"));
  if (kernels > 0)  // counted by the totals, but in no row by name (summary mode: tallies dropped at the key cap)
    return fmt::format("no kernels: {} counted in the totals, none tallied by name (kcount summary shows the "
                       "tallies dropped)",
                       counted(kernels, "kernel"));
  uint64_t graph = 0;
  for (const RangeStats& r : s.exclusive) graph += r.graph_launches;
  if (s.launches == 0) {
    if (d.summary_mode)
      return "no kernels: no kernel launch was tallied (summary mode; kcount summary shows what the snapshot holds)";
    const uint64_t mem_calls = std::min(d.mem_call_records, d.launch_records);
    if (d.range_records == 0 && mem_calls == 0)
      return "no kernels: nothing was recorded (no kernel launch, range or memcpy/memset call)";
    std::string held = d.range_records > 0 ? counted(d.range_records, "range record") : std::string();
    if (mem_calls > 0) held += (held.empty() ? "" : " and ") + counted(mem_calls, "memcpy/memset call");
    return "no kernels: no kernel launch was recorded (the log holds " + held + ")";
  }
  const std::string launches = counted(s.launches, "launch", "launches");
  const char* them = s.launches == 1 ? "it" : "them";
  if (!gpuTimeRecorded(d) && graph == s.launches)
    return fmt::format("no kernels: {} recorded, none a direct launch: the kernels of graph launches are not known "
                       "with KCOUNT_GPU_TIME=0 (kernels are counted at direct launch calls)",
                       launches);
  if (s.captured_launches == s.launches)
    return fmt::format("no kernels: {} recorded, all during stream capture (recorded into a graph, not run)", launches);
  if (d.stats.dropped_activity_records + d.stats.activity_buffers_refused > 0) {
    std::string lost;
    if (d.stats.dropped_activity_records > 0) lost = counted(d.stats.dropped_activity_records, "activity record") + " dropped";
    if (d.stats.activity_buffers_refused > 0)
      lost += (lost.empty() ? "" : ", ") + counted(d.stats.activity_buffers_refused, "activity buffer") + " refused";
    return fmt::format("no kernels: {} recorded, but their kernel activity records were lost while recording ({})",
                       launches, lost);
  }
  if (!d.complete)
    return fmt::format("no kernels: {} recorded, but no kernel record: the log has no end record (kernels CUPTI had "
                       "not delivered when the process ended were not written)",
                       launches);
  return fmt::format("no kernels: {} recorded, but no kernel record came for {}", launches, them);
}

namespace {

using nlohmann::json;

/// Ranges shown per kernel in the `kcount kernels` table (CSV and JSON list all).
constexpr size_t kTableRanges = 3;

struct KernelRow {
  std::string name;
  uint64_t count = 0;
  uint64_t gpu_ns = 0;
  // Launch configuration of the first kernel record of this name (of the first log that has one): the
  // table's grid and block. shape_known: a log with GPU times gave one (none in a log without kernel records).
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  bool shape_known = false;
  // The distinct grids and blocks of the name's kernel records in every log with GPU times (counted up to
  // DistinctDims::kMaxDistinctDims): more than one, and the table marks grid or block as one of several.
  DistinctDims grids, blocks;
  std::map<std::string, uint64_t> ranges;
};

/// Sorts rows by `sort` (KernelSort's ties included), so the order is total and the same on every run.
void sortKernelRows(std::vector<KernelRow>& rows, KernelSort sort) {
  auto tie = [](const KernelRow& a, const KernelRow& b) {  // GPU total, count (descending), recorded name
    if (a.gpu_ns != b.gpu_ns) return a.gpu_ns > b.gpu_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.name < b.name;
  };
  switch (sort) {
    case KernelSort::kGpuTotal:
      std::sort(rows.begin(), rows.end(), tie);
      break;
    case KernelSort::kCount:  // count, then name: the order before --sort existed
      std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
        return a.count != b.count ? a.count > b.count : a.name < b.name;
      });
      break;
    case KernelSort::kGpuAvg:
      // a.gpu/a.count > b.gpu/b.count, compared exactly as a.gpu*b.count > b.gpu*a.count.
      std::sort(rows.begin(), rows.end(), [&](const KernelRow& a, const KernelRow& b) {
        const unsigned __int128 x = static_cast<unsigned __int128>(a.gpu_ns) * std::max<uint64_t>(b.count, 1);
        const unsigned __int128 y = static_cast<unsigned __int128>(b.gpu_ns) * std::max<uint64_t>(a.count, 1);
        return x != y ? x > y : tie(a, b);
      });
      break;
    case KernelSort::kName: {
      std::unordered_map<std::string, std::string> shown;  // recorded name -> short name, computed once
      for (const auto& r : rows) shown.emplace(r.name, shortKernelNameUncut(r.name));
      std::sort(rows.begin(), rows.end(), [&](const KernelRow& a, const KernelRow& b) {
        const std::string &x = shown.at(a.name), &y = shown.at(b.name);
        return x != y ? x < y : tie(a, b);
      });
      break;
    }
  }
}

/// Kernel rows of `logs` merged by name, in `sort`'s order (kernelSortName()). Range paths are raw
/// (scopePathWithDomains()), or with `display` escaped as text tables, CSV and JSON keys show them (a raw
/// path merges the root with a range named "(no range)", and "a/b" at the top with b inside a). From
/// each log's Summary (its tallies per range and kernel name, the join of summarize() or of the streaming
/// join, and the first shape per name), so a log read by streaming needs no kernel records in memory.
std::vector<KernelRow> collectKernels(const std::vector<const LoadedLog*>& logs, bool display, KernelSort sort) {
  std::unordered_map<std::string, KernelRow> rows;
  for (const LoadedLog* lp : logs) {
    const LoadedLog& l = *lp;
    const LogData& d = l.data;
    const bool gpu = gpuTimeRecorded(d);
    auto add = [&](uint32_t name_id, const KernelTally& t, const std::string& range) {
      std::string name(d.str(name_id));
      auto [it, fresh] = rows.try_emplace(name);
      KernelRow& r = it->second;
      if (fresh) r.name = name;
      // Not known yet: the first log with a shape gives it (a log without GPU times has none: its kernel
      // records' grid and block are 0).
      if (!r.shape_known && gpu) {
        if (auto sh = l.summary.kernel_shapes.find(name_id); sh != l.summary.kernel_shapes.end()) {
          std::copy(std::begin(sh->second.grid), std::end(sh->second.grid), r.grid);
          std::copy(std::begin(sh->second.block), std::end(sh->second.block), r.block);
          r.shape_known = true;
        }
      }
      r.count += t.count;
      r.gpu_ns += t.gpu_ns;
      r.ranges[range] += t.count;
    };
    for (const RangeStats& r : l.summary.exclusive)
      for (const auto& [name_id, t] : r.by_kernel) add(name_id, t, display ? rowPath(d, r.scope_id) : scopePathWithDomains(d, r.scope_id));
    for (const auto& [name_id, t] : l.summary.unmatched_by_kernel) add(name_id, t, std::string(kUnmatchedLabel));
    // The distinct grids and blocks: once per name of the log, for the rows it has (a log without GPU
    // times has no shapes: its records' grid and block are 0).
    if (gpu)
      for (const auto& [name_id, sh] : l.summary.kernel_shapes)
        if (auto it = rows.find(std::string(d.str(name_id))); it != rows.end()) {
          it->second.grids.merge(sh.grids);
          it->second.blocks.merge(sh.blocks);
        }
  }
  std::vector<KernelRow> out;
  out.reserve(rows.size());
  for (auto& [_, r] : rows) out.push_back(std::move(r));
  sortKernelRows(out, sort);
  return out;
}

std::vector<const LoadedLog*> pointers(const std::vector<LoadedLog>& logs) {
  std::vector<const LoadedLog*> v;
  for (const auto& l : logs) v.push_back(&l);
  return v;
}

/// The CSV's `ranges` of a kernel: {"step": 40, "step/up": 8}, JSON text of JSON's "ranges" object with the
/// paths as CSV writes them (escaped: a byte that is no UTF-8 is "\\xHH" text), by count (descending), so
/// that paths holding ", " split exactly.
std::string rangesCsv(const std::map<std::string, uint64_t>& ranges) {
  std::vector<std::pair<std::string, uint64_t>> v(ranges.begin(), ranges.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [path, n] : v) s += fmt::format("{}{}:{}", s.empty() ? "" : ",", jsonString(path), n);
  return "{" + s + "}";
}

/// "step ×40, step/up ×8, +3 more": ranges by count (descending), at most `limit` of them (0: all).
std::string rangesText(const std::map<std::string, uint64_t>& ranges, size_t limit) {
  std::vector<std::pair<std::string, uint64_t>> v(ranges.begin(), ranges.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const size_t n = limit > 0 ? std::min(limit, v.size()) : v.size();
  // The table's names are shortened (limit > 0), together so that different paths stay different; CSV
  // (limit 0) keeps them whole.
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(v[i].first);
  if (limit > 0) names = elideDistinct(names);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i == 0 ? "" : ", ") + fmt::format("{} ×{}", names[i], v[i].second);
  if (v.size() > n) s += fmt::format(", +{} more", v.size() - n);
  return s;
}

/// One table or CSV row per (kernel, log): with one log, its kernels; with several, each kernel of the
/// merged order once per log that ran it, labelled by log (labelsOf()).
struct LogKernelRow {
  std::string log;  // label; "" with one log
  const LoadedLog* loaded = nullptr;
  KernelRow row;
};

std::vector<LogKernelRow> kernelRowsPerLog(const std::vector<LoadedLog>& logs, KernelSort sort) {
  std::vector<LogKernelRow> out;
  if (logs.size() == 1) {
    for (auto& r : collectKernels(pointers(logs), true, sort)) out.push_back({"", &logs[0], std::move(r)});
    return out;
  }
  const auto labels = labelsOf(logs);
  std::vector<std::unordered_map<std::string, KernelRow>> per(logs.size());
  for (size_t i = 0; i < logs.size(); ++i)
    for (auto& r : collectKernels({&logs[i]}, true, sort)) per[i].emplace(r.name, std::move(r));
  for (const auto& merged : collectKernels(pointers(logs), false, sort))
    for (size_t i = 0; i < logs.size(); ++i)
      if (auto it = per[i].find(merged.name); it != per[i].end()) out.push_back({labels[i], &logs[i], std::move(it->second)});
  return out;
}

}  // namespace

size_t keepKernelsOfRange(LoadedLog& log, std::string_view path) {
  size_t matched = 0;
  auto& ex = log.summary.exclusive;  // indexed by scope id
  for (size_t id = 0; id < ex.size(); ++id) {
    const bool known = id < log.data.scopes.size();
    const std::string p = known ? rowPath(log.data, static_cast<uint32_t>(id)) : std::string();
    const bool in = known && (p == path || (p.size() > path.size() && p.starts_with(path) && p[path.size()] == '/'));
    if (in) ++matched;
    else ex[id].by_kernel.clear();
  }
  log.summary.unmatched_by_kernel.clear();
  log.kernels_of_one_range = true;
  return matched;
}

std::vector<std::string> rangePathsNamed(const LoadedLog& log, std::string_view path) {
  std::vector<std::string> out;
  for (uint32_t id = 0; id < log.data.scopes.size(); ++id) {
    std::string p = rowPath(log.data, id);
    if (p == path) return {std::move(p)};
    if (id != kRootScope && log.data.scopeDefined(id) && displayPath(log.data, id, /*domains=*/false) == path)
      out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> rangePathsEndingWith(const LoadedLog& log, std::string_view path, size_t most) {
  std::vector<std::string> out;
  auto endsWith = [&](std::string_view p) {
    return p.size() > path.size() && p.ends_with(path) && p[p.size() - path.size() - 1] == '/';
  };
  for (uint32_t id = 0; id < log.data.scopes.size(); ++id) {
    if (id == kRootScope || !log.data.scopeDefined(id)) continue;
    std::string p = rowPath(log.data, id);
    // "gemm" names step/mylib: gemm too (its path without domains ends with it).
    if (endsWith(p) || endsWith(displayPath(log.data, id, /*domains=*/false))) out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > most) out.resize(most);
  return out;
}

std::string_view kernelSortName(KernelSort sort) {
  switch (sort) {
    case KernelSort::kGpuTotal: return "gpu";
    case KernelSort::kCount: return "count";
    case KernelSort::kGpuAvg: return "avg";
    case KernelSort::kName: return "name";
  }
  return "gpu";
}

std::optional<KernelSort> parseKernelSort(std::string_view word) {
  for (KernelSort k : {KernelSort::kGpuTotal, KernelSort::kCount, KernelSort::kGpuAvg, KernelSort::kName})
    if (kernelSortName(k) == word) return k;
  return std::nullopt;
}

namespace {

/// Merged GPU times are known only if every log recorded them.
bool allGpuTimes(const std::vector<LoadedLog>& logs) {
  bool all_gpu = true;
  for (const auto& l : logs) all_gpu = all_gpu && gpuTimeRecorded(l.data);
  return all_gpu;
}

/// A kernel's grid or block dimensions as JSON, [x, y, z]; null where `known` is false (no kernel record
/// of that name gave them: KCOUNT_GPU_TIME=0, summary mode).
json dimsJson(const int32_t (&v)[3], bool known) { return known ? json::array({v[0], v[1], v[2]}) : json(nullptr); }

/// How many distinct grids (or blocks) a kernel ran with, as JSON: 1 to 16 (16: 16 or more, counting
/// stops there); null where `known` is false, as dimsJson().
json distinctJson(const DistinctDims& s, bool known) { return known ? json(s.size()) : json(nullptr); }

/// Calls f(json) with each element of kernelsJson()'s "kernels", in `sort`'s order, one at a time.
template <typename F>
void forEachKernelJson(const std::vector<LoadedLog>& logs, KernelSort sort, F&& f) {
  const auto labels = labelsOf(logs);
  std::vector<std::unordered_map<std::string, KernelRow>> per(logs.size());
  if (logs.size() > 1)
    for (size_t i = 0; i < logs.size(); ++i)
      for (auto& r : collectKernels({&logs[i]}, true, sort)) per[i].emplace(r.name, std::move(r));
  auto rangesJson = [](const KernelRow& r) {
    json ranges = json::object();
    for (const auto& [p, n] : r.ranges) ranges[jsonPathKey(p)] = n;
    return ranges;
  };
  const bool all_gpu = allGpuTimes(logs);
  for (const auto& r : collectKernels(pointers(logs), true, sort)) {
    json k{{"name", r.name},
           {"short", shortKernelNameUncut(r.name)},
           {"count", r.count},
           {"gpu_ns", all_gpu ? json(r.gpu_ns) : json(nullptr)},
           {"grid", dimsJson(r.grid, r.shape_known)},
           {"block", dimsJson(r.block, r.shape_known)},
           {"distinct_grids", distinctJson(r.grids, r.shape_known)},
           {"distinct_blocks", distinctJson(r.blocks, r.shape_known)},
           {"ranges", rangesJson(r)},
           {"decoded", decodedJson(decodeKernelName(r.name))}};
    if (logs.size() > 1) {
      json per_log = json::array();
      for (size_t i = 0; i < logs.size(); ++i)
        if (auto it = per[i].find(r.name); it != per[i].end())
          per_log.push_back(json{{"log", labels[i]},
                                 {"path", logs[i].path},
                                 {"count", it->second.count},
                                 {"gpu_time", gpuTimeRecorded(logs[i].data)},
                                 {"gpu_ns", gpuTimeRecorded(logs[i].data) ? json(it->second.gpu_ns) : json(nullptr)},
                                 {"grid", dimsJson(it->second.grid, it->second.shape_known)},
                                 {"block", dimsJson(it->second.block, it->second.shape_known)},
                                 {"distinct_grids", distinctJson(it->second.grids, it->second.shape_known)},
                                 {"distinct_blocks", distinctJson(it->second.blocks, it->second.shape_known)},
                                 {"ranges", rangesJson(it->second)}});
      k["per_log"] = per_log;
    }
    f(std::move(k));
  }
}

}  // namespace

json kernelsJson(const std::vector<LoadedLog>& logs, KernelSort sort) {
  json arr = json::array();
  forEachKernelJson(logs, sort, [&](json k) { arr.push_back(std::move(k)); });
  return json{{"gpu_time", allGpuTimes(logs)}, {"sort", kernelSortName(sort)}, {"kernels", arr}};
}

void writeKernelsJson(std::ostream& out, const std::vector<LoadedLog>& logs, KernelSort sort) {
  JsonWriter w(out);
  w.object(json{{"gpu_time", allGpuTimes(logs)}, {"sort", kernelSortName(sort)}, {"kernels", nullptr}},
           {{"kernels", [&] {
              w.beginArray();
              forEachKernelJson(logs, sort, [&](const json& k) { w.value(k); });
              w.end();
            }}});
  out << '\n';
}

namespace {
/// A grid or block in the kernels table: "2048x1x1", the first record's; "2048x1x1 (1 of 3)" when the
/// name's records ran with 3 different ones, "(1 of 16+)" from 16 on (counting stops there).
std::string dimsText(const int32_t (&v)[3], const DistinctDims& s) {
  std::string t = fmt::format("{}x{}x{}", v[0], v[1], v[2]);
  if (s.size() > 1) t += fmt::format(" (1 of {}{})", s.size(), s.full() ? "+" : "");
  return t;
}
}  // namespace

void printKernelsTable(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names, KernelSort sort,
                       size_t max_width) {
  const bool several = logs.size() > 1;
  Table t;
  t.head = {"kernel",   "count", "GPU total", "GPU avg", "grid",  "block",    "category",  "library",
            "tile",     "cluster", "stages",  "dtype",   "layout", "epilogue", "fused ops", "ranges"};
  t.right = {false, true, true, true, true, true, false, false, false, false, true, false, false, false, false, false};
  if (several) {
    t.head.insert(t.head.begin(), "log");
    t.right.insert(t.right.begin(), false);
  }
  // The kernel names and the ranges' list (cut at its end) fit max_width; --full-names: names whole.
  NameColumn ranges;
  ranges.index = t.head.size() - 1;
  ranges.widest = std::numeric_limits<size_t>::max();
  ranges.cut_end = true;
  if (!full_names) {
    t.elide = {several ? size_t(1) : size_t(0)};
    t.max_width = max_width;
  }
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::vector<std::string> no_gpu;  // labels (or paths) of logs without GPU times, and " (KCOUNT_GPU_TIME=0" or "=graphs"
  std::vector<std::string> no_shape;  // ... of logs with GPU times but without grid and block (summary mode)
  bool varies = false;  // a row's kernel ran with several grids or blocks
  const auto rows = kernelRowsPerLog(logs, sort);
  // Without --full-names: the short names uncut (the table shortens its name column in the middle, together,
  // so that different names stay different; a cut at kMaxShortName characters first would make cuBLAS names
  // that differ near their end equal), and different kernels whose short names are equal by their demangled
  // names.
  std::vector<std::string> shown, names;
  for (const LogKernelRow& k : rows) {
    const std::string& name = k.row.name;
    shown.push_back(full_names ? kernelNameFor(name, true, true) : displayText(shortKernelNameUncut(name)));
    names.push_back(name);
  }
  if (!full_names) tellKernelsApart(shown, names, std::numeric_limits<size_t>::max());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [label, l, r] = rows[i];
    const DecodedKernel d = decodeKernelName(r.name);
    std::string ops;
    for (const auto& o : d.ops) ops += (ops.empty() ? "" : " ") + o;
    if (ops.empty() && !d.fused.empty()) ops = "(" + d.fused + ")";  // not split: shown raw
    // KCOUNT_GPU_TIME=0: GPU time, grid and block were not recorded (written as 0): '-'. Summary mode:
    // grid and block are not known (tallies, no kernel records): '-'.
    const bool gpu = gpuTimeRecorded(l->data);
    const std::string who = label.empty() ? l->path : label;
    const std::string no_gpu_note = who + (graphGpuTimeRecorded(l->data) ? " (KCOUNT_GPU_TIME=graphs" : " (KCOUNT_GPU_TIME=0");
    if (!gpu && std::find(no_gpu.begin(), no_gpu.end(), no_gpu_note) == no_gpu.end()) no_gpu.push_back(no_gpu_note);
    if (gpu && !r.shape_known && std::find(no_shape.begin(), no_shape.end(), who) == no_shape.end())
      no_shape.push_back(who);
    varies = varies || (r.shape_known && (r.grids.size() > 1 || r.blocks.size() > 1));
    std::vector<std::string> row{shown[i], std::to_string(r.count),
                                 gpu ? formatDuration(r.gpu_ns) : "-",
                                 gpu ? formatMeanDuration(r.gpu_ns, r.count) : "-",
                                 r.shape_known ? dimsText(r.grid, r.grids) : "-",
                                 r.shape_known ? dimsText(r.block, r.blocks) : "-",
                                 std::string(categoryName(d.category)), dash(d.library), dash(d.tile), dash(d.cluster),
                                 dash(d.stages), dash(d.dtype), dash(d.layout), dash(d.epilogue), dash(ops),
                                 rangesText(r.ranges, kTableRanges)};
    ranges.names.push_back(row.back());
    if (several) row.insert(row.begin(), label);
    t.rows.push_back(std::move(row));
  }
  if (!full_names) t.fit.push_back(std::move(ranges));
  // Kept at any width: the log, kernel, count, GPU total (docs/usage.md, "Fitting --width"). Columns that are
  // '-' in every row (GPU times of logs without them, grid and block of summary-mode logs) go first.
  const bool any_gpu =
      std::any_of(rows.begin(), rows.end(), [](const LogKernelRow& k) { return gpuTimeRecorded(k.loaded->data); });
  const bool any_shape = std::any_of(rows.begin(), rows.end(), [](const LogKernelRow& k) { return k.row.shape_known; });
  std::vector<std::string> order;
  if (!any_gpu) order.insert(order.end(), {"GPU total", "GPU avg"});
  if (!any_shape) order.insert(order.end(), {"block", "grid"});
  for (const char* h : {"epilogue", "layout", "stages", "cluster", "tile", "dtype", "fused ops", "library", "block",
                        "grid", "ranges", "GPU avg", "category"})
    if (std::find(order.begin(), order.end(), h) == order.end()) order.emplace_back(h);
  t.dropOrder(order);
  t.print(out);
  if (!t.rows.empty())
    out << "-: not in the kernel name (nothing is guessed; docs/kernel-names.md)\n";
  const bool one_range = std::any_of(logs.begin(), logs.end(), [](const LoadedLog& l) { return l.kernels_of_one_range; });
  if (varies)
    out << "grid, block 'AxBxC (1 of N)': the first record's, of N different ones the kernel ran with (16+: 16 or "
           "more)"
        << (one_range ? " in the whole log, not only in --range's range" : "")
        << "; --format csv/json: distinct_grids, distinct_blocks\n";
  for (const auto& who : no_gpu)
    out << "GPU time: not recorded in " << who
        << ": kernels counted at their launch calls or read from their graph; GPU time, grid and block are '-')\n";
  for (const auto& who : no_shape)
    out << "grid, block: not recorded in " << who
        << " (KCOUNT_MODE=summary: kernels tallied by name, without their records; grid and block are '-')\n";
}

void printKernelsCsv(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names, KernelSort sort) {
  out << "log,kernel,name,count,gpu_ns,grid_x,grid_y,grid_z,block_x,block_y,block_z,ranges,category,library,tile,"
         "cluster,stages,dtype,layout,epilogue,fused_ops,distinct_grids,distinct_blocks\n";
  for (const auto& [_, l, r] : kernelRowsPerLog(logs, sort)) {
    const DecodedKernel d = decodeKernelName(r.name);
    std::string ops;
    for (const auto& o : d.ops) ops += (ops.empty() ? "" : " ") + o;
    // KCOUNT_GPU_TIME=0: gpu_ns, grid and block empty (not recorded), never 0; summary mode: grid and block.
    const bool gpu = gpuTimeRecorded(l->data);
    auto n = [&](auto v) { return gpu ? std::to_string(v) : std::string(); };
    const bool shape_known = r.shape_known;  // a local, not the structured binding: clang 14 cannot capture one
    auto dim = [shape_known](int32_t v) { return shape_known ? std::to_string(v) : std::string(); };
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csvField(l->path),
                       csvField(kernelNameFor(r.name, full_names, false)), csvField(r.name), r.count, n(r.gpu_ns),
                       dim(r.grid[0]), dim(r.grid[1]), dim(r.grid[2]), dim(r.block[0]), dim(r.block[1]),
                       dim(r.block[2]), csvField(rangesCsv(r.ranges)), categoryName(d.category), csvField(d.library),
                       d.tile, d.cluster, d.stages, csvField(d.dtype), d.layout, csvField(d.epilogue), csvField(ops),
                       dim(int32_t(r.grids.size())), dim(int32_t(r.blocks.size())));
  }
}

}  // namespace kc
