#include "collector/stream_summary.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "collector/saturating.h"

namespace kc {
namespace {

/// Open-addressing hash map from a 64-bit key to a small value: linear probing, power-of-two capacity,
/// deletion by backward shift (no tombstones). The join's tables; std::unordered_map costs a node
/// allocation and a cache miss per record.
template <typename V>
class FlatMap {
 public:
  FlatMap() { rehash(64); }
  size_t size() const { return size_; }

  V* find(uint64_t key) {
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) return nullptr;
      if (s.key == key) return &s.value;
    }
  }
  /// Inserts key with a default value if absent; returns the value and whether it was inserted.
  std::pair<V*, bool> insert(uint64_t key) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (!s.used) {
        s.used = true;
        s.key = key;
        s.value = V{};
        ++size_;
        return {&s.value, true};
      }
      if (s.key == key) return {&s.value, false};
    }
  }
  void erase(uint64_t key) {
    size_t i = slot(key);
    for (;; i = (i + 1) & mask_) {
      if (!slots_[i].used) return;
      if (slots_[i].key == key) break;
    }
    // Backward shift: move later entries of the probe run into the hole when their home allows it.
    size_t hole = i;
    for (size_t j = (i + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
      const size_t home = slot(slots_[j].key);
      if (((j - home) & mask_) >= ((j - hole) & mask_)) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].used = false;
    --size_;
  }
  template <typename F>
  void forEach(F&& f) {
    for (Slot& s : slots_)
      if (s.used) f(s.key, s.value);
  }
  /// Keeps the entries for which keep(key, value) is true; rebuilds the table at a size that fits them.
  template <typename F>
  void retain(F&& keep) {
    std::vector<Slot> old;
    old.swap(slots_);
    size_t cap = 64;
    size_t kept = 0;
    for (Slot& s : old)
      if (s.used && keep(s.key, s.value)) ++kept;
      else s.used = false;
    while (cap < kept * 4) cap *= 2;
    size_ = 0;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    for (Slot& s : old)
      if (s.used) *insert(s.key).first = s.value;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    V value{};
    bool used = false;
  };
  size_t slot(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_) & mask_; }
  void rehash(size_t cap) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(cap));
    size_ = 0;
    for (Slot& s : old)
      if (s.used) *insert(s.key).first = s.value;
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 58;
  size_t size_ = 0;
};

struct Pending {
  uint32_t scope = 0;
  uint8_t flags = 0;  // HeldFlags
  uint64_t seq = 0;  // launch record number, for the window
};

/// Per-scope numbers while streaming (RangeStats without the per-kernel map).
struct ScopeAcc {
  uint64_t instances = 0, cpu_ns = 0, launches = 0, graph_launches = 0, launch_api_ns = 0, kernels = 0,
           gpu_ns = 0, captured_launches = 0, memcpy_count = 0, memcpy_bytes = 0, memcpy_ns = 0,
           memset_count = 0, memset_bytes = 0, memset_ns = 0, graph_gpu_launches = 0, graph_gpu_ns = 0;
  uint64_t unclosed = 0;  // of instances: still open when the log closed (kRangeUnclosed)
};

/// A kernel or memory operation that arrived before its launch.
struct Waiting {
  bool is_kernel = true;
  uint32_t name_id = 0;       // kernel
  uint64_t graph_node_id = 0; // kernel
  uint64_t ns = 0;
  MemOpBody op{};             // memory operation
};

constexpr size_t kMaxRing = 1u << 16;  // direct-mapped launches by correlation id (see State)
constexpr uint32_t kDenseScopes = 1u << 12;  // scope ids below this are kept in a vector, others in a map
constexpr size_t kFirstRing = 256;            // the ring starts this small and doubles as needed

}  // namespace

