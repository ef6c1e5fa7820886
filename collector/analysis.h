// Correlation join and per-range aggregation over a decoded log: the numbers behind `kcount summary`
// and `kcount kernels`. GPU-free, no CUDA headers.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collector/launch_join.h"
#include "collector/log_reader.h"
#include "collector/saturating.h"

namespace kc {

/// Per kernel name within one range: how many ran and for how long.
struct KernelTally {
  uint64_t count = 0;
  uint64_t gpu_ns = 0;
  uint64_t min_ns = 0;  // shortest kernel (end - start); 0 when count is 0
  uint64_t max_ns = 0;  // longest kernel
};

/// Numbers for one node of the range tree. "Exclusive" counts only launches made while this range was
/// the innermost open range of the launching thread; "inclusive" adds all descendants.
struct RangeStats {
  uint32_t scope_id = 0;
  uint64_t instances = 0;      // range instances closed (or unclosed at exit) with this path
  uint64_t unclosed = 0;       // of instances: still open when the log closed (kRangeUnclosed); each one's
                               // end is the close time (trace logs; 0 from summary-mode snapshots)
  uint64_t cpu_ns = 0;         // sum over instances of (end - begin), host clock
  uint64_t launches = 0;       // launch API calls (once per correlation id)
  uint64_t graph_launches = 0; // of which cudaGraphLaunch/cuGraphLaunch
  uint64_t launch_api_ns = 0;  // sum of (exit - enter) of those launch calls
  uint64_t kernels = 0;        // GPU kernel records joined to those launches
  uint64_t gpu_ns = 0;         // sum of kernel (end - start)
  uint64_t captured_launches = 0;  // of `launches`, issued during stream capture (recorded, not run)
  uint64_t memcpy_count = 0, memcpy_bytes = 0, memcpy_ns = 0;  // GPU memory copies (format 1.1)
  uint64_t memset_count = 0, memset_bytes = 0, memset_ns = 0;  // GPU memsets (format 1.1)
  // Graph launches with a whole-graph GPU span (MemOpKind::kGraph, KCOUNT_GPU_TIME=graphs; format 1.3) and
  // the sum of those spans (first node's start to last node's end, gaps between nodes included).
  uint64_t graph_gpu_launches = 0, graph_gpu_ns = 0;
  std::map<uint32_t, KernelTally> by_kernel;  // kernel name id -> tally
};

/// Where kernels replayed from a CUDA graph are credited.
enum class GraphView {
  kLaunch,       // the range open around cudaGraphLaunch (default)
  kCapturePath,  // the range that was open when the kernel was captured into the graph
};

struct JoinOptions {
  GraphView graph_view = GraphView::kLaunch;
};

/// Distinct launch dimensions (grids, or blocks) of the records of one kernel name, counted up to
/// kMaxDistinctDims: a record costs a scan of at most that many entries, and none once the set is full
/// (then size() == kMaxDistinctDims means "that many or more"). No allocation.
struct DistinctDims {
  static constexpr uint8_t kMaxDistinctDims = 16;
  using Dims = std::array<int32_t, 3>;
  std::array<Dims, kMaxDistinctDims> dims{};
  uint8_t n = 0;

