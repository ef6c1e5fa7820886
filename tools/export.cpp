#include "tools/export.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <limits>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <cstring>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>
#include <utf8.h>  // utfcpp (Debian libutfcpp-dev)

#include "collector/shown_value.h"
#include "tools/kernel_decode.h"
#include "tools/kernel_names.h"
#include "tools/range_names.h"
#include "tools/text.h"

namespace kc {
namespace {

using nlohmann::json;

/// Per-log lookups shared by the writers: the launch of each kernel and memory operation (within its
/// capture window, LaunchJoin), each record's window, range paths, kernel names.
class LogIndex {
 public:
  LogIndex(const LoadedLog& log, uint32_t index) : log_(log), index_(index), join_(log.data) {
    const LogData& d = log.data;
    pid_ = parseU32(d.meta("pid"));
    kernels_per_launch_.assign(d.launches.size(), 0);
    for (size_t j = 0; j < d.kernels.size(); ++j)
      if (auto l = launchOfKernel(j)) ++kernels_per_launch_[*l];
    for (size_t j = 0; j < d.mem_ops.size(); ++j)
      if (auto l = launchOfMemOp(j)) ++kernels_per_launch_[*l];  // GPU operations of a memory call
    paths_.reserve(d.scopes.size());
    depths_.reserve(d.scopes.size());
    for (uint32_t s = 0; s < d.scopes.size(); ++s) {
      paths_.push_back(s == kRootScope ? d.scopePath(s) : displayPath(d, s));  // as summary shows it
      uint32_t depth = 0;
      for (uint32_t p = s; p != kRootScope && p < d.scopes.size() && depth < 256; p = d.scopes[p].parent_id) ++depth;
      depths_.push_back(depth);
    }
    // The library's reserved scope (string table or scope tree full) is listed only when a record is in
    // it, as kcount summary shows it only then: logs of earlier writers define it whether used or not,
    // and a run that never filled its tables should not show "(string table full)" as if it were a range.
    if (d.isOverflowScope(kOverflowScope)) {
      bool used = false;
      for (const auto& r : d.ranges) used = used || r.scope_id == kOverflowScope;
      for (const auto& l : d.launches) used = used || l.scope_id == kOverflowScope;
      for (uint32_t s = 0; s < d.scopes.size(); ++s)
        used = used || (s != kOverflowScope && d.scopeDefined(s) && d.scopes[s].parent_id == kOverflowScope);
      hide_overflow_scope_ = !used;
    }
    if (!d.scopes_missing.empty()) {
      auto note = [&](uint32_t id) {
        if (id != kRootScope && !d.scopeDefined(id)) lost_scopes_.insert(id);
      };
      for (const auto& r : d.ranges) note(r.scope_id);
      for (const auto& l : d.launches) note(l.scope_id);
      for (const auto& g : d.graph_nodes) note(g.scope_id);
      for (uint32_t s = 1; s < d.scopes.size(); ++s)
        if (d.scopeDefined(s)) note(d.scopes[s].parent_id);
      if (!d.snapshots.empty())
        for (const auto& r : d.snapshots.back().scopes) note(r.scope_id);
    }
  }

  const LogData& data() const { return log_.data; }
  const std::string& path() const { return log_.path; }
  uint32_t index() const { return index_; }
  uint32_t pid() const { return pid_; }
  int64_t globalPid() const { return exportGlobalPid(index_, pid_); }
  int64_t globalTid(uint32_t tid) const { return globalPid() | (tid & 0xFFFFFF); }

  /// Index into the log's launches of the launch of kernel record j (memory-operation record j), or
  /// nullopt when no launch of its capture window carries its correlation id.
  std::optional<uint32_t> launchOfKernel(size_t j) const { return narrow(join_.ofKernel(j)); }
  std::optional<uint32_t> launchOfMemOp(size_t j) const { return narrow(join_.ofMemOp(j)); }
  /// The `segment` column of launch record i (kernel, memory-operation record j): its capture window's
  /// number, as --segment N takes it (RecordWindows::number()); NULL only for a record in no window.
  ExportCell launchSegment(size_t i) const { return segmentCell(join_.windows().ofLaunch(i)); }
  ExportCell kernelSegment(size_t j) const { return segmentCell(join_.windows().ofKernel(j)); }
  ExportCell memOpSegment(size_t j) const { return segmentCell(join_.windows().ofMemOp(j)); }
  /// Kernels of a launch, or GPU memory operations of a memcpy/memset call (LaunchFlags::kLaunchMemOp).
  uint32_t kernelsOfLaunch(uint32_t launch_index) const { return kernels_per_launch_[launch_index]; }
  bool isMemoryCall(uint32_t launch_index) const { return log_.data.launches[launch_index].flags & kLaunchMemOp; }

  /// "(no range)" for the root; "<bad scope id N>" for ids the log never defined. The view stays valid as
  /// long as this index (a row may hold several: each bad id's text is kept, not overwritten).
  std::string_view scopePath(uint32_t scope_id) const {
    if (scope_id < paths_.size()) return paths_[scope_id];
    auto [it, added] = bad_paths_.try_emplace(scope_id);
    if (added) it->second = log_.data.scopePath(scope_id);
    return it->second;
  }
  uint32_t scopeDepth(uint32_t scope_id) const { return scope_id < depths_.size() ? depths_[scope_id] : 0; }
  /// Whether the scopes table lists `scope_id`: every scope the log defines, except the library's reserved
  /// scope (LogData::isOverflowScope()) when no range, launch or scope of the log is in it; an id the log
  /// does not define only if a record refers to it (a definition lost to damage). Ids are sparse in a
  /// rotated part: the ids between those it defines are no scopes of it.
  bool scopeListed(uint32_t scope_id) const {
    if (hide_overflow_scope_ && scope_id == kOverflowScope) return false;
    return scope_id == kRootScope || log_.data.scopeDefined(scope_id) || lost_scopes_.contains(scope_id);
  }

  struct KernelName {
    std::string demangled;
    std::string short_name;  // shortKernelNameUncut(): the tables' shortName (never cut)
    std::string trace_name;  // shortKernelName(): a Chrome trace slice's name, cut as in text tables
    std::string category, library;  // decodeKernelName(); library "" when the name does not say
  };
  /// Demangled and short name of a kernel name string id, computed once per id.
  const KernelName& kernelName(uint32_t name_id) const {
    auto it = names_.find(name_id);
    if (it == names_.end()) {
      std::string_view raw = log_.data.str(name_id);
      DecodedKernel decoded = decodeKernelName(raw);
      it = names_
               .emplace(name_id, KernelName{demangleKernelName(raw), shortKernelNameUncut(raw), shortKernelName(raw),
                                            std::string(categoryName(decoded.category)), decoded.library})
               .first;
    }
    return it->second;
  }

  static std::optional<uint32_t> narrow(std::optional<size_t> i) {
    if (!i) return std::nullopt;
    return static_cast<uint32_t>(*i);
  }
  ExportCell segmentCell(size_t window) const {
    if (window == RecordWindows::kNone) return {};
    return static_cast<int64_t>(join_.windows().number(window));
  }

  static uint32_t parseU32(std::string_view s) {
    uint32_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  }

