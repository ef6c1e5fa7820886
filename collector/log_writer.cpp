#include "collector/log_writer.h"

#include <xxhash.h>
#include <zstd.h>

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

namespace {
/// zstd level of packed chunks: level 3 (zstd's default) compresses a 1 MiB chunk of compact batches in
/// a few milliseconds on the writer thread; higher levels gained little on training-loop logs.
constexpr int kZstdLevel = 3;
/// Most bytes a compact batch adds besides its records: record header, count and column lengths (varints).
constexpr size_t kBatchOverhead = 80;
/// Most bytes one record adds to a compact batch (every field a full varint, with room to spare).
template <typename Body>
constexpr size_t batchRecordBound() {
  return 2 * sizeof(Body) + 16;
}
}  // namespace

// payload_ starts with room for the chunk header, filled in by flush(), so a plain chunk goes out in one
// write without moving the payload (a packed chunk is compressed into packed_ behind its own header).
LogWriter::LogWriter(ByteSink* sink, LogEncoding encoding)
    : sink_(sink),
      encoding_(encoding),
      header_bytes_(encoding == LogEncoding::kPlain ? sizeof(ChunkHeader) : sizeof(PackedChunkHeader)) {
  payload_.reserve(kTargetChunkPayload + 4096);
  payload_.resize(header_bytes_);
}

LogWriter::~LogWriter() {
  if (zstd_ != nullptr) ZSTD_freeCCtx(zstd_);
}

void LogWriter::append(RecordType type, const void* body, uint32_t body_bytes, const void* tail,
                       uint32_t tail_bytes) {
  // Stats and End close the log: they go into the final chunk, which may use the reserve (and so does
  // every record after beginFinalChunk()).
  if (!room_made_ && type != RecordType::kStats && type != RecordType::kEnd)
    makeRoom(sizeof(RecordHeader) + body_bytes + tail_bytes);
  switch (type) {
    case RecordType::kLaunch: ++chunk_records_.launches; break;
    case RecordType::kKernel: ++chunk_records_.kernels; break;
    case RecordType::kRange: ++chunk_records_.ranges; break;
    case RecordType::kString:
    case RecordType::kScope:
      ++chunk_records_.definitions;
      ++chunk_records_.other;
      break;
    default: ++chunk_records_.other; break;
  }
  if (type == RecordType::kEnd) chunk_final_ = true;
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
  noteDefined({true, string_id});
}

void LogWriter::writeScope(const ScopeBody& s) {
  append(RecordType::kScope, &s, sizeof(s));
  noteDefined({false, s.scope_id});
}
template <typename Body, typename Encoder>
void LogWriter::writeRecord(RecordType type, const Body& body, Encoder& batch, uint64_t& count,
                            std::initializer_list<IdRef> refs) {
  const bool plain = encoding_ == LogEncoding::kPlain;
  beginRecord(plain ? sizeof(RecordHeader) + sizeof(body)
                    : batchRecordBound<Body>() + (batch.count() == 0 ? kBatchOverhead : 0),
              refs);
  if (plain) {
    append(type, &body, sizeof(body));  // counts the record by its type
  } else {
    ++count;
    batch.add(body);
    if (batch.count() == kMaxBatchRecords) finishBatches();
  }
  room_made_ = false;
}

void LogWriter::writeLaunch(const LaunchBody& l) {
  writeRecord(RecordType::kLaunch, l, launches_, chunk_records_.launches, {{false, l.scope_id}, {true, l.api_id}});
  // After the room was made (a flush there starts a new chunk): counted in the chunk that holds the launch.
  if ((l.flags & kLaunchMemOp) != 0) ++chunk_records_.mem_calls;
}
void LogWriter::writeKernel(const KernelBody& k) {
  writeRecord(RecordType::kKernel, k, kernels_, chunk_records_.kernels, {{true, k.name_id}});
}
void LogWriter::writeRange(const RangeBody& r) {
  writeRecord(RecordType::kRange, r, ranges_, chunk_records_.ranges, {{false, r.scope_id}});
}

