// Writes a kcount log from a line script, without CUDA: for tests of the tools on synthetic workloads
// (tests/cli/test_case_study.py builds a sweep-shaped log with it).
//
// Usage: kc_make_log OUT.kcount < SCRIPT
//
// Script lines (one thread, a host clock that advances 1000 ns per line):
//   meta KEY VALUE...        a metadata entry (VALUE: the rest of the line)
//   push NAME...             push a range (NAME: the rest of the line) on the thread
//   dpush DOMAIN NAME...     push a range in the NVTX domain DOMAIN (one word; push: the default domain)
//   pop                      pop the innermost range
//   unclosed                 pop it as the library writes a range still open at exit (kRangeUnclosed)
//   forget                   drop the innermost range without writing it (a range still open when the log
//                            closed, as in a killed process): no instance of it is recorded
//   kernel NS NAME...        one launch (cuLaunchKernelEx) in the innermost range and its kernel, NS ns long
//                            (an end past 2^64 - 1 ns is written as 2^64 - 1: kernel 18446744073709551615 K)
//   unmatched NS NAME...     a kernel record whose correlation id matches no launch
//   grid X Y Z               the grid of the kernel records that follow (default 1 1 1)
//   block X Y Z              their block (default 128 1 1)
//   launch                   one launch (cuLaunchKernelEx) in the innermost range without kernel record
//   graph                    one cudaGraphLaunch call in the innermost range, without kernel records
//   graphrun NS N NAME...    one cudaGraphLaunch call in the innermost range as KCOUNT_GPU_TIME=graphs records
//                            it: N kernel records of NAME counted at the launch (start == end) and the
//                            graph's GPU span (a MemOp record of kind graph), NS ns long
//   memcpy NS BYTES          one cudaMemcpy call (a launch record with kLaunchMemOp) in the innermost range
//                            and its memory operation (host to device), NS ns long
//   dropped host|activity N  the Stats record counts N host (or activity) records dropped
//   segment                  a Segment record: the capture window from the previous segment line (or the
//                            start) to now, holding the launches made in it (index 0, 1, ...); it ends
//                            the chunk, as the library does
//   snapshot                 a summary-mode snapshot (final, no rows): makes the log a summary-mode log
//   rangecost N T NS         a RangeCallbacks record (format 1.4) for the innermost open range: N callbacks
//                            inside it, T of them timed, NS ns in all (written as given, even T > N)
// Blank lines and lines starting with '#' are skipped. The log ends with a Stats and an End record.
// Exit status: 0, or 2 with a message for an unknown line, a pop with nothing pushed, or a write error.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collector/log_writer.h"

namespace {

struct Open {
  uint32_t scope;
  uint64_t begin_ns;
};

class Builder {
 public:
  explicit Builder(kc::LogWriter* w) : w_(w) {}

  uint32_t str(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(strings_.size()) + 1;
    strings_.emplace(s, id);
    w_->writeString(id, s);
    return id;
  }

