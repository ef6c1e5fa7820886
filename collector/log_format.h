// kcount binary log: on-disk layout.
//
// A log is a FileHeader followed by chunks. Each chunk is a ChunkHeader and a payload of records; the
// payload's XXH3-64 checksum is in the header, so a damaged chunk is detected and skipped, and a file
// cut short is readable up to its last complete chunk. Each record is a RecordHeader (type, body size)
// and a body; readers skip types they do not know and ignore body bytes past the fields they know, so
// the format only grows at the end (NVTX's size-prefixed structs, Kineto's unpaddedStructSize).
// Strings and scopes are interned: defined once by a String/Scope record, referred to by id afterwards;
// a chunk can be decoded knowing only the chunks before it. All integers are little-endian.
// History and field meanings: docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace kc {

inline constexpr char kLogMagic[8] = {'K', 'C', 'O', 'U', 'N', 'T', 'L', 'G'};
inline constexpr uint16_t kLogMajor = 1;  // incompatible changes
inline constexpr uint16_t kLogMinor = 4;  // additions readers may ignore (1.1: graph nodes, memory ops;
                                          // 1.2: segments, snapshots, packed chunks, compact batches;
                                          // 1.3: graph GPU spans, MemOpKind::kGraph;
                                          // 1.4: kcount's own callbacks per range, RangeCallbacks)
inline constexpr uint32_t kChunkMagic = 0x4b484b43;  // "CKHK" little-endian bytes 'C','K','H','K'
/// Magic of a packed chunk (1.2): "CKHZ", bytes 'C','K','H','Z'. A reader of 1.0/1.1 finds no chunk
/// magic it knows and reports damage; it never skips a packed chunk silently.
inline constexpr uint32_t kPackedChunkMagic = 0x5a484b43;

/// Readers refuse chunk payloads larger than this (bytes): a corrupt length cannot make them allocate.
inline constexpr uint32_t kMaxChunkPayload = 64u << 20;
/// Writers close a chunk once its payload reaches this many bytes.
inline constexpr uint32_t kTargetChunkPayload = 1u << 20;
/// Longest string stored (bytes); longer kernel or range names are cut at this length.
inline constexpr uint32_t kMaxStringBytes = 60000;
/// String ids and scope ids are below this: the library's tables hand out at most this many of each
/// (StringTable, ScopeTree), and readers refuse higher ids, so that an id alone cannot make them allocate
/// tables of more than kMaxIds entries. Ids are the run's, not a file's: a rotated part defines only the ids its
/// records use, so its ids are sparse and may be far above the number of definitions it holds.
inline constexpr uint32_t kMaxIds = 1u << 20;

/// Metadata key of a file started by rotation (KCOUNT_MAX_BYTES): its part number, 1, 2, ... (absent in
/// the first file, part 0).
inline constexpr char kMetaRotatedFile[] = "rotated_file";
/// Metadata key written last in a rotated file that is not the last part, in a chunk of its own just
/// before the file is closed: the number of the part the log continues in (this part's number + 1).
/// Such a file has no End record: it is a complete part, not a log cut short.
inline constexpr char kMetaContinuedIn[] = "continued_in_file";
/// Summary mode, metadata key in the final chunk: how many periodic snapshots were not written to keep
/// room for the final snapshot under KCOUNT_MAX_BYTES (absent when none was skipped).
inline constexpr char kMetaSnapshotsSkipped[] = "snapshots_skipped";
/// Metadata key in the final chunk of a process that ended by a signal the library caught or saw it send
/// itself: "SIGTERM", "SIGINT" or "SIGHUP" (absent after a normal exit). The last window's end reason is
/// the same text, and ranges still open then were closed at the signal (flag kRangeUnclosed).
inline constexpr char kMetaEndSignal[] = "end_signal";
/// Metadata keys in the final chunk (collector/self_cost.h): the callbacks the library handled on the
/// program's threads while the log was open, how many of them were timed (a random sample, about 1 in 64),
/// and the sum of the timed ones' durations in ns. Absent in logs written before them.
inline constexpr char kMetaSelfCallbacks[] = "kcount_callbacks";
inline constexpr char kMetaSelfTimed[] = "kcount_callbacks_timed";
inline constexpr char kMetaSelfTimedNs[] = "kcount_callback_timed_ns";

