// kcount binary log writer: encodes records into chunks and hands finished chunks to a ByteSink.
// Format: collector/log_format.h, docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
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
  /// True when `bytes` more would pass the current file's size cap and the sink can continue in a new
  /// file (rotation). Sinks without rotation return false.
  virtual bool needsRotation(size_t /*bytes*/) const { return false; }
  /// Closes the current file and makes the next write() start a new one. False when no further file
  /// may be started (then writes keep failing as at the cap).
  virtual bool rotate() { return false; }
};

/// Collects bytes in memory; for tests and for the tools. With max_bytes != 0 it rotates like a
/// FileSink: each finished "file" is moved to `files`, and `bytes` holds the current one.
class MemorySink final : public ByteSink {
 public:
  bool write(const void* data, size_t bytes) override;
  bool needsRotation(size_t n) const override {
    return max_bytes != 0 && !bytes.empty() && bytes.size() + n > max_bytes && files.size() + 1 < max_files;
  }
  bool rotate() override;
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

/// Encodes records into the current chunk; flush() seals the chunk (size, checksum, sequence) and
/// writes it. The file header is written before the first chunk. Not thread-safe: one owner, or the
/// owner's lock. Appending a record never fails; only flush() touches the sink (and, compact, runs the
/// zstd compression of the chunk). Memory: the current chunk's encoded payload, about
/// kTargetChunkPayload bytes, and (compact) the compressed copy and a zstd context of about 1-2 MiB,
/// all reused across chunks.
class LogWriter {
 public:
  explicit LogWriter(ByteSink* sink, LogEncoding encoding = LogEncoding::kCompact);
  ~LogWriter();
  LogWriter(const LogWriter&) = delete;
  LogWriter& operator=(const LogWriter&) = delete;

  /// Called when the sink rotates to a new file, before the chunk that did not fit is written there:
  /// it writes the records that make the new file self-contained (metadata, every string and scope
  /// defined so far). Those records go out as the new file's first chunk. Without a preamble the
  /// writer never asks the sink to rotate.
  using Preamble = void (*)(LogWriter& writer, void* context);
  void setPreamble(Preamble fn, void* context) {
    preamble_ = fn;
    preamble_context_ = context;
  }
  /// Files started after the first by rotation.
  uint32_t rotations() const { return rotations_; }

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
  /// Marks the log complete. Call last, then flush().
  void writeEnd();

  /// True once the current chunk has reached kTargetChunkPayload encoded bytes and should be flushed.
  bool chunkFull() const {
    return payload_.size() + launches_.bytes() + kernels_.bytes() + ranges_.bytes() >=
           kTargetChunkPayload + header_bytes_;
  }
  /// Seals and writes the current chunk (no-op if empty). Returns false if the sink refused the bytes.
  bool flush();

  uint64_t bytesWritten() const { return bytes_written_; }
  uint64_t droppedBytes() const { return dropped_bytes_; }
  uint32_t chunksWritten() const { return sequence_; }
  LogEncoding encoding() const { return encoding_; }

 private:
  void finishBatches();
  bool writeFileHeaderOnce();
  void append(RecordType type, const void* body, uint32_t body_bytes, const void* tail = nullptr,
              uint32_t tail_bytes = 0);
  bool writeToSink(const void* data, size_t bytes);
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
};

}  // namespace kc
