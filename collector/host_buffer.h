// Per-thread buffers of host-side records (launches, ranges): the launch hot path appends a fixed-size
// record to its own thread's buffer without locking or allocating; the writer thread drains them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

#include "collector/log_format.h"
#include "collector/self_cost.h"

namespace kc {

/// A range as the library hands it to the writer: the Range record and kcount's own callbacks on the range's
/// thread while it was open (collector/self_cost.h), in the 16 bytes the union of HostEvent has beyond a
/// RangeBody. Which callbacks count: inject/nvtx_injection.cpp (rangeCallbacksSince). The writer sums them
/// per scope (RangeCallbacks records); the Range record itself carries only the RangeBody.
struct HostRange : RangeBody {
  uint32_t callbacks;    // held at UINT32_MAX
  uint32_t timed;        // of them, timed (at most callbacks)
  uint64_t timed_ticks;  // the timed ones' summed duration, hostTicks() units

  /// The range `b` with no callbacks counted (process-wide ranges, tests).
  HostRange& operator=(const RangeBody& b) noexcept {
    static_cast<RangeBody&>(*this) = b;
    callbacks = 0;
    timed = 0;
    timed_ticks = 0;
    return *this;
  }
};
static_assert(sizeof(HostRange) == 48 && std::is_trivially_copyable_v<HostRange>);

/// One host-side record as the writer takes it from a thread buffer (ThreadBuffer::drain). Its times
/// (launch enter/exit, range begin/end) are hostTicks() values (collector/clock.h) until the writer
/// converts them to ns.
struct HostEvent {
  enum Kind : uint32_t { kLaunch = 1, kRange = 2, kGraphNode = 3 };
  uint32_t kind;
  uint32_t reserved;  // kLaunch: string id of the launch's kernel name when kernels are named at the launch
                      // (KCOUNT_GPU_TIME=0, inject/callbacks.h), else 0
  union {
    LaunchBody launch;
    HostRange range;
    GraphNodeBody graph_node;
  };
};
static_assert(sizeof(HostEvent) == 56);

/// Thread buffers are arrays of 32-byte slots. A launch, the most frequent record, takes one slot in the
/// compact form below; any other event (a range, a graph node, a launch the compact form cannot hold)
/// takes kWideSlots slots holding a whole HostEvent. Half a cache line per launch instead of 56 bytes:
/// the launch callback's first store to a line it does not own is the largest part of its cost
/// (docs/performance.md, Run 14).
inline constexpr uint32_t kSlotBytes = 32;
inline constexpr uint32_t kWideSlots = 2;

/// A launch in one slot. What LaunchBody holds beyond it comes from elsewhere: the thread id is the
/// buffer's, the exit time is enter + duration. Producer-side only; drain() expands it to a HostEvent.
struct LaunchSlot {
  uint8_t tag;              // kTagLaunch
  uint8_t flags;            // LaunchFlags (bits 0-5), kSlotGraphLaunch, kSlotDriverApi
  uint16_t cbid;            // CUPTI callback id of the outermost API
  uint32_t correlation_id;  // CUPTI's id (CUpti_CallbackData::correlationId is 32 bits)
  uint64_t enter_ticks;     // hostTicks() at API enter; 0 when untimed (kLaunchUntimed)
  uint32_t duration_ticks;  // exit - enter in hostTicks() units; 0 when untimed
  uint32_t scope_id;        // innermost NVTX range at API enter
  uint32_t api_id;          // string id of the API's name
  uint32_t kernel_name;     // as HostEvent::reserved
  static constexpr uint8_t kTagLaunch = 0x80;   // first byte of a slot: no HostEvent::Kind has it
  static constexpr uint8_t kSlotGraphLaunch = 1u << 6;
  static constexpr uint8_t kSlotDriverApi = 1u << 7;  // ApiDomain::kDriver; clear: kRuntime

