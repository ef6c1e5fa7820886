#include "collector/log_reader.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string_view>
#include <unordered_set>

namespace kc {
namespace {

/// Ids above this are treated as corrupt: a bad id must not make the reader allocate gigabytes.
constexpr uint32_t kMaxId = 16u << 20;
/// Most out-of-range references reported one by one; the rest are counted in one more issue.
constexpr size_t kMaxReferenceIssues = 16;

/// Exclusive upper bound for string or scope ids in a file of file_bytes: the writer hands out dense
/// ids (1, 2, 3, ...) and defines each with one record of at least record_bytes, so a file cannot hold
/// more definitions than that. Keeps LogData::strings/scopes (indexed by id) proportional to the input.
uint32_t idLimit(uint64_t file_bytes, size_t record_bytes) {
  return static_cast<uint32_t>(std::min<uint64_t>(kMaxId, file_bytes / record_bytes + 1));
}
/// Deepest range nesting scopePath() follows before giving up (corrupt parents must not loop).
constexpr int kMaxScopeDepth = 256;

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
    case RecordType::kStats: return sizeof(StatsBody);
    case RecordType::kEnd: return 0;
    case RecordType::kGraphNode: return sizeof(GraphNodeBody);
    case RecordType::kMemOp: return sizeof(MemOpBody);
    case RecordType::kSegment: return sizeof(SegmentBody);
    case RecordType::kSnapshotBegin: return sizeof(SnapshotBeginBody);
    case RecordType::kSnapshotScope: return sizeof(SnapshotScopeBody);
    case RecordType::kSnapshotKernel: return sizeof(SnapshotKernelBody);
    case RecordType::kSnapshotEnd: return sizeof(SnapshotEndBody);
  }
  return 0;
}

/// True if a chunk whose header starts at `at` is complete within bytes and its checksum verifies.
bool chunkVerifies(std::span<const uint8_t> bytes, size_t at) {
  if (at > bytes.size() || bytes.size() - at < sizeof(ChunkHeader)) return false;
  ChunkHeader h;
  std::memcpy(&h, bytes.data() + at, sizeof(h));
  if (h.magic != kChunkMagic || h.payload_bytes > kMaxChunkPayload) return false;
  if (bytes.size() - at - sizeof(ChunkHeader) < h.payload_bytes) return false;
  return XXH3_64bits(bytes.data() + at + sizeof(ChunkHeader), h.payload_bytes) == h.checksum;
}

