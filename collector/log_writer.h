// kcount binary log writer: encodes records into chunks and hands finished chunks to a ByteSink.
// Format: collector/log_format.h, docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "collector/compact.h"
#include "collector/log_format.h"

typedef struct ZSTD_CCtx_s ZSTD_CCtx;

namespace kc {

/// Where finished bytes go. write() returns false when the bytes could not be stored (disk full,
/// file not creatable); the writer then counts them in droppedBytes() and carries on.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual bool write(const void* data, size_t bytes) = 0;
  /// Bytes the current file may still take under its size cap (its file header included);
  /// kUnlimited without a cap. The LogWriter seals chunks so that they fit (docs/format.md, "Size cap").
  virtual uint64_t roomLeft() const { return kUnlimited; }
  /// True when the current file may be closed and a new one started (rotation): a further file is
  /// allowed and the sink has not failed. Sinks without rotation return false.
  virtual bool canRotate() const { return false; }
  /// Closes the current file and makes the next write() start a new one. False when no further file
  /// may be started (then writes keep failing as at the cap).
  virtual bool rotate() { return false; }
  /// Told by the LogWriter when it keeps a chunk out of the log because it does not fit under the cap:
  /// `what` says which records (counts) and how many bytes. The sink warns once (it knows the file's
  /// name and number); later chunks are dropped silently and counted by the writer.
  virtual void refused(const std::string& /*what*/) {}
  static constexpr uint64_t kUnlimited = ~uint64_t{0};
};

/// Where a LogWriter finds the String and Scope records that the records it writes refer to
/// (LogWriter::setDefinitions). Called by the writer's owner, under whatever lock guards the writer; it
/// must not call back into the writer.
class DefinitionSource {
 public:
  virtual ~DefinitionSource() = default;
  /// Text of string `id`; false if the id is unknown (then nothing is written for it).
  virtual bool stringText(uint32_t id, std::string* text) = 0;
  /// Scope `id`; false if the id is unknown.
  virtual bool scope(uint32_t id, ScopeBody* scope) = 0;
};

/// Collects bytes in memory; for tests and for the tools. With max_bytes != 0 it rotates like a
/// FileSink: each finished "file" is moved to `files`, and `bytes` holds the current one.
class MemorySink final : public ByteSink {
 public:
  bool write(const void* data, size_t bytes) override;
  uint64_t roomLeft() const override {
    return max_bytes == 0 ? kUnlimited : bytes.size() >= max_bytes ? 0 : max_bytes - bytes.size();
  }
  bool canRotate() const override { return max_bytes != 0 && files.size() + 1 < max_files; }
  bool rotate() override;
  void refused(const std::string& what) override { refusals.push_back(what); }
  std::vector<std::string> refusals;  // refused() texts, in order
  std::vector<uint8_t> bytes;
  std::vector<std::vector<uint8_t>> files;  // files finished by rotate(), oldest first
  size_t max_bytes = 0;
  size_t max_files = 8;
};

/// How LogWriter stores launches, kernels and ranges (docs/format.md).
enum class LogEncoding {
  /// Format 1.2 default: launches, kernels and ranges in compact batch records (types 16-18), each
  /// chunk a packed chunk compressed with zstd. About 5-15 bytes per kernel with its launch in a
  /// training loop, against 160 in plain chunks; 1.0/1.1 readers refuse these chunks (bad chunk magic).
  kCompact,
  /// Plain chunks of fixed-size records (the 1.0/1.1 layout), readable by every reader.
  kPlain,
  /// As kCompact, but packed chunks are stored without compression (codec 0): for tests, fuzzing seeds
  /// and looking at the batches with a hex dump.
  kCompactStored,
};

/// Records of a chunk, or of every chunk kept out of the log, by kind.
struct RecordCounts {
  uint64_t launches = 0, kernels = 0, ranges = 0, other = 0;  // other: metadata, strings, scopes, ...
  uint64_t mem_calls = 0;  // of `launches`: memcpy/memset API calls (LaunchBody flag kLaunchMemOp)
  uint64_t definitions = 0;  // of `other`: String and Scope records
  uint64_t total() const { return launches + kernels + ranges + other; }
  RecordCounts& operator+=(const RecordCounts& o) {
    launches += o.launches;
    mem_calls += o.mem_calls;
    definitions += o.definitions;
    kernels += o.kernels;
    ranges += o.ranges;
    other += o.other;
    return *this;
  }
};