/// The library's writer thread drains the per-thread buffers (and, in summary mode, writes a snapshot when
/// one is due) every 100 ms: snapshots of a summary-mode log (metadata interval_ns, KCOUNT_INTERVAL)
/// come at most this often, whatever a shorter interval asks.
inline constexpr uint64_t kDrainIntervalNs = 100'000'000;

/// Scope id 0 is the root of the range tree: a launch with scope 0 ran with no NVTX range open.
inline constexpr uint32_t kRootScope = 0;
/// String id 0 is the empty string and means "none".
inline constexpr uint32_t kNoString = 0;
/// The library's tables reserve id 1 in both spaces (docs/format.md): string 1 is kStringTableFullText,
/// returned once the string table is full; scope 1 is a top-level scope named by string 1, returned once
/// the scope tree is full. Like every id, they are defined in a file only where a record there uses them.
inline constexpr uint32_t kOverflowString = 1;
inline constexpr uint32_t kOverflowScope = 1;
inline constexpr std::string_view kStringTableFullText = "(string table full)";

struct FileHeader {
  char magic[8];
  uint16_t major;
  uint16_t minor;
  uint32_t header_bytes;  // sizeof(FileHeader) when written; readers skip to this offset
};
static_assert(sizeof(FileHeader) == 16);

struct ChunkHeader {
  uint32_t magic;          // kChunkMagic
  uint32_t payload_bytes;  // bytes of records after this header
  uint64_t checksum;       // XXH3_64bits(payload)
  uint32_t sequence;       // 0, 1, 2, ... in write order
  uint32_t record_count;   // records in the payload
};
static_assert(sizeof(ChunkHeader) == 24);

/// How the stored bytes of a packed chunk encode its payload.
enum class ChunkCodec : uint8_t {
  kStored = 0,  // the stored bytes are the payload
  kZstd = 1,    // one zstd frame that decompresses to exactly payload_bytes bytes
};

/// Header of a packed chunk (format 1.2): the payload (records, as in a plain chunk) is stored
/// compressed. The checksum covers the stored bytes, so damage is found before decompressing.
struct PackedChunkHeader {
  uint32_t magic;          // kPackedChunkMagic
  uint32_t stored_bytes;   // bytes after this header (compressed payload); at most kMaxChunkPayload
  uint64_t checksum;       // XXH3_64bits(stored bytes)
  uint32_t sequence;       // 0, 1, 2, ... in write order (shared with plain chunks)
  uint32_t record_count;   // records in the decoded payload
  uint32_t payload_bytes;  // decoded payload size; at most kMaxChunkPayload
  uint8_t codec;           // ChunkCodec
  uint8_t reserved[3];     // 0
};
static_assert(sizeof(PackedChunkHeader) == 32);

enum class RecordType : uint16_t {
  kMetadata = 1,  // key/value pair about the process (MetadataBody + key + value bytes)
  kString = 2,    // interned string (StringBody + bytes)
  kScope = 3,     // range-tree node (ScopeBody)
  kLaunch = 4,    // one launch API call, once per correlation id (LaunchBody)
  kKernel = 5,    // one kernel execution from a CUPTI activity record (KernelBody)
  kRange = 6,     // one closed (or unclosed at exit) NVTX range instance (RangeBody)
  kStats = 7,     // counters, written in the final chunk (StatsBody)
  kEnd = 8,       // last record of a complete log (no body)
  kGraphNode = 9, // a CUDA graph kernel node created (stream capture or explicit) or cloned (GraphNodeBody), 1.1
  kMemOp = 10,    // one memcpy/memset executed on the GPU, from a CUPTI activity record (MemOpBody), 1.1
  kSegment = 11,  // one capture window (SegmentBody), written when the window closes, 1.2
  // 12-15: summary mode (KCOUNT_MODE=summary), 1.2. A snapshot is
  // SnapshotBegin, its rows, SnapshotEnd; each snapshot holds cumulative totals since the start of the run.
  kSnapshotBegin = 12,   // SnapshotBeginBody: time, sequence, row counts, whole-run totals
  kSnapshotScope = 13,   // SnapshotScopeBody: one range (scope) of the snapshot
  kSnapshotKernel = 14,  // SnapshotKernelBody: one (scope, kernel name) of the snapshot, or an unmatched kernel name
  kSnapshotEnd = 15,     // SnapshotEndBody: closes the snapshot; a snapshot without it is incomplete
  kLaunchBatch = 16,  // 1.2: up to kMaxBatchRecords launches, compact columns (collector/compact.h)
  kKernelBatch = 17,  // 1.2: kernels, compact columns
  kRangeBatch = 18,   // 1.2: ranges, compact columns
  // 19: reserved for a further compact encoding.
  kRangeCallbacks = 20,  // 1.4: kcount's own callbacks inside one range (RangeCallbacksBody), at the close
};