/// Offset of the first chunk at or after `from` whose checksum verifies, or bytes.size() if none.
size_t resync(std::span<const uint8_t> bytes, size_t from) {
  uint8_t magic[4];
  std::memcpy(magic, &kChunkMagic, 4);
  for (size_t at = from; at + sizeof(ChunkHeader) <= bytes.size(); ++at) {
    const void* hit = std::memchr(bytes.data() + at, magic[0], bytes.size() - at);
    if (hit == nullptr) break;
    at = static_cast<size_t>(static_cast<const uint8_t*>(hit) - bytes.data());
    if (at + sizeof(ChunkHeader) > bytes.size()) break;
    if (std::memcmp(bytes.data() + at, magic, 4) == 0 && chunkVerifies(bytes, at)) return at;
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

/// Decodes the records of one verified payload. Returns false if a bad record stopped the chunk.
bool decodePayload(LogData& log, std::span<const uint8_t> payload, uint64_t base, int64_t chunk,
                   uint32_t announced_records, OpenSnapshot& snap) {
  Cursor c(payload, base);
  uint32_t records = 0;
  while (c.remaining() > 0) {
    const uint64_t at = c.offset();
    RecordHeader rh;
    if (!c.read(rh)) {
      error(log, at, chunk,
            "record " + std::to_string(records) + " in chunk " + std::to_string(chunk) + " at byte " +
                std::to_string(at) + ": record header needs 8 bytes, " + std::to_string(c.remaining()) +
                " remain in the chunk");
      return false;
    }
    if (rh.body_bytes > c.remaining()) {
      error(log, at, chunk,
            std::string(recordTypeName(rh.type)) + " record " + std::to_string(records) + " in chunk " +
                std::to_string(chunk) + " at byte " + std::to_string(at) + " announces " +
                std::to_string(rh.body_bytes) + " body bytes, " + std::to_string(c.remaining()) +
                " remain in the chunk");
      return false;
    }
    std::span<const uint8_t> body = c.take(rh.body_bytes);
    ++records;
    const size_t need = knownBodyBytes(rh.type);
    if (body.size() < need) {
      error(log, at, chunk,
            std::string(recordTypeName(rh.type)) + " record in chunk " + std::to_string(chunk) +
                " at byte " + std::to_string(at) + " has a body of " + std::to_string(body.size()) +
                " bytes, needs " + std::to_string(need));
      return false;
    }
    switch (static_cast<RecordType>(rh.type)) {
      case RecordType::kMetadata: {
        auto m = prefix<MetadataBody>(body);
        auto rest = body.subspan(sizeof(MetadataBody));
        if (m.key_bytes > rest.size()) {
          error(log, at, chunk,
                "metadata record at byte " + std::to_string(at) + " announces a key of " +
                    std::to_string(m.key_bytes) + " bytes, the body holds " + std::to_string(rest.size()));
          break;
        }
        const auto* p = reinterpret_cast<const char*>(rest.data());
        const size_t key_len = std::min<size_t>(m.key_bytes, kMaxStringBytes);
        const size_t value_len = std::min<size_t>(rest.size() - m.key_bytes, kMaxStringBytes);
        log.metadata.emplace_back(std::string(p, key_len), std::string(p + m.key_bytes, value_len));
        break;
      }
      case RecordType::kString: {
        auto s = prefix<StringBody>(body);
        auto text = body.subspan(sizeof(StringBody));
        const uint32_t limit = idLimit(log.file_bytes, sizeof(RecordHeader) + sizeof(StringBody));
        if (s.string_id >= limit) {
          error(log, at, chunk, "string id " + std::to_string(s.string_id) + " at byte " + std::to_string(at) +
                                    " is out of range (limit " + std::to_string(limit) + " for a file of " +
                                    std::to_string(log.file_bytes) + " bytes)");
          break;
        }
        if (s.string_id == kNoString) break;  // id 0 is always ""
        if (text.size() > kMaxStringBytes) text = text.subspan(0, kMaxStringBytes);
        if (log.strings.size() <= s.string_id) log.strings.resize(s.string_id + 1);
        log.strings[s.string_id].assign(reinterpret_cast<const char*>(text.data()), text.size());
        break;
      }
      case RecordType::kScope: {
        auto s = prefix<ScopeBody>(body);
        const uint32_t limit = idLimit(log.file_bytes, sizeof(RecordHeader) + sizeof(ScopeBody));
        if (s.scope_id >= limit) {
          error(log, at, chunk, "scope id " + std::to_string(s.scope_id) + " at byte " + std::to_string(at) +
                                    " is out of range (limit " + std::to_string(limit) + " for a file of " +
                                    std::to_string(log.file_bytes) + " bytes)");
          break;
        }
        if (s.scope_id == kRootScope) break;  // the root is implicit and stays all zero
        if (log.scopes.size() <= s.scope_id) log.scopes.resize(s.scope_id + 1);
        log.scopes[s.scope_id] = s;
        break;
      }
      case RecordType::kLaunch: log.launches.push_back(prefix<LaunchBody>(body)); break;
      case RecordType::kKernel: log.kernels.push_back(prefix<KernelBody>(body)); break;
      case RecordType::kRange: log.ranges.push_back(prefix<RangeBody>(body)); break;
      case RecordType::kGraphNode: log.graph_nodes.push_back(prefix<GraphNodeBody>(body)); break;
      case RecordType::kMemOp: log.mem_ops.push_back(prefix<MemOpBody>(body)); break;
      case RecordType::kSegment: log.segments.push_back(prefix<SegmentBody>(body)); break;
      case RecordType::kStats: {
        auto s = prefix<StatsBody>(body);
        log.stats.launches += s.launches;
        log.stats.kernels += s.kernels;
        log.stats.ranges += s.ranges;
        log.stats.dropped_host_records += s.dropped_host_records;
        log.stats.dropped_activity_records += s.dropped_activity_records;
        log.stats.activity_buffers_refused += s.activity_buffers_refused;
        log.stats.nvtx_pop_underflow += s.nvtx_pop_underflow;
        log.stats.late_activity_records += s.late_activity_records;
        log.stats.bytes_dropped += s.bytes_dropped;
        log.has_stats = true;
        break;
      }
      case RecordType::kSnapshotBegin: {
        if (snap.open) dropSnapshot(log, snap, "a new snapshot began before its end record");
        log.summary_mode = true;
        snap.open = true;
        snap.data.begin = prefix<SnapshotBeginBody>(body);
        snap.data.offset = at;
        snap.data.chunk = chunk;
        // Rows are appended as they come; the announced counts are not trusted for allocation.
        break;
      }
      case RecordType::kSnapshotScope:
        if (snap.open) snap.data.scopes.push_back(prefix<SnapshotScopeBody>(body));
        break;
      case RecordType::kSnapshotKernel:
        if (snap.open) snap.data.kernels.push_back(prefix<SnapshotKernelBody>(body));
        break;
      case RecordType::kSnapshotEnd: {
        if (!snap.open) break;  // the begin record was in a skipped chunk; already reported there
        const auto e = prefix<SnapshotEndBody>(body);
        const SnapshotBeginBody& b = snap.data.begin;
        if (e.sequence != b.sequence || snap.data.scopes.size() != b.scope_rows ||
            snap.data.kernels.size() != b.kernel_rows || e.rows != uint64_t(b.scope_rows) + b.kernel_rows) {
          dropSnapshot(log, snap, "its rows do not match its begin and end records");
          break;
        }
        log.snapshots.push_back(std::move(snap.data));
        snap.data = SnapshotData{};
        snap.open = false;
        break;
      }
      case RecordType::kEnd: log.complete = true; break;
      default: break;  // unknown record type: skipped (the format only grows)
    }
  }
  if (records != announced_records) {
    warning(log, base - sizeof(ChunkHeader), chunk,
            "chunk " + std::to_string(chunk) + " header announces " + std::to_string(announced_records) +
                " records, its payload holds " + std::to_string(records));
  }
  return true;
}

/// Reports every string or scope id a decoded record refers to that no record defined and that lies past
/// the highest defined id (a lost chunk, or a corrupt record inside a verified chunk). The records are
/// kept; LogData::str() and scopePath() show such ids as "<bad ... id N>", the analysis credits unknown
/// scopes to the root. Ids inside the defined range but never defined (gaps) are not reported: they
/// read as "" like kNoString. Runs after all chunks: a definition may follow its first use by a chunk.
void checkReferences(LogData& log) {
  struct Bad {
    uint64_t records = 0;     // records referring to the id
    const char* first_kind;   // the first of them: record kind and index in its LogData vector
    size_t first_index;
  };
  const size_t n_strings = log.strings.size(), n_scopes = log.scopes.size();
  std::map<std::pair<bool, uint32_t>, Bad> bad;  // (is_string, id) -> references; at most kMaxReferenceIssues
  uint64_t unlisted = 0;                         // references to ids past the first kMaxReferenceIssues
  auto ref = [&](bool is_string, uint32_t id, const char* kind, size_t index) {
    if (id < (is_string ? n_strings : n_scopes)) return;
    auto it = bad.find({is_string, id});
    if (it == bad.end()) {
      if (bad.size() >= kMaxReferenceIssues) {
        ++unlisted;
        return;
      }
      it = bad.emplace(std::make_pair(is_string, id), Bad{0, kind, index}).first;
    }
    ++it->second.records;
  };
  for (size_t i = 1; i < n_scopes; ++i) {
    const ScopeBody& s = log.scopes[i];
    if (s.scope_id == kRootScope) continue;  // a gap, not a record
    ref(true, s.name_id, "scope", i);
    ref(true, s.domain_id, "scope", i);
    ref(false, s.parent_id, "scope", i);
  }
  for (size_t i = 0; i < log.launches.size(); ++i) {
    ref(false, log.launches[i].scope_id, "launch", i);
    ref(true, log.launches[i].api_id, "launch", i);
  }
  for (size_t i = 0; i < log.kernels.size(); ++i) ref(true, log.kernels[i].name_id, "kernel", i);
  for (size_t i = 0; i < log.ranges.size(); ++i) ref(false, log.ranges[i].scope_id, "range", i);
  for (size_t i = 0; i < log.segments.size(); ++i) {
    ref(true, log.segments[i].reason_id, "segment", i);
    ref(true, log.segments[i].end_reason_id, "segment", i);
  }
  if (!log.snapshots.empty()) {  // the last complete snapshot is the one the analysis uses
    const SnapshotData& sd = log.snapshots.back();
    for (size_t i = 0; i < sd.scopes.size(); ++i) ref(false, sd.scopes[i].scope_id, "snapshot scope", i);
    for (size_t i = 0; i < sd.kernels.size(); ++i) {
      ref(true, sd.kernels[i].name_id, "snapshot kernel", i);
      if (!(sd.kernels[i].flags & kSnapshotKernelUnmatched)) ref(false, sd.kernels[i].scope_id, "snapshot kernel", i);
    }
  }
  for (const auto& [key, b] : bad) {
    const auto& [is_string, id] = key;
    error(log, log.file_bytes, -1,
          std::string(is_string ? "string" : "scope") + " id " + std::to_string(id) + " out of range (" +
              std::to_string(is_string ? n_strings : n_scopes) + (is_string ? " strings" : " scopes") +
              " defined): " + std::to_string(b.records) + " records refer to it, the first is " + b.first_kind +
              " record " + std::to_string(b.first_index));
  }
  if (unlisted > 0)
    error(log, log.file_bytes, -1,
          std::to_string(unlisted) + " more references to string or scope ids out of range");
}

}  // namespace

std::string LogData::meta(std::string_view key) const {
  for (auto it = metadata.rbegin(); it != metadata.rend(); ++it)
    if (it->first == key) return it->second;
  return {};
}

std::string_view LogData::str(uint32_t id) const {
  if (id < strings.size()) return strings[id];
  if (id == kNoString) return {};
  // Kept per thread so the returned view stays valid until the next bad id on this thread.
  thread_local std::string bad;
  bad = "<bad string id " + std::to_string(id) + ">";
  return bad;
}

std::string LogData::scopePath(uint32_t scope_id) const {
  if (scope_id == kRootScope) return "(no range)";
  if (scope_id >= scopes.size()) return "<bad scope id " + std::to_string(scope_id) + ">";
  std::vector<uint32_t> chain;
  std::unordered_set<uint32_t> seen;
  uint32_t id = scope_id;
  bool broken = false;
  while (id != kRootScope) {
    if (id >= scopes.size() || !seen.insert(id).second || chain.size() >= kMaxScopeDepth) {
      broken = true;  // bad parent id, a cycle, or absurd depth: show what we have
      break;
    }
    chain.push_back(id);
    id = scopes[id].parent_id;
  }
  std::string path = broken ? "<broken parent>/" : "";
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const ScopeBody& s = scopes[*it];
    if (s.name_id == kNoString)
      path += "<scope " + std::to_string(*it) + ">";
    else
      path += str(s.name_id);
    if (std::next(it) != chain.rend()) path += '/';
  }
  return path;
}

