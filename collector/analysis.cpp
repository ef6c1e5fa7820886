#include "collector/analysis.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "collector/saturating.h"

namespace kc {
namespace {

void addTally(KernelTally& into, const KernelTally& t) {
  if (t.count == 0) return;
  into.min_ns = into.count == 0 ? t.min_ns : std::min(into.min_ns, t.min_ns);
  into.max_ns = into.count == 0 ? t.max_ns : std::max(into.max_ns, t.max_ns);
  satAdd(into.count, t.count);
  satAdd(into.gpu_ns, t.gpu_ns);
}

void addCounts(RangeStats& into, const RangeStats& from) {
  addCountFields(into, from);
  for (const auto& [name, t] : from.by_kernel) addTally(into.by_kernel[name], t);
}

uint64_t less(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/// Where the capture windows of `log` end among its record vectors: segment_marks and the end of the
/// vectors (records after the last Segment record). One window, the whole log, when the marks do not fit
/// the vectors (a LogData not read with its records, or built by hand) or there are none.
std::vector<LogData::RecordMark> windowEnds(const LogData& log) {
  const LogData::RecordMark all{log.launches.size(), log.kernels.size(), log.mem_ops.size()};
  const auto& marks = log.segment_marks;
  bool usable = !marks.empty() && marks.size() == log.segments.size();
  LogData::RecordMark prev{};
  for (size_t i = 0; usable && i < marks.size(); ++i) {
    const LogData::RecordMark& m = marks[i];
    usable = m.launches >= prev.launches && m.kernels >= prev.kernels && m.mem_ops >= prev.mem_ops &&
             m.launches <= all.launches && m.kernels <= all.kernels && m.mem_ops <= all.mem_ops;
    prev = m;
  }
  if (!usable) return {all};
  std::vector<LogData::RecordMark> ends = marks;
  ends.push_back(all);
  return ends;
}


}  // namespace

void WindowIdSpans::closeWindow(const SegmentBody& seg) {
  if (seg.first_correlation_id == 0) return;
  const std::pair<uint64_t, uint64_t> w{seg.first_correlation_id,
                                        std::max(seg.first_correlation_id, seg.last_correlation_id)};
  if (spans_.empty() || w.first > max_) {  // ids that go on growing: appended
    spans_.push_back(w);
    max_ = w.second;
    return;
  }
  // Merged with every span it overlaps.
  auto first = std::lower_bound(spans_.begin(), spans_.end(), w.first,
                                [](const std::pair<uint64_t, uint64_t>& sp, uint64_t v) { return sp.second < v; });
  auto last = first;
  std::pair<uint64_t, uint64_t> merged = w;
  for (; last != spans_.end() && last->first <= w.second; ++last) {
    merged.first = std::min(merged.first, last->first);
    merged.second = std::max(merged.second, last->second);
  }
  first = spans_.erase(first, last);
  spans_.insert(first, merged);
  max_ = std::max(max_, merged.second);
}

RangeStats noRangeStats(const Summary& s) {
  if (s.exclusive.empty()) return {};
  RangeStats r = s.exclusive[kRootScope];
  const RangeStats& u = s.unresolved;
  r.instances = less(r.instances, u.instances);
  r.cpu_ns = less(r.cpu_ns, u.cpu_ns);
  r.launches = less(r.launches, u.launches);
  r.graph_launches = less(r.graph_launches, u.graph_launches);
  r.launch_api_ns = less(r.launch_api_ns, u.launch_api_ns);
  r.kernels = less(r.kernels, u.kernels);
  r.gpu_ns = less(r.gpu_ns, u.gpu_ns);
  r.captured_launches = less(r.captured_launches, u.captured_launches);
  r.memcpy_count = less(r.memcpy_count, u.memcpy_count);
  r.memcpy_bytes = less(r.memcpy_bytes, u.memcpy_bytes);
  r.memcpy_ns = less(r.memcpy_ns, u.memcpy_ns);
  r.memset_count = less(r.memset_count, u.memset_count);
  r.memset_bytes = less(r.memset_bytes, u.memset_bytes);
  r.memset_ns = less(r.memset_ns, u.memset_ns);
  r.graph_gpu_launches = less(r.graph_gpu_launches, u.graph_gpu_launches);
  r.graph_gpu_ns = less(r.graph_gpu_ns, u.graph_gpu_ns);
  for (const auto& [name, t] : u.by_kernel) {
    auto it = r.by_kernel.find(name);
    if (it == r.by_kernel.end()) continue;
    it->second.count = less(it->second.count, t.count);
    it->second.gpu_ns = less(it->second.gpu_ns, t.gpu_ns);
    if (it->second.count == 0) r.by_kernel.erase(it);
  }
  return r;
}

bool hasUnresolved(const Summary& s) {
  const RangeStats& u = s.unresolved;
  return u.instances + u.launches + u.kernels + u.memcpy_count + u.memset_count > 0;
}

namespace {
uint64_t saturatedIn(const KernelTally& t) { return (t.count == kSaturated ? 1 : 0) + (t.gpu_ns == kSaturated ? 1 : 0); }

uint64_t saturatedIn(const RangeStats& r) {
  uint64_t n = 0;
  for (uint64_t v : {r.instances, r.cpu_ns, r.launches, r.graph_launches, r.launch_api_ns, r.kernels, r.gpu_ns,
                     r.captured_launches, r.memcpy_count, r.memcpy_bytes, r.memcpy_ns, r.memset_count,
                     r.memset_bytes, r.memset_ns, r.graph_gpu_launches, r.graph_gpu_ns})
    n += v == kSaturated ? 1 : 0;
  for (const auto& [name, t] : r.by_kernel) n += saturatedIn(t);
  return n;
}
}  // namespace

uint64_t saturatedSums(const Summary& s) {
  uint64_t n = saturatedIn(s.unresolved);
  for (const RangeStats& r : s.exclusive) n += saturatedIn(r);
  for (const RangeStats& r : s.inclusive) n += saturatedIn(r);
  for (const auto& [name, t] : s.unmatched_by_kernel) n += saturatedIn(t);
  for (uint64_t v : {s.launches, s.kernels, s.kernel_gpu_ns, s.mem_ops}) n += v == kSaturated ? 1 : 0;
  return n;
}

Summary summarizeSnapshot(const LogData& log, size_t index) {
  const SnapshotData& snap = log.snapshots.at(index);
  Summary s;
  s.snapshot = static_cast<int64_t>(index);
  const size_t n = std::max<size_t>(log.scopes.size(), 1);
  s.exclusive.resize(n);
  for (size_t i = 0; i < n; ++i) s.exclusive[i].scope_id = static_cast<uint32_t>(i);
  SummaryRanges rows{s, log};
  for (const SnapshotScopeBody& row : snap.scopes) {
    if ((row.flags & kSnapshotScopeTallyDropped) != 0 && row.scope_id != kRootScope && row.scope_id < n) {
      s.tally_dropped.resize(n, 0);
      s.tally_dropped[row.scope_id] = 1;
    }
    rows.credit(Credit::kRange, row.scope_id, [&](RangeStats& r) { addScopeRow(r, row); });
    satAdd(s.kernel_gpu_ns, row.gpu_ns);
  }
  for (const SnapshotKernelBody& row : snap.kernels) {
    const KernelTally t{row.count, row.gpu_ns, row.min_ns, row.max_ns};
    if (row.flags & kSnapshotKernelUnmatched)
      addTally(s.unmatched_by_kernel[row.name_id], t);
    else
      rows.credit(Credit::kKernel, row.scope_id, [&](RangeStats& r) { addTally(r.by_kernel[row.name_id], t); });
  }
  const SnapshotBeginBody& b = snap.begin;
  s.launches = b.launches;
  s.kernels = b.kernels;
  s.unmatched_kernels = b.unmatched_kernels;
  s.launches_without_kernel = b.launches_without_kernel;
  s.captured_launches = b.captured_launches;
  s.mem_ops = b.mem_ops;
  s.unmatched_mem_ops = b.unmatched_mem_ops;
  satAdd(s.kernel_gpu_ns, b.unmatched_kernel_gpu_ns);
  buildRangeTree(log, s);
  return s;
}

Summary summarize(const LogData& log, const JoinOptions& options) {
  if (log.summary_mode && !log.snapshots.empty()) return summarizeSnapshot(log, log.snapshots.size() - 1);
  Summary s;
  s.graph_view = options.graph_view;
  const size_t n = std::max<size_t>(log.scopes.size(), 1);
  s.exclusive.resize(n);
  for (size_t i = 0; i < n; ++i) s.exclusive[i].scope_id = static_cast<uint32_t>(i);
  JoinRules<SummaryRanges, Summary> rules{{s, log}, s};
  std::unordered_map<uint64_t, const GraphNodeBody*> nodes;  // --graph-view capture: node id -> node
  if (options.graph_view == GraphView::kCapturePath)
    for (const GraphNodeBody& g : log.graph_nodes) nodes.emplace(g.node_id, &g);
  auto node = [&](uint64_t id) -> const GraphNodeBody* {
    auto it = nodes.find(id);
    return it == nodes.end() ? nullptr : it->second;
  };

  // Window by window (a log without usable marks is one window): launches, then the kernels and memory
  // operations of the same window. `held` keeps one launch record per correlation id: the first of a
  // window keeps it against repeats in that window, and a later window's launch takes it over (the earlier
  // one leaves), so that a lookup that finds a launch before the window's first launch found none of this
  // window. Per launch record: its HeldFlags and the kernels joined to it.
  std::unordered_map<uint64_t, size_t> held;
  held.reserve(log.launches.size() * 2);
  std::vector<uint8_t> flags(log.launches.size(), 0);
  std::vector<uint32_t> kernels_of(log.launches.size(), 0);
  WindowIdSpans earlier;
  LogData::RecordMark from{};
  size_t w = 0;  // index of the window in ends (and of its Segment record)
  const std::vector<LogData::RecordMark> ends = windowEnds(log);
  for (const LogData::RecordMark& to : ends) {
    const size_t window_first = from.launches;
    s.launches_in_earlier_window_ids +=
        earlier.countInEarlier(std::span(log.launches).subspan(from.launches, to.launches - from.launches));
    for (size_t i = from.launches; i < to.launches; ++i) {
      const LaunchBody& l = log.launches[i];
      flags[i] = rules.launch(l, [&] { return launchApiNs(s, l); });
      auto [it, fresh] = held.try_emplace(l.correlation_id, i);
      if (fresh) continue;
      if (it->second >= window_first) {
        rules.repeated(flags[i], i, l.correlation_id);
      } else {
        rules.left(flags[it->second]);
        it->second = i;
      }
    }
    // The launch of this window with correlation id c, or nullptr.
    auto launchOf = [&](uint64_t c) -> const size_t* {
      auto it = held.find(c);
      return it == held.end() || it->second < window_first ? nullptr : &it->second;
    };
    for (size_t j = from.kernels; j < to.kernels; ++j) {
      const KernelBody& k = log.kernels[j];
      noteKernelShape(s, k);
      const uint64_t ns = span(k.start_ns, k.end_ns);
      const size_t* li = launchOf(k.correlation_id);
      if (li == nullptr) {
        rules.unmatchedKernel(k.name_id, ns);
        continue;
      }
      uint32_t scope = log.launches[*li].scope_id;
      if (options.graph_view == GraphView::kCapturePath && k.graph_node_id != 0) captureScope(node, k.graph_node_id, &scope);
      rules.kernel(flags[*li], &kernels_of[*li], k.correlation_id, scope, k.name_id, ns);
    }
    for (size_t j = from.mem_ops; j < to.mem_ops; ++j) {
      const MemOpBody& m = log.mem_ops[j];
      if (const size_t* li = launchOf(m.correlation_id))
        rules.memOp(flags[*li], log.launches[*li].scope_id, m);
      else
        rules.unmatchedMemOp();
    }
    if (w < log.segments.size() && ends.size() > 1) earlier.closeWindow(log.segments[w]);
    ++w;
    from = to;
  }
  for (const auto& [c, i] : held) rules.left(flags[i]);
  s.kernels = log.kernels.size();
  for (const KernelBody& k : log.kernels) {
    satAdd(s.kernel_gpu_ns, kernelTotalNs(s, k));
    noteKernelTimes(s, k);
  }
  for (const SegmentBody& sg : log.segments) {
    noteTime(s, sg.start_ns);
    noteTime(s, sg.stop_ns);
  }
  s.mem_ops = static_cast<uint64_t>(std::count_if(log.mem_ops.begin(), log.mem_ops.end(), isMemoryOperation));
  for (const RangeBody& rb : log.ranges) rules.range(rb, [&] { return rangeCpuNs(s, rb); });
  buildRangeTree(log, s);
  return s;
}

void buildRangeTree(const LogData& log, Summary& s) {
  const size_t n = s.exclusive.size();
  // Tree: a parent id out of range, or a scope whose parent chain never reaches the root (a cycle),
  // hangs under the root. A parent whose Scope record was lost (a gap in the table, LogData::scopeDefined)
  // stays the parent: its children are grouped under it (reports show it as "(lost range P)"), and it
  // hangs under the root. Its own numbers are empty (records of an undefined scope are credited to the
  // root), so its inclusive numbers are its children's and no total changes.
  std::vector<uint32_t> parent(n, kRootScope);
  for (size_t i = 1; i < n; ++i) {
    uint32_t p = i < log.scopes.size() ? log.scopes[i].parent_id : kRootScope;
    if (p >= n || p == i || !log.scopeDefined(static_cast<uint32_t>(i))) p = kRootScope;
    parent[i] = p;
  }
  // Walk each chain once (0 = not seen, 1 = on the current walk, 2 = reaches the root). A walk that
  // meets its own path found a cycle: the last node walked is cut from its parent and hung under the root.
  std::vector<uint8_t> state(n, 0);
  state[kRootScope] = 2;
  std::vector<uint32_t> path;
  for (size_t i = 1; i < n; ++i) {
    path.clear();
    uint32_t id = static_cast<uint32_t>(i);
    while (state[id] == 0) {
      state[id] = 1;
      path.push_back(id);
      id = parent[id];
    }
    if (state[id] == 1) parent[path.back()] = kRootScope;
    for (uint32_t p : path) state[p] = 2;
  }
  s.children.assign(n, {});
  for (size_t i = 1; i < n; ++i) s.children[parent[i]].push_back(static_cast<uint32_t>(i));

  s.children_order.reserve(n);
  std::vector<uint32_t> stack{kRootScope};
  while (!stack.empty()) {
    const uint32_t id = stack.back();
    stack.pop_back();
    s.children_order.push_back(id);
    const auto& kids = s.children[id];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }

  // Inclusive: own instances/cpu_ns, plus launch and kernel numbers of all descendants.
  s.inclusive = s.exclusive;
  for (auto it = s.children_order.rbegin(); it != s.children_order.rend(); ++it) {
    if (*it == kRootScope) continue;
    addCounts(s.inclusive[parent[*it]], s.inclusive[*it]);
  }
}

namespace {
/// `log` without its records: definitions, stats, state and issues (what a selection keeps whole).
LogData definitionsOf(const LogData& log) {
  LogData out;
  out.major = log.major;
  out.minor = log.minor;
  out.metadata = log.metadata;
  out.strings = log.strings;
  out.scopes = log.scopes;
  out.strings_missing = log.strings_missing;
  out.scopes_missing = log.scopes_missing;
  out.undefined_scope_refs = log.undefined_scope_refs;
  out.scope_log_ids = log.scope_log_ids;
  out.scope_id_end = log.scope_id_end;
  out.graph_nodes = log.graph_nodes;
  out.range_callbacks = log.range_callbacks;
  out.stats = log.stats;
  out.has_stats = log.has_stats;
  out.whole_file_records = log.fileRecords();
  out.complete = log.complete;
  out.truncated = log.truncated;
  out.chunks_read = log.chunks_read;
  out.last_intact_chunk = log.last_intact_chunk;
  out.last_intact_end = log.last_intact_end;
  out.chunks_skipped = log.chunks_skipped;
  out.packed_chunks = log.packed_chunks;
  out.after_end_offset = log.after_end_offset;
  out.after_end_bytes = log.after_end_bytes;
  out.after_end_is_log = log.after_end_is_log;
  out.file_bytes = log.file_bytes;
  out.issues = log.issues;
  return out;
}
}  // namespace

namespace {
/// (window, correlation id): what a kernel or memory operation joins a launch on (RecordWindows).
struct WindowId {
  size_t window;
  uint64_t correlation_id;
  bool operator==(const WindowId&) const = default;
};
struct WindowIdHash {
  size_t operator()(const WindowId& k) const {
    return std::hash<uint64_t>()(k.correlation_id * 0x9E3779B97F4A7C15ull ^ k.window);
  }
};

/// Appends to `out` the launch, kernel and memory-operation records of `log` that keep(record, window)
/// accepts, in file order (window as `windows` gives it). Returns how many of each kind were kept per
/// window, windows 0 to log.segments.size() (the open one); records of window kNone are counted in none.
template <typename Keep>
std::vector<LogData::RecordMark> copyRecords(const LogData& log, const RecordWindows& windows, Keep keep,
                                             LogData& out) {
  std::vector<LogData::RecordMark> kept(log.segments.size() + 1);
  auto count = [&](size_t w, uint64_t LogData::RecordMark::*kind) {
    if (w < kept.size()) ++(kept[w].*kind);
  };
  for (size_t i = 0; i < log.launches.size(); ++i)
    if (const size_t w = windows.ofLaunch(i); keep(log.launches[i], w)) {
      out.launches.push_back(log.launches[i]);
      count(w, &LogData::RecordMark::launches);
    }
  for (size_t i = 0; i < log.kernels.size(); ++i)
    if (const size_t w = windows.ofKernel(i); keep(log.kernels[i], w)) {
      out.kernels.push_back(log.kernels[i]);
      count(w, &LogData::RecordMark::kernels);
    }
  for (size_t i = 0; i < log.mem_ops.size(); ++i)
    if (const size_t w = windows.ofMemOp(i); keep(log.mem_ops[i], w)) {
      out.mem_ops.push_back(log.mem_ops[i]);
      count(w, &LogData::RecordMark::mem_ops);
    }
  return kept;
}

/// Segment marks from per-window counts (copyRecords()): where each of the first `windows` windows ends.
std::vector<LogData::RecordMark> marksOf(const std::vector<LogData::RecordMark>& kept, size_t windows) {
  std::vector<LogData::RecordMark> marks;
  LogData::RecordMark sum{};
  for (size_t w = 0; w < windows && w < kept.size(); ++w) {
    sum = {sum.launches + kept[w].launches, sum.kernels + kept[w].kernels, sum.mem_ops + kept[w].mem_ops};
    marks.push_back(sum);
  }
  return marks;
}
}  // namespace

LogData selectTimeWindow(const LogData& log, uint64_t from_ns, uint64_t to_ns) {
  LogData out = definitionsOf(log);
  auto overlaps = [&](uint64_t begin, uint64_t end) { return begin <= to_ns && std::max(begin, end) >= from_ns; };
  const RecordWindows windows(log);
  // (window, correlation id) of the launches, kernels and memory operations that overlap
  std::unordered_set<WindowId, WindowIdHash> ids;
  for (size_t i = 0; i < log.launches.size(); ++i)
    if (overlaps(log.launches[i].enter_ns, log.launches[i].exit_ns))
      ids.insert({windows.ofLaunch(i), log.launches[i].correlation_id});
  for (size_t i = 0; i < log.kernels.size(); ++i)
    if (overlaps(log.kernels[i].start_ns, log.kernels[i].end_ns))
      ids.insert({windows.ofKernel(i), log.kernels[i].correlation_id});
  for (size_t i = 0; i < log.mem_ops.size(); ++i)
    if (overlaps(log.mem_ops[i].start_ns, log.mem_ops[i].end_ns))
      ids.insert({windows.ofMemOp(i), log.mem_ops[i].correlation_id});
  const auto kept = copyRecords(
      log, windows, [&](const auto& r, size_t w) { return ids.contains({w, r.correlation_id}); }, out);
  for (const auto& r : log.ranges)
    if (overlaps(r.begin_ns, r.end_ns)) out.ranges.push_back(r);
  out.segments = log.segments;
  if (windows.byPosition()) out.segment_marks = marksOf(kept, log.segments.size());
  return out;
}

std::pair<uint64_t, uint64_t> recordTimeSpan(const LogData& log) {
  uint64_t lo = UINT64_MAX, hi = 0;
  auto add = [&](uint64_t a, uint64_t b) {
    lo = std::min(lo, a);
    hi = std::max(hi, std::max(a, b));
  };
  for (const auto& l : log.launches) add(l.enter_ns, l.exit_ns);
  for (const auto& k : log.kernels) add(k.start_ns, k.end_ns);
  for (const auto& m : log.mem_ops) add(m.start_ns, m.end_ns);
  for (const auto& r : log.ranges) add(r.begin_ns, r.end_ns);
  if (lo == UINT64_MAX) return {0, 0};
  return {lo, hi};
}

LogData selectSegment(const LogData& log, size_t window) {
  LogData out = definitionsOf(log);
  if (window >= log.segments.size()) return out;
  const SegmentBody& seg = log.segments[window];
  out.segments = {seg};
  copyRecords(log, RecordWindows(log), [&](const auto&, size_t w) { return w == window; }, out);
  for (const auto& r : log.ranges)
    if (r.end_ns >= seg.start_ns && r.end_ns <= seg.stop_ns) out.ranges.push_back(r);
  out.segment_marks = {{out.launches.size(), out.kernels.size(), out.mem_ops.size()}};
  return out;
}

SegmentIndex::SegmentIndex(std::span<const SegmentBody> segments) : segs_(segments) {
  for (size_t i = 0; i < segs_.size(); ++i) {
    if (segs_[i].first_correlation_id != 0) by_corr_.push_back(i);
    by_time_.push_back(i);
  }
  std::sort(by_corr_.begin(), by_corr_.end(),
            [&](size_t a, size_t b) { return segs_[a].first_correlation_id < segs_[b].first_correlation_id; });
  std::sort(by_time_.begin(), by_time_.end(), [&](size_t a, size_t b) { return segs_[a].start_ns < segs_[b].start_ns; });
}

size_t SegmentIndex::byCorrelation(uint64_t c) const {
  auto it = std::upper_bound(by_corr_.begin(), by_corr_.end(), c,
                             [&](uint64_t v, size_t i) { return v < segs_[i].first_correlation_id; });
  if (it == by_corr_.begin()) return kNone;
  const size_t i = *std::prev(it);
  return c <= segs_[i].last_correlation_id ? i : kNone;
}

size_t SegmentIndex::byRangeEnd(uint64_t end_ns) const {
  auto it = std::upper_bound(by_time_.begin(), by_time_.end(), end_ns,
                             [&](uint64_t v, size_t i) { return v < segs_[i].start_ns; });
  if (it == by_time_.begin()) return kNone;
  const size_t i = *std::prev(it);
  return end_ns <= segs_[i].stop_ns ? i : kNone;
}

std::vector<SegmentTotals> emptySegmentTotals(const LogData& log) {
  std::vector<SegmentTotals> out(log.segments.size());
  for (size_t i = 0; i < log.segments.size(); ++i) {
    const SegmentBody& seg = log.segments[i];
    out[i].segment = seg;
    out[i].reason = std::string(log.str(seg.reason_id));
    out[i].end_reason = std::string(log.str(seg.end_reason_id));
  }
  return out;
}

RecordWindows::RecordWindows(const LogData& log) : log_(log), ends_(windowEnds(log)) {
  if (ends_.size() != log.segments.size() + 1) spans_.emplace(log.segments);
}

size_t RecordWindows::byMark(size_t i, uint64_t LogData::RecordMark::*kind) const {
  auto it = std::upper_bound(ends_.begin(), ends_.end(), i,
                             [&](size_t v, const LogData::RecordMark& m) { return v < m.*kind; });
  return static_cast<size_t>(it - ends_.begin());
}

size_t RecordWindows::ofLaunch(size_t i) const {
  return spans_ ? spans_->byCorrelation(log_.launches[i].correlation_id) : byMark(i, &LogData::RecordMark::launches);
}

size_t RecordWindows::ofKernel(size_t i) const {
  return spans_ ? spans_->byCorrelation(log_.kernels[i].correlation_id) : byMark(i, &LogData::RecordMark::kernels);
}

size_t RecordWindows::ofMemOp(size_t i) const {
  return spans_ ? spans_->byCorrelation(log_.mem_ops[i].correlation_id) : byMark(i, &LogData::RecordMark::mem_ops);
}

uint64_t RecordWindows::number(size_t w) const {
  if (w < log_.segments.size()) return log_.segments[w].index;
  if (w == kNone) return kNone;
  return log_.segments.empty() ? 0 : log_.segments.back().index + 1;
}

LaunchJoin::LaunchJoin(const LogData& log) : log_(log), windows_(log) {
  by_id_.reserve(log.launches.size());
  for (size_t i = 0; i < log.launches.size(); ++i)
    by_id_.try_emplace({windows_.ofLaunch(i), log.launches[i].correlation_id}, i);  // the first keeps the id
}

std::optional<size_t> LaunchJoin::find(size_t window, uint64_t correlation_id) const {
  auto it = by_id_.find({window, correlation_id});
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> LaunchJoin::ofKernel(size_t j) const {
  return find(windows_.ofKernel(j), log_.kernels[j].correlation_id);
}

std::optional<size_t> LaunchJoin::ofMemOp(size_t j) const {
  return find(windows_.ofMemOp(j), log_.mem_ops[j].correlation_id);
}

// One pass over the records (a log may hold many windows): launches, kernels and memory operations to the
// window RecordWindows gives them, ranges to the window whose time span holds their end (SegmentIndex).
std::vector<SegmentTotals> segmentTotals(const LogData& log) {
  std::vector<SegmentTotals> out = emptySegmentTotals(log);
  const RecordWindows windows(log);
  auto at = [&](size_t w) { return w < out.size() ? &out[w] : nullptr; };
  std::unordered_set<WindowId, WindowIdHash> launched;  // kernel launches
  for (size_t i = 0; i < log.launches.size(); ++i) {
    const LaunchBody& l = log.launches[i];
    if (l.flags & kLaunchMemOp) continue;
    const size_t w = windows.ofLaunch(i);
    launched.insert({w, l.correlation_id});
    if (SegmentTotals* t = at(w)) ++t->launches;
  }
  for (size_t i = 0; i < log.kernels.size(); ++i) {
    const KernelBody& k = log.kernels[i];
    const size_t w = windows.ofKernel(i);
    SegmentTotals* t = at(w);
    if (t == nullptr) continue;
    ++t->kernels;
    satAdd(t->gpu_ns, k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0);
    if (!launched.contains({w, k.correlation_id})) ++t->unmatched_kernels;
  }
  for (size_t i = 0; i < log.mem_ops.size(); ++i)
    if (SegmentTotals* t = at(windows.ofMemOp(i)); t != nullptr && isMemoryOperation(log.mem_ops[i])) ++t->mem_ops;
  const SegmentIndex index(log.segments);
  for (const RangeBody& r : log.ranges) {
    const size_t i = index.byRangeEnd(r.end_ns);
    if (i != SegmentIndex::kNone) ++out[i].ranges;
  }
  return out;
}

}  // namespace kc
