// Reports behind `kcount summary`, `kcount kernels` and `kcount check`: JSON, CSV and text tables built
// from a decoded log and its Summary. Pure functions of their inputs (no I/O but the given stream).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/analysis.h"
#include "collector/counted.h"
#include "collector/log_reader.h"
#include "tools/summary_focus.h"
#include "collector/run_files.h"
#include "collector/stream_summary.h"
#include "tools/json_writer.h"
#include "tools/text.h"

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
/// one added before (call again after l.summary is recomputed). Done by loadLog, streamLog, loadParts and streamParts.
/// No exception beyond std::bad_alloc.
void noteSaturatedSums(LoadedLog& l);

/// Starts of the warnings noteRepeatedIds() adds.
inline constexpr const char* kEarlierWindowIdsIssue = "inside the span of an earlier capture window";
inline constexpr const char* kRepeatedIdsIssue = "the correlation id of an earlier launch in the same capture window";
/// Adds to l.data.issues a warning (offset ReadIssue::kNoOffset, chunk -1) for launches whose correlation ids lie in
/// the span of an earlier capture window's (Summary::launches_in_earlier_window_ids: joined within their window) and
/// one for launches that repeat an id within a window (Summary::repeated_launch_ids: the first, its launch record
/// number, id and, from the streaming join, its chunk and byte offset), replacing those added before (call again after
/// l.summary is recomputed). Done where noteSaturatedSums() is. No exception beyond std::bad_alloc.
void noteRepeatedIds(LoadedLog& l);

/// Adds to l.data.issues one warning (offset ReadIssue::kNoOffset, chunk -1) per kind of implausible record that
/// `kcount check` names (its IMPLAUSIBLE verdict): kernel records ending at 2^64 - 1 ns, a kernel longer than a day and
/// than the log, direct launches joined by several kernels; replacing those added before (call again
/// after l.summary is recomputed). So summary (its footer, JSON "issues", CSV on stderr), kernels, diff,
/// export and report warn of them as of the reader's warnings; check prints them once, with its counts.
/// Done where noteSaturatedSums() is. No exception beyond std::bad_alloc.
void noteImplausible(LoadedLog& l);

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
/// The stderr warning of `kcount kernels` for a log that lists no kernel (no kernel tally by name, so an
/// empty table), with the reason the log gives: "no kernels: no kernel launch was recorded (the log holds 4
/// range records)", "nothing was recorded (...)", "its N launches are graph launches, whose kernels are not
/// known with KCOUNT_GPU_TIME=0 ...", "... were made during stream capture ...", "... their kernel activity
/// records were dropped while recording ...", "... the log has no end record ...", "N kernels counted in the
/// totals, none tallied by name ...", a summary-mode log's "no kernel launch was tallied ..."; with `range`
/// (the --range path, kernels already kept to it by keepKernelsOfRange()) "none ran in range P ...". "" for
/// a log with kernels to list, and for one without numbers (noTotalsWarning() says that). No trailing newline.
std::string noKernelsWarning(const LoadedLog& l, std::string_view range = {});
/// Whether the summary table's footer lists the capture windows: more than one, or one that did not open
/// at process start or did not last to the process's end (KCOUNT_CAPTURE_DURATION, `kcount ctl stop`, a
/// capture range's end). A log with one window from start to exit (or to SIGTERM/SIGINT/SIGHUP) shows none.
bool windowsShown(const LogData& d);

/// "format M.m is not one this kcount reads (1.x): read it with the kcount that wrote it, or a later one",
/// for a log whose header names another major version (LogData::unsupported_version).
std::string unsupportedVersionText(const LogData& d);