bool LogData::damaged() const {
  for (const auto& i : issues)
    if (i.severity == ReadIssue::Severity::kError) return true;
  return false;
}

LogData readLog(std::span<const uint8_t> bytes) {
  LogData log;
  log.file_bytes = bytes.size();
  log.strings.resize(1);
  log.scopes.resize(1);

  FileHeader fh;
  Cursor c(bytes);
  if (bytes.size() < sizeof(FileHeader) &&
      (bytes.empty() ||
       std::memcmp(bytes.data(), kLogMagic, std::min(bytes.size(), sizeof(kLogMagic))) == 0)) {
    // Empty, or cut inside the file header: a log whose process wrote (almost) nothing.
    log.truncated = true;
    warning(log, bytes.size(), -1,
            "truncated at byte " + std::to_string(bytes.size()) + " in the file header (needs " +
                std::to_string(sizeof(FileHeader)) + " bytes, " + std::to_string(bytes.size()) + " remain)");
    return log;
  }
  if (!c.read(fh) || std::memcmp(fh.magic, kLogMagic, sizeof(kLogMagic)) != 0) {
    error(log, 0, -1, "not a kcount log");
    return log;
  }
  log.major = fh.major;
  log.minor = fh.minor;
  if (fh.major != kLogMajor) {
    error(log, 8, -1,
          "unsupported version " + std::to_string(fh.major) + "." + std::to_string(fh.minor) +
              " (this reader supports " + std::to_string(kLogMajor) + ".x)");
    return log;
  }
  size_t pos = sizeof(FileHeader);
  if (fh.header_bytes < sizeof(FileHeader) || fh.header_bytes > bytes.size()) {
    error(log, 12, -1,
          "file header announces " + std::to_string(fh.header_bytes) + " header bytes; reading chunks from byte " +
              std::to_string(sizeof(FileHeader)));
  } else {
    pos = fh.header_bytes;
  }

  int64_t chunk = 0;
  OpenSnapshot snap;
  while (pos < bytes.size()) {
    const size_t remain = bytes.size() - pos;
    ChunkHeader h{};
    const bool header_fits = remain >= sizeof(ChunkHeader);
    if (header_fits) std::memcpy(&h, bytes.data() + pos, sizeof(h));

    // A header that cannot be trusted: a wrong magic or an absurd length. Look for the next chunk that
    // verifies. The first chunk's search starts right after the file header, in case header_bytes lied.
    auto resyncFrom = [&](size_t from, const std::string& why) -> bool {
      const size_t next = resync(bytes, chunk == 0 ? std::min(from, sizeof(FileHeader)) : from);
      if (next >= bytes.size()) {
        error(log, pos, chunk, why + "; no intact chunk follows");
        return false;
      }
      // For chunk 0 the search starts after the file header, so the next chunk may lie before pos.
      error(log, pos, chunk,
            why + (next >= pos ? "; skipped " + std::to_string(next - pos) + " bytes" : std::string("; went back")) +
                " to the next intact chunk at byte " + std::to_string(next));
      ++log.chunks_skipped;
      pos = next;
      ++chunk;
      return true;
    };

    if (!header_fits) {
      // Too few bytes for a header: a cut tail, unless an intact chunk follows (then it is damage).
      if (resync(bytes, chunk == 0 ? sizeof(FileHeader) : pos + 1) >= bytes.size()) {
        log.truncated = true;
        warning(log, pos, chunk,
                "truncated at byte " + std::to_string(bytes.size()) + " in chunk " + std::to_string(chunk) +
                    " (chunk header needs " + std::to_string(sizeof(ChunkHeader)) + " bytes, " +
                    std::to_string(remain) + " remain)");
        break;
      }
    }
    if (!header_fits || h.magic != kChunkMagic) {
      if (!resyncFrom(pos + 1, "bad chunk magic at byte " + std::to_string(pos) + " in chunk " +
                                   std::to_string(chunk)))
        break;
      continue;
    }
    if (h.payload_bytes > kMaxChunkPayload) {
      if (!resyncFrom(pos + 1, "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) +
                                   " announces " + std::to_string(h.payload_bytes) +
                                   " payload bytes (limit " + std::to_string(kMaxChunkPayload) + ")"))
        break;
      continue;
    }
    const size_t payload_at = pos + sizeof(ChunkHeader);
    const size_t payload_remain = bytes.size() - payload_at;
    if (h.payload_bytes > payload_remain) {
      // Either the file was cut short, or the length field is corrupt and intact chunks follow.
      const size_t next = resync(bytes, pos + 1);
      if (next < bytes.size()) {
        resyncFrom(pos + 1, "chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos) +
                                " announces " + std::to_string(h.payload_bytes) + " payload bytes but " +
                                std::to_string(payload_remain) + " remain and an intact chunk follows");
        continue;
      }
      log.truncated = true;
      warning(log, pos, chunk,
              "truncated at byte " + std::to_string(bytes.size()) + " in chunk " + std::to_string(chunk) +
                  " (payload needs " + std::to_string(h.payload_bytes) + " bytes, " +
                  std::to_string(payload_remain) + " remain)");
      break;
    }
    auto payload = bytes.subspan(payload_at, h.payload_bytes);
    if (XXH3_64bits(payload.data(), payload.size()) != h.checksum) {
      error(log, pos, chunk, "checksum mismatch in chunk " + std::to_string(chunk) + " at byte " + std::to_string(pos));
      ++log.chunks_skipped;
      const size_t end = payload_at + h.payload_bytes;
      // Trust the length only if it leads to the end of the file or to a chunk that verifies.
      pos = (end == bytes.size() || chunkVerifies(bytes, end)) ? end : resync(bytes, pos + 1);
      ++chunk;
      continue;
    }
    if (decodePayload(log, payload, payload_at, chunk, h.record_count, snap)) {
      ++log.chunks_read;
      log.last_intact_chunk = chunk;
      log.last_intact_end = payload_at + h.payload_bytes;
    } else
      ++log.chunks_skipped;
    pos = payload_at + h.payload_bytes;
    ++chunk;
  }

  if (snap.open) dropSnapshot(log, snap, "the log ends inside it");
  checkReferences(log);
  if (!log.complete) {
    warning(log, bytes.size(), -1,
            "log has no end record: the process did not close it (crash, kill, or still running); " +
                (log.last_intact_chunk >= 0
                     ? "last intact chunk " + std::to_string(log.last_intact_chunk) + " ends at byte " +
                           std::to_string(log.last_intact_end)
                     : std::string("no intact chunk")));
  }
  return log;
}

LogData readLogFile(const std::string& path) {
  // Only regular files: a folder throws inside the stream, a FIFO would block forever.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    LogData log;
    log.strings.resize(1);
    log.scopes.resize(1);
    error(log, 0, -1, path + " is not a regular file");
    return log;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    LogData log;
    log.strings.resize(1);
    log.scopes.resize(1);
    error(log, 0, -1, "cannot open " + path + ": " + std::strerror(errno));
    return log;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    LogData log;
    log.strings.resize(1);
    log.scopes.resize(1);
    error(log, 0, -1, "cannot read " + path + ": " + std::strerror(errno));
    return log;
  }
  return readLog(bytes);
}

}  // namespace kc