 private:
  const LoadedLog& log_;
  uint32_t index_;
  uint32_t pid_ = 0;
  LaunchJoin join_;
  std::vector<uint32_t> kernels_per_launch_;
  std::vector<std::string> paths_;
  std::vector<uint32_t> depths_;
  mutable std::map<uint32_t, std::string> bad_paths_;  // scopePath() of undefined ids (node-stable)
  bool hide_overflow_scope_ = false;
  std::unordered_set<uint32_t> lost_scopes_;  // ids not defined that a record refers to
  mutable std::unordered_map<uint32_t, KernelName> names_;
};

std::vector<LogIndex> indexLogs(const std::vector<LoadedLog>& logs) {
  std::vector<LogIndex> out;
  out.reserve(logs.size());
  for (uint32_t i = 0; i < logs.size(); ++i) out.emplace_back(logs[i], i);
  return out;
}

const char* apiDomainName(uint8_t domain) {
  switch (static_cast<ApiDomain>(domain)) {
    case ApiDomain::kRuntime: return "runtime";
    case ApiDomain::kDriver: return "driver";
  }
  return "unknown";
}

/// An unsigned value of the log (a time, an id, a size) as a cell: never read as a negative number.
ExportCell u64(uint64_t v) { return ExportCell{v}; }

// ---------------------------------------------------------------------------------------------------
// Chrome trace

/// Nanoseconds as microseconds with exactly three decimals (no floating point, no rounding).
std::string micros(uint64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

/// JSON string literal (quotes included); invalid UTF-8 (a name cut mid-character) is replaced.
std::string jsonQuote(std::string_view s) {
  return json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

/// Assigns each slice of one track a lane so that the slices of a lane nest (Perfetto and Chrome drop
/// or misdraw slices that overlap without nesting). Input: (start, end) pairs; output: lane per slice.
std::vector<uint32_t> assignLanes(const std::vector<std::pair<uint64_t, uint64_t>>& spans) {
  std::vector<uint32_t> order(spans.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (spans[a].first != spans[b].first) return spans[a].first < spans[b].first;
    return spans[a].second > spans[b].second;  // the enclosing slice first
  });
  std::vector<uint32_t> lane(spans.size(), 0);
  std::vector<std::vector<uint64_t>> open;  // per lane: ends of the slices still open, innermost last
  for (uint32_t i : order) {
    auto [start, end] = spans[i];
    uint32_t l = 0;
    for (;; ++l) {
      if (l == open.size()) open.emplace_back();
      auto& stack = open[l];
      while (!stack.empty() && stack.back() <= start) stack.pop_back();
      if (stack.empty() || stack.back() >= end) break;
    }
    open[l].push_back(end);
    lane[i] = l;
  }
  return lane;
}

/// "memcpy HtoD" etc. for CUpti_ActivityMemcpyKind values (cupti_activity.h); "memcpy" for others.
std::string memcpyName(uint8_t copy_kind) {
  switch (copy_kind) {
    case 1: return "memcpy HtoD";
    case 2: return "memcpy DtoH";
    case 3: return "memcpy HtoA";
    case 4: return "memcpy AtoH";
    case 5: return "memcpy AtoA";
    case 6: return "memcpy AtoD";
    case 7: return "memcpy DtoA";
    case 8: return "memcpy DtoD";
    case 9: return "memcpy HtoH";
    case 10: return "memcpy PtoP";
  }
  return "memcpy";
}

/// What a MemOp record spans: "graph" (a graph launch's GPU span, KCOUNT_GPU_TIME=graphs), "memset" or
/// "memcpy".
std::string_view gpuOpKind(const MemOpBody& m) {
  if (m.kind == static_cast<uint8_t>(MemOpKind::kGraph)) return "graph";
  return m.kind == static_cast<uint8_t>(MemOpKind::kMemset) ? "memset" : "memcpy";
}

/// Thread ids of extra lanes: above every Linux thread id (at most 2^22).
uint32_t laneTid(uint32_t tid, uint32_t lane) { return lane == 0 ? tid : tid + (lane << 22); }

/// One trace event, kept small for sorting; the text is rendered when written.
struct TraceEvent {
  uint64_t ts;
  uint64_t dur;
  uint8_t order;  // among equal ts and dur: slices (0) before flow events (1)
  uint8_t kind;
  uint32_t lane;
  uint32_t index;  // record index in its vector
};
enum EventKind : uint8_t {
  kRangeSlice, kRangeAsyncBegin, kRangeAsyncEnd, kLaunchSlice, kKernelSlice, kMemSlice,
  kFlowStart,      // the arrow from a launch call to one kernel it issued: at the launch, index = the kernel's
  kFlowEnd,        // its end, on the kernel
  kMemFlowStart,   // the arrow from a memcpy/memset call (or a graph launch) to one GPU memory operation:
  kMemFlowEnd,     //   at the call and on the operation, index = the operation's
  kKernelInstant,  // KCOUNT_GPU_TIME=0: a kernel named at its launch, an instant event on the launching thread
};

/// Flow ids: one per arrow (a viewer draws one arrow per id, and pairs one "s" with one "f"), so that a
/// launch of several kernels (a graph launch) gets an arrow to each and ids stay unique where correlation
/// ids repeat (capture windows of logs written before ids were numbered on across windows). The arrow to
/// kernel record j is 2^47 + j, to memory-operation record j 2^47 + 2^46 + j (record indices are 32-bit);
/// plus the log's base, index << 48.
constexpr uint64_t kFlowBit = uint64_t(1) << 47;
constexpr uint64_t kMemFlowBit = uint64_t(1) << 46;

/// Midpoint of [a, b]; a when b is not after a.
uint64_t midpoint(uint64_t a, uint64_t b) { return b > a ? a + (b - a) / 2 : a; }

/// Where the arrow from a launch call [enter, exit] to GPU work [start, end] it issued (a kernel, a memory
/// operation) starts and ends: the start inside the call, at its middle or at the work's start if that
/// comes first (a kernel often starts before its launch call returns), never before the call's enter;
/// the end at the middle of the work, so that each is inside the slice it binds to ("s" to the enclosing
/// slice, "f" with "bp":"e" too) and the arrow never points back in time (start <= end). nullopt when
/// the work ended before the call began (only work without GPU times, start = end = 0, in the shipped
/// logs): no arrow could go forward to it.
struct FlowPoints {
  uint64_t start_ts, end_ts;
};
std::optional<FlowPoints> flowPoints(uint64_t enter, uint64_t exit, uint64_t start, uint64_t end) {
  exit = std::max(exit, enter);
  end = std::max(end, start);
  const uint64_t from = std::max(enter, std::min(midpoint(enter, exit), start));
  const uint64_t to = std::max(midpoint(start, end), from);
  if (to > end) return std::nullopt;
  return FlowPoints{from, to};
}

/// The trace pid of GPU `device` of the log `ix`.
uint32_t gpuPid(const LogIndex& ix, uint32_t device) { return 0x40000000u + (ix.index() << 10) + (device & 0x3FF); }

/// Writes one event of a trace, after a comma but for the first.
struct EventSink {
  std::ostream& out;
  bool& first;
  void operator()(const std::string& s) {
    out << (first ? "\n" : ",\n") << s;
    first = false;
  }
};

/// The lane of each record of one log on its track (overlapping slices of one thread or stream go to
/// lanes of their own, assignLanes()), and which (thread, lane) and (device, stream, lane) tracks are used.
struct TraceLanes {
  std::vector<uint32_t> range_lane, launch_lane, kernel_lane, mem_lane;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> cpu_lanes;             // (tid, lane) -> used
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> gpu_lanes;  // (device, stream, lane)
};

/// Lanes: CPU thread tracks hold push/pop ranges and launches; GPU stream tracks hold kernels (none
/// without `gpu_time`) and memory operations.
TraceLanes assignTraceLanes(const LogData& d, bool gpu_time) {
  TraceLanes t;
  std::unordered_map<uint32_t, std::vector<std::pair<uint64_t, uint64_t>>> cpu_spans;
  std::unordered_map<uint32_t, std::vector<uint32_t>> cpu_items;  // per tid: range i or launch (1<<31)|i
  for (uint32_t i = 0; i < d.ranges.size(); ++i) {
    const auto& r = d.ranges[i];
    if (r.flags & kRangeProcessWide) continue;
    cpu_spans[r.thread_id].emplace_back(r.begin_ns, std::max(r.end_ns, r.begin_ns));
    cpu_items[r.thread_id].push_back(i);
  }
  for (uint32_t i = 0; i < d.launches.size(); ++i) {
    const auto& l = d.launches[i];
    cpu_spans[l.thread_id].emplace_back(l.enter_ns, std::max(l.exit_ns, l.enter_ns));
    cpu_items[l.thread_id].push_back((1u << 31) | i);
  }
  t.range_lane.assign(d.ranges.size(), 0);
  t.launch_lane.assign(d.launches.size(), 0);
  for (auto& [tid, spans] : cpu_spans) {
    auto lanes = assignLanes(spans);
    const auto& items = cpu_items[tid];
    for (size_t j = 0; j < items.size(); ++j) {
      if (items[j] >> 31) t.launch_lane[items[j] & 0x7FFFFFFF] = lanes[j];
      else t.range_lane[items[j]] = lanes[j];
      t.cpu_lanes[{tid, lanes[j]}] = 1;
    }
  }
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<uint64_t, uint64_t>>> gpu_spans;  // (device, stream)
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> gpu_items;
  for (uint32_t i = 0; i < d.kernels.size() && gpu_time; ++i) {
    const auto& k = d.kernels[i];
    gpu_spans[{k.device_id, k.stream_id}].emplace_back(k.start_ns, std::max(k.end_ns, k.start_ns));
    gpu_items[{k.device_id, k.stream_id}].push_back(i);
  }
  for (uint32_t i = 0; i < d.mem_ops.size(); ++i) {
    const auto& m = d.mem_ops[i];
    gpu_spans[{m.device_id, m.stream_id}].emplace_back(m.start_ns, std::max(m.end_ns, m.start_ns));
    gpu_items[{m.device_id, m.stream_id}].push_back((1u << 31) | i);
  }
  t.kernel_lane.assign(d.kernels.size(), 0);
  t.mem_lane.assign(d.mem_ops.size(), 0);
  for (auto& [key, spans] : gpu_spans) {
    auto lanes = assignLanes(spans);
    const auto& items = gpu_items[key];
    for (size_t j = 0; j < items.size(); ++j) {
      if (items[j] >> 31) t.mem_lane[items[j] & 0x7FFFFFFF] = lanes[j];
      else t.kernel_lane[items[j]] = lanes[j];
      t.gpu_lanes[{key.first, key.second, lanes[j]}] = 1;
    }
  }

  return t;
}

/// The metadata events of one log: process and thread names, and sort order (CPU process first, then its GPUs).
void emitTrackNames(EventSink& emit, const LogIndex& ix, const TraceLanes& t, uint32_t cpu_pid) {
  const LogData& d = ix.data();
  auto gpuPid = [&](uint32_t device) { return kc::gpuPid(ix, device); };
  std::string host = d.meta("host");
  std::string command = ellipsize(d.meta("command_line"), 80);
  std::string pname = fmt::format("{}{}{}", command.empty() ? "process" : command, host.empty() ? "" : " @ ", host);
  emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", cpu_pid, jsonQuote(pname)));
  emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})", cpu_pid,
                   ix.index() * 2048));
  for (auto& [key, used] : t.cpu_lanes) {
    auto [tid, lane] = key;
    std::string tname = tid == ix.pid() ? fmt::format("main thread {}", tid) : fmt::format("thread {}", tid);
    if (lane) tname += fmt::format(" (overlap {})", lane);
    emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", cpu_pid,
                     laneTid(tid, lane), jsonQuote(tname)));
  }
  std::map<uint32_t, bool> devices;
  for (auto& [key, used] : t.gpu_lanes) devices[std::get<0>(key)] = true;
  for (auto& [device, used] : devices) {
    std::string gpu = d.meta(fmt::format("gpu.{}", device));
    std::string name = fmt::format("GPU {}{}{} (pid {}{}{})", device, gpu.empty() ? "" : ": ", gpu, ix.pid(),
                                   host.empty() ? "" : " @ ", host);
    emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", gpuPid(device),
                     jsonQuote(name)));
    emit(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                     gpuPid(device), ix.index() * 2048 + 1 + device));
  }
  for (auto& [key, used] : t.gpu_lanes) {
    auto [device, stream, lane] = key;
    std::string tname = fmt::format("stream {}", stream);
    if (lane) tname += fmt::format(" (overlap {})", lane);
    uint32_t tid = laneTid(stream, lane);
    emit(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", gpuPid(device), tid,
                     jsonQuote(tname)));
    emit(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                     gpuPid(device), tid, stream * 64 + lane));
  }
}