/// A path as the table and CSV show it (displayPath(): a '/' in a name "\/", bytes that are no UTF-8 "\xHH")
/// as JSON writes it (kernels' "ranges" keys, diff's paths): escaped the same but for those bytes, which are
/// U+FFFD as everywhere in JSON (replaceInvalidUtf8()), as summary JSON's "path" has them. Thread-safe.
std::string jsonPathKey(std::string_view shown);
/// Path of a scope for text tables and CSV: displayRangeName() of each range from the root down, joined by
/// '/' ("(empty name)" also for a scope without a name string; "step/mylib: gemm" for a range gemm of
/// domain mylib inside a range step of the default domain); "(no range)" for the root, as
/// LogData::scopePath() for ids out of range or a broken parent chain.
/// `domains` false: the names alone, without the domain prefixes of displayRangeName() (the path a user
/// may give to `kcount kernels --range` when no other domain holds a range of that path).
std::string displayPath(const LogData& log, uint32_t scope_id, bool domains = true);
/// Name of a range as text tables and CSV show it: displayName() of its name, and for a range pushed in a
/// named NVTX domain (nvtxDomainCreate, nvtxDomainRangePushEx) displayName() of the domain and ": " before
/// it ("mylib: gemm"), so that ranges of one name in two domains read apart, as Nsight Systems keeps
/// domains apart; a range of the default domain is its name alone. displayPath() joins these.
std::string displayRangeName(const LogData& log, uint32_t scope_id);
/// A range's name as recorded, with its NVTX domain and ": " first for a range of a named domain
/// ("mylib: gemm"): displayRangeName() unescaped, for JSON and the HTML page.
std::string rangeNameWithDomain(const LogData& log, uint32_t scope_id);
/// LogData::scopePath() with rangeNameWithDomain() for each range when one of the chain is in a named NVTX
/// domain ("step/mylib: gemm"), so that ranges of one path in two domains have different paths; the same
/// as scopePath() for ranges of the default domain only, the root and broken chains. Names are raw (a
/// '/' inside a name is not escaped): JSON keys (kernels' "ranges") and the HTML page's paths.
std::string scopePathWithDomains(const LogData& log, uint32_t scope_id);
/// The name of the NVTX domain a range was pushed in; nullopt for the default domain, the root and a scope
/// id that the log does not define. JSON's "domain" (null for nullopt).
std::optional<std::string> rangeDomain(const LogData& log, uint32_t scope_id);

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

/// Widest range or kernel name column of the text tables (summary, kernels, diff), in display columns
/// (displayWidth(): a wide CJK character takes two): a longer name is shortened in the middle with
/// elideMiddle(). JSON and CSV keep full names.
inline constexpr size_t kMaxNameColumn = 60;
/// `s` if it takes at most `max_width` display columns (`max_width` >= 5, less counts as 5), else its head
/// and tail joined by "…" so that the result takes exactly `max_width` columns, or one less where a wide
/// character would be split; never cuts inside a UTF-8 sequence nor between a character and its combining
/// marks.
std::string elideMiddle(std::string_view s, size_t max_width = kMaxNameColumn);
/// Each of `names` shortened with elideMiddle() to `max_width` display columns, except that names that
/// differ but would be shortened to the same text are shortened less: their width grows to one at
/// which the kept head or tail reaches a character where they differ, with the rest of the word (letters
/// and digits, at most 24 more) that character starts or ends, so "…uniform_and_transform" and
/// "…normal_and_transform" read apart, not "…m_and_transform" and "…l_and_transform" (the smallest for two such names;
/// in a larger group, the longest start and the longest end any other name shares with it, found among
/// its neighbours in sorted order: at worst the full names), so rows of a text table stay
/// distinguishable; the other names are then shortened to the
/// widest such width, not to `max_width` (the column is that wide anyway; a wider head and tail keep
/// different names different). Equal names give equal results. Same order and
/// size as `names`. Time: per pass, a sort of each group of clashing names (a chain of 256 nested ranges,
/// whose 256 paths all clash: 2.7 s for `kcount summary`, was 32 s with a comparison of every pair).
std::vector<std::string> elideDistinct(const std::vector<std::string>& names, size_t max_width = kMaxNameColumn);

/// Tells different kernels apart in text: `shown[i]` is the text of the recorded kernel name `names[i]`;
/// every group of different names shown alike (short names that differ past kMaxShortName characters, or
/// only in what the short form drops: nested template arguments) is shown instead by its demangled names
/// (escaped, displayText()), shortened in the middle together to `max_width` display columns (elideDistinct()),
/// so the part where they differ shows. Equal names keep equal texts; other texts are left as they are.
void tellKernelsApart(std::vector<std::string>& shown, const std::vector<std::string>& names,
                      size_t max_width = kMaxNameColumn);

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

