#include "collector/aggregator.h"

#include <algorithm>
#include <bit>

#include "collector/launch_join.h"
#include "collector/log_writer.h"
#include "collector/saturating.h"

namespace kc {
namespace {

constexpr uint8_t kWaitingKernel = 0;

/// A launch that has its kernel and runs no more (not a graph launch).
bool joinedDirect(uint8_t flags) { return (flags & (kHeldMatched | kHeldGraph)) == kHeldMatched; }

}  // namespace

/// The tally rows as JoinRules credits them: a range's row, or none at the key cap (the record counts in
/// dropped_tallies, by what it is); (range, kernel name) and unmatched kernel-name rows under the same cap.
struct Aggregator::Rows {
  Aggregator& a;
  template <typename Add>
  bool credit(Credit what, uint32_t scope_id, Add&& add) {
    if (SnapshotScopeBody* r = a.scopeRow(scope_id)) {
      add(*r);
      return true;
    }
    SnapshotBeginBody& t = a.t_;
    ++t.dropped_tallies;
    ++(what == Credit::kLaunch  ? t.dropped_launches
       : what == Credit::kRange ? t.dropped_range_instances
       : what == Credit::kKernel ? t.dropped_kernels
                                 : t.dropped_mem_ops);
    return false;
  }
  template <typename Map>
  void tally(Map& rows, typename Map::key_type key, const SnapshotKernelBody& fresh, uint64_t ns) {
    auto it = rows.find(key);
    if (it == rows.end()) {
      if (a.keys() >= a.limits_.max_keys) {
        ++a.t_.dropped_tallies;
        ++a.t_.unnamed_kernels;
        return;
      }
      it = rows.emplace(key, fresh).first;
    }
    addKernelNs(it->second, ns);
  }
  void kernelByName(uint32_t scope_id, uint32_t name_id, uint64_t ns) {
    tally(a.kernels_, (static_cast<uint64_t>(scope_id) << 32) | name_id, SnapshotKernelBody{scope_id, name_id}, ns);
  }
  void unmatchedKernel(uint32_t name_id, uint64_t ns) {
    tally(a.unmatched_, name_id, SnapshotKernelBody{0, name_id, kSnapshotKernelUnmatched}, ns);
  }
};

auto Aggregator::rules() { return JoinRules<Rows, SnapshotBeginBody>{{*this}, t_}; }

Aggregator::InFlight* Aggregator::HashTable::find(uint64_t key) {
  if (size_ == 0) return nullptr;
  const size_t mask = slots_.size() - 1;
  for (size_t i = home(key);; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (!s.value.occupied) return nullptr;
    if (s.key == key) return &s.value;
  }
}

void Aggregator::HashTable::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  const size_t n = old.empty() ? 1024 : old.size() * 2;
  slots_.assign(n, Slot{});
  shift_ = 64 - std::countr_zero(n);
  size_ = 0;
  for (const Slot& s : old)
    if (s.value.occupied) insert(s.key, s.value);
}

Aggregator::InFlight* Aggregator::HashTable::insert(uint64_t key, const InFlight& value) {
  if ((size_ + 1) * 2 > slots_.size()) grow();  // load factor at most 1/2
  const size_t mask = slots_.size() - 1;
  size_t i = home(key);
  while (slots_[i].value.occupied) i = (i + 1) & mask;
  slots_[i] = Slot{key, value};
  slots_[i].value.occupied = 1;
  ++size_;
  return &slots_[i].value;
}

void Aggregator::HashTable::erase(uint64_t key) {
  if (size_ == 0) return;
  const size_t mask = slots_.size() - 1;
  size_t i = home(key);
  while (true) {
    if (!slots_[i].value.occupied) return;
    if (slots_[i].key == key) break;
    i = (i + 1) & mask;
  }
  // Backward shift: move later entries of the probe run into the hole so lookups need no tombstones.
  size_t hole = i;
  for (size_t j = (i + 1) & mask; slots_[j].value.occupied; j = (j + 1) & mask) {
    const size_t h = home(slots_[j].key);
    // Entry j may move to the hole if its home is not cyclically within (hole, j].
    const bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (!stays) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole].value.occupied = 0;
  --size_;
}

void Aggregator::HashTable::clear() {
  for (Slot& s : slots_) s.value.occupied = 0;
  size_ = 0;
}