/// The timed events of one log, sorted by time (enclosing slices before the slices inside them, flows after
/// slices); without `gpu_time`, a kernel is an instant at its launch call.
std::vector<TraceEvent> timedEvents(const LogIndex& ix, const TraceLanes& t, bool gpu_time) {
  const LogData& d = ix.data();
  std::vector<TraceEvent> events;
  events.reserve(d.ranges.size() + d.launches.size() + 3 * d.kernels.size() + 3 * d.mem_ops.size());
  for (uint32_t i = 0; i < d.mem_ops.size(); ++i) {
    const auto& m = d.mem_ops[i];
    uint64_t dur = m.end_ns > m.start_ns ? m.end_ns - m.start_ns : 0;
    events.push_back({m.start_ns, dur, 0, kMemSlice, t.mem_lane[i], i});
    const auto call = ix.launchOfMemOp(i);
    if (!call) continue;
    const auto& l = d.launches[*call];
    if (auto at = flowPoints(l.enter_ns, l.exit_ns, m.start_ns, m.end_ns)) {
      events.push_back({at->start_ts, 0, 1, kMemFlowStart, t.launch_lane[*call], i});
      events.push_back({at->end_ts, 0, 1, kMemFlowEnd, t.mem_lane[i], i});
    }
  }
  for (uint32_t i = 0; i < d.ranges.size(); ++i) {
    const auto& r = d.ranges[i];
    uint64_t dur = r.end_ns > r.begin_ns ? r.end_ns - r.begin_ns : 0;
    if (r.flags & kRangeProcessWide) {
      events.push_back({r.begin_ns, dur, 0, kRangeAsyncBegin, 0, i});
      events.push_back({r.begin_ns + dur, 0, 0, kRangeAsyncEnd, 0, i});
    } else {
      events.push_back({r.begin_ns, dur, 0, kRangeSlice, t.range_lane[i], i});
    }
  }
  for (uint32_t i = 0; i < d.launches.size(); ++i) {
    const auto& l = d.launches[i];
    uint64_t dur = l.exit_ns > l.enter_ns ? l.exit_ns - l.enter_ns : 0;
    events.push_back({l.enter_ns, dur, 0, kLaunchSlice, t.launch_lane[i], i});
  }
  for (uint32_t i = 0; i < d.kernels.size(); ++i) {
    const auto& k = d.kernels[i];
    const auto launch = ix.launchOfKernel(i);
    if (!gpu_time) {  // at the middle of its launch call (on that call's lane), else at its record's time
      events.push_back({launch ? midpoint(d.launches[*launch].enter_ns, d.launches[*launch].exit_ns) : k.start_ns, 0,
                        1, kKernelInstant, launch ? t.launch_lane[*launch] : 0, i});
      continue;
    }
    uint64_t dur = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
    events.push_back({k.start_ns, dur, 0, kKernelSlice, t.kernel_lane[i], i});
    if (!launch) continue;
    const auto& l = d.launches[*launch];
    if (auto at = flowPoints(l.enter_ns, l.exit_ns, k.start_ns, k.end_ns)) {
      events.push_back({at->start_ts, 0, 1, kFlowStart, t.launch_lane[*launch], i});
      events.push_back({at->end_ts, 0, 1, kFlowEnd, t.kernel_lane[i], i});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const TraceEvent& a, const TraceEvent& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.order != b.order) return a.order < b.order;
    return a.dur > b.dur;
  });
  return events;
}

