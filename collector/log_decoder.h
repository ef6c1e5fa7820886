// The log reader's decoder core: the file header, the chunk header, a verified chunk's payload and its
// records, one small function per record kind (RecordDecoder). What an intact log needs, and all a person
// adding a record kind reads: its body in log_format.h, its case in RecordDecoder::decodeRecord(), its
// function here. Damaged, moved, repeated or concatenated files are diagnosed beside it (log_damage.h); the
// chunk walk that joins the two is decodeLog() (log_decoder.cpp). Internal to collector/ (the public API is
// log_reader.h). Not thread-safe: one decoder per read, on the reading thread.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collector/log_format.h"
#include "collector/log_reader.h"

struct ZSTD_DCtx_s;

namespace kc::logread {

/// String and scope ids at or above kIdLimit are corrupt (the library's tables hand out no more). Ids are
/// the run's and sparse in a rotated part (it defines only those its records use), so the number of
/// definitions a file holds says nothing of how high they go: this bound, not the file's size, keeps
/// LogData::strings/scopes (indexed by id) at most kMaxIds long whatever a length or id field says.
inline constexpr uint32_t kIdLimit = kMaxIds;

/// Adds a problem to LogData::issues: `offset` in the file (or ReadIssue::kNoOffset), `chunk` in file order
/// (-1: the file header or none). Throws only std::bad_alloc.
void addIssue(LogData& log, ReadIssue::Severity sev, uint64_t offset, int64_t chunk, std::string msg);
/// addIssue() of an error (a part of the file skipped or lost).
void error(LogData& log, uint64_t offset, int64_t chunk, std::string msg);
/// addIssue() of a warning (nothing written is lost).
void warning(LogData& log, uint64_t offset, int64_t chunk, std::string msg);
/// "1-9, 14, 20" for sorted ids, at most `max_items` items (then ", ...").
std::string idList(const std::vector<uint32_t>& ids, size_t max_items = 40);
/// Sets log.strings_missing / scopes_missing from which ids a record defined (`str_def`, `scope_def`: at
/// least as long as the tables; id 0 always counts as defined); both left empty when none is missing.
void markMissing(LogData& log, const std::vector<bool>& str_def, const std::vector<bool>& scope_def);
/// The record type's name in messages ("kernel batch"); "unknown" for a type this reader does not know.
const char* recordTypeName(uint16_t type);

/// Bounds-checked view over bytes. Every read checks what remains; nothing reads past the span.
class Cursor {
 public:
  /// `base`: the file offset of bytes[0] (offset() adds it).
  explicit Cursor(std::span<const uint8_t> bytes, uint64_t base = 0) : bytes_(bytes), base_(base) {}

  size_t remaining() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  uint64_t offset() const { return base_ + pos_; }  // offset in the file