/// Encodes records into the current chunk; flush() seals the chunk (size, checksum, sequence) and
/// writes it. The file header is written before the first chunk. Not thread-safe: one owner, or the
/// owner's lock. Appending a record never fails; only flush() touches the sink (and, compact, runs the
/// zstd compression of the chunk). Memory: the current chunk's encoded payload, about
/// kTargetChunkPayload bytes, and (compact) the compressed copy and a zstd context of about 1-2 MiB,
/// all reused across chunks.
///
/// Size cap (a sink whose roomLeft() is finite, KCOUNT_MAX_BYTES): before a record is appended, the
/// writer checks that the chunk, with that record, still fits in the room the current file has left
/// (its encoded size before compression, an upper bound of what is written), keeping kTailReserve bytes
/// for the last chunk (Stats and End records) or, in a file that may rotate, for the continuation
/// marker. If not, it flushes the chunk first (so a record appended may write a chunk); if the record
/// does not fit even alone and the sink can rotate, the file is closed with a continuation marker
/// (metadata kMetaContinuedIn) and the next one started with the preamble. A chunk that does not fit
/// in the last file is kept out (counted in droppedBytes(), droppedRecords(), reported once through
/// ByteSink::refused), and so is every later chunk except the final one (Stats and End), which the
/// reserve holds: the log stays one run without a hole, and its End record says it was closed.
class LogWriter {
 public:
  /// Bytes kept free in every capped file for the final chunk (Segment, Stats and End records, and
  /// the metadata naming records kept out) or the continuation marker.
  static constexpr size_t kTailReserve = 512;

  explicit LogWriter(ByteSink* sink, LogEncoding encoding = LogEncoding::kCompact);
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  /// Called when the sink rotates to a new file, before the chunk that did not fit is written there:
  /// it writes the records every file starts with (the metadata). Those records, and the definitions the
  /// chunk set aside needs (with a DefinitionSource), go out as the new file's first chunk. Without a
  /// preamble the writer never asks the sink to rotate.
  using Preamble = void (*)(LogWriter& writer, void* context);
  void setPreamble(Preamble fn, void* context) {
    preamble_ = fn;
    preamble_context_ = context;
  }
  /// Files started after the first by rotation.
  uint32_t rotations() const { return rotations_; }

  /// Definitions on demand: before a record that refers to a string or scope id (a launch's scope and API
  /// name, a kernel's name, a range's scope, a graph node's scope, a segment's reasons, a snapshot row's
  /// scope and kernel name), the writer writes the String and Scope records of the ids not yet defined in
  /// the current file, a scope's parent and name and domain strings first (transitively), taken from
  /// `source`. "Defined in the current file" means in a chunk the sink took: a definition in a chunk kept
  /// out (size cap) or refused is written again before the next record that needs it, and a rotated file
  /// starts with none, so each file holds the definitions its own records use and no other (docs/format.md,
  /// "Interning"). String and Scope records written by the caller count as definitions too. Without a
  /// source (nullptr, the default) the caller writes every definition itself, before its first use.
  /// Memory: two 4-byte marks per id, up to the highest string and scope id written (at most kMaxIds).
  void setDefinitions(DefinitionSource* source) { source_ = source; }
  bool definitionsOnDemand() const { return source_ != nullptr; }
  /// True if string (`is_string`) or scope `id` is defined in the current file (a chunk the sink took) or in
  /// the current chunk; always true without a DefinitionSource.
  bool defined(bool is_string, uint32_t id) const { return source_ == nullptr || definedHere(is_string, id); }
  /// Encoded bytes (record headers included) of the definitions not yet in the current file (nor in the
  /// current chunk) that records referring to these scope and string ids would need written first: an upper
  /// bound (a definition shared by two ids may be counted twice). 0 without a DefinitionSource.
  uint64_t missingDefinitionBytes(std::span<const uint32_t> scope_ids, std::span<const uint32_t> string_ids);

