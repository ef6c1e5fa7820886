// `kcount summary`: the per-range table of launches, kernels and time (docs/usage.md), its CSV and
// JSON, the table across several logs, and --series of summary-mode logs' snapshots.
#include <CLI/CLI.hpp>

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collector/counted.h"
#include "collector/shown_value.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tools/given_logs.h"
#include "tools/loaded_log.h"
#include "tools/log_state.h"
#include "tools/multi_log.h"
#include "tools/range_tree.h"
#include "tools/series.h"
#include "tools/summary_output.h"

namespace kc {
namespace {

/// Most kernels `summary --top` lists per range (a range has at most this many names worth reading).
constexpr int kMaxTop = 10000;

/// The options of `kcount summary` as parsed, and its run.
struct SummaryCommand {
  CLI::App* summary = nullptr;
  std::vector<std::string> paths;
  std::string format = "table";
  std::string view = "tree";
  int top = 3;
  bool full_names = false;
  bool salvage = false;
  bool wide = false;
  std::string metric = "gpu";
  bool sum = false;  // --sum: the across-logs table's total column
  std::string sort = "run";
  std::string graph_view = "launch";
  JoinOptions join;  // set by --graph-view
  long long segment = -1;
  bool series = false;
  long long width = -1;  // --width; -1: not given (the terminal's width, tableWidth())
  SummaryFocus focus;    // --all, --depth, --range

  void declare(CLI::App& app) {
    summary = app.add_subcommand("summary", "per-range table of launches, kernels and time");
    summary->add_option("logs", paths, "log files")->required();
    summary->add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
    summary->add_option("--view", view, "tree (inclusive, indented), inclusive (flat paths) or innermost (launches, kernels and GPU time "
                    "exclusive: made while the range was innermost; CPU time stays the range's wall time, its "
                    "children's included)")
        ->check(CLI::IsMember({"tree", "inclusive", "innermost"}));
    summary->add_option("--top", top, "kernels listed per range (0: none)")->check(kc::wholeNumber(0, kMaxTop));
    summary->add_flag("--full-names", full_names,
                      "show full demangled kernel names, and range names and paths unshortened");
    summary->add_flag("--wide", wide, "verdict and top kernels as columns of the table (one long line per range)");
    // --metric and --sort choose among the same numbers (parseAcrossMetric() reads both); --sort also has "run".
    std::vector<std::string> metric_words;
    for (kc::AcrossMetric m : kc::kAcrossMetrics) metric_words.emplace_back(kc::acrossMetricName(m));
    std::vector<std::string> sort_words{"run"};
    sort_words.insert(sort_words.end(), metric_words.begin(), metric_words.end());
    summary->add_option("--metric", metric, "with several logs: the number compared across logs")
        ->check(CLI::IsMember(metric_words));
    summary->add_flag("--sum", sum,
                      "with several logs: a total column in the across-logs table (the logs' numbers added up)");
    summary->add_option("--sort", sort,
                        "row order of the table and CSV: run (depth first, as the ranges were first seen) or the "
                        "larger first by gpu, kernels, launches, cpu or launch-cpu (among siblings in the tree view, "
                        "among all rows in the flat views)")
        ->check(CLI::IsMember(sort_words));
    summary->add_option("--graph-view", graph_view,
                        "where CUDA graph kernels are credited: launch (range around the graph launch) or capture "
                        "(range open when the kernel was captured)")
        ->check(CLI::IsMember({"launch", "capture"}))
        ->each([this](const std::string& v) {
          join.graph_view = v == "capture" ? kc::GraphView::kCapturePath : kc::GraphView::kLaunch;
        });
    summary->add_flag("--salvage", salvage, "summarize the intact part of a damaged log (exit 0 if any)");
    summary->add_option("--segment", segment, "only capture window N (its Segment record's index; format 1.2)")
        ->check(kc::wholeNumber(0, UINT32_MAX));
    summary->add_flag("--series", series,
                      "summary-mode logs: per range, the change between consecutive snapshots (--format table, csv or json)");
    addWidthOption(summary, width);
    summary->add_flag("--all", focus.all,
                      "every range in the table (default: in a tree of more than 40 ranges, the most repeated range "
                      "and its children, the 10 ranges of most GPU time and the 10 of most launches of their own, "
                      "with their parents; a line under the table says how many are hidden)");
    summary->add_option("--depth", focus.depth, "the ranges at most N levels deep (1: the top level)")
        ->check(kc::wholeNumber(0, UINT32_MAX));
    summary->add_option("--range", focus.range,
                        "that range (its path as the verdict lines show it, e.g. step/attn), its subtree and parents");
  }

  /// 2 with an error on stderr when --range names no range of a log; else 0.
  int checkFocus(const std::vector<LoadedLog>& logs) const {
    if (focus.range.empty()) return 0;
    for (const auto& l : logs) {
      try {
        kc::focusScopes(l.data, l.summary, kc::shownScopes(l.data, l.summary), focus);
      } catch (const std::invalid_argument& e) {
        std::cerr << "kcount: summary: " << kc::shownPath(l.path) << ": " << e.what() << '\n';
        return 2;
      }
    }
    return 0;
  }