void writeLogEvents(std::ostream& out, const LogIndex& ix, uint32_t cpu_pid, bool& first) {
  const LogData& d = ix.data();
  const uint64_t flow_base = uint64_t(ix.index()) << 48;
  EventSink emit{out, first};
  auto gpuPid = [&](uint32_t device) { return kc::gpuPid(ix, device); };
  // KCOUNT_GPU_TIME=0: kernels have no GPU time, device or stream (written as 0). They get no GPU track:
  // each is an instant event on the thread that launched it, at its launch call.
  const bool gpu_time = gpuTimeRecorded(d);
  const TraceLanes lanes = assignTraceLanes(d, gpu_time);
  emitTrackNames(emit, ix, lanes, cpu_pid);
  const std::vector<TraceEvent> events = timedEvents(ix, lanes, gpu_time);

  std::vector<std::string> escaped_strings(d.strings.size());  // escaped once per string id
  auto qs = [&](uint32_t id) -> const std::string& {
    static const std::string bad = "\"<bad string id>\"";
    if (id >= escaped_strings.size()) return bad;
    if (escaped_strings[id].empty()) escaped_strings[id] = jsonQuote(d.str(id));
    return escaped_strings[id];
  };
  auto scopeName = [&](uint32_t scope) -> std::string {
    if (scope < d.scopes.size() && scope != kRootScope) return qs(d.scopes[scope].name_id);
    return jsonQuote(ix.scopePath(scope));
  };
  for (const auto& e : events) {
    switch (e.kind) {
      case kRangeSlice: {
        const auto& r = d.ranges[e.index];
        uint32_t domain = r.scope_id < d.scopes.size() ? d.scopes[r.scope_id].domain_id : kNoString;
        emit(fmt::format(
            R"({{"ph":"X","cat":"nvtx","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"range":{}{}{}}}}})",
            scopeName(r.scope_id), cpu_pid, laneTid(r.thread_id, e.lane), micros(e.ts), micros(e.dur),
            jsonQuote(ix.scopePath(r.scope_id)), domain != kNoString ? ",\"domain\":" + qs(domain) : "",
            (r.flags & kRangeUnclosed) ? ",\"unclosed\":true" : ""));
        break;
      }
      case kRangeAsyncBegin:
      case kRangeAsyncEnd: {
        const auto& r = d.ranges[e.index];
        emit(fmt::format(R"({{"ph":"{}","cat":"nvtx","name":{},"id2":{{"local":"{:x}"}},"pid":{},"tid":{},"ts":{}{}}})",
                         e.kind == kRangeAsyncBegin ? "b" : "e", scopeName(r.scope_id), e.index, cpu_pid,
                         e.kind == kRangeAsyncBegin ? r.thread_id : r.end_thread_id, micros(e.ts),
                         e.kind == kRangeAsyncBegin
                             ? fmt::format(R"(,"args":{{"range":{}{}}})", jsonQuote(ix.scopePath(r.scope_id)),
                                           (r.flags & kRangeUnclosed) ? ",\"unclosed\":true" : "")
                             : std::string()));
        break;
      }
      case kLaunchSlice: {
        const auto& l = d.launches[e.index];
        const bool memory = ix.isMemoryCall(e.index);
        emit(fmt::format(
            R"({{"ph":"X","cat":"{}","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"correlation id":{},"{}":{},"range":{},"cbid":{}{}{}}}}})",
            memory ? "cuda_api_memory" : "cuda_api", qs(l.api_id), cpu_pid, laneTid(l.thread_id, e.lane), micros(e.ts),
            micros(e.dur), l.correlation_id, memory ? "memory operations" : "kernels", ix.kernelsOfLaunch(e.index),
            jsonQuote(ix.scopePath(l.scope_id)), l.cbid, l.is_graph_launch ? ",\"graph launch\":true" : "",
            (l.flags & kLaunchCaptured) ? ",\"captured\":true" : ""));
        break;
      }
      case kKernelSlice: {
        const auto& k = d.kernels[e.index];
        const auto& name = ix.kernelName(k.name_id);
        auto launch = ix.launchOfKernel(e.index);
        std::string range = launch ? jsonQuote(ix.scopePath(d.launches[*launch].scope_id)) : "null";
        std::string graph = k.graph_id ? fmt::format(R"(,"graph id":{},"graph node id":{})", k.graph_id, k.graph_node_id)
                                       : std::string();
        emit(fmt::format(
            R"({{"ph":"X","cat":"kernel","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"name":{},"correlation id":{},"range":{},"device":{},"stream":{},"grid":"[{}, {}, {}]","block":"[{}, {}, {}]","registers per thread":{},"shared memory bytes":{}{}}}}})",
            jsonQuote(name.trace_name), gpuPid(k.device_id), laneTid(k.stream_id, e.lane), micros(e.ts), micros(e.dur),
            jsonQuote(name.demangled), k.correlation_id, range, k.device_id, k.stream_id, k.grid[0], k.grid[1], k.grid[2],
            k.block[0], k.block[1], k.block[2], k.registers, k.shared_bytes, graph));
        break;
      }
      case kKernelInstant: {
        const auto& k = d.kernels[e.index];
        const auto& name = ix.kernelName(k.name_id);
        auto launch = ix.launchOfKernel(e.index);
        const uint32_t tid = launch ? laneTid(d.launches[*launch].thread_id, e.lane) : ix.pid();
        std::string range = launch ? jsonQuote(ix.scopePath(d.launches[*launch].scope_id)) : "null";
        emit(fmt::format(
            R"x({{"ph":"i","s":"t","cat":"kernel_launched","name":{},"pid":{},"tid":{},"ts":{},"args":{{"name":{},"correlation id":{},"range":{},"gpu time":"not recorded (KCOUNT_GPU_TIME=0)"}}}})x",
            jsonQuote(name.trace_name), cpu_pid, tid, micros(e.ts), jsonQuote(name.demangled), k.correlation_id, range));
        break;
      }
      case kMemSlice: {
        const auto& m = d.mem_ops[e.index];
        auto call = ix.launchOfMemOp(e.index);
        const bool graph = m.kind == static_cast<uint8_t>(MemOpKind::kGraph);
        emit(fmt::format(
            R"({{"ph":"X","cat":"{}","name":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"bytes":{},"correlation id":{},"range":{},"copy kind":{}}}}})",
            graph ? "graph" : "memory", gpuOpKind(m) == "memcpy" ? memcpyName(m.copy_kind) : std::string(gpuOpKind(m)), gpuPid(m.device_id), laneTid(m.stream_id, e.lane),
            micros(e.ts), micros(e.dur), m.bytes, m.correlation_id,
            call ? jsonQuote(ix.scopePath(d.launches[*call].scope_id)) : "null", m.copy_kind));
        break;
      }
      case kFlowStart:
      case kMemFlowStart: {
        const bool memory = e.kind == kMemFlowStart;
        const auto& l = d.launches[*(memory ? ix.launchOfMemOp(e.index) : ix.launchOfKernel(e.index))];
        const char* cat = memory ? "memory" : "launch";
        emit(fmt::format(R"({{"ph":"s","cat":"{}","name":"{}","id":{},"pid":{},"tid":{},"ts":{}}})", cat, cat,
                         flow_base | kFlowBit | (memory ? kMemFlowBit : 0) | e.index, cpu_pid,
                         laneTid(l.thread_id, e.lane), micros(e.ts)));
        break;
      }
      case kFlowEnd: {
        const auto& k = d.kernels[e.index];
        emit(fmt::format(R"({{"ph":"f","bp":"e","cat":"launch","name":"launch","id":{},"pid":{},"tid":{},"ts":{}}})",
                         flow_base | kFlowBit | e.index, gpuPid(k.device_id), laneTid(k.stream_id, e.lane),
                         micros(e.ts)));
        break;
      }
      case kMemFlowEnd: {
        const auto& m = d.mem_ops[e.index];
        emit(fmt::format(R"({{"ph":"f","bp":"e","cat":"memory","name":"memory","id":{},"pid":{},"tid":{},"ts":{}}})",
                         flow_base | kFlowBit | kMemFlowBit | e.index, gpuPid(m.device_id),
                         laneTid(m.stream_id, e.lane), micros(e.ts)));
        break;
      }
    }
  }
}

}  // namespace