// Launches live in a ring indexed by the low bits of their correlation id (ids grow by about one per
// launch, so the ring holds the last R launches): a kernel finds its launch with one compare. A launch
// pushed out of the ring by a newer id moves to `pending` (a hash map) if nothing joined it yet. A
// matched launch stays in the ring until pushed out, so further records for it (the other kernels of a
// graph launch) still join within the last R launches. `pending` is capped by the window: its oldest
// entries are dropped and counted.
struct StreamSummarizer::State {
  JoinOptions options;
  size_t window;
  uint64_t launch_seq = 0;
  // Capture windows: launches numbered below window_first_seq belong to a closed window and join nothing
  // of the current one (segment()).
  uint64_t window_first_seq = 0;
  WindowIdSpans earlier;  // correlation-id spans of the closed windows (their Segment records)
  uint64_t chunk_offset = ReadIssue::kNoOffset;  // the chunk being read (chunk())
  int64_t chunk_index = -1;
  struct Slot {
    uint64_t corr = 0;
    uint64_t seq = 0;
    uint32_t scope = 0;
    uint8_t flags = 0;
    bool used = false;
    uint32_t kernels = 0;  // kernel records joined so far (noteKernelsOfLaunch)
  };
  std::vector<Slot> ring;
  size_t ring_mask = 0;
  size_t ring_max = 0;  // min(window, kMaxRing), a power of two

  /// Doubles the ring. Two slots never collide in the larger ring: their ids differed in the low bits.
  void growRing() {
    std::vector<Slot> bigger(ring.size() * 2);
    const size_t mask = bigger.size() - 1;
    for (const Slot& s : ring)
      if (s.used) bigger[s.corr & mask] = s;
    ring.swap(bigger);
    ring_mask = mask;
  }
  FlatMap<Pending> pending;
  size_t peak_pending = 0;
  std::unordered_multimap<uint64_t, Waiting> waiting;
  std::vector<ScopeAcc> dense;
  std::unordered_map<uint32_t, ScopeAcc> sparse;
  FlatMap<KernelTally> tallies;  // (scope << 32 | name) -> tally
  // --graph-view capture: kernels from graph nodes, resolved at finish(): (launch scope, node, name) -> tally.
  std::map<std::tuple<uint32_t, uint64_t, uint32_t>, KernelTally> by_node;
  std::unordered_map<uint64_t, GraphNodeBody> nodes;
  Summary out;  // counters filled while streaming
  // Capture windows known before the pass (setSegments): per-window totals as segmentTotals() counts them.
  std::vector<SegmentBody> seg_bodies;
  std::unique_ptr<SegmentIndex> seg_index;  // ranges, by end time
  std::vector<SegmentTotals> seg_totals;
  size_t seg_current = 0;  // the window of the records being read: Segment records seen so far

  /// The totals of the window being read, or nullptr (no windows given, or records after the last
  /// Segment record). Launches, kernels and memory operations are counted where they lie in the file,
  /// as the join takes them (RecordWindows).
  SegmentTotals* segNow() { return seg_current < seg_totals.size() ? &seg_totals[seg_current] : nullptr; }
  /// A kernel of the window being read that no kernel launch (a launch record without kLaunchMemOp) of
  /// that window claims: unmatched in it.
  void segUnmatched() {
    if (SegmentTotals* t = segNow()) ++t->unmatched_kernels;
  }

  ScopeAcc& scope(uint32_t id) {
    if (id < kDenseScopes) {
      if (id >= dense.size()) dense.resize(std::max<size_t>(id + 1, dense.size() * 2));
      return dense[id];
    }
    return sparse[id];
  }

  /// Credits a joined kernel to its launch's range; under --graph-view capture a replayed graph kernel
  /// waits in by_node for finish(), when every graph node is known.
  void tallyKernel(uint32_t launch_scope, uint32_t name_id, uint64_t graph_node_id, uint64_t ns) {
    if (options.graph_view != GraphView::kCapturePath || graph_node_id == 0)
      return rules().creditKernel(launch_scope, name_id, ns);
    KernelTally& t = by_node[{launch_scope, graph_node_id, name_id}];
    ++t.count;
    satAdd(t.gpu_ns, ns);
  }