  /// Keeps of each log the capture window --segment names (its records summarized again); 2 with an
  /// error on stderr for a summary-mode log or a log without that window.
  int selectSegments(std::vector<LoadedLog>& logs) {
    for (auto& l : logs) {
      if (l.data.summary_mode) {
        // Snapshots are cumulative tallies of the whole run: nothing in them is per capture window.
        std::cerr << "kcount: " << kc::shownPath(l.path)
                  << ": --segment: a summary-mode log (KCOUNT_MODE=summary) has no records to select by "
                     "capture window, only snapshots cumulative over all its windows ("
                  << kc::counted(l.data.segments.size(), "capture window")
                  << ", listed under kcount summary's table without per-window numbers); kcount summary "
                     "--series shows the change between snapshots; per-window numbers need "
                     "KCOUNT_MODE=trace\n";
        return 2;
      }
      const kc::SegmentBody* found = nullptr;
      for (const auto& sg : l.data.segments)
        if (sg.index == static_cast<uint64_t>(segment)) found = &sg;
      if (found == nullptr) {
        std::cerr << "kcount: " << kc::shownPath(l.path) << ": " << noSegmentText(l.data, segment) << "\n";
        return 2;
      }
      l.data = kc::selectSegment(l.data, static_cast<size_t>(found - l.data.segments.data()));
      l.summary = kc::summarize(l.data, join);
      kc::noteSummaryIssues(l);
      l.segments.reset();  // the selected window's totals, from its records
    }
    return 0;
  }

  /// --series: per range, the change between consecutive snapshots of summary-mode logs.
  int printSeriesOf(const std::vector<LoadedLog>& logs, const SummaryOptions& opt, int rc) {
    // A trace-mode log has no snapshots, so no series: refused, one error line each, and nothing on
    // stdout (not a series of the other logs alone, nor a JSON entry without intervals, that a script
    // would take for the whole answer).
    bool any_trace = false;
    for (const auto& l : logs)
      if (!l.data.summary_mode) {
        any_trace = true;
        std::cerr << "kcount: " << kc::shownPath(l.path)
                  << ": error: --series needs a summary-mode log (KCOUNT_MODE=summary): this is a trace-mode "
                     "log, which has no snapshots (kcount summary without --series reads it)\n";
      }
    if (any_trace) return 2;
    // The series is the same for every view and layout: the table's options have no effect on it.
    for (const char* o : {"--metric", "--sum", "--view", "--top", "--wide", "--sort"})
      if (summary->get_option(o)->count() > 0)
        std::cerr << "kcount: " << o << " shapes the summary table: no effect with --series (per range, the "
                     "change of its inclusive numbers between snapshots)\n";
    // A log cut by a kill, lossy, damaged or a rotated part alone: one line each (the series stops at
    // its last complete snapshot). Its reader issues were not printed. A summary-mode log without a
    // complete snapshot has no series: named as holding no totals, unless its table says so itself.
    warnStates(logs, /*no_totals=*/format != "table");
    if (format == "json") {
      kc::writeSeriesJson(std::cout, logs);
    } else {
      // The table format: its other long lines wrapped at the width too (printFitted()).
      printFitted(format == "table" ? opt.width : 0, [&](std::ostream& out) {
        bool first = true;
        for (const auto& l : logs) {
          if (format == "csv") {
            kc::printSeriesCsv(out, l, first);
          } else {
            if (!first) out << '\n';
            kc::printSeries(out, l, opt.width);
          }
          first = false;
        }
      });
    }
    return rc;
  }