ChromeTraceEstimate estimateChromeTrace(const std::vector<LoadedLog>& logs) {
  // Bytes per event besides its names: the fixed JSON text of each event kind in writeLogEvents, with
  // typical widths of its numbers (timestamps of 16 characters, pids and tids of 5 to 10, flow ids of 15).
  constexpr uint64_t kRange = 120, kLaunch = 165, kKernel = 300, kFlow = 110, kMem = 215;
  ChromeTraceEstimate e;
  for (uint32_t li = 0; li < logs.size(); ++li) {
    const LogData& d = logs[li].data;
    std::vector<uint64_t> path_len(d.scopes.size()), name_len(d.scopes.size());
    for (uint32_t s = 0; s < d.scopes.size(); ++s) {
      path_len[s] = d.scopePath(s).size() + 2;
      name_len[s] = s == kRootScope ? path_len[s] : d.str(d.scopes[s].name_id).size() + 2;
    }
    auto pathLen = [&](uint32_t s) -> uint64_t { return s < path_len.size() ? path_len[s] : 24; };
    const LaunchJoin join(d);  // each kernel's and memory operation's launch, within its capture window
    const bool gpu_time = gpuTimeRecorded(d);
    // An arrow ("s" and "f") from the launch call to each kernel and memory operation joined to it that
    // does not end before the call began (flowPoints()).
    auto arrow = [&](size_t launch, uint64_t start, uint64_t end) -> uint64_t {
      const LaunchBody& l = d.launches[launch];
      return flowPoints(l.enter_ns, l.exit_ns, start, end) ? 2 : 0;
    };
    for (const auto& r : d.ranges) {
      const uint64_t n = (r.scope_id < name_len.size() ? name_len[r.scope_id] : 24) + pathLen(r.scope_id);
      if (r.flags & kRangeProcessWide) {
        e.events += 2;
        e.bytes += 2 * kRange + n;
      } else {
        e.events += 1;
        e.bytes += kRange + n;
      }
    }
    for (size_t i = 0; i < d.launches.size(); ++i) {
      const LaunchBody& l = d.launches[i];
      e.events += 1;
      e.bytes += kLaunch + d.str(l.api_id).size() + pathLen(l.scope_id);
    }
    std::unordered_map<uint32_t, uint64_t> kernel_name_len;  // short + demangled name, quoted
    for (size_t j = 0; j < d.kernels.size(); ++j) {
      const KernelBody& k = d.kernels[j];
      auto it = kernel_name_len.find(k.name_id);
      if (it == kernel_name_len.end()) {
        const std::string_view raw = d.str(k.name_id);
        it = kernel_name_len.emplace(k.name_id, shortKernelName(raw).size() + demangleKernelName(raw).size() + 4).first;
      }
      e.events += 1;
      e.bytes += kKernel + it->second;
      if (auto launch = join.ofKernel(j)) {
        const uint64_t flows = gpu_time ? arrow(*launch, k.start_ns, k.end_ns) : 0;  // else an instant event
        e.events += flows;
        e.bytes += flows * kFlow + pathLen(d.launches[*launch].scope_id);
      } else {
        e.bytes += 4;  // "range":null
      }
    }
    for (size_t j = 0; j < d.mem_ops.size(); ++j) {
      const auto launch = join.ofMemOp(j);
      const uint64_t flows = launch ? arrow(*launch, d.mem_ops[j].start_ns, d.mem_ops[j].end_ns) : 0;
      e.events += 1 + flows;
      e.bytes += kMem + flows * kFlow + (launch ? pathLen(d.launches[*launch].scope_id) : 4);
    }
  }
  return e;
}