/// Scope ids shown by the summary, in depth-first order: the root, then every scope with an instance,
/// a launch or a kernel (inclusive), and every parent of those (so the tree has no gap).
std::vector<uint32_t> shownScopes(const LogData& log, const Summary& s);
/// True for a shown range with no instance, launch or kernel of its own or below it in the tree: a parent
/// shown only to hold its children (no instance of it was recorded: it was open before recording began
/// or when it stopped, e.g. around a capture window). Text tables mark its name (kPlaceholderMark).
bool isPlaceholder(const Summary& s, uint32_t scope_id);
/// True for a range of a summary-mode log whose tally was dropped at KCOUNT_MAX_KEYS (Summary::tally_dropped):
/// shown, without numbers, only to hold its children; not a placeholder. Text tables mark its name with
/// kTallyDroppedMark, explained once under the table (tallyDroppedNote()).
bool tallyDropped(const Summary& s, uint32_t scope_id);
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
/// Depth of each scope in the (repaired) range tree; the root is 0, a top-level range 1.
std::vector<uint32_t> scopeDepths(const Summary& s);
/// Each scope's parent by Summary::children, indexed by scope id (one per range of s.inclusive):
/// kRootScope for the root and for a scope no children list names.
std::vector<uint32_t> scopeParents(const Summary& s);

/// The three layers of one range (CPU in the range, CPU inside launch calls, GPU in kernels), for one view
/// (inclusive or innermost numbers).
struct RangeLayers {
  uint64_t gemm_gpu_ns = 0;   // GPU time of kernels the decoder classifies as GEMM (tools/kernel_decode.h)
  uint64_t other_gpu_ns = 0;  // gpu_ns - gemm_gpu_ns
  double kernels_per_launch = 0;  // kernels / launches; meaningful only if launches > 0
  std::string verdict;        // layerVerdict(); "" when the range has no instance (the "(no range)" row)
};

/// What a verdict weighs for one range: sums over its instances (docs/usage.md, "Verdict").
struct VerdictInputs {
  uint64_t instances = 0;
  uint64_t cpu_ns = 0;         // c: wall time in the range (RangeStats::cpu_ns)
  uint64_t launch_api_ns = 0;  // l: time inside kernel and graph launch calls (memcpy/memset calls are not in it)
  uint64_t launches = 0;       // kernel and graph launch calls (RangeStats::launches)
  uint64_t kernels = 0;        // kernels run on the GPU
  uint64_t kernel_gpu_ns = 0;  // their GPU time
  uint64_t memcpy_count = 0, memset_count = 0;  // memory operations run on the GPU
  uint64_t mem_gpu_ns = 0;     // their GPU time (memcpy_ns + memset_ns)
  uint64_t launch_timing_sample = 1;  // N of KCOUNT_LAUNCH_TIMING (launchTimingSample())
  /// Summary built with --graph-view capture (Summary::graph_view == GraphView::kCapturePath): the
  /// kernels of a graph launch are credited to the range each was captured in, not to the launch's.
  bool capture_view = false;
  uint64_t graph_launches = 0;     // of `launches`, cudaGraphLaunch/cuGraphLaunch calls
  uint64_t captured_launches = 0;  // of `launches`, issued during stream capture (recorded, not run)
};

/// VerdictInputs of `r` (inclusive or exclusive stats of one range) whose range has `instances`
/// instances and `cpu_ns` wall time, in a log whose launch CPU is sampled 1 in `launch_timing_sample`.
VerdictInputs verdictInputs(const RangeStats& r, uint64_t instances, uint64_t cpu_ns, uint64_t launch_timing_sample,
                            GraphView graph_view);