  int execute() {
    kc::SummaryOptions opt;
    opt.view = view == "inclusive" ? kc::SummaryView::kInclusive
               : view == "innermost" ? kc::SummaryView::kInnermost
                                     : kc::SummaryView::kTree;
    opt.top_kernels = top;
    opt.full_names = full_names;
    opt.wide = wide;
    opt.width = tableWidth(width);
    noteWidthUnused(summary, format);
    opt.sort = kc::parseAcrossMetric(sort);  // "run": none, the run order
    // One streaming pass per log, unless the records are needed (--segment selects records by window).
    auto logs = loadAll(paths, join, /*streaming=*/segment < 0, format == "json" ? Windows::kAll : Windows::kShown);
    const int rc = selectLogs(logs, salvage, /*issues_in_output=*/format == "table" && !series);
    if (logs.empty()) return rc;
    // Part of a rotated run: said on stderr too (the footer says it; a JSON or CSV reader, or the
    // total across logs, would not show it).
    // (--series names every log that is not complete, this state with the rest: warnStates below.)
    if (!series)
      for (const auto& l : logs)
        if (kc::logState(l) == "rotated part")
          std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: " << kc::logStateWarning(l) << '\n';
    if (segment >= 0)
      if (const int seg_rc = selectSegments(logs); seg_rc != 0) return seg_rc;
    for (const auto& l : logs)
      if (l.data.summary_mode && join.graph_view == kc::GraphView::kCapturePath)
        std::cerr << "kcount: " << kc::shownPath(l.path)
                  << ": summary-mode log: kernels are credited to the range around the launch (--graph-view "
                     "capture needs a trace-mode log)\n";
    if (series) return printSeriesOf(logs, opt, rc);
    opt.focus = focus;
    if (format != "table") {
      for (const char* o : {"--all", "--depth", "--range"})
        if (summary->get_option(o)->count() > 0)
          std::cerr << "kcount: " << o << " chooses the rows of the table format: no effect with --format " << format
                    << " (every range)\n";
    } else if (const int focus_rc = checkFocus(logs); focus_rc != 0) {
      return focus_rc;
    }
    // A summary-mode log without a complete snapshot has no numbers (null in JSON, no row in CSV, "no
    // totals" across logs): named on stderr, as a log that is not whole is, unless its table's footer
    // (one log, table format) says so. The exit status stays that of the log's state (0 if not damaged).
    // CSV and JSON have no footer: a log that is not complete and clean (lossy, cut by a kill, damaged and
    // salvaged) is named on stderr with the footer's state line, so a script reading them is told that
    // the numbers undercount (JSON also carries "state").
    // CSV carries no issues (the JSON lists them in "issues"): the reader's warnings go to stderr, as
    // kernels --format csv prints them; the state line stays (a log cut by a kill: both its reader warning
    // and "log INCOMPLETE").
    if (format == "csv") printIntactIssues(logs);
    if (format != "table")
      warnStates(logs, /*no_totals=*/true);
    else if (logs.size() > 1)
      for (const auto& l : logs) warnNoTotals(l);
    if (summary->get_option("--metric")->count() > 0 && (format != "table" || logs.size() < 2))
      std::cerr << "kcount: --metric chooses the number of the across-logs table, printed for several logs "
                   "in the table format: no effect here\n";
    if (sum && (format != "table" || logs.size() < 2))
      std::cerr << "kcount: --sum adds a total column to the across-logs table, printed for several logs in the "
                   "table format: no effect here"
                << (format == "json" && logs.size() > 1 ? " (the JSON's across_logs has \"total\" per range)" : "")
                << "\n";
    // --wide shapes the table only; --top the table and the CSV's top-kernels column (JSON lists them all).
    if (format != "table" && summary->get_option("--wide")->count() > 0)
      std::cerr << "kcount: --wide lays out the table format's verdict and top-kernel lines: no effect with "
                   "--format "
                << format << "\n";
    // --view chooses the table's layout and numbers; the CSV has exclusive and inclusive columns (the view
    // only chooses the order --sort gives its rows), the JSON both numbers of every range.
    if (summary->get_option("--view")->count() > 0 &&
        (format == "json" || (format == "csv" && summary->get_option("--sort")->count() == 0)))
      std::cerr << "kcount: --view lays out the table format (tree, inclusive or innermost numbers): no effect "
                   "with --format "
                << format
                << (format == "csv" ? " (its rows carry excl_ and incl_ columns; with --sort, the view chooses "
                                      "the order)\n"
                                    : " (every range carries its exclusive and inclusive numbers)\n");
    if (format == "json" && summary->get_option("--sort")->count() > 0)
      std::cerr << "kcount: --sort orders the rows of the table and CSV: no effect with --format json (its "
                   "ranges are depth first)\n";
    if (format == "json" && summary->get_option("--top")->count() > 0)
      std::cerr << "kcount: --top limits the kernels of the table and CSV: no effect with --format json (its "
                   "ranges list every kernel)\n";
    if (format == "json") {
      kc::writeSummaryJson(std::cout, logs);
    } else {
      // The table format: its other long lines wrapped at the width too (printFitted()); --full-names keeps
      // every line whole.
      printFitted(format == "table" && !full_names ? opt.width : 0, [&](std::ostream& out) {
        bool first = true;
        for (const auto& l : logs) {
          if (format == "csv") {
            kc::printSummaryCsv(out, l, first, opt);
          } else {
            if (!first) out << '\n';
            kc::printSummaryTable(out, l, opt);
          }
          first = false;
        }
        if (format == "table" && logs.size() > 1) {
          out << '\n';
          kc::printAcrossLogs(out, logs, kc::parseAcrossMetric(metric).value_or(kc::AcrossMetric::kGpuNs),
                              full_names ? 0 : opt.width, sum);
        }
      });
    }
    return rc;
  }
};

}  // namespace

Command summarySubcommand(CLI::App& app) {
  auto c = std::make_shared<SummaryCommand>();
  c->declare(app);
  return {c->summary, {&c->paths}, nullptr, nullptr, [c] { return c->execute(); }};
}

}  // namespace kc
