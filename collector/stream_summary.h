// Streaming correlation join: the Summary of summarize() in one pass over a log of any length, with
// memory bounded by the number of distinct (range, kernel) keys and the launches still in flight, not
// by the number of records. Used by `kcount summary` and `kcount check`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"

namespace kc {

/// Launches held at most (the join window). A launch whose kernel or memory operation has not arrived
/// after this many later launch records is dropped and counted in Summary::join_window_evicted.
inline constexpr size_t kDefaultJoinWindow = 1u << 20;

/// A RecordVisitor that joins kernels and memory operations to launches by correlation id as records
/// arrive, in any order, and tallies per (scope, kernel name). Equal to summarize() on the same records
/// (same Summary, field by field) when Summary::join_window_evicted is 0 and the first kernel or memory
/// operation of each launch lies within `window` launch records of it in the file, the others within
/// min(window, 64 Ki) launches of it (the kernels of one graph launch, or a second record for one
/// launch); the library writes a kernel within a few drains, about a second, of its launch. Capture
/// windows as summarize() takes them: a Segment record (segment()) ends the window of the records before
/// it. A correlation id repeated within one window is seen only while its first launch is held (a matched
/// launch leaves the ring once pushed out of it), so Summary::repeated_launch_ids may be lower.
///
/// Memory: recent launches in a ring indexed by correlation id (it grows while launches in flight
/// outnumber it, up to min(window, 64 Ki) entries, 2 MiB), launches
/// pushed out of it that nothing joined yet (at most `window`),
/// kernels waiting for their launch (at most `window`), one tally per
/// distinct (scope, kernel name), one per scope, one per capture window (setSegments), and with
/// GraphView::kCapturePath the graph nodes (a kernel's node is resolved after the last record). Nothing
/// is kept per range instance: a range record adds to its scope's tally. Not thread-safe: one reading
/// thread.
class StreamSummarizer final : public RecordVisitor {
 public:
  explicit StreamSummarizer(const JoinOptions& options = {}, size_t window = kDefaultJoinWindow);
  ~StreamSummarizer() override;
  StreamSummarizer(const StreamSummarizer&) = delete;
  StreamSummarizer& operator=(const StreamSummarizer&) = delete;

  void launches(std::span<const LaunchBody> v) override;
  void kernels(std::span<const KernelBody> v) override;
  void ranges(std::span<const RangeBody> v) override;
  void graphNode(const GraphNodeBody& g) override;
  void memOp(const MemOpBody& m) override;
  /// Closes the current capture window: kernels and memory operations read after it join only launches
  /// read after it, and those still waiting for their launch count as unmatched.
  void segment(const SegmentBody& seg) override;
  /// Notes the chunk being read, for Summary::first_repeated_offset.
  void chunk(uint64_t offset, int64_t index) override;

  /// Ends the join (launches never matched count as launches without kernel, waiting kernels as
  /// unmatched) and builds the Summary; `log` gives the scopes (the range tree). Call once, last.
  Summary finish(const LogData& log);

  /// Also counts records per capture window, as segmentTotals() on the same records would (launches,
  /// kernels and memory operations in the window where they lie in the file, between the Segment records
  /// that segment() delivers; ranges by end time): launches, kernels, GPU ns, ranges and memory operations
  /// always equal; unmatched kernels equal when
  /// Summary::join_window_evicted is 0 (a kernel is unmatched in its window when the launch the join gives
  /// it is a memcpy/memset call or there is none; segmentTotals() counts it matched if any kernel launch
  /// record has its correlation id, which differs only where one id is used by a memory call and again by
  /// a kernel launch, or where the streaming join differs from summarize() as described above).
  /// `log.segments` are the windows, known from an earlier pass (Segment records follow their windows'
  /// records); their reason strings come from `log`. Call before the first record.
  void setSegments(const LogData& log);
  /// After finish(): the per-window totals of setSegments() (empty if it was not called).
  std::vector<SegmentTotals> takeSegmentTotals();

  /// Most launches held at once so far (pending table entries).
  size_t peakPendingLaunches() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// A log file read in one streaming pass and summarized: LogData holds metadata, strings, scopes,
/// stats, record counts and issues (no record vectors); Summary as summarize() would give.
struct StreamedLog {
  LogData data;
  Summary summary;
  /// With segment_totals: segmentTotals() of the log (one per Segment record, file order); else empty.
  std::vector<SegmentTotals> segments;
};

/// readLogFile(path, {visitor = a StreamSummarizer, keep_records = false}) and finish(); for a summary-mode
/// log (no records), summarize() of its last complete snapshot. With `segment_totals`, also the records
/// per capture window (StreamedLog::segments): a log with Segment records and records is read a second
/// time (a window's Segment record follows its records), with the same bounded memory.
StreamedLog summarizeLogFile(const std::string& path, const JoinOptions& options = {},
                             size_t window = kDefaultJoinWindow, bool segment_totals = false);
/// The files of one rotated log, in part order, read one after the other through one join (a kernel in
/// part k+1 joins its launch in part k) and their LogData joined (joinRotatedParts).
StreamedLog summarizeLogFiles(const std::vector<std::string>& paths, const JoinOptions& options = {},
                              size_t window = kDefaultJoinWindow, bool segment_totals = false);
/// The per-window totals of summarizeLogFile(s)(..., segment_totals = true) for a log already summarized
/// without them (`paths`: its file, or the parts of a rotated log in part order; `log`: that pass's
/// LogData, for its Segment records and record counts): one more streaming pass when the log has windows
/// and records, none otherwise.
std::vector<SegmentTotals> segmentTotalsOfFiles(const std::vector<std::string>& paths, const LogData& log,
                                                const JoinOptions& options = {}, size_t window = kDefaultJoinWindow);
/// The same over bytes in memory (tests; fuzzing).
StreamedLog summarizeLogBytes(std::span<const uint8_t> bytes, const JoinOptions& options = {},
                              size_t window = kDefaultJoinWindow, bool segment_totals = false);

}  // namespace kc
