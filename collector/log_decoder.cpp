// The log reader's decoder core (log_decoder.h): the file header, chunk headers, verified payloads and
// their records, and the chunk walk (decodeLog()) that decodes intact chunks and hands the rest to
// ChunkDamage (log_damage.h).
#include "collector/log_decoder.h"

#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <initializer_list>
#include <new>
#include <string>

#include "collector/compact.h"
#include "collector/log_damage.h"

namespace kc::logread {
namespace {

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
    case RecordType::kSnapshotScope: return kSnapshotScopeBytesV12;  // the graph GPU fields came later
    case RecordType::kSnapshotKernel: return sizeof(SnapshotKernelBody);
    case RecordType::kSnapshotEnd: return sizeof(SnapshotEndBody);
    case RecordType::kLaunchBatch:
    case RecordType::kKernelBatch:
    case RecordType::kRangeBatch: return 0;  // variable length, checked by the batch decoder
    case RecordType::kRangeCallbacks: return 0;  // checked by its decoder: a short one costs only itself
  }
  return 0;
}

template <typename T>
T prefix(std::span<const uint8_t> body) {
  T out{};
  std::memcpy(&out, body.data(), sizeof(T));  // caller checked body.size() >= sizeof(T)
  return out;
}

/// The first bytes of `body` as a T whose later fields an older writer did not write (0 then); the
/// caller checked body.size() >= knownBodyBytes().
template <typename T>
T prefixOf(std::span<const uint8_t> body) {
  T out{};
  std::memcpy(&out, body.data(), std::min(body.size(), sizeof(T)));
  return out;
}

/// The file header's magic: false (not_a_log or truncated, with the error that says why) when no chunk is
/// to be read; a magic one or two bytes off is an error and the chunks are read.
bool checkMagic(std::span<const uint8_t> bytes, LogData& log, FileHeader& fh) {
  Cursor c(bytes);
  if (bytes.empty()) {
    // No file header at all: nothing says this was ever a log (a process killed before its first write
    // leaves such a file too).
    log.not_a_log = true;
    error(log, 0, -1,
          "not a kcount log: empty file (0 bytes), no kcount file header (a log starts with \"KCOUNTLG\"; a "
          "process killed before its first write leaves an empty file)");
    return false;
  }
  if (bytes.size() < sizeof(FileHeader) &&
      std::memcmp(bytes.data(), kLogMagic, std::min(bytes.size(), sizeof(kLogMagic))) == 0) {
    // Cut inside the file header: a log whose process wrote almost nothing.
    log.truncated = true;
    error(log, bytes.size(), -1,
          "truncated at byte " + std::to_string(bytes.size()) + " in the file header: the file is cut short (" +
              std::to_string(bytes.size()) + (bytes.size() == 1 ? " byte" : " bytes") + ", a file header is " +
              std::to_string(sizeof(FileHeader)) + " bytes)");
    return false;
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
    return false;
  }
  return true;
}

/// The file header's version (into log.major/minor): false for a plausible newer major (refused); a
/// version no kcount writes is a damaged field, an error, and the chunks are read as this format's.
bool checkVersion(LogData& log, const FileHeader& fh) {
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
    return false;
  }
  if (fh.major == kLogMajor && fh.minor > kLogMinor)
    warning(log, 8, -1,
            "format version " + std::to_string(fh.major) + "." + std::to_string(fh.minor) + " is newer than this "
                "reader's " + std::to_string(kLogMajor) + "." + std::to_string(kLogMinor) +
                ": what it added is not read (a version field damaged reads the same)");
  return true;
}

/// Where chunk 0 starts, from the file header's header_bytes field.
size_t chunksStart(std::span<const uint8_t> bytes, LogData& log, const FileHeader& fh) {
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

  return pos;
}

}  // namespace

void addIssue(LogData& log, ReadIssue::Severity sev, uint64_t offset, int64_t chunk, std::string msg) {
  log.issues.push_back(ReadIssue{sev, offset, chunk, std::move(msg)});
}
void error(LogData& log, uint64_t offset, int64_t chunk, std::string msg) {
  addIssue(log, ReadIssue::Severity::kError, offset, chunk, std::move(msg));
}
void warning(LogData& log, uint64_t offset, int64_t chunk, std::string msg) {
  addIssue(log, ReadIssue::Severity::kWarning, offset, chunk, std::move(msg));
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
    case RecordType::kRangeCallbacks: return "range callbacks";
  }
  return "unknown";
}

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

