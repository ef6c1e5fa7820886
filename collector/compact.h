// Compact encoding of launch, kernel and range records (format 1.2, record types 16-18): column-wise
// batches of zigzag varints with delta timestamps and "same as the previous record" bits. Layout of each
// batch: docs/format.md, "Compact batches". Encoders are used by LogWriter (the library's writer thread),
// decoders by the log reader. Neither allocates per record: encoders append to column buffers they own,
// decoders fill a caller's vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "collector/log_format.h"

namespace kc {

/// Most records one batch may hold. Writers start a new batch record when one is full; readers refuse a
/// larger count as corrupt before decoding, so one batch decodes into at most 64 Ki records (6 MiB of
/// KernelBody).
inline constexpr uint32_t kMaxBatchRecords = 1u << 16;

/// Appends the unsigned LEB128 varint of v (1-10 bytes) to out.
inline void putVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v) | 0x80);
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}
/// Zigzag of a two's-complement difference: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ...
inline uint64_t zigzag(uint64_t d) { return (d << 1) ^ (0 - (d >> 63)); }
inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

/// Bounds-checked varint reader over one column. A varint longer than 10 bytes, or one that runs past
/// the column, sets failed() and reads as 0; nothing reads past the span.
class VarintCursor {
 public:
  VarintCursor() = default;
  explicit VarintCursor(std::span<const uint8_t> bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  uint64_t next() {
    if (p_ < end_ && *p_ < 0x80) return *p_++;  // fast path: one byte
    if (end_ - p_ >= 10) {                       // no bounds check needed for a varint of up to 10 bytes
      uint64_t v = *p_++ & 0x7f;
      for (int shift = 7; shift < 63; shift += 7) {
        const uint8_t b = *p_++;
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (b < 0x80) return v;
      }
      const uint8_t b = *p_++;  // 10th byte: only the top bit of a 64-bit value may be set
      if (b <= 1) return v | static_cast<uint64_t>(b) << 63;
      failed_ = true;
      p_ = end_;
      return 0;
    }
    return slow();
  }
  bool failed() const { return failed_; }
  bool atEnd() const { return p_ == end_; }
  const uint8_t* ptr() const { return p_; }
  /// Takes n raw bytes (for fixed-width fields); false and nothing consumed if fewer remain.
  bool raw(void* out, size_t n);

 private:
  uint64_t slow();
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  bool failed_ = false;
};

/// Builds one batch record body of launches, kernels or ranges. Records are encoded as they are added
/// (no copy of the record is kept); body() assembles the columns. Delta state starts from an all-zero
/// record in every batch, so each batch decodes on its own. Not thread-safe.
class LaunchBatchEncoder {
 public:
  void add(const LaunchBody& l);
  uint32_t count() const { return count_; }
  size_t bytes() const;  // encoded size so far (columns, without the batch's count and lengths)
  /// Appends the record body (count, column lengths, columns) to out and resets to an empty batch.
  void finish(std::vector<uint8_t>& out);

 private:
  static constexpr int kColumns = 5;
  std::vector<uint8_t> col_[kColumns];
  LaunchBody prev_{};
  uint32_t count_ = 0;
};

/// Slots of the per-batch table of the last kernel of each name (name_id mod kNameSlots): a kernel's
/// device/context/stream, grid/block and resources are predicted from the last kernel of the same name.
inline constexpr uint32_t kNameSlots = 256;

class KernelBatchEncoder {
 public:
  void add(const KernelBody& k);
  uint32_t count() const { return count_; }
  size_t bytes() const;
  void finish(std::vector<uint8_t>& out);

 private:
  static constexpr int kColumns = 5;
  std::vector<uint8_t> col_[kColumns];
  KernelBody prev_{};
  std::vector<KernelBody> by_name_ = std::vector<KernelBody>(kNameSlots);
  std::vector<uint8_t> by_name_used_ = std::vector<uint8_t>(kNameSlots);
  uint32_t count_ = 0;
};

class RangeBatchEncoder {
 public:
  void add(const RangeBody& r);
  uint32_t count() const { return count_; }
  size_t bytes() const;
  void finish(std::vector<uint8_t>& out);

 private:
  static constexpr int kColumns = 3;
  std::vector<uint8_t> col_[kColumns];
  RangeBody prev_{};
  uint32_t count_ = 0;
};

/// Decodes one batch body into out: appended, or with `reuse` written over out from index 0 (out's size
/// becomes the batch's record count; a buffer reused batch after batch is not zero-filled again). On
/// malformed input returns false with `error` saying what was wrong (count above kMaxBatchRecords or
/// above what the flags column holds, a column length past the body, an unknown flag bit, a bad varint, a
/// column with bytes left over); out then holds none of the batch's records (a batch is all or nothing).
/// Never reads past body.
bool decodeLaunchBatch(std::span<const uint8_t> body, std::vector<LaunchBody>& out, std::string& error,
                       bool reuse = false);
bool decodeKernelBatch(std::span<const uint8_t> body, std::vector<KernelBody>& out, std::string& error,
                       bool reuse = false);
bool decodeRangeBatch(std::span<const uint8_t> body, std::vector<RangeBody>& out, std::string& error,
                      bool reuse = false);

}  // namespace kc