struct RecordHeader {
  uint16_t type;        // RecordType
  uint16_t reserved;    // 0
  uint32_t body_bytes;  // bytes after this header
};
static_assert(sizeof(RecordHeader) == 8);

struct MetadataBody {
  uint32_t key_bytes;  // followed by key bytes, then value bytes (the rest of the body)
};

struct StringBody {
  uint32_t string_id;  // followed by the string's bytes (the rest of the body), no terminator
};

/// Node of the range tree. A path such as step/gate is scope(gate) whose parent is scope(step).
struct ScopeBody {
  uint32_t scope_id;
  uint32_t parent_id;  // kRootScope for a top-level range
  uint32_t name_id;    // string id of the range's message
  uint32_t domain_id;  // string id of the NVTX domain's name; kNoString for the default domain
};
static_assert(sizeof(ScopeBody) == 16);

/// Which CUPTI callback domain a launch API belongs to.
enum class ApiDomain : uint8_t { kRuntime = 1, kDriver = 2 };

struct LaunchBody {
  uint64_t correlation_id;  // CUPTI correlation id, shared by the runtime call and the driver call inside
  uint64_t enter_ns;        // host clock (CLOCK_MONOTONIC ns) at API enter of the outermost call
  uint64_t exit_ns;         // host clock at API exit of the outermost call
  uint32_t scope_id;        // innermost NVTX range of the launching thread at API enter
  uint32_t thread_id;       // OS thread id (gettid) of the launching thread
  uint32_t api_id;          // string id of the outermost API's name, e.g. "cudaLaunchKernel"
  uint32_t cbid;            // CUPTI callback id of the outermost API
  uint8_t domain;           // ApiDomain of the outermost API
  uint8_t is_graph_launch;  // 1 for cudaGraphLaunch/cuGraphLaunch (one launch, many kernels)
  uint8_t flags;            // LaunchFlags (1.1; 0 in 1.0 logs)
  uint8_t reserved[5];
};

enum LaunchFlags : uint8_t {
  kLaunchCaptured = 1u << 0,  // issued during CUDA stream capture: recorded into a graph, not executed
  kLaunchMemOp = 1u << 1,     // a memcpy/memset API call (joined to MemOpBody records, not to kernels)
  kLaunchUntimed = 1u << 2,   // the call was not timed (KCOUNT_LAUNCH_TIMING=N in summary mode, one call in N
                              // is): enter_ns = exit_ns = 0. Library-internal: never in a trace log
};
static_assert(sizeof(LaunchBody) == 48);

struct KernelBody {
  uint64_t correlation_id;  // matches LaunchBody::correlation_id of the launch that issued it
  uint64_t start_ns;        // GPU start, converted by CUPTI to the host clock (CLOCK_MONOTONIC ns)
  uint64_t end_ns;          // GPU end, same clock
  uint64_t graph_node_id;   // CUDA graph node id, 0 when not launched from a graph
  uint32_t name_id;         // string id of the kernel's (mangled) name
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  int32_t grid[3];
  int32_t block[3];
  uint32_t graph_id;        // CUDA graph id, 0 when not launched from a graph
  uint32_t shared_bytes;    // static + dynamic shared memory per block
  uint32_t cluster[3];      // thread block cluster shape (0 when none)
  uint32_t registers;       // registers per thread
};
static_assert(sizeof(KernelBody) == 96);

enum RangeFlags : uint32_t {
  kRangeProcessWide = 1u << 0,  // nvtxRangeStart/End: not on a thread's stack, may end on another thread
  kRangeUnclosed = 1u << 1,     // still open when the log was closed; end_ns is the close time
  kRangeBeganOutsideWindow = 1u << 2,  // 1.2: pushed before the capture window it was closed in opened
};

struct RangeBody {
  uint64_t begin_ns;       // host clock at push/start
  uint64_t end_ns;         // host clock at pop/end
  uint32_t scope_id;       // the range's node in the range tree (its full path)
  uint32_t thread_id;      // thread that pushed/started it
  uint32_t end_thread_id;  // thread that popped/ended it
  uint32_t flags;          // RangeFlags
};
static_assert(sizeof(RangeBody) == 32);

