// kcount binary log reader: bounds-checked, never trusts a length field, reports damage with byte offsets
// and keeps what is intact. One pass over the file, chunk by chunk: records go to a RecordVisitor as they
// are decoded (streaming), and/or into LogData's vectors. Format: collector/log_format.h, docs/format.md.
#pragma once

#include <cstdint>
#include <span>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collector/log_format.h"

namespace kc {

/// A problem found while reading. Warnings lose nothing of what was written (no End record after intact
/// chunks, bytes after the End record); errors mean a part of the file was skipped or lost (a damaged
/// chunk, a tail cut inside a chunk or the file header) or the file is not a kcount log at all: a log with
/// an error is not intact (LogData::intact()).
/// Errors of damaged chunks the reader lists one by one (LogData::issues); the chunks of further ones are
/// said in one error after them ("... and N more damaged chunks not listed (chunks A to B, at bytes X to
/// Y); K chunks skipped in all"). LogData::chunks_skipped keeps the exact count.
inline constexpr size_t kListedChunkErrors = 20;

struct ReadIssue {
  enum class Severity { kWarning, kError };
  Severity severity = Severity::kError;
  /// offset when the problem was found after reading and has no place in the file (kNoOffset).
  static constexpr uint64_t kNoOffset = ~uint64_t{0};
  uint64_t offset = 0;    // byte offset in the file where the problem was found, or kNoOffset
  int64_t chunk = -1;     // chunk index (0-based, in file order) or -1 for the file header / no chunk
  /// What was wrong, in words, naming its place once ("checksum mismatch in chunk 3 at byte 4096; ...";
  /// every other offset it names says what it is): printed as it is, without offset and chunk after it.
  std::string message;
};

/// Name of a range whose Scope record was lost to damage (LogData::scopeLost()), as paths and reports show
/// it: "(lost range 3)". The ranges recorded inside it are shown under it ("(lost range 3)/up").
/// `log_scope_id` is the id the log wrote (LogData::logScopeId() of a table index).
std::string lostRangeName(uint32_t log_scope_id);

/// One complete summary-mode snapshot (format 1.2): cumulative tallies since the start of the run.
struct SnapshotData {
  SnapshotBeginBody begin{};                // time, sequence, whole-run totals
  std::vector<SnapshotScopeBody> scopes;    // one row per range (scope)
  std::vector<SnapshotKernelBody> kernels;  // one row per (range, kernel name), unmatched names last
  uint64_t offset = 0;                      // byte offset of its SnapshotBegin record
  int64_t chunk = -1;                       // chunk holding its SnapshotBegin record
};

/// Everything a log holds, decoded into memory. Ids index the vectors: strings[id], scopes[id].
/// Not thread-safe; build one per thread.
struct LogData {
  uint16_t major = 0, minor = 0;
  std::vector<std::pair<std::string, std::string>> metadata;  // in file order; later keys may repeat
  std::vector<std::string> strings;  // strings[0] == "" (kNoString)
  std::vector<ScopeBody> scopes;     // scopes[0] is the root; unknown ids have name_id 0
  /// Ids below strings.size() / scopes.size() that no record defined (their definition was lost to
  /// damage): strings_missing[id] is true. Shorter than the tables (empty: none missing); see
  /// stringDefined() and scopeDefined().
  std::vector<bool> strings_missing, scopes_missing;
  /// Scope ids that records (launches, ranges, graph nodes, snapshot rows) or a Scope record's parent refer
  /// to and that no Scope record of the log defines, below kMaxIds, ascending: what compactScopes() keeps
  /// besides the defined scopes, so that a table without records (ReadOptions::keep_records false) is
  /// compacted as the same log read with its records.
  std::vector<uint32_t> undefined_scope_refs;
  /// Set by compactScopes(): scope_log_ids[i] is the id the log wrote for scopes[i] (ascending); empty
  /// while scopes[] is indexed by the log's ids. scope_id_end is the table's size before compaction: ids
  /// at or above it (no Scope record defines them) were left as written in the records.
  std::vector<uint32_t> scope_log_ids;
  uint32_t scope_id_end = 0;
  /// The id the log wrote for table index `index` (the index itself without compaction, or past the table).
  uint32_t logScopeId(uint32_t index) const {
    return index < scope_log_ids.size() ? scope_log_ids[index] : index;
  }
  /// The table index of an id as the log wrote it (records seen through a RecordVisitor carry those):
  /// itself without compaction or at or above scope_id_end; kUnknownScopeIndex for an id compaction
  /// dropped (no Scope record defines it and the reader saw no record use it). Binary search: O(log n).
  uint32_t scopeIndex(uint32_t log_id) const;
  static constexpr uint32_t kUnknownScopeIndex = ~uint32_t{0};
  std::vector<LaunchBody> launches;
  std::vector<KernelBody> kernels;
  std::vector<RangeBody> ranges;
  std::vector<GraphNodeBody> graph_nodes;  // format 1.1
  std::vector<MemOpBody> mem_ops;          // format 1.1
  std::vector<SegmentBody> segments;       // format 1.2: capture windows, in write order (see RecordVisitor)
  /// Format 1.4: kcount's own callbacks per range, as written (final chunk; a scope may repeat in logs joined
  /// from parts: rangeCallbacksOf() in collector/self_cost.h sums them). Whole-run numbers, like the metadata:
  /// kept whatever ReadOptions::keep_records says, and by a selection (selectSegment()).
  std::vector<RangeCallbacksBody> range_callbacks;
  /// Launch, kernel and memory-operation records that lie before a Segment record's window ends: counts of
  /// records decoded (LogData::launch_records, ...) at the end of the chunk that holds it (the library ends
  /// a chunk after a Segment record, and a packed chunk decodes its record batches after its other
  /// records, so the batches of that chunk belong to the window that closes there).
  struct RecordMark {
    uint64_t launches = 0, kernels = 0, mem_ops = 0;
  };
  /// One entry per entry of `segments`, same order: the records of window i are those from
  /// segment_marks[i - 1] (or the first record) up to segment_marks[i]; records after the last mark belong
  /// to a window that was never closed (a process killed while recording). selectSegment() and
  /// selectTimeWindow() set them for the records they keep. Empty in a LogData built by other means
  /// (tests): its records are one window (RecordWindows falls back to correlation-id spans).
  std::vector<RecordMark> segment_marks;
  std::vector<SnapshotData> snapshots;     // complete snapshots in write order (summary mode, 1.2)
  /// A KCOUNT_MODE=summary log: its metadata `mode` is `summary`, or a SnapshotBegin record was read. Such a
  /// log holds its numbers in snapshots only: with none complete (`snapshots` empty, e.g. a process killed
  /// before its first KCOUNT_INTERVAL), its numbers are not known.
  bool summary_mode = false;
  uint32_t incomplete_snapshots = 0;       // snapshots begun but not complete (cut tail, damaged chunk)
  /// The snapshot still open when the log's End record was read (summary mode): the library closed the log
  /// after the rest of that snapshot was not written (kept out at KCOUNT_MAX_BYTES, or refused by the
  /// file). Counted in incomplete_snapshots too. `open_at_end` false: none (a snapshot open at the end of
  /// a file without End record is a cut tail, not this).
  struct CutSnapshot {
    bool open_at_end = false;
    bool final = false;       // its SnapshotBegin was marked kSnapshotFinal
    uint32_t sequence = 0;    // its sequence number
    uint64_t rows_read = 0;   // rows in the file before the End record
    uint64_t rows = 0;        // rows its SnapshotBegin announced
  } snapshot_cut_at_end;
  // Records decoded, whether or not kept in the vectors above (ReadOptions::keep_records).
  uint64_t launch_records = 0, kernel_records = 0, range_records = 0, graph_node_records = 0, mem_op_records = 0;
  /// Of launch_records, those of memcpy/memset API calls (LaunchBody flag kLaunchMemOp); the rest are kernel
  /// launches (cudaLaunchKernel and the like, graph launches).
  uint64_t mem_call_records = 0;
  /// The whole file's launch, kernel and range records: the *_records above of the log as read. A LogData
  /// that holds a part of the log's records (selectSegment(), selectTimeWindow(), collector/analysis.h)
  /// keeps them here, since its own *_records count only the part (or nothing) and the Stats record's
  /// counts are the whole run's: the two compare only whole (statsShortfall() in tools/log_state.cpp).
  struct FileRecords {
    uint64_t launches = 0, kernels = 0, ranges = 0;
  };
  FileRecords fileRecords() const {
    return whole_file_records.value_or(FileRecords{launch_records, kernel_records, range_records});
  }
  std::optional<FileRecords> whole_file_records;  // set for a part only
  StatsBody stats{};                 // summed over Stats records
  bool has_stats = false;
  /// A Stats record carried the not_written_* fields (written since they were added in 1.2); without
  /// them, records kept out of the log are known only from the metadata `records_not_written`, if any.
  bool has_not_written_stats = false;
  bool complete = false;             // an End record was read: the process closed the log itself
  /// Bytes after the chunk that holds the End record (a file that holds logs concatenated, `cat a.kcount
  /// b.kcount`, or chunks appended after the log was closed): not read, so nothing is counted twice.
  /// after_end_offset is the byte offset of the first of them, 0 if none; after_end_is_log is true when
  /// a kcount file header starts there (a second log).
  uint64_t after_end_offset = 0;
  uint64_t after_end_bytes = 0;
  bool after_end_is_log = false;
  /// The file ends in zero bytes where a chunk would start (after the End record, or after the last
  /// intact chunk of a log without one): blocks the file system gave the file whose data never reached
  /// the disk (a crash or power loss while recording) or padding. They hold no chunk, so they are neither
  /// damage nor another log: a warning says where they start (zero_tail_offset) and how many there are
  /// (zero_tail_bytes, 0 if none); the log reads as complete, or as incomplete without End record.
  uint64_t zero_tail_offset = 0;
  uint64_t zero_tail_bytes = 0;
  /// Chunks out of write order: their sequence numbers are 0..n-1 each once, but not in file order (a file
  /// put together from pieces in another order), counted as the fewest chunks that, moved back, restore the
  /// write order (those outside one longest run of increasing numbers: 1 for two chunks swapped, 1 for the
  /// End chunk moved to the front). Every record is read, in write order; a warning names the first chunk
  /// not at its place and the numbers of those moved. 0 when the chunks are in order, or when the numbers have gaps or repeats
  /// (chunks missing, damaged headers: other warnings and errors, which name the chunks moved too).
  uint64_t chunks_out_of_order = 0;
  /// Bytes skipped as junk: bytes between chunks (or between the file header and chunk 0) that hold no
  /// chunk of the log, where the next intact chunk carries the number expected there or the file's intact
  /// chunks carry every sequence number 0..n-1 once (nothing missing). Each stretch is an error naming its
  /// bytes ("N junk bytes (bytes A to B) between chunk K-1 and chunk K, skipped"); no chunk is counted
  /// skipped for them. 0 if none.
  uint64_t junk_bytes = 0;
  bool truncated = false;            // the file ends inside the file header or inside a chunk (cut tail)
  /// The file does not start with a kcount file header (an empty file, or other bytes at byte 0): it is
  /// not a kcount log, and nothing in it was read. issues[0] says what byte 0 holds.
  bool not_a_log = false;
  /// The file header names a major format version this reader does not read (a newer kcount wrote it):
  /// nothing past the header was read. issues[0] says which version.
  bool unsupported_version = false;
  uint32_t chunks_read = 0;          // chunks whose checksum matched and that were decoded
  int64_t last_intact_chunk = -1;    // index of the last chunk decoded, -1 if none
  uint64_t last_intact_end = 0;      // byte offset just past that chunk
  uint32_t chunks_skipped = 0;       // chunks skipped for a bad checksum or a bad record inside
  uint32_t packed_chunks = 0;        // of chunks_read, packed chunks (format 1.2)
  uint64_t file_bytes = 0;
  std::vector<ReadIssue> issues;