  /// Copies sizeof(T) bytes into out; false (and nothing consumed) if fewer remain.
  template <typename T>
  bool read(T& out) {
    if (remaining() < sizeof(T)) return false;
    std::memcpy(&out, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  /// The next n bytes (consumed), or an empty span (nothing consumed) if fewer remain.
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
bool chunkHeaderAt(std::span<const uint8_t> bytes, size_t at, ChunkInfo& c);
/// True if a chunk (plain or packed) whose header starts at `at` is complete within bytes, within the
/// size caps, and its checksum verifies.
bool chunkVerifies(std::span<const uint8_t> bytes, size_t at);
/// True if the chunk at `pos` is intact: its header reads (`h`), its lengths are within the caps, its
/// stored bytes fit in `bytes` and their checksum verifies. What the chunk walk takes without a second look.
bool chunkIntactAt(std::span<const uint8_t> bytes, size_t pos, ChunkInfo& h);

/// Reads the file header into log (version; not_a_log, truncated, unsupported_version and the issues that
/// say why). Returns false when no chunk is to be read; else `chunks_from` is where chunk 0 starts. A damaged
/// magic (one or two bytes off), version or header_bytes field is an error and the chunks are read anyway.
bool readFileHeader(std::span<const uint8_t> bytes, LogData& log, size_t& chunks_from);

/// `into` += `s`, field by field (the reader sums the Stats records of a log, and of rotated parts).
void sumStats(StatsBody& into, const StatsBody& s);

/// One pass over a log's records: decodes verified payloads into LogData and feeds the visitor, with the
/// state that outlives a chunk (an open snapshot, the batch buffers, the zstd context, which ids were
/// defined and which referred to before their definition). Owns nothing of LogData; holds references to
/// `log` and `options`, which must outlive it. One per read, on the reading thread.
class RecordDecoder {
 public:
  RecordDecoder(LogData& log, const ReadOptions& options) : log_(log), opt_(options) {}
  ~RecordDecoder();
  RecordDecoder(const RecordDecoder&) = delete;
  RecordDecoder& operator=(const RecordDecoder&) = delete;

  /// Decompresses a verified packed chunk's stored bytes into the reusable payload buffer (valid until
  /// the next call). Returns false, with the error issue added, if the codec is unknown or the bytes do not
  /// decode to payload_bytes. Throws std::bad_alloc when no zstd context can be made.
  bool unpack(const ChunkInfo& c, std::span<const uint8_t> stored, uint64_t chunk_at, int64_t chunk,
              std::span<const uint8_t>& payload);
  /// Decodes the records of one verified payload. Returns false if a bad record stopped the chunk.
  /// `base` is the file offset of the payload (plain chunk) or 0 (packed chunk: offsets are within the
  /// decoded payload, issues name the chunk's offset `chunk_at`).
  bool decodePayload(std::span<const uint8_t> payload, uint64_t base, uint64_t chunk_at, int64_t chunk,
                     uint32_t announced_records, bool packed);
  /// After a chunk's records: marks where the windows of the Segment records it held end
  /// (LogData::segment_marks) and hands those records to the visitor.
  void endChunk();
  /// After the last chunk: the records of unknown type, counted, are named once; a snapshot still open was
  /// cut off (reported, not used). If the log's End record was read, the file does not end inside the
  /// snapshot: the library closed the log after the rest of it was not written, and the metadata and Stats
  /// record of the final chunk say why (LogData::snapshot_cut_at_end).
  void finishSnapshots();
  /// After the last chunk: reports references to ids past every definition, gaps in the tables and cycles
  /// of scope parents (log_references.cpp).
  void checkReferences();
  /// Where a record lies, for messages: "at byte B in chunk K"; "in packed chunk K at byte B" (the chunk's
  /// offset: a packed chunk's records have no file offset of their own); "" when not known
  /// (ReadIssue::kNoOffset).
  std::string recordPlace(uint64_t at, int64_t chunk) const;

 private:
  /// The record being decoded: where it is, for its issues.
  struct At {
    uint64_t at;        // file offset, or offset in a packed chunk's decoded payload
    uint64_t chunk_at;  // the chunk's file offset
    int64_t chunk;
    bool packed;
    uint64_t issueAt() const { return packed ? chunk_at : at; }
    std::string text() const;  // "byte B", or "decoded byte B of packed chunk K (chunk at byte C)"
  };
  /// One record whose body fits its known size: to the function of its kind. Inlined into the record loop
  /// of decodePayload() (log_decoder.cpp, its only caller): a call per record costs about a tenth of the
  /// reading time of a log of single records (format 1.1).
  [[gnu::always_inline]] inline void decodeRecord(uint16_t type, const At& r, std::span<const uint8_t> body);
  void decodeMetadata(const At& r, std::span<const uint8_t> body);
  void decodeString(const At& r, std::span<const uint8_t> body);
  void decodeScope(const At& r, std::span<const uint8_t> body);
  void decodeGraphNode(std::span<const uint8_t> body);
  void decodeMemOp(std::span<const uint8_t> body);
  void decodeRangeCallbacks(const At& r, std::span<const uint8_t> body);
  void decodeBatch(uint16_t type, const At& r, std::span<const uint8_t> body);
  void decodeStats(std::span<const uint8_t> body);
  void decodeSegment(std::span<const uint8_t> body);
  void snapshotBegin(const At& r, std::span<const uint8_t> body);
  void snapshotEnd(std::span<const uint8_t> body);
  void dropSnapshot(const std::string& why);

  void addLaunches(std::span<const LaunchBody> v);
  void addKernels(std::span<const KernelBody> v);
  void addRanges(std::span<const RangeBody> v);

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
  void noteRef(bool is_string, uint32_t id, const char* kind, uint64_t index);
  void checkScopeTree();
  void noteUnknownRecord(uint16_t type);
  /// One warning for the records skipped as of unknown type, at the first of them.
  void finishUnknownRecords();

  LogData& log_;
  const ReadOptions& opt_;
  ZSTD_DCtx_s* zstd_ = nullptr;
  // Summary mode: a snapshot may span chunks; rows are collected until its SnapshotEnd, then it joins
  // LogData::snapshots.
  bool snap_open_ = false;
  SnapshotData snap_;
  // Records of a type this reader does not know (a later minor version's, or a crafted file's): skipped,
  // counted, and the first named once the log is read (finishUnknownRecords()).
  uint64_t unknown_records_ = 0;
  uint16_t unknown_first_type_ = 0;
  uint64_t unknown_first_at_ = ReadIssue::kNoOffset;
  int64_t unknown_first_chunk_ = -1;
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
  int64_t rec_chunk_ = -1;
  size_t segments_in_chunk_ = 0;  // Segment records of the chunk being decoded (endChunk())
  /// References to ids not defined when the record was read: (is_string, id) -> references. Definitions
  /// normally come first, so this stays empty; checkReferences() keeps those still undefined at the end.
  std::map<std::pair<bool, uint32_t>, Ref> refs_;
  uint64_t refs_unlisted_ = 0;  // references to further ids once refs_ holds kMaxPendingRefIds
  static constexpr size_t kMaxPendingRefIds = 4096;
};

/// Told `release(end)` when the bytes before `end` will not be needed again (a mapped file drops them).
using ByteRelease = std::function<void(size_t)>;
/// Told [from, to) of the bytes a scan over damaged bytes has passed (a mapped file drops those pages,
/// which a later scan may read again). May be empty.
using ScanDrop = std::function<void(size_t, size_t)>;

/// Decodes a log whose bytes are all addressable: the file header, then chunk by chunk, intact chunks
/// decoded (in write order), damage diagnosed by ChunkDamage (log_damage.h). Never throws on bad input
/// (problems go to LogData::issues); throws std::bad_alloc only if memory runs out.
LogData decodeLog(std::span<const uint8_t> bytes, const ReadOptions& options, const ByteRelease& release,
                  const ScanDrop& drop);

}  // namespace kc::logread