Aggregator::InFlight* Aggregator::Window::find(uint64_t key) {
  if (!ring_.empty()) {
    Slot& s = slotOf(key);
    if (s.value.occupied && s.key == key) return &s.value;
  }
  return overflow_.size() != 0 ? overflow_.find(key) : nullptr;
}

bool Aggregator::Window::place(uint64_t key, const InFlight& value) {
  Slot& s = slotOf(key);
  const bool moved = s.value.occupied != 0;
  if (moved) {
    overflow_.insert(s.key, s.value);  // an older id: it waits in the overflow table
    --ring_size_;
  }
  s = Slot{key, value};
  s.value.occupied = 1;
  ++ring_size_;
  return moved;
}

Aggregator::InFlight* Aggregator::Window::insert(uint64_t key, const InFlight& value) {
  if (ring_.empty()) ring_.assign(kMinRing, Slot{});
  if (++inserts_ >= ring_.size() && moved_out_ * 8 > inserts_ && ring_.size() < kMaxRing) growRing();
  if (place(key, value)) ++moved_out_;
  return &slotOf(key).value;
}

void Aggregator::Window::erase(uint64_t key) {
  if (!ring_.empty()) {
    Slot& s = slotOf(key);
    if (s.value.occupied && s.key == key) {
      s.value.occupied = 0;
      --ring_size_;
      return;
    }
  }
  overflow_.erase(key);
}

void Aggregator::Window::growRing() {
  std::vector<Slot> old;
  old.swap(ring_);
  ring_.assign(old.size() * 2, Slot{});
  ring_size_ = 0;
  std::vector<std::pair<uint64_t, InFlight>> waiting;
  waiting.reserve(overflow_.size());
  overflow_.forEach([&](uint64_t k, const InFlight& v) { waiting.emplace_back(k, v); });
  overflow_.clear();
  inserts_ = moved_out_ = 0;
  // Newest ids last, so that where two collide the older one goes to the overflow table.
  for (const Slot& s : old)
    if (s.value.occupied) waiting.emplace_back(s.key, s.value);
  std::sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [k, v] : waiting) place(k, v);
}

void Aggregator::Window::clear() {
  for (Slot& s : ring_) s.value.occupied = 0;
  ring_size_ = 0;
  overflow_.clear();
}

SnapshotScopeBody* Aggregator::scopeRow(uint32_t scope_id) {
  if (scope_id < scope_index_.size() && scope_index_[scope_id] != nullptr) return scope_index_[scope_id];
  if (keys() >= limits_.max_keys) {
    // Scope ids are below 1 Mi (the library's range tree), so this is at most 1 MiB.
    if (scope_id < (1u << 20)) {
      if (dropped_scope_.size() <= scope_id) dropped_scope_.resize(scope_id + 1, 0);
      if (dropped_scope_[scope_id] == 0) {
        dropped_scope_[scope_id] = 1;
        ++t_.dropped_ranges;
      }
    }
    return nullptr;
  }
  SnapshotScopeBody row{};
  row.scope_id = scope_id;
  SnapshotScopeBody* r = &scopes_.emplace(scope_id, row).first->second;
  // Scope ids are dense (the library hands them out 1, 2, 3, ...; at most 1 Mi): a direct index.
  if (scope_id < (1u << 20)) {
    if (scope_index_.size() <= scope_id) scope_index_.resize(scope_id + 1, nullptr);
    scope_index_[scope_id] = r;
  }
  return r;
}

bool Aggregator::settled(uint64_t since_ns, uint64_t since_flush, uint64_t now_ns, uint64_t flushes,
                         bool need_time) const {
  if (flushes < since_flush + limits_.settle_flushes) return false;
  return !need_time || now_ns >= since_ns + limits_.settle_ns;
}

// A launch leaves the window: if nothing joined it (and it was meant to run something), it is a launch
// without kernel, exactly as summarize() counts launches no kernel record matched.
void Aggregator::retire(uint64_t correlation_id, const InFlight& e) {
  rules().left(e.flags);
  inflight_.erase(correlation_id);  // invalidates e
  dirty_ = true;
}