  size_t size() const { return n; }
  /// True when counting stopped: size() distinct dimensions or more.
  bool full() const { return n == kMaxDistinctDims; }
  void add(const Dims& d) {
    if (full() || std::find(dims.begin(), dims.begin() + n, d) != dims.begin() + n) return;
    dims[n++] = d;
  }
  /// The union of both sets, counted up to kMaxDistinctDims (full when either is: `o`'s entries are
  /// distinct, so a full `o` fills this set).
  void merge(const DistinctDims& o) {
    for (size_t i = 0; i < o.n && !full(); ++i) add(o.dims[i]);
  }
};

/// Launch shape of a kernel record: grid and block dimensions (CUpti_ActivityKernel10 gridX..blockZ).
/// In Summary::kernel_shapes: those of the name's first record, and the distinct grids and blocks of all
/// its records (DistinctDims: counted up to 16).
struct KernelShape {
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  DistinctDims grids, blocks;
};

/// Result of joining kernels to launches by correlation id.
struct Summary {
  std::vector<RangeStats> exclusive;  // indexed by scope id (same size as LogData::scopes)
  std::vector<RangeStats> inclusive;  // indexed by scope id; inclusive[0] is the whole process
  uint64_t launches = 0;
  uint64_t kernels = 0;
  uint64_t unmatched_kernels = 0;       // kernel records whose correlation id matches no launch
  uint64_t launches_without_kernel = 0; // launches no kernel record matched (captured launches excluded)
  uint64_t captured_launches = 0;       // launches issued during stream capture
  uint64_t mem_ops = 0;                 // memcpy/memset operations executed on the GPU
  uint64_t unmatched_mem_ops = 0;       // memory operations whose correlation id matches no API call
  uint64_t kernel_gpu_ns = 0;           // GPU ns of all kernel records, unmatched ones included
  uint64_t kernels_end_before_start = 0;  // kernel records whose end_ns < start_ns: counted with 0 GPU ns
  uint64_t ranges_end_before_begin = 0;   // range records whose end_ns < begin_ns: counted with 0 CPU ns
  uint64_t launches_exit_before_enter = 0;  // launch records whose exit_ns < enter_ns: counted with 0 API ns
  /// Implausible records (kcount check's IMPLAUSIBLE). Kernel records whose end_ns is 2^64 - 1 (all ones:
  /// no time the clock gives, a damaged or crafted record); their span saturates the GPU totals.
  uint64_t kernels_end_all_ones = 0;
  /// The longest kernel record whose end is not all ones (end - start ns; 0 without any) and its
  /// correlation id, and the span of the log's other times (times_first_ns..times_last_ns: launch enter and
  /// exit, range begin and end, kernel start, Segment start and stop; both 0 without any). A kernel cannot
  /// run longer than the process it ran in recorded for, so a longest kernel above times_last_ns -
  /// times_first_ns has implausible times (kernelLongerThanLog()).
  uint64_t longest_kernel_ns = 0, longest_kernel_id = 0;
  uint64_t times_first_ns = 0, times_last_ns = 0;
  /// Launches that run one kernel (not launchRunsSeveralKernels(), nor memcpy/memset calls) with more than
  /// one kernel record joined to them: a direct launch runs one kernel, so the others share its correlation id by damage or crafting.
  /// extra_kernels counts the kernels past the first; most_kernels_one_launch is the largest count on one
  /// such launch, most_kernels_id its correlation id. The streaming join counts a further kernel only while
  /// the launch is in its ring (collector/stream_summary.h).
  uint64_t launches_many_kernels = 0, extra_kernels = 0, most_kernels_one_launch = 0, most_kernels_id = 0;
  std::map<uint32_t, KernelTally> unmatched_by_kernel;  // kernel name id -> unmatched kernels of that name
  /// Kernel name id -> shape of the first kernel record of that name, in file order (trace logs; a
  /// summary-mode log keeps no shapes).
  std::unordered_map<uint32_t, KernelShape> kernel_shapes;
  int64_t snapshot = -1;                // summary-mode log: index in LogData::snapshots of the snapshot used
  /// Summary-mode log: scope id -> 1 for a range whose tally was dropped at KCOUNT_MAX_KEYS (a snapshot row
  /// flagged kSnapshotScopeTallyDropped; its numbers are in no row); empty when no row is flagged.
  std::vector<uint8_t> tally_dropped;
  /// Records whose scope id no Scope record defined (its chunk was lost to damage): their range is
  /// unknown. They are credited to the root as well (exclusive[0] includes them, so totals hold); reports
  /// show them apart with noRangeStats() for the root. scope_id is 0; by_kernel min/max are not kept.
  RangeStats unresolved;
  /// Streaming join only (summarizeLogFile): launches that left the join window before any kernel or
  /// memory operation matched them, and kernels/operations that waited for their launch longer than the
  /// window. 0 means the streaming result equals summarize() on the whole log; see collector/stream_summary.h.
  uint64_t join_window_evicted = 0;
  /// Capture windows: kernels and memory operations join only a launch of their own window
  /// (LogData::segment_marks). Launch records (memcpy/memset calls included) whose correlation id lies in
  /// the span of an earlier window (the first to last correlation id of its Segment record): ids numbered
  /// anew after a stop (CUPTI restarts them after cuptiFinalize; libkcount before it renumbered wrote them so). 0
  /// for a log of one window, or of windows whose ids follow one another.
  uint64_t launches_in_earlier_window_ids = 0;
  /// Launch records that repeat the correlation id of an earlier launch record of the same window (the
  /// library writes each id once: a crafted or damaged log). The first launch keeps the id; a repeat is
  /// joined to nothing (a kernel launch among them counts as without kernel). The streaming join sees a
  /// repeat only while the first launch is still in its join table (see collector/stream_summary.h).
  uint64_t repeated_launch_ids = 0;
  /// The first of those repeats: its launch record number (0-based, file order, memcpy/memset calls
  /// included), its correlation id, and where it lies when the join knew it (the streaming join: the
  /// byte offset of the chunk that holds it and the chunk's index; summarize(): ReadIssue::kNoOffset, -1).
  uint64_t first_repeated_launch = 0, first_repeated_id = 0, first_repeated_offset = ReadIssue::kNoOffset;
  int64_t first_repeated_chunk = -1;
  /// Where replayed CUDA graph kernels were credited (JoinOptions::graph_view of the join that built this
  /// summary; kLaunch for a summary-mode snapshot). Under kCapturePath a range's graph launches and the
  /// replayed kernels they ran are in different ranges, which the verdicts say (tools/verdict.h).
  GraphView graph_view = GraphView::kLaunch;
  std::vector<uint32_t> children_order; // scope ids in depth-first order of first appearance (root first)
  std::vector<std::vector<uint32_t>> children;  // children[scope] = child scope ids, in id order
};

/// The records of capture window `window` (an index into log.segments, format 1.2): the launches, kernels
/// and memory operations RecordWindows puts in that window (where they lie in the file, as the join takes
/// them; correlation-id spans for a LogData without LogData::segment_marks), ranges that end in [start_ns,
/// stop_ns] of its Segment record, and every definition (strings, scopes, metadata, graph nodes, stats).
/// The result holds that one Segment record, with a mark after its records. A `window` past the last
/// Segment record gives the definitions only.
LogData selectSegment(const LogData& log, size_t window);

/// The records of a time window [from_ns, to_ns] (the log's CLOCK_MONOTONIC ns, both included): ranges,
/// launches, kernels and memory operations whose [begin, end] overlaps the window, plus the launch (API
/// call) of every kernel or memory operation selected and the kernels and memory operations of every
/// launch selected (so each launch-to-kernel pair is whole; a pair is a correlation id within one capture
/// window, RecordWindows), every definition (strings, scopes, metadata, graph nodes, stats) and every
/// Segment record, with LogData::segment_marks placing the records kept in their windows when `log` has
/// them. Records keep their file order. O(records); `log` needs its records (readLog with keep_records).
LogData selectTimeWindow(const LogData& log, uint64_t from_ns, uint64_t to_ns);

/// Earliest and latest timestamp of any launch, kernel, range or memory operation of `log`, in ns;
/// {0, 0} when it has none.
std::pair<uint64_t, uint64_t> recordTimeSpan(const LogData& log);

/// Per-window totals of a log, in file order (one per Segment record).
struct SegmentTotals {
  SegmentBody segment{};
  std::string reason, end_reason;
  uint64_t launches = 0, kernels = 0, unmatched_kernels = 0, gpu_ns = 0, ranges = 0, mem_ops = 0;
};
/// Launches (memcpy/memset calls apart), kernels, their GPU ns and memory operations go to the window
/// RecordWindows gives them (records of the open window, after the last Segment record, to none); a
/// kernel is unmatched when no kernel launch of its window carries its correlation id; ranges go by end
/// time (SegmentIndex). Needs the records in memory (readLog with ReadOptions::keep_records); memory grows
/// with the launches. The streaming equivalent is summarizeLogFile(..., segment_totals = true),
/// collector/stream_summary.h.
std::vector<SegmentTotals> segmentTotals(const LogData& log);

/// SegmentTotals of every Segment record of `log`, in file order, with the segment, reason and
/// end_reason filled and every count 0 (for tallies made elsewhere, as the streaming join does).
std::vector<SegmentTotals> emptySegmentTotals(const LogData& log);

/// Which capture window a record belongs to by its correlation id or end time: launches, kernels and
/// memory operations by correlation id (the window whose [first, last] correlation-id span holds it; a
/// window without a recorded launch holds none), ranges by end time (the window with the latest start_ns
/// <= the range's end_ns, if its stop_ns is >= end_ns). segmentTotals() and the streaming per-window
/// totals place ranges so; launches, kernels and memory operations go by position (RecordWindows), since
/// logs written before ed6b48a reuse ids across windows. Overlapping spans (only in a corrupt log or such a
/// log) give one of them. Memory: two index vectors, one entry per segment. Immutable after construction:
/// thread-safe reads.
class SegmentIndex {
 public:
  static constexpr size_t kNone = SIZE_MAX;
  /// `segments` must outlive the index (it is not copied).
  explicit SegmentIndex(std::span<const SegmentBody> segments);
  /// Index into `segments` of the window holding correlation id c, or kNone. O(log segments).
  size_t byCorrelation(uint64_t c) const;
  /// Index into `segments` of the window holding a range that ended at end_ns (host ns), or kNone.
  size_t byRangeEnd(uint64_t end_ns) const;
  bool empty() const { return segs_.empty(); }

