#include "collector/log_reader.h"

#include <cstdio>

#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>

#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "collector/compact.h"
#include "collector/counted.h"
#include "collector/mapped_file.h"
#include "collector/run_files.h"

namespace kc {
namespace {

/// Most out-of-range references reported one by one; the rest are counted in one more issue.
constexpr size_t kMaxReferenceIssues = 16;

/// String and scope ids at or above kMaxIds are corrupt (the library's tables hand out no more). Ids are
/// the run's and sparse in a rotated part (it defines only those its records use), so the number of
/// definitions a file holds says nothing of how high they go: this bound, not the file's size, keeps
/// LogData::strings/scopes (indexed by id) at most kMaxIds long whatever a length or id field says.
constexpr uint32_t kIdLimit = kMaxIds;
/// Deepest range nesting scopePath() follows before giving up (corrupt parents must not loop).
constexpr int kMaxScopeDepth = 256;
/// Path prefix of a scope nested deeper than kMaxScopeDepth (a valid chain; the library drops ranges
/// nested deeper, so only a crafted log has one): its innermost kMaxScopeDepth names follow.
constexpr const char* kOuterRangesCut = "<outer ranges past 256 levels>/";

/// Bounds-checked view over bytes. Every read checks what remains; nothing reads past the span.
class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> bytes, uint64_t base = 0) : bytes_(bytes), base_(base) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  uint64_t offset() const { return base_ + pos_; }  // offset in the file
  void seek(size_t pos) { pos_ = pos <= bytes_.size() ? pos : bytes_.size(); }