/// Counters of the whole run; the reader sums them if several appear. 72 bytes in 1.0-1.1 and in the first
/// 1.2 logs; the not_written_* fields were appended in 1.2 (a reader takes them as 0 from a 72-byte body).
struct StatsBody {
  uint64_t launches;                // launch records handed to the writer (memcpy/memset calls included)
  uint64_t kernels;                 // kernel records handed to the writer
  uint64_t ranges;                  // range records handed to the writer
  uint64_t dropped_host_records;    // launches/ranges lost because the host buffer cap was reached
  uint64_t dropped_activity_records;  // CUPTI's count (cuptiActivityGetNumDroppedRecords)
  uint64_t activity_buffers_refused;  // buffer requests refused because the activity buffer cap was reached
  uint64_t nvtx_pop_underflow;      // pops with no range pushed on that thread and domain
  uint64_t late_activity_records;   // activity records delivered after the log was closed (lost)
  uint64_t bytes_dropped;           // bytes that could not be written (disk full, unwritable)
  // 1.2: records of the counts above that are not in the log (chunks kept out at KCOUNT_MAX_BYTES, or
  // refused by the file), by kind, as the writer counted them (LogWriter::droppedRecords).
  uint64_t not_written_launches;    // launch records, memcpy/memset calls included
  uint64_t not_written_mem_calls;   // of not_written_launches: memcpy/memset calls (kLaunchMemOp)
  uint64_t not_written_kernels;
  uint64_t not_written_ranges;
  uint64_t not_written_other;       // metadata, string, scope, graph-node, memory-operation, segment, snapshot
};
static_assert(sizeof(StatsBody) == 112);
/// Size of a Stats body without the not_written_* fields (1.0, 1.1, early 1.2): the least a reader accepts.
inline constexpr size_t kStatsBodyBytesV10 = 72;
static_assert(offsetof(StatsBody, not_written_launches) == kStatsBodyBytesV10);

/// A kernel node of a CUDA graph (CUPTI resource callbacks GRAPHNODE_CREATED / GRAPHNODE_CLONED). Kernels
/// replayed from an instantiated graph carry the node id of the clone; following original_node_id back
/// to the created node gives the range that was open when the kernel was captured (the capture path).
struct GraphNodeBody {
  uint64_t node_id;           // cuptiGetGraphNodeId of the node
  uint64_t original_node_id;  // for a clone: the node it was cloned from; 0 for a created node
  uint64_t correlation_id;    // launch API call that created it during stream capture; 0 otherwise
  uint32_t graph_id;          // cuptiGetGraphId of the graph holding the node
  uint32_t scope_id;          // innermost range of the creating thread (created nodes only)
  uint32_t thread_id;         // creating/cloning thread
  uint32_t reserved;
};
static_assert(sizeof(GraphNodeBody) == 40);

/// What a MemOp record spans on the GPU. kGraph (1.3, KCOUNT_GPU_TIME=graphs): one whole graph launch,
/// from CUPTI's GRAPH_TRACE activity record: its first node's start to its last node's end.
enum class MemOpKind : uint8_t { kMemcpy = 1, kMemset = 2, kGraph = 3 };

/// One memory operation executed on the GPU (CUPTI MEMCPY or MEMSET activity record), or (1.3) the GPU
/// span of one graph launch (MemOpKind::kGraph, CUPTI GRAPH_TRACE).
struct MemOpBody {
  uint64_t correlation_id;  // matches the LaunchBody (flag kLaunchMemOp, or a graph launch) of the API call
  uint64_t start_ns;        // GPU start, host clock (CLOCK_MONOTONIC ns)
  uint64_t end_ns;          // GPU end, same clock
  uint64_t bytes;           // bytes copied or set; 0 for kGraph
  uint32_t device_id;
  uint32_t stream_id;
  uint8_t kind;             // MemOpKind
  uint8_t copy_kind;        // CUpti_ActivityMemcpyKind for memcpy (1 HtoD, 2 DtoH, 8 DtoD, ...); 0 for memset
  uint8_t reserved[6];
};
static_assert(sizeof(MemOpBody) == 48);

/// Whether MemOp record `m` is a memory operation (memcpy, memset), counted in the memory operation totals;
/// a graph launch's GPU span (MemOpKind::kGraph) is not.
inline bool isMemoryOperation(const MemOpBody& m) { return m.kind != static_cast<uint8_t>(MemOpKind::kGraph); }