  void writeMetadata(std::string_view key, std::string_view value);
  /// Defines string id. Strings longer than kMaxStringBytes are cut.
  void writeString(uint32_t string_id, std::string_view text);
  void writeScope(const ScopeBody& scope);
  void writeLaunch(const LaunchBody& launch);
  void writeKernel(const KernelBody& kernel);
  void writeRange(const RangeBody& range);
  void writeStats(const StatsBody& stats);
  void writeGraphNode(const GraphNodeBody& node);
  void writeMemOp(const MemOpBody& op);
  void writeSegment(const SegmentBody& segment);
  void writeSnapshotBegin(const SnapshotBeginBody& b);
  void writeSnapshotScope(const SnapshotScopeBody& s);
  void writeSnapshotKernel(const SnapshotKernelBody& k);
  void writeSnapshotEnd(const SnapshotEndBody& e);
  /// kcount's own callbacks inside one range (1.4; the library writes them in the final chunk).
  void writeRangeCallbacks(const RangeCallbacksBody& r);
  /// Marks the log complete. Call last, then flush(). The chunk holding it may use kTailReserve.
  void writeEnd();

  /// Encoded bytes (an upper bound of what is written) of a group of records taking `record_bytes`
  /// (record headers included) when written from an empty chunk and cut at kTargetChunkPayload: the
  /// records and one chunk header per chunk.
  uint64_t groupBytes(uint64_t record_bytes) const;
  /// Called before a group of records that is only read whole (a summary-mode snapshot, SnapshotBegin to
  /// SnapshotEnd) of `record_bytes` encoded bytes (record headers included), and `definition_bytes` of the
  /// definitions it needs written first (with a DefinitionSource, missingDefinitionBytes(): they go out in
  /// the group's chunks, before its records). Without a size cap it does
  /// nothing and returns true. Under a cap:
  /// - if the group does not fit in the room the current file has left and the sink may rotate, the
  ///   current chunk is flushed and the log continues in a new file now, so that the group is not split
  ///   between two files (each would read it as incomplete);
  /// - with `keep_room_for_another` (a periodic snapshot), returns false when the group, written in a file
  ///   that cannot rotate, would not leave room for one more group of groupBytes(record_bytes) besides
  ///   kTailReserve, or once a chunk was kept out at the cap. The caller then writes none of it, so that
  ///   the last group (the final snapshot, at least as large) still fits under the cap.
  /// Returns true otherwise (`keep_room_for_another` false: always; a group that does not fit is then kept
  /// out and counted as any chunk). Writes nothing but the current chunk and, on rotation, the marker
  /// and the next file's preamble.
  ///
  /// With `emit` (a function that appends the group's records to the writer it is given, calling flush()
  /// whenever chunkFull(), exactly as the caller then does on this writer) and a cap, the group is sized
  /// by what it writes: `emit` runs on a scratch writer of the same encoding, and its sealed chunks
  /// (compressed, for packed chunks; never more than groupBytes()) are counted. The current chunk is then
  /// flushed first, so that the group starts a chunk and writes exactly that many bytes, and the tests
  /// above use that size for the group itself; the room kept for one more group stays
  /// groupBytes(record_bytes), a bound that holds before compression. If the group fits, the writer does
  /// not cut its chunks early for the cap until endGroup() (they fit as measured). Costs one extra
  /// encoding (and compression) of the group, only under a cap and near it; the scratch writer (a chunk's
  /// buffers and a zstd context, about 1-3 MiB) is made on first use and kept.
  /// The room kept for one more group counts its records only: the definitions this group writes are in
  /// the file for it too (the records of the next one refer to them, and maybe to more).
  bool prepareGroup(uint64_t record_bytes, bool keep_room_for_another,
                    const std::function<void(LogWriter&)>& emit = {}, uint64_t definition_bytes = 0);
  /// Ends a group prepared by prepareGroup() after its records were appended: flushes its last chunk if
  /// the group was sized by what it writes.
  void endGroup();
  /// Sizes groups by what they write (prepareGroup's `emit`); on by default. Off: by groupBytes() only, the
  /// bound before compression (for comparisons in tests).
  void setMeasureGroups(bool on) { measure_groups_ = on; }

