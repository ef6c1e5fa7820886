// In-process join and aggregation for summary mode (KCOUNT_MODE=summary): the same records the trace
// writer would write (launches, ranges, kernel and memory-operation activity records) are joined by
// correlation id and tallied per (range, kernel name) instead of written one by one; every interval the
// writer appends a snapshot of the tallies (collector/log_format.h, SnapshotBegin..SnapshotEnd). GPU-free.
//
// Join rules are those of summarize() on a trace log of the same run, applied by the same code
// (JoinRules, collector/launch_join.h): a launch is counted once per correlation id in the range innermost
// at API enter; a kernel is credited to its launch's range; memcpy/memset calls are not launches; captured
// launches run nothing. What differs is only when a join is decided: a launch waits in a bounded correlation window for its kernels, a kernel
// that arrives before its launch waits in a bounded list, and both give up only after they have settled
// (Limits below), or at finish().
//
// Threads: not thread-safe. The session's writer thread owns it, under the writer lock.
// Memory: capped by Limits; what does not fit is counted (dropped_tallies, evicted_launches), never lost
// silently. Every method may throw std::bad_alloc below its caps; callers in the library catch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/log_format.h"

namespace kc {

class LogWriter;

/// What a snapshot's dropped_tallies hold, said plainly for the library's closing warning and the
/// readers; "" when nothing was dropped. "tallies dropped at KCOUNT_MAX_KEYS=65536: 3 ranges got no row
/// (their 40 range instances, 120 launches, 118 kernels and 0 memory operations count in the totals, in
/// no range's row); 12 kernels counted in their range or as unmatched but not by kernel name". A snapshot
/// of an earlier writer (max_keys 0) gives the event count only.
std::string droppedTalliesText(const SnapshotBeginBody& b);
/// What a count of dropped_tallies is, said as one phrase for the summary line, the LOSSY state line,
/// `kcount check` and the library's closing line: "204 events not tallied in their row at
/// KCOUNT_MAX_KEYS=1 (still in the totals)" (`max_keys` 0, an earlier writer: "at KCOUNT_MAX_KEYS").
/// The events are range instances, launches, kernels and memory operations of ranges that got no row, and
/// kernels counted in their range but not by name; every one counts in the totals.
std::string untalliedEventsText(uint64_t dropped_tallies, uint64_t max_keys);
/// How many periodic snapshots were not written under KCOUNT_MAX_BYTES to keep room for the final one
/// (Aggregator::skippedSnapshots(), metadata kMetaSnapshotsSkipped), said as one phrase for the library's
/// closing line and the summary-mode line: "7 periodic snapshots not written at KCOUNT_MAX_BYTES, to keep
/// room for the final one" ("1 periodic snapshot ..."). "" for 0. Thread-safe.
std::string snapshotsSkippedText(uint64_t skipped);

class Aggregator {
 public:
  struct Limits {
    /// Most tally rows kept: range rows + (range, kernel name) rows + unmatched kernel-name rows. An event
    /// whose range row does not fit is not tallied; a kernel whose (range, name) row does not fit is
    /// counted in its range but not by name. Both count in dropped_tallies.
    size_t max_keys = 65536;
    /// Most launches in the correlation window; the oldest is pushed out (evicted_launches) when full.
    size_t max_inflight = 1u << 20;
    /// Most kernels and memory operations waiting for their launch; more are counted as unmatched at once.
    size_t max_waiting = 1u << 19;
    /// A launch leaves the window, and a waiting kernel gives up, only after this many forced CUPTI
    /// flushes (settle() argument) since it entered (or, for a launch, since its last kernel) ...
    uint64_t settle_flushes = 2;
    /// ... and this much host time (ns). A non-graph launch that has its kernel needs only the flushes.
    uint64_t settle_ns = 10'000'000'000ull;
    /// Most non-graph launches kept after their kernel joined (for a second record with the same
    /// correlation id): past this many, the oldest joined ones leave at the next settle() without waiting
    /// for the flushes. Keeps the window, and its cache misses, small in a launch-bound loop, where 2
    /// flushes (about 2 s) hold ~500 k launches. The trace reader joins a second record within 64 Ki
    /// launches as well (stream_summary.h).
    size_t max_joined = 1u << 16;
    /// KCOUNT_LAUNCH_TIMING: one launch call in this many was timed (inject/callbacks.h,
    /// setLaunchTiming); each timed call's (exit - enter) counts this many times in launch_api_ns, calls
    /// flagged kLaunchUntimed add nothing. 1: every call timed, counted once.
    uint64_t launch_timing_sample = 1;
  };