namespace {

// ---------------------------------------------------------------------------------------------------
// Tables

const std::vector<ExportTable>& tables() {
  using K = ColumnKind;
  static const std::vector<ExportTable> t = {
      {"processes",
       {{"processId", K::kInt, true}, {"globalPid", K::kInt, true}, {"pid", K::kInt, true},
        {"host", K::kText, true}, {"commandLine", K::kText, true}, {"logPath", K::kText, true},
        {"formatVersion", K::kText, true}, {"complete", K::kInt, true}, {"damaged", K::kInt, true},
        {"launches", K::kInt, true}, {"kernels", K::kInt, true}, {"ranges", K::kInt, true},
        {"droppedHostRecords", K::kInt, true}, {"droppedActivityRecords", K::kInt, true},
        {"memoryCalls", K::kInt, true}}},
      {"metadata", {{"processId", K::kInt, true}, {"name", K::kText, true}, {"value", K::kText, true}}},
      {"scopes",
       {{"processId", K::kInt, true}, {"scopeId", K::kInt, true}, {"parentId", K::kInt, true},
        {"name", K::kName, true}, {"domain", K::kName, true}, {"path", K::kText, true}, {"depth", K::kInt, true}}},
      {"ranges",
       {{"processId", K::kInt, true}, {"start", K::kInt, true}, {"end", K::kInt, true},
        {"scopeId", K::kInt, true}, {"name", K::kName, true}, {"path", K::kText, false},
        {"globalTid", K::kInt, true}, {"tid", K::kInt, true}, {"endTid", K::kInt, true},
        {"processWide", K::kInt, true}, {"unclosed", K::kInt, true}}},
      {"launches",
       {{"processId", K::kInt, true}, {"correlationId", K::kInt, true}, {"start", K::kInt, true},
        {"end", K::kInt, true}, {"scopeId", K::kInt, true}, {"path", K::kText, false},
        {"globalTid", K::kInt, true}, {"tid", K::kInt, true}, {"name", K::kName, true}, {"cbid", K::kInt, true},
        {"apiDomain", K::kText, true}, {"isGraphLaunch", K::kInt, true}, {"captured", K::kInt, true},
        {"kernels", K::kInt, true}, {"segment", K::kInt, true}}},
      {"kernels",
       {{"processId", K::kInt, true}, {"globalPid", K::kInt, true}, {"correlationId", K::kInt, true},
        {"start", K::kInt, true}, {"end", K::kInt, true}, {"deviceId", K::kInt, true},
        {"contextId", K::kInt, true}, {"streamId", K::kInt, true}, {"scopeId", K::kInt, true},
        {"path", K::kText, false}, {"launchGlobalTid", K::kInt, true}, {"shortName", K::kName, true},
        {"demangledName", K::kName, true}, {"mangledName", K::kName, true}, {"category", K::kName, true},
        {"library", K::kName, true}, {"gridX", K::kInt, true},
        {"gridY", K::kInt, true}, {"gridZ", K::kInt, true}, {"blockX", K::kInt, true}, {"blockY", K::kInt, true},
        {"blockZ", K::kInt, true}, {"clusterX", K::kInt, true}, {"clusterY", K::kInt, true},
        {"clusterZ", K::kInt, true}, {"registersPerThread", K::kInt, true}, {"sharedMemoryBytes", K::kInt, true},
        {"graphId", K::kInt, true}, {"graphNodeId", K::kInt, true}, {"segment", K::kInt, true}}},
      {"memops",
       {{"processId", K::kInt, true}, {"globalPid", K::kInt, true}, {"correlationId", K::kInt, true},
        {"start", K::kInt, true}, {"end", K::kInt, true}, {"deviceId", K::kInt, true}, {"streamId", K::kInt, true},
        {"kind", K::kText, true}, {"copyKind", K::kInt, true}, {"bytes", K::kInt, true}, {"scopeId", K::kInt, true},
        {"path", K::kText, false}, {"callGlobalTid", K::kInt, true}, {"callName", K::kName, true},
        {"callStart", K::kInt, true}, {"callEnd", K::kInt, true}, {"segment", K::kInt, true}}},
  };
  return t;
}

void emitTables(const std::vector<LogIndex>& logs, TableSink& sink) {
  const auto& defs = tables();
  std::vector<ExportCell> c;
  auto begin = [&](size_t t) {
    sink.beginTable(defs[t]);
    c.assign(defs[t].columns.size(), std::monostate{});
  };
  // processes
  begin(0);
  for (const auto& ix : logs) {
    const LogData& d = ix.data();
    std::string version = fmt::format("{}.{}", d.major, d.minor);
    std::string host = d.meta("host"), cmd = d.meta("command_line");
    // Kernel launch calls, as the launches table and kcount summary count them; memcpy/memset calls (their
    // launch records carry kLaunchMemOp) apart, in memoryCalls.
    const auto memory_calls = std::count_if(d.launches.begin(), d.launches.end(),
                                            [](const LaunchBody& l) { return (l.flags & kLaunchMemOp) != 0; });
    c = {int64_t(ix.index()), ix.globalPid(), int64_t(ix.pid()), std::string_view(host), std::string_view(cmd),
         std::string_view(ix.path()), std::string_view(version), int64_t(d.complete), int64_t(d.damaged()),
         u64(d.launches.size() - memory_calls), u64(d.kernels.size()), u64(d.ranges.size()),
         u64(d.stats.dropped_host_records), u64(d.stats.dropped_activity_records), u64(memory_calls)};
    sink.row(c);
  }
  sink.endTable();
  // metadata
  begin(1);
  for (const auto& ix : logs)
    for (const auto& [k, v] : ix.data().metadata) {
      c = {int64_t(ix.index()), std::string_view(k), std::string_view(v)};
      sink.row(c);
    }
  sink.endTable();
  // scopes
  begin(2);
  for (const auto& ix : logs) {
    const LogData& d = ix.data();
    for (uint32_t s = 0; s < d.scopes.size(); ++s) {
      if (!ix.scopeListed(s)) continue;
      const auto& sc = d.scopes[s];
      c = {int64_t(ix.index()), int64_t(d.logScopeId(s)),
           s == kRootScope ? ExportCell{} : ExportCell{int64_t(d.logScopeId(sc.parent_id))},
           s == kRootScope ? ExportCell{std::string_view("(no range)")} : ExportCell{d.str(sc.name_id)},
           sc.domain_id == kNoString ? ExportCell{} : ExportCell{d.str(sc.domain_id)}, ix.scopePath(s),
           int64_t(ix.scopeDepth(s))};
      sink.row(c);
    }
  }
  sink.endTable();
  // ranges
  begin(3);
  for (const auto& ix : logs) {
    const LogData& d = ix.data();
    for (const auto& r : d.ranges) {
      std::string_view name = r.scope_id < d.scopes.size() ? d.str(d.scopes[r.scope_id].name_id) : ix.scopePath(r.scope_id);
      c = {int64_t(ix.index()), u64(r.begin_ns), u64(r.end_ns), int64_t(d.logScopeId(r.scope_id)), name, ix.scopePath(r.scope_id),
           ix.globalTid(r.thread_id), int64_t(r.thread_id), int64_t(r.end_thread_id),
           int64_t((r.flags & kRangeProcessWide) != 0), int64_t((r.flags & kRangeUnclosed) != 0)};
      sink.row(c);
    }
  }
  sink.endTable();
  // launches
  begin(4);
  for (const auto& ix : logs) {
    const LogData& d = ix.data();
    for (uint32_t i = 0; i < d.launches.size(); ++i) {
      const auto& l = d.launches[i];
      if (ix.isMemoryCall(i)) continue;  // memcpy/memset calls: table memops
      c = {int64_t(ix.index()), u64(l.correlation_id), u64(l.enter_ns), u64(l.exit_ns), int64_t(d.logScopeId(l.scope_id)),
           ix.scopePath(l.scope_id), ix.globalTid(l.thread_id), int64_t(l.thread_id), d.str(l.api_id),
           int64_t(l.cbid), std::string_view(apiDomainName(l.domain)), int64_t(l.is_graph_launch != 0),
           int64_t((l.flags & kLaunchCaptured) != 0), int64_t(ix.kernelsOfLaunch(i)), ix.launchSegment(i)};
      sink.row(c);
    }
  }
  sink.endTable();
  // kernels
  begin(5);
  for (const auto& ix : logs) {
    const LogData& d = ix.data();
    const bool gpu_time = gpuTimeRecorded(d);
    for (size_t j = 0; j < d.kernels.size(); ++j) {
      const auto& k = d.kernels[j];
      const auto& name = ix.kernelName(k.name_id);
      auto launch = ix.launchOfKernel(j);
      ExportCell scope, path, tid;
      if (launch) {
        const auto& l = d.launches[*launch];
        scope = int64_t(d.logScopeId(l.scope_id));
        path = ix.scopePath(l.scope_id);
        tid = ix.globalTid(l.thread_id);
      }
      // KCOUNT_GPU_TIME=0: what only the kernel's activity record gives (GPU start/end, device, context,
      // stream, grid, block, cluster, registers, shared memory, graph) is null, not 0.
      auto g = [&](ExportCell v) { return gpu_time ? v : ExportCell{}; };
      c = {int64_t(ix.index()), ix.globalPid(), u64(k.correlation_id), g(u64(k.start_ns)), g(u64(k.end_ns)),
           g(int64_t(k.device_id)), g(int64_t(k.context_id)), g(int64_t(k.stream_id)), scope, path, tid,
           std::string_view(name.short_name), std::string_view(name.demangled), d.str(k.name_id),
           std::string_view(name.category),
           name.library.empty() ? ExportCell{} : ExportCell{std::string_view(name.library)}, g(int64_t(k.grid[0])),
           g(int64_t(k.grid[1])), g(int64_t(k.grid[2])), g(int64_t(k.block[0])), g(int64_t(k.block[1])),
           g(int64_t(k.block[2])), g(int64_t(k.cluster[0])), g(int64_t(k.cluster[1])), g(int64_t(k.cluster[2])),
           g(int64_t(k.registers)), g(int64_t(k.shared_bytes)), g(int64_t(k.graph_id)), g(u64(k.graph_node_id)),
           ix.kernelSegment(j)};
      sink.row(c);
    }
  }
  sink.endTable();
  // memory operations
  begin(6);
  for (const auto& ix : logs) {
    const LogData& d = ix.data();
    for (size_t j = 0; j < d.mem_ops.size(); ++j) {
      const auto& m = d.mem_ops[j];
      auto call = ix.launchOfMemOp(j);
      ExportCell scope, path, tid, name, start, end;
      if (call) {
        const auto& l = d.launches[*call];
        scope = int64_t(d.logScopeId(l.scope_id));
        path = ix.scopePath(l.scope_id);
        tid = ix.globalTid(l.thread_id);
        name = d.str(l.api_id);
        start = u64(l.enter_ns);
        end = u64(l.exit_ns);
      }
      c = {int64_t(ix.index()), ix.globalPid(), u64(m.correlation_id), u64(m.start_ns), u64(m.end_ns),
           int64_t(m.device_id), int64_t(m.stream_id), gpuOpKind(m),
           int64_t(m.copy_kind), u64(m.bytes), scope, path, tid, name, start, end, ix.memOpSegment(j)};
      sink.row(c);
    }
  }
  sink.endTable();
}

// ---------------------------------------------------------------------------------------------------
// SQLite

// The text of `s` for sqlite3_bind_text: an empty view may have no data pointer (a default-constructed
// one, an empty range or kernel name), which SQLite binds as NULL; "" binds the empty text it is.
const char* textOrEmpty(std::string_view s) { return s.data() != nullptr ? s.data() : ""; }

// `s` as a TEXT value: SQLite stores whatever bytes it is given, and readers that decode TEXT as UTF-8
// (Python's sqlite3, pandas) fail on a name cut mid-character; each byte that is not part of a valid
// UTF-8 character becomes "\xHH" (escapeInvalidUtf8()), as in the CSV tables and the text tables, so that
// names that differ only there stay different strings. Valid text (nearly always) is returned as is,
// without a copy.
std::string_view validUtf8(std::string_view s, std::string& storage) {
  if (utf8::is_valid(s)) return s;
  storage = escapeInvalidUtf8(s);
  return storage;
}

class SqliteSink : public TableSink {
 public:
  /// A new database at `path` (any file there removed first); `shown` names it in messages.
  SqliteSink(const std::string& path, const std::string& shown) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw std::runtime_error("cannot create " + shown + ": " + msg);
    }
    exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;");
    exec("CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);");
    string_insert_ = prepare("INSERT INTO strings (id, value) VALUES (?, ?);");
  }
  ~SqliteSink() override {
    sqlite3_finalize(insert_);
    sqlite3_finalize(string_insert_);
    sqlite3_close(db_);
  }

  void beginTable(const ExportTable& t) override {
    table_ = &t;
    std::string create = fmt::format("CREATE TABLE {} (", t.name), insert = fmt::format("INSERT INTO {} VALUES (", t.name);
    bool first = true;
    for (const auto& col : t.columns) {
      if (!col.in_sqlite) continue;
      create += fmt::format("{}\"{}\" {}", first ? "" : ", ", col.name,
                            col.kind == ColumnKind::kText ? "TEXT" : col.kind == ColumnKind::kName ? "INTEGER REFERENCES strings(id)" : "INTEGER");
      insert += first ? "?" : ", ?";
      first = false;
    }
    exec(create + ");");
    sqlite3_finalize(insert_);
    insert_ = prepare(insert + ");");
  }

  void row(const std::vector<ExportCell>& cells) override {
    int p = 1;
    for (size_t i = 0; i < cells.size(); ++i) {
      const auto& col = table_->columns[i];
      if (!col.in_sqlite) continue;
      const auto& cell = cells[i];
      if (std::holds_alternative<std::monostate>(cell)) {
        sqlite3_bind_null(insert_, p);
      } else if (auto* v = std::get_if<int64_t>(&cell)) {
        sqlite3_bind_int64(insert_, p, *v);
      } else if (auto* u = std::get_if<uint64_t>(&cell)) {
        // SQLite's INTEGER is signed 64-bit: a value above INT64_MAX (a time past 2^63 ns) is stored as
        // INT64_MAX, the largest it holds, rather than wrapping to a negative number.
        sqlite3_bind_int64(insert_, p, static_cast<int64_t>(std::min<uint64_t>(*u, std::numeric_limits<int64_t>::max())));
      } else {
        std::string storage;
        auto s = validUtf8(std::get<std::string_view>(cell), storage);
        if (col.kind == ColumnKind::kName)
          sqlite3_bind_int64(insert_, p, intern(s));
        else
          sqlite3_bind_text(insert_, p, textOrEmpty(s), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      }
      ++p;
    }
    step(insert_);
  }

  void endTable() override {}

  /// Indexes for the joins users make, the Nsight-named views, then commit.
  void finish() {
    exec(R"sql(
CREATE INDEX launches_by_correlation ON launches (processId, correlationId);
CREATE INDEX kernels_by_correlation ON kernels (processId, correlationId);
CREATE INDEX kernels_by_scope ON kernels (processId, scopeId);
CREATE INDEX ranges_by_scope ON ranges (processId, scopeId);
CREATE INDEX memops_by_scope ON memops (processId, scopeId);
CREATE UNIQUE INDEX scopes_by_id ON scopes (processId, scopeId);
CREATE VIEW StringIds AS SELECT id, value FROM strings;
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS
  SELECT start, "end", deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName,
         mangledName, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, graphId, graphNodeId
  FROM kernels;
CREATE VIEW CUPTI_ACTIVITY_KIND_MEMCPY AS
  SELECT start, "end", deviceId, streamId, correlationId, globalPid, bytes, copyKind FROM memops WHERE kind = 'memcpy';
CREATE VIEW CUPTI_ACTIVITY_KIND_MEMSET AS
  SELECT start, "end", deviceId, streamId, correlationId, globalPid, bytes FROM memops WHERE kind = 'memset';
CREATE VIEW CUPTI_ACTIVITY_KIND_RUNTIME AS
  SELECT start, "end", globalTid, correlationId, name AS nameId, cbid FROM launches WHERE apiDomain = 'runtime';
CREATE VIEW CUPTI_ACTIVITY_KIND_DRIVER AS
  SELECT start, "end", globalTid, correlationId, name AS nameId, cbid FROM launches WHERE apiDomain = 'driver';
CREATE VIEW NVTX_EVENTS AS
  SELECT r.start, r."end", CASE r.processWide WHEN 1 THEN 60 ELSE 59 END AS eventType,
         s.value AS text, r.name AS textId, r.globalTid,
         (r.globalTid - r.tid + r.endTid) AS endGlobalTid, sc.domain AS domainId
  FROM ranges r JOIN strings s ON s.id = r.name
       LEFT JOIN scopes sc ON sc.processId = r.processId AND sc.scopeId = r.scopeId;
COMMIT;)sql");
  }

 private:
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw std::runtime_error("sqlite: " + msg);
    }
  }
  sqlite3_stmt* prepare(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_));
    return s;
  }
  void step(sqlite3_stmt* s) {
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("sqlite: ") + sqlite3_errmsg(db_));
  }
  int64_t intern(std::string_view s) {
    auto it = strings_.find(std::string(s));
    if (it != strings_.end()) return it->second;
    int64_t id = static_cast<int64_t>(strings_.size()) + 1;
    strings_.emplace(std::string(s), id);
    sqlite3_bind_int64(string_insert_, 1, id);
    sqlite3_bind_text(string_insert_, 2, textOrEmpty(s), static_cast<int>(s.size()), SQLITE_TRANSIENT);
    step(string_insert_);
    return id;
  }

  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* string_insert_ = nullptr;
  const ExportTable* table_ = nullptr;
  std::unordered_map<std::string, int64_t> strings_;
};