// Definitions on demand (setDefinitions). Writer thread only, like every write; the source's lookups take
// the tables' own locks briefly.
void LogWriter::beginRecord(size_t bound, std::initializer_list<IdRef> refs) {
  if (source_ == nullptr) {
    makeRoom(bound);
    room_made_ = true;
    return;
  }
  // The common case: every id the record uses is defined or noted in this chunk already (one compare each).
  bool marked = true;
  for (const IdRef& r : refs) {
    const auto& chunk = r.is_string ? string_chunk_ : scope_chunk_;
    marked = marked && (r.id == 0 || r.id >= kMaxIds || (r.id < chunk.size() && chunk[r.id] == chunk_serial_));
  }
  if (marked) {
    const uint32_t serial = chunk_serial_;
    makeRoom(bound);
    room_made_ = true;
    if (chunk_serial_ == serial) return;
    for (const IdRef& r : refs) define(r, 0);  // the room was made in a new chunk: it needs them noted too
    return;
  }
  uint64_t need = 0;
  for (const IdRef& r : refs) need += missingBytes(r, 0, nullptr);
  // The record and the definitions it needs go into one chunk: room is made for both at once, so that a
  // flush or a rotation cannot come between them. After a rotation the new file defines nothing yet and
  // more may be needed; they are written all the same (flush() moves a chunk that does not fit).
  makeRoom(bound + need);
  room_made_ = true;
  for (const IdRef& r : refs) define(r, 0);
}

bool LogWriter::definedHere(bool is_string, uint32_t id) const {
  if (id == 0 || id >= kMaxIds) return true;  // the empty string and the root; ids past the cap: never written
  const auto& file = is_string ? string_file_ : scope_file_;
  const auto& chunk = is_string ? string_chunk_ : scope_chunk_;
  if (id < chunk.size() && (chunk[id] == chunk_serial_ || file[id] == file_serial_)) return true;
  return marks_of_ != nullptr && marks_of_->definedHere(is_string, id);
}

uint64_t LogWriter::missingBytes(IdRef r, int depth, std::unordered_set<uint64_t>* seen) {
  if (source_ == nullptr || definedHere(r.is_string, r.id)) return 0;
  if (seen != nullptr && !seen->insert((uint64_t{r.is_string} << 32) | r.id).second) return 0;
  if (r.is_string) {
    if (!source_->stringText(r.id, &def_text_)) return 0;
    return sizeof(RecordHeader) + sizeof(StringBody) + std::min<size_t>(def_text_.size(), kMaxStringBytes);
  }
  ScopeBody b{};
  if (depth > kMaxScopeChain || !source_->scope(r.id, &b) || b.scope_id != r.id) return 0;
  return sizeof(RecordHeader) + sizeof(ScopeBody) + missingBytes({false, b.parent_id}, depth + 1, seen) +
         missingBytes({true, b.name_id}, depth + 1, seen) + missingBytes({true, b.domain_id}, depth + 1, seen);
}

uint64_t LogWriter::missingDefinitionBytes(std::span<const uint32_t> scope_ids, std::span<const uint32_t> string_ids) {
  if (source_ == nullptr) return 0;
  std::unordered_set<uint64_t> seen;  // each definition counted once
  uint64_t n = 0;
  for (uint32_t id : scope_ids) n += missingBytes({false, id}, 0, &seen);
  for (uint32_t id : string_ids) n += missingBytes({true, id}, 0, &seen);
  return n;
}

void LogWriter::define(IdRef r, int depth) {
  if (source_ == nullptr || r.id == 0 || r.id >= kMaxIds) return;
  auto& file = r.is_string ? string_file_ : scope_file_;
  auto& chunk = r.is_string ? string_chunk_ : scope_chunk_;
  if (chunk.size() <= r.id) {
    chunk.resize(r.id + 1);
    file.resize(r.id + 1);
  }
  if (chunk[r.id] == chunk_serial_) return;  // defined or used in this chunk already: the common case
  if (file[r.id] == file_serial_ || (marks_of_ != nullptr && marks_of_->definedHere(r.is_string, r.id))) {
    chunk[r.id] = chunk_serial_;
    chunk_uses_.push_back(r);  // defined by an earlier chunk of the file: a rotation moving this chunk needs it
    return;
  }
  if (r.is_string) {
    if (source_->stringText(r.id, &def_text_)) writeString(r.id, def_text_);
    return;
  }
  ScopeBody b{};
  if (depth > kMaxScopeChain || !source_->scope(r.id, &b) || b.scope_id != r.id) return;
  define({false, b.parent_id}, depth + 1);  // a scope's parent and strings before it
  define({true, b.name_id}, depth + 1);
  define({true, b.domain_id}, depth + 1);
  writeScope(b);
}