  /// True once the current chunk has reached kTargetChunkPayload encoded bytes and should be flushed.
  bool chunkFull() const {
    return payload_.size() + launches_.bytes() + kernels_.bytes() + ranges_.bytes() >=
           kTargetChunkPayload + header_bytes_;
  }
  /// Seals and writes the current chunk (no-op if empty). Returns false if the sink refused the bytes.
  bool flush();
  /// Starts the log's final chunk: flushes the current chunk, then every record up to the End record goes
  /// into one chunk without the cap check, held by kTailReserve (as Stats and End always are). For the
  /// records that close the log (the last Segment and the strings it names, metadata, Stats, End), so
  /// that under KCOUNT_MAX_BYTES none of them is split off into a chunk kept out at the cap while the rest
  /// is written: a record never reaches the file without the definitions it uses (docs/format.md,
  /// "Interning"). The caller keeps the final chunk within the reserve (a few hundred bytes).
  void beginFinalChunk();

  uint64_t bytesWritten() const { return bytes_written_; }
  uint64_t droppedBytes() const { return dropped_bytes_; }
  /// Records in chunks not written (kept out at the size cap, or refused by the sink), by kind.
  const RecordCounts& droppedRecords() const { return dropped_records_; }
  /// Records in chunks the sink took (what reached the file or files), by kind. Counted per chunk, when
  /// it is written: records still in the current chunk are in neither count.
  const RecordCounts& writtenRecords() const { return written_records_; }
  /// 0-based number of the file the first chunk kept out at the size cap was meant for (-1 if none).
  int64_t firstDropFile() const { return first_drop_file_; }
  LogEncoding encoding() const { return encoding_; }

 private:
  void finishBatches();
  bool writeFileHeaderOnce();
  void append(RecordType type, const void* body, uint32_t body_bytes, const void* tail = nullptr,
              uint32_t tail_bytes = 0);
  bool writeToSink(const void* data, size_t bytes);
  /// Cap check before a record of at most `bound` encoded bytes is appended (see the class comment).
  void makeRoom(size_t bound);
  /// Encoded bytes of the current chunk so far, chunk header included: an upper bound of its sealed size.
  size_t encodedBytes() const;
  bool chunkEmpty() const { return records_ == 0 && launches_.count() == 0 && kernels_.count() == 0 && ranges_.count() == 0; }
  /// Room the current file has left for a chunk (kUnlimited without a cap): the sink's room less the
  /// file header if not written yet, less kTailReserve unless `final`.
  uint64_t roomForChunk(bool final) const;
  bool mayRotate() const;
  /// Writes the continuation marker into the current file, rotates and writes the preamble (and the
  /// definitions of carry_uses_) as the new file's first chunk. The current chunk must be empty (set aside
  /// by the caller).
  void rotateFile();
  /// A string (`is_string`) or scope id a record refers to.
  struct IdRef {
    bool is_string;
    uint32_t id;
  };
  /// Before a record of at most `bound` encoded bytes that refers to `refs`: makes room (makeRoom) for the
  /// record and the definitions it needs, then writes those definitions (DefinitionSource).
  void beginRecord(size_t bound, std::initializer_list<IdRef> refs);
  /// writeLaunch/Kernel/Range: the record `body` of `type` that refers to `refs`, appended (plain) or added
  /// to `batch` (compact; `count` is the chunk's tally of such records), its definitions first.
  template <typename Body, typename Encoder>
  void writeRecord(RecordType type, const Body& body, Encoder& batch, uint64_t& count,
                   std::initializer_list<IdRef> refs);
  /// True if the id is defined in the current file or in the current chunk (also in the writer whose
  /// group this scratch writer measures, marks_of_).
  bool definedHere(bool is_string, uint32_t id) const;
  /// Bytes of the definitions `ref` needs (itself and, for a scope, its parent and strings) not yet here;
  /// with `seen`, each definition is counted once across calls.
  uint64_t missingBytes(IdRef ref, int depth, std::unordered_set<uint64_t>* seen);
  /// Writes the definition of `ref` if not here (its dependencies first), or notes its use in the chunk.
  void define(IdRef ref, int depth);
  /// A String or Scope record was appended to the current chunk.
  void noteDefined(IdRef ref);
  /// The current chunk was written (`written`) or kept out: its definitions count for the file or not.
  void chunkDone(bool written);
  /// Forgets every definition (the scratch writer, before it measures a group).
  void forgetDefinitions();
  /// Longest chain of scope parents followed (corrupt parents must not recurse without end).
  static constexpr int kMaxScopeChain = 256;
  /// Keeps the current chunk out of the log (size cap): counts its bytes and records, empties it. The first
  /// one is reported through ByteSink::refused: `what` names the chunk (default: its records by kind).
  void dropChunk(size_t bytes, const std::string& what = {});
  /// Fills the current chunk's header (sequence number taken) and, for packed chunks, compresses it;
  /// returns the bytes writeSealed() will write (sealed_, sealed_bytes_). The payload stays as it is.
  size_t sealChunk();
  /// Writes the file header if not yet written and the sealed chunk; empties the payload.
  bool writeSealed();

