// The activity buffers kcount hands CUPTI: owned, capped and recycled (Kineto's buffer cap). No CUPTI
// types: the trampolines (cupti_trampolines.cpp) translate CUPTI's buffer requests into this pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace kc::inject {

/// A pool of equal-size activity buffers, at most `max_buffers` of them ever allocated.
/// Ownership: the pool owns every buffer it allocated and frees them all when destroyed; a completed
/// buffer is recycled for the next request. The process's pool (activityBuffers()) is never destroyed,
/// since CUPTI may complete a buffer during exit.
/// Threads: any thread (CUPTI's request and completion threads); one mutex guards the lists, held for a
/// few pointer operations only, never while calling CUPTI. Errors: never throws; a request that finds the
/// cap reached or fails to allocate gets nullptr and is counted (refused()).
class ActivityBufferPool {
 public:
  /// `buffer_bytes`: size of each buffer (bytes); `max_buffers`: the cap on buffers allocated (at least 1).
  ActivityBufferPool(size_t buffer_bytes, uint64_t max_buffers) noexcept
      : buffer_bytes_(buffer_bytes), max_buffers_(max_buffers) {}
  ~ActivityBufferPool();
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  /// A buffer of bufferBytes() bytes (8-byte aligned): a recycled one first, else a new one while fewer
  /// than maxBuffers() exist. nullptr when the cap is reached or allocation fails (refused() counts it).
  uint8_t* take() noexcept;
  /// Takes back a buffer CUPTI completed. Returns true if it is one of this pool's (kept for reuse);
  /// false for a buffer the pool never handed out (another CUPTI client's, before kcount took the
  /// callbacks back under KCOUNT_YIELD): not the pool's to reuse or free, left alone.
  bool give(uint8_t* buffer) noexcept;

  size_t bufferBytes() const noexcept { return buffer_bytes_; }
  uint64_t maxBuffers() const noexcept { return max_buffers_; }
  /// Buffers allocated so far (never more than maxBuffers()).
  uint64_t allocated() const noexcept;
  /// Requests answered with nullptr.
  uint64_t refused() const noexcept;

 private:
  const size_t buffer_bytes_;
  const uint64_t max_buffers_;
  mutable std::mutex mutex_;    // guards everything below
  std::vector<uint8_t*> free_;  // completed buffers, ready for reuse
  std::vector<uint8_t*> owned_; // every buffer this pool allocated
  uint64_t refused_ = 0;
};

}  // namespace kc::inject