void LogWriter::noteDefined(IdRef r) {
  if (source_ == nullptr || r.id == 0 || r.id >= kMaxIds) return;
  auto& file = r.is_string ? string_file_ : scope_file_;
  auto& chunk = r.is_string ? string_chunk_ : scope_chunk_;
  if (chunk.size() <= r.id) {
    chunk.resize(r.id + 1);
    file.resize(r.id + 1);
  }
  if (chunk[r.id] != chunk_serial_) chunk_defs_.push_back(r);
  chunk[r.id] = chunk_serial_;
}

void LogWriter::chunkDone(bool written) {
  if (written)
    for (const IdRef& r : chunk_defs_) (r.is_string ? string_file_ : scope_file_)[r.id] = file_serial_;
  chunk_defs_.clear();
  chunk_uses_.clear();
  ++chunk_serial_;
}

void LogWriter::forgetDefinitions() {
  chunk_defs_.clear();
  chunk_uses_.clear();
  ++chunk_serial_;
  ++file_serial_;
}

// Batches go into the payload behind the records written so far, so every String and Scope record of
// the chunk precedes them (definitions before use, docs/format.md "Interning").
void LogWriter::finishBatches() {
  auto put = [this](RecordType type, auto& enc) {
    if (enc.count() == 0) return;
    const size_t at = payload_.size();
    payload_.resize(at + sizeof(RecordHeader));
    enc.finish(payload_);
    RecordHeader h{static_cast<uint16_t>(type), 0, static_cast<uint32_t>(payload_.size() - at - sizeof(RecordHeader))};
    std::memcpy(payload_.data() + at, &h, sizeof(h));
    ++records_;
  };
  put(RecordType::kLaunchBatch, launches_);
  put(RecordType::kKernelBatch, kernels_);
  put(RecordType::kRangeBatch, ranges_);
}
void LogWriter::writeStats(const StatsBody& s) { append(RecordType::kStats, &s, sizeof(s)); }
void LogWriter::writeGraphNode(const GraphNodeBody& n) {
  beginRecord(sizeof(RecordHeader) + sizeof(n), {{false, n.scope_id}});
  append(RecordType::kGraphNode, &n, sizeof(n));
  room_made_ = false;
}
void LogWriter::writeMemOp(const MemOpBody& m) { append(RecordType::kMemOp, &m, sizeof(m)); }
void LogWriter::writeSegment(const SegmentBody& s) {
  beginRecord(sizeof(RecordHeader) + sizeof(s), {{true, s.reason_id}, {true, s.end_reason_id}});
  append(RecordType::kSegment, &s, sizeof(s));
  room_made_ = false;
}
void LogWriter::writeSnapshotBegin(const SnapshotBeginBody& b) { append(RecordType::kSnapshotBegin, &b, sizeof(b)); }
void LogWriter::writeSnapshotScope(const SnapshotScopeBody& s) {
  beginRecord(sizeof(RecordHeader) + sizeof(s), {{false, s.scope_id}});
  append(RecordType::kSnapshotScope, &s, sizeof(s));
  room_made_ = false;
}
void LogWriter::writeSnapshotKernel(const SnapshotKernelBody& k) {
  // An unmatched kernel's row has scope 0 (meaningless): only its name is referred to.
  beginRecord(sizeof(RecordHeader) + sizeof(k), {{false, (k.flags & kSnapshotKernelUnmatched) ? 0u : k.scope_id},
                                                 {true, k.name_id}});
  append(RecordType::kSnapshotKernel, &k, sizeof(k));
  room_made_ = false;
}
void LogWriter::writeSnapshotEnd(const SnapshotEndBody& e) { append(RecordType::kSnapshotEnd, &e, sizeof(e)); }
void LogWriter::writeRangeCallbacks(const RangeCallbacksBody& r) {
  beginRecord(sizeof(RecordHeader) + sizeof(r), {{false, r.scope_id}});
  append(RecordType::kRangeCallbacks, &r, sizeof(r));
  room_made_ = false;
}
void LogWriter::writeEnd() { append(RecordType::kEnd, nullptr, 0); }

void LogWriter::beginFinalChunk() {
  flush();
  closing_ = true;
}

bool LogWriter::writeToSink(const void* data, size_t bytes) {
  if (sink_ != nullptr && sink_->write(data, bytes)) {
    bytes_written_ += bytes;
    return true;
  }
  dropped_bytes_ += bytes;
  return false;
}

bool LogWriter::writeFileHeaderOnce() {
  if (header_written_) return true;
  header_written_ = true;
  FileHeader fh{};
  std::memcpy(fh.magic, kLogMagic, sizeof(kLogMagic));
  fh.major = kLogMajor;
  fh.minor = kLogMinor;
  fh.header_bytes = sizeof(FileHeader);
  return writeToSink(&fh, sizeof(fh));
}