  /// The streaming rows as JoinRules credits them: per-scope accumulators, (scope, name) tallies.
  struct Rows {
    State& st;
    template <typename Add>
    bool credit(Credit, uint32_t id, Add&& add) {
      add(st.scope(id));
      return true;
    }
    void kernelByName(uint32_t id, uint32_t name_id, uint64_t ns) {
      KernelTally* t = st.tallies.insert((uint64_t{id} << 32) | name_id).first;
      ++t->count;
      satAdd(t->gpu_ns, ns);
    }
    void unmatchedKernel(uint32_t name_id, uint64_t ns) { addKernelNs(st.out.unmatched_by_kernel[name_id], ns); }
  };
  JoinRules<Rows, Summary> rules() { return {{*this}, out}; }

  /// A kernel or memory operation that never found its launch: unmatched, in its capture window too.
  void unmatched(const Waiting& w) {
    if (!w.is_kernel) return rules().unmatchedMemOp();
    rules().unmatchedKernel(w.name_id, w.ns);
    segUnmatched();
  }

  /// Calls joined(flags, kernels_joined, scope) on the launch of the current window with this correlation
  /// id and returns true, or returns false: none is held. A launch held in the ring counts its kernels
  /// (noteKernelsOfLaunch); one taken from `pending` has none joined yet (kernels_joined null) and leaves
  /// once joined unless it is a graph launch.
  template <typename Joined>
  bool join(uint64_t corr, Joined&& joined) {
    Slot& r = ring[corr & ring_mask];
    if (r.used && r.corr == corr) {
      if (r.seq < window_first_seq) return false;  // a launch of an earlier window
      joined(r.flags, &r.kernels, r.scope);
      return true;
    }
    if (pending.size() == 0) return false;
    Pending* p = pending.find(corr);
    if (p == nullptr || p->seq < window_first_seq) return false;
    joined(p->flags, nullptr, p->scope);
    if (!(p->flags & kHeldGraph)) pending.erase(corr);  // nothing else expected for it
    return true;
  }

  void evictOld() {
    const uint64_t horizon = launch_seq > window / 2 ? launch_seq - window / 2 : 0;
    pending.retain([&](uint64_t, const Pending& p) {
      if (p.seq >= horizon) return true;
      if (!(p.flags & kHeldMatched) && !(p.flags & kHeldCaptured)) ++out.join_window_evicted;
      rules().left(p.flags);
      return false;
    });
  }

  /// Whether a launch with this correlation id is held: false if none is, or if the one held belongs to
  /// an earlier window (then it is let go: counted as without kernel if nothing joined it).
  bool known(uint64_t corr) {
    Slot& r = ring[corr & ring_mask];
    if (r.used && r.corr == corr) {
      if (r.seq >= window_first_seq) return true;
      rules().left(r.flags);
      r.used = false;
      return false;
    }
    if (pending.size() == 0) return false;
    const Pending* p = pending.find(corr);
    if (p == nullptr) return false;
    if (p->seq >= window_first_seq) return true;
    rules().left(p->flags);
    pending.erase(corr);
    return false;
  }

  /// The current window ends: records still waiting for their launch find none (no later launch belongs
  /// to their window), and launches held so far join nothing more.
  void closeWindow(const SegmentBody& seg) {
    for (const auto& [c, x] : waiting) unmatched(x);
    waiting.clear();
    window_first_seq = launch_seq;
    earlier.closeWindow(seg);
    ++seg_current;
  }