  ByteSink* sink_;
  LogEncoding encoding_;
  size_t header_bytes_;            // room kept at the front of payload_ for the chunk header
  std::vector<uint8_t> payload_;   // chunk header room, then the records
  LaunchBatchEncoder launches_;    // compact: the current chunk's launches, kernels and ranges
  KernelBatchEncoder kernels_;
  RangeBatchEncoder ranges_;
  std::vector<uint8_t> packed_;    // compact: header + compressed payload of the chunk being written
  ZSTD_CCtx* zstd_ = nullptr;
  uint32_t records_ = 0;
  uint32_t sequence_ = 0;
  bool header_written_ = false;
  uint64_t bytes_written_ = 0;
  uint64_t dropped_bytes_ = 0;
  Preamble preamble_ = nullptr;
  void* preamble_context_ = nullptr;
  bool in_preamble_ = false;
  const uint8_t* sealed_ = nullptr;  // the sealed chunk: in payload_ (plain, stored) or packed_ (zstd)
  size_t sealed_bytes_ = 0;
  uint32_t rotations_ = 0;
  RecordCounts chunk_records_;    // records in the current chunk, by kind
  RecordCounts dropped_records_;
  RecordCounts written_records_;
  bool chunk_final_ = false;      // the current chunk holds the End record
  bool closing_ = false;          // beginFinalChunk() was called: no cap check until the End record
  bool capped_ = false;           // a chunk was kept out at the cap: later ones are too, but the final one
  bool measure_groups_ = true;    // setMeasureGroups()
  bool group_measured_ = false;   // between prepareGroup() and endGroup(): the group was measured and fits
  std::unique_ptr<MemorySink> scratch_sink_;  // prepareGroup's measuring writer and its sink, made on first use
  std::unique_ptr<LogWriter> scratch_;
  int64_t first_drop_file_ = -1;
  // Definitions on demand (setDefinitions). Per id, the serial of the file whose written chunks define it,
  // and the serial of the chunk that defines or uses it; a new file or chunk takes a new serial.
  DefinitionSource* source_ = nullptr;
  std::vector<uint32_t> string_file_, string_chunk_, scope_file_, scope_chunk_;
  uint32_t file_serial_ = 1, chunk_serial_ = 1;
  std::vector<IdRef> chunk_defs_;  // ids the current chunk defines
  std::vector<IdRef> chunk_uses_;  // ids the current chunk uses that earlier chunks of the file define
  std::vector<IdRef> carry_uses_;  // rotateFile(): ids the chunk set aside uses from the previous file
  bool room_made_ = false;         // beginRecord() made room: append() does not check again
  std::string def_text_;           // scratch
  const LogWriter* marks_of_ = nullptr;  // scratch writer: the writer whose definitions count as written
};

}  // namespace kc
