// A log read from a file with its Summary (LoadedLog): loadLog() and streamLog(), the warnings they add to
// its issues (the note* functions), and its per capture window totals.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"

namespace kc {

/// A log read from a file, with its analysis. From loadLog() `data` holds every record; from streamLog()
/// only metadata, strings, scopes, stats, record counts and issues (what summary tables, JSON and the
/// check report use).
struct LoadedLog {
  std::string path;  // the file, or "A + B + C" for the parts of a rotated log read as one
  LogData data;
  Summary summary;
  /// Per capture window totals when computed while streaming (streamLog with segment totals); unset:
  /// segmentTotals(data) is computed from the records kept in `data` where they are shown.
  std::optional<std::vector<SegmentTotals>> segments;
  std::vector<std::string> files;  // the parts of a rotated log in part order (loadParts/streamParts); else empty
  /// The messages of the warnings noteImplausible() added to data.issues, so that they are told from the
  /// reader's exactly (isImplausibleIssue()): check prints them itself, and noteImplausible() replaces them.
  std::vector<std::string> implausible_issues;
  /// Set by keepKernelsOfRange() (`kcount kernels --range`): the summary's per-kernel tallies are that
  /// range's, while its kernel shapes (first grid and block, distinct ones) are still the whole log's.
  bool kernels_of_one_range = false;
};

/// For `d`, read from `path` alone, a file of a rotated run without End record and not closed for
/// rotation: if the run's next part lies beside it (NAME.K+1.kcount, the same run by runIdentity()), the
/// run went on after this file ended, and markCutShortPart() says so (an error when the file is cut
/// inside a chunk, or when the first 2 MiB of the next or the previous part show a continued_in_file key).
/// Reads the first 2 MiB of those files. Called by loadLog() and streamLog().
void noteLaterPartOnDisk(const std::string& path, LogData& d);

/// Start of the warning noteSaturatedSums() adds ("sums held at 2^64 - 1").
inline constexpr const char* kSaturatedIssue = "sums held at 2^64 - 1";
/// Adds to l.data.issues one warning (offset ReadIssue::kNoOffset, chunk -1) if saturatedSums(l.summary) > 0, replacing
/// one added before (call again after l.summary is recomputed). Done by noteSummaryIssues().
/// No exception beyond std::bad_alloc.
void noteSaturatedSums(LoadedLog& l);

/// Starts of the warnings noteRepeatedIds() adds.
inline constexpr const char* kEarlierWindowIdsIssue = "inside the span of an earlier capture window";
inline constexpr const char* kRepeatedIdsIssue = "the correlation id of an earlier launch in the same capture window";
/// Adds to l.data.issues a warning (offset ReadIssue::kNoOffset, chunk -1) for launches whose correlation ids lie in
/// the span of an earlier capture window's (Summary::launches_in_earlier_window_ids: joined within their window) and
/// one for launches that repeat an id within a window (Summary::repeated_launch_ids: the first, its launch record
/// number, id and, from the streaming join, its chunk and byte offset), replacing those added before (call again after
/// l.summary is recomputed). No exception beyond std::bad_alloc.
void noteRepeatedIds(LoadedLog& l);

/// Adds to l.data.issues one warning (offset ReadIssue::kNoOffset, chunk -1) per kind of implausible record that
/// `kcount check` names (its IMPLAUSIBLE verdict): kernel records ending at 2^64 - 1 ns, a kernel longer than a day and
/// than the log, direct launches joined by several kernels; replacing those added before (call again
/// after l.summary is recomputed). So summary (its footer, JSON "issues", CSV on stderr), kernels, diff,
/// export and report warn of them as of the reader's warnings; check prints them once, with its counts.
/// No exception beyond std::bad_alloc.
void noteImplausible(LoadedLog& l);

/// noteSaturatedSums(), noteRepeatedIds() and noteImplausible(): what every reading of a log does after
/// l.summary is computed (or recomputed). No exception beyond std::bad_alloc.
void noteSummaryIssues(LoadedLog& l);

/// Reads and joins a log, every record kept in memory (export, diff, kernels, report). `join` picks where
/// replayed CUDA graph kernels are credited.
LoadedLog loadLog(const std::string& path, const JoinOptions& join = {});
/// The same Summary in one streaming pass (summarizeLogFile): memory independent of the log's length.
/// For `kcount summary` and `kcount check`.
/// With `segment_totals`, LoadedLog::segments is filled too (a second pass over a log with capture windows).
LoadedLog streamLog(const std::string& path, const JoinOptions& join = {}, bool segment_totals = false);
/// Fills l.segments for a streamed log (segmentTotalsOfFile: one more pass over a log with windows).
void addWindowTotals(LoadedLog& l, const JoinOptions& join = {});
/// Per capture window totals of a loaded log: LoadedLog::segments, else segmentTotals(l.data). A
/// summary-mode log has no records to count by window: emptySegmentTotals(l.data) (windows, reasons, every
/// count 0, which reports show as not known).
std::vector<SegmentTotals> windowTotals(const LoadedLog& l);

/// Whether the summary table's footer lists the capture windows: more than one, or one that did not open
/// at process start or did not last to the process's end (KCOUNT_CAPTURE_DURATION, `kcount ctl stop`, a
/// capture range's end). A log with one window from start to exit (or to SIGTERM/SIGINT/SIGHUP) shows none.
bool windowsShown(const LogData& d);

}  // namespace kc
