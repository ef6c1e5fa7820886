// What a log says of itself: its state (complete, lossy, incomplete, damaged, partial: logState() and its
// warning), the records lost or kept out while recording, summary-mode snapshots and totals, launch timing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "tools/loaded_log.h"

namespace kc {

/// Periodic snapshots a summary-mode log's library did not write, to keep room for the final snapshot
/// under KCOUNT_MAX_BYTES (metadata kMetaSnapshotsSkipped); 0 when none or not said.
uint64_t snapshotsSkipped(const LogData& d);
/// True for a summary-mode log (LogData::summary_mode) summarized from no complete snapshot
/// (Summary::snapshot < 0): its numbers are not known, and reports say so rather than show zeros.
bool noSnapshotNumbers(const LoadedLog& l);
/// What a summary-mode log without a complete snapshot holds: "no snapshot written yet, so no numbers (a
/// summary-mode log holds them only in its snapshots, written every 1 h from the start of recording and at
/// exit)" (a complete log: "no snapshot, ...; the log was closed without one"; a log whose only snapshots
/// were cut off: "no complete snapshot (N incomplete), ..."). No trailing newline.
std::string noSnapshotText(const LogData& d);
/// Whether a log says records were kept out of it: kAtCap at its size cap (metadata records_not_written
/// names KCOUNT_MAX_BYTES), kNotWritten otherwise (writes the file refused: disk full, unwritable), kNone
/// when its Stats record counts none, kUnknown without a Stats record.
enum class KeptOut { kNone, kAtCap, kNotWritten, kUnknown };
KeptOut keptOut(const LogData& d);
/// Why a closed summary-mode log lacks its final snapshot, the cause the log supports: damage ("the final
/// snapshot is not in the log's intact part (damaged bytes were skipped)"), the size cap ("... kept out at
/// its size cap (KCOUNT_MAX_BYTES)"), a write refused, or none said. A final snapshot partly in the file,
/// followed by the End record (LogData::snapshot_cut_at_end), is said as cut: "the final snapshot was cut
/// at the size cap (KCOUNT_MAX_BYTES) after R of its M rows". No trailing punctuation.
std::string finalSnapshotMissingText(const LogData& d);
/// The stderr warning for a summary-mode log without a complete snapshot (noSnapshotNumbers()): "no
/// totals: summary mode: " + noSnapshotText(), then "; LOSSY: ..." when records were dropped; "" for any
/// other log. For the outputs without a footer (CSV, JSON, kcount kernels, several logs).
std::string noTotalsWarning(const LoadedLog& l);

/// "format M.m is not one this kcount reads (1.x): read it with the kcount that wrote it, or a later one",
/// for a log whose header names another major version (LogData::unsupported_version).
std::string unsupportedVersionText(const LogData& d);

/// False for a log whose memory operations (memcpy, memset run on the GPU) were not recorded, so their
/// counts and times are not known rather than 0: one recorded with KCOUNT_GPU_TIME=0 (no activity records)
/// or a format 1.0 log (written before memory operation records). Outputs show them as not recorded.
bool memOpsRecorded(const LogData& d);

/// How a log without kernel GPU times (gpuTimeRecorded() false) says so: "not recorded (KCOUNT_GPU_TIME=0)",
/// or for a KCOUNT_GPU_TIME=graphs log "graph launches' GPU spans only (KCOUNT_GPU_TIME=graphs)". Pure.
std::string noKernelGpuTimeText(const LogData& d);

/// N of KCOUNT_LAUNCH_TIMING=N (metadata launch_timing_sample, summary mode): one launch call in N was
/// timed, at random, and counted N times, so every launch_api_ns of the log is an estimate. 1 when the
/// key is absent or not a number from 2 to 1024 (every call timed).
uint64_t launchTimingSample(const LogData& d);

/// The line every text output prints under a log whose launch CPU is an estimate
/// (launchTimingSample(d) > 1), without a newline; "" otherwise.
std::string launchTimingNote(const LogData& d);

/// Records lost while recording, from the log's Stats record and (summary mode) the snapshot used: each
/// non-zero counter with its name and the setting that bounds it. A lossy log can be complete and intact;
/// its numbers undercount.
struct LogLosses {
  struct Counter {
    std::string name;  // "host records", "activity records", ... (the JSON key: json_key)
    std::string json_key;
    uint64_t count = 0;
    std::string cause;  // what caps it, e.g. "KCOUNT_MAX_HOST_MB"; "" when none applies
  };
  std::vector<Counter> counters;  // non-zero counters only, in a fixed order
  uint64_t records = 0;           // sum of the record counters (bytes not written excluded)
  uint64_t bytes = 0;             // bytes not written (disk full, size cap)
  /// Summary mode: events not tallied in their row at KCOUNT_MAX_KEYS (the snapshot's dropped_tallies,
  /// counter "dropped_tallies"): still in the totals, so not in `records`. max_keys: the cap, 0 if not said.
  uint64_t untallied = 0;
  uint64_t max_keys = 0;
  bool any() const { return !counters.empty(); }
  /// True when something other than events not tallied in their row was lost: the totals undercount.
  bool totalsUndercount() const { return counters.size() > (untallied > 0 ? 1u : 0u); }
  /// "N records dropped while recording (host records: N (KCOUNT_MAX_HOST_MB), ...)", then "; M events not
  /// tallied in their row at KCOUNT_MAX_KEYS=K (still in the totals)" when there are any; "" if none.
  std::string text() const;
};
LogLosses logLosses(const LoadedLog& log);

/// Records kept out of a log (size cap KCOUNT_MAX_BYTES, or writes the file refused), by kind: from the
/// Stats record's not_written_* fields, or for 1.2 logs written before them, from the metadata text
/// `records_not_written`. known is false when the log carries neither (then only bytes are known).
struct NotWritten {
  uint64_t launches = 0;   // launch records, memcpy/memset calls included
  uint64_t mem_calls = 0;  // of launches: memcpy/memset calls (0 when read from the metadata text)
  uint64_t kernels = 0, ranges = 0, other = 0;
  bool known = false;
};
NotWritten notWritten(const LogData& log);

/// logState()'s words, furthest from a complete log first: logState() tests them in this order and says
/// the first that holds. "complete" is last.
inline constexpr std::string_view kLogStates[] = {"damaged",    "data after end",  "rotated part",    "incomplete",
                                                  "no totals",  "records missing", "complete, lossy", "complete"};

/// The one-line state of a log in reports (one of kLogStates): "complete", "complete, lossy", "records
/// missing" (a trace log whose file holds fewer records than its Stats count), "no totals" (a complete
/// summary-mode log without a complete snapshot although it recorded something: noTotalsText(); it wins
/// over lossy), "incomplete", "damaged",
/// "data after end" or "rotated part" (a non-last part, or a part above 0 read without its earlier parts);
/// a lossy log that is also incomplete or damaged says the stronger state.
std::string logState(const LoadedLog& log);

/// Whether every launch, kernel and range record a trace log's Stats record counts as written was read:
/// its End record read, no chunk skipped, and the file's records of each kind at least the Stats record's
/// (less those kept out at the size cap). True also for a damaged log whose damage took no record (junk
/// bytes between two chunks); false where the comparison does not apply (no Stats record, summary mode,
/// rotated parts, a chunk skipped). Thread-safe for distinct logs.
bool everyRecordRead(const LoadedLog& log);

/// Whether `log`'s numbers undercount its run, `state` being its logState() (passed in, as callers hold
/// it): records dropped while recording (other than events not tallied in their row, still in the
/// totals), or a state that leaves records out: not "complete", "complete, lossy" (its drops decide) or
/// "data after end" (the bytes after the End record are no part of the run), and not a "damaged" log of
/// which everyRecordRead().
bool numbersUndercount(const LoadedLog& log, std::string_view state);

/// The summary footer's state line of a log that is not complete and clean ("log complete but LOSSY: N
/// records dropped while recording (...); its numbers undercount", "log INCOMPLETE (no end record)",
/// "log DAMAGED: ...", "rotated part K; parts 0..K-1 not given; ..."), for the one warning line that
/// kernels, export, report and diff print per such log; "" for a complete log without drops. A damaged log's
/// line points at the reader's errors: `errors_at` says where they are ("above": the commands print them on
/// stderr before this warning; the HTML report says they went to kcount report's stderr).
std::string logStateWarning(const LoadedLog& log, std::string_view errors_at = "above");

/// Why a complete summary-mode log holds no totals (no complete snapshot) although it may have recorded
/// something: its Stats record counts launch, kernel or range records tallied (or a snapshot was begun),
/// so its final snapshot is missing; or it has no Stats record, so it cannot tell that from a run that
/// recorded nothing. "" for any other log, and for one whose Stats record counts nothing (nothing was
/// recorded, so no snapshot is due).
std::string noTotalsText(const LogData& log, const Summary& summary);

/// The state of a log that holds only part of a rotated run, "" for a whole run (or a log never rotated):
/// "rotated part K; parts 0..K-1 not given; ..." for a part above 0 read alone, "rotated run continues in
/// part N (not given): the numbers cover parts 0..N-1 only (...)" for parts without the one the last
/// continues in, "rotated run: part 1 not given: the numbers cover parts 0, 2 only (...)" for a gap.
std::string partialRunText(const LogData& d);

}  // namespace kc
