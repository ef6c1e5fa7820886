// Several logs at once (ranks of one job, or runs): per range path, each log's numbers side by side, their
// total (in the table only with --sum), and the spread across logs (min/median/max). Behind `kcount summary`
// with more than one log.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "tools/json_writer.h"
#include "tools/loaded_log.h"
#include "tools/summary_output.h"


namespace kc {

/// Labels of logs by file: each log's file name without ".kcount"; logs whose file names are equal get as
/// many of their folders as tell them apart ("run1/kcount"); a label still shared (equal paths) gets
/// " (pid P)", then " #N" (argument order). One label per log, in order.
std::vector<std::string> fileLabels(const std::vector<LoadedLog>& logs);

/// Column and row labels of several logs: "rank R" when every log has a rank in its metadata (not
/// "norank"), a label two logs share getting " [i]" (1-based argument position); otherwise fileLabels().
std::vector<std::string> labelsOf(const std::vector<LoadedLog>& logs);

/// min, median (mean of the two middle values for an even count) and max of `v`; zeros if v is empty.
/// Values are counts or ns sums; one held at 2^64 - 1 (kSaturated) stays so in min and max, exactly.
struct Spread {
  uint64_t min = 0, max = 0;
  uint64_t median_low = 0, median_high = 0;  // the two middle values (equal for an odd count)
  double median = 0;                         // (median_low + median_high) / 2
  /// False when the count is even and one middle value is held at 2^64 - 1 while the other is not: the
  /// mean of the two is not known (JSON null, "unknown" in the table).
  bool medianKnown() const { return median_low == median_high || median_high != kSaturated; }
};
Spread spreadOf(std::vector<uint64_t> v);

/// {"logs": [labels (labelsOf())], "gpu_time": [bool per log], "launch_timing_sample": [N per log],
///  "totals_known": [bool per log], "kcount_cost": (selfCostJson() of the logs that state it, added up, with
///  "logs": how many; null if none does), "ranges": [{"path", "domain" (null: the default NVTX domain), "in_logs", "per_log": {metric: [value|null]},
///  "total": {metric: N}, "spread": {metric: {"min", "median", "max"}}}]}; metrics: launches, kernels,
/// gpu_ns, cpu_ns, launch_api_ns. Spread is over the logs that have the range. A summary-mode log without
/// a complete snapshot (noSnapshotNumbers()) has no numbers: totals_known false, null in every per_log
/// list, and not counted in in_logs, total or spread.
nlohmann::json acrossLogsJson(const std::vector<LoadedLog>& logs);
/// Writes acrossLogsJson(logs) through `w` as its next value (the same text), a range's element at a
/// time. Thread-safe for distinct writers and logs not being changed.
void writeAcrossLogsJson(JsonWriter& w, const std::vector<LoadedLog>& logs);

/// Table of one metric (inclusive; "(no range)" exclusive, as in the summary): range, one column per log side
/// by side, min, median, max, and "in k/N logs". The logs are not added up unless `sum` (--sum): then a total
/// column follows the logs' columns; without it a line under the table says how to get it. A log without
/// numbers (noSnapshotNumbers()) reads "no totals" in each row, is left out of total, spread and in logs,
/// and is named in a note under the table. The range column is narrowed so that the lines fit `max_width`
/// display columns when it can (fitTable(); 0: no limit).
void printAcrossLogs(std::ostream& out, const std::vector<LoadedLog>& logs, AcrossMetric metric, size_t max_width = 0,
                     bool sum = false);

}  // namespace kc