  /// Fills every field (padding included: there is none) from a launch of the thread `thread_id`
  /// buffers. False, with the slot unspecified, if the launch does not fit: another thread's id, a
  /// correlation id or cbid past 32/16 bits, a domain other than runtime/driver, flags past bit 5, or
  /// a call longer than 2^32 ticks (about 1.4 s at 3 GHz: a first launch that JIT-compiles PTX can be).
  bool pack(const HostEvent& e, uint32_t thread_id) noexcept {
    const LaunchBody& b = e.launch;
    if (b.thread_id != thread_id || b.correlation_id > UINT32_MAX || b.cbid > UINT16_MAX || b.flags >= (1u << 6) ||
        b.exit_ns < b.enter_ns || b.exit_ns - b.enter_ns > UINT32_MAX || b.is_graph_launch > 1 ||
        (b.domain != static_cast<uint8_t>(ApiDomain::kRuntime) && b.domain != static_cast<uint8_t>(ApiDomain::kDriver)))
      return false;
    tag = kTagLaunch;
    flags = static_cast<uint8_t>(b.flags | (b.is_graph_launch != 0 ? kSlotGraphLaunch : 0) |
                                 (b.domain == static_cast<uint8_t>(ApiDomain::kDriver) ? kSlotDriverApi : 0));
    cbid = static_cast<uint16_t>(b.cbid);
    correlation_id = static_cast<uint32_t>(b.correlation_id);
    enter_ticks = b.enter_ns;
    duration_ticks = static_cast<uint32_t>(b.exit_ns - b.enter_ns);
    scope_id = b.scope_id;
    api_id = b.api_id;
    kernel_name = e.reserved;
    return true;
  }

  /// The HostEvent this slot stands for, on the thread `thread_id`.
  HostEvent unpack(uint32_t thread_id) const noexcept {
    HostEvent e{};
    e.kind = HostEvent::kLaunch;
    e.reserved = kernel_name;
    LaunchBody& b = e.launch;
    b.correlation_id = correlation_id;
    b.enter_ns = enter_ticks;
    b.exit_ns = enter_ticks + duration_ticks;
    b.scope_id = scope_id;
    b.thread_id = thread_id;
    b.api_id = api_id;
    b.cbid = cbid;
    b.domain = static_cast<uint8_t>((flags & kSlotDriverApi) != 0 ? ApiDomain::kDriver : ApiDomain::kRuntime);
    b.is_graph_launch = (flags & kSlotGraphLaunch) != 0 ? 1 : 0;
    b.flags = static_cast<uint8_t>(flags & ~(kSlotGraphLaunch | kSlotDriverApi));
    return e;
  }
};
static_assert(sizeof(LaunchSlot) == kSlotBytes);
static_assert(sizeof(HostEvent) <= kWideSlots * kSlotBytes);

inline constexpr uint32_t kSlotsPerBlock = 2048;  // 64 KiB per block: 2048 launches, or 1024 other events
inline constexpr uint8_t kTagPad = 0xFF;          // first byte of a block's unused last slot

/// A fixed array of slots filled by one producer thread and read by one consumer. `count` (slots used)
/// is published with release order after each event is written. The first byte of an event's first slot
/// tells its form: LaunchSlot::kTagLaunch, kTagPad (the rest of the block is unused), else a HostEvent
/// whose kind's low byte it is.
struct HostEventBlock {
  std::atomic<uint32_t> count{0};
  std::atomic<HostEventBlock*> next{nullptr};
  alignas(64) unsigned char slots[kSlotsPerBlock][kSlotBytes];
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

  /// Appends a copy of e: one slot for a launch LaunchSlot::pack() takes, kWideSlots otherwise. Returns
  /// false (and counts a drop) if the pool's cap is reached.
  bool append(const HostEvent& e) noexcept {
    if (e.kind == HostEvent::kLaunch) {
      LaunchSlot packed;
      if (packed.pack(e, thread_id_)) {
        LaunchSlot* slot = reserveLaunch();
        if (slot == nullptr) return false;
        *slot = packed;
        commit();
        return true;
      }
    }
    HostEvent* slot = reserveEvent();
    if (slot == nullptr) return false;
    *slot = e;
    commit();
    return true;
  }

  /// Producer, for the hot paths: the slot the next launch goes to, to be filled in place (every field)
  /// and then published with commit(); nullptr (and a drop counted) if the pool's cap is reached. Writing
  /// the fields where the writer reads them avoids building the record on the stack and copying it: that
  /// copy reads back, 16 bytes at a time, fields just stored one by one, and such loads wait for the
  /// stores to retire (no store-to-load forwarding), about a third of a launch callback's time (perf,
  /// build VM). Until commit() the slot is not visible to the consumer; no other append meanwhile.
  LaunchSlot* reserveLaunch() noexcept {
    void* p = reserveSlots(1);
    return p != nullptr ? new (p) LaunchSlot : nullptr;  // no code: it only begins the slot's lifetime
  }