void Aggregator::addLaunch(const LaunchBody& l, uint64_t now_ns) {
  now_ns_ = std::max(now_ns_, now_ns);
  dirty_ = true;
  const uint8_t flags = rules().launch(l, [&] {
    return (l.flags & kLaunchUntimed) ? 0 : satMul(span(l.enter_ns, l.exit_ns), limits_.launch_timing_sample);
  });
  if (inflight_.find(l.correlation_id) != nullptr) {
    rules().repeated(flags, 0, l.correlation_id);  // the first launch keeps the joins (as in summarize())
    return;
  }
  // Full window (or an order queue grown long behind a launch still waiting): push out the oldest.
  while ((inflight_.size() >= limits_.max_inflight || order_.size() >= 2 * limits_.max_inflight) &&
         !order_.empty()) {
    const uint64_t corr = order_.front();
    order_.pop_front();
    InFlight* e = inflight_.find(corr);
    if (e == nullptr) continue;
    ++t_.evicted_launches;
    retire(corr, *e);
  }
  if (limits_.max_inflight == 0) {
    rules().left(flags);
    ++t_.evicted_launches;
    return;
  }
  inflight_.insert(l.correlation_id, InFlight{l.scope_id, flags, 0, now_ns_, flushes_});
  order_.push_back(l.correlation_id);
}

void Aggregator::addRange(const RangeBody& range) {
  dirty_ = true;
  rules().range(range, [&] { return span(range.begin_ns, range.end_ns); });
}

void Aggregator::apply(InFlight& e, const Waiting& w) {
  if (!(e.flags & (kHeldMatched | kHeldGraph))) {
    // A hint for early retirement; bounded like the window (a dropped hint leaves the entry to order_).
    if (joined_.size() >= limits_.max_inflight && !joined_.empty()) joined_.pop_front();
    joined_.emplace_back(w.correlation_id, flushes_);
  }
  e.since_ns = now_ns_;
  e.since_flush = flushes_;
  if (w.kind == kWaitingKernel)
    rules().kernel(e.flags, nullptr, w.correlation_id, e.scope_id, w.name_id, w.ns);
  else
    rules().memOp(e.flags, e.scope_id, w.kind, w.bytes, w.ns);
}

void Aggregator::unmatched(const Waiting& w) {
  dirty_ = true;
  if (w.kind == kWaitingKernel)
    rules().unmatchedKernel(w.name_id, w.ns);
  else
    rules().unmatchedMemOp();
}

void Aggregator::addKernel(const KernelBody& k, uint64_t now_ns) {
  now_ns_ = std::max(now_ns_, now_ns);
  dirty_ = true;
  ++t_.kernels;
  const Waiting w{k.correlation_id, span(k.start_ns, k.end_ns), 0, now_ns_, flushes_, k.name_id, kWaitingKernel};
  if (InFlight* e = inflight_.find(k.correlation_id))
    apply(*e, w);
  else if (waiting_.size() < limits_.max_waiting)
    waiting_.push_back(w);
  else
    unmatched(w);
}

void Aggregator::addMemOp(const MemOpBody& m, uint64_t now_ns) {
  now_ns_ = std::max(now_ns_, now_ns);
  dirty_ = true;
  if (isMemoryOperation(m)) ++t_.mem_ops;
  const uint8_t kind = m.kind == static_cast<uint8_t>(MemOpKind::kMemset) || m.kind == static_cast<uint8_t>(MemOpKind::kGraph)
                           ? m.kind
                           : static_cast<uint8_t>(MemOpKind::kMemcpy);
  const Waiting w{m.correlation_id, span(m.start_ns, m.end_ns), m.bytes, now_ns_, flushes_, 0, kind};
  if (InFlight* e = inflight_.find(m.correlation_id))
    apply(*e, w);
  else if (waiting_.size() < limits_.max_waiting)
    waiting_.push_back(w);
  else
    unmatched(w);
}

