// `kcount summary --series`: what changed between consecutive snapshots of a summary-mode log
// (KCOUNT_MODE=summary), per range: a time series of the range tree's inclusive numbers.
#pragma once

#include <iosfwd>
#include <vector>

#include <nlohmann/json.hpp>
#include "tools/loaded_log.h"


namespace kc {

/// One interval between two snapshots (or from the start of recording to the first snapshot).
struct SeriesInterval {
  uint32_t sequence = 0;   // sequence of the snapshot that ends the interval
  uint64_t begin_ns = 0;   // host clock: the previous snapshot's time (start_ns metadata for the first)
  uint64_t end_ns = 0;     // host clock: this snapshot's time
  bool final_snapshot = false;
  /// (scope id, change of its inclusive RangeStats over the interval) for every range whose instances,
  /// launches, kernels, GPU, CPU or launch-call time changed, in range-tree order; by_kernel is empty.
  std::vector<std::pair<uint32_t, RangeStats>> ranges;
};

/// Intervals of a summary-mode log's complete snapshots, in order; empty for a trace log. Cumulative
/// counts only grow, so each change is the later snapshot's number minus the earlier one's (a number that
/// went down, which a damaged log could show, gives 0). Memory: two Summaries at a time plus the result.
std::vector<SeriesInterval> snapshotSeries(const LoadedLog& log);

/// {"logs": [{"path", "mode", "intervals": [{"sequence", "begin_ns", "end_ns", "final", "ranges": [{"path",
/// "instances", "cpu_ns", "launches", "graph_launches", "kernels", "gpu_ns", "launch_api_ns"}]}]}]}. Times
/// are host-clock ns (CLOCK_MONOTONIC); "offset_ns" is end_ns minus the log's start_ns.
nlohmann::json seriesJson(const std::vector<LoadedLog>& logs);
/// Writes `kcount summary --series --format json`'s document, seriesJson(logs), to `out`, followed by a
/// newline: the text dumpJson() writes for it, written a range's change at a time (JsonWriter) from one
/// log's snapshotSeries() at a time. Write errors are left in `out`'s state. Thread-safe for distinct
/// outputs and logs not being changed.
void writeSeriesJson(std::ostream& out, const std::vector<LoadedLog>& logs);

/// One table per log: interval end (seconds since start), range (displayPath()), and the changes. A
/// trace log gets only its "== PATH" heading (it has no snapshots; the caller notes that on stderr). The
/// range column is narrowed so that the lines fit `max_width` display columns when it can (fitTable(); 0:
/// no limit).
void printSeries(std::ostream& out, const LoadedLog& log, size_t max_width = 0);
/// The same rows as CSV: log,sequence,final,begin_ns,end_ns,offset_ns,path,instances,cpu_ns,launches,
/// graph_launches,kernels,gpu_ns,launch_api_ns (final 0/1; times ns; path as displayPath()). `header`:
/// write the header line first. A trace log gives no row.
void printSeriesCsv(std::ostream& out, const LoadedLog& log, bool header);

}  // namespace kc