  /// Copies sizeof(T) bytes into out; false (and nothing consumed) if fewer remain.
  template <typename T>
  bool read(T& out) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  /// Reads the first sizeof(T) bytes of a body of body_bytes (>= sizeof(T)), zero-filling nothing.
  std::span<const uint8_t> take(size_t n) {
    if (remaining() < n) return {};
    auto s = bytes_.subspan(pos_, n);
    pos_ += n;
    return s;
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t base_;
  size_t pos_ = 0;
};

void addIssue(LogData& log, ReadIssue::Severity sev, uint64_t offset, int64_t chunk, std::string msg) {
  log.issues.push_back(ReadIssue{sev, offset, chunk, std::move(msg)});
}
void error(LogData& log, uint64_t offset, int64_t chunk, std::string msg) {
  addIssue(log, ReadIssue::Severity::kError, offset, chunk, std::move(msg));
}
/// The first bytes of a file that is not a log, for the error message: hex, and as text when they are
/// printable ("23 21 2f 62 ... (\"#!/bin/sh\\n...\")").
std::string describeBytes(std::span<const uint8_t> b) {
  static const char* hex = "0123456789abcdef";
  std::string h, text;
  bool printable = true;
  for (uint8_t c : b) {
    if (!h.empty()) h += ' ';
    h += hex[c >> 4];
    h += hex[c & 15];
    if (c == '\n') text += "\\n";
    else if (c == '\t') text += "\\t";
    else if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') text += static_cast<char>(c);
    else printable = false;
  }
  return printable ? h + " (\"" + text + "\")" : h;
}

void warning(LogData& log, uint64_t offset, int64_t chunk, std::string msg) {
  addIssue(log, ReadIssue::Severity::kWarning, offset, chunk, std::move(msg));
}

/// Start of the reader's warning for a log without End record whose chunks all verified to the end of
/// the file: the process did not close it (markCutShortPart() finds it by this text).
constexpr std::string_view kNoEndRecordText = "log has no end record: ";
/// Start of the warning for a log without End record whose bytes after the last intact chunk are damaged
/// or cut short: the End record may have been among them (markCutShortPart() finds it too).
constexpr std::string_view kNoIntactEndRecordText = "log has no intact end record: ";

/// "last intact chunk N ends at byte B" or "no intact chunk".
std::string lastIntactText(const LogData& log) {
  return log.last_intact_chunk >= 0 ? "last intact chunk " + std::to_string(log.last_intact_chunk) + " ends at byte " +
                                          std::to_string(log.last_intact_end)
                                    : std::string("no intact chunk");
}

const char* recordTypeName(uint16_t type) {
  switch (static_cast<RecordType>(type)) {
    case RecordType::kMetadata: return "metadata";
    case RecordType::kString: return "string";
    case RecordType::kScope: return "scope";
    case RecordType::kLaunch: return "launch";
    case RecordType::kKernel: return "kernel";
    case RecordType::kRange: return "range";
    case RecordType::kStats: return "stats";
    case RecordType::kEnd: return "end";
    case RecordType::kGraphNode: return "graph node";
    case RecordType::kMemOp: return "memory operation";
    case RecordType::kSegment: return "segment";
    case RecordType::kSnapshotBegin: return "snapshot begin";
    case RecordType::kSnapshotScope: return "snapshot scope";
    case RecordType::kSnapshotKernel: return "snapshot kernel";
    case RecordType::kSnapshotEnd: return "snapshot end";
    case RecordType::kLaunchBatch: return "launch batch";
    case RecordType::kKernelBatch: return "kernel batch";
    case RecordType::kRangeBatch: return "range batch";
  }
  return "unknown";
}

/// Known body size of a record type; 0 for End and for types this reader does not know.
size_t knownBodyBytes(uint16_t type) {
  switch (static_cast<RecordType>(type)) {
    case RecordType::kMetadata: return sizeof(MetadataBody);
    case RecordType::kString: return sizeof(StringBody);
    case RecordType::kScope: return sizeof(ScopeBody);
    case RecordType::kLaunch: return sizeof(LaunchBody);
    case RecordType::kKernel: return sizeof(KernelBody);
    case RecordType::kRange: return sizeof(RangeBody);
    case RecordType::kStats: return kStatsBodyBytesV10;  // the not_written_* fields came later (1.2)
    case RecordType::kEnd: return 0;
    case RecordType::kGraphNode: return sizeof(GraphNodeBody);
    case RecordType::kMemOp: return sizeof(MemOpBody);
    case RecordType::kSegment: return sizeof(SegmentBody);
    case RecordType::kSnapshotBegin: return kSnapshotBeginBytesV12;  // the dropped-tally detail came later
    case RecordType::kSnapshotScope: return sizeof(SnapshotScopeBody);
    case RecordType::kSnapshotKernel: return sizeof(SnapshotKernelBody);
    case RecordType::kSnapshotEnd: return sizeof(SnapshotEndBody);
    case RecordType::kLaunchBatch:
    case RecordType::kKernelBatch:
    case RecordType::kRangeBatch: return 0;  // variable length, checked by the batch decoder
  }
  return 0;
}

/// The parts of a plain or packed chunk header the chunk walk needs.
struct ChunkInfo {
  bool packed = false;
  size_t header_bytes = 0;    // 24 plain, 32 packed
  uint32_t stored_bytes = 0;  // bytes after the header
  uint64_t checksum = 0;
  uint32_t record_count = 0;
  uint32_t payload_bytes = 0;  // decoded size (== stored_bytes for a plain chunk)
  uint8_t codec = 0;
  uint32_t sequence = 0;  // the writer's chunk number in the file: 0, 1, 2, ...
};

/// Reads the chunk header at `at` if its magic is one of the two chunk magics and the whole header fits.
bool chunkHeaderAt(std::span<const uint8_t> bytes, size_t at, ChunkInfo& c) {
  if (at > bytes.size() || bytes.size() - at < sizeof(uint32_t)) return false;
  uint32_t magic;
  std::memcpy(&magic, bytes.data() + at, 4);
  if (magic == kChunkMagic) {
    if (bytes.size() - at < sizeof(ChunkHeader)) return false;
    ChunkHeader h;
    std::memcpy(&h, bytes.data() + at, sizeof(h));
    c = ChunkInfo{false, sizeof(ChunkHeader), h.payload_bytes, h.checksum, h.record_count, h.payload_bytes, 0,
                  h.sequence};
    return true;
  }
  if (magic == kPackedChunkMagic) {
    if (bytes.size() - at < sizeof(PackedChunkHeader)) return false;
    PackedChunkHeader h;
    std::memcpy(&h, bytes.data() + at, sizeof(h));
    c = ChunkInfo{true, sizeof(PackedChunkHeader), h.stored_bytes, h.checksum, h.record_count, h.payload_bytes,
                  h.codec, h.sequence};
    return true;
  }
  return false;
}

/// True if a chunk (plain or packed) whose header starts at `at` is complete within bytes, within the
/// size caps, and its checksum verifies.
bool chunkVerifies(std::span<const uint8_t> bytes, size_t at) {
  ChunkInfo c;
  if (!chunkHeaderAt(bytes, at, c)) return false;
  if (c.stored_bytes > kMaxChunkPayload || c.payload_bytes > kMaxChunkPayload) return false;
  if (bytes.size() - at - c.header_bytes < c.stored_bytes) return false;
  return XXH3_64bits(bytes.data() + at + c.header_bytes, c.stored_bytes) == c.checksum;
}

/// `into` += `s`, field by field (the reader sums the Stats records of a log, and of rotated parts).
void sumStats(StatsBody& into, const StatsBody& s) {
  into.launches += s.launches;
  into.kernels += s.kernels;
  into.ranges += s.ranges;
  into.dropped_host_records += s.dropped_host_records;
  into.dropped_activity_records += s.dropped_activity_records;
  into.activity_buffers_refused += s.activity_buffers_refused;
  into.nvtx_pop_underflow += s.nvtx_pop_underflow;
  into.late_activity_records += s.late_activity_records;
  into.bytes_dropped += s.bytes_dropped;
  into.not_written_launches += s.not_written_launches;
  into.not_written_mem_calls += s.not_written_mem_calls;
  into.not_written_kernels += s.not_written_kernels;
  into.not_written_ranges += s.not_written_ranges;
  into.not_written_other += s.not_written_other;
}

/// Sets log.strings_missing / scopes_missing from which ids a record defined (`str_def`, `scope_def`: at
/// least as long as the tables; id 0 always counts as defined); both left empty when none is missing.
void markMissing(LogData& log, const std::vector<bool>& str_def, const std::vector<bool>& scope_def) {
  bool any_missing = false;
  log.strings_missing.assign(log.strings.size(), false);
  log.scopes_missing.assign(log.scopes.size(), false);
  for (size_t id = 1; id < log.strings.size(); ++id) any_missing |= (log.strings_missing[id] = !str_def[id]);
  for (size_t id = 1; id < log.scopes.size(); ++id) any_missing |= (log.scopes_missing[id] = !scope_def[id]);
  if (!any_missing) {
    log.strings_missing.clear();
    log.scopes_missing.clear();
  }
}

/// True if a chunk header (plain or packed) starts at `at` whose lengths are within the caps and whose
/// chunk fits in bytes: the place where a chunk plausibly starts, whether or not its checksum verifies.
bool chunkHeaderPlausible(std::span<const uint8_t> bytes, size_t at) {
  ChunkInfo c;
  if (!chunkHeaderAt(bytes, at, c)) return false;
  if (c.stored_bytes > kMaxChunkPayload || c.payload_bytes > kMaxChunkPayload) return false;
  return bytes.size() - at - c.header_bytes >= c.stored_bytes;
}

/// Bytes a scan over damaged bytes (resync, the skipped-chunk walk) goes before it tells the mapped file
/// it is done with them: a long damaged or zero-filled tail is not held in memory as it is scanned.
constexpr size_t kScanReleaseStep = size_t{4} << 20;

/// Offset of the first byte at or after `at` and before `end` that may start a chunk header (both chunk
/// magics begin with the same byte), or `end` if none.
size_t nextChunkCandidate(std::span<const uint8_t> bytes, size_t at, size_t end) {
  static_assert((kChunkMagic & 0xff) == (kPackedChunkMagic & 0xff), "chunk magics share their first byte");
  if (at >= end) return end;
  const void* hit = std::memchr(bytes.data() + at, static_cast<int>(kChunkMagic & 0xff), end - at);
  return hit == nullptr ? end : static_cast<size_t>(static_cast<const uint8_t*>(hit) - bytes.data());
}

/// Told [from, to) of the bytes a scan over damaged bytes has passed (a mapped file drops those pages).
using ScanDrop = std::function<void(size_t, size_t)>;

/// nextChunkCandidate() over [at, end), kScanReleaseStep bytes at a time: each time the scan has passed
/// kScanReleaseStep bytes since `dropped_to`, they go to `drop` (may be empty) and `dropped_to` moves on.
/// Returns the candidate, or `end` if none.
size_t scanForChunk(std::span<const uint8_t> bytes, size_t at, size_t end, size_t& dropped_to, const ScanDrop& drop) {
  while (at < end) {
    const size_t window_end = std::min(end, at + kScanReleaseStep);
    const size_t c = nextChunkCandidate(bytes, at, window_end);
    if (drop && c - dropped_to >= kScanReleaseStep) {
      drop(dropped_to, c);
      dropped_to = c;
    }
    if (c < window_end) return c;
    at = window_end;
  }
  return end;
}

/// True if bytes [from, end of file) are all zero. `drop` (may be empty) is told the bytes passed, one
/// kScanReleaseStep window at a time, so a long zero tail of a mapped file is not all resident at once.
bool zeroFrom(std::span<const uint8_t> bytes, size_t from, const ScanDrop& drop) {
  for (size_t at = from; at < bytes.size();) {
    const size_t window_end = std::min(bytes.size(), at + kScanReleaseStep);
    if (std::any_of(bytes.begin() + at, bytes.begin() + window_end, [](uint8_t b) { return b != 0; })) return false;
    if (drop) drop(at, window_end);
    at = window_end;
  }
  return true;
}

/// Offset of the first kcount file header magic (kLogMagic) in [from, to), or `to` if none. Searched
/// kScanReleaseStep bytes at a time (windows overlap by the magic's length less one), each window's bytes
/// then going to `drop` (may be empty), as scanForChunk() does.
size_t findLogMagic(std::span<const uint8_t> bytes, size_t from, size_t to, const ScanDrop& drop) {
  to = std::min(to, bytes.size());
  for (size_t at = from; at < to;) {
    const size_t window_end = std::min(to, at + kScanReleaseStep + sizeof(kLogMagic) - 1);
    const auto begin = bytes.begin() + static_cast<std::ptrdiff_t>(at);
    const auto end = bytes.begin() + static_cast<std::ptrdiff_t>(window_end);
    const auto hit = std::search(begin, end, std::begin(kLogMagic), std::end(kLogMagic));
    if (hit != end) return static_cast<size_t>(hit - bytes.begin());
    if (window_end == to) break;
    const size_t next = window_end - (sizeof(kLogMagic) - 1);
    if (drop) drop(at, next);
    at = next;
  }
  return to;
}

/// True if records laid end to end fill `payload` exactly: each record header has a type (not 0) and a
/// body length that leads to the next header or to the payload's end. Reads one 8-byte header per record, not the bodies.
bool recordsChain(std::span<const uint8_t> payload) {
  for (size_t at = 0; at < payload.size();) {
    if (payload.size() - at < sizeof(RecordHeader)) return false;
    RecordHeader rh;
    std::memcpy(&rh, payload.data() + at, sizeof(rh));
    at += sizeof(RecordHeader);
    if (rh.type == 0) return false;  // record types start at 1 (a zero-filled payload stops here)
    if (rh.body_bytes > payload.size() - at) return false;
    at += rh.body_bytes;
  }
  return true;
}

/// Cheap checks a candidate chunk that fits in bytes must pass before its checksum is computed during a
/// resync: a plain (or stored) payload's records chain to its end, and a zstd payload starts with a zstd
/// frame of the announced size. A chunk the writer wrote passes them (a chunk that fails them could not
/// be decoded either). The payload of a fake header in damaged bytes (any 4 bytes equal to a chunk magic)
/// fails them at its first record, mostly: so a damaged stretch holding many such headers, each claiming
/// megabytes, costs a record walk per header instead of a checksum of megabytes per header.
bool chunkStructureFits(std::span<const uint8_t> bytes, size_t at, const ChunkInfo& c) {
  const auto stored = bytes.subspan(at + c.header_bytes, c.stored_bytes);
  if (!c.packed || c.codec == static_cast<uint8_t>(ChunkCodec::kStored)) return recordsChain(stored);
  if (c.codec == static_cast<uint8_t>(ChunkCodec::kZstd)) {
    const unsigned long long size = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (size == ZSTD_CONTENTSIZE_ERROR) return false;
    return size == ZSTD_CONTENTSIZE_UNKNOWN || size == c.payload_bytes;
  }
  return true;  // a codec this reader does not know: only the checksum tells
}

/// Offset of the first chunk at or after `from` whose checksum verifies, or bytes.size() if none.
/// `drop` (may be empty) is told the bytes the scan has passed (scanForChunk). A candidate is checksummed
/// only when chunkStructureFits(): the checksum's cost is its whole claimed length, up to 16 MiB, and
/// damaged bytes may hold a chunk magic every few bytes.
size_t resync(std::span<const uint8_t> bytes, size_t from, const ScanDrop& drop = {}) {
  uint8_t magic[4], packed[4];
  std::memcpy(magic, &kChunkMagic, 4);
  std::memcpy(packed, &kPackedChunkMagic, 4);
  size_t dropped_to = from;
  for (size_t at = from; at + sizeof(ChunkHeader) <= bytes.size(); ++at) {
    at = scanForChunk(bytes, at, bytes.size(), dropped_to, drop);
    if (at + sizeof(ChunkHeader) > bytes.size()) break;
    ChunkInfo c;
    if ((std::memcmp(bytes.data() + at, magic, 4) == 0 || std::memcmp(bytes.data() + at, packed, 4) == 0) &&
        chunkHeaderPlausible(bytes, at) && chunkHeaderAt(bytes, at, c) && chunkStructureFits(bytes, at, c) &&
        chunkVerifies(bytes, at))
      return at;
  }
  return bytes.size();
}

template <typename T>
T prefix(std::span<const uint8_t> body) {
  T out{};
  std::memcpy(&out, body.data(), sizeof(T));  // caller checked body.size() >= sizeof(T)
  return out;
}

/// A snapshot being decoded: rows are collected until its SnapshotEnd, then it joins LogData::snapshots.
struct OpenSnapshot {
  bool open = false;
  SnapshotData data;
};

/// A snapshot that never got its SnapshotEnd (or whose rows do not add up): reported, not used.
void dropSnapshot(LogData& log, OpenSnapshot& snap, const std::string& why) {
  ++log.incomplete_snapshots;
  const SnapshotData& d = snap.data;
  warning(log, d.offset, d.chunk,
          "snapshot " + std::to_string(d.begin.sequence) + " at byte " + std::to_string(d.offset) + " is incomplete (" +
              why + ", " + std::to_string(d.scopes.size() + d.kernels.size()) + " of " +
              std::to_string(uint64_t(d.begin.scope_rows) + d.begin.kernel_rows) + " rows read); " +
              (log.snapshots.empty() ? std::string("no complete snapshot before it")
                                     : "the last complete one before it is snapshot " +
                                           std::to_string(log.snapshots.back().begin.sequence) + " at byte " +
                                           std::to_string(log.snapshots.back().offset)));
  snap.open = false;
  snap.data = SnapshotData{};
}

/// One pass over a log: the chunk walk's record decoder, with the state that must outlive a chunk (the
/// batch buffers, the zstd context, the references to ids not defined yet). Fills LogData and feeds the
/// visitor.
class Decoder {
 public:
  Decoder(LogData& log, const ReadOptions& options) : log_(log), opt_(options) {}
  ~Decoder() {
    if (zstd_ != nullptr) ZSTD_freeDCtx(zstd_);
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  /// Decodes the records of one verified payload. Returns false if a bad record stopped the chunk.
  /// `base` is the file offset of the payload (plain chunk) or 0 (packed chunk: offsets are within the
  /// decoded payload, issues name the chunk's offset `chunk_at`).
  bool decodePayload(std::span<const uint8_t> payload, uint64_t base, uint64_t chunk_at, int64_t chunk,
                     uint32_t announced_records, bool packed);
  /// Decompresses a verified packed chunk's stored bytes into the reusable payload buffer. Returns false,
  /// with the error issue added, if the codec is unknown or the bytes do not decode to payload_bytes.
  bool unpack(const ChunkInfo& c, std::span<const uint8_t> stored, uint64_t chunk_at, int64_t chunk,
              std::span<const uint8_t>& payload);
  /// Reports references to ids past every definition (after the last chunk).
  void checkReferences();
  /// Where a record noted by setRecordAt() lies, for messages: "at byte B in chunk K"; "in packed chunk K at
  /// byte B" (the chunk's offset: a packed chunk's records have no file offset of their own); "" when not
  /// known (ReadIssue::kNoOffset).
  std::string recordPlace(uint64_t at, int64_t chunk) const {
    if (at == ReadIssue::kNoOffset) return {};
    const bool packed = chunk >= 0 && static_cast<size_t>(chunk) < packed_chunk_.size() &&
                        packed_chunk_[static_cast<size_t>(chunk)];
    return packed ? "in packed chunk " + std::to_string(chunk) + " at byte " + std::to_string(at)
                  : "at byte " + std::to_string(at) + " in chunk " + std::to_string(chunk);
  }
  /// After the last chunk: a snapshot still open was cut off (reported, not used). If the log's End record
  /// was read, the file does not end inside the snapshot: the library closed the log after the rest of
  /// it was not written, and the metadata and Stats record of the final chunk say why (LogData::
  /// snapshot_cut_at_end).
  /// After a chunk's records: marks where the windows of the Segment records it held end
  /// (LogData::segment_marks) and hands those records to the visitor.
  void endChunk() {
    if (segments_in_chunk_ == 0) return;
    const LogData::RecordMark mark{log_.launch_records, log_.kernel_records, log_.mem_op_records};
    for (size_t i = log_.segments.size() - segments_in_chunk_; i < log_.segments.size(); ++i) {
      log_.segment_marks.push_back(mark);
      if (opt_.visitor) opt_.visitor->segment(log_.segments[i]);
    }
    segments_in_chunk_ = 0;
  }
  void finishSnapshots() {
    finishUnknownRecords();
    if (!snap_.open) return;
    if (!log_.complete) {
      dropSnapshot(log_, snap_, "the log ends inside it");
      return;
    }
    const SnapshotData& d = snap_.data;
    auto& cut = log_.snapshot_cut_at_end;
    cut.open_at_end = true;
    cut.final = (d.begin.flags & kSnapshotFinal) != 0;
    cut.sequence = d.begin.sequence;
    cut.rows_read = d.scopes.size() + d.kernels.size();
    cut.rows = uint64_t(d.begin.scope_rows) + d.begin.kernel_rows;
    const StatsBody& st = log_.stats;
    const bool not_written = st.not_written_launches + st.not_written_kernels + st.not_written_ranges +
                                 st.not_written_other + st.bytes_dropped > 0;
    dropSnapshot(log_, snap_,
                 log_.meta("records_not_written").find("KCOUNT_MAX_BYTES") != std::string::npos
                     ? "cut at the size cap (KCOUNT_MAX_BYTES): the rest was kept out, and the log's End record "
                       "follows"
                 : not_written ? "cut where the file refused the rest (disk full or unwritable), and the log's End "
                                 "record follows"
                               : "its end record is missing, though the log's End record follows");
  }

 private:
  /// Location of the record being decoded (file offset, or the packed chunk's offset), for references.
  void setRecordAt(uint64_t at, int64_t chunk) {
    rec_at_ = at;
    rec_chunk_ = chunk;
  }
  void refString(uint32_t id, const char* kind, uint64_t index) {
    if (id != kNoString && (id >= str_def_.size() || !str_def_[id])) noteRef(true, id, kind, index);
  }
  void refScope(uint32_t id, const char* kind, uint64_t index) {
    if (id != kRootScope && (id >= scope_def_.size() || !scope_def_[id])) {
      markScopeRef(id);
      noteRef(false, id, kind, index);
    }
  }
  /// Notes a scope id used before (or without) its definition, for LogData::undefined_scope_refs: every
  /// such id below kMaxIds, whatever refs_ can list (a bitmap of at most 128 KiB).
  void markScopeRef(uint32_t id) {
    if (id == kRootScope || id >= kIdLimit || (id < scope_def_.size() && scope_def_[id])) return;
    if (scope_ref_.size() <= id) scope_ref_.resize(id + 1);
    scope_ref_[id] = true;
  }
  void defineString(uint32_t id) {
    if (str_def_.size() <= id) str_def_.resize(id + 1);
    str_def_[id] = true;
  }
  void defineScope(uint32_t id) {
    if (scope_def_.size() <= id) scope_def_.resize(id + 1);
    scope_def_[id] = true;
    if (scope_at_.size() <= id) scope_at_.resize(id + 1);
    scope_at_[id] = {rec_at_, rec_chunk_};
  }
  void checkScopeTree();
  void noteRef(bool is_string, uint32_t id, const char* kind, uint64_t index);
  void addLaunches(std::span<const LaunchBody> v);
  void addKernels(std::span<const KernelBody> v);
  void addRanges(std::span<const RangeBody> v);
  void addStats(const StatsBody& s);

  LogData& log_;
  const ReadOptions& opt_;
  ZSTD_DCtx* zstd_ = nullptr;
  OpenSnapshot snap_;                   // summary mode: a snapshot may span chunks
  // Records of a type this reader does not know (a later minor version's, or a crafted file's): skipped,
  // counted, and the first named once the log is read (finishUnknownRecords()).
  uint64_t unknown_records_ = 0;
  uint16_t unknown_first_type_ = 0;
  uint64_t unknown_first_at_ = ReadIssue::kNoOffset;
  int64_t unknown_first_chunk_ = -1;
  void noteUnknownRecord(uint16_t type) {
    if (unknown_records_++ == 0) {
      unknown_first_type_ = type;
      unknown_first_at_ = rec_at_;
      unknown_first_chunk_ = rec_chunk_;
    }
  }
  /// One warning for the records skipped as of unknown type, at the first of them.
  void finishUnknownRecords() {
    if (unknown_records_ == 0) return;
    const bool newer = log_.major == kLogMajor && log_.minor > kLogMinor;
    warning(log_, unknown_first_at_, unknown_first_chunk_,
            std::to_string(unknown_records_) + (unknown_records_ == 1 ? " record" : " records") +
                " of a type this reader does not know skipped (the first, type " + std::to_string(unknown_first_type_) +
                ", " + recordPlace(unknown_first_at_, unknown_first_chunk_) + ")" +
                (newer ? ": the log's format " + std::to_string(log_.major) + "." + std::to_string(log_.minor) +
                             " is newer than this reader's " + std::to_string(kLogMajor) + "." +
                             std::to_string(kLogMinor)
                       : ""));
  }
  uint64_t decoded_bytes_ = 0;          // payload bytes decompressed from packed chunks so far
  std::vector<uint8_t> unpacked_;       // decoded payload of the current packed chunk
  std::vector<LaunchBody> launch_buf_;  // one decoded batch, when not kept in LogData
  std::vector<KernelBody> kernel_buf_;
  std::vector<RangeBody> range_buf_;
  std::vector<bool> packed_chunk_;  // packed_chunk_[k]: chunk k was a packed one (its records have no file offset)

  struct Ref {
    uint64_t records = 0;    // records referring to the id
    const char* first_kind;  // the first of them: record kind and index among the records of that kind
    uint64_t first_index;
    uint64_t first_at = ReadIssue::kNoOffset;  // its byte offset (packed chunk: the chunk's), or kNoOffset
    int64_t first_chunk = -1;
  };
  std::vector<bool> str_def_, scope_def_;  // ids a String / Scope record defined
  std::vector<bool> scope_ref_;            // scope ids used while not (yet) defined (markScopeRef())
  std::vector<std::pair<uint64_t, int64_t>> scope_at_;  // where each defined scope's record is (offset, chunk)
  uint64_t rec_at_ = ReadIssue::kNoOffset;
  size_t segments_in_chunk_ = 0;  // Segment records of the chunk being decoded (endChunk())
  int64_t rec_chunk_ = -1;
  /// References to ids not defined when the record was read: (is_string, id) -> references. Definitions
  /// normally come first, so this stays empty; checkReferences() keeps those still undefined at the end.
  std::map<std::pair<bool, uint32_t>, Ref> refs_;
  uint64_t refs_unlisted_ = 0;  // references to further ids once refs_ holds kMaxPendingRefIds
  static constexpr size_t kMaxPendingRefIds = 4096;
};

void Decoder::noteRef(bool is_string, uint32_t id, const char* kind, uint64_t index) {
  auto it = refs_.find({is_string, id});
  if (it == refs_.end()) {
    if (refs_.size() >= kMaxPendingRefIds) {
      ++refs_unlisted_;
      return;
    }
    it = refs_.emplace(std::make_pair(is_string, id), Ref{0, kind, index, rec_at_, rec_chunk_}).first;
  }
  ++it->second.records;
}

void Decoder::addLaunches(std::span<const LaunchBody> v) {
  uint64_t i = log_.launch_records;
  for (const LaunchBody& l : v) {
    refScope(l.scope_id, "launch", i);
    refString(l.api_id, "launch", i);
    if (l.flags & kLaunchMemOp) ++log_.mem_call_records;
    ++i;
  }
  log_.launch_records = i;
  if (opt_.visitor) opt_.visitor->launches(v);
}

void Decoder::addKernels(std::span<const KernelBody> v) {
  uint64_t i = log_.kernel_records;
  for (const KernelBody& k : v) refString(k.name_id, "kernel", i++);
  log_.kernel_records = i;
  if (opt_.visitor) opt_.visitor->kernels(v);
}

void Decoder::addRanges(std::span<const RangeBody> v) {
  uint64_t i = log_.range_records;
  for (const RangeBody& r : v) refScope(r.scope_id, "range", i++);
  log_.range_records = i;
  if (opt_.visitor) opt_.visitor->ranges(v);
}

void Decoder::addStats(const StatsBody& s) {
  sumStats(log_.stats, s);
  log_.has_stats = true;
}

bool Decoder::unpack(const ChunkInfo& c, std::span<const uint8_t> stored, uint64_t chunk_at, int64_t chunk,
                     std::span<const uint8_t>& payload) {
  const std::string where = "chunk " + std::to_string(chunk) + " at byte " + std::to_string(chunk_at);
  if (c.codec == static_cast<uint8_t>(ChunkCodec::kStored)) {
    if (c.payload_bytes != stored.size()) {
      error(log_, chunk_at, chunk,
            "stored " + where + " announces " + std::to_string(c.payload_bytes) + " payload bytes but holds " +
                std::to_string(stored.size()));
      return false;
    }
    payload = stored;
    return true;
  }
  if (c.codec != static_cast<uint8_t>(ChunkCodec::kZstd)) {
    error(log_, chunk_at, chunk,
          where + " uses compression codec " + std::to_string(c.codec) +
              ", which this reader does not know (it knows 0 = stored, 1 = zstd)");
    return false;
  }
  if (zstd_ == nullptr) zstd_ = ZSTD_createDCtx();
  if (zstd_ == nullptr) throw std::bad_alloc();
  // payload_bytes was checked against kMaxChunkPayload: a lying size cannot make this allocate more.
  unpacked_.resize(c.payload_bytes);
  const size_t n = ZSTD_decompressDCtx(zstd_, unpacked_.data(), unpacked_.size(), stored.data(), stored.size());
  if (ZSTD_isError(n)) {
    error(log_, chunk_at, chunk,
          where + ": zstd cannot decompress the payload (" + ZSTD_getErrorName(n) + "; announced " +
              std::to_string(c.payload_bytes) + " bytes)");
    return false;
  }
  if (n != c.payload_bytes) {
    error(log_, chunk_at, chunk,
          where + " announces " + std::to_string(c.payload_bytes) + " payload bytes, zstd decompressed " +
              std::to_string(n));
    return false;
  }
  payload = std::span<const uint8_t>(unpacked_.data(), n);
  return true;
}

bool Decoder::decodePayload(std::span<const uint8_t> payload, uint64_t base, uint64_t chunk_at, int64_t chunk,
                            uint32_t announced_records, bool packed) {
  LogData& log = log_;
  // Ids are bounded by the bytes that could have defined them: the file, plus what packed chunks
  // decompressed to so far (a compressed file defines more ids than its size alone allows).
  if (packed) {
    decoded_bytes_ += payload.size();
    if (chunk >= 0) {
      if (packed_chunk_.size() <= static_cast<size_t>(chunk)) packed_chunk_.resize(static_cast<size_t>(chunk) + 1);
      packed_chunk_[static_cast<size_t>(chunk)] = true;
    }
  }
  Cursor c(payload, base);
  uint32_t records = 0;
  // Offsets in a packed chunk's decoded payload are not file offsets: issues there name the chunk's
  // header offset and the record's position in the decoded payload.
  auto at_text = [&](uint64_t at) {
    return packed ? "decoded byte " + std::to_string(at) + " of packed chunk " + std::to_string(chunk) +
                        " (chunk at byte " + std::to_string(chunk_at) + ")"
                  : "byte " + std::to_string(at);
  };
  auto issue_at = [&](uint64_t at) { return packed ? chunk_at : at; };
  while (c.remaining() > 0) {
    const uint64_t at = c.offset();
    RecordHeader rh;
    if (!c.read(rh)) {
      error(log, issue_at(at), chunk,
            "record " + std::to_string(records) + " in chunk " + std::to_string(chunk) + " at " + at_text(at) +
                ": record header needs 8 bytes, " + std::to_string(c.remaining()) + " remain in the chunk");
      return false;
    }
    if (rh.body_bytes > c.remaining()) {
      error(log, issue_at(at), chunk,
            std::string(recordTypeName(rh.type)) + " record " + std::to_string(records) + " in chunk " +
                std::to_string(chunk) + " at " + at_text(at) + " announces " + std::to_string(rh.body_bytes) +
                " body bytes, " + std::to_string(c.remaining()) + " remain in the chunk");
      return false;
    }
    std::span<const uint8_t> body = c.take(rh.body_bytes);
    ++records;
    setRecordAt(issue_at(at), chunk);
    const size_t need = knownBodyBytes(rh.type);
    if (body.size() < need) {
      error(log, issue_at(at), chunk,
            std::string(recordTypeName(rh.type)) + " record in chunk " + std::to_string(chunk) + " at " +
                at_text(at) + " has a body of " + std::to_string(body.size()) + " bytes, needs " +
                std::to_string(need));
      return false;
    }
    switch (static_cast<RecordType>(rh.type)) {
      case RecordType::kMetadata: {
        auto m = prefix<MetadataBody>(body);
        auto rest = body.subspan(sizeof(MetadataBody));
        if (m.key_bytes > rest.size()) {
          error(log, issue_at(at), chunk,
                "metadata record at " + at_text(at) + " announces a key of " + std::to_string(m.key_bytes) +
                    " bytes, the body holds " + std::to_string(rest.size()));
          break;
        }
        const auto* p = reinterpret_cast<const char*>(rest.data());
        const size_t key_len = std::min<size_t>(m.key_bytes, kMaxStringBytes);
        const size_t value_len = std::min<size_t>(rest.size() - m.key_bytes, kMaxStringBytes);
        log.metadata.emplace_back(std::string(p, key_len), std::string(p + m.key_bytes, value_len));
        // The library writes `mode` first thing, so a summary-mode log is known as one before its first
        // snapshot (one KCOUNT_INTERVAL after recording starts) exists.
        if (log.metadata.back().first == "mode" && log.metadata.back().second == "summary") log.summary_mode = true;
        break;
      }
      case RecordType::kString: {
        auto s = prefix<StringBody>(body);
        auto text = body.subspan(sizeof(StringBody));
        if (text.size() > kMaxStringBytes) text = text.subspan(0, kMaxStringBytes);
        if (s.string_id >= kIdLimit) {
          error(log, issue_at(at), chunk,
                "string id " + std::to_string(s.string_id) + " at " + at_text(at) + " is out of range (ids are below " +
                    std::to_string(kIdLimit) + ")");
          break;
        }
        if (s.string_id == kNoString) break;  // id 0 is always ""
        if (log.strings.size() <= s.string_id) log.strings.resize(s.string_id + 1);
        log.strings[s.string_id].assign(reinterpret_cast<const char*>(text.data()), text.size());
        defineString(s.string_id);
        break;
      }
      case RecordType::kScope: {
        auto s = prefix<ScopeBody>(body);
        if (s.scope_id >= kIdLimit) {
          error(log, issue_at(at), chunk,
                "scope id " + std::to_string(s.scope_id) + " at " + at_text(at) + " is out of range (ids are below " +
                    std::to_string(kIdLimit) + ")");
          break;
        }
        if (s.scope_id == kRootScope) break;  // the root is implicit and stays all zero
        if (log.scopes.size() <= s.scope_id) log.scopes.resize(s.scope_id + 1);
        log.scopes[s.scope_id] = s;
        defineScope(s.scope_id);
        // A scope record usually follows the definitions it refers to; those still missing at the end of
        // the log are reported by checkReferences().
        refString(s.name_id, "scope", s.scope_id);
        refString(s.domain_id, "scope", s.scope_id);
        refScope(s.parent_id, "scope", s.scope_id);
        break;
      }
      case RecordType::kLaunch: {
        const LaunchBody l = prefix<LaunchBody>(body);
        if (opt_.keep_records) log.launches.push_back(l);
        addLaunches({&l, 1});
        break;
      }
      case RecordType::kKernel: {
        const KernelBody k = prefix<KernelBody>(body);
        if (opt_.keep_records) log.kernels.push_back(k);
        addKernels({&k, 1});
        break;
      }
      case RecordType::kRange: {
        const RangeBody r = prefix<RangeBody>(body);
        if (opt_.keep_records) log.ranges.push_back(r);
        addRanges({&r, 1});
        break;
      }
      case RecordType::kGraphNode: {
        const GraphNodeBody g = prefix<GraphNodeBody>(body);
        if (opt_.keep_records) log.graph_nodes.push_back(g);
        markScopeRef(g.scope_id);
        ++log.graph_node_records;
        if (opt_.visitor) opt_.visitor->graphNode(g);
        break;
      }
      case RecordType::kMemOp: {
        const MemOpBody m = prefix<MemOpBody>(body);
        if (opt_.keep_records) log.mem_ops.push_back(m);
        ++log.mem_op_records;
        if (opt_.visitor) opt_.visitor->memOp(m);
        break;
      }
      case RecordType::kLaunchBatch:
      case RecordType::kKernelBatch:
      case RecordType::kRangeBatch: {
        // Decoded into LogData's vector when records are kept (the visitor sees the appended tail), else
        // into a buffer reused batch after batch.
        std::string why;
        bool ok = false;
        const RecordType type = static_cast<RecordType>(rh.type);
        if (type == RecordType::kLaunchBatch) {
          auto& v = opt_.keep_records ? log.launches : launch_buf_;
          const size_t from = opt_.keep_records ? v.size() : 0;
          if ((ok = decodeLaunchBatch(body, v, why, !opt_.keep_records))) addLaunches(std::span(v).subspan(from));
        } else if (type == RecordType::kKernelBatch) {
          auto& v = opt_.keep_records ? log.kernels : kernel_buf_;
          const size_t from = opt_.keep_records ? v.size() : 0;
          if ((ok = decodeKernelBatch(body, v, why, !opt_.keep_records))) addKernels(std::span(v).subspan(from));
        } else {
          auto& v = opt_.keep_records ? log.ranges : range_buf_;
          const size_t from = opt_.keep_records ? v.size() : 0;
          if ((ok = decodeRangeBatch(body, v, why, !opt_.keep_records))) addRanges(std::span(v).subspan(from));
        }
        if (!ok)
          error(log, issue_at(at), chunk,
                std::string(recordTypeName(rh.type)) + " record in chunk " + std::to_string(chunk) + " at " +
                    at_text(at) + " is malformed: " + why + "; its records are skipped");
        break;
      }
      case RecordType::kStats: {
        // A body of 72 bytes (written before the not_written_* fields) leaves them 0.
        StatsBody st{};
        std::memcpy(&st, body.data(), std::min(body.size(), sizeof(StatsBody)));
        if (body.size() >= sizeof(StatsBody)) log.has_not_written_stats = true;
        addStats(st);
        break;
      }
      case RecordType::kSegment: {
        const SegmentBody seg = prefix<SegmentBody>(body);
        refString(seg.reason_id, "segment", log.segments.size());
        refString(seg.end_reason_id, "segment", log.segments.size());
        log.segments.push_back(seg);
        ++segments_in_chunk_;
        break;
      }
      case RecordType::kSnapshotBegin: {
        if (snap_.open) dropSnapshot(log, snap_, "a new snapshot began before its end record");
        log.summary_mode = true;
        snap_.open = true;
        // A body of 128 bytes (written before the dropped-tally detail) leaves max_keys and after 0.
        snap_.data.begin = SnapshotBeginBody{};
        std::memcpy(&snap_.data.begin, body.data(), std::min(body.size(), sizeof(SnapshotBeginBody)));
        snap_.data.offset = issue_at(at);
        snap_.data.chunk = chunk;
        // Rows are appended as they come; the announced counts are not trusted for allocation.
        break;
      }
      case RecordType::kSnapshotScope:
        if (snap_.open) snap_.data.scopes.push_back(prefix<SnapshotScopeBody>(body));
        break;
      case RecordType::kSnapshotKernel:
        if (snap_.open) snap_.data.kernels.push_back(prefix<SnapshotKernelBody>(body));
        break;
      case RecordType::kSnapshotEnd: {
        if (!snap_.open) break;  // the begin record was in a skipped chunk; already reported there
        const auto e = prefix<SnapshotEndBody>(body);
        const SnapshotBeginBody& b = snap_.data.begin;
        if (e.sequence != b.sequence || snap_.data.scopes.size() != b.scope_rows ||
            snap_.data.kernels.size() != b.kernel_rows || e.rows != uint64_t(b.scope_rows) + b.kernel_rows) {
          dropSnapshot(log, snap_, "its rows do not match its begin and end records");
          break;
        }
        log.snapshots.push_back(std::move(snap_.data));
        snap_.data = SnapshotData{};
        snap_.open = false;
        break;
      }
      // Packed chunks put their compact batches after the other records: records may follow the End
      // record inside its chunk and still belong to the log.
      case RecordType::kEnd: log.complete = true; break;
      default: noteUnknownRecord(rh.type); break;  // skipped (the format only grows), counted
    }
  }
  if (records != announced_records) {
    // The header is not covered by the checksum: a record count that disagrees with the verified payload
    // is damage to the header (every record of the payload was read).
    error(log, chunk_at, chunk,
          "chunk " + std::to_string(chunk) + " header announces " + std::to_string(announced_records) +
              " records, its payload (checksum verified) holds " + std::to_string(records) +
              ": the chunk header (at byte " + std::to_string(chunk_at) + ") is damaged; the " + std::to_string(records) + " records were read");
  }
  return true;
}

/// "1-9, 14, 20" for sorted ids, at most `max_items` items (then ", ...").
std::string idList(const std::vector<uint32_t>& ids, size_t max_items = 40) {
  std::string out;
  size_t items = 0;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (items == max_items) {
      out += ", ...";
      break;
    }
    if (!out.empty()) out += ", ";
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    ++items;
    i = j + 1;
  }
  return out;
}

/// Reports every string or scope id a decoded record refers to that no record defined: past the highest
/// defined id, or a gap below it (a lost chunk, or a corrupt record inside a verified chunk). The records
/// are kept; LogData::str() and scopePath() show such ids as "<bad ... id N>" (LogData::strings_missing,
/// scopes_missing mark the gaps), the analysis credits undefined scopes to the root. Runs after all chunks:
/// a definition may follow its first use by a chunk. References were noted while decoding (refs_, with the
/// location of the first record that used the id); the last complete snapshot is checked here. One issue
/// per id (at most kMaxReferenceIssues), at the first record that used it, then one issue listing every
/// undefined id.
void Decoder::checkReferences() {
  LogData& log = log_;
  const size_t n_strings = log.strings.size(), n_scopes = log.scopes.size();
  // Gaps: ids below the table sizes that no record defined.
  str_def_.resize(std::max(str_def_.size(), n_strings));
  scope_def_.resize(std::max(scope_def_.size(), n_scopes));
  markMissing(log, str_def_, scope_def_);
  if (!log.snapshots.empty()) {  // the last complete snapshot is the one the analysis uses
    const SnapshotData& sd = log.snapshots.back();
    setRecordAt(sd.offset, sd.chunk);
    for (size_t i = 0; i < sd.scopes.size(); ++i) refScope(sd.scopes[i].scope_id, "snapshot scope", i);
    for (size_t i = 0; i < sd.kernels.size(); ++i) {
      refString(sd.kernels[i].name_id, "snapshot kernel", i);
      if (!(sd.kernels[i].flags & kSnapshotKernelUnmatched)) refScope(sd.kernels[i].scope_id, "snapshot kernel", i);
    }
  }
  // Earlier snapshots (`kcount summary --series`) are not checked, but their ids are kept by compactScopes().
  for (const SnapshotData& sd : log.snapshots) {
    for (const auto& r : sd.scopes) markScopeRef(r.scope_id);
    for (const auto& r : sd.kernels)
      if (!(r.flags & kSnapshotKernelUnmatched)) markScopeRef(r.scope_id);
  }
  log.undefined_scope_refs.clear();
  for (uint32_t id = 1; id < scope_ref_.size(); ++id)
    if (scope_ref_[id] && !(id < scope_def_.size() && scope_def_[id])) log.undefined_scope_refs.push_back(id);
  size_t listed = 0;
  uint64_t unlisted = refs_unlisted_, records[2] = {0, 0};
  std::vector<uint32_t> undefined[2];  // [0] scopes, [1] strings
  for (const auto& [key, r] : refs_) {
    const auto& [is_string, id] = key;
    if (is_string ? (id < str_def_.size() && str_def_[id]) : (id < scope_def_.size() && scope_def_[id])) continue;
    undefined[is_string].push_back(id);
    records[is_string] += r.records;
    if (listed == kMaxReferenceIssues) {
      unlisted += r.records;
      continue;
    }
    ++listed;
    const size_t n = is_string ? n_strings : n_scopes;
    const std::string what = std::string(is_string ? "string" : "scope") + " id " + std::to_string(id);
    error(log, r.first_at, r.first_chunk,
          (id >= n ? what + " out of range (" + std::to_string(n) + (is_string ? " strings" : " scopes") + " defined)"
                   : what + " is not defined (no " + (is_string ? "string" : "scope") +
                         " record of the log defines it; its definition was lost)") +
              ": " + std::to_string(r.records) + (r.records == 1 ? " record refers" : " records refer") +
              " to it, the first is " + r.first_kind + " record " + std::to_string(r.first_index) + " " +
              recordPlace(r.first_at, r.first_chunk));
  }
  if (unlisted > 0)
    error(log, ReadIssue::kNoOffset, -1,
          std::to_string(unlisted) +
              " more references to string or scope ids out of range or not defined (found after reading)");
  if (!undefined[0].empty() || !undefined[1].empty()) {
    std::string text = "undefined ids (their definitions were lost; found after reading):";
    if (!undefined[1].empty())
      text += " " + counted(undefined[1].size(), "string id") + " (" + idList(undefined[1]) + "), used by " +
              counted(records[1], "record") + ", show as <bad string id N>" + (undefined[0].empty() ? "" : ";");
    if (!undefined[0].empty())
      text += " " + counted(undefined[0].size(), "scope id") + " (" + idList(undefined[0]) + "), used by " +
              counted(records[0], "record") + ", show as <bad scope id N>; their launches, kernels and "
              "ranges are counted in the row (unknown range: definition lost to damage)";
    if (refs_unlisted_ > 0) text += "; further ids not listed";
    error(log, ReadIssue::kNoOffset, -1, text);
  }
  checkScopeTree();
}

/// Reports each cycle of parent ids among the defined scopes (a scope that is, through its parents, its own
/// ancestor: damage a checksum cannot see, e.g. a corrupt record written as such). A writer defines a
/// scope's parent before it (docs/format.md), so no log it wrote has one. The analysis cuts such a chain
/// and hangs it under the top level (collector/analysis.cpp); here it is named, at the record of the scope
/// where the walk met itself, and the log reads as damaged. A parent id that is not defined is a lost
/// definition, reported by checkReferences(), not a cycle. At most kMaxReferenceIssues cycles are listed.
void Decoder::checkScopeTree() {
  LogData& log = log_;
  const size_t n = std::min(log.scopes.size(), scope_def_.size());
  std::vector<uint8_t> state(n, 0);  // 0 not walked, 1 on the current walk, 2 reaches the top level or a lost one
  std::vector<uint32_t> walk;
  size_t cycles = 0;
  for (size_t start = 1; start < n; ++start) {
    if (!scope_def_[start] || state[start] != 0) continue;
    walk.clear();
    uint32_t id = static_cast<uint32_t>(start);
    while (id != kRootScope && id < n && scope_def_[id] && state[id] == 0) {
      state[id] = 1;
      walk.push_back(id);
      id = log.scopes[id].parent_id;
    }
    if (id != kRootScope && id < n && scope_def_[id] && state[id] == 1) {
      ++cycles;
      if (cycles <= kMaxReferenceIssues) {
        std::string members;
        const auto first = std::find(walk.begin(), walk.end(), id);
        for (auto it = first; it != walk.end(); ++it)
          members += (members.empty() ? "" : " -> ") + std::to_string(*it) + " (" + std::string(log.str(log.scopes[*it].name_id)) + ")";
        const auto [at, chunk] = id < scope_at_.size() ? scope_at_[id] : std::pair<uint64_t, int64_t>{ReadIssue::kNoOffset, -1};
        error(log, at, chunk,
              "damaged scope table: scope " + std::to_string(id) + " is its own ancestor through its parent ids (" +
                  members + " -> " + std::to_string(id) + "), defined " + recordPlace(at, chunk) +
                  "; its ranges are shown under the top level");
      }
    }
    for (uint32_t w : walk) state[w] = 2;
  }
  if (cycles > kMaxReferenceIssues)
    error(log, ReadIssue::kNoOffset, -1,
          std::to_string(cycles - kMaxReferenceIssues) + " more cycles of scope parent ids (found after reading)");
}

}  // namespace

