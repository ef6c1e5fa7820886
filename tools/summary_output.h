// `kcount summary`'s outputs of one log: the text table with its footer, CSV and JSON (summaryJson(),
// writeSummaryJson()), and their options (SummaryOptions: view, sort, marks and notes of the table).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/analysis.h"
#include "tools/loaded_log.h"
#include "tools/summary_focus.h"

namespace kc {

enum class SummaryView { kTree, kInclusive, kInnermost };

/// A per-range number: what `summary --sort` orders rows by, and what the table across several logs
/// compares (--metric). GPU time, kernels, launches, CPU time (the range's wall time), CPU time inside
/// launch calls.
enum class AcrossMetric { kGpuNs, kKernels, kLaunches, kCpuNs, kLaunchApiNs };
/// Every AcrossMetric, in the order the --metric and --sort choices name them.
inline constexpr AcrossMetric kAcrossMetrics[] = {AcrossMetric::kGpuNs, AcrossMetric::kKernels,
                                                  AcrossMetric::kLaunches, AcrossMetric::kCpuNs,
                                                  AcrossMetric::kLaunchApiNs};

/// "gpu", "kernels", "launches", "cpu", "launch-cpu": the --metric and --sort words.
std::string_view acrossMetricName(AcrossMetric metric);
/// The AcrossMetric of a --metric or --sort word; std::nullopt for any other text (--sort's "run" among them).
std::optional<AcrossMetric> parseAcrossMetric(std::string_view word);

struct SummaryOptions {
  SummaryView view = SummaryView::kTree;
  /// Order of a summary table's (and CSV's) rows: std::nullopt (--sort run) is depth first as the ranges
  /// were first seen; a metric puts the larger number first among siblings (tree view) or among all rows
  /// (flat views), the number being the row's as the view shows it (inclusive, or innermost with --view
  /// innermost; CPU time is the range's wall time in every view). The "(no range)" row and the
  /// unknown-range row stay first.
  std::optional<AcrossMetric> sort;
  int top_kernels = 3;   // kernels listed per row in the table
  bool full_names = false;
  bool wide = false;     // verdict and top kernels as table columns (one long line per range)
  size_t width = 0;      // display columns the table fits by narrowing its range names (fitTable()); 0: no limit
  /// The footer lists the reader's issues under its state line; false where they were printed above the
  /// table (kcount check --salvage), which the state line then points at.
  bool list_issues = true;
  /// The ranges the table shows (summary_focus.h): by default, in a large tree, the ones that matter.
  /// CSV and JSON carry every range whatever it says.
  SummaryFocus focus;
};

inline constexpr std::string_view kTallyDroppedMark = "!";
/// Text tables mark a range with instances still open when the log closed (RangeStats::unclosed) with
/// kUnclosedMark, explained once under the table (kUnclosedNote).
inline constexpr std::string_view kUnclosedMark = "~";
inline constexpr std::string_view kUnclosedNote =
    "~: still open when the log closed (the process ended or was killed inside it): those instances' CPU time "
    "runs to the close";
/// "!: no numbers: the range's tally was dropped at KCOUNT_MAX_KEYS=K (...)", K from the snapshot used.
std::string tallyDroppedNote(const LoadedLog& l);
/// Text tables mark a placeholder row's name with kPlaceholderMark and explain it once, in kPlaceholderNote
/// under the table (a note in every such row made the table too wide for a terminal).
inline constexpr std::string_view kPlaceholderMark = "*";
inline constexpr std::string_view kPlaceholderNote =
    "*: placeholder row, no instance recorded (the range was open when recording began or stopped)";
/// Explains the rows "(lost range P)" once, under a text table: a range whose Scope record was lost to damage
/// (LogData::scopeLost()), shown to hold the ranges recorded inside it.
inline constexpr std::string_view kLostRangeNote =
    "(lost range N): a parent range whose definition was lost to damage, shown to hold the ranges recorded "
    "inside it: its numbers are theirs; its own instances and kernels ('-') are in the row (unknown range: "
    "definition lost to damage)";

/// One element of summary JSON's "logs" array (schema: docs/usage.md, `kcount summary --format json`).
nlohmann::json summaryJson(const LoadedLog& log);
/// {"logs":[...]}.
nlohmann::json summaryJson(const std::vector<LoadedLog>& logs);
/// Writes `kcount summary --format json`'s document for `logs` to `out`, followed by a newline: {"logs":
/// [summaryJson() of each log]}, with "across_logs": acrossLogsJson() for several logs; the same text as
/// dumpJson() of that document, written a range at a time (JsonWriter), so that memory does not grow with
/// the text (one range's element at a time) beyond the across-logs part. Write errors are left in
/// `out`'s state. Thread-safe for distinct outputs and logs not being changed.
void writeSummaryJson(std::ostream& out, const std::vector<LoadedLog>& logs);

void printSummaryTable(std::ostream& out, const LoadedLog& log, const SummaryOptions& opt);
/// One CSV row per range of `log`, then its (overall) row; the column header first if `header`. A
/// summary-mode log without a complete snapshot (noSnapshotNumbers()) has no numbers and gets no row.
void printSummaryCsv(std::ostream& out, const LoadedLog& log, bool header, const SummaryOptions& opt);

}  // namespace kc