 private:
  std::span<const SegmentBody> segs_;
  std::vector<size_t> by_corr_, by_time_;  // segment indexes sorted by first correlation id / start_ns
};

/// The capture window of each launch, kernel and memory-operation record of `log`, as the join takes it
/// (summarize(), the streaming join): by where the record lies in the file, window i holding the records
/// after the chunk of Segment record i - 1 up to the end of the chunk of Segment record i
/// (LogData::segment_marks). A window is an index into log.segments; log.segments.size() is the window still
/// open when the log ended (records after the last Segment record; the only window of a log without
/// Segment record). A LogData with Segment records but without usable marks (built by other means than
/// reading) falls back to correlation-id spans (SegmentIndex), kNone for a record in none. O(log windows)
/// per lookup; memory: one mark per window. Immutable after construction; `log` must outlive it.
class RecordWindows {
 public:
  static constexpr size_t kNone = SIZE_MAX;
  explicit RecordWindows(const LogData& log);
  /// Window of log.launches[i] (of log.kernels[i], log.mem_ops[i]); `i` must be a valid index.
  size_t ofLaunch(size_t i) const;
  size_t ofKernel(size_t i) const;
  size_t ofMemOp(size_t i) const;
  /// The number `--segment N` takes for window w: its Segment record's index (SegmentBody::index); for
  /// the open window, the index its Segment record would have had (the last one's + 1, 0 without any).
  /// kNone for kNone.
  uint64_t number(size_t w) const;
  /// Whether windows come from the records' positions (false: correlation-id spans).
  bool byPosition() const { return !spans_.has_value(); }