namespace {
uint32_t metaNumber(const LogData& d, std::string_view key) {
  const std::string v = d.meta(key);
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<uint32_t>(std::stoul(v));
}
}  // namespace

uint32_t LogData::rotationPart() const { return metaNumber(*this, kMetaRotatedFile); }
uint32_t LogData::continuedInPart() const { return metaNumber(*this, kMetaContinuedIn); }

std::string runIdentity(const LogData& log) {
  const std::string host = log.meta("host"), pid = log.meta("pid"), start = log.meta("start_ns");
  if (pid.empty() || start.empty()) return {};
  return host + "|" + pid + "|" + start;
}

LogData readLogHead(const std::string& path, size_t max_bytes) {
  LogData out;
  out.strings.resize(1);
  out.scopes.resize(1);
  // Only regular files, as readLogFile: opening a FIFO blocks until a writer comes, reading it consumes it.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  std::vector<uint8_t> buf(max_bytes);
  const size_t n = std::fread(buf.data(), 1, buf.size(), f);
  std::fclose(f);
  buf.resize(n);
  ReadOptions ro;
  ro.keep_records = false;
  out = readLog(buf, ro);
  out.issues.clear();
  return out;
}

void markCutShortPart(LogData& log, const std::string& later_name, uint32_t later_part, bool run_marks_parts) {
  if (log.complete || log.continuedInPart() > 0 || log.not_a_log) return;
  const std::string k = std::to_string(log.rotationPart());
  const std::string follows = "yet part " + std::to_string(later_part) + " of the same run (" + later_name + ") follows it";
  // Cut inside a chunk, or by a writer known to mark its parts: the end of this part is lost. Otherwise the
  // file may be a non-last part written before parts were marked (continued_in_file), which ends like this.
  // The reader's warning for the log's missing End record, if any; "no intact end record": damaged or cut
  // bytes follow the last intact chunk.
  auto no_end = std::find_if(log.issues.begin(), log.issues.end(), [](const ReadIssue& i) {
    return i.chunk == -1 && (i.message.starts_with(kNoEndRecordText) || i.message.starts_with(kNoIntactEndRecordText));
  });
  const bool damaged_tail = no_end != log.issues.end() && no_end->message.starts_with(kNoIntactEndRecordText);
  const bool cut = log.truncated || damaged_tail || run_marks_parts;
  const std::string text =
      cut ? "rotated part " + k + " is cut short: it has no end record and was not closed for rotation (no " +
                "continued_in_file key), " + follows + ", so the run went on: records at the end of part " + k +
                " are lost (the file was cut short or damaged); " + lastIntactText(log)
          : "rotated part " + k + " has no end record and no continued_in_file key, " + follows +
                ": cut short at a chunk boundary (records at its end lost), or written by a kcount that did not "
                "mark its parts yet; " + lastIntactText(log);
  const auto severity = cut ? ReadIssue::Severity::kError : ReadIssue::Severity::kWarning;
  if (no_end != log.issues.end()) {
    no_end->severity = severity;
    no_end->message = text;
    return;
  }
  addIssue(log, severity, log.file_bytes, -1, text);
}