void Aggregator::settle(uint64_t now_ns, uint64_t flushes) {
  now_ns_ = std::max(now_ns_, now_ns);
  flushes_ = std::max(flushes_, flushes);
  // Activity records that came before their launch: join them now, or give up once settled.
  size_t keep = 0;
  for (size_t i = 0; i < waiting_.size(); ++i) {
    const Waiting& w = waiting_[i];
    if (InFlight* e = inflight_.find(w.correlation_id)) {
      dirty_ = true;
      apply(*e, w);
    } else if (settled(w.since_ns, w.since_flush, now_ns_, flushes_, true)) {
      unmatched(w);
    } else {
      waiting_[keep++] = w;
    }
  }
  waiting_.resize(keep);
  // Joined non-graph launches: one kernel each, retired once the flushes have passed, or at once when
  // more than max_joined of them are kept.
  while (!joined_.empty()) {
    const bool over = joined_.size() > limits_.max_joined;
    if (!over && flushes_ < joined_.front().second + limits_.settle_flushes) break;
    const uint64_t corr = joined_.front().first;
    joined_.pop_front();
    InFlight* e = inflight_.find(corr);
    if (e != nullptr && joinedDirect(e->flags) &&
        (over || settled(e->since_ns, e->since_flush, now_ns_, flushes_, false)))
      retire(corr, *e);
  }
  // Everything else leaves in arrival order once settled (graph launches keep their kernels coming;
  // a launch without kernel yet may still be queued on the GPU).
  while (!order_.empty()) {
    const uint64_t corr = order_.front();
    if (InFlight* e = inflight_.find(corr)) {
      if (!settled(e->since_ns, e->since_flush, now_ns_, flushes_, !joinedDirect(e->flags))) break;
      retire(corr, *e);
    }
    order_.pop_front();
  }
}

void Aggregator::finish() {
  if (!waiting_.empty() || inflight_.size() != 0) dirty_ = true;
  for (const Waiting& w : waiting_) {
    if (InFlight* e = inflight_.find(w.correlation_id))
      apply(*e, w);
    else
      unmatched(w);
  }
  waiting_.clear();
  inflight_.forEach([this](uint64_t, const InFlight& e) { rules().left(e.flags); });
  inflight_.clear();
  order_.clear();
  joined_.clear();
}

SnapshotBeginBody Aggregator::totals() const {
  SnapshotBeginBody b = t_;
  b.inflight_launches = inflight_.size();
  b.waiting_activity = waiting_.size();
  return b;
}