/// One capture window: the span of time during which the library recorded (KCOUNT_START, `kcount ctl
/// start/stop`, KCOUNT_CAPTURE_RANGE/DURATION). Written when the window closes, after every record of the
/// window. Launch, kernel and memory-operation records of the window have correlation ids in
/// [first_correlation_id, last_correlation_id]; ranges recorded in it end in [start_ns, stop_ns].
struct SegmentBody {
  uint64_t start_ns;              // host clock (CLOCK_MONOTONIC ns) when recording started
  uint64_t stop_ns;               // host clock when recording stopped
  uint64_t first_correlation_id;  // smallest correlation id of a launch recorded in the window; 0 if none
  uint64_t last_correlation_id;   // largest one; 0 if none
  uint32_t index;                 // 0, 1, 2, ... in the order windows opened in the process
  uint32_t reason_id;             // string id: why it started ("start", "ctl", "capture-range step 6-15", ...)
  uint32_t end_reason_id;         // string id: why it stopped ("ctl", "duration", "range end", "exit", ...)
  uint32_t flags;                 // SegmentFlags
};
static_assert(sizeof(SegmentBody) == 48);

enum SegmentFlags : uint32_t {
  kSegmentActivityDiscarded = 1u << 0,  // activity records outside the window's correlation ids were discarded
};

enum SnapshotFlags : uint32_t {
  kSnapshotFinal = 1u << 0,  // written by the final flush: in-flight launches and waiting kernels are resolved
};

/// Opens a summary-mode snapshot (1.2). All counts are cumulative since recording started, so the last
/// complete snapshot alone holds the run's totals (a cut or damaged tail loses only later snapshots).
struct SnapshotBeginBody {
  uint64_t time_ns;                  // host clock (CLOCK_MONOTONIC ns) when the snapshot was taken
  uint32_t sequence;                 // 0, 1, 2, ... in write order
  uint32_t flags;                    // SnapshotFlags
  uint32_t scope_rows;               // SnapshotScope records that follow
  uint32_t kernel_rows;              // SnapshotKernel records that follow
  uint64_t launches;                 // kernel launch calls (memcpy/memset calls not included)
  uint64_t kernels;                  // kernel activity records, matched or not
  uint64_t unmatched_kernels;        // kernels no launch matched within the correlation window
  uint64_t launches_without_kernel;  // launches (not captured, not memcpy/memset) that left the window unmatched
  uint64_t captured_launches;        // launches issued during stream capture
  uint64_t mem_ops;                  // memcpy/memset activity records, matched or not
  uint64_t unmatched_mem_ops;        // memory operations no memcpy/memset call matched
  uint64_t ranges;                   // range instances tallied
  uint64_t inflight_launches;        // launches still in the correlation window (0 in the final snapshot)
  uint64_t waiting_activity;         // kernels and memory operations waiting for their launch (0 in the final one)
  uint64_t dropped_tallies;          // events not tallied, or tallied without their kernel row: key cap reached
  uint64_t evicted_launches;         // launches pushed out of a full correlation window before they settled
  uint64_t unmatched_kernel_gpu_ns;  // GPU ns of the unmatched kernels
  // 1.2, appended: what dropped_tallies holds, by kind. A 128-byte body (kSnapshotBeginBytesV12, an earlier
  // writer) reads them as 0. dropped_tallies = dropped_range_instances + dropped_launches + dropped_kernels
  // + dropped_mem_ops + unnamed_kernels.
  uint64_t max_keys;                 // KCOUNT_MAX_KEYS the tallies were kept under (0: not said)
  uint64_t dropped_ranges;           // ranges (scopes) that got no tally row: their events are the four below
  uint64_t dropped_range_instances;  // instances of those ranges (in `ranges`, in no row)
  uint64_t dropped_launches;         // kernel launch calls made in those ranges (in `launches`, in no row)
  uint64_t dropped_kernels;          // kernels joined to those launches (in `kernels`, in no row)
  uint64_t dropped_mem_ops;          // memory operations joined to memcpy/memset calls in those ranges
  uint64_t unnamed_kernels;          // kernels counted in their range (or as unmatched) but not by name: no
                                     // room for their (range, kernel name) or unmatched-name row
};
static_assert(sizeof(SnapshotBeginBody) == 184);
/// Size of a SnapshotBegin body before the dropped-tally detail (max_keys and after) was appended.
inline constexpr size_t kSnapshotBeginBytesV12 = 128;
static_assert(offsetof(SnapshotBeginBody, max_keys) == kSnapshotBeginBytesV12);