LogData joinRotatedParts(std::vector<LogData> parts, const std::vector<std::string>& names) {
  LogData out;
  if (parts.empty()) return out;
  {
    std::vector<LogData*> ptrs;
    for (LogData& p : parts) ptrs.push_back(&p);
    adoptUnnamedParts(names, ptrs);
  }
  out.major = parts.front().major;
  out.minor = parts.front().minor;
  out.strings.resize(1);
  out.scopes.resize(1);
  auto name = [&](size_t i) { return i < names.size() ? names[i] : std::string("?"); };
  // Numbering: 0, 1, 2, ... with nothing missing, and the last part not continued elsewhere.
  uint32_t expect = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const uint32_t k = parts[i].rotationPart();
    if (k > expect)
      addIssue(out, ReadIssue::Severity::kWarning, 0, -1,
            "rotated log: " + (k - expect == 1 ? "part " + std::to_string(expect)
                                               : "parts " + std::to_string(expect) + " to " + std::to_string(k - 1)) +
                " not given (the files before " + name(i) + ", part " + std::to_string(k) +
                "): their records are missing from this report");
    expect = k + 1;
    out.joined_parts.push_back(k);
  }
  // A part closed for rotation (continued_in_file) shows that the writer marks its parts.
  const bool run_marks_parts =
      std::any_of(parts.begin(), parts.end(), [](const LogData& p) { return p.isContinuedPart(); });
  std::vector<bool> str_def(1, true), scope_def(1, true);  // ids some part defined
  for (size_t i = 0; i < parts.size(); ++i) {
    LogData& p = parts[i];
    const bool last = i + 1 == parts.size();
    const uint32_t part = p.rotationPart(), continued_in = p.isContinuedPart() ? p.continuedInPart() : 0;
    // A part before the last that neither ends the log nor was closed for rotation lost its end.
    if (!last) markCutShortPart(p, name(i + 1), parts[i + 1].rotationPart(), run_marks_parts);
    for (auto& kv : p.metadata) {
      if (kv.first == kMetaRotatedFile || (kv.first == kMetaContinuedIn && !last)) continue;
      out.metadata.push_back(std::move(kv));
    }
    if (p.strings.size() > out.strings.size()) out.strings.resize(p.strings.size());
    if (p.strings.size() > str_def.size()) str_def.resize(p.strings.size());
    for (size_t id = 1; id < p.strings.size(); ++id)
      if (p.stringDefined(static_cast<uint32_t>(id))) {
        str_def[id] = true;
        if (!p.strings[id].empty()) out.strings[id] = std::move(p.strings[id]);
      }
    if (p.scopes.size() > out.scopes.size()) out.scopes.resize(p.scopes.size());
    if (p.scopes.size() > scope_def.size()) scope_def.resize(p.scopes.size());
    for (size_t id = 1; id < p.scopes.size(); ++id)
      if (p.scopeDefined(static_cast<uint32_t>(id))) {
        scope_def[id] = true;
        if (p.scopes[id].name_id != 0 || p.scopes[id].parent_id != 0) out.scopes[id] = p.scopes[id];
      }
    auto append = [](auto& into, auto& from) { into.insert(into.end(), from.begin(), from.end()); };
    append(out.launches, p.launches);
    append(out.kernels, p.kernels);
    append(out.ranges, p.ranges);
    append(out.graph_nodes, p.graph_nodes);
    append(out.mem_ops, p.mem_ops);
    append(out.segments, p.segments);
    for (LogData::RecordMark m : p.segment_marks)
      out.segment_marks.push_back({m.launches + out.launch_records, m.kernels + out.kernel_records,
                                   m.mem_ops + out.mem_op_records});
    for (auto& snap : p.snapshots) out.snapshots.push_back(std::move(snap));
    out.summary_mode = out.summary_mode || p.summary_mode;
    out.incomplete_snapshots += p.incomplete_snapshots;
    out.launch_records += p.launch_records;
    out.mem_call_records += p.mem_call_records;
    out.kernel_records += p.kernel_records;
    out.range_records += p.range_records;
    out.graph_node_records += p.graph_node_records;
    out.mem_op_records += p.mem_op_records;
    if (p.has_stats) {
      sumStats(out.stats, p.stats);
      out.has_stats = true;
      out.has_not_written_stats = out.has_not_written_stats || p.has_not_written_stats;
    }
    if (last) {
      out.complete = p.complete;
      out.snapshot_cut_at_end = p.snapshot_cut_at_end;
      out.last_intact_chunk = p.last_intact_chunk;
      out.last_intact_end = p.last_intact_end;
    }
    if (p.after_end_bytes > 0 && out.after_end_bytes == 0) {
      out.after_end_offset = p.after_end_offset;
      out.after_end_bytes = p.after_end_bytes;
      out.after_end_is_log = p.after_end_is_log;
    }
    out.truncated = out.truncated || p.truncated;
    out.chunks_read += p.chunks_read;
    out.chunks_skipped += p.chunks_skipped;
    out.packed_chunks += p.packed_chunks;
    out.file_bytes += p.file_bytes;
    for (auto& issue : p.issues) {
      issue.message = "part " + std::to_string(part) + " (" + name(i) + "): " + issue.message;
      out.issues.push_back(std::move(issue));
    }
    if (last && continued_in > 0)
      addIssue(out, ReadIssue::Severity::kWarning, p.file_bytes, -1,
            "rotated log: it continues in part " + std::to_string(continued_in) + ", which was not given (" + name(i) +
                " is part " + std::to_string(part) + "): its records are missing from this report");
  }
  markMissing(out, str_def, scope_def);  // an id is missing from the joined log only if no part defined it
  // Ids used without a definition in some part and defined by none.
  for (const LogData& p : parts) out.undefined_scope_refs.insert(out.undefined_scope_refs.end(),
                                                                 p.undefined_scope_refs.begin(), p.undefined_scope_refs.end());
  std::sort(out.undefined_scope_refs.begin(), out.undefined_scope_refs.end());
  out.undefined_scope_refs.erase(std::unique(out.undefined_scope_refs.begin(), out.undefined_scope_refs.end()),
                                 out.undefined_scope_refs.end());
  std::erase_if(out.undefined_scope_refs, [&](uint32_t id) { return id < scope_def.size() && scope_def[id]; });
  out.parts = static_cast<uint32_t>(parts.size());
  return out;
}

std::string LogData::meta(std::string_view key) const {
  for (auto it = metadata.rbegin(); it != metadata.rend(); ++it)
    if (it->first == key) return it->second;
  return {};
}

std::string_view LogData::str(uint32_t id) const {
  if (id == kNoString) return {};
  if (stringDefined(id)) return strings[id];
  // One text per bad id, kept per thread in a node-based map (its elements never move): a caller may
  // hold the view of one bad id while it asks for another (a scope's name, then its domain and path).
  thread_local std::unordered_map<uint32_t, std::string> bad;
  auto [it, added] = bad.try_emplace(id);
  if (added) it->second = "<bad string id " + std::to_string(id) + ">";
  return it->second;
}

std::string lostRangeName(uint32_t log_scope_id) { return "(lost range " + std::to_string(log_scope_id) + ")"; }

uint32_t LogData::scopeIndex(uint32_t log_id) const {
  if (scope_log_ids.empty() || log_id >= scope_id_end) return log_id;
  const auto it = std::lower_bound(scope_log_ids.begin(), scope_log_ids.end(), log_id);
  return it != scope_log_ids.end() && *it == log_id ? static_cast<uint32_t>(it - scope_log_ids.begin())
                                                    : kUnknownScopeIndex;
}

void compactScopes(LogData& log, size_t min_dropped) {
  const size_t n = log.scopes.size();
  if (!log.scope_log_ids.empty() || n <= 2) return;
  constexpr uint32_t kDrop = ~uint32_t{0};
  std::vector<uint32_t> index(n, kDrop);  // old id -> new index (kDrop: dropped)
  auto keep = [&](uint32_t id) {
    if (id < n) index[id] = 0;
  };
  keep(kRootScope);
  keep(kOverflowScope);
  for (uint32_t id = 1; id < n; ++id)
    if (log.scopeDefined(id)) {
      keep(id);
      keep(log.scopes[id].parent_id);
    }
  for (uint32_t id : log.undefined_scope_refs) keep(id);
  uint32_t kept = 0;
  for (uint32_t& i : index)
    if (i != kDrop) i = kept++;
  if (n - kept < min_dropped) return;

  auto map = [&](uint32_t id) { return id >= n ? id : index[id] != kDrop ? index[id] : LogData::kUnknownScopeIndex; };
  std::vector<ScopeBody> scopes(kept);
  std::vector<bool> missing;
  log.scope_log_ids.assign(kept, 0);
  for (uint32_t id = 0; id < n; ++id) {
    if (index[id] == kDrop) continue;
    const uint32_t to = index[id];
    const bool defined = log.scopeDefined(id);
    scopes[to] = log.scopes[id];
    if (defined && id != kRootScope) scopes[to].parent_id = map(log.scopes[id].parent_id);
    log.scope_log_ids[to] = id;
    if (!defined) {
      missing.resize(kept, false);
      missing[to] = true;
    }
  }
  log.scopes = std::move(scopes);
  log.scopes_missing = std::move(missing);
  log.scope_id_end = static_cast<uint32_t>(n);
  for (auto& l : log.launches) l.scope_id = map(l.scope_id);
  for (auto& r : log.ranges) r.scope_id = map(r.scope_id);
  for (auto& g : log.graph_nodes) g.scope_id = map(g.scope_id);
  for (auto& sd : log.snapshots) {
    for (auto& r : sd.scopes) r.scope_id = map(r.scope_id);
    for (auto& r : sd.kernels)
      if (!(r.flags & kSnapshotKernelUnmatched)) r.scope_id = map(r.scope_id);
  }
}

