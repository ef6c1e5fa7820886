// The logs given to a reading command (summary, kernels, diff, check, export, report): the files of each
// run read as one log (which files form one run: collector/run_files.h; copies read once, rotated parts
// joined), kept or left out by their damage, and the warnings each command prints about them on stderr.
// Used from the main thread.
#pragma once

#include <string>
#include <vector>

#include "collector/analysis.h"
#include "tools/loaded_log.h"

namespace kc {

/// Which per-window totals (Segment records) a streamed log needs: none (diff), those the summary table
/// shows (kcount::windowsShown), or all (JSON lists every window).
enum class Windows { kNone, kShown, kAll };

/// Every log read into memory (records kept), or with `streaming` summarized in one pass (no records kept:
/// enough for summary tables and JSON; memory independent of the number of records). The files of one
/// rotated log, in any order, are one log. Per-window totals take one more streaming pass over a log with
/// capture windows, only when `windows` asks for them.
/// `paths` without repeats (findDuplicates): a file given a second time (same device and inode,
/// whatever its name: "r.kcount" and "./r.kcount", or a hard link) or a copy of a recording given before
/// (same host, pid, start_ns and rotated part, same size): each repeat is named on stderr and read once,
/// so its numbers are not counted twice. Copies of different sizes (one cut, damaged or copied while
/// recording) are named and both kept, so the damage of either is still reported. Paths that cannot be
/// stat'ed are kept (the reader names the error). A path that is no log file (notALogFile()) gives a log
/// marked not_a_log with that reason as its error.
/// `join` picks where replayed CUDA graph kernels are credited (summary's --graph-view).
std::vector<LoadedLog> loadAll(const std::vector<std::string>& given, const JoinOptions& join, bool streaming = false,
                               Windows windows = Windows::kNone);

/// Why `path` cannot be read as a log, in words, or "" for a regular file this process may read, which
/// the reader reads (an empty one is "not a kcount log: empty file (0 bytes)"). `cannot_read` tells the
/// two kinds apart: true for a path that is missing or may not be read ("cannot read it: " + strerror:
/// "No such file or directory", "Permission denied"), false for one that is no log file whoever reads it
/// ("a folder, not a log file"; "not a regular file (...)" for /dev/null and other devices, FIFOs,
/// sockets: a FIFO's open would block; "a /proc or /sys file (...)", whose size reads as 0 whatever it
/// holds). Never opens the file (the reader opens it, once): read permission is asked of the system with this process's effective ids (faccessat AT_EACCESS).
std::string notALogFile(const std::string& path, bool* cannot_read = nullptr);

/// "kcount: LOG: warning: no totals: summary mode: ..." on stderr (noTotalsWarning, its losses included)
/// when `l` is a summary-mode log without a complete snapshot, so without numbers; the one place that line
/// is written. Returns whether it was written.
bool warnNoTotals(const LoadedLog& l);

/// One warning line on stderr per log that is not complete and clean (lossy, incomplete, damaged and
/// salvaged, or a rotated part read alone): the summary footer's state line (logStateWarning), for
/// the commands that print no footer (kernels, export, report, diff), after the reader's warnings
/// (printIntactIssues), as the footer lists them under its state line: a log cut by a kill gets both its
/// "no end record" warning and "log INCOMPLETE". A log with data after its end record was named by
/// selectLogs. With `no_totals`, a summary-mode log without a complete snapshot is named as holding no
/// totals (noTotalsWarning, its losses included) instead. `states`: each log's logState() when the
/// caller holds them (computed here otherwise).
void warnStates(const std::vector<LoadedLog>& logs, bool no_totals = false,
                const std::vector<std::string>* states = nullptr);

/// Why --segment N finds nothing in `log`: "no segment N (the log has K capture windows)", and for a log
/// without any window (recorded from start to exit, KCOUNT_START=on) that the whole log is the recording.
std::string noSegmentText(const LogData& log, long long n);

/// diff and report compare or chart numbers: a summary-mode log that holds no totals (no complete snapshot,
/// noTotalsWarning) would be read as zeros (a made-up drop to 0), so it is refused: one error line per
/// such log on stderr, naming why it has none. Returns 2 when a log was refused, else 0.
int refuseLogsWithoutTotals(const std::vector<LoadedLog>& logs, const char* command);

/// The reader's issues of `l`, one line each on stderr: "kcount: PATH: error: MESSAGE" (or "warning:"); each
/// message names its own place in the file (ReadIssue::message).
void printIssues(const LoadedLog& l);

/// The reader's issues of the logs that selectLogs() kept intact, on stderr (printIssues()): the damaged ones'
/// were printed there, and so was the warning of bytes after the End record (isAfterEndIssue()). For the
/// outputs that carry no issues of their own (kernels, diff, export, report, summary --format csv; the
/// summary table's footer and its JSON's "issues" list them).
void printIntactIssues(const std::vector<LoadedLog>& logs);

/// Logs summary/kernels may report, and their exit status (docs/reader-guarantees.md). A log that is
/// not intact (an error, or a cut tail) makes the status 2 and is left out, unless `salvage`: then it is
/// reported from what was read intact, and only a log with nothing intact (no chunk read) gives 2.
/// Issues go to stderr; an intact log's warnings (no End record) are in the report itself. With
/// `issues_in_output` (the summary table, whose footer lists them), a salvaged log's issues are not also
/// printed on stderr.
int selectLogs(std::vector<LoadedLog>& logs, bool salvage, bool issues_in_output = false);

/// The files of one rotated log (part order) read as one log: loadLog()/streamLog() of their joined
/// LogData (joinRotatedParts). The path shown is the file names joined with " + ".
LoadedLog loadParts(const std::vector<std::string>& paths, const JoinOptions& join = {});
LoadedLog streamParts(const std::vector<std::string>& paths, const JoinOptions& join = {});

/// Warns when diff's two sides hold the same files (every difference is zero), when one side holds a file of
/// the other among files of its own (each difference is those files' numbers: a side sums its logs), or
/// when they share some files (their numbers cancel out); and, for logs that share no file, when they are
/// copies of one recording (same host, pid, start_ns and rotated part numbers: the diff compares a run with
/// itself) or parts of one rotated run (same host, pid and start_ns, other part numbers): a diff compares
/// two runs, so the result would only show how the parts differ.
/// `states_a[i]` is logState() of a[i], `states_b` of b's (the caller holds them).
void warnSameRun(const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b,
                 const std::vector<std::string>& states_a, const std::vector<std::string>& states_b);

}  // namespace kc