  void addLaunch(const LaunchBody& l) {
    const uint64_t seq = launch_seq++;
    const uint8_t flags = rules().launch(l, [&] { return launchApiNs(out, l); });
    if (!(flags & kHeldMemOp))
      if (SegmentTotals* t = segNow()) ++t->launches;
    // A repeated correlation id in one window: the first launch keeps the id; this one is never matched.
    if (known(l.correlation_id)) {
      if (rules().repeated(flags, seq, l.correlation_id)) {
        out.first_repeated_offset = chunk_offset;
        out.first_repeated_chunk = chunk_index;
      }
      return;
    }
    if (ring.size() < ring_max) {
      const Slot& old = ring[l.correlation_id & ring_mask];
      if (old.used && !(old.flags & kHeldMatched)) growRing();  // launches in flight outnumber the ring
    }
    Slot& r = ring[l.correlation_id & ring_mask];
    if (r.used && !(r.flags & kHeldMatched)) {
      // Pushed out of the ring before anything joined it.
      Pending* p = pending.insert(r.corr).first;
      *p = Pending{r.scope, r.flags, r.seq};
      peak_pending = std::max(peak_pending, pending.size());
      if (pending.size() > window) evictOld();
    }
    r = Slot{l.correlation_id, seq, l.scope_id, flags, true};
    if (!waiting.empty()) {
      auto [b, e] = waiting.equal_range(l.correlation_id);
      if (b != e) {
        for (auto it = b; it != e; ++it) {
          if (it->second.is_kernel) {
            rules().kernelJoined(r.flags, &r.kernels, l.correlation_id);
            tallyKernel(l.scope_id, it->second.name_id, it->second.graph_node_id, it->second.ns);
            if (flags & kHeldMemOp) segUnmatched();
          } else {
            rules().memOp(r.flags, l.scope_id, it->second.op);
          }
        }
        waiting.erase(b, e);
      }
    }
  }

  void wait(uint64_t corr, const Waiting& w) {
    waiting.emplace(corr, w);
    if (waiting.size() > window) {
      // Too many records waiting for launches that have not come: they count as unmatched now.
      for (const auto& [c, x] : waiting) {
        unmatched(x);
        ++out.join_window_evicted;
      }
      waiting.clear();
    }
  }
};

StreamSummarizer::StreamSummarizer(const JoinOptions& options, size_t window) : s_(std::make_unique<State>()) {
  s_->options = options;
  s_->window = std::max<size_t>(window, 2);
  size_t r = 64;
  while (r < kMaxRing && r < s_->window) r *= 2;
  s_->ring_max = r;
  s_->ring.assign(std::min(r, kFirstRing), State::Slot{});
  s_->ring_mask = s_->ring.size() - 1;
}

StreamSummarizer::~StreamSummarizer() = default;

void StreamSummarizer::launches(std::span<const LaunchBody> v) {
  s_->out.launches_in_earlier_window_ids += s_->earlier.countInEarlier(v);
  for (const LaunchBody& l : v) s_->addLaunch(l);
}

void StreamSummarizer::kernels(std::span<const KernelBody> v) {
  State& s = *s_;
  satAdd(s.out.kernels, v.size());
  for (const KernelBody& k : v) {
    const uint64_t ns = kernelTotalNs(s.out, k);
    noteKernelTimes(s.out, k);
    satAdd(s.out.kernel_gpu_ns, ns);
    noteKernelShape(s.out, k);
    if (SegmentTotals* t = s.segNow()) {
      ++t->kernels;
      satAdd(t->gpu_ns, ns);
    }
    const bool joined = s.join(k.correlation_id, [&](uint8_t& flags, uint32_t* kernels_joined, uint32_t scope) {
      s.rules().kernelJoined(flags, kernels_joined, k.correlation_id);
      s.tallyKernel(scope, k.name_id, k.graph_node_id, ns);
      if (flags & kHeldMemOp) s.segUnmatched();
    });
    if (!joined) s.wait(k.correlation_id, Waiting{true, k.name_id, k.graph_node_id, ns, {}});
  }
}