// ---------------------------------------------------------------------------------------------------
// CSV and JSON records

// csvField(): tools/text.h; writeCsvRow(): below, also written by `kcount diff --format csv`.

void writeCsvHeader(std::ostream& out, const ExportTable& t) {
  for (size_t i = 0; i < t.columns.size(); ++i) out << (i ? "," : "") << t.columns[i].name;
  out << '\n';
}

/// CSV tables (writeCsvHeader(), writeCsvRow()): each in its own file NAME.csv in a folder (writeCsv), or
/// one table on a stream (writeCsvTable; standard output for -o -). Tables not selected are skipped.
/// Throws std::runtime_error when a folder or file cannot be written.
class CsvSink : public TableSink {
 public:
  /// Every table, or only the one named `only` if it is not empty, to DIR/NAME.csv (the folder is created;
  /// a file of that name is replaced).
  CsvSink(std::string dir, std::string only)
      : dir_(std::move(dir)), only_(std::move(only)), all_(only_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw std::runtime_error("cannot write " + shownPath(dir_) + ": " + ec.message());
  }
  /// Only the table named `table`, to `out` (owned by the caller, written but not closed or checked).
  CsvSink(std::ostream& out, std::string table) : stream_(&out), only_(std::move(table)) {}

  void beginTable(const ExportTable& t) override {
    active_ = all_ || only_ == t.name;
    if (!active_) return;
    if (stream_ == nullptr) {
      auto file = std::filesystem::path(dir_) / (std::string(t.name) + ".csv");
      path_ = file.string();
      errno = 0;
      file_.open(file, std::ios::binary | std::ios::trunc);
      if (!file_) throw std::runtime_error("cannot write " + shownPath(path_) + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
    }
    writeCsvHeader(out(), t);
  }
  void row(const std::vector<ExportCell>& cells) override {
    if (active_) writeCsvRow(out(), cells);
  }
  void endTable() override {
    if (!active_) return;
    active_ = false;
    if (stream_ != nullptr) return;
    file_.close();
    if (!file_) throw std::runtime_error("cannot write " + shownPath(path_));
  }

 private:
  std::ostream& out() { return stream_ != nullptr ? *stream_ : file_; }

  std::ostream* stream_ = nullptr;  // the stream of the one-table form, else nullptr (a folder)
  std::string dir_, only_, path_;
  bool all_ = false;  // every table (a folder and no `only`)
  std::ofstream file_;
  bool active_ = false;
};

class JsonSink : public TableSink {
 public:
  explicit JsonSink(std::ostream& out) : out_(out) {}
  void beginTable(const ExportTable& t) override {
    table_ = &t;
    out_ << (first_table_ ? "{\n" : ",\n") << jsonQuote(t.name) << ": [";
    first_table_ = false;
    first_row_ = true;
  }
  void row(const std::vector<ExportCell>& cells) override {
    out_ << (first_row_ ? "\n  {" : ",\n  {");
    first_row_ = false;
    for (size_t i = 0; i < cells.size(); ++i) {
      out_ << (i ? "," : "") << '"' << table_->columns[i].name << "\":";
      if (auto* v = std::get_if<int64_t>(&cells[i])) out_ << *v;
      else if (auto* u = std::get_if<uint64_t>(&cells[i])) out_ << *u;
      else if (auto* s = std::get_if<std::string_view>(&cells[i])) out_ << jsonQuote(*s);
      else out_ << "null";
    }
    out_ << '}';
  }
  void endTable() override { out_ << (first_row_ ? "]" : "\n]"); }
  void finish() { out_ << (first_table_ ? "{}\n" : "\n}\n"); }