/// Which layer dominates a range. Rule (docs/usage.md, "Verdict"), with c = CPU wall time in the range,
/// l = CPU time inside its kernel and graph launch calls, g = GPU time of the kernels and memory
/// operations (memcpy, memset) it issued (all summed over the range's instances; the text shows them per
/// instance). "GPU work" is followed by what it holds, "(kernels and memory copies)", when memory
/// operations are part of it and take 1% of g or more, or the range ran no kernel:
///   no launch, no kernel, no memory operation -> "no GPU work: C in the range"
///   g >= c                            -> "GPU-bound: G of GPU work in C of range time"
///   c > g, l >= g and l >= c / 2      -> "launch-bound: L of launch calls for G of GPU work"; when the
///                                        mean launch call is 100 µs or more, "(M per launch call: first-call
///                                        setup ..., not the launch rate)" follows "launch calls"
///   c > g, otherwise                  -> "CPU-bound: C in the range for G of GPU work (L in launch calls)",
///                                        "(no kernel launch calls)" for a range without launches
/// memcpy/memset API calls are not launch calls: their CPU time is in c, not in l.
/// Under --graph-view capture (v.capture_view), a range with graph launches or captured launches gets no
/// bound verdict (its CPU time and the GPU time credited to it come from different calls): "graph launches:
/// their kernels are credited to the ranges they were captured in (--graph-view capture, no bound
/// verdict): L of launch calls in C of range time", or for a range that captured kernels "captured
/// kernels: their replays' GPU work is credited here (--graph-view capture, no bound verdict): G of GPU
/// work, C in the range, L in launch calls".
/// Returns "" if instances == 0 (no CPU time is known). Per-instance durations are rounded to the nearest ns (formatMeanDuration()).
/// `launch_timing_sample` N > 1 (KCOUNT_LAUNCH_TIMING, launchTimingSample()): l is an estimate (one call in
/// N timed, counted N times). It is capped at c (a range's launch calls lie inside it), the verdicts that
/// show it say "estimated from 1 in N calls", and with fewer than kMinTimedLaunchesForVerdict x N launches
/// (too few timed calls to split launch CPU off) no launch-bound verdict is given: "CPU-bound: C in the
/// range for G of GPU work (launch CPU not estimated: M launches, 1 in N timed)". Pure; thread-safe.
std::string layerVerdict(const VerdictInputs& v);

/// Expected timed launch calls (launches / N) below which a sampled launch CPU is not used for a verdict.
inline constexpr uint64_t kMinTimedLaunchesForVerdict = 8;

/// Layers of `r` (inclusive or exclusive stats of one range) whose range has `instances` instances and
/// `cpu_ns` wall time, in a summary joined with `graph_view` (Summary::graph_view). GEMM classification
/// decodes each kernel name of r.by_kernel; the verdict is layerVerdict(verdictInputs(...)), none for a
/// log without GPU times (KCOUNT_GPU_TIME=0).
RangeLayers rangeLayers(const LogData& log, const RangeStats& r, uint64_t instances, uint64_t cpu_ns,
                        GraphView graph_view = GraphView::kLaunch);

/// Text that starts the verdict of a range shown with its own numbers (`--view innermost`) whose child
/// ranges issued work: its verdict is then that of its inclusive numbers (its wall time covers its
/// children's), after this prefix.
inline constexpr std::string_view kWithChildRanges = "with its child ranges: ";
/// Verdict of a range row shown with its own (exclusive) numbers `ex` (`--view innermost`, JSON
/// "layers.innermost"): rangeLayers(ex).verdict when no child range issued work (the launches, kernels
/// and memory operations of `in`, its inclusive numbers, are its own); else kWithChildRanges followed by
/// rangeLayers(in).verdict, since its wall time `cpu_ns` covers its children's work. "" where
/// rangeLayers() gives no verdict.
std::string innermostVerdict(const LogData& log, const RangeStats& ex, const RangeStats& in, uint64_t instances,
                             uint64_t cpu_ns, GraphView graph_view = GraphView::kLaunch);

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

/// Keeps in `log`'s summary only the kernels of range `path` and of the ranges nested in it, for
/// `kcount kernels --range PATH`: the per-kernel tallies (RangeStats::by_kernel) of every other range and
/// the unmatched kernels are cleared, so the kernels commands count, time and average a kernel over that
/// range alone (not over warm-up or other ranges). `path` is a range's path as the summary table and CSV
/// show it ("step/mlp"; a '/' inside a name is written "\/"). Returns how many ranges matched (0: no such
/// range in the log). Changes `log` in place; not thread-safe on it.
size_t keepKernelsOfRange(LoadedLog& log, std::string_view path);

/// The ranges of `log` that `path` names, as paths that keepKernelsOfRange() takes (the summary table's,
/// sorted, without repeats): `path` itself if a range has that path as the table shows it (with its NVTX
/// domains, "step/mylib: gemm"), else the paths of the ranges whose path without domains is `path` ("step/gemm"
/// for step/mylib: gemm). More than one: the ranges of that path are in different domains and `path` does
/// not say which; none: no range has that path. Pure; thread-safe on a log not being changed.
std::vector<std::string> rangePathsNamed(const LoadedLog& log, std::string_view path);

/// Range paths of `log` (as the summary table shows them) that end with "/" + `path`: what a user who gave
/// a range's own name ("gate") instead of its path ("step/gate") meant. Sorted, at most `most` of them.
/// Pure; thread-safe on a log not being changed.
std::vector<std::string> rangePathsEndingWith(const LoadedLog& log, std::string_view path, size_t most);