void StreamSummarizer::memOp(const MemOpBody& m) {
  State& s = *s_;
  if (isMemoryOperation(m)) {
    ++s.out.mem_ops;
    if (SegmentTotals* t = s.segNow()) ++t->mem_ops;
  }
  if (!s.join(m.correlation_id, [&](uint8_t& flags, uint32_t*, uint32_t scope) { s.rules().memOp(flags, scope, m); }))
    s.wait(m.correlation_id, Waiting{false, 0, 0, 0, m});
}

void StreamSummarizer::ranges(std::span<const RangeBody> v) {
  for (const RangeBody& r : v) s_->rules().range(r, [&] { return rangeCpuNs(s_->out, r); });
  if (s_->seg_index)
    for (const RangeBody& r : v) {
      const size_t i = s_->seg_index->byRangeEnd(r.end_ns);
      if (i != SegmentIndex::kNone) ++s_->seg_totals[i].ranges;
    }
}

void StreamSummarizer::segment(const SegmentBody& seg) {
  noteTime(s_->out, seg.start_ns);
  noteTime(s_->out, seg.stop_ns);
  s_->closeWindow(seg);
}

void StreamSummarizer::chunk(uint64_t offset, int64_t index) {
  s_->chunk_offset = offset;
  s_->chunk_index = index;
}

void StreamSummarizer::setSegments(const LogData& log) {
  s_->seg_bodies = log.segments;
  s_->seg_totals = emptySegmentTotals(log);
  s_->seg_index = std::make_unique<SegmentIndex>(s_->seg_bodies);
}

std::vector<SegmentTotals> StreamSummarizer::takeSegmentTotals() { return std::move(s_->seg_totals); }

void StreamSummarizer::graphNode(const GraphNodeBody& g) {
  // Only --graph-view capture follows nodes; the default view never looks them up.
  if (s_->options.graph_view == GraphView::kCapturePath) s_->nodes.emplace(g.node_id, g);
}

size_t StreamSummarizer::peakPendingLaunches() const { return s_->ring.size() + s_->peak_pending; }

Summary StreamSummarizer::finish(const LogData& log) {
  State& st = *s_;
  for (const auto& [corr, w] : st.waiting) st.unmatched(w);
  st.waiting.clear();
  st.pending.forEach([&](uint64_t, const Pending& p) { st.rules().left(p.flags); });
  for (const State::Slot& r : st.ring)
    if (r.used) st.rules().left(r.flags);
  Summary s = std::move(st.out);
  s.graph_view = st.options.graph_view;

  const size_t n = std::max<size_t>(log.scopes.size(), 1);
  s.exclusive.resize(n);
  for (size_t i = 0; i < n; ++i) s.exclusive[i].scope_id = static_cast<uint32_t>(i);
  // The ids below are those the visitor saw, as the log wrote them: scopeIndex() maps them to the table's
  // index when `log` was compacted (compactScopes()). Unknown scopes go to the root and Summary::unresolved.
  SummaryRanges rows{s, log};
  auto merge = [&](uint32_t id, const ScopeAcc& a) {
    rows.credit(Credit::kRange, log.scopeIndex(id), [&](RangeStats& r) { addScopeRow(r, a); });
  };
  for (size_t i = 0; i < st.dense.size(); ++i) merge(static_cast<uint32_t>(i), st.dense[i]);
  for (const auto& [id, a] : st.sparse) merge(id, a);
  // Kernels by name (with `kernels`, as --graph-view capture credits them at the end): counts and ns.
  auto addKernels = [&](uint32_t id, uint32_t name, const KernelTally& t, bool kernels) {
    rows.credit(Credit::kKernel, log.scopeIndex(id), [&](RangeStats& r) {
      if (kernels) satAdd(r.kernels, t.count);
      if (kernels) satAdd(r.gpu_ns, t.gpu_ns);
      satAdd(r.by_kernel[name].count, t.count);
      satAdd(r.by_kernel[name].gpu_ns, t.gpu_ns);
    });
  };
  st.tallies.forEach([&](uint64_t key, const KernelTally& t) {
    addKernels(static_cast<uint32_t>(key >> 32), static_cast<uint32_t>(key), t, false);
  });
  auto node = [&](uint64_t id) -> const GraphNodeBody* {
    auto it = st.nodes.find(id);
    return it == st.nodes.end() ? nullptr : &it->second;
  };
  for (const auto& [key, t] : st.by_node) {
    const auto& [launch_scope, node_id, name] = key;
    uint32_t scope = launch_scope;
    captureScope(node, node_id, &scope);
    addKernels(scope, name, t, true);
  }
  buildRangeTree(log, s);
  return s;
}