 private:
  std::ostream& out_;
  const ExportTable* table_ = nullptr;
  bool first_table_ = true, first_row_ = true;
};

}  // namespace

void writeCsvRow(std::ostream& out, const std::vector<ExportCell>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out << ',';
    if (auto* v = std::get_if<int64_t>(&cells[i])) out << *v;
    else if (auto* u = std::get_if<uint64_t>(&cells[i])) out << *u;
    else if (auto* s = std::get_if<std::string_view>(&cells[i])) out << csvField(*s);
  }
  out << '\n';
}

int64_t exportGlobalPid(uint32_t process_index, uint32_t pid) {
  return (int64_t(process_index & 0x7F) << 48) | (int64_t(pid & 0xFFFFFF) << 24);
}

void exportTables(const std::vector<LoadedLog>& logs, TableSink& sink) { emitTables(indexLogs(logs), sink); }

void writeChromeTrace(std::ostream& out, const std::vector<LoadedLog>& logs) {
  auto index = indexLogs(logs);
  out << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"kcount export\",\"clock\":\"CLOCK_MONOTONIC\"},"
         "\"traceEvents\":[";
  bool first = true;
  std::unordered_map<uint32_t, int> pids_used;
  for (const auto& ix : index) {
    // Two logs with one pid (two hosts) must not share a process in the trace.
    uint32_t pid = ix.pid();
    while (pids_used.count(pid)) pid += 1u << 22;
    pids_used[pid] = 1;
    writeLogEvents(out, ix, pid, first);
  }
  out << "\n]}\n";
}

void writeSqlite(const std::string& path, const std::vector<LoadedLog>& logs) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw std::runtime_error("cannot write a SQLite database to " + shownPath(path) + ": not a regular file");
  // Built beside `path` and renamed over it once complete: an export that fails part way (a full disk, a
  // SQLite error) leaves a file already at `path` as it was, and no half-written database.
  const std::string building = path + ".kcount-building";
  try {
    {
      SqliteSink sink(building, shownPath(path));
      emitTables(indexLogs(logs), sink);
      sink.finish();
    }
    std::filesystem::rename(building, path);
  } catch (const std::filesystem::filesystem_error& e) {
    std::filesystem::remove(building, ec);
    throw std::runtime_error("cannot write " + shownPath(path) + ": " + e.code().message());
  } catch (...) {
    std::filesystem::remove(building, ec);
    throw;
  }
}

void writeCsv(const std::string& dir, const std::vector<LoadedLog>& logs, const std::string& only) {
  CsvSink sink(dir, only);
  emitTables(indexLogs(logs), sink);
}

void writeCsvTable(std::ostream& out, const std::string& table, const std::vector<LoadedLog>& logs) {
  CsvSink sink(out, table);
  emitTables(indexLogs(logs), sink);
}

std::vector<std::string> csvTableNames() {
  std::vector<std::string> out;
  for (const auto& t : tables()) out.push_back(t.name);
  return out;
}

void writeJsonRecords(std::ostream& out, const std::vector<LoadedLog>& logs) {
  JsonSink sink(out);
  emitTables(indexLogs(logs), sink);
  sink.finish();
}

}  // namespace kc
