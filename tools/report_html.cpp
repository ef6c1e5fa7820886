#include "tools/report_html.h"

#include <filesystem>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tools/diff.h"
#include "tools/kernel_decode.h"
#include "tools/kernel_names.h"
#include "tools/log_state.h"
#include "tools/multi_log.h"
#include "tools/range_names.h"
#include "tools/range_tree.h"
#include "tools/text.h"
#include "tools/verdict.h"

namespace kc {
namespace {

using nlohmann::json;

/// The page, from tools/report_page.html (generated include, see tools/CMakeLists.txt).
constexpr std::string_view kPage =
#include "report_page.inc"
    ;
constexpr std::string_view kDataPlaceholder = "/*KCOUNT_DATA*/";

json counts(const RangeStats& r) {
  return {{"launches", r.launches}, {"kernels", r.kernels}, {"gpu_ns", r.gpu_ns}, {"launch_api_ns", r.launch_api_ns}};
}


json runJson(const LoadedLog& l, const std::string& label) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  const uint64_t all_gpu = s.kernel_gpu_ns;  // every kernel, unmatched included (trace or summary mode)
  json run = {{"label", label},
              {"path", l.path},
              {"host", d.meta("host")},
              {"pid", d.meta("pid")},
              {"command", d.meta("command_line")},
              {"gpu", d.meta("gpu.0")},
              {"complete", d.complete},
              {"state", logState(l)},
              {"state_line", logStateWarning(l, "kcount report printed on stderr")},  // "" for a complete log without drops
              // false: KCOUNT_GPU_TIME=0, every gpu_ns of this run is 0 because it was not measured
              {"gpu_time", gpuTimeRecorded(d)},
              // "" or the line that says the run's launch CPU is an estimate (KCOUNT_LAUNCH_TIMING)
              {"launch_timing_note", launchTimingNote(d)},
              {"totals",
               {{"launches", s.launches},
                {"kernels", s.kernels},
                {"unmatched_kernels", s.unmatched_kernels},
                {"gpu_ns", all_gpu}}}};

  // Range tree, depth first from the root: the ranges `kcount summary` shows (shownScopes(): subtrees with
  // nothing in them are skipped; a parent without instance that holds shown ranges is kept).
  json ranges = json::array();
  std::vector<bool> in_summary(s.inclusive.size(), false);
  for (uint32_t id : shownScopes(d, s)) in_summary[id] = true;
  auto shown = [&](uint32_t id) { return id < in_summary.size() && in_summary[id]; };
  std::vector<std::pair<uint32_t, uint32_t>> stack = {{kRootScope, 0}};  // (scope, depth)
  std::vector<bool> visited(s.inclusive.size(), false);
  const RangeStats no_range = noRangeStats(s);
  while (!stack.empty()) {
    auto [id, depth] = stack.back();
    stack.pop_back();
    if (id >= visited.size() || visited[id] || !shown(id)) continue;
    visited[id] = true;
    const bool root = id == kRootScope;
    // The verdict `kcount summary` prints for the range (its tree view: inclusive numbers; the root's row
    // is "(no range)", whose numbers have no instance and so no verdict), through the same rangeLayers().
    const RangeStats& own = root ? no_range : s.inclusive[id];
    const std::string verdict = rangeLayers(d, own, own.instances, own.cpu_ns, s.graph_view).verdict;
    // A range named as the root's row label, "(no range)" (at the top level also its path), is written
    // "\(no range)", as the tables write it, so that the page neither shows it as the root's row nor merges it
    // with the root across runs (by path).
    const auto unlabel = [](std::string text) { return text == "(no range)" ? "\\" + text : text; };
    ranges.push_back({{"id", d.logScopeId(id)},
                      {"parent", root ? json(nullptr) : json(d.logScopeId(d.scopes[id].parent_id))},
                      {"name", root            ? std::string("(no range)")
                               : d.scopeLost(id) ? lostRangeName(d.logScopeId(id))
                                                 : unlabel(rangeNameWithDomain(d, id))},
                      {"path", root            ? scopePathWithDomains(d, id)
                               : d.scopeLost(id) ? lostRangeName(d.logScopeId(id))
                                                 : unlabel(scopePathWithDomains(d, id))},
                      {"domain", rangeDomain(d, id) ? json(*rangeDomain(d, id)) : json(nullptr)},
                      {"depth", depth},
                      {"instances", s.inclusive[id].instances},
                      // the root has no instance, so no CPU time: null, as summary's JSON gives it
                      {"cpu_ns", root ? json(nullptr) : json(s.inclusive[id].cpu_ns)},
                      {"incl", counts(s.inclusive[id])},
                      {"excl", counts(s.exclusive[id])},
                      {"verdict", verdict.empty() ? json(nullptr) : json(verdict)}});
    if (id < s.children.size())
      for (auto it = s.children[id].rbegin(); it != s.children[id].rend(); ++it) stack.push_back({*it, depth + 1});
  }
  run["ranges"] = std::move(ranges);