namespace {
/// Per-window totals of a log whose first pass gave `log`: the Segment records follow their windows'
/// records, so a second pass (`read`) counts the records per window. No second pass without windows or
/// records.
template <typename Read>
std::vector<SegmentTotals> segmentPass(const LogData& log, const JoinOptions& options, size_t window, Read read) {
  if (log.segments.empty() ||
      log.launch_records + log.kernel_records + log.range_records + log.mem_op_records == 0)
    return emptySegmentTotals(log);
  StreamSummarizer again(options, window);
  again.setSegments(log);
  ReadOptions ro;
  ro.visitor = &again;
  ro.keep_records = false;
  LogData second = read(ro);
  compactScopes(second);
  again.finish(second);
  return again.takeSegmentTotals();
}

/// One streaming pass: `read` decodes the log with the join as its visitor and no records kept.
template <typename Read>
StreamedLog summarizeStreaming(const JoinOptions& options, size_t window, bool segment_totals, Read read) {
  StreamSummarizer join(options, window);
  ReadOptions ro;
  ro.visitor = &join;
  ro.keep_records = false;
  StreamedLog out;
  out.data = read(ro);
  compactScopes(out.data);
  // A summary-mode log has no records to join: its numbers are those of its last complete snapshot,
  // which the reader keeps whether or not records are kept (as summarize(), which joins the records
  // when no snapshot is complete).
  out.summary = out.data.summary_mode && !out.data.snapshots.empty() ? summarize(out.data, options) : join.finish(out.data);
  if (segment_totals) out.segments = segmentPass(out.data, options, window, read);
  return out;
}
}  // namespace

StreamedLog summarizeLogFile(const std::string& path, const JoinOptions& options, size_t window,
                             bool segment_totals) {
  return summarizeStreaming(options, window, segment_totals,
                            [&](const ReadOptions& ro) { return readLogFile(path, ro); });
}

namespace {
/// Reads the files of one rotated log in part order and joins their LogData (joinRotatedParts).
LogData readParts(const std::vector<std::string>& paths, const ReadOptions& ro) {
  std::vector<LogData> parts;
  for (const auto& p : paths) parts.push_back(readLogFile(p, ro));
  return joinRotatedParts(std::move(parts), paths);
}
}  // namespace

StreamedLog summarizeLogFiles(const std::vector<std::string>& paths, const JoinOptions& options, size_t window,
                              bool segment_totals) {
  return summarizeStreaming(options, window, segment_totals, [&](const ReadOptions& ro) { return readParts(paths, ro); });
}

std::vector<SegmentTotals> segmentTotalsOfFiles(const std::vector<std::string>& paths, const LogData& log,
                                                const JoinOptions& options, size_t window) {
  return segmentPass(log, options, window, [&](const ReadOptions& ro) {
    return paths.size() == 1 ? readLogFile(paths.front(), ro) : readParts(paths, ro);
  });
}

StreamedLog summarizeLogBytes(std::span<const uint8_t> bytes, const JoinOptions& options, size_t window,
                              bool segment_totals) {
  return summarizeStreaming(options, window, segment_totals,
                            [&](const ReadOptions& ro) { return readLog(bytes, ro); });
}

}  // namespace kc