bool LogData::isOverflowScope(uint32_t id) const {
  if (id != kOverflowScope || !scopeDefined(id) || !stringDefined(kOverflowString)) return false;
  const ScopeBody& s = scopes[id];
  return s.parent_id == kRootScope && s.name_id == kOverflowString && strings[kOverflowString] == kStringTableFullText;
}

std::string LogData::scopePath(uint32_t scope_id) const {
  if (scope_id == kRootScope) return "(no range)";
  if (!scopeDefined(scope_id)) return "<bad scope id " + std::to_string(logScopeId(scope_id)) + ">";
  std::vector<uint32_t> chain;
  std::unordered_set<uint32_t> seen;
  uint32_t id = scope_id;
  bool broken = false;
  std::string lost;  // a parent whose definition was lost: shown as "(lost range P)/..."
  while (id != kRootScope) {
    if (id < scopes.size() && !scopeDefined(id)) {
      lost = lostRangeName(logScopeId(id)) + "/";
      break;
    }
    if (id >= scopes.size() || !seen.insert(id).second) {
      broken = true;  // bad parent id or a cycle: show what we have
      break;
    }
    if (chain.size() >= kMaxScopeDepth) {
      lost = kOuterRangesCut;  // deeper than the library nests (a crafted chain): its innermost ranges
      break;
    }
    chain.push_back(id);
    id = scopes[id].parent_id;
  }
  std::string path = broken ? "<broken parent>/" : lost;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    path += str(scopes[*it].name_id);  // kNoString: the empty name, "" (a path "a//b" or "")
    if (std::next(it) != chain.rend()) path += '/';
  }
  return path;
}

bool LogData::damaged() const {
  for (const auto& i : issues)
    if (i.severity == ReadIssue::Severity::kError) return true;
  return false;
}

namespace {

/// An intact chunk as the sequence check sees it (readLogBytes).
struct SequencedChunk {
  int64_t chunk;  // in file order (as messages number chunks)
  int64_t index;  // chunk less the repeats before it: the sequence number the writer gave it, if all is well
  uint64_t at;
  uint32_t sequence;
  bool damaged = false;  // a damaged chunk skipped, whose header carries `sequence` (not trusted alone)
};

/// True when `sorted` (ascending sequence numbers of chunks) is 0, 1, ..., n-1, each once: every chunk the
/// writer numbered is there, none twice. A damaged number (outside the checksum) or a missing chunk leaves a
/// gap or a repeat.
bool numbersWhole(const std::vector<uint32_t>& sorted) {
  if (sorted.empty()) return false;
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != i) return false;
  return true;
}

/// For sequence numbers in file order, which chunks are out of write order: out[i] is true for the fewest
/// chunks that, moved back, restore the order (those outside one longest strictly increasing run of
/// numbers, the one that ends in the smallest numbers). O(n log n).
std::vector<bool> outOfOrder(const std::vector<uint32_t>& numbers) {
  std::vector<size_t> tails;                        // tails[k]: index ending the best run of length k + 1
  std::vector<size_t> before(numbers.size(), SIZE_MAX);  // the index before i in its run
  for (size_t i = 0; i < numbers.size(); ++i) {
    const auto it = std::lower_bound(tails.begin(), tails.end(), numbers[i],
                                     [&](size_t t, uint32_t v) { return numbers[t] < v; });
    if (it != tails.begin()) before[i] = *std::prev(it);
    if (it == tails.end()) tails.push_back(i);
    else *it = i;
  }
  std::vector<bool> out(numbers.size(), true);
  for (size_t i = tails.empty() ? SIZE_MAX : tails.back(); i != SIZE_MAX; i = before[i]) out[i] = false;
  return out;
}