size_t LogWriter::encodedBytes() const {
  size_t n = payload_.size();
  if (encoding_ != LogEncoding::kPlain) {
    if (launches_.count()) n += launches_.bytes() + kBatchOverhead;
    if (kernels_.count()) n += kernels_.bytes() + kBatchOverhead;
    if (ranges_.count()) n += ranges_.bytes() + kBatchOverhead;
  }
  return n;
}

uint64_t LogWriter::roomForChunk(bool final) const {
  if (sink_ == nullptr) return ByteSink::kUnlimited;
  const uint64_t room = sink_->roomLeft();
  if (room == ByteSink::kUnlimited) return room;
  const uint64_t keep = (header_written_ ? 0 : sizeof(FileHeader)) + (final ? 0 : kTailReserve);
  return room > keep ? room - keep : 0;
}

bool LogWriter::mayRotate() const {
  return preamble_ != nullptr && !in_preamble_ && !capped_ && sink_ != nullptr && header_written_ &&
         sink_->canRotate();
}

// Runs before a record is appended (writer thread only; the launch hot path never gets here). Without a
// cap (the usual case) it returns at the first test. Once a chunk was kept out at the cap, chunks are
// not cut smaller: all but the final one are dropped whole.
void LogWriter::makeRoom(size_t bound) {
  if (in_preamble_ || capped_ || group_measured_ || closing_ || sink_ == nullptr) return;
  uint64_t room = roomForChunk(false);
  if (room == ByteSink::kUnlimited || encodedBytes() + bound <= room) return;
  if (!chunkEmpty()) {
    flush();
    room = roomForChunk(false);
    if (capped_ || header_bytes_ + bound <= room) return;
  }
  if (mayRotate()) rotateFile();
}

uint64_t LogWriter::groupBytes(uint64_t record_bytes) const {
  // A chunk is flushed once it holds kTargetChunkPayload record bytes, so every chunk but the last holds
  // at least that many.
  const uint64_t chunks = std::max<uint64_t>(1, (record_bytes + kTargetChunkPayload - 1) / kTargetChunkPayload);
  return record_bytes + chunks * header_bytes_;
}

// The group continues the current chunk: encodedBytes() (its header included) plus groupBytes() bounds
// what the group adds to the file. Counting the second group the same way keeps room for the records that
// come before it (definitions, in the chunk it starts).
bool LogWriter::prepareGroup(uint64_t record_bytes, bool keep_room_for_another,
                             const std::function<void(LogWriter&)>& emit, uint64_t definition_bytes) {
  group_measured_ = false;
  if (sink_ == nullptr || in_preamble_ || roomForChunk(false) == ByteSink::kUnlimited) return true;
  if (capped_) return !keep_room_for_another;  // kept out whole, as every chunk after the first kept out
  // This group with its definitions, and (keep_room_for_another) the next one as large in records.
  const uint64_t group = groupBytes(record_bytes + definition_bytes), next = groupBytes(record_bytes);
  const auto fits = [&](bool and_next) {
    const uint64_t room = roomForChunk(false);
    return encodedBytes() <= room && group <= room - encodedBytes() &&
           (!and_next || next <= room - encodedBytes() - group);
  };
  // Near the cap (the bound before compression does not fit), the group is sized by what it writes.
  if (emit && measure_groups_ && !(fits(false) && (!keep_room_for_another || mayRotate() || fits(true)))) {
    // What the group writes, from an empty chunk: the same records, chunk boundaries and compression as
    // on this writer, so the same bytes but for the chunks' sequence numbers.
    if (!scratch_) {
      scratch_sink_ = std::make_unique<MemorySink>();
      scratch_ = std::make_unique<LogWriter>(scratch_sink_.get(), encoding_);
      scratch_->measure_groups_ = false;
    }
    // With definitions on demand, the scratch writer writes those the group needs that this writer's
    // current file (and chunk) lacks: measured again when the group moves to a new file.
    const auto measure = [&] {
      scratch_->flush();
      scratch_sink_->bytes.clear();
      scratch_->setDefinitions(source_);
      scratch_->marks_of_ = this;
      scratch_->forgetDefinitions();
      const uint64_t before = scratch_->bytesWritten() + (scratch_->header_written_ ? 0 : sizeof(FileHeader));
      emit(*scratch_);
      scratch_->flush();
      scratch_sink_->bytes.clear();
      return scratch_->bytesWritten() - before;
    };
    uint64_t written = measure();
    const auto fits_measured = [&](uint64_t more) {
      const uint64_t room = roomForChunk(false);
      return written <= room && more <= room - written;
    };
    const uint32_t file = file_serial_;
    flush();  // what precedes the group stays in this file, in its own chunk (flush() may rotate)
    if (!capped_ && file != file_serial_) written = measure();
    if (!capped_ && !fits_measured(0) && mayRotate()) {
      rotateFile();
      if (!capped_) written = measure();
    }
    if (capped_) return !keep_room_for_another;
    if (keep_room_for_another && !mayRotate() && !fits_measured(next)) return false;
    group_measured_ = fits_measured(0);
    return true;
  }
  if (!fits(false) && mayRotate()) {
    flush();  // what precedes the group stays in this file (flush() may rotate by itself)
    if (!capped_ && !fits(false) && mayRotate()) rotateFile();
  }
  if (!keep_room_for_another) return true;
  if (capped_) return false;
  // A file that may still rotate leaves the next group to a new file if it does not fit here.
  return mayRotate() ? true : fits(true);
}