 private:
  size_t byMark(size_t i, uint64_t LogData::RecordMark::*kind) const;
  const LogData& log_;
  std::vector<LogData::RecordMark> ends_;  // where each window's records end (byPosition())
  std::optional<SegmentIndex> spans_;      // the fallback
};

/// The launch record each kernel and memory operation of `log` joins, as summarize() joins it: the first
/// launch record of its own capture window (RecordWindows) that carries its correlation id. For the tools
/// that list records one by one (export, the HTML report). Memory: one hash entry per launch record.
/// Immutable after construction; `log` must outlive it.
class LaunchJoin {
 public:
  explicit LaunchJoin(const LogData& log);
  /// Index into log.launches of the launch of log.kernels[j] (of log.mem_ops[j]), or nullopt: none in
  /// its window. `j` must be a valid index.
  std::optional<size_t> ofKernel(size_t j) const;
  std::optional<size_t> ofMemOp(size_t j) const;
  const RecordWindows& windows() const { return windows_; }

 private:
  struct KeyHash {
    size_t operator()(const std::pair<size_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9E3779B97F4A7C15ull ^ k.first);
    }
  };
  std::optional<size_t> find(size_t window, uint64_t correlation_id) const;
  const LogData& log_;
  RecordWindows windows_;
  std::unordered_map<std::pair<size_t, uint64_t>, size_t, KeyHash> by_id_;  // (window, correlation id)
};