  Aggregator() : Aggregator(Limits{}) {}
  explicit Aggregator(const Limits& limits) : limits_(limits) { t_.max_keys = limits.max_keys; }

  /// Parent scope id of a scope id (kRootScope for a top-level range), from the library's range tree.
  /// With it, each snapshot marks the ranges that got no tally row at the key cap and that are ancestors
  /// of ranges with a row (SnapshotScope rows flagged kSnapshotScopeTallyDropped), so that readers tell
  /// them from ranges that were open when recording began or stopped. Without it none is marked. Called
  /// on the writer thread, under the caller's lock; must return an id below `scope_id`.
  void setScopeParents(std::function<uint32_t(uint32_t)> parent_of) { parent_of_ = std::move(parent_of); }

  /// A launch record (LaunchBody as the trace writer gets it, memcpy/memset calls included). `now_ns`:
  /// host clock when the writer took it.
  void addLaunch(const LaunchBody& launch, uint64_t now_ns);
  /// A closed (or unclosed at exit) range instance.
  void addRange(const RangeBody& range);
  /// Kernel and memory-operation activity records. Joined at once if the launch is in the window,
  /// otherwise kept waiting until a later launch or until they settle.
  void addKernel(const KernelBody& kernel, uint64_t now_ns);
  void addMemOp(const MemOpBody& op, uint64_t now_ns);
  /// After each batch (one drain): joins waiting activity records to launches added since, then retires
  /// launches and waiting records that have settled. `flushes`: forced CUPTI flushes completed so far
  /// (monotonic). O(waiting records + retired entries).
  void settle(uint64_t now_ns, uint64_t flushes);
  /// End of the run, after the last forced flush and drain: every launch in the window and every waiting
  /// record is resolved (launches without kernel, unmatched kernels). Later records are still accepted.
  void finish();

  /// Appends a snapshot (SnapshotBegin, rows sorted by scope then name, SnapshotEnd) to `writer`,
  /// flushing the writer's chunk whenever it is full. `final_snapshot` sets kSnapshotFinal. Under a size
  /// cap (KCOUNT_MAX_BYTES) a periodic snapshot (not final) is written only if the log keeps room for one
  /// more as large (LogWriter::prepareGroup: near the cap this snapshot counts at the bytes it writes,
  /// compressed, the one after it at its bound before compression), so that the final snapshot, which has
  /// at least its rows, still fits: otherwise nothing is written, it counts in skippedSnapshots(), the tallies stay marked
  /// changed and false is returned. The final snapshot is always written (true).
  bool writeSnapshot(LogWriter& writer, uint64_t now_ns, bool final_snapshot);
  /// Periodic snapshots not written to keep room for the final one under the size cap (writeSnapshot()).
  uint64_t skippedSnapshots() const { return skipped_snapshots_; }
  /// Records of the last snapshot writeSnapshot() wrote: SnapshotBegin, its rows and SnapshotEnd (0 before
  /// the first).
  uint64_t lastSnapshotRecords() const { return last_snapshot_records_; }
  /// Encoded bytes of the snapshot writeSnapshot() would write now, record headers included.
  uint64_t snapshotRecordBytes() const;
  /// True if any tally changed since the last writeSnapshot() (or ever, before the first).
  bool changedSinceSnapshot() const { return dirty_; }

  /// Whole-run totals as they would be written now (row counts filled by writeSnapshot()).
  SnapshotBeginBody totals() const;
  size_t keys() const { return scopes_.size() + kernels_.size() + unmatched_.size(); }
  size_t inflight() const { return inflight_.size(); }
  size_t waiting() const { return waiting_.size(); }

 private:
  struct InFlight {
    uint32_t scope_id;
    uint8_t flags;      // HeldFlags (collector/launch_join.h)
    uint8_t occupied;   // Window's own: the slot holds an entry
    uint64_t since_ns;  // entered, or last joined
    uint64_t since_flush;
  };
  /// Open addressing with linear probing and backward-shift deletion, keyed by correlation id (Fibonacci
  /// hashing; no allocation per launch; grows by doubling, shrinks never). The window's overflow table.
  class HashTable {
   public:
    InFlight* find(uint64_t key);
    /// Inserts (key must be absent); returns the slot's value.
    InFlight* insert(uint64_t key, const InFlight& value);
    void erase(uint64_t key);
    size_t size() const { return size_; }
    void clear();
    template <typename Fn>
    void forEach(Fn&& fn) const {
      for (const Slot& s : slots_)
        if (s.value.occupied) fn(s.key, s.value);
    }

