#include "collector/log_writer.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

namespace kc {

bool MemorySink::write(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (max_bytes != 0 && bytes.size() + n > max_bytes) return false;
  bytes.insert(bytes.end(), p, p + n);
  return true;
}

bool MemorySink::rotate() {
  if (files.size() + 1 >= max_files) return false;
  files.push_back(std::move(bytes));
  bytes.clear();
  return true;
}

// payload_ starts with room for the ChunkHeader, filled in by flush(), so a chunk goes out in one write
// without moving the payload.
LogWriter::LogWriter(ByteSink* sink) : sink_(sink) {
  payload_.reserve(kTargetChunkPayload + 4096);
  payload_.resize(sizeof(ChunkHeader));
}

void LogWriter::append(RecordType type, const void* body, uint32_t body_bytes, const void* tail,
                       uint32_t tail_bytes) {
  RecordHeader h{static_cast<uint16_t>(type), 0, body_bytes + tail_bytes};
  const size_t at = payload_.size();
  payload_.resize(at + sizeof(h) + body_bytes + tail_bytes);
  uint8_t* p = payload_.data() + at;
  std::memcpy(p, &h, sizeof(h));
  if (body_bytes) std::memcpy(p + sizeof(h), body, body_bytes);
  if (tail_bytes) std::memcpy(p + sizeof(h) + body_bytes, tail, tail_bytes);
  ++records_;
}

void LogWriter::writeMetadata(std::string_view key, std::string_view value) {
  key = key.substr(0, kMaxStringBytes);
  value = value.substr(0, kMaxStringBytes);
  std::vector<uint8_t> tail(key.size() + value.size());
  std::memcpy(tail.data(), key.data(), key.size());
  std::memcpy(tail.data() + key.size(), value.data(), value.size());
  MetadataBody b{static_cast<uint32_t>(key.size())};
  append(RecordType::kMetadata, &b, sizeof(b), tail.data(), static_cast<uint32_t>(tail.size()));
}

void LogWriter::writeString(uint32_t string_id, std::string_view text) {
  text = text.substr(0, kMaxStringBytes);
  StringBody b{string_id};
  append(RecordType::kString, &b, sizeof(b), text.data(), static_cast<uint32_t>(text.size()));
}

void LogWriter::writeScope(const ScopeBody& s) { append(RecordType::kScope, &s, sizeof(s)); }
void LogWriter::writeLaunch(const LaunchBody& l) { append(RecordType::kLaunch, &l, sizeof(l)); }
void LogWriter::writeKernel(const KernelBody& k) { append(RecordType::kKernel, &k, sizeof(k)); }
void LogWriter::writeRange(const RangeBody& r) { append(RecordType::kRange, &r, sizeof(r)); }
void LogWriter::writeStats(const StatsBody& s) { append(RecordType::kStats, &s, sizeof(s)); }
void LogWriter::writeGraphNode(const GraphNodeBody& n) { append(RecordType::kGraphNode, &n, sizeof(n)); }
void LogWriter::writeMemOp(const MemOpBody& m) { append(RecordType::kMemOp, &m, sizeof(m)); }
void LogWriter::writeSegment(const SegmentBody& s) { append(RecordType::kSegment, &s, sizeof(s)); }
void LogWriter::writeSnapshotBegin(const SnapshotBeginBody& b) { append(RecordType::kSnapshotBegin, &b, sizeof(b)); }
void LogWriter::writeSnapshotScope(const SnapshotScopeBody& s) { append(RecordType::kSnapshotScope, &s, sizeof(s)); }
void LogWriter::writeSnapshotKernel(const SnapshotKernelBody& k) { append(RecordType::kSnapshotKernel, &k, sizeof(k)); }
void LogWriter::writeSnapshotEnd(const SnapshotEndBody& e) { append(RecordType::kSnapshotEnd, &e, sizeof(e)); }
void LogWriter::writeEnd() { append(RecordType::kEnd, nullptr, 0); }

bool LogWriter::writeToSink(const void* data, size_t bytes) {
  if (sink_ != nullptr && sink_->write(data, bytes)) {
    bytes_written_ += bytes;
    return true;
  }
  dropped_bytes_ += bytes;
  return false;
}

// Rotation: the chunk that does not fit is set aside, the sink starts a new file, the preamble's records
// go out as that file's first chunk (file header, sequence 0), then the set-aside chunk follows. So every
// file starts with a file header and defines every id its records use.
bool LogWriter::flush() {
  if (payload_.size() == sizeof(ChunkHeader)) return true;
  const size_t need = payload_.size() + (header_written_ ? 0 : sizeof(FileHeader));
  if (preamble_ != nullptr && !in_preamble_ && sink_ != nullptr && header_written_ && sink_->needsRotation(need)) {
    std::vector<uint8_t> stash(sizeof(ChunkHeader));
    stash.reserve(kTargetChunkPayload + 4096);
    stash.swap(payload_);
    const uint32_t stash_records = records_;
    records_ = 0;
    if (sink_->rotate()) {
      header_written_ = false;
      sequence_ = 0;
      ++rotations_;
      in_preamble_ = true;
      preamble_(*this, preamble_context_);
      flushChunk();
      in_preamble_ = false;
    }
    payload_.swap(stash);
    records_ = stash_records;
  }
  return flushChunk();
}

bool LogWriter::flushChunk() {
  if (payload_.size() == sizeof(ChunkHeader)) return true;
  bool ok = true;
  if (!header_written_) {
    FileHeader fh{};
    std::memcpy(fh.magic, kLogMagic, sizeof(kLogMagic));
    fh.major = kLogMajor;
    fh.minor = kLogMinor;
    fh.header_bytes = sizeof(FileHeader);
    ok = writeToSink(&fh, sizeof(fh));
    header_written_ = true;
  }
  ChunkHeader ch{};
  ch.magic = kChunkMagic;
  const size_t payload_bytes = payload_.size() - sizeof(ChunkHeader);
  ch.payload_bytes = static_cast<uint32_t>(payload_bytes);
  ch.checksum = XXH3_64bits(payload_.data() + sizeof(ChunkHeader), payload_bytes);
  ch.sequence = sequence_++;
  ch.record_count = records_;
  // One write per chunk, so a crash leaves either the whole chunk or a cut tail the reader detects.
  std::memcpy(payload_.data(), &ch, sizeof(ch));
  ok = writeToSink(payload_.data(), payload_.size()) && ok;
  payload_.resize(sizeof(ChunkHeader));
  records_ = 0;
  return ok;
}

}  // namespace kc