void LogWriter::endGroup() {
  if (!group_measured_) return;
  flush();  // the group's last chunk, as measured
  group_measured_ = false;
}

void LogWriter::rotateFile() {
  in_preamble_ = true;
  // The marker: this file is a complete part, the log goes on in the next one. It uses the reserve.
  writeMetadata(kMetaContinuedIn, std::to_string(rotations_ + 1));
  flush();
  if (sink_->rotate()) {
    header_written_ = false;
    sequence_ = 0;
    ++rotations_;
    ++file_serial_;  // the new file defines nothing yet
    preamble_(*this, preamble_context_);
    // The chunk set aside (flush()) may use definitions its file had in earlier chunks: they come first here.
    for (const IdRef& r : carry_uses_) define(r, 0);
    if (encoding_ != LogEncoding::kPlain) finishBatches();
    if (!chunkEmpty()) {
      const size_t sealed = sealChunk();
      if (sealed > roomForChunk(false)) {
        // The definitions alone pass the cap: nothing of this file could be read. Kept out, and so is
        // every later chunk but the final one.
        writeFileHeaderOnce();
        dropChunk(sealed, "the records every part starts with (" + std::to_string(chunk_records_.other) +
                              " records, " + std::to_string(sealed) +
                              " bytes: the metadata, repeated in each part so that it reads alone, and the "
                              "definitions the next records need; a larger KCOUNT_MAX_BYTES holds them)");
      } else {
        writeSealed();
      }
    }
  }
  in_preamble_ = false;
}

void LogWriter::dropChunk(size_t bytes, const std::string& what) {
  if (!capped_) {
    capped_ = true;
    first_drop_file_ = rotations_;
    if (sink_ != nullptr && !what.empty())
      sink_->refused(what);
    else if (sink_ != nullptr)
      sink_->refused(std::to_string(chunk_records_.launches) + " launches, " + std::to_string(chunk_records_.kernels) +
                     " kernels, " + std::to_string(chunk_records_.ranges) + " ranges and " +
                     std::to_string(chunk_records_.other) + " other records (" + std::to_string(bytes) + " bytes)");
  }
  dropped_bytes_ += bytes;
  dropped_records_ += chunk_records_;
  chunk_records_ = {};
  chunkDone(false);  // its definitions are not in the file: written again where needed
  payload_.resize(header_bytes_);
  records_ = 0;
  sealed_ = nullptr;
  sealed_bytes_ = 0;
}

