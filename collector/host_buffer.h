// Per-thread buffers of host-side records (launches, ranges): the launch hot path appends a fixed-size
// record to its own thread's buffer without locking or allocating; the writer thread drains them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "collector/log_format.h"

namespace kc {

/// One host-side record as produced on an application thread. Its times (launch enter/exit, range
/// begin/end) are hostTicks() values (collector/clock.h) until the writer converts them to ns.
struct HostEvent {
  enum Kind : uint32_t { kLaunch = 1, kRange = 2, kGraphNode = 3 };
  uint32_t kind;
  uint32_t reserved;  // kLaunch: string id of the launch's kernel name when kernels are named at the launch
                      // (KCOUNT_GPU_TIME=0, inject/callbacks.h), else 0
  union {
    LaunchBody launch;
    RangeBody range;
    GraphNodeBody graph_node;
  };
};
static_assert(sizeof(HostEvent) == 56);

inline constexpr uint32_t kEventsPerBlock = 1024;  // 56 KiB per block

/// A fixed array of events filled by one producer thread and read by one consumer.
/// `count` is published with release order after each event is written.
struct HostEventBlock {
  std::atomic<uint32_t> count{0};
  std::atomic<HostEventBlock*> next{nullptr};
  HostEvent events[kEventsPerBlock];
};

/// Recycles blocks and caps their number (memory cap = max_blocks * sizeof(HostEventBlock)).
/// Thread-safe (one mutex; taken once per kEventsPerBlock events by a producer, never per event).
class BlockPool {
 public:
  explicit BlockPool(size_t max_blocks) : max_blocks_(max_blocks) {}
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;
  ~BlockPool();
  /// A reset block, or nullptr when the cap is reached (the caller counts a drop). No throw.
  HostEventBlock* acquire() noexcept;
  void release(HostEventBlock* block) noexcept;
  size_t blocksAllocated() const;
  size_t maxBlocks() const { return max_blocks_; }

 private:
  mutable std::mutex mutex_;
  std::vector<HostEventBlock*> free_;
  size_t allocated_ = 0;
  size_t max_blocks_;
};

/// Single-producer single-consumer chain of blocks for one application thread.
/// Producer: the owning thread calls append(). Consumer: one drainer at a time (the writer, under the
/// session's writer lock) calls drain(). append() is wait-free except when a block fills up.
class ThreadBuffer {
 public:
  ThreadBuffer(BlockPool* pool, uint32_t thread_id) : pool_(pool), thread_id_(thread_id) {}
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  /// Appends a copy of e. Returns false (and counts a drop) if the pool's cap is reached.
  bool append(const HostEvent& e) noexcept {
    HostEvent* slot = reserve();
    if (slot == nullptr) return false;
    *slot = e;
    commit();
    return true;
  }

  /// Producer, for the hot paths: the slot the next event goes to, to be filled in place and then
  /// published with commit(); nullptr (and a drop counted) if the pool's cap is reached. Writing the
  /// fields where the writer reads them avoids building the event on the stack and copying it: that copy
  /// reads back, 16 bytes at a time, fields just stored one by one, and such loads wait for the stores to
  /// retire (no store-to-load forwarding), about a third of a launch callback's time (perf, build VM).
  /// Until commit() the slot is not visible to the consumer; no other append on this buffer meanwhile.
  HostEvent* reserve() noexcept {
    HostEventBlock* t = tail_;
    uint32_t n = t != nullptr ? t->count.load(std::memory_order_relaxed) : kEventsPerBlock;
    if (n == kEventsPerBlock) [[unlikely]] {
      t = grow();
      if (t == nullptr) return nullptr;
      n = 0;
    }
    return &t->events[n];
  }

  /// Publishes the slot reserve() returned (release order: the consumer sees it whole).
  void commit() noexcept {
    HostEventBlock* t = tail_;
    t->count.store(t->count.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    published_.store(published_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  /// Like append(), but never takes a new block (no lock): usable from a signal handler. Returns false
  /// (and counts a drop) if the current block is full.
  bool appendNoGrow(const HostEvent& e) noexcept {
    HostEventBlock* t = tail_;
    const uint32_t n = t != nullptr ? t->count.load(std::memory_order_relaxed) : kEventsPerBlock;
    if (n == kEventsPerBlock) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    t->events[n] = e;
    t->count.store(n + 1, std::memory_order_release);
    published_.store(published_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return true;
  }

  /// Calls fn(const HostEvent&) for every event published before the call, in order, up to the
  /// `until`-th event the producer ever published (a count, as published() returns; default: all);
  /// returns how many. Events the producer publishes meanwhile are left for the next drain, so a drain
  /// ends even while the producer keeps appending (the final flush at exit must not chase a launching
  /// thread); `until` lets the consumer take them in bounded batches (drained() tells where it is).
  /// Blocks fully read are returned to the pool.
  template <typename Fn>
  size_t drain(Fn&& fn, uint64_t until = UINT64_MAX) {
    const uint64_t target = std::min(published_.load(std::memory_order_acquire), until);
    size_t n = 0;
    HostEventBlock* b = head_.load(std::memory_order_acquire);
    while (b != nullptr && drained_ < target) {
      uint32_t c = b->count.load(std::memory_order_acquire);
      if (c - consumed_ > target - drained_) c = consumed_ + static_cast<uint32_t>(target - drained_);
      for (uint32_t i = consumed_; i < c; ++i, ++n) fn(b->events[i]);
      drained_ += c - consumed_;
      consumed_ = c;
      if (c < kEventsPerBlock) break;
      HostEventBlock* next = b->next.load(std::memory_order_acquire);
      if (next == nullptr) break;  // producer has not moved on yet; keep the full block
      head_.store(next, std::memory_order_relaxed);
      pool_->release(b);
      b = next;
      consumed_ = 0;
    }
    return n;
  }

  /// Consumer side: returns every block to the pool. Only after the producer has exited and a final
  /// drain() has run.
  void releaseAll() noexcept;

  /// Events the producer has published so far (a running count; acquire order). Any thread.
  uint64_t published() const { return published_.load(std::memory_order_acquire); }
  /// Events the consumer has drained so far (a running count). Consumer only.
  uint64_t drained() const { return drained_; }
  uint32_t threadId() const { return thread_id_; }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  /// Set by the owning thread when it exits (pthread key destructor); the writer then frees it.
  std::atomic<bool> exited{false};

 private:
  HostEventBlock* grow() noexcept;

  BlockPool* pool_;
  uint32_t thread_id_;
  HostEventBlock* tail_ = nullptr;               // producer only
  std::atomic<HostEventBlock*> head_{nullptr};   // set once by the producer, then consumer only
  uint32_t consumed_ = 0;                        // consumer only: events read in the head block
  uint64_t drained_ = 0;                         // consumer only: events read in all
  std::atomic<uint64_t> published_{0};           // events appended; written by the producer only
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace kc