/// Order of `kcount kernels` rows (--sort). kGpuTotal: GPU total time, largest first (where GPU time goes;
/// the default). kCount: launches, most first. kGpuAvg: GPU time per launch, largest first. kName: the
/// short kernel name (shortKernelNameUncut()), A to Z by byte. Ties: for kCount the recorded name (the
/// order of kcount before --sort); otherwise GPU total, then count (descending), then the recorded name.
/// Logs without GPU times (KCOUNT_GPU_TIME=0) have 0 there, so kGpuTotal and kGpuAvg become count order.
enum class KernelSort { kGpuTotal, kCount, kGpuAvg, kName };

/// "gpu", "count", "avg", "name": the --sort words.
std::string_view kernelSortName(KernelSort sort);
/// The KernelSort of a --sort word; std::nullopt for any other text.
std::optional<KernelSort> parseKernelSort(std::string_view word);

/// Kernels merged by name over all logs: {"gpu_time", "sort": kernelSortName(sort),
/// "kernels":[{"name","short","count","gpu_ns","grid","block","ranges":{path:n}}]}, in `sort`'s order. Kernels
/// with no matching launch count under "(unmatched)". "grid" and "block": [x, y, z] of the name's first kernel
/// record (the table's), null where not recorded. Times in ns.
nlohmann::json kernelsJson(const std::vector<LoadedLog>& logs, KernelSort sort = KernelSort::kGpuTotal);
/// Writes `kcount kernels --format json`'s document, kernelsJson(logs, sort), to `out`, followed by a
/// newline: the text dumpJson() writes for it, written a kernel at a time (JsonWriter), so that memory
/// does not grow with the text. Write errors are left in `out`'s state. Thread-safe for distinct outputs
/// and logs not being changed.
void writeKernelsJson(std::ostream& out, const std::vector<LoadedLog>& logs, KernelSort sort = KernelSort::kGpuTotal);
/// The `kcount kernels` table and CSV: one row per kernel (per kernel and log with several logs; a
/// kernel's rows follow the merged order), in `sort`'s order. The table's kernel names and ranges list
/// are narrowed so that its lines fit `max_width` display columns when they can (fitTable(); 0: no
/// limit; not with `full_names`).
void printKernelsTable(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names,
                       KernelSort sort = KernelSort::kGpuTotal, size_t max_width = 0);
void printKernelsCsv(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names,
                     KernelSort sort = KernelSort::kGpuTotal);

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

/// The states of `kcount check`'s verdict line, in the order the line names them when several apply: the
/// first leads the line, each other follows as "; also STATE ...". docs/usage.md lists them in this order
/// (tests/unit/test_analysis.cpp compares). DAMAGED stands alone; OK is said when none applies.
inline constexpr std::string_view kCheckStates[] = {
    "RECORDS MISSING", "EXTRA RECORDS",  "REORDERED",  "IMPLAUSIBLE", "PARTIAL",
    "NOT ONE LOG",     "TRAILING BYTES", "INCOMPLETE", "NO TOTALS",   "COMPLETE BUT LOSSY"};

/// Prints the check report of one log. Returns 0 clean, 1 incomplete (no End record, bytes after the End
/// record), lossy (records dropped while recording: a DROPS line names the counters), partial (a
/// rotated part whose run is not whole among the files given: PARTIAL) or without totals (NO TOTALS:
/// noTotalsText()), 2 damaged (an error, or a
/// truncated tail), unreadable, or not a kcount log (then only what byte 0 holds is printed).
/// A rotated part K > 0 is PARTIAL unless `given.earlier`; a part closed for rotation (continued in part
/// N) is PARTIAL unless `given.next`; with both, it is OK as a part of a whole run.
int printCheck(std::ostream& out, const LoadedLog& log, PartsGiven given = {});

/// The state of a log that holds only part of a rotated run, "" for a whole run (or a log never rotated):
/// "rotated part K; parts 0..K-1 not given; ..." for a part above 0 read alone, "rotated run continues in
/// part N (not given): the numbers cover parts 0..N-1 only (...)" for parts without the one the last
/// continues in, "rotated run: part 1 not given: the numbers cover parts 0, 2 only (...)" for a gap.
std::string partialRunText(const LogData& d);

}  // namespace kc