   private:
    struct Slot {  // 32 bytes
      uint64_t key = 0;
      InFlight value{};
    };
    size_t home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
    void grow();
    std::vector<Slot> slots_;
    size_t size_ = 0;
    int shift_ = 64;
  };
  /// The correlation window. Correlation ids grow with every API call, so the launches in flight are
  /// mostly a recent stretch of ids: a ring indexed by `id mod ring size` holds them, and an access walks
  /// memory in order (a hash that scatters ids costs a cache miss per access once the window outgrows the
  /// cache: ~100 ns each, four per launch). An entry whose ring slot a newer id takes moves to `overflow_`
  /// (launches that wait long: graph launches, launches whose kernel is late). The ring doubles (up to
  /// 1 Mi slots, 32 MiB) when more than 1 in 8 inserts move an entry out. Pointers returned by find() and
  /// insert() are valid until the next insert() or erase().
  class Window {
   public:
    InFlight* find(uint64_t key);
    /// Inserts (key must be absent); returns the slot's value.
    InFlight* insert(uint64_t key, const InFlight& value);
    void erase(uint64_t key);
    size_t size() const { return ring_size_ + overflow_.size(); }
    void clear();
    template <typename Fn>
    void forEach(Fn&& fn) const {
      for (const Slot& s : ring_)
        if (s.value.occupied) fn(s.key, s.value);
      overflow_.forEach(fn);
    }

   private:
    static constexpr size_t kMinRing = 1u << 12;
    static constexpr size_t kMaxRing = 1u << 20;
    struct Slot {  // 32 bytes
      uint64_t key = 0;
      InFlight value{};
    };
    Slot& slotOf(uint64_t key) { return ring_[key & (ring_.size() - 1)]; }
    /// Puts (key, value) in its ring slot; an older occupant moves to the overflow table (returns true).
    bool place(uint64_t key, const InFlight& value);
    void growRing();
    std::vector<Slot> ring_;
    size_t ring_size_ = 0;  // occupied ring slots
    HashTable overflow_;
    uint64_t inserts_ = 0;  // since the ring last grew
    uint64_t moved_out_ = 0;
  };
  struct Waiting {
    uint64_t correlation_id;
    uint64_t ns;     // end - start
    uint64_t bytes;  // memory operations
    uint64_t since_ns;
    uint64_t since_flush;
    uint32_t name_id;
    uint8_t kind;  // 0 kernel, else MemOpKind
  };

  /// JoinRules' view of the tally rows (aggregator.cpp); rules() applies the join's rules to them.
  struct Rows;
  auto rules();
  /// The range's row; nullptr when it has none and the key cap leaves no room for one (the range is
  /// then marked in dropped_scope_ and counted once in dropped_ranges).
  SnapshotScopeBody* scopeRow(uint32_t scope_id);
  /// Ranges without a row that are ancestors of ranges with one (setScopeParents()), sorted by id.
  std::vector<uint32_t> droppedAncestors() const;
  void apply(InFlight& launch, const Waiting& w);
  void unmatched(const Waiting& w);
  void retire(uint64_t correlation_id, const InFlight& e);
  bool settled(uint64_t since_ns, uint64_t since_flush, uint64_t now_ns, uint64_t flushes, bool need_time) const;

  Limits limits_;
  uint64_t now_ns_ = 0;   // last time seen (addLaunch/settle)
  uint64_t flushes_ = 0;  // last flush count seen (settle)
  std::unordered_map<uint32_t, SnapshotScopeBody> scopes_;
  std::unordered_map<uint64_t, SnapshotKernelBody> kernels_;  // (scope << 32 | name) -> row
  std::unordered_map<uint32_t, SnapshotKernelBody> unmatched_;  // name -> row
  Window inflight_;
  std::vector<SnapshotScopeBody*> scope_index_;  // scope id -> row in scopes_ (node pointers are stable)
  std::deque<uint64_t> order_;          // correlation ids in the order they entered the window
  std::deque<std::pair<uint64_t, uint64_t>> joined_;  // (correlation id, flush count) of joined non-graph launches
  std::vector<Waiting> waiting_;
  SnapshotBeginBody t_{};  // running totals
  uint32_t sequence_ = 0;
  uint64_t skipped_snapshots_ = 0;
  uint64_t last_snapshot_records_ = 0;
  std::vector<uint8_t> dropped_scope_;  // scope id -> 1: the range got no row at the key cap
  std::function<uint32_t(uint32_t)> parent_of_;
  bool dirty_ = false;
};

}  // namespace kc