/// Correlation-id spans of the capture windows closed so far (their Segment records), merged: tells whether
/// a launch of the current window carries an id inside an earlier window's span
/// (Summary::launches_in_earlier_window_ids). Used by summarize() and the streaming join. Memory: one span
/// per group of overlapping windows. Not thread-safe.
class WindowIdSpans {
 public:
  /// True if correlation id c lies in the span of a closed window. O(1) when c is above every closed
  /// span (ids that go on growing), else O(log spans).
  bool inEarlier(uint64_t c) const {
    if (c > max_ || spans_.empty()) return false;
    auto it = std::upper_bound(spans_.begin(), spans_.end(), c,
                               [](uint64_t v, const std::pair<uint64_t, uint64_t>& sp) { return v < sp.first; });
    return it != spans_.begin() && c <= std::prev(it)->second;
  }
  /// How many of the launch records `v` lie in the span of a closed window. Nothing is read before a
  /// window closed.
  uint64_t countInEarlier(std::span<const LaunchBody> v) const {
    if (spans_.empty()) return 0;
    uint64_t n = 0;
    for (const LaunchBody& l : v) n += inEarlier(l.correlation_id) ? 1 : 0;
    return n;
  }
  /// A window closed: the span its Segment record gives, [first_correlation_id, last_correlation_id] (the
  /// smallest and largest id of its launches, as the library counted them), joins the closed ones; a window
  /// without launch (first_correlation_id 0) adds none.
  void closeWindow(const SegmentBody& seg);

 private:
  std::vector<std::pair<uint64_t, uint64_t>> spans_;  // [first, last], sorted, disjoint
  uint64_t max_ = 0;                                  // largest id of spans_
};

/// The root's exclusive numbers without the records of unknown range (Summary::unresolved): what ran
/// outside every range. by_kernel entries whose count drops to 0 are removed; min/max are those of the root.
RangeStats noRangeStats(const Summary& s);
/// True if some record's range is unknown (Summary::unresolved holds anything).
bool hasUnresolved(const Summary& s);

/// `r` += the counts of `row` (saturating): launches, kernels, GPU time, launch-call time and memory
/// operations; not instances or CPU time (an inclusive sum over a subtree adds counts, not instances).
/// `Row` has RangeStats' field names: RangeStats, a snapshot row (SnapshotScopeBody) or the streaming
/// join's per-scope accumulator.
template <typename Row>
void addCountFields(RangeStats& r, const Row& row) {
  satAdd(r.launches, row.launches);
  satAdd(r.graph_launches, row.graph_launches);
  satAdd(r.captured_launches, row.captured_launches);
  satAdd(r.launch_api_ns, row.launch_api_ns);
  satAdd(r.kernels, row.kernels);
  satAdd(r.gpu_ns, row.gpu_ns);
  satAdd(r.memcpy_count, row.memcpy_count);
  satAdd(r.memcpy_bytes, row.memcpy_bytes);
  satAdd(r.memcpy_ns, row.memcpy_ns);
  satAdd(r.memset_count, row.memset_count);
  satAdd(r.memset_bytes, row.memset_bytes);
  satAdd(r.memset_ns, row.memset_ns);
  satAdd(r.graph_gpu_launches, row.graph_gpu_launches);
  satAdd(r.graph_gpu_ns, row.graph_gpu_ns);
}