  // Kernels by recorded name, with the range of their launch (within the kernel's capture window).
  const LaunchJoin join(d);
  struct Row {
    uint64_t count = 0, gpu_ns = 0;
    const KernelBody* first = nullptr;  // trace mode: grid and block of the first record; none in summary mode
    DistinctDims grids, blocks;         // trace mode: the distinct grids and blocks of its records (up to 16)
    std::map<std::string, uint64_t> ranges;
  };
  std::map<uint32_t, Row> by_name;
  std::unordered_map<uint32_t, std::string> paths;
  // A kernel's range as `kcount kernels` writes it (escaped: a top-level range with an empty name is `""`,
  // not an empty entry at the start of the cell; `a\/b` and `\(no range)` stay apart from `a/b` and the root).
  auto kernelRangePath = [&](uint32_t scope) { return scope == kRootScope ? d.scopePath(scope) : displayPath(d, scope); };
  if (d.summary_mode) {  // no kernel records: the snapshot's tallies per (range, name)
    for (const RangeStats& rs : s.exclusive)
      for (const auto& [name_id, t] : rs.by_kernel) {
        Row& r = by_name[name_id];
        r.count += t.count;
        r.gpu_ns += t.gpu_ns;
        r.ranges[kernelRangePath(rs.scope_id)] += t.count;
      }
    for (const auto& [name_id, t] : s.unmatched_by_kernel) {
      Row& r = by_name[name_id];
      r.count += t.count;
      r.gpu_ns += t.gpu_ns;
      r.ranges[std::string(kUnmatchedLabel)] += t.count;
    }
  }
  for (size_t j = 0; j < d.kernels.size(); ++j) {
    const KernelBody& k = d.kernels[j];
    Row& r = by_name[k.name_id];
    ++r.count;
    r.gpu_ns += k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    if (!r.first) r.first = &k;
    r.grids.add({static_cast<int32_t>(k.grid[0]), static_cast<int32_t>(k.grid[1]), static_cast<int32_t>(k.grid[2])});
    r.blocks.add({static_cast<int32_t>(k.block[0]), static_cast<int32_t>(k.block[1]), static_cast<int32_t>(k.block[2])});
    const auto launch = join.ofKernel(j);
    if (!launch) {
      ++r.ranges[std::string(kUnmatchedLabel)];
    } else {
      const uint32_t scope = d.launches[*launch].scope_id;
      auto p = paths.find(scope);
      if (p == paths.end()) p = paths.emplace(scope, kernelRangePath(scope)).first;
      ++r.ranges[p->second];
    }
  }
  // Grid and block: the first record's, and the distinct ones of the name's records, that one first (up to
  // 16; 16: 16 or more); null and [] where no record gave them (summary mode: tallies, no records).
  auto dims = [](const DistinctDims& s) {
    json a = json::array();
    for (size_t i = 0; i < s.size(); ++i) a.push_back(s.dims[i]);
    return a;
  };
  json kernels = json::array();
  for (const auto& [name_id, r] : by_name) {
    std::string_view name = d.str(name_id);
    const KernelBody none{};
    const KernelBody& k = r.first ? *r.first : none;
    kernels.push_back({{"name", name},
                       {"short", shortKernelNameUncut(name)},  // whole: the page shortens it in the middle
                       {"demangled", demangleKernelName(name)},
                       {"count", r.count},
                       {"gpu_ns", r.gpu_ns},
                       {"grid", r.first ? json{k.grid[0], k.grid[1], k.grid[2]} : json(nullptr)},
                       {"block", r.first ? json{k.block[0], k.block[1], k.block[2]} : json(nullptr)},
                       {"grids", dims(r.grids)},
                       {"blocks", dims(r.blocks)},
                       {"ranges", r.ranges},
                       {"decoded", decodedJson(decodeKernelName(name))}});
  }
  run["kernels"] = std::move(kernels);
  return run;
}

}  // namespace

json htmlReportData(const std::vector<LoadedLog>& logs) {
  json runs = json::array();
  const std::vector<std::string> labels = fileLabels(logs);
  for (size_t i = 0; i < logs.size(); ++i) runs.push_back(runJson(logs[i], labels[i]));
  json out = {{"generator", std::string("kcount ") + KCOUNT_VERSION}, {"runs", std::move(runs)}};
  if (logs.size() == 2) {
    // The answer of `kcount diff A B` (its default text): the verdicts of the most repeated ranges and of the
    // whole run, chosen as the diff chooses them.
    const std::vector<LoadedLog> a(logs.begin(), logs.begin() + 1), b(logs.begin() + 1, logs.end());
    out["diff"] = {{"verdicts", answerVerdictsJson(a, b)}};
  }
  return out;
}

void writeHtmlReport(std::ostream& out, const std::vector<LoadedLog>& logs) {
  const size_t at = kPage.find(kDataPlaceholder);
  if (at == std::string_view::npos) throw std::logic_error("report page has no data placeholder");
  std::string data = htmlReportData(logs).dump(-1, ' ', false, json::error_handler_t::replace);
  std::string escaped;
  escaped.reserve(data.size() + data.size() / 8);
  for (char c : data) {
    if (c == '<') escaped += "\\u003c";
    else escaped += c;
  }
  out << kPage.substr(0, at) << escaped << kPage.substr(at + kDataPlaceholder.size());
}

}  // namespace kc