/// Decodes a log whose bytes are all addressable; `release(end)` is told when bytes before `end` will not
/// be needed again (so a mapped file can drop those pages); `drop(from, to)` when a scan over damaged
/// bytes has passed [from, to), which a later scan may read again.
template <typename Release, typename Drop>
LogData readLogBytes(std::span<const uint8_t> bytes, const ReadOptions& options, Release&& release, Drop&& drop) {
  LogData log;
  Decoder decoder(log, options);
  log.file_bytes = bytes.size();
  log.strings.resize(1);
  log.scopes.resize(1);

  FileHeader fh;
  Cursor c(bytes);
  if (bytes.empty()) {
    // No file header at all: nothing says this was ever a log (a process killed before its first write
    // leaves such a file too).
    log.not_a_log = true;
    error(log, 0, -1,
          "not a kcount log: empty file (0 bytes), no kcount file header (a log starts with \"KCOUNTLG\"; a "
          "process killed before its first write leaves an empty file)");
    return log;
  }
  if (bytes.size() < sizeof(FileHeader) &&
      std::memcmp(bytes.data(), kLogMagic, std::min(bytes.size(), sizeof(kLogMagic))) == 0) {
    // Cut inside the file header: a log whose process wrote almost nothing.
    log.truncated = true;
    error(log, bytes.size(), -1,
          "truncated at byte " + std::to_string(bytes.size()) + " in the file header: the file is cut short (" +
              std::to_string(bytes.size()) + (bytes.size() == 1 ? " byte" : " bytes") + ", a file header is " +
              std::to_string(sizeof(FileHeader)) + " bytes)");
    return log;
  }
  // A magic that differs from "KCOUNTLG" in one or two bytes is a damaged log, not another file: the
  // chunks after it carry their own magics and checksums, so they are read (what verifies is kept).
  size_t magic_diff = sizeof(kLogMagic);
  if (bytes.size() >= sizeof(FileHeader)) {
    magic_diff = 0;
    for (size_t i = 0; i < sizeof(kLogMagic); ++i) magic_diff += bytes[i] != static_cast<uint8_t>(kLogMagic[i]);
  }
  const bool magic_damaged = magic_diff > 0 && magic_diff <= 2;
  if (magic_damaged) {
    c.read(fh);
    error(log, 0, -1,
          "damaged file header: byte 0 holds " + describeBytes(bytes.first(sizeof(kLogMagic))) +
              " where a kcount log has \"KCOUNTLG\" (" + std::to_string(magic_diff) +
              " byte" + (magic_diff == 1 ? " differs" : "s differ") + "); the chunks after it are read");
  } else if (!c.read(fh) || std::memcmp(fh.magic, kLogMagic, sizeof(kLogMagic)) != 0) {
    log.not_a_log = true;
    // A compressed copy of a log (gzip: 1f 8b; zstd frame: 28 b5 2f fd) is named as such.
    auto startsWith = [&](std::initializer_list<uint8_t> magic) {
      return bytes.size() >= magic.size() && std::equal(magic.begin(), magic.end(), bytes.begin());
    };
    const char* compressed = startsWith({0x1f, 0x8b})               ? " (gzip data: decompress it first)"
                             : startsWith({0x28, 0xb5, 0x2f, 0xfd}) ? " (zstd data: decompress it first)"
                                                                    : "";
    error(log, 0, -1, "not a kcount log" + std::string(compressed) + ": byte 0 holds " +
                          describeBytes(bytes.first(std::min<size_t>(bytes.size(), 16))) + " (" +
                          std::to_string(bytes.size()) + " bytes in all); a kcount log starts with \"KCOUNTLG\"");
    return log;
  }
  log.major = fh.major;
  log.minor = fh.minor;
  // A major version no kcount writes or will soon (0, or more than 3 above this reader's: 22529 after a
  // flipped bit) is a damaged version field, not a newer log: said so, and the chunks are read as this
  // format's, as for a damaged magic. A plausible newer major (2 to 4) is refused, as it may be one.
  if (fh.major == 0 || fh.major > kLogMajor + 3) {
    error(log, 8, -1,
          "damaged file header: its version field says " + std::to_string(fh.major) + "." + std::to_string(fh.minor) +
              ", which no kcount writes; the chunks are read as format " + std::to_string(kLogMajor) + ".x");
    log.major = kLogMajor;
  } else if (fh.major != kLogMajor) {
    log.unsupported_version = true;
    error(log, 8, -1,
          "unsupported version " + std::to_string(fh.major) + "." + std::to_string(fh.minor) +
              " (this reader supports " + std::to_string(kLogMajor) + ".x)");
    return log;
  }
  if (fh.major == kLogMajor && fh.minor > kLogMinor)
    warning(log, 8, -1,
            "format version " + std::to_string(fh.major) + "." + std::to_string(fh.minor) + " is newer than this "
                "reader's " + std::to_string(kLogMajor) + "." + std::to_string(kLogMinor) +
                ": what it added is not read (a version field damaged reads the same)");
  // Chunk 0 starts at header_bytes: 16 as every writer so far writes it. Another value is taken only where
  // an intact chunk starts there and none at byte 16 (a longer header of a later 1.x writer); anything else
  // is a damaged field, named as such, and the chunks are read from byte 16 (trusting it lost chunk 0, or
  // blamed the chunk).
  size_t pos = sizeof(FileHeader);
  if (fh.header_bytes != sizeof(FileHeader)) {
    const bool inside = fh.header_bytes > sizeof(FileHeader) && fh.header_bytes < bytes.size();
    // An intact chunk at byte 16 wins: a longer header is not itself a chunk, and a value pointing at a later
    // chunk would skip chunk 0.
    if (inside && chunkVerifies(bytes, fh.header_bytes) && !chunkVerifies(bytes, sizeof(FileHeader))) {
      pos = fh.header_bytes;
    } else {
      const std::string where = fh.header_bytes < sizeof(FileHeader) ? " (less than the file header's 16)"
                                : fh.header_bytes > bytes.size()      ? " (past the end of the file)"
                                : fh.header_bytes == bytes.size()     ? " (the whole file)"
                                                                      : " (no intact chunk starts there)";
      error(log, 12, -1,
            "damaged file header: its header_bytes field (byte 12) announces " + std::to_string(fh.header_bytes) +
                " header bytes" + where + "; reading chunks from byte " + std::to_string(sizeof(FileHeader)));
    }
  }

  const size_t chunks_from = pos;  // where chunk 0 starts
  // Errors of damaged chunks met on the way (a bad checksum, magic or length, a repeat): the first
  // kListedChunkErrors are issues one by one; the chunks of later ones are counted and said in one error
  // after the reading, so a file of thousands of damaged chunks gives a screen of lines, not thousands
  // (chunks_skipped keeps the exact count).
  struct {
    uint64_t listed = 0, unlisted_chunks = 0, first_at = 0, last_at = 0;
    int64_t first_chunk = -1, last_chunk = -1;
  } unlisted;
  auto chunkError = [&](uint64_t at, int64_t c, std::string msg, uint64_t chunks = 1) {
    if (unlisted.listed < kListedChunkErrors) {
      ++unlisted.listed;
      error(log, at, c, std::move(msg));
      return;
    }
    if (unlisted.unlisted_chunks == 0) {
      unlisted.first_at = at;
      unlisted.first_chunk = c;
    }
    unlisted.unlisted_chunks += chunks;
    unlisted.last_at = std::max(unlisted.last_at, at);
    unlisted.last_chunk = std::max(unlisted.last_chunk, c + static_cast<int64_t>(chunks) - 1);
  };
  size_t log_end = bytes.size();    // where this log's bytes end: the file's end, a second log's header, or a zero tail
  int64_t chunk = 0;
  // Sequence numbers of the chunks that verify (the writer numbers the chunks of a file 0, 1, 2, ...;
  // docs/format.md). The number is outside the checksum, so one number alone is not trusted: a chunk
  // equal to an earlier one (checksum, size and number) is a repeat, whose records would count twice; a
  // jump confirmed by the chunk after it is chunks missing; any other odd number is a damaged header.
  // The writer itself leaves a jump only for chunks it kept out at the size cap or the file refused,
  // which its Stats record counts in bytes_dropped: jumps are judged after the whole file is read.
  std::vector<SequencedChunk> sequenced;
  // Damaged chunks skipped whose header survived (a chunk cut short, a payload damaged), with the number
  // their header carries: not trusted alone, it may say where a chunk missing from the numbers went.
  std::vector<SequencedChunk> damaged_numbered;
  int64_t pending_number = -1;  // the number of the damaged chunk at `pos` that resyncFrom() skips, if known
  bool cut_numbered = false;    // the last of damaged_numbered is the chunk the file's end cuts (not skipped)
  int64_t repeats = 0;
  struct SeenChunk {
    uint32_t sequence, stored_bytes;
    int64_t chunk;
    uint64_t at;
  };
  std::unordered_map<uint64_t, SeenChunk> seen;  // checksum -> the first intact chunk with it
  const ScanDrop scan_drop = [&drop](size_t from, size_t to) { drop(from, to); };
  // The End chunk's number once it is read. An End chunk that is not last is followed by this log's chunks
  // where they carry numbers below the End chunk's that no chunk read carries (a file joined from pieces in
  // another order): those are read on, whatever follows them (a zero tail, trailing bytes, a second log, a
  // cut or damaged chunk), which is then judged as after any End chunk.
  int64_t end_sequence = -1;
  // The numbers of the chunks read (those of `sequenced`), sorted and each once, for look-ups: built from
  // `sequenced` on the first look-up (a copy of the file header, an End chunk that is not last; a log in
  // order makes none) and kept up to date after it. below_end counts those below the End chunk's number
  // (below_end_of: the End number it counts for), so no pass over them is made per chunk.
  std::vector<uint32_t> numbers_lookup;
  bool lookup_built = false;
  uint64_t below_end = 0;
  int64_t below_end_of = -1;
  auto buildLookup = [&]() {
    if (lookup_built) return;
    numbers_lookup.reserve(sequenced.size());
    for (const SequencedChunk& c : sequenced) numbers_lookup.push_back(c.sequence);
    std::sort(numbers_lookup.begin(), numbers_lookup.end());
    numbers_lookup.erase(std::unique(numbers_lookup.begin(), numbers_lookup.end()), numbers_lookup.end());
    lookup_built = true;
  };
  auto numberRead = [&](uint32_t n) {
    buildLookup();
    return std::binary_search(numbers_lookup.begin(), numbers_lookup.end(), n);
  };
  // A chunk read (added to `sequenced`): its number joins the look-up, if built.
  auto noteNumberRead = [&](uint32_t n) {
    if (!lookup_built) return;
    const auto it = std::lower_bound(numbers_lookup.begin(), numbers_lookup.end(), n);
    if (it != numbers_lookup.end() && *it == n) return;
    numbers_lookup.insert(it, n);
    if (below_end_of >= 0 && int64_t{n} < below_end_of) ++below_end;
  };
  // How many numbers below the End chunk's the chunks read carry.
  auto readBelowEnd = [&]() -> uint64_t {
    buildLookup();
    if (below_end_of != end_sequence) {
      below_end_of = end_sequence;
      below_end = static_cast<uint64_t>(
          std::lower_bound(numbers_lookup.begin(), numbers_lookup.end(), static_cast<uint64_t>(end_sequence),
                           [](uint32_t a, uint64_t v) { return a < v; }) -
          numbers_lookup.begin());
    }
    return below_end;
  };
  uint32_t failed_decode = 0;  // chunks in `sequenced` whose records were not decoded (counted skipped)
  // True if a chunk header at `at` (intact or not) carries a number below the End chunk's that no chunk
  // read carries: a chunk of this log moved after its End chunk. So too where bytes that are no chunk
  // and no second log's file header lie before the next intact chunk and it carries such a number (junk
  // between moved chunks, reported as such by the walk).
  auto missingChunkAt = [&](size_t at) {
    auto missing = [&](size_t c) {
      ChunkInfo ci;
      return chunkHeaderAt(bytes, c, ci) && int64_t{ci.sequence} < end_sequence && !numberRead(ci.sequence);
    };
    if (end_sequence < 0) return false;
    if (missing(at)) return true;
    // Every number below the End chunk's read: nothing to look for in the bytes after it.
    if (readBelowEnd() == static_cast<uint64_t>(end_sequence)) return false;
    const size_t next = resync(bytes, at + 1, scan_drop);
    return next < bytes.size() && missing(next) && findLogMagic(bytes, at, next, scan_drop) >= next;
  };
  // Whether the sequence numbers of the intact chunks of the whole file are 0..n-1 each once: no chunk is
  // missing, so bytes that are no intact chunk are junk (inserted by an edit or a copy), whatever they
  // hold, even a chunk header whose checksum fails. Found on first need (bytes to skip) by one walk
  // over the file from chunk 0 to chunk (resync(): cheap checks before checksums), then kept.
  int whole_numbers = -1;  // -1 not known yet, else 0 or 1
  size_t whole_count = 0;  // n, when whole
  std::vector<uint32_t> file_numbers;  // the numbers of the file's intact chunks, sorted (repeats kept)
  std::vector<std::pair<uint32_t, size_t>> file_chunks;  // (number, byte offset) of each, sorted
  // Intact chunks that wait for chunks with lower numbers later in the file (decodeChunk()), by number.
  struct HeldChunk {
    size_t at;
    int64_t chunk;
    ChunkInfo info;
  };
  std::multimap<uint32_t, HeldChunk> held;
  int64_t next_number = 0;  // one past the highest number decoded: the next chunk in write order
  auto intactNumbersWhole = [&]() -> bool {
    if (whole_numbers >= 0) return whole_numbers == 1;
    std::vector<uint32_t> found;
    for (size_t at = resync(bytes, chunks_from, scan_drop); at < bytes.size(); at = resync(bytes, at, scan_drop)) {
      ChunkInfo ci;
      chunkHeaderAt(bytes, at, ci);
      found.push_back(ci.sequence);
      file_chunks.emplace_back(ci.sequence, at);
      const size_t end = at + ci.header_bytes + ci.stored_bytes;
      drop(at, end);
      at = end;
      if (at >= bytes.size()) break;
    }
    std::sort(found.begin(), found.end());
    std::sort(file_chunks.begin(), file_chunks.end());
    const bool whole = numbersWhole(found);
    whole_numbers = whole ? 1 : 0;
    whole_count = found.size();
    file_numbers = std::move(found);
    return whole;
  };
  // How many of the numbers in [from, to) the file's intact chunks carry (found by the same walk).
  auto intactNumbersIn = [&](int64_t from, int64_t to) -> size_t {
    intactNumbersWhole();
    const auto lo = std::lower_bound(file_numbers.begin(), file_numbers.end(), from,
                                     [](uint32_t a, int64_t v) { return int64_t{a} < v; });
    const auto hi = std::lower_bound(file_numbers.begin(), file_numbers.end(), to,
                                     [](uint32_t a, int64_t v) { return int64_t{a} < v; });
    return static_cast<size_t>(hi - lo);
  };
  // The sequence number expected for chunk `chunk` (the next one in file order): one past the last intact
  // chunk's, plus the chunks skipped since (not the repeats, which carry no number of their own). So in a
  // file whose chunks were moved it follows the number of the chunk before it, not the file position.
  auto expectedHere = [&]() -> int64_t {
    if (sequenced.empty()) return chunk - repeats;
    const SequencedChunk& last = sequenced.back();
    return int64_t{last.sequence} + (chunk - repeats - last.index);
  };
  // Whether an intact chunk after byte `at` carries a number in [from, to): found by the same walk.
  auto numberFollows = [&](int64_t from, int64_t to, size_t at) {
    intactNumbersWhole();
    auto it = std::lower_bound(file_chunks.begin(), file_chunks.end(), from,
                               [](const std::pair<uint32_t, size_t>& c, int64_t v) { return int64_t{c.first} < v; });
    for (; it != file_chunks.end() && int64_t{it->first} < to; ++it)
      if (it->second > at) return true;
    return false;
  };
  // Decodes the intact chunk at byte `at` (index `index` in file order): its records go to LogData and the
  // visitor. A packed chunk whose checksum verifies but whose payload does not decode (unknown codec, a
  // zstd frame of another size) is skipped; its length is trusted, as the checksum covers it.
  auto decodeChunk = [&](size_t at, int64_t index, const ChunkInfo& ci) {
    const size_t payload_at = at + ci.header_bytes;
    const std::span<const uint8_t> stored = bytes.subspan(payload_at, ci.stored_bytes);
    std::span<const uint8_t> payload = stored;
    if (int64_t{ci.sequence} >= next_number) next_number = int64_t{ci.sequence} + 1;
    if (ci.packed && !decoder.unpack(ci, stored, at, index, payload)) {
      ++log.chunks_skipped;
      ++failed_decode;
      return;
    }
    if (options.visitor) options.visitor->chunk(at, index);
    const bool decoded = decoder.decodePayload(payload, ci.packed ? 0 : payload_at, at, index, ci.record_count, ci.packed);
    decoder.endChunk();
    if (decoded) {
      ++log.chunks_read;
      if (ci.packed) ++log.packed_chunks;
      if (index > log.last_intact_chunk) {
        log.last_intact_chunk = index;
        log.last_intact_end = payload_at + ci.stored_bytes;
      }
    } else {
      ++log.chunks_skipped;
      ++failed_decode;
    }
    if (log.complete && end_sequence < 0) end_sequence = ci.sequence;
  };
  // Decodes the chunks held whose turn has come, in write order: numbers up to the next one to decode, or
  // where no intact chunk after byte `at` carries a number before theirs (those chunks are not in the file).
  auto decodeHeld = [&](size_t at) {
    while (!held.empty() && (int64_t{held.begin()->first} <= next_number ||
                             !numberFollows(next_number, held.begin()->first, at))) {
      const auto node = held.extract(held.begin());
      decodeChunk(node.mapped().at, node.mapped().chunk, node.mapped().info);
    }
  };
  auto wholeText = [&]() {
    return "; the file's intact chunks carry every sequence number from 0 to " + std::to_string(whole_count - 1) +
           " once: no chunk is missing";
  };
  while (pos < bytes.size()) {
    release(pos);
    const size_t remain = bytes.size() - pos;
    uint32_t magic = 0;
    if (remain >= sizeof(magic)) std::memcpy(&magic, bytes.data() + pos, sizeof(magic));
    const size_t header_need = magic == kPackedChunkMagic ? sizeof(PackedChunkHeader) : sizeof(ChunkHeader);
    const bool header_fits = remain >= header_need;
    ChunkInfo h;

    // Bytes [from, next) skipped on the way to the next intact chunk: each plausible chunk header in them
    // (a damaged chunk whose own header survived) is one more damaged chunk, reported with its number
    // and offset, so that chunks read + skipped add up and later chunk numbers stay true.
    auto skippedChunks = [&](size_t from, size_t next) {
      size_t dropped_to = from;
      const auto candidate = [&](size_t at) { return scanForChunk(bytes, at, next, dropped_to, scan_drop); };
      for (size_t at = candidate(from); at < next;) {
        if (!chunkHeaderPlausible(bytes, at)) {
          at = candidate(at + 1);
          continue;
        }
        ChunkInfo c;
        chunkHeaderAt(bytes, at, c);
        const size_t chunk_end = at + c.header_bytes + c.stored_bytes;
        ++chunk;
        ++log.chunks_skipped;
        damaged_numbered.push_back(SequencedChunk{chunk, chunk - repeats, at, c.sequence, true});
        chunkError(at, chunk,
              "damaged chunk " + std::to_string(chunk) + " at byte " + std::to_string(at) +
                  " (its checksum does not verify) skipped, inside the bytes skipped to the next intact chunk at byte " +
                  std::to_string(next));
        at = chunk_end <= next ? chunk_end : at + 1;
      }
    };
    // A header that cannot be trusted: a wrong magic or an absurd length. Look for the next chunk that
    // verifies. The first chunk's search starts right after the file header, in case header_bytes lied.
    // A second log's file header at byte `at`: what of the file is read, the end of both errors that say so.
    auto firstLogOnly = [&](size_t at) {
      return "only the first log (bytes 0 to " + std::to_string(at) + ") is read, the " +
             std::to_string(bytes.size() - at) + " bytes from there are not";
    };
    // The sequence number in the chunk header at `at` (-1 if no chunk header starts there).
    auto sequenceAt = [&](size_t at) -> int64_t {
      ChunkInfo ci;
      return chunkHeaderAt(bytes, at, ci) ? int64_t{ci.sequence} : -1;
    };
    // True if no plausible chunk header starts in [from, to).
    auto noChunkHeaderIn = [&](size_t from, size_t to) {
      size_t dropped_to = from;
      for (size_t at = scanForChunk(bytes, from, to, dropped_to, scan_drop); at < to;
           at = scanForChunk(bytes, at + 1, to, dropped_to, scan_drop))
        if (chunkHeaderPlausible(bytes, at)) return false;
      return true;
    };
    // Junk bytes [from, to) where chunk `chunk` should start, followed by an intact chunk: an error that
    // says where they lie and `why` they are junk; no chunk is counted skipped, reading goes on at `to`.
    auto junkBytes = [&](size_t from, size_t to, const std::string& what, const std::string& why_junk) {
      const std::string before = chunk == 0 ? std::string("the file header") : "chunk " + std::to_string(chunk - 1);
      chunkError(from, chunk,
                 what + counted(to - from, "junk byte") + " (bytes " + std::to_string(from) + " to " +
                     std::to_string(to) + ") between " + before + " and chunk " + std::to_string(chunk) + ", skipped" +
                     why_junk,
                 0);
      log.junk_bytes += to - from;
      pos = to;
    };
    // The damaged chunk at `pos`, counted skipped: its header's number, if it survived (pending_number).
    auto notePendingNumber = [&]() {
      if (pending_number >= 0)
        damaged_numbered.push_back(
            SequencedChunk{chunk, chunk - repeats, pos, static_cast<uint32_t>(pending_number), true});
      pending_number = -1;
    };
    auto resyncFrom = [&](size_t from, const std::string& why) -> bool {
      const size_t next = resync(bytes, chunk == 0 ? std::min(from, sizeof(FileHeader)) : from, scan_drop);
      // A kcount file header among the bytes skipped: a second log appended to one cut inside a chunk
      // (`cat cut.kcount other.kcount`). Its chunks verify, so reading on would merge two processes'
      // records: the reading stops at that header, as where a header stands where a chunk should start.
      // Only where an intact chunk follows (without one, nothing is read past the damage anyway).
      const size_t at = next < bytes.size() ? findLogMagic(bytes, std::max<size_t>(from, 1), next, scan_drop) : next;
      if (at < next) {
        error(log, pos, chunk,
              why + "; a second log starts at byte " + std::to_string(at) +
                  " (a kcount file header in the bytes before the next intact chunk: logs concatenated into one "
                  "file, the first cut short?); " + firstLogOnly(at));
        ++log.chunks_skipped;
        notePendingNumber();
        if (at > pos + 1) skippedChunks(pos + 1, at);
        log_end = at;
        return false;
      }
      if (next >= bytes.size()) {
        error(log, pos, chunk, why + "; no intact chunk follows (bytes " + std::to_string(pos) + " to " +
                                   std::to_string(bytes.size()) + " are skipped)");
        ++log.chunks_skipped;
        notePendingNumber();
        skippedChunks(pos + 1, bytes.size());
        return false;
      }
      // Bytes that hold no chunk header, followed by an intact chunk that carries the sequence number
      // expected at pos: junk put between two chunks (bytes inserted by an edit or a copy), not a chunk
      // lost. So too any bytes where the intact chunks of the file carry every number 0..n-1 once (chunks
      // moved, junk before chunk 0, a fake chunk header). Reported as junk bytes; the chunk count and
      // numbering go on from the chunks found.
      if (next > pos) {
        const int64_t expected = expectedHere();
        const bool expected_next = noChunkHeaderIn(pos, next) && sequenceAt(next) == expected;
        if (expected_next || intactNumbersWhole()) {
          junkBytes(pos, next, why + ": ",
                    expected_next ? std::string(next - pos == 1 ? "; it holds no chunk header and the chunk after it"
                                                                : "; they hold no chunk header and the chunk after them") +
                                        " carries sequence number " +
                                        std::to_string(expected) + ", the one expected there: no chunk is missing"
                                  : std::string(wholeText()));
          return true;
        }
      }
      // For chunk 0 the search starts after the file header, so the next chunk may lie before pos.
      chunkError(pos, chunk,
            why + (next >= pos ? "; skipped " + counted(next - pos, "byte") + " (bytes " + std::to_string(pos) +
                                     " to " + std::to_string(next) + ")"
                               : std::string("; went back")) +
                " to the next intact chunk at byte " + std::to_string(next));
      ++log.chunks_skipped;
      notePendingNumber();
      if (next > pos) skippedChunks(pos + 1, next);
      ++chunk;
      // Chunks whose headers were destroyed too: the intact chunk's sequence number (0, 1, 2, ... in
      // write order) says how many chunks the skipped bytes held, when it is plausible (each chunk takes
      // at least a header's bytes).
      // Numbers jumped over that another intact chunk of the file carries are chunks moved, not lost here.
      // The last skipped chunk's own header number, where it survived, is the nearer guide in a file of moved
      // chunks.
      const bool numbered_here = !damaged_numbered.empty() && damaged_numbered.back().at >= pos;
      const int64_t after_expected = numbered_here ? int64_t{damaged_numbered.back().sequence} + 1 : expectedHere();
      const int64_t seq = next > pos ? sequenceAt(next) : -1;
      if (next > pos && seq > after_expected &&
          static_cast<uint64_t>(seq - after_expected) <= (next - pos) / sizeof(ChunkHeader) &&
          intactNumbersIn(after_expected, seq) == 0) {
        const int64_t lost = seq - after_expected;
        chunkError(pos, chunk,
              std::to_string(lost) + (lost == 1 ? " more chunk" : " more chunks") + " in bytes " +
                  std::to_string(pos) + " to " + std::to_string(next) +
                  (lost == 1 ? " lost its header" : " lost their headers") + " too (the intact chunk at byte " +
                  std::to_string(next) +
                  " carries sequence number " + std::to_string(seq) + "): " +
                  (lost == 1 ? "chunk " + std::to_string(chunk)
                             : "chunks " + std::to_string(chunk) + " to " + std::to_string(chunk + lost - 1)) +
                  " skipped",
              static_cast<uint64_t>(lost));
        log.chunks_skipped += static_cast<uint32_t>(lost);
        chunk += lost;
      }
      pos = next;
      return true;
    };

    // A kcount file header where a chunk should start, in a log that has not ended: a second log appended
    // to one whose process did not close it (`cat killed.kcount other.kcount`). Its chunks verify, so
    // reading on would merge two processes' records through colliding ids: the reading stops here, as
    // after an End record, and the file is reported damaged (it is not one log).
    if (pos > sizeof(FileHeader) && bytes.size() - pos >= sizeof(kLogMagic) &&
        std::memcmp(bytes.data() + pos, kLogMagic, sizeof(kLogMagic)) == 0) {
      // The log's own file header again, followed by an intact chunk that continues this log's numbering:
      // it carries the sequence number expected here, or a number other than 0 that no chunk read carries
      // (chunks moved; a second log's first chunk carries 0), or the file's intact chunks carry every number
      // 0..n-1 once (a second log would repeat its numbers). A repeated header, junk, not a second log.
      const size_t after = pos + sizeof(FileHeader);
      if (chunk > 0 && bytes.size() - pos >= sizeof(FileHeader) &&
          std::memcmp(bytes.data() + pos, bytes.data(), sizeof(FileHeader)) == 0 && chunkVerifies(bytes, after)) {
        const int64_t next_seq = sequenceAt(after), expected = expectedHere();
        const bool fits = next_seq == expected;
        const bool unread = !fits && next_seq != 0 && !numberRead(static_cast<uint32_t>(next_seq));
        if (fits || unread || intactNumbersWhole()) {
          chunkError(pos, chunk,
                     std::to_string(sizeof(FileHeader)) + " junk bytes (bytes " + std::to_string(pos) + " to " +
                         std::to_string(after) + ") between chunk " + std::to_string(chunk - 1) + " and chunk " +
                         std::to_string(chunk) + ", skipped: a copy of the file header, followed by a chunk that " +
                         "carries sequence number " + std::to_string(next_seq) +
                         (fits     ? ", the one expected there (not a second log, whose first chunk carries 0): no "
                                     "chunk is missing"
                          : unread ? ", which no chunk before it carries (chunks moved; not a second log, whose first "
                                     "chunk carries 0)"
                                   : wholeText()),
                     0);
          log.junk_bytes += sizeof(FileHeader);
          pos = after;
          continue;
        }
      }
      error(log, pos, chunk,
            "a second log starts at byte " + std::to_string(pos) +
                " (a kcount file header where chunk " + std::to_string(chunk) +
                " should start: logs concatenated into one file?), after a log with no end record; " +
                firstLogOnly(pos));
      log_end = pos;
      break;
    }
    // Only zero bytes from here to the end of the file, where a chunk should start: no chunk was ever
    // in them (a chunk starts with its magic), so they are not damage: blocks the file system allocated
    // whose data never reached the disk, or padding. The log ends at the last intact chunk, as after a
    // kill. Not at chunk 0 with a damaged file header (the search for chunk 0 starts in the header).
    if (pos > 0 && magic == 0 && zeroFrom(bytes, pos, scan_drop)) {
      log.zero_tail_offset = pos;
      log.zero_tail_bytes = bytes.size() - pos;
      warning(log, pos, chunk,
              "the file ends in " + counted(log.zero_tail_bytes, "zero byte") + " from byte " +
                  std::to_string(pos) + ", where chunk " + std::to_string(chunk) +
                  " would start: no chunk is in them (space the file system gave the file whose data never "
                  "reached the disk, as after a crash or power loss while recording, or padding); records "
                  "written there, if any, are lost");
      log_end = pos;
      break;
    }
    if (!header_fits) {
      // Too few bytes for a header: a cut tail, unless an intact chunk follows (then it is damage).
      if (resync(bytes, chunk == 0 ? sizeof(FileHeader) : pos + 1, scan_drop) >= bytes.size()) {
        log.truncated = true;
        error(log, pos, chunk,
              "truncated at byte " + std::to_string(bytes.size()) + " in chunk " + std::to_string(chunk) +
                  ", which starts at byte " + std::to_string(pos) + " (chunk header needs " + std::to_string(header_need) + " bytes, " + std::to_string(remain) +
                  " remain)");
        break;
      }
    }
    if (!header_fits || !chunkHeaderAt(bytes, pos, h)) {
      if (!resyncFrom(pos + 1, "bad chunk magic at byte " + std::to_string(pos) + " in chunk " +
                                   std::to_string(chunk)))
        break;
      continue;
    }
    if (h.stored_bytes > kMaxChunkPayload || h.payload_bytes > kMaxChunkPayload) {
      const bool stored = h.stored_bytes > kMaxChunkPayload && h.packed;
      if (!resyncFrom(pos + 1, "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) +
                                   " announces " + std::to_string(stored ? h.stored_bytes : h.payload_bytes) +
                                   (stored ? " stored bytes" : " payload bytes") + " (limit " +
                                   std::to_string(kMaxChunkPayload) + ")"))
        break;
      continue;
    }
    const size_t payload_at = pos + h.header_bytes;
    const size_t payload_remain = bytes.size() - payload_at;
    if (h.stored_bytes > payload_remain) {
      // Either the file was cut short, or the length field is corrupt and intact chunks follow.
      const size_t next = resync(bytes, pos + 1, scan_drop);
      if (next < bytes.size()) {
        if (!resyncFrom(pos + 1, "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) +
                                     " announces " + std::to_string(h.stored_bytes) +
                                     (h.packed ? " stored bytes but " : " payload bytes but ") +
                                     std::to_string(payload_remain) + " remain and an intact chunk follows"))
          break;  // a second log starts in the bytes skipped
        continue;
      }
      log.truncated = true;
      error(log, pos, chunk,
            "truncated at byte " + std::to_string(bytes.size()) + " in chunk " + std::to_string(chunk) +
                ", which starts at byte " + std::to_string(pos) + " (payload needs " + std::to_string(h.stored_bytes) + " bytes, " +
                std::to_string(payload_remain) + " remain)");
      // Its header is whole: its number says which chunk was cut (not counted skipped: the cut tail).
      damaged_numbered.push_back(SequencedChunk{chunk, chunk - repeats, pos, h.sequence, true});
      cut_numbered = true;
      break;
    }
    auto stored = bytes.subspan(payload_at, h.stored_bytes);
    const size_t end = payload_at + h.stored_bytes;
    if (XXH3_64bits(stored.data(), stored.size()) != h.checksum) {
      // Trust the length only if it leads to the end of the file or to a plausible chunk header (the next
      // chunk may be damaged too: it is then reported on its own, with its own number).
      const std::string what =
          "checksum mismatch in chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos);
      // Where the file's intact chunks carry every number once, this is no chunk of the log: junk that
      // holds a chunk header (a fake one, or a copy of a header), skipped to the next intact chunk.
      if (intactNumbersWhole()) {
        const size_t next = resync(bytes, pos + 1, scan_drop);
        if (next < bytes.size() && findLogMagic(bytes, pos + 1, next, scan_drop) >= next) {
          junkBytes(pos, next, what + " (it holds a chunk header whose checksum does not verify): ",
                    wholeText());
          continue;
        }
      }
      if (end == bytes.size() || chunkHeaderPlausible(bytes, end)) {
        chunkError(pos, chunk,
              what + "; its " + std::to_string(end - pos) + " bytes are skipped, reading resumes at byte " +
                  std::to_string(end));
        ++log.chunks_skipped;
        damaged_numbered.push_back(SequencedChunk{chunk, chunk - repeats, pos, h.sequence, true});
        pos = end;
        ++chunk;
        continue;
      }
      pending_number = h.sequence;
      if (!resyncFrom(pos + 1, what + " (its length leads to no chunk)")) break;
      pending_number = -1;
      continue;
    }
    auto [seen_it, first_seen] = seen.try_emplace(h.checksum, SeenChunk{h.sequence, h.stored_bytes, chunk, pos});
    const SeenChunk& earlier = seen_it->second;
    if (!first_seen && earlier.sequence == h.sequence && earlier.stored_bytes == h.stored_bytes) {
      chunkError(pos, chunk,
            "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) + " repeats an earlier chunk (same " +
                "bytes and sequence number " + std::to_string(h.sequence) +
                "; the file was edited or joined from pieces): its records are skipped, so as not to count them twice");
      ++log.chunks_skipped;
      ++repeats;
      pos = end;
      ++chunk;
      continue;
    }
    // The payload of an earlier chunk, byte for byte, under another sequence number: a copy renumbered (the
    // writer never writes the same records twice). Its number is this file's (the chunks after it count on
    // it), its records are not read again.
    ChunkInfo earlier_header;
    if (!first_seen && earlier.stored_bytes == h.stored_bytes && h.stored_bytes > 0 &&
        chunkHeaderAt(bytes, earlier.at, earlier_header) &&
        std::memcmp(bytes.data() + earlier.at + earlier_header.header_bytes, stored.data(), stored.size()) == 0) {
      chunkError(pos, chunk,
                 "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) + " repeats the payload of chunk " +
                     std::to_string(earlier.chunk) + " at byte " + std::to_string(earlier.at) +
                     " (the same bytes) under sequence number " + std::to_string(h.sequence) + " (that chunk carries " +
                     std::to_string(earlier.sequence) +
                     "; the file was edited or joined from pieces): a repeated chunk, its records are skipped, so as "
                     "not to count them twice");
      sequenced.push_back(SequencedChunk{chunk, chunk - repeats, pos, h.sequence});
      noteNumberRead(h.sequence);
      ++log.chunks_skipped;
      ++failed_decode;
      pos = end;
      ++chunk;
      continue;
    }
    sequenced.push_back(SequencedChunk{chunk, chunk - repeats, pos, h.sequence});
    noteNumberRead(h.sequence);
    // Records are decoded in write order: a chunk whose number is ahead of the next one to decode, where an
    // intact chunk later in the file carries a number in between (chunks moved), waits until those are
    // decoded. In a log in order no chunk waits, and the file walk finds nothing to hold.
    if (int64_t{h.sequence} > next_number && numberFollows(next_number, h.sequence, pos)) {
      held.emplace(h.sequence, HeldChunk{pos, chunk, h});
    } else {
      decodeChunk(pos, chunk, h);
      decodeHeld(pos);
    }
    pos = end;
    ++chunk;
    // An End chunk that is not last: a chunk after it that carries a number below the End chunk's that no
    // chunk read carries is this log's, put after it (a file joined from pieces in another order), not a
    // second log nor records appended: reading goes on (an intact chunk is read, a damaged or cut one is
    // reported as such). Where no such chunk follows, what follows is judged as bytes after the End.
    if (log.complete && pos < bytes.size() && missingChunkAt(pos)) continue;
    if (log.complete && !log.dataAfterEnd() && pos < bytes.size() && zeroFrom(bytes, pos, scan_drop)) {
      // Zero bytes after the End record: padding (or blocks allocated and never written), not a second
      // log nor records appended; the log is complete.
      log.zero_tail_offset = pos;
      log.zero_tail_bytes = bytes.size() - pos;
      warning(log, pos, chunk,
              counted(log.zero_tail_bytes, "zero byte") + (log.zero_tail_bytes == 1 ? " follows" : " follow") +
                  " the end record, from byte " +
                  std::to_string(pos) + ": padding (no chunk is in them); the log before them is complete");
      break;
    }
    if (log.complete && !log.dataAfterEnd() && pos < bytes.size()) {
      // The End record closes the log. Bytes after its chunk are another log (`cat a.kcount a.kcount`)
      // or records appended after the close: reading them would count the same launches twice.
      log.after_end_offset = pos;
      log.after_end_bytes = bytes.size() - pos;
      log.after_end_is_log =
          bytes.size() - pos >= sizeof(kLogMagic) && std::memcmp(bytes.data() + pos, kLogMagic, sizeof(kLogMagic)) == 0;
      warning(log, pos, chunk,
              counted(log.after_end_bytes, "byte") + (log.after_end_bytes == 1 ? " follows" : " follow") +
                  " the end record, from byte " + std::to_string(pos) +
                  (log.after_end_is_log ? ": a second log starts there (logs concatenated into one file?)" : "") +
                  "; only the log before " + (log.after_end_bytes == 1 ? "it" : "them") + " (bytes 0 to " +
                  std::to_string(pos) + ") is read");
    }
    if (log.dataAfterEnd()) break;
  }
  // Chunks still held (those before them in write order are not in the file, or the walk stopped before
  // them): decoded now, in write order.
  next_number = INT64_MAX;
  decodeHeld(bytes.size());
  release(bytes.size());
  if (unlisted.unlisted_chunks > 0)
    error(log, unlisted.first_at, unlisted.first_chunk,
          "... and " + std::to_string(unlisted.unlisted_chunks) +
              (unlisted.unlisted_chunks == 1 ? " more damaged chunk" : " more damaged chunks") + " not listed (chunks " +
              std::to_string(unlisted.first_chunk) + " to " + std::to_string(unlisted.last_chunk) + ", at bytes " +
              std::to_string(unlisted.first_at) + " to " + std::to_string(unlisted.last_at) + "); " +
              std::to_string(log.chunks_skipped) + " chunks skipped in all");

  // The chunks' sequence numbers, judged once the whole file is read (a number alone is outside the
  // checksum, so it is not trusted alone):
  // - every number 0..n-1 once, not in file order: chunks moved, none missing (REORDERED);
  // - not in file order, each number once, the End chunk's the highest: the numbers below it that no
  //   chunk carries are chunks missing (less the damaged chunks skipped, whose numbers are unknown);
  // - otherwise chunk by chunk: a jump that the next chunk confirms is chunks missing, where the numbers
  //   jumped over are not elsewhere in the file; any other odd number is a damaged header.
  // Missing chunks are explained when the log's Stats say bytes were dropped (kept out at KCOUNT_MAX_BYTES,
  // or refused by the file); an error when they say none were; without a Stats record (a process that did
  // not close its log, or a rotated part before the last) it cannot be told, and is a warning.
  {
    // The intact chunks' numbers, sorted, each once (a number carried twice is a damaged header).
    std::vector<uint32_t> sorted_numbers;
    sorted_numbers.reserve(sequenced.size());
    for (const SequencedChunk& c : sequenced) sorted_numbers.push_back(c.sequence);
    std::sort(sorted_numbers.begin(), sorted_numbers.end());
    const bool numbers_unique =
        std::adjacent_find(sorted_numbers.begin(), sorted_numbers.end()) == sorted_numbers.end();
    sorted_numbers.erase(std::unique(sorted_numbers.begin(), sorted_numbers.end()), sorted_numbers.end());
    auto carried = [&](uint32_t n) { return std::binary_search(sorted_numbers.begin(), sorted_numbers.end(), n); };
    // How many numbers in [from, to) no chunk read carries.
    auto absentIn = [&](int64_t from, int64_t to) -> uint64_t {
      const auto lo = std::lower_bound(sorted_numbers.begin(), sorted_numbers.end(), static_cast<uint64_t>(from),
                                       [](uint32_t a, uint64_t v) { return a < v; });
      const auto hi = std::lower_bound(sorted_numbers.begin(), sorted_numbers.end(), static_cast<uint64_t>(to),
                                       [](uint32_t a, uint64_t v) { return a < v; });
      return static_cast<uint64_t>(to - from) - static_cast<uint64_t>(hi - lo);
    };
    const bool stats_kept_out = log.has_stats && log.stats.bytes_dropped > 0;
    // A trace-mode log whose Stats count more records than the file holds, none dropped: records are missing.
    const bool stats_short = log.has_stats && !log.summary_mode && log.stats.bytes_dropped == 0 &&
                             log.rotationPart() == 0 &&  // a rotated log's Stats count the whole run
                             (log.launch_records < log.stats.launches || log.kernel_records < log.stats.kernels ||
                              log.range_records < log.stats.ranges);
    auto missingTail = [&](const std::string& msg, const SequencedChunk& at) {
      if (log.has_stats)
        error(log, at.at, at.chunk,
              msg + ", yet the log's stats record says no bytes were dropped: the file lost part of what was "
                    "written (edited, or copied in pieces); those chunks' records are not in the numbers");
      else
        warning(log, at.at, at.chunk,
                msg + "; the log has no stats record to say whether they were kept out at a size cap or lost "
                      "from the file");
    };
    // The End chunk's number damaged to a high value (it is outside the checksum) in a file whose chunks were
    // moved: the numbers between the highest other one and the End chunk's would read as chunks missing. A
    // trace-mode log whose every record its Stats record counts is read lost no chunk of records there: the
    // End chunk's number is damaged, and it is taken as one past the highest other number.
    if (end_sequence >= 0 && numbers_unique && sorted_numbers.size() >= 2 &&
        int64_t{sorted_numbers.back()} == end_sequence && !stats_kept_out && log.has_stats && !log.summary_mode &&
        !stats_short && log.rotationPart() == 0) {
      int64_t other_max = sorted_numbers[sorted_numbers.size() - 2];
      for (const SequencedChunk& c : damaged_numbered)  // a damaged chunk's number below the End chunk's counts
        if (int64_t{c.sequence} < end_sequence) other_max = std::max(other_max, int64_t{c.sequence});
      const uint64_t skipped = log.chunks_skipped - static_cast<uint64_t>(repeats) - failed_decode;
      const uint64_t numbered = damaged_numbered.size() - (cut_numbered ? 1 : 0);
      const uint64_t unnumbered = skipped > numbered ? skipped - numbered : 0;
      auto end_it = std::find_if(sequenced.begin(), sequenced.end(),
                                 [&](const SequencedChunk& c) { return int64_t{c.sequence} == end_sequence; });
      const bool end_moved = end_it != sequenced.end() && std::next(end_it) != sequenced.end();
      if (end_moved && end_sequence > other_max + 1 + static_cast<int64_t>(unnumbered)) {
        const int64_t was = end_sequence;
        end_sequence = other_max + 1 + static_cast<int64_t>(unnumbered);
        end_it->sequence = static_cast<uint32_t>(end_sequence);
        sorted_numbers.back() = end_it->sequence;
        warning(log, end_it->at, end_it->chunk,
                "chunk " + std::to_string(end_it->chunk) + " at byte " + std::to_string(end_it->at) +
                    ", which holds the end record, carries sequence number " + std::to_string(was) +
                    " where " + std::to_string(end_sequence) +
                    " was expected (one past the highest number of the other chunks" +
                    (unnumbered > 0 ? " and the damaged chunks skipped" : "") +
                    "): a damaged chunk header (the number is not covered by the checksum), not chunks missing, "
                    "since every record the log's stats record counts is read; its records are read");
      }
    }
    // Damaged chunks (skipped) whose header survived carry a number too, not trusted alone: one that no intact
    // chunk carries, below the End chunk's, is taken as theirs (it says where the chunk was written).
    std::vector<SequencedChunk> placed;  // intact and damaged chunks with a number, in file order
    size_t hints_used = 0;
    bool cut_used = false;  // among them, the chunk the file's end cuts
    {
      const int64_t bound = end_sequence >= 0 ? end_sequence
                                              : (sorted_numbers.empty() ? 0 : int64_t{sorted_numbers.back()});
      size_t h = 0;
      for (const SequencedChunk& c : sequenced) {
        for (; h < damaged_numbered.size() && damaged_numbered[h].chunk < c.chunk; ++h)
          if (int64_t{damaged_numbered[h].sequence} < bound && !carried(damaged_numbered[h].sequence)) {
            placed.push_back(damaged_numbered[h]);
            ++hints_used;
            cut_used |= cut_numbered && h + 1 == damaged_numbered.size();
          }
        placed.push_back(c);
      }
      for (; h < damaged_numbered.size(); ++h)
        if (int64_t{damaged_numbered[h].sequence} < bound && !carried(damaged_numbered[h].sequence)) {
          placed.push_back(damaged_numbered[h]);
          ++hints_used;
          cut_used |= cut_numbered && h + 1 == damaged_numbered.size();
        }
    }
    auto bySequence = [](const SequencedChunk& x, const SequencedChunk& y) { return x.sequence < y.sequence; };
    const bool in_file_order = std::is_sorted(placed.begin(), placed.end(), bySequence);
    // Chunks moved: the fewest whose moving back restores the write order (those outside one longest run of
    // increasing numbers in file order), and the first chunk not at its place.
    std::vector<uint32_t> moved_numbers;
    const SequencedChunk* first_moved = nullptr;
    auto judgeMoved = [&](const std::vector<SequencedChunk>& list) {
      std::vector<uint32_t> numbers;
      numbers.reserve(list.size());
      for (const SequencedChunk& c : list) numbers.push_back(c.sequence);
      const std::vector<bool> out = outOfOrder(numbers);
      moved_numbers.clear();
      first_moved = nullptr;
      for (size_t i = 0; i < list.size(); ++i) {
        if (out[i]) moved_numbers.push_back(list[i].sequence);
        if (first_moved == nullptr && int64_t{list[i].sequence} != list[i].index) first_moved = &list[i];
      }
      std::sort(moved_numbers.begin(), moved_numbers.end());
      if (first_moved == nullptr && !list.empty()) first_moved = &list.front();
    };
    auto movedText = [&]() {
      const size_t n = moved_numbers.size();
      return std::string(first_moved->damaged ? "damaged chunk " : "chunk ") + std::to_string(first_moved->chunk) +
             " at byte " + std::to_string(first_moved->at) + (first_moved->damaged ? " (skipped)" : "") +
             " carries sequence number " + std::to_string(first_moved->sequence) + " where " +
             std::to_string(first_moved->index) + " was expected; " + counted(n, "chunk was", "chunks were") +
             " moved (the fewest that, moved back, restore the write order: " + (n == 1 ? "number " : "numbers ") +
             idList(moved_numbers) + ")";
    };
    const int64_t end_max = sorted_numbers.empty() ? -1 : int64_t{sorted_numbers.back()};
    const bool moved_with_end = !in_file_order && end_sequence >= 0 && end_sequence == end_max && numbers_unique &&
                                !stats_kept_out;
    if (!in_file_order && numbers_unique && numbersWhole(sorted_numbers)) {
      judgeMoved(sequenced);
      log.chunks_out_of_order = moved_numbers.size();
      warning(log, first_moved->at, first_moved->chunk,
              "chunks out of write order: " + movedText() + "; every number from 0 to " +
                  std::to_string(sequenced.size() - 1) +
                  " is in the file once, so none is missing: the file was put together in another order than it "
                  "was written. Its records are read in write order (by their numbers)");
    } else if (moved_with_end) {
      // Chunks moved (the End chunk's number is the highest, each number once), some numbers not among the
      // intact chunks: those a damaged chunk's header carries are its; the others are chunks missing, less the
      // damaged chunks skipped whose numbers are unknown.
      judgeMoved(placed);
      // Damaged chunks' numbers (distinct, not carried by an intact chunk, below the End chunk's), and the
      // numbers below the End chunk's that no chunk carries, intact or damaged (the first 41 listed).
      std::vector<const SequencedChunk*> hinted;
      for (const SequencedChunk& c : placed)
        if (!carried(c.sequence)) hinted.push_back(&c);
      std::sort(hinted.begin(), hinted.end(), [](auto* a, auto* b) { return a->sequence < b->sequence; });
      hinted.erase(std::unique(hinted.begin(), hinted.end(), [](auto* a, auto* b) { return a->sequence == b->sequence; }),
                   hinted.end());
      const uint64_t open_count = absentIn(0, end_sequence) - hinted.size();
      std::vector<uint32_t> open;
      for (uint32_t n = 0, h = 0; int64_t{n} < end_sequence && open.size() <= 40; ++n) {
        while (h < hinted.size() && hinted[h]->sequence < n) ++h;
        if (!carried(n) && !(h < hinted.size() && hinted[h]->sequence == n)) open.push_back(n);
      }
      // Damaged chunks skipped whose number is unknown (their header lost); the chunk cut by the file's end
      // is not counted skipped.
      const uint64_t skipped = log.chunks_skipped - static_cast<uint64_t>(repeats) - failed_decode;
      const uint64_t skipped_numbered = hints_used - (cut_used ? 1 : 0);
      const uint64_t unnumbered = skipped > skipped_numbered ? skipped - skipped_numbered : 0;
      const uint64_t lost = open_count > unnumbered ? open_count - unnumbered : 0;
      const std::string numbers = (open_count == 1 ? "number " : "numbers ") + idList(open) +
                                  (open_count == 1 ? " is" : " are");
      std::string hint_text;
      for (size_t i = 0; i < hinted.size() && i < 4; ++i)
        hint_text += "; number " + std::to_string(hinted[i]->sequence) + " is that of damaged chunk " +
                     std::to_string(hinted[i]->chunk) + " at byte " + std::to_string(hinted[i]->at) +
                     " (skipped; its header carries it)";
      if (hinted.size() > 4) hint_text += "; and " + counted(hinted.size() - 4, "more damaged chunk") + " so";
      if (lost > 0)
        missingTail(counted(lost, "chunk") + " missing: " + numbers +
                        (unnumbered > 0 ? " not among the intact chunks, and only " +
                                              counted(unnumbered, "damaged chunk") + " whose number is unknown " +
                                              (unnumbered == 1 ? "was" : "were") + " skipped"
                                        : std::string(" not in the file")) +
                        " (its end record's chunk carries number " + std::to_string(end_sequence) +
                        ", the last written)" + hint_text + "; its chunks are also out of write order: " + movedText(),
                    *first_moved);
      else
        warning(log, first_moved->at, first_moved->chunk,
                "chunks out of write order: " + movedText() +
                    (open_count > 0 ? "; the " + numbers + " not among the intact chunks: " +
                                          (open_count == 1 ? "that of the damaged chunk skipped"
                                                           : "those of the damaged chunks skipped")
                                    : std::string()) +
                    hint_text + ". Its records are read in write order (by their numbers)");
    } else {
      int64_t trusted_index = -1, trusted_sequence = -1;  // the last chunk whose number fits: index -1 is "before 0"
      uint64_t missing = 0, gaps = 0, odd = 0;
      const SequencedChunk* first_gap = nullptr;
      const SequencedChunk* first_odd = nullptr;
      int64_t gap_expected = 0, first_odd_expected = 0;
      bool first_odd_next_fits = false;  // the chunk after the first odd one carries the number expected there
      // A trace-mode log whose Stats count more records than the file holds (stats_short) confirms a jump
      // at the last chunk read (a chunk cut right before the final one), where no later chunk can. Chunks
      // kept out at KCOUNT_MAX_BYTES (or refused by the file) took their numbers: the Stats count their
      // bytes, and explain a jump.
      for (size_t i = 0; i < sequenced.size(); ++i) {
        const SequencedChunk& c = sequenced[i];
        const int64_t expected = trusted_sequence + (c.index - trusted_index);
        const int64_t seq = c.sequence;
        bool confirmed = seq > expected && i + 1 < sequenced.size() &&
                         int64_t{sequenced[i + 1].sequence} == seq + (sequenced[i + 1].index - c.index);
        const bool last = i + 1 == sequenced.size();  // no chunk after it to confirm a jump
        if (seq > expected && last && stats_short) confirmed = true;
        // The final chunk, which the writer's reserve always holds, follows kept-out chunks with a jump.
        if (seq > expected && last && stats_kept_out) confirmed = true;
        // A jump over numbers that other chunks of the file carry is chunks moved, not chunks missing.
        const uint64_t absent = seq > expected ? absentIn(expected, seq) : 0;
        if (confirmed && absent == 0) confirmed = false;
        if (seq != expected && !confirmed) {
          if (odd++ == 0) {
            first_odd = &c;
            first_odd_expected = expected;
            first_odd_next_fits =
                !last && int64_t{sequenced[i + 1].sequence} == expected + (sequenced[i + 1].index - c.index);
          }
          continue;
        }
        if (seq != expected) {
          missing += absent;
          if (gaps++ == 0) {
            first_gap = &c;
            gap_expected = expected;
          }
        }
        trusted_index = c.index;
        trusted_sequence = seq;
      }
      if (first_gap != nullptr && !stats_kept_out)
        missingTail(counted(missing, "chunk") + " missing: chunk " + std::to_string(first_gap->chunk) + " at byte " +
                        std::to_string(first_gap->at) + " carries sequence number " +
                        std::to_string(first_gap->sequence) + " where " + std::to_string(gap_expected) +
                        " was expected (" +
                        (first_gap->sequence - gap_expected > 1
                             ? "numbers " + std::to_string(gap_expected) + ".." +
                                   std::to_string(first_gap->sequence - 1) + " are"
                             : "number " + std::to_string(gap_expected) + " is") +
                        " not in the file)" +
                        (gaps > 1 ? " (and at " + counted(gaps - 1, "more place") + ")" : ""),
                    *first_gap);
      if (first_odd != nullptr)
        warning(log, first_odd->at, first_odd->chunk,
                "chunk " + std::to_string(first_odd->chunk) + " at byte " + std::to_string(first_odd->at) +
                    " carries sequence number " + std::to_string(first_odd->sequence) + " where " +
                    std::to_string(first_odd_expected) + " was expected" +
                    (odd > 1 ? " (and " + counted(odd - 1, "more chunk") + " out of line)" : "") +
                    (first_odd_next_fits
                         ? ": a damaged chunk header, since the chunk after it carries the number expected there (the "
                           "number is not covered by the checksum)"
                     : int64_t{first_odd->sequence} > first_odd_expected
                         ? ": chunks before it are missing from the file, or its header is damaged (the number is "
                           "not covered by the checksum; no chunk after it tells which)"
                         : ": a damaged chunk header (the number is not covered by the checksum)") +
                    "; its records are read");
    }
  }
  decoder.finishSnapshots();
  // Chunks moved: the snapshots (each cumulative; the analysis takes the last) in write order, by their
  // sequence numbers, so that the last is the one written last, not the one last in the file.
  if (log.chunks_out_of_order > 0)
    std::stable_sort(log.snapshots.begin(), log.snapshots.end(), [](const SnapshotData& a, const SnapshotData& b) {
      return a.begin.sequence < b.begin.sequence;
    });
  decoder.checkReferences();
  if (!log.complete && log.continuedInPart() == 0) {
    // Without End record the loop read to the end of the file. Bytes after the last intact chunk are
    // damaged or cut short: the End record may be among them, so nothing says the process did not close
    // the log.
    const bool any_intact = log.last_intact_chunk >= 0;
    const uint64_t lost_from = any_intact ? log.last_intact_end : chunks_from;
    if (lost_from < log_end)
      warning(log, bytes.size(), -1,
              std::string(kNoIntactEndRecordText) + "the bytes from byte " + std::to_string(lost_from) +
                  " to the end of the file (chunk " + std::to_string(any_intact ? log.last_intact_chunk + 1 : 0) +
                  " on) are damaged or cut short, and the end record may be among them; " + lastIntactText(log));
    else
      warning(log, bytes.size(), -1,
              std::string(kNoEndRecordText) +
                  "the process did not close it (crash, kill, a write that failed such as a full disk, or still "
                  "running); " +
                  lastIntactText(log));
  }
  return log;
}

}  // namespace

LogData readLog(std::span<const uint8_t> bytes, const ReadOptions& options) {
  return readLogBytes(bytes, options, [](size_t) {}, [](size_t, size_t) {});
}

LogData readLogFile(const std::string& path, const ReadOptions& options) {
  auto failed = [](std::string message) {
    LogData log;
    log.strings.resize(1);
    log.scopes.resize(1);
    error(log, 0, -1, std::move(message));
    return log;
  };
  // Only regular files: a FIFO would block forever, a folder has no bytes.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return failed(path + " is not a regular file");
  MappedFile file;
  std::string why;
  if (!file.open(path, why)) return failed(why);
  LogData log = readLogBytes(file.bytes(), options, [&file](size_t done) { file.release(done); },
                             [&file](size_t from, size_t to) { file.drop(from, to); });
  if (const uint64_t at = file.shrankAt(); at != UINT64_MAX)
    error(log, at, -1,
          "the file shrank while it was read (another process truncated or rewrote it): its bytes from byte " +
              std::to_string(at) + " on read as zeros; what comes before them is read");
  return log;
}

}  // namespace kc