/// `r` += one range's tallies `row` (saturating): instances and CPU time, then addCountFields().
template <typename Row>
void addScopeRow(RangeStats& r, const Row& row) {
  satAdd(r.instances, row.instances);
  satAdd(r.cpu_ns, row.cpu_ns);
  if constexpr (requires { row.unclosed; }) satAdd(r.unclosed, row.unclosed);
  addCountFields(r, row);
}

/// How many sums of `s` reached 2^64 - 1 and are held there (kSaturated, collector/saturating.h): the
/// joins add with satAdd(), so a total of ns, bytes or counts past 2^64 - 1 (only implausible records give
/// one: a kernel of 2^63 ns) shows as 18446744073709551615 instead of wrapping to a small number. Counts
/// the fields of every exclusive and inclusive row, the unresolved row, the per-kernel tallies and the
/// totals. O(scopes + tallies). Readers turn a count > 0 into a warning (tools: noteSaturatedSums).
uint64_t saturatedSums(const Summary& s);

/// Joins and aggregates. Unmatched kernels are counted, never credited to a range. O(launches + kernels).
/// A kernel or memory operation joins the launch record of its own capture window that carries its
/// correlation id (LogData::segment_marks; one window without them), the first one if several do.
/// A summary-mode log (LogData::summary_mode) has no launch or kernel records: its Summary is that of its
/// last complete snapshot (summarizeSnapshot), the same numbers a trace log of the run gives; `options`
/// is not used there (kernels are credited to the range around the launch, GraphView::kLaunch). A
/// summary-mode log with no complete snapshot gives an empty Summary (snapshot == -1).
Summary summarize(const LogData& log, const JoinOptions& options = {});
/// (Trace-mode logs: needs the records in memory, readLog with ReadOptions::keep_records; the streaming
/// equivalent for files of any size is summarizeLogFile(), collector/stream_summary.h.)

/// Summary of snapshot `index` of a summary-mode log (cumulative numbers up to that snapshot). Scope ids
/// no Scope record defined are credited to the root, as in summarize(). Throws std::out_of_range if
/// index >= log.snapshots.size().
Summary summarizeSnapshot(const LogData& log, size_t index);

/// The rows of a Summary as JoinRules credits them (collector/launch_join.h). `scope` is an index into
/// log.scopes; a record of a range no Scope record defined (past the table or a gap in it: a corrupt or lost
/// chunk) is credited to the root, and to Summary::unresolved as well so that reports show those records
/// apart. Holds references; s.exclusive has one row per scope of `log` (at least the root).
struct SummaryRanges {
  Summary& s;
  const LogData& log;
  template <typename Add>
  bool credit(Credit, uint32_t scope, Add&& add) {
    const bool known = scope < s.exclusive.size() && log.scopeDefined(scope);
    add(s.exclusive[known ? scope : kRootScope]);
    if (!known) add(s.unresolved);
    return true;
  }
  void kernelByName(uint32_t scope, uint32_t name_id, uint64_t ns) {
    credit(Credit::kKernel, scope, [&](RangeStats& r) { addKernelNs(r.by_kernel[name_id], ns); });
  }
  void unmatchedKernel(uint32_t name_id, uint64_t ns) { addKernelNs(s.unmatched_by_kernel[name_id], ns); }
};

/// Completes a Summary whose `exclusive` (one entry per scope id of log.scopes, at least the root) is
/// filled: repairs the range tree (a parent out of range or a cycle hangs under the root), fills
/// children, children_order and inclusive. Used by summarize() and the streaming join.
void buildRangeTree(const LogData& log, Summary& s);

/// GPU ns of kernel record `k` for the totals (span(start_ns, end_ns)); counts a record whose end lies
/// before its start in s.kernels_end_before_start. Call once per kernel record. Used by summarize() and
/// the streaming join.
inline uint64_t kernelTotalNs(Summary& s, const KernelBody& k) {
  if (k.end_ns < k.start_ns) ++s.kernels_end_before_start;
  return span(k.start_ns, k.end_ns);
}

/// A kernel longer than this (one day, in ns) is implausible in any run (kernelLongerThanLog()).
inline constexpr uint64_t kImplausibleKernelNs = 86'400'000'000'000;