  // `domain` empty: the default NVTX domain.
  uint32_t scope(uint32_t parent, const std::string& name, const std::string& domain) {
    auto key = std::make_tuple(parent, name, domain);
    auto it = scopes_.find(key);
    if (it != scopes_.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(scopes_.size()) + 1;
    scopes_.emplace(key, id);
    w_->writeScope(kc::ScopeBody{id, parent, str(name), domain.empty() ? kc::kNoString : str(domain)});
    return id;
  }

  void push(const std::string& name, const std::string& domain = {}) {
    const uint32_t parent = stack_.empty() ? kc::kRootScope : stack_.back().scope;
    stack_.push_back({scope(parent, name, domain), tick()});
  }

  bool pop(uint32_t flags = 0) {
    if (stack_.empty()) return false;
    kc::RangeBody r{};
    r.flags = flags;
    r.begin_ns = stack_.back().begin_ns;
    r.end_ns = tick();
    r.scope_id = stack_.back().scope;
    r.thread_id = kThread;
    r.end_thread_id = kThread;
    w_->writeRange(r);
    ++stats_.ranges;
    stack_.pop_back();
    return true;
  }

  /// kcount's own callbacks inside the innermost open range (false when none is open).
  bool rangeCost(uint64_t callbacks, uint64_t timed, uint64_t timed_ns) {
    if (stack_.empty()) return false;
    w_->writeRangeCallbacks(kc::RangeCallbacksBody{stack_.back().scope, 0, callbacks, timed, timed_ns});
    return true;
  }

  // A launch record (500 ns API call at `t`) in the innermost open range, counted in the stats.
  void writeLaunch(uint64_t corr, uint64_t t, const std::string& api, uint32_t cbid, kc::ApiDomain domain,
                   uint8_t flags, bool graph = false) {
    kc::LaunchBody l{};
    l.correlation_id = corr;
    l.enter_ns = t;
    l.exit_ns = t + 500;
    l.scope_id = stack_.empty() ? kc::kRootScope : stack_.back().scope;
    l.thread_id = kThread;
    l.api_id = str(api);
    l.cbid = cbid;
    l.domain = static_cast<uint8_t>(domain);
    l.flags = flags;
    l.is_graph_launch = graph ? 1 : 0;
    w_->writeLaunch(l);
    ++stats_.launches;
  }

  void kernel(uint64_t ns, const std::string& name, bool matched) {
    const uint64_t corr = ++correlation_;
    const uint64_t t = tick();
    if (matched) {
      writeLaunch(corr, t, "cuLaunchKernelEx", 652, kc::ApiDomain::kDriver, 0);
    } else {
      correlation_ += 1000000;  // past every launch
    }
    kc::KernelBody k{};
    k.correlation_id = matched ? corr : correlation_;
    k.start_ns = t + 600;
    k.end_ns = ns > UINT64_MAX - (t + 600) ? UINT64_MAX : t + 600 + ns;  // held at 2^64 - 1 (an implausible end)
    k.name_id = str(name);
    k.stream_id = 7;
    for (int i = 0; i < 3; ++i) {
      k.grid[i] = grid_[i];
      k.block[i] = block_[i];
    }
    w_->writeKernel(k);
    ++stats_.kernels;
    if (w_->chunkFull()) w_->flush();
  }

  /// A kernel launch, or a graph launch, whose kernels have no record.
  void launchOnly(bool graph) {
    const uint64_t corr = ++correlation_;
    if (graph)
      writeLaunch(corr, tick(), "cudaGraphLaunch", 311 /* CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 */,
                  kc::ApiDomain::kRuntime, 0, true);
    else
      writeLaunch(corr, tick(), "cuLaunchKernelEx", 652, kc::ApiDomain::kDriver, 0);
    if (w_->chunkFull()) w_->flush();
  }

  void memcpy(uint64_t ns, uint64_t bytes) {
    const uint64_t corr = ++correlation_;
    const uint64_t t = tick();
    writeLaunch(corr, t, "cudaMemcpy", 31 /* CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 */, kc::ApiDomain::kRuntime,
                kc::kLaunchMemOp);
    kc::MemOpBody m{};
    m.correlation_id = corr;
    m.start_ns = t + 600;
    m.end_ns = t + 600 + ns;
    m.bytes = bytes;
    m.stream_id = 7;
    m.kind = static_cast<uint8_t>(kc::MemOpKind::kMemcpy);
    m.copy_kind = 1;  // host to device
    w_->writeMemOp(m);
    if (w_->chunkFull()) w_->flush();
  }

  void graphRun(uint64_t ns, uint64_t kernels, const std::string& name) {
    const uint64_t corr = ++correlation_;
    const uint64_t t = tick();
    writeLaunch(corr, t, "cudaGraphLaunch", 311, kc::ApiDomain::kRuntime, 0, true);
    kc::KernelBody k{};
    k.correlation_id = corr;
    k.start_ns = k.end_ns = t + 500;
    k.name_id = str(name);
    for (uint64_t i = 0; i < kernels; ++i) w_->writeKernel(k);
    stats_.kernels += kernels;
    kc::MemOpBody m{};
    m.correlation_id = corr;
    m.start_ns = t + 600;
    m.end_ns = t + 600 + ns;
    m.stream_id = 7;
    m.kind = static_cast<uint8_t>(kc::MemOpKind::kGraph);
    w_->writeMemOp(m);
    if (w_->chunkFull()) w_->flush();
  }

  void shape(bool grid, const uint32_t (&v)[3]) { std::copy(std::begin(v), std::end(v), grid ? grid_ : block_); }

  bool forget() {
    if (stack_.empty()) return false;
    stack_.pop_back();
    return true;
  }

  void dropped(bool host, uint64_t n) { (host ? stats_.dropped_host_records : stats_.dropped_activity_records) += n; }

  void segment() {
    kc::SegmentBody sg{};
    sg.start_ns = segment_start_ns_;
    sg.stop_ns = tick();
    sg.first_correlation_id = correlation_ > segment_corr_ ? segment_corr_ + 1 : 0;
    sg.last_correlation_id = correlation_ > segment_corr_ ? correlation_ : 0;
    sg.index = segments_++;
    sg.reason_id = str(sg.index == 0 ? "start" : "ctl");
    sg.end_reason_id = str("ctl");
    w_->writeSegment(sg);
    w_->flush();  // the library ends a chunk after a Segment record (LogData::segment_marks)
    segment_start_ns_ = tick();
    segment_corr_ = correlation_;
  }

  void snapshot() {
    kc::SnapshotBeginBody b{};
    b.time_ns = tick();
    b.sequence = snapshots_;
    b.flags = kc::kSnapshotFinal;
    w_->writeSnapshotBegin(b);
    w_->writeSnapshotEnd(kc::SnapshotEndBody{snapshots_++, 0});
  }

  bool finish() {
    while (!stack_.empty()) pop();
    w_->writeStats(stats_);
    w_->writeEnd();
    return w_->flush();
  }

 private:
  static constexpr uint32_t kThread = 4242;
  uint64_t tick() { return now_ += 1000; }

  kc::LogWriter* w_;
  std::map<std::string, uint32_t> strings_;
  std::map<std::tuple<uint32_t, std::string, std::string>, uint32_t> scopes_;  // (parent, name, domain)
  std::vector<Open> stack_;
  kc::StatsBody stats_{};
  uint64_t correlation_ = 0;
  uint32_t grid_[3] = {1, 1, 1};
  uint32_t block_[3] = {128, 1, 1};
  uint32_t snapshots_ = 0;
  uint32_t segments_ = 0;
  uint64_t segment_corr_ = 0;
  uint64_t segment_start_ns_ = 1000000000;
  uint64_t now_ = 1000000000;
};

std::string rest(const std::string& line, size_t words) {
  size_t at = 0;
  for (size_t i = 0; i < words; ++i) {
    at = line.find(' ', at);
    if (at == std::string::npos) return "";
    ++at;
  }
  return line.substr(at);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kc_make_log OUT.kcount < SCRIPT\n");
    return 2;
  }
  kc::MemorySink sink;
  kc::LogWriter writer(&sink);
  Builder b(&writer);
  std::string line;
  size_t n = 0;
  while (std::getline(std::cin, line)) {
    ++n;
    if (line.empty() || line[0] == '#') continue;
    const std::string op = line.substr(0, line.find(' '));
    if (op == "meta") {
      const std::string kv = rest(line, 1);
      const size_t sp = kv.find(' ');
      writer.writeMetadata(kv.substr(0, sp), sp == std::string::npos ? "" : kv.substr(sp + 1));
    } else if (op == "push") {
      b.push(rest(line, 1));
    } else if (op == "dpush") {
      const std::string args = rest(line, 1);
      const size_t sp = args.find(' ');
      if (sp == std::string::npos || sp == 0) {
        std::fprintf(stderr, "kc_make_log: line %zu: dpush needs a domain and a name\n", n);
        return 2;
      }
      b.push(args.substr(sp + 1), args.substr(0, sp));
    } else if (op == "pop" || op == "unclosed") {
      if (!b.pop(op == "unclosed" ? kc::kRangeUnclosed : 0)) {
        std::fprintf(stderr, "kc_make_log: line %zu: pop with no range pushed\n", n);
        return 2;
      }
    } else if (op == "kernel" || op == "unmatched") {
      const std::string args = rest(line, 1);
      const size_t sp = args.find(' ');
      if (sp == std::string::npos) {
        std::fprintf(stderr, "kc_make_log: line %zu: kernel NS NAME expected\n", n);
        return 2;
      }
      uint64_t ns = 0;
      if (std::sscanf(args.c_str(), "%lu", &ns) != 1) {
        std::fprintf(stderr, "kc_make_log: line %zu: NS must be a number\n", n);
        return 2;
      }
      b.kernel(ns, args.substr(sp + 1), op == "kernel");
    } else if (op == "launch" || op == "graph") {
      b.launchOnly(op == "graph");
    } else if (op == "forget") {
      if (!b.forget()) {
        std::fprintf(stderr, "kc_make_log: line %zu: forget with no range pushed\n", n);
        return 2;
      }
    } else if (op == "graphrun") {
      uint64_t ns = 0, kernels = 0;
      int used = 0;
      if (std::sscanf(rest(line, 1).c_str(), "%lu %lu %n", &ns, &kernels, &used) != 2 || rest(line, 1).size() <= size_t(used)) {
        std::fprintf(stderr, "kc_make_log: line %zu: graphrun NS N NAME expected\n", n);
        return 2;
      }
      b.graphRun(ns, kernels, rest(line, 1).substr(used));
    } else if (op == "memcpy") {
      uint64_t ns = 0, bytes = 0;
      if (std::sscanf(rest(line, 1).c_str(), "%lu %lu", &ns, &bytes) != 2) {
        std::fprintf(stderr, "kc_make_log: line %zu: memcpy NS BYTES expected\n", n);
        return 2;
      }
      b.memcpy(ns, bytes);
    } else if (op == "dropped") {
      const std::string args = rest(line, 1);
      uint64_t count = 0;
      char which[16] = {};
      if (std::sscanf(args.c_str(), "%15s %lu", which, &count) != 2 ||
          (std::string(which) != "host" && std::string(which) != "activity")) {
        std::fprintf(stderr, "kc_make_log: line %zu: dropped host|activity N expected\n", n);
        return 2;
      }
      b.dropped(std::string(which) == "host", count);
    } else if (op == "grid" || op == "block") {
      uint32_t v[3] = {};
      if (std::sscanf(rest(line, 1).c_str(), "%u %u %u", &v[0], &v[1], &v[2]) != 3) {
        std::fprintf(stderr, "kc_make_log: line %zu: %s X Y Z expected\n", n, op.c_str());
        return 2;
      }
      b.shape(op == "grid", v);
    } else if (op == "segment") {
      b.segment();
    } else if (op == "rangecost") {
      uint64_t callbacks = 0, timed = 0, ns = 0;
      if (std::sscanf(rest(line, 1).c_str(), "%lu %lu %lu", &callbacks, &timed, &ns) != 3) {
        std::fprintf(stderr, "kc_make_log: line %zu: rangecost N T NS expected\n", n);
        return 2;
      }
      if (!b.rangeCost(callbacks, timed, ns)) {
        std::fprintf(stderr, "kc_make_log: line %zu: rangecost with no range pushed\n", n);
        return 2;
      }
    } else if (op == "snapshot") {
      b.snapshot();
    } else {
      std::fprintf(stderr, "kc_make_log: line %zu: unknown line '%s'\n", n, line.c_str());
      return 2;
    }
  }
  if (!b.finish()) {
    std::fprintf(stderr, "kc_make_log: encoding failed\n");
    return 2;
  }
  FILE* f = std::fopen(argv[1], "wb");
  if (!f || std::fwrite(sink.bytes.data(), 1, sink.bytes.size(), f) != sink.bytes.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "kc_make_log: cannot write %s\n", argv[1]);
    return 2;
  }
  return 0;
}