std::vector<uint32_t> Aggregator::droppedAncestors() const {
  std::vector<uint32_t> out;
  if (t_.dropped_ranges == 0 || !parent_of_) return out;
  std::vector<uint8_t> seen(dropped_scope_.size(), 0);
  for (const auto& [id, row] : scopes_) {
    // Parents have lower ids than their children, so the walk ends (at the root at the latest).
    for (uint32_t child = id, p = id == kRootScope ? kRootScope : parent_of_(id); p != kRootScope && p < child;
         child = p, p = parent_of_(p)) {
      if (p >= dropped_scope_.size() || dropped_scope_[p] == 0) continue;
      if (seen[p]) break;  // its ancestors were walked already
      seen[p] = 1;
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t Aggregator::snapshotRecordBytes() const {
  const uint64_t kernel_rows = kernels_.size() + unmatched_.size();
  return 2 * sizeof(RecordHeader) + sizeof(SnapshotBeginBody) + sizeof(SnapshotEndBody) +
         (scopes_.size() + droppedAncestors().size()) * (sizeof(RecordHeader) + sizeof(SnapshotScopeBody)) +
         kernel_rows * (sizeof(RecordHeader) + sizeof(SnapshotKernelBody));
}

std::string droppedTalliesText(const SnapshotBeginBody& b) {
  if (b.dropped_tallies == 0) return {};
  auto n = [](uint64_t v) { return std::to_string(v); };
  if (b.max_keys == 0)  // an earlier writer: the count only
    return "tallies dropped at KCOUNT_MAX_KEYS: " + n(b.dropped_tallies) +
           " events not tallied or not by kernel name (this log does not say which)";
  std::string s = "tallies dropped at KCOUNT_MAX_KEYS=" + n(b.max_keys) + ": ";
  std::vector<std::string> parts;
  if (b.dropped_ranges > 0)
    parts.push_back(n(b.dropped_ranges) + (b.dropped_ranges == 1 ? " range" : " ranges") + " got no row (their " +
                    n(b.dropped_range_instances) + " range instances, " + n(b.dropped_launches) + " launches, " +
                    n(b.dropped_kernels) + " kernels and " + n(b.dropped_mem_ops) +
                    " memory operations count in the totals, in no range's row)");
  if (b.unnamed_kernels > 0)
    parts.push_back(n(b.unnamed_kernels) + " kernels counted in their range or as unmatched but not by kernel name");
  for (size_t i = 0; i < parts.size(); ++i) s += (i > 0 ? "; " : "") + parts[i];
  return s;
}

std::string untalliedEventsText(uint64_t dropped_tallies, uint64_t max_keys) {
  return std::to_string(dropped_tallies) + (dropped_tallies == 1 ? " event" : " events") +
         " not tallied in their row at KCOUNT_MAX_KEYS" + (max_keys > 0 ? "=" + std::to_string(max_keys) : "") +
         " (still in the totals)";
}

std::string snapshotsSkippedText(uint64_t skipped) {
  if (skipped == 0) return {};
  return std::to_string(skipped) + (skipped == 1 ? " periodic snapshot" : " periodic snapshots") +
         " not written at KCOUNT_MAX_BYTES, to keep room for the final one";
}

bool Aggregator::writeSnapshot(LogWriter& writer, uint64_t now_ns, bool final_snapshot) {
  // Ranges the tree shows (ancestors of ranges with a row) that got no row: a marked row of zeros each.
  std::vector<SnapshotScopeBody> dropped_rows;
  for (uint32_t id : droppedAncestors()) {
    SnapshotScopeBody r{};
    r.scope_id = id;
    r.flags = kSnapshotScopeTallyDropped;
    dropped_rows.push_back(r);
  }
  std::vector<const SnapshotScopeBody*> scope_rows;
  scope_rows.reserve(scopes_.size() + dropped_rows.size());
  for (const auto& [id, r] : scopes_) scope_rows.push_back(&r);
  for (const SnapshotScopeBody& r : dropped_rows) scope_rows.push_back(&r);
  std::sort(scope_rows.begin(), scope_rows.end(),
            [](const SnapshotScopeBody* a, const SnapshotScopeBody* b) { return a->scope_id < b->scope_id; });
  std::vector<const SnapshotKernelBody*> kernel_rows;
  kernel_rows.reserve(kernels_.size() + unmatched_.size());
  for (const auto& [key, r] : kernels_) kernel_rows.push_back(&r);
  for (const auto& [key, r] : unmatched_) kernel_rows.push_back(&r);
  std::sort(kernel_rows.begin(), kernel_rows.end(), [](const SnapshotKernelBody* a, const SnapshotKernelBody* b) {
    if (a->flags != b->flags) return a->flags < b->flags;
    return a->scope_id != b->scope_id ? a->scope_id < b->scope_id : a->name_id < b->name_id;
  });

  SnapshotBeginBody b = totals();
  b.time_ns = now_ns;
  b.sequence = sequence_;
  b.flags = final_snapshot ? static_cast<uint32_t>(kSnapshotFinal) : 0u;
  b.scope_rows = static_cast<uint32_t>(scope_rows.size());
  b.kernel_rows = static_cast<uint32_t>(kernel_rows.size());
  const auto emit = [&](LogWriter& w) {
    w.writeSnapshotBegin(b);
    for (const SnapshotScopeBody* r : scope_rows) {
      w.writeSnapshotScope(*r);
      if (w.chunkFull()) w.flush();
    }
    for (const SnapshotKernelBody* r : kernel_rows) {
      w.writeSnapshotKernel(*r);
      if (w.chunkFull()) w.flush();
    }
    w.writeSnapshotEnd(SnapshotEndBody{sequence_, b.scope_rows + b.kernel_rows});
  };
  // The definitions the rows need that the file lacks go out with the snapshot, before its rows
  // (LogWriter::setDefinitions): they count in its size.
  std::vector<uint32_t> scope_ids, name_ids;
  if (writer.definitionsOnDemand()) {
    scope_ids.reserve(scope_rows.size() + kernel_rows.size());
    name_ids.reserve(kernel_rows.size());
    for (const SnapshotScopeBody* r : scope_rows) scope_ids.push_back(r->scope_id);
    for (const SnapshotKernelBody* r : kernel_rows) {
      if (!(r->flags & kSnapshotKernelUnmatched)) scope_ids.push_back(r->scope_id);
      name_ids.push_back(r->name_id);
    }
  }
  if (!writer.prepareGroup(snapshotRecordBytes(), /*keep_room_for_another=*/!final_snapshot, emit,
                           writer.missingDefinitionBytes(scope_ids, name_ids))) {
    ++skipped_snapshots_;
    return false;
  }
  emit(writer);
  writer.endGroup();
  last_snapshot_records_ = 2 + uint64_t(b.scope_rows) + b.kernel_rows;
  ++sequence_;
  dirty_ = false;
  return true;
}

}  // namespace kc