  /// Value of the last metadata entry named key, or "" if absent.
  std::string meta(std::string_view key) const;
  /// True if a String record defined id (id 0, kNoString, always is).
  bool stringDefined(uint32_t id) const {
    return id == kNoString || (id < strings.size() && !(id < strings_missing.size() && strings_missing[id]));
  }
  /// True if a Scope record defined id (the root, kRootScope, always is). Records of an undefined scope
  /// are credited to the root and tallied in Summary::unresolved.
  bool scopeDefined(uint32_t id) const {
    return id == kRootScope || (id < scopes.size() && !(id < scopes_missing.size() && scopes_missing[id]));
  }
  /// String for an id; "<bad string id N>" when out of range or never defined. The view stays valid as
  /// long as this LogData (a bad id's text is kept per thread for the thread's life, one per id, so
  /// earlier views survive later calls). Never throws except std::bad_alloc for a bad id's text.
  std::string_view str(uint32_t id) const;
  /// Path of a scope from the root, names joined by '/', e.g. "step/gate"; "(no range)" for the root;
  /// "<bad scope id N>" for an id no record defined; a scope whose parent's Scope record was lost is
  /// "(lost range P)/name" (lostRangeName()); "<broken parent>/..." where a parent id is out of range or
  /// the parents form a cycle; a scope nested deeper than 256 ranges (no library log has one) shows its
  /// innermost 256 names after "<outer ranges past 256 levels>/". Cost: O(depth).
  std::string scopePath(uint32_t scope_id) const;
  /// True for a scope id below the table's size whose Scope record was lost to damage (a gap:
  /// scopes_missing). Ranges recorded inside it keep it as their parent: analyses group them under it.
  bool scopeLost(uint32_t id) const { return id != kRootScope && id < scopes.size() && !scopeDefined(id); }
  /// True for the library's reserved scope (kOverflowScope): scope 1, defined as a top-level scope named by
  /// string 1 whose text is kStringTableFullText. Every log the library writes defines it; records name it
  /// only when the scope tree or the string table was full. A log from another writer that uses id 1 for
  /// a range of its own (any other name or parent) has no reserved scope.
  bool isOverflowScope(uint32_t id) const;
  /// True if any issue is an error.
  bool damaged() const;
  /// True if nothing was lost: no error and no cut tail (an incomplete log, without End record, can be
  /// intact). `kcount summary`/`kernels`/`check` exit 2 for a log that is not intact.
  bool intact() const { return !damaged() && !truncated; }
  /// True if the file goes on after the log's End record (see after_end_offset).
  bool dataAfterEnd() const { return after_end_bytes > 0; }
  /// Part number of a file of a rotated log (metadata kMetaRotatedFile): 0 for the first file and for a
  /// log that was never rotated.
  uint32_t rotationPart() const;
  /// Number of the part this file continues in (metadata kMetaContinuedIn, written when the file was
  /// closed for rotation), 0 if none. Only meaningful without End record.
  uint32_t continuedInPart() const;
  /// A complete non-last part of a rotated log: no End record because the log went on in the next file.
  bool isContinuedPart() const { return !complete && continuedInPart() > 0; }
  /// A file of a rotated log numbered above 0 read alone (not joined with its earlier parts): parts 0 to
  /// rotationPart() - 1 are missing, so its numbers cover only the end of the run. Joined logs drop the
  /// rotated_file key (a missing first part of a join is an error there instead).
  bool isLaterPartAlone() const { return parts <= 1 && rotationPart() > 0; }
  /// Files this LogData was joined from (joinRotatedParts); 1 for one file.
  uint32_t parts = 1;
  /// Part numbers of the files joined (joinRotatedParts), in order; empty for one file read alone (its
  /// number is rotationPart()). Parts missing below the last one given are gaps of the run.
  std::vector<uint32_t> joined_parts;
};

/// False for a log recorded with KCOUNT_GPU_TIME=0 or =graphs (metadata gpu_time = "off", "graphs"): its kernels were counted
/// at their launch calls, so every GPU time in it (kernel start/end, gpu_ns) and its kernels' device,
/// stream, grid and block are unknown (written as 0). Outputs show them as not recorded ('-', null, an
/// empty CSV field), never as 0 ns. Pure; thread-safe.
bool gpuTimeRecorded(const LogData& d);

/// Whether the log was recorded with KCOUNT_GPU_TIME=graphs (metadata gpu_time = graphs): no kernel GPU
/// times (gpuTimeRecorded() false), but the GPU span of each graph launch (RangeStats::graph_gpu_*).
bool graphGpuTimeRecorded(const LogData& d);

/// Receives records in write order while the reader decodes them: file order, but for chunks moved (their
/// sequence numbers out of file order), which are decoded by their numbers where the chunks with the numbers
/// before theirs come later in the file (those wait: they are decoded when their turn comes). Spans are valid only during the call
/// (they point into the reader's reusable batch buffer). Called on the reading thread only. Records of a
/// chunk that later turns out to be damaged (a bad record in the middle) have already been delivered:
/// the same records LogData keeps.
class RecordVisitor {
 public:
  virtual ~RecordVisitor() = default;
  virtual void launches(std::span<const LaunchBody>) {}
  virtual void kernels(std::span<const KernelBody>) {}
  virtual void ranges(std::span<const RangeBody>) {}
  virtual void graphNode(const GraphNodeBody&) {}
  virtual void memOp(const MemOpBody&) {}
  /// A Segment record, after every launch, kernel and memory operation of the chunk that holds it (the
  /// records of its window; see LogData::segment_marks): records delivered later belong to later windows.
  virtual void segment(const SegmentBody&) {}
  /// A chunk whose records follow: its byte offset in the file (of its header) and its index in file order.
  virtual void chunk(uint64_t /*offset*/, int64_t /*index*/) {}
};

struct ReadOptions {
  /// Receives launches, kernels, ranges, graph nodes and memory operations as they are decoded.
  RecordVisitor* visitor = nullptr;
  /// Keep those records in LogData's vectors (memory grows with the log). false: only their counts
  /// (LogData::launch_records, ...); metadata, strings, scopes, stats and issues are always kept.
  bool keep_records = true;
};

/// Decodes a whole log held in memory. Never throws on bad input: problems go to LogData::issues.
/// Throws std::bad_alloc only if memory runs out.
LogData readLog(std::span<const uint8_t> bytes, const ReadOptions& options = {});

/// Reads a file and decodes it in one pass. The file is mapped read-only and pages already decoded are
/// released as reading moves on, so with keep_records = false the reader's memory is bounded by one
/// chunk (its stored bytes, its decoded payload up to kMaxChunkPayload, one batch of decoded records)
/// plus the string and scope tables, not by the file's size. A file that cannot be opened gives an error
/// issue at offset 0. A file truncated by someone else while it is being read is undefined (SIGBUS).
LogData readLogFile(const std::string& path, const ReadOptions& options = {});

/// The first `max_bytes` bytes of a file read as a log (records not kept): enough for the metadata of its
/// first chunks (process identity, rotated_file). Issues of the cut are irrelevant and dropped. A path
/// that is not a regular file (a FIFO, a device, a folder) or cannot be opened gives an empty LogData and
/// is not opened (a FIFO's open would block). Thread-safe (reads only the file).
LogData readLogHead(const std::string& path, size_t max_bytes = 2u << 20);

/// Identity of the process run a log file belongs to: "host|pid|start_ns" from its metadata (every part
/// of a rotated log repeats them), "" if one of them is missing.
std::string runIdentity(const LogData& log);

/// For `log`, read from a file of a rotated run without End record and without the continued_in_file key
/// that closes a part for rotation, when a later part of the same run exists (`later_name`, numbered
/// `later_part`): the run went on, so this is not a crash of the run. Replaces its "no end record"
/// warning (crash, kill, or still running), or its "no intact end record" warning (damaged or cut bytes
/// after the last intact chunk). Cut inside a chunk (truncated), damaged bytes after the last intact
/// chunk, or `run_marks_parts` (another part of the run has continued_in_file, so its writer marks parts):
/// an error, "rotated part K is cut short: ...", and the log is not intact. Otherwise a warning that says it was cut at a chunk boundary
/// or written before parts were marked (both end this way). No effect on a complete log or a part closed
/// for rotation. Used by joinRotatedParts() and by the tools when a later part lies beside the file.
void markCutShortPart(LogData& log, const std::string& later_name, uint32_t later_part, bool run_marks_parts);

/// compactScopes() compacts a scope table only when it drops at least this many ids.
inline constexpr size_t kCompactScopesMin = 4096;

/// Renumbers the scope table of `log` densely when it is sparse: a rotated part defines only the scopes
/// its records use (ids up to kMaxIds - 1), and a corrupt id can name any id below kMaxIds; the analysis
/// and the tools keep tables per scope (RangeStats, paths: about 200 bytes each) as long as scopes[], so
/// one Scope record with id 1,048,000 cost them 400 MB. Kept: the root, scope 1 (kOverflowScope), every
/// defined scope, every parent id a defined scope names (a lost parent stays a lost range), and
/// undefined_scope_refs; they keep their order, so the mapping is the identity on a log whose ids are
/// dense. Nothing is done when fewer than `min_dropped` ids would go (kCompactScopesMin; 0 compacts any
/// log), or twice. Every scope id in the LogData is rewritten to its index: Scope parents, launches,
/// ranges, graph nodes, snapshot rows; ids at or above the old table size are left as written (they name
/// no scope either way). scope_log_ids keeps the ids the log wrote, for display (logScopeId()); a reader's
/// messages, written before, name those ids. Memory: 4 bytes per old table entry while it runs.
/// Call after reading (and after joinRotatedParts(), which takes parts as read), before summarize() or a
/// StreamSummarizer's finish() (which maps the ids its visitor saw through scopeIndex()).
void compactScopes(LogData& log, size_t min_dropped = kCompactScopesMin);

/// Joins the files of one rotated log, given in part order (parts[i] read from names[i], not compacted), into one
/// LogData as if the log were one file: records, segments and snapshots appended in order, string and
/// scope tables merged (ids are the run's; each part defines those its own records use), issues of each part prefixed
/// with "part N (name): ", counts and stats summed, `complete` from the last part. Metadata of every part
/// in order, without the rotation keys (rotated_file; continued_in_file but in the last part given).
/// A part before the last without End record and not closed for rotation is marked (markCutShortPart()).
/// Parts missing in the numbering (a gap, a first part not given, or a last part that continues in a
/// part not given) are warnings naming them: the files given are intact, the run is only partly given
/// (the tools call it PARTIAL). `parts` is set to the number of files, `joined_parts` to their numbers.
/// Parts without metadata are numbered by their names first (adoptUnnamedParts()).
LogData joinRotatedParts(std::vector<LogData> parts, const std::vector<std::string>& names);

}  // namespace kc