bool chunkIntactAt(std::span<const uint8_t> bytes, size_t pos, ChunkInfo& h) {
  if (!chunkHeaderAt(bytes, pos, h)) return false;
  if (h.stored_bytes > kMaxChunkPayload || h.payload_bytes > kMaxChunkPayload) return false;
  if (h.stored_bytes > bytes.size() - pos - h.header_bytes) return false;
  return XXH3_64bits(bytes.data() + pos + h.header_bytes, h.stored_bytes) == h.checksum;
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

bool readFileHeader(std::span<const uint8_t> bytes, LogData& log, size_t& chunks_from) {
  FileHeader fh;
  if (!checkMagic(bytes, log, fh) || !checkVersion(log, fh)) return false;
  chunks_from = chunksStart(bytes, log, fh);
  return true;
}

RecordDecoder::~RecordDecoder() {
  if (zstd_ != nullptr) ZSTD_freeDCtx(zstd_);
}

std::string RecordDecoder::recordPlace(uint64_t at, int64_t chunk) const {
  if (at == ReadIssue::kNoOffset) return {};
  const bool packed = chunk >= 0 && static_cast<size_t>(chunk) < packed_chunk_.size() &&
                      packed_chunk_[static_cast<size_t>(chunk)];
  return packed ? "in packed chunk " + std::to_string(chunk) + " at byte " + std::to_string(at)
                : "at byte " + std::to_string(at) + " in chunk " + std::to_string(chunk);
}

// Offsets in a packed chunk's decoded payload are not file offsets: issues there name the chunk's header
// offset and the record's position in the decoded payload.
std::string RecordDecoder::At::text() const {
  return packed ? "decoded byte " + std::to_string(at) + " of packed chunk " + std::to_string(chunk) +
                      " (chunk at byte " + std::to_string(chunk_at) + ")"
                : "byte " + std::to_string(at);
}

void RecordDecoder::endChunk() {
  if (segments_in_chunk_ == 0) return;
  const LogData::RecordMark mark{log_.launch_records, log_.kernel_records, log_.mem_op_records};
  for (size_t i = log_.segments.size() - segments_in_chunk_; i < log_.segments.size(); ++i) {
    log_.segment_marks.push_back(mark);
    if (opt_.visitor) opt_.visitor->segment(log_.segments[i]);
  }
  segments_in_chunk_ = 0;
}

/// A snapshot that never got its SnapshotEnd (or whose rows do not add up): reported, not used.
void RecordDecoder::dropSnapshot(const std::string& why) {
  ++log_.incomplete_snapshots;
  const SnapshotData& d = snap_;
  warning(log_, d.offset, d.chunk,
          "snapshot " + std::to_string(d.begin.sequence) + " at byte " + std::to_string(d.offset) + " is incomplete (" +
              why + ", " + std::to_string(d.scopes.size() + d.kernels.size()) + " of " +
              std::to_string(uint64_t(d.begin.scope_rows) + d.begin.kernel_rows) + " rows read); " +
              (log_.snapshots.empty() ? std::string("no complete snapshot before it")
                                      : "the last complete one before it is snapshot " +
                                            std::to_string(log_.snapshots.back().begin.sequence) + " at byte " +
                                            std::to_string(log_.snapshots.back().offset)));
  snap_open_ = false;
  snap_ = SnapshotData{};
}

void RecordDecoder::finishSnapshots() {
  finishUnknownRecords();
  if (!snap_open_) return;
  if (!log_.complete) {
    dropSnapshot("the log ends inside it");
    return;
  }
  const SnapshotData& d = snap_;
  auto& cut = log_.snapshot_cut_at_end;
  cut.open_at_end = true;
  cut.final = (d.begin.flags & kSnapshotFinal) != 0;
  cut.sequence = d.begin.sequence;
  cut.rows_read = d.scopes.size() + d.kernels.size();
  cut.rows = uint64_t(d.begin.scope_rows) + d.begin.kernel_rows;
  const StatsBody& st = log_.stats;
  const bool not_written = st.not_written_launches + st.not_written_kernels + st.not_written_ranges +
                               st.not_written_other + st.bytes_dropped > 0;
  dropSnapshot(log_.meta("records_not_written").find("KCOUNT_MAX_BYTES") != std::string::npos
                   ? "cut at the size cap (KCOUNT_MAX_BYTES): the rest was kept out, and the log's End record "
                     "follows"
               : not_written ? "cut where the file refused the rest (disk full or unwritable), and the log's End "
                               "record follows"
                             : "its end record is missing, though the log's End record follows");
}

void RecordDecoder::noteUnknownRecord(uint16_t type) {
  if (unknown_records_++ == 0) {
    unknown_first_type_ = type;
    unknown_first_at_ = rec_at_;
    unknown_first_chunk_ = rec_chunk_;
  }
}

void RecordDecoder::finishUnknownRecords() {
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

void RecordDecoder::addLaunches(std::span<const LaunchBody> v) {
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

void RecordDecoder::addKernels(std::span<const KernelBody> v) {
  uint64_t i = log_.kernel_records;
  for (const KernelBody& k : v) refString(k.name_id, "kernel", i++);
  log_.kernel_records = i;
  if (opt_.visitor) opt_.visitor->kernels(v);
}

void RecordDecoder::addRanges(std::span<const RangeBody> v) {
  uint64_t i = log_.range_records;
  for (const RangeBody& r : v) refScope(r.scope_id, "range", i++);
  log_.range_records = i;
  if (opt_.visitor) opt_.visitor->ranges(v);
}

bool RecordDecoder::unpack(const ChunkInfo& c, std::span<const uint8_t> stored, uint64_t chunk_at, int64_t chunk,
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

inline void RecordDecoder::decodeRecord(uint16_t type, const At& r, std::span<const uint8_t> body) {
  switch (static_cast<RecordType>(type)) {
    case RecordType::kMetadata: decodeMetadata(r, body); break;
    case RecordType::kString: decodeString(r, body); break;
    case RecordType::kScope: decodeScope(r, body); break;
    case RecordType::kLaunch: {
      const LaunchBody l = prefix<LaunchBody>(body);
      if (opt_.keep_records) log_.launches.push_back(l);
      addLaunches({&l, 1});
      break;
    }
    case RecordType::kKernel: {
      const KernelBody k = prefix<KernelBody>(body);
      if (opt_.keep_records) log_.kernels.push_back(k);
      addKernels({&k, 1});
      break;
    }
    case RecordType::kRange: {
      const RangeBody g = prefix<RangeBody>(body);
      if (opt_.keep_records) log_.ranges.push_back(g);
      addRanges({&g, 1});
      break;
    }
    case RecordType::kGraphNode: decodeGraphNode(body); break;
    case RecordType::kMemOp: decodeMemOp(body); break;
    case RecordType::kLaunchBatch:
    case RecordType::kKernelBatch:
    case RecordType::kRangeBatch: decodeBatch(type, r, body); break;
    case RecordType::kStats: decodeStats(body); break;
    case RecordType::kSegment: decodeSegment(body); break;
    case RecordType::kSnapshotBegin: snapshotBegin(r, body); break;
    case RecordType::kSnapshotScope:
      if (snap_open_) snap_.scopes.push_back(prefixOf<SnapshotScopeBody>(body));
      break;
    case RecordType::kSnapshotKernel:
      if (snap_open_) snap_.kernels.push_back(prefix<SnapshotKernelBody>(body));
      break;
    case RecordType::kSnapshotEnd: snapshotEnd(body); break;
    case RecordType::kRangeCallbacks: decodeRangeCallbacks(r, body); break;
    // Packed chunks put their compact batches after the other records: records may follow the End
    // record inside its chunk and still belong to the log.
    case RecordType::kEnd: log_.complete = true; break;
    default: noteUnknownRecord(type); break;  // skipped (the format only grows), counted
  }
}

bool RecordDecoder::decodePayload(std::span<const uint8_t> payload, uint64_t base, uint64_t chunk_at, int64_t chunk,
                                  uint32_t announced_records, bool packed) {
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
  while (c.remaining() > 0) {
    const At r{c.offset(), chunk_at, chunk, packed};
    RecordHeader rh;
    if (!c.read(rh)) {
      error(log_, r.issueAt(), chunk,
            "record " + std::to_string(records) + " in chunk " + std::to_string(chunk) + " at " + r.text() +
                ": record header needs 8 bytes, " + std::to_string(c.remaining()) + " remain in the chunk");
      return false;
    }
    if (rh.body_bytes > c.remaining()) {
      error(log_, r.issueAt(), chunk,
            std::string(recordTypeName(rh.type)) + " record " + std::to_string(records) + " in chunk " +
                std::to_string(chunk) + " at " + r.text() + " announces " + std::to_string(rh.body_bytes) +
                " body bytes, " + std::to_string(c.remaining()) + " remain in the chunk");
      return false;
    }
    std::span<const uint8_t> body = c.take(rh.body_bytes);
    ++records;
    setRecordAt(r.issueAt(), chunk);
    const size_t need = knownBodyBytes(rh.type);
    if (body.size() < need) {
      error(log_, r.issueAt(), chunk,
            std::string(recordTypeName(rh.type)) + " record in chunk " + std::to_string(chunk) + " at " +
                r.text() + " has a body of " + std::to_string(body.size()) + " bytes, needs " +
                std::to_string(need));
      return false;
    }
    decodeRecord(rh.type, r, body);
  }
  if (records != announced_records) {
    // The header is not covered by the checksum: a record count that disagrees with the verified payload
    // is damage to the header (every record of the payload was read).
    error(log_, chunk_at, chunk,
          "chunk " + std::to_string(chunk) + " header announces " + std::to_string(announced_records) +
              " records, its payload (checksum verified) holds " + std::to_string(records) +
              ": the chunk header (at byte " + std::to_string(chunk_at) + ") is damaged; the " + std::to_string(records) + " records were read");
  }
  return true;
}

void RecordDecoder::decodeMetadata(const At& r, std::span<const uint8_t> body) {
  auto m = prefix<MetadataBody>(body);
  auto rest = body.subspan(sizeof(MetadataBody));
  if (m.key_bytes > rest.size()) {
    error(log_, r.issueAt(), r.chunk,
          "metadata record at " + r.text() + " announces a key of " + std::to_string(m.key_bytes) +
              " bytes, the body holds " + std::to_string(rest.size()));
    return;
  }
  const auto* p = reinterpret_cast<const char*>(rest.data());
  const size_t key_len = std::min<size_t>(m.key_bytes, kMaxStringBytes);
  const size_t value_len = std::min<size_t>(rest.size() - m.key_bytes, kMaxStringBytes);
  log_.metadata.emplace_back(std::string(p, key_len), std::string(p + m.key_bytes, value_len));
  // The library writes `mode` first thing, so a summary-mode log is known as one before its first
  // snapshot (one KCOUNT_INTERVAL after recording starts) exists.
  if (log_.metadata.back().first == "mode" && log_.metadata.back().second == "summary") log_.summary_mode = true;
}

void RecordDecoder::decodeString(const At& r, std::span<const uint8_t> body) {
  auto s = prefix<StringBody>(body);
  auto text = body.subspan(sizeof(StringBody));
  if (text.size() > kMaxStringBytes) text = text.subspan(0, kMaxStringBytes);
  if (s.string_id >= kIdLimit) {
    error(log_, r.issueAt(), r.chunk,
          "string id " + std::to_string(s.string_id) + " at " + r.text() + " is out of range (ids are below " +
              std::to_string(kIdLimit) + ")");
    return;
  }
  if (s.string_id == kNoString) return;  // id 0 is always ""
  if (log_.strings.size() <= s.string_id) log_.strings.resize(s.string_id + 1);
  log_.strings[s.string_id].assign(reinterpret_cast<const char*>(text.data()), text.size());
  defineString(s.string_id);
}

void RecordDecoder::decodeScope(const At& r, std::span<const uint8_t> body) {
  auto s = prefix<ScopeBody>(body);
  if (s.scope_id >= kIdLimit) {
    error(log_, r.issueAt(), r.chunk,
          "scope id " + std::to_string(s.scope_id) + " at " + r.text() + " is out of range (ids are below " +
              std::to_string(kIdLimit) + ")");
    return;
  }
  if (s.scope_id == kRootScope) return;  // the root is implicit and stays all zero
  if (log_.scopes.size() <= s.scope_id) log_.scopes.resize(s.scope_id + 1);
  log_.scopes[s.scope_id] = s;
  defineScope(s.scope_id);
  // A scope record usually follows the definitions it refers to; those still missing at the end of
  // the log are reported by checkReferences().
  refString(s.name_id, "scope", s.scope_id);
  refString(s.domain_id, "scope", s.scope_id);
  refScope(s.parent_id, "scope", s.scope_id);
}

void RecordDecoder::decodeGraphNode(std::span<const uint8_t> body) {
  const GraphNodeBody g = prefix<GraphNodeBody>(body);
  if (opt_.keep_records) log_.graph_nodes.push_back(g);
  markScopeRef(g.scope_id);
  ++log_.graph_node_records;
  if (opt_.visitor) opt_.visitor->graphNode(g);
}

// A record whose body is short or whose numbers cannot be (more timed callbacks than callbacks, a scope id
// past kMaxIds) is an error and skipped alone: its header framed it, so the records after it are intact.
void RecordDecoder::decodeRangeCallbacks(const At& r, std::span<const uint8_t> body) {
  const std::string where = "range callbacks record in chunk " + std::to_string(r.chunk) + " at " + r.text();
  if (body.size() < sizeof(RangeCallbacksBody)) {
    error(log_, r.issueAt(), r.chunk,
          where + " has a body of " + std::to_string(body.size()) + " bytes, needs " +
              std::to_string(sizeof(RangeCallbacksBody)) + "; skipped (kcount's own cost of that range is not known)");
    return;
  }
  const RangeCallbacksBody b = prefix<RangeCallbacksBody>(body);
  if (b.timed > b.callbacks || b.scope_id >= kIdLimit) {
    error(log_, r.issueAt(), r.chunk,
          where + " is damaged (scope " + std::to_string(b.scope_id) + ", " + std::to_string(b.callbacks) +
              " callbacks, " + std::to_string(b.timed) + " timed); skipped");
    return;
  }
  markScopeRef(b.scope_id);
  log_.range_callbacks.push_back(b);
}

void RecordDecoder::decodeMemOp(std::span<const uint8_t> body) {
  const MemOpBody m = prefix<MemOpBody>(body);
  if (opt_.keep_records) log_.mem_ops.push_back(m);
  ++log_.mem_op_records;
  if (opt_.visitor) opt_.visitor->memOp(m);
}

// Decoded into LogData's vector when records are kept (the visitor sees the appended tail), else into a
// buffer reused batch after batch.
void RecordDecoder::decodeBatch(uint16_t type, const At& r, std::span<const uint8_t> body) {
  std::string why;
  bool ok = false;
  const bool keep = opt_.keep_records;
  if (static_cast<RecordType>(type) == RecordType::kLaunchBatch) {
    auto& v = keep ? log_.launches : launch_buf_;
    const size_t from = keep ? v.size() : 0;
    if ((ok = decodeLaunchBatch(body, v, why, !keep))) addLaunches(std::span(v).subspan(from));
  } else if (static_cast<RecordType>(type) == RecordType::kKernelBatch) {
    auto& v = keep ? log_.kernels : kernel_buf_;
    const size_t from = keep ? v.size() : 0;
    if ((ok = decodeKernelBatch(body, v, why, !keep))) addKernels(std::span(v).subspan(from));
  } else {
    auto& v = keep ? log_.ranges : range_buf_;
    const size_t from = keep ? v.size() : 0;
    if ((ok = decodeRangeBatch(body, v, why, !keep))) addRanges(std::span(v).subspan(from));
  }
  if (!ok)
    error(log_, r.issueAt(), r.chunk,
          std::string(recordTypeName(type)) + " record in chunk " + std::to_string(r.chunk) + " at " + r.text() +
              " is malformed: " + why + "; its records are skipped");
}

void RecordDecoder::decodeStats(std::span<const uint8_t> body) {
  // A body of 72 bytes (written before the not_written_* fields) leaves them 0.
  StatsBody st{};
  std::memcpy(&st, body.data(), std::min(body.size(), sizeof(StatsBody)));
  if (body.size() >= sizeof(StatsBody)) log_.has_not_written_stats = true;
  sumStats(log_.stats, st);
  log_.has_stats = true;
}

void RecordDecoder::decodeSegment(std::span<const uint8_t> body) {
  const SegmentBody seg = prefix<SegmentBody>(body);
  refString(seg.reason_id, "segment", log_.segments.size());
  refString(seg.end_reason_id, "segment", log_.segments.size());
  log_.segments.push_back(seg);
  ++segments_in_chunk_;
}

void RecordDecoder::snapshotBegin(const At& r, std::span<const uint8_t> body) {
  if (snap_open_) dropSnapshot("a new snapshot began before its end record");
  log_.summary_mode = true;
  snap_open_ = true;
  // A body of 128 bytes (written before the dropped-tally detail) leaves max_keys and after 0.
  snap_.begin = SnapshotBeginBody{};
  std::memcpy(&snap_.begin, body.data(), std::min(body.size(), sizeof(SnapshotBeginBody)));
  snap_.offset = r.issueAt();
  snap_.chunk = r.chunk;
  // Rows are appended as they come; the announced counts are not trusted for allocation.
}

void RecordDecoder::snapshotEnd(std::span<const uint8_t> body) {
  if (!snap_open_) return;  // the begin record was in a skipped chunk; already reported there
  const auto e = prefix<SnapshotEndBody>(body);
  const SnapshotBeginBody& b = snap_.begin;
  if (e.sequence != b.sequence || snap_.scopes.size() != b.scope_rows || snap_.kernels.size() != b.kernel_rows ||
      e.rows != uint64_t(b.scope_rows) + b.kernel_rows) {
    dropSnapshot("its rows do not match its begin and end records");
    return;
  }
  log_.snapshots.push_back(std::move(snap_));
  snap_ = SnapshotData{};
  snap_open_ = false;
}

namespace {

/// Decodes the intact chunk `ci` at byte `at` (index `index` in file order): its records go to LogData and
/// the visitor. A packed chunk whose checksum verifies but whose payload does not decode (unknown codec, a
/// zstd frame of another size) is skipped; its length is trusted, as the checksum covers it. Returns false
/// if the chunk was skipped or a bad record stopped it (counted in LogData::chunks_skipped).
bool decodeChunk(std::span<const uint8_t> bytes, RecordDecoder& decoder, LogData& log, const ReadOptions& options,
                 size_t at, int64_t index, const ChunkInfo& ci) {
  const size_t payload_at = at + ci.header_bytes;
  const std::span<const uint8_t> stored = bytes.subspan(payload_at, ci.stored_bytes);
  std::span<const uint8_t> payload = stored;
  if (ci.packed && !decoder.unpack(ci, stored, at, index, payload)) {
    ++log.chunks_skipped;
    return false;
  }
  if (options.visitor) options.visitor->chunk(at, index);
  const bool decoded = decoder.decodePayload(payload, ci.packed ? 0 : payload_at, at, index, ci.record_count, ci.packed);
  decoder.endChunk();
  if (!decoded) {
    ++log.chunks_skipped;
    return false;
  }
  ++log.chunks_read;
  if (ci.packed) ++log.packed_chunks;
  if (index > log.last_intact_chunk) {
    log.last_intact_chunk = index;
    log.last_intact_end = payload_at + ci.stored_bytes;
  }
  return true;
}

}  // namespace

LogData decodeLog(std::span<const uint8_t> bytes, const ReadOptions& options, const ByteRelease& release,
                  const ScanDrop& drop) {
  LogData log;
  RecordDecoder decoder(log, options);
  log.file_bytes = bytes.size();
  log.strings.resize(1);
  log.scopes.resize(1);
  size_t chunks_from = 0;
  if (!readFileHeader(bytes, log, chunks_from)) return log;

  ChunkWalk walk{chunks_from, 0, bytes.size()};
  ChunkDamage damage(bytes, log, walk, chunks_from, drop);
  auto decode = [&](size_t at, int64_t index, const ChunkInfo& ci) {
    damage.noteDecoded(ci.sequence, decodeChunk(bytes, decoder, log, options, at, index, ci));
  };
  while (walk.pos < bytes.size()) {
    release(walk.pos);
    ChunkInfo h;
    if (!chunkIntactAt(bytes, walk.pos, h)) {
      if (damage.damagedChunk() == ChunkDamage::Step::kStop) break;
      continue;
    }
    if (!damage.admit(h)) continue;  // a repeat of an earlier chunk, skipped
    // Chunks are decoded in write order: one moved ahead of chunks later in the file waits for them.
    if (!damage.hold(h)) {
      decode(walk.pos, walk.chunk, h);
      while (const std::optional<HeldChunk> held = damage.nextHeld(walk.pos)) decode(held->at, held->chunk, held->info);
    }
    walk.pos += h.header_bytes + h.stored_bytes;
    ++walk.chunk;
    if (log.complete && damage.afterEndChunk() == ChunkDamage::Step::kStop) break;
  }
  // Chunks still held (those before them in write order are not in the file, or the walk stopped before
  // them): decoded now, in write order.
  damage.releaseHeld();
  while (const std::optional<HeldChunk> held = damage.nextHeld(bytes.size())) decode(held->at, held->chunk, held->info);
  release(bytes.size());
  damage.finishWalk();
  decoder.finishSnapshots();
  // Chunks moved: the snapshots (each cumulative; the analysis takes the last) in write order, by their
  // sequence numbers, so that the last is the one written last, not the one last in the file.
  if (log.chunks_out_of_order > 0)
    std::stable_sort(log.snapshots.begin(), log.snapshots.end(), [](const SnapshotData& a, const SnapshotData& b) {
      return a.begin.sequence < b.begin.sequence;
    });
  decoder.checkReferences();
  damage.reportNoEnd();
  return log;
}

}  // namespace kc::logread