// Rotation: a sealed chunk that does not fit is set aside, the current file gets the continuation marker,
// the sink starts a new file, the preamble's records go out as that file's first chunk (file header,
// sequence 0), then the set-aside chunk is sealed again (its sequence number changed) and follows. So
// every file starts with a file header and defines every id its records use. The size compared with the
// room is the sealed chunk's: compressed, for a packed chunk. makeRoom() normally rotates before a
// chunk grows past the room; this catches a chunk sealed early (the periodic flush) that still does not fit.
bool LogWriter::flush() {
  if (encoding_ != LogEncoding::kPlain) finishBatches();
  if (payload_.size() == header_bytes_) return true;
  const bool final = chunk_final_;
  chunk_final_ = false;
  if (final) closing_ = false;
  if (capped_ && !final && !in_preamble_) {
    dropChunk(payload_.size());  // not sealed: nothing of it is written
    return false;
  }
  size_t sealed = sealChunk();
  if (!in_preamble_ && sealed > roomForChunk(final) && mayRotate()) {
    --sequence_;  // not written: sealed again below, in the new file
    std::vector<uint8_t> stash(header_bytes_);
    stash.reserve(kTargetChunkPayload + 4096);
    stash.swap(payload_);
    const uint32_t stash_records = records_;
    const RecordCounts stash_counts = chunk_records_;
    std::vector<IdRef> stash_defs;
    stash_defs.swap(chunk_defs_);
    carry_uses_.swap(chunk_uses_);  // defined in the file left behind: the new file's first chunk defines them
    chunk_uses_.clear();
    ++chunk_serial_;
    records_ = 0;
    chunk_records_ = {};
    rotateFile();
    carry_uses_.clear();
    payload_.swap(stash);
    records_ = stash_records;
    chunk_records_ = stash_counts;
    chunk_defs_.swap(stash_defs);
    sealed = sealChunk();
  }
  if (!in_preamble_ && (capped_ ? !final : false)) {
    dropChunk(sealed);
    return false;
  }
  if (sealed > roomForChunk(final) && !(in_preamble_ && sealed <= roomForChunk(true))) {
    writeFileHeaderOnce();  // the file exists and says what it is, even if no chunk fits in it
    dropChunk(sealed);
    return false;
  }
  return writeSealed();
}

size_t LogWriter::sealChunk() {
  const size_t payload_bytes = payload_.size() - header_bytes_;
  if (encoding_ == LogEncoding::kPlain) {
    ChunkHeader ch{};
    ch.magic = kChunkMagic;
    ch.payload_bytes = static_cast<uint32_t>(payload_bytes);
    ch.checksum = XXH3_64bits(payload_.data() + sizeof(ChunkHeader), payload_bytes);
    ch.sequence = sequence_++;
    ch.record_count = records_;
    std::memcpy(payload_.data(), &ch, sizeof(ch));
    sealed_ = payload_.data();
    sealed_bytes_ = payload_.size();
    return sealed_bytes_;
  }
  const uint8_t* payload = payload_.data() + header_bytes_;
  PackedChunkHeader ch{};
  ch.magic = kPackedChunkMagic;
  ch.sequence = sequence_++;
  ch.record_count = records_;
  ch.payload_bytes = static_cast<uint32_t>(payload_bytes);
  ch.codec = static_cast<uint8_t>(ChunkCodec::kStored);
  const uint8_t* stored = payload;
  size_t stored_bytes = payload_bytes;
  // Compression failing (out of memory) is not an error: the chunk is stored as it is.
  if (zstd_ == nullptr && encoding_ == LogEncoding::kCompact) zstd_ = ZSTD_createCCtx();
  if (zstd_ != nullptr) {
    packed_.resize(sizeof(PackedChunkHeader) + ZSTD_compressBound(payload_bytes));
    const size_t z = ZSTD_compressCCtx(zstd_, packed_.data() + sizeof(PackedChunkHeader),
                                       packed_.size() - sizeof(PackedChunkHeader), payload, payload_bytes, kZstdLevel);
    if (!ZSTD_isError(z) && z < payload_bytes) {
      ch.codec = static_cast<uint8_t>(ChunkCodec::kZstd);
      stored = packed_.data() + sizeof(PackedChunkHeader);
      stored_bytes = z;
    }
  }
  ch.stored_bytes = static_cast<uint32_t>(stored_bytes);
  ch.checksum = XXH3_64bits(stored, stored_bytes);
  uint8_t* out = ch.codec == static_cast<uint8_t>(ChunkCodec::kZstd) ? packed_.data()
                                                                       : payload_.data();  // header room in front
  std::memcpy(out, &ch, sizeof(ch));
  sealed_ = out;
  sealed_bytes_ = sizeof(PackedChunkHeader) + stored_bytes;
  return sealed_bytes_;
}

// One write per chunk, so a crash leaves either the whole chunk or a cut tail the reader detects.
bool LogWriter::writeSealed() {
  bool ok = writeFileHeaderOnce();
  ok = writeToSink(sealed_, sealed_bytes_) && ok;
  if (ok) {
    written_records_ += chunk_records_;
  } else {
    dropped_records_ += chunk_records_;  // refused by the sink (disk full, not creatable)
  }
  chunk_records_ = {};
  chunkDone(ok);
  payload_.resize(header_bytes_);
  records_ = 0;
  sealed_ = nullptr;
  sealed_bytes_ = 0;
  return ok;
}

}  // namespace kc