  /// As reserveLaunch(), for any event in its HostEvent form (kWideSlots slots).
  HostEvent* reserveEvent() noexcept {
    void* p = reserveSlots(kWideSlots);
    return p != nullptr ? new (p) HostEvent : nullptr;
  }

  /// Publishes the event reserve*() returned (release order: the consumer sees it whole).
  void commit() noexcept {
    HostEventBlock* t = tail_;
    t->count.store(t->count.load(std::memory_order_relaxed) + pending_slots_, std::memory_order_release);
    published_.store(published_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  /// Like append() of a HostEvent form, but never takes a new block (no lock): usable from a signal
  /// handler. Returns false (and counts a drop) if the current block has no room.
  bool appendNoGrow(const HostEvent& e) noexcept {
    HostEventBlock* t = tail_;
    const uint32_t n = t != nullptr ? t->count.load(std::memory_order_relaxed) : kSlotsPerBlock;
    if (n + kWideSlots > kSlotsPerBlock) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    *new (t->slots[n]) HostEvent = e;
    t->count.store(n + kWideSlots, std::memory_order_release);
    published_.store(published_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return true;
  }

  /// Calls fn(const HostEvent&) for every event published before the call, in order, up to the
  /// `until`-th event the producer ever published (a count, as published() returns; default: all);
  /// returns how many. Events the producer publishes meanwhile are left for the next drain, so a drain
  /// ends even while the producer keeps appending (the final flush at exit must not chase a launching
  /// thread); `until` lets the consumer take them in bounded batches (drained() tells where it is).
  /// Compact launches reach fn expanded (LaunchSlot::unpack). Blocks fully read are returned to the pool.
  template <typename Fn>
  size_t drain(Fn&& fn, uint64_t until = UINT64_MAX) {
    const uint64_t target = std::min(published_.load(std::memory_order_acquire), until);
    size_t n = 0;
    HostEventBlock* b = head_.load(std::memory_order_acquire);
    while (b != nullptr && drained_ < target) {
      const uint32_t c = b->count.load(std::memory_order_acquire);
      uint32_t i = consumed_;
      while (i < c) {
        const unsigned char* slot = b->slots[i];
        // A pad ends the block's events. Tested before the batch bound, so that a batch ending right before
        // the pad still finishes the block (it goes back to the pool now, not at the next drain).
        if (slot[0] == kTagPad) {
          i = kSlotsPerBlock;
          break;
        }
        if (drained_ >= target) break;
        if (slot[0] == LaunchSlot::kTagLaunch) {
          LaunchSlot l;
          std::memcpy(&l, slot, sizeof l);
          fn(l.unpack(thread_id_));
          i += 1;
        } else {
          HostEvent e;
          std::memcpy(&e, slot, sizeof e);
          fn(e);
          i += kWideSlots;
        }
        ++n;
        ++drained_;
      }
      consumed_ = i;
      if (i < kSlotsPerBlock) break;
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
  /// kcount's own callbacks on the producer thread (collector/self_cost.h): written by the producer only,
  /// summed by the session when it closes the log or frees the buffer.
  CallbackTally callbacks;

 private:
  /// `slots` free slots in the tail block (a new block when the tail has too few; its unused rest is
  /// marked kTagPad), remembered for commit(); nullptr (and a drop counted) at the pool's cap.
  void* reserveSlots(uint32_t slots) noexcept {
    HostEventBlock* t = tail_;
    uint32_t n = t != nullptr ? t->count.load(std::memory_order_relaxed) : kSlotsPerBlock;
    if (n + slots > kSlotsPerBlock) [[unlikely]] {
      t = grow();
      if (t == nullptr) return nullptr;
      n = 0;
    }
    pending_slots_ = slots;
    return t->slots[n];
  }

  HostEventBlock* grow() noexcept;

  BlockPool* pool_;
  uint32_t thread_id_;
  HostEventBlock* tail_ = nullptr;               // producer only
  uint32_t pending_slots_ = 0;                   // producer only: slots of the event reserved last
  std::atomic<HostEventBlock*> head_{nullptr};   // set once by the producer, then consumer only
  uint32_t consumed_ = 0;                        // consumer only: events read in the head block
  uint64_t drained_ = 0;                         // consumer only: events read in all
  std::atomic<uint64_t> published_{0};           // events appended; written by the producer only
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace kc