enum SnapshotScopeFlags : uint32_t {
  /// The range got no tally row (KCOUNT_MAX_KEYS reached): every number of the row is 0 and its events
  /// count in SnapshotBeginBody's dropped_* fields. Written only for ranges that are ancestors of ranges
  /// with a row, which the tree shows.
  kSnapshotScopeTallyDropped = 1u << 0,
};

/// Cumulative numbers of one range (scope) in a snapshot; the same meaning as in a trace log's analysis.
struct SnapshotScopeBody {
  uint32_t scope_id;
  uint32_t flags;              // SnapshotScopeFlags (1.2; 0 from earlier writers)
  uint64_t instances;          // range instances closed (or unclosed at exit)
  uint64_t cpu_ns;             // sum of (end - begin) of those instances
  uint64_t launches;           // kernel launch calls made while this range was innermost
  uint64_t graph_launches;     // of which cudaGraphLaunch/cuGraphLaunch
  uint64_t captured_launches;  // of which issued during stream capture
  uint64_t launch_api_ns;      // sum of (exit - enter) of those launch calls
  uint64_t kernels;            // kernels joined to those launches
  uint64_t gpu_ns;             // sum of their (end - start)
  uint64_t memcpy_count, memcpy_bytes, memcpy_ns;
  uint64_t memset_count, memset_bytes, memset_ns;
  // 1.3, appended (a 120-byte body, kSnapshotScopeBytesV12, from earlier writers reads as 0): graph
  // launches with a GPU span (MemOpKind::kGraph) and the sum of those spans.
  uint64_t graph_gpu_launches, graph_gpu_ns;
};
static_assert(sizeof(SnapshotScopeBody) == 136);
inline constexpr size_t kSnapshotScopeBytesV12 = 120;
static_assert(offsetof(SnapshotScopeBody, graph_gpu_launches) == kSnapshotScopeBytesV12);

enum SnapshotKernelFlags : uint32_t {
  kSnapshotKernelUnmatched = 1u << 0,  // kernels of this name no launch matched; scope_id is 0 and meaningless
};

/// Cumulative tally of one kernel name within one range (scope) in a snapshot.
struct SnapshotKernelBody {
  uint32_t scope_id;
  uint32_t name_id;  // string id of the kernel's mangled name
  uint32_t flags;    // SnapshotKernelFlags
  uint32_t reserved;
  uint64_t count;    // kernels
  uint64_t gpu_ns;   // sum of (end - start)
  uint64_t min_ns;   // shortest kernel (end - start)
  uint64_t max_ns;   // longest kernel
};
static_assert(sizeof(SnapshotKernelBody) == 48);

/// Closes a snapshot: its sequence and the rows written (scope_rows + kernel_rows of the begin record).
struct SnapshotEndBody {
  uint32_t sequence;
  uint32_t rows;
};
static_assert(sizeof(SnapshotEndBody) == 8);

/// kcount's own cost inside one range (1.4), written once per range (scope) with a callback inside, at the
/// close, just before the final chunk: the callbacks
/// the library handled on the range's thread while an instance of it was open, summed over the instances
/// recorded (those of the capture windows, as Range records), its child ranges' included (inclusive); the
/// push and pop callbacks of the range itself are not (those of its child ranges are). `timed` of them were
/// timed (the library's random sample, about 1 in 64), `timed_ns` their summed duration. Process-wide ranges
/// (nvtxRangeStart/End) count nothing. A reader sums records that name the same scope.
struct RangeCallbacksBody {
  uint32_t scope_id;   // the range's node in the range tree (its full path)
  uint32_t reserved;   // 0
  uint64_t callbacks;  // callbacks handled inside the range's instances
  uint64_t timed;      // of them, timed (at most callbacks)
  uint64_t timed_ns;   // the timed ones' summed duration, ns
};
static_assert(sizeof(RangeCallbacksBody) == 32);

static_assert(std::is_trivially_copyable_v<LaunchBody> && std::is_trivially_copyable_v<KernelBody> &&
              std::is_trivially_copyable_v<RangeBody> && std::is_trivially_copyable_v<ScopeBody>);

}  // namespace kc