/// Whether the longest kernel of `s` (Summary::longest_kernel_ns) lasts longer than a day
/// (kImplausibleKernelNs) and longer than the span of the log's other times: a kernel runs after its launch
/// call and ends before the library closes the log (its last Segment record's stop, the close time). The
/// span alone is no bound: a log without Segment record (the library writes one only for capture windows)
/// has no close time, and a last kernel that runs longer than everything recorded before it, followed by a
/// sync or a copy whose times are not in the span, is an ordinary run (`x = a @ a; x.item()` right after
/// start-up: a 2 ms GEMM in a span of 1 ms).
inline bool kernelLongerThanLog(const Summary& s) {
  return s.longest_kernel_ns > kImplausibleKernelNs && s.longest_kernel_ns > s.times_last_ns - s.times_first_ns;
}

/// Folds time `t` into the span of the log's times (Summary::times_first_ns, times_last_ns); 0 is no time.
inline void noteTime(Summary& s, uint64_t t) {
  if (t == 0) return;
  if (s.times_first_ns == 0 || t < s.times_first_ns) s.times_first_ns = t;
  s.times_last_ns = std::max(s.times_last_ns, t);
}

/// API ns of launch record `l` (span(enter_ns, exit_ns)); counts a record whose exit lies before its enter
/// in s.launches_exit_before_enter (a damaged or crafted log: the library takes both times from one clock)
/// and notes both times in the log's span. Call once per launch record. Used by summarize() and the
/// streaming join.
inline uint64_t launchApiNs(Summary& s, const LaunchBody& l) {
  if (l.exit_ns < l.enter_ns) ++s.launches_exit_before_enter;
  noteTime(s, l.enter_ns);
  noteTime(s, l.exit_ns);
  return span(l.enter_ns, l.exit_ns);
}

/// Counts kernel record `k` among the implausible ones when its end is all ones, else keeps it as the
/// longest so far, and notes its start in the log's span. Call once per kernel record.
inline void noteKernelTimes(Summary& s, const KernelBody& k) {
  noteTime(s, k.start_ns);
  if (k.end_ns == UINT64_MAX) {
    ++s.kernels_end_all_ones;
    return;
  }
  const uint64_t ns = span(k.start_ns, k.end_ns);
  if (ns > s.longest_kernel_ns) {
    s.longest_kernel_ns = ns;
    s.longest_kernel_id = k.correlation_id;
  }
}

/// CPU ns of range record `r` (span(begin_ns, end_ns)); counts a record whose end lies before its begin
/// in s.ranges_end_before_begin (a damaged or crafted log: the library takes both times from one clock),
/// and notes both times in the log's span. Call once per range record. Used by summarize() and the streaming join.
inline uint64_t rangeCpuNs(Summary& s, const RangeBody& r) {
  if (r.end_ns < r.begin_ns) ++s.ranges_end_before_begin;
  noteTime(s, r.begin_ns);
  noteTime(s, r.end_ns);
  return span(r.begin_ns, r.end_ns);
}

/// Records the shape of kernel record `k` in s.kernel_shapes: its grid and block if it is the first of its
/// name, and its grid and block among the name's distinct ones. Used by summarize() and the streaming join.
inline void noteKernelShape(Summary& s, const KernelBody& k) {
  auto [it, fresh] = s.kernel_shapes.try_emplace(k.name_id);
  KernelShape& sh = it->second;
  const DistinctDims::Dims grid{static_cast<int32_t>(k.grid[0]), static_cast<int32_t>(k.grid[1]),
                                static_cast<int32_t>(k.grid[2])};
  const DistinctDims::Dims block{static_cast<int32_t>(k.block[0]), static_cast<int32_t>(k.block[1]),
                                 static_cast<int32_t>(k.block[2])};
  if (fresh) {
    std::copy(grid.begin(), grid.end(), sh.grid);
    std::copy(block.begin(), block.end(), sh.block);
  }
  sh.grids.add(grid);
  sh.blocks.add(block);
}

}  // namespace kc
