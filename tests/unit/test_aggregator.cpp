// Summary mode (collector/aggregator.h): the in-process join and tallies, the snapshot records, and the
// reader's Summary of a summary-mode log compared field by field with the Summary of a trace log of the
// same synthetic run; log size independent of the number of steps; a cut snapshot.
#include <doctest/doctest.h>
#include <xxhash.h>

#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collector/aggregator.h"
#include "collector/analysis.h"
#include "collector/host_buffer.h"
#include "collector/log_reader.h"
#include "collector/saturating.h"
#include "collector/log_writer.h"
#include "tools/diff.h"
#include "tools/kernels_output.h"
#include "tools/loaded_log.h"
#include "tools/range_tree.h"
#include "tools/report_html.h"
#include "tools/series.h"
#include "tools/summary_output.h"
#include "tests/support/records.h"

namespace {

using namespace kc;

/// What one drain of the session's writer takes: host events (launches, ranges; in each thread's order)
/// and the activity records CUPTI handed over since the last drain.
struct Batch {
  std::vector<HostEvent> events;
  std::vector<KernelBody> kernels;
  std::vector<MemOpBody> mem_ops;
  uint64_t now_ns = 0;
  bool flushed = false;  // a forced CUPTI flush ran before this drain
};

HostEvent launchEvent(uint64_t corr, uint32_t scope, uint64_t enter, uint64_t exit, uint8_t flags = 0,
                      bool graph = false, uint32_t thread = 100) {
  HostEvent e{};
  e.kind = HostEvent::kLaunch;
  e.launch = LaunchBody{};
  e.launch.correlation_id = corr;
  e.launch.enter_ns = enter;
  e.launch.exit_ns = exit;
  e.launch.scope_id = scope;
  e.launch.thread_id = thread;
  e.launch.api_id = 9;
  e.launch.is_graph_launch = graph ? 1 : 0;
  e.launch.flags = flags;
  return e;
}

HostEvent rangeEvent(uint32_t scope, uint64_t begin, uint64_t end, uint32_t thread = 100) {
  HostEvent e{};
  e.kind = HostEvent::kRange;
  e.range = RangeBody{begin, end, scope, thread, thread, 0};
  return e;
}

KernelBody kernel(uint64_t corr, uint32_t name, uint64_t start, uint64_t dur) {
  KernelBody k{};
  k.correlation_id = corr;
  k.name_id = name;
  k.start_ns = start;
  k.end_ns = start + dur;
  k.grid[0] = 132;
  k.block[0] = 256;
  return k;
}

MemOpBody memOp(uint64_t corr, MemOpKind kind, uint64_t bytes, uint64_t start, uint64_t dur) {
  MemOpBody m{};
  m.correlation_id = corr;
  m.kind = static_cast<uint8_t>(kind);
  m.bytes = bytes;
  m.start_ns = start;
  m.end_ns = start + dur;
  return m;
}

// Strings: 1 step, 2 gate, 3 act, 4 worker, 5 graph, 6 cap, 7 mem, 8 unused, 9 cudaLaunchKernel,
// 10.. kernel names. Scopes: 1 step, 2 step/gate, 3 step/act, 4 worker, 5 graph, 6 cap, 7 mem.
constexpr uint32_t kStep = 1, kGate = 2, kAct = 3, kWorker = 4, kGraph = 5, kCap = 6, kMem = 7;
constexpr uint32_t kNames = 10, kNameCount = 12;

void writeDefinitions(LogWriter& w, bool summary_mode) {
  w.writeMetadata("host", "test");
  w.writeMetadata("start_ns", "1000");
  w.writeMetadata("mode", summary_mode ? "summary" : "trace");
  const char* names[] = {"", "step", "gate", "act", "worker", "graph", "cap", "mem", "unused", "cudaLaunchKernel"};
  for (uint32_t i = 1; i < 10; ++i) w.writeString(i, names[i]);
  for (uint32_t i = 0; i < kNameCount; ++i)
    w.writeString(kNames + i, i % 3 == 0 ? "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN_" + std::to_string(i)
                                         : "_ZN2at6native18elementwise_kernelILi" + std::to_string(i) + "EEEvv");
  w.writeScope({kStep, 0, 1, 0});
  w.writeScope({kGate, kStep, 2, 0});
  w.writeScope({kAct, kStep, 3, 0});
  w.writeScope({kWorker, 0, 4, 0});
  w.writeScope({kGraph, 0, 5, 0});
  w.writeScope({kCap, 0, 6, 0});
  w.writeScope({kMem, 0, 7, 0});
}

/// The log of one final snapshot of `agg` taken at 123 ns (after writeDefinitions() in summary mode when
/// `definitions`), read back.
LogData finalSnapshotLog(Aggregator& agg, bool definitions) {
  MemorySink sink;
  LogWriter w(&sink);
  if (definitions) writeDefinitions(w, true);
  agg.writeSnapshot(w, 123, true);
  w.writeEnd();
  w.flush();
  return readLog(sink.bytes);
}

/// A synthetic run of `steps` steps, one drain per step (100 ms apart), a forced flush every 10 drains.
/// Each step on thread 100: step > gate (1 launch, 1 kernel) and act (2 launches, one of which gets its
/// kernel one drain later than the launch is drained... and one whose kernel arrives one drain *before*
/// its launch is drained); a worker thread's range with a launch; every 10th step a graph launch of 25
/// kernels delivered over two drains; every 7th step a memcpy and a memset call; every 13th step a
/// captured launch (no kernel) and a launch whose kernel never comes; every 11th step a kernel whose
/// correlation id no launch has. Kernel durations vary (seeded), so min/max differ.
std::vector<Batch> syntheticRun(uint32_t steps, uint32_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::vector<Batch> batches(steps + 3);
  uint64_t corr = 1;
  auto dur = [&] { return 100 + rng() % 5000; };
  auto name = [&] { return kNames + static_cast<uint32_t>(rng() % kNameCount); };
  for (uint32_t s = 0; s < steps; ++s) {
    Batch& b = batches[s];
    Batch& next = batches[s + 1];
    Batch& after = batches[s + 2];
    const uint64_t t = 1'000'000 + uint64_t(s) * 100'000'000;
    // Thread 100: step > gate, act.
    const uint64_t c_gate = corr++, c_act1 = corr++, c_act2 = corr++;
    b.events.push_back(launchEvent(c_gate, kGate, t + 10, t + 20));
    b.events.push_back(rangeEvent(kGate, t + 5, t + 30));
    b.events.push_back(launchEvent(c_act1, kAct, t + 40, t + 45));
    // c_act2's launch is drained one batch late; its kernel arrives now.
    next.events.insert(next.events.begin(), launchEvent(c_act2, kAct, t + 50, t + 58));
    b.events.push_back(rangeEvent(kAct, t + 35, t + 60));
    b.events.push_back(rangeEvent(kStep, t, t + 70));
    b.kernels.push_back(kernel(c_gate, name(), t + 100, dur()));
    next.kernels.push_back(kernel(c_act1, name(), t + 200, dur()));  // one drain after its launch
    b.kernels.push_back(kernel(c_act2, name(), t + 300, dur()));     // before its launch is drained
    // Another thread.
    const uint64_t c_w = corr++;
    b.events.push_back(launchEvent(c_w, kWorker, t + 15, t + 16, 0, false, 200));
    b.events.push_back(rangeEvent(kWorker, t + 1, t + 80, 200));
    next.kernels.push_back(kernel(c_w, name(), t + 400, dur()));
    // No range: one launch on thread 300.
    const uint64_t c_root = corr++;
    b.events.push_back(launchEvent(c_root, 0, t + 90, t + 95, 0, false, 300));
    b.kernels.push_back(kernel(c_root, name(), t + 500, dur()));
    if (s % 10 == 0) {  // graph launch: 25 kernels over two drains
      const uint64_t c_g = corr++;
      b.events.push_back(launchEvent(c_g, kGraph, t + 61, t + 62, 0, true));
      b.events.push_back(rangeEvent(kGraph, t + 60, t + 65));
      for (int i = 0; i < 25; ++i) (i < 10 ? next : after).kernels.push_back(kernel(c_g, name(), t + 600 + i, dur()));
    }
    if (s % 7 == 0) {  // memory calls and their GPU operations
      const uint64_t c_cp = corr++, c_set = corr++;
      b.events.push_back(launchEvent(c_cp, kMem, t + 63, t + 64, kLaunchMemOp));
      b.events.push_back(launchEvent(c_set, kMem, t + 64, t + 66, kLaunchMemOp));
      b.events.push_back(rangeEvent(kMem, t + 62, t + 67));
      next.mem_ops.push_back(memOp(c_cp, MemOpKind::kMemcpy, 4096 + s, t + 700, dur()));
      b.mem_ops.push_back(memOp(c_set, MemOpKind::kMemset, 1024, t + 800, dur()));
    }
    if (s % 13 == 0) {  // captured launch (runs nothing) and a launch whose kernel never comes
      b.events.push_back(launchEvent(corr++, kCap, t + 67, t + 68, kLaunchCaptured));
      b.events.push_back(launchEvent(corr++, kCap, t + 68, t + 69));
      b.events.push_back(rangeEvent(kCap, t + 66, t + 69));
    }
    if (s % 11 == 0) b.kernels.push_back(kernel(1'000'000'000 + s, name(), t + 900, dur()));  // unmatched
    if (s % 17 == 0) b.mem_ops.push_back(memOp(2'000'000'000 + s, MemOpKind::kMemcpy, 8, t + 950, dur()));
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    batches[i].now_ns = 1'000'000 + uint64_t(i) * 100'000'000 + 50'000'000;
    batches[i].flushed = i % 10 == 9;
  }
  return batches;
}

/// The trace writer's path (Session::drainLocked in trace mode): every record written.
std::vector<uint8_t> traceLog(const std::vector<Batch>& batches) {
  MemorySink sink;
  LogWriter w(&sink);
  writeDefinitions(w, false);
  StatsBody st{};
  for (const Batch& b : batches) {
    for (const HostEvent& e : b.events) {
      if (e.kind == HostEvent::kLaunch) w.writeLaunch(e.launch), ++st.launches;
      if (e.kind == HostEvent::kRange) w.writeRange(e.range), ++st.ranges;
      if (w.chunkFull()) w.flush();
    }
    for (const KernelBody& k : b.kernels) w.writeKernel(k), ++st.kernels;
    for (const MemOpBody& m : b.mem_ops) w.writeMemOp(m);
    w.flush();
  }
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

/// The summary writer's path (Session::aggregateLocked): records into the aggregator, a snapshot every
/// `snapshot_every` drains and a final one after finish().
std::vector<uint8_t> summaryLog(const std::vector<Batch>& batches, size_t snapshot_every,
                                const Aggregator::Limits& limits = {}, Aggregator* out_agg = nullptr) {
  MemorySink sink;
  LogWriter w(&sink);
  writeDefinitions(w, true);
  Aggregator local(limits);
  Aggregator& agg = out_agg ? *out_agg : local;
  uint64_t flushes = 0;
  StatsBody st{};
  for (size_t i = 0; i < batches.size(); ++i) {
    const Batch& b = batches[i];
    if (b.flushed) ++flushes;
    for (const HostEvent& e : b.events) {
      if (e.kind == HostEvent::kLaunch) agg.addLaunch(e.launch, b.now_ns), ++st.launches;
      if (e.kind == HostEvent::kRange) agg.addRange(e.range), ++st.ranges;
    }
    for (const KernelBody& k : b.kernels) agg.addKernel(k, b.now_ns), ++st.kernels;
    for (const MemOpBody& m : b.mem_ops) agg.addMemOp(m, b.now_ns);
    agg.settle(b.now_ns, flushes);
    if ((i + 1) % snapshot_every == 0) {
      agg.writeSnapshot(w, b.now_ns, false);
      w.flush();
    }
  }
  agg.finish();
  agg.writeSnapshot(w, batches.back().now_ns + 1, true);
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

void checkRange(const RangeStats& a, const RangeStats& b, const std::string& what) {
  INFO(what << " scope " << a.scope_id);
  CHECK(a.scope_id == b.scope_id);
  CHECK(a.instances == b.instances);
  CHECK(a.cpu_ns == b.cpu_ns);
  CHECK(a.launches == b.launches);
  CHECK(a.graph_launches == b.graph_launches);
  CHECK(a.launch_api_ns == b.launch_api_ns);
  CHECK(a.kernels == b.kernels);
  CHECK(a.gpu_ns == b.gpu_ns);
  CHECK(a.captured_launches == b.captured_launches);
  CHECK(a.memcpy_count == b.memcpy_count);
  CHECK(a.memcpy_bytes == b.memcpy_bytes);
  CHECK(a.memcpy_ns == b.memcpy_ns);
  CHECK(a.memset_count == b.memset_count);
  CHECK(a.memset_bytes == b.memset_bytes);
  CHECK(a.memset_ns == b.memset_ns);
  REQUIRE(a.by_kernel.size() == b.by_kernel.size());
  for (const auto& [name, t] : a.by_kernel) {
    INFO("kernel name " << name);
    REQUIRE(b.by_kernel.count(name) == 1);
    const KernelTally& u = b.by_kernel.at(name);
    CHECK(t.count == u.count);
    CHECK(t.gpu_ns == u.gpu_ns);
    CHECK(t.min_ns == u.min_ns);
    CHECK(t.max_ns == u.max_ns);
  }
}

void checkSummary(const Summary& a, const Summary& b) {
  CHECK(a.launches == b.launches);
  CHECK(a.kernels == b.kernels);
  CHECK(a.unmatched_kernels == b.unmatched_kernels);
  CHECK(a.launches_without_kernel == b.launches_without_kernel);
  CHECK(a.captured_launches == b.captured_launches);
  CHECK(a.mem_ops == b.mem_ops);
  CHECK(a.unmatched_mem_ops == b.unmatched_mem_ops);
  CHECK(a.kernel_gpu_ns == b.kernel_gpu_ns);
  CHECK(a.children_order == b.children_order);
  CHECK(a.children == b.children);
  REQUIRE(a.exclusive.size() == b.exclusive.size());
  for (size_t i = 0; i < a.exclusive.size(); ++i) {
    checkRange(a.exclusive[i], b.exclusive[i], "exclusive");
    checkRange(a.inclusive[i], b.inclusive[i], "inclusive");
  }
  REQUIRE(a.unmatched_by_kernel.size() == b.unmatched_by_kernel.size());
  for (const auto& [name, t] : a.unmatched_by_kernel) {
    REQUIRE(b.unmatched_by_kernel.count(name) == 1);
    CHECK(t.count == b.unmatched_by_kernel.at(name).count);
    CHECK(t.gpu_ns == b.unmatched_by_kernel.at(name).gpu_ns);
  }
}

using kc::test::chunkOffsets;

}  // namespace

TEST_CASE("aggregator: joins kernels to launches by correlation id and tallies per range and kernel name") {
  Aggregator agg;
  agg.addRange(RangeBody{0, 100, kStep, 1, 1, 0});
  agg.addLaunch(launchEvent(1, kStep, 10, 30).launch, 0);
  agg.addLaunch(launchEvent(2, kGraph, 40, 45, 0, true).launch, 0);
  agg.addKernel(kernel(1, 20, 1000, 50), 0);
  for (int i = 0; i < 4; ++i) agg.addKernel(kernel(2, 21, 2000, 10 + i), 0);
  agg.addKernel(kernel(3, 22, 3000, 7), 0);  // no launch yet: waits
  CHECK(agg.waiting() == 1);
  agg.addLaunch(launchEvent(3, kStep, 50, 51).launch, 0);
  agg.settle(0, 0);
  CHECK(agg.waiting() == 0);
  CHECK(agg.inflight() == 3);  // nothing has settled: no flush yet
  agg.settle(0, 2);            // two flushes: the joined non-graph launches leave the window
  CHECK(agg.inflight() == 1);  // the graph launch stays until settle_ns has passed as well
  agg.settle(20'000'000'000ull, 2);
  CHECK(agg.inflight() == 0);
  const SnapshotBeginBody t = agg.totals();
  CHECK(t.launches == 3);
  CHECK(t.kernels == 6);
  CHECK(t.unmatched_kernels == 0);
  CHECK(t.launches_without_kernel == 0);

  const LogData log = finalSnapshotLog(agg, false);
  REQUIRE(log.snapshots.size() == 1);
  const SnapshotData& sd = log.snapshots[0];
  CHECK(sd.begin.time_ns == 123);
  CHECK((sd.begin.flags & kSnapshotFinal) != 0);
  REQUIRE(sd.scopes.size() == 2);
  CHECK(sd.scopes[0].scope_id == kStep);
  CHECK(sd.scopes[0].instances == 1);
  CHECK(sd.scopes[0].cpu_ns == 100);
  CHECK(sd.scopes[0].launches == 2);
  CHECK(sd.scopes[0].launch_api_ns == 21);
  CHECK(sd.scopes[0].kernels == 2);
  CHECK(sd.scopes[0].gpu_ns == 57);
  CHECK(sd.scopes[1].graph_launches == 1);
  CHECK(sd.scopes[1].kernels == 4);
  REQUIRE(sd.kernels.size() == 3);
  const SnapshotKernelBody& g = sd.kernels[2];
  CHECK(g.scope_id == kGraph);
  CHECK(g.name_id == 21);
  CHECK(g.count == 4);
  CHECK(g.gpu_ns == 10 + 11 + 12 + 13);
  CHECK(g.min_ns == 10);
  CHECK(g.max_ns == 13);
}

TEST_CASE("aggregator: KCOUNT_LAUNCH_TIMING counts a timed call N times and an untimed one not at all") {
  Aggregator::Limits limits;
  limits.launch_timing_sample = 16;
  Aggregator agg(limits);
  agg.addLaunch(launchEvent(1, kStep, 10, 30).launch, 0);                    // timed: 20 ns, counts 16 times
  agg.addLaunch(launchEvent(2, kStep, 0, 0, kLaunchUntimed).launch, 0);      // not timed: a launch, no time
  agg.addLaunch(launchEvent(3, kStep, 0, 0, kLaunchUntimed).launch, 0);
  agg.addLaunch(launchEvent(4, kGraph, 100, 103).launch, 0);                 // 3 ns x 16
  agg.addLaunch(launchEvent(5, kGraph, 0, kSaturated, 0).launch, 0);          // held at the limit, no wrap
  agg.addKernel(kernel(1, 20, 1000, 50), 0);
  const LogData log = finalSnapshotLog(agg, false);
  REQUIRE(log.snapshots.size() == 1);
  const SnapshotData& sd = log.snapshots[0];
  REQUIRE(sd.scopes.size() == 2);
  CHECK(sd.scopes[0].scope_id == kStep);
  CHECK(sd.scopes[0].launches == 3);
  CHECK(sd.scopes[0].launch_api_ns == 20 * 16);
  CHECK(sd.scopes[1].launches == 2);
  CHECK(sd.scopes[1].launch_api_ns == kSaturated);
  CHECK(satMul(3, 16) == 48);
  CHECK(satMul(kSaturated / 2, 3) == kSaturated);
}

TEST_CASE("aggregator: launches without kernel, unmatched kernels, captured and memory calls resolve at settle and finish") {
  Aggregator::Limits lim;
  lim.settle_ns = 1000;
  Aggregator agg(lim);
  agg.addLaunch(launchEvent(1, kStep, 0, 1).launch, 0);                    // never gets a kernel
  agg.addLaunch(launchEvent(2, kCap, 0, 1, kLaunchCaptured).launch, 0);    // captured: runs nothing
  agg.addLaunch(launchEvent(3, kMem, 0, 1, kLaunchMemOp).launch, 0);       // memory call, no launch
  agg.addKernel(kernel(77, 20, 0, 5), 0);                                  // no launch ever
  agg.addMemOp(memOp(3, MemOpKind::kMemset, 64, 0, 9), 0);
  agg.settle(10, 1);
  CHECK(agg.totals().unmatched_kernels == 0);  // not settled: one flush, too early
  agg.settle(2000, 2);
  SnapshotBeginBody t = agg.totals();
  CHECK(t.unmatched_kernels == 1);
  CHECK(t.unmatched_kernel_gpu_ns == 5);
  CHECK(t.launches_without_kernel == 1);  // only launch 1
  CHECK(t.launches == 2);                 // the memory call is not a launch
  CHECK(t.captured_launches == 1);
  CHECK(t.mem_ops == 1);
  CHECK(agg.inflight() == 0);
  // A launch still in the window at the end: resolved by finish().
  agg.addLaunch(launchEvent(4, kStep, 0, 1).launch, 3000);
  agg.addKernel(kernel(88, 20, 0, 5), 3000);
  agg.finish();
  t = agg.totals();
  CHECK(t.launches_without_kernel == 2);
  CHECK(t.unmatched_kernels == 2);
  CHECK(t.inflight_launches == 0);
  CHECK(t.waiting_activity == 0);
}

TEST_CASE("aggregator: caps count what does not fit") {
  Aggregator::Limits lim;
  lim.max_keys = 3;
  lim.max_inflight = 4;
  lim.max_waiting = 2;
  Aggregator agg(lim);
  for (uint32_t s = 1; s <= 5; ++s) agg.addRange(RangeBody{0, 10, s, 1, 1, 0});  // 5 scopes, 3 rows fit
  CHECK(agg.keys() == 3);
  CHECK(agg.totals().dropped_tallies == 2);
  CHECK(agg.totals().ranges == 5);
  CHECK(agg.totals().max_keys == 3);
  CHECK(agg.totals().dropped_ranges == 2);  // what dropped_tallies holds, by kind
  CHECK(agg.totals().dropped_range_instances == 2);
  agg.addRange(RangeBody{0, 10, 5, 1, 1, 0});  // a range dropped before counts once
  CHECK(agg.totals().dropped_ranges == 2);
  CHECK(agg.totals().dropped_range_instances == 3);
  for (uint64_t c = 1; c <= 6; ++c) agg.addLaunch(launchEvent(c, 1, 0, 1).launch, 0);
  CHECK(agg.inflight() == 4);
  CHECK(agg.totals().evicted_launches == 2);
  CHECK(agg.totals().launches_without_kernel == 2);  // the two evicted ones had no kernel
  CHECK(agg.totals().launches == 6);
  for (uint64_t c = 100; c < 104; ++c) agg.addKernel(kernel(c, 20, 0, 1), 0);  // two wait, two give up at once
  CHECK(agg.waiting() == 2);
  CHECK(agg.totals().unmatched_kernels == 2);
  CHECK(agg.totals().dropped_tallies == 3 + 2);  // the unmatched kernels' name row did not fit either
  CHECK(agg.totals().unnamed_kernels == 2);
  // Kernel rows need keys too: none left, so the kernel counts in its range but not by name.
  agg.addKernel(kernel(5, 20, 0, 1), 0);
  CHECK(agg.totals().dropped_tallies == 6);
  CHECK(agg.totals().unnamed_kernels == 3);
  const SnapshotBeginBody t = agg.totals();
  CHECK(t.dropped_tallies ==
        t.dropped_range_instances + t.dropped_launches + t.dropped_kernels + t.dropped_mem_ops + t.unnamed_kernels);
}

TEST_CASE("summary mode at KCOUNT_MAX_KEYS: the ranges whose tally was dropped are named as such, with their counts") {
  Aggregator::Limits lim;
  lim.max_keys = 2;
  Aggregator agg(lim);
  // The library's range tree (writeDefinitions): step > gate, act; worker, graph, cap, mem at the top.
  agg.setScopeParents([](uint32_t id) { return id == kGate || id == kAct ? kStep : kRootScope; });
  agg.addRange(rangeEvent(kGate, 10, 20).range);  // row 1: step/gate
  agg.addLaunch(launchEvent(1, kGate, 11, 12).launch, 0);
  agg.addKernel(kernel(1, kNames, 30, 5), 0);  // row 2: (step/gate, kernel 0); the cap is reached
  agg.addRange(rangeEvent(kStep, 5, 40).range);  // no row for step: dropped
  agg.addLaunch(launchEvent(2, kStep, 21, 22).launch, 0);
  agg.addKernel(kernel(2, kNames, 40, 5), 0);
  agg.addLaunch(launchEvent(3, kGate, 23, 24).launch, 0);
  agg.addKernel(kernel(3, kNames + 1, 50, 5), 0);  // in gate's row, but no room for its name's row
  agg.addLaunch(launchEvent(4, kWorker, 25, 26).launch, 0);  // worker: dropped, not shown (no child)
  agg.addKernel(kernel(4, kNames, 60, 5), 0);
  agg.addLaunch(launchEvent(5, kStep, 27, 28, kLaunchMemOp).launch, 0);
  agg.addMemOp(memOp(5, MemOpKind::kMemcpy, 64, 70, 5), 0);
  agg.finish();
  const SnapshotBeginBody t = agg.totals();
  CHECK(t.dropped_tallies == 7);
  CHECK(t.dropped_ranges == 2);
  CHECK(t.dropped_range_instances == 1);
  CHECK(t.dropped_launches == 2);
  CHECK(t.dropped_kernels == 2);
  CHECK(t.dropped_mem_ops == 1);
  CHECK(t.unnamed_kernels == 1);
  const std::string said = droppedTalliesText(t);
  CHECK(said == "tallies dropped at KCOUNT_MAX_KEYS=2: 2 ranges got no row (their 1 range instances, 2 launches, 2 "
                "kernels and 1 memory operations count in the totals, in no range's row); 1 kernels counted in their "
                "range or as unmatched but not by kernel name");

  LogData log = finalSnapshotLog(agg, true);
  REQUIRE(log.snapshots.size() == 1);
  CHECK(log.snapshots[0].scopes.size() == 2);  // gate's row, and step's marked one (worker is not shown)
  const Summary s = summarize(log);
  CHECK(tallyDropped(s, kStep));
  CHECK_FALSE(isPlaceholder(s, kStep));
  CHECK_FALSE(tallyDropped(s, kGate));
  CHECK(s.launches == 4);  // the totals hold every launch: 1 in a row, 2 in dropped ranges, 1 not by name
  LoadedLog l{"keys", std::move(log), s};
  std::ostringstream out;
  printSummaryTable(out, l, SummaryOptions{});
  const std::string table = out.str();
  INFO(table);
  CHECK(table.find("step !") != std::string::npos);
  CHECK(table.find("!: no numbers: the range's tally was dropped at KCOUNT_MAX_KEYS=2") != std::string::npos);
  CHECK(table.find(kPlaceholderNote) == std::string::npos);  // not "open when recording began or stopped"
  CHECK(table.find("\n" + said + "\n") != std::string::npos);  // the footer says what was dropped
  const auto j = summaryJson(l);
  bool step_seen = false;
  for (const auto& r : j["ranges"])
    if (r["path"] == "step") {
      step_seen = true;
      CHECK(r["tally_dropped"] == true);
      CHECK(r["placeholder"] == false);
    }
  CHECK(step_seen);
  CHECK(j["snapshot"]["max_keys"] == 2);
  CHECK(j["snapshot"]["dropped_ranges"] == 2);
  CHECK(j["snapshot"]["dropped_launches"] == 2);
  CHECK(j["snapshot"]["dropped_kernels"] == 2);
  CHECK(j["snapshot"]["unnamed_kernels"] == 1);
  CHECK(j["drops"]["counters"]["dropped_tallies"] == 7);
  CHECK(j["drops"]["text"].get<std::string>().find("KCOUNT_MAX_KEYS=2") != std::string::npos);

  // A dropped parent whose children have instances only (no launch below it): no numbers at all in its
  // row, which is not a placeholder (a range open when recording began or stopped) either.
  Aggregator::Limits one_key;
  one_key.max_keys = 1;
  Aggregator cpu_only(one_key);
  cpu_only.setScopeParents([](uint32_t id) { return id == kGate || id == kAct ? kStep : kRootScope; });
  cpu_only.addRange(rangeEvent(kAct, 10, 20).range);
  cpu_only.addRange(rangeEvent(kStep, 5, 40).range);
  LogData cpu_log = finalSnapshotLog(cpu_only, true);
  const Summary cpu_s = summarize(cpu_log);
  CHECK_FALSE(isPlaceholder(cpu_s, kStep));
  LoadedLog cl{"cpu", std::move(cpu_log), cpu_s};
  std::ostringstream cpu_out;
  printSummaryTable(cpu_out, cl, SummaryOptions{});
  CHECK(cpu_out.str().find("step !") != std::string::npos);
  CHECK(cpu_out.str().find("step *") == std::string::npos);
  CHECK(cpu_out.str().find(kPlaceholderNote) == std::string::npos);
  CHECK(cpu_out.str().find("tallies dropped at KCOUNT_MAX_KEYS=1: 1 range got no row (their 1 range instances, 0 "
                           "launches") != std::string::npos);

  // A snapshot of an earlier writer (a 128-byte SnapshotBegin, no detail) still reads, with the count only.
  MemorySink sink;
  LogWriter w(&sink, LogEncoding::kPlain);
  writeDefinitions(w, true);
  w.flush();
  agg.writeSnapshot(w, 200, true);
  w.writeEnd();
  w.flush();
  std::vector<uint8_t> bytes = sink.bytes;
  const size_t chunk = chunkOffsets(bytes).at(1);
  ChunkHeader ch;
  std::memcpy(&ch, bytes.data() + chunk, sizeof(ch));
  const size_t rec = chunk + sizeof(ChunkHeader);  // the SnapshotBegin opens the chunk
  RecordHeader rh;
  std::memcpy(&rh, bytes.data() + rec, sizeof(rh));
  REQUIRE(rh.type == static_cast<uint16_t>(RecordType::kSnapshotBegin));
  REQUIRE(rh.body_bytes == sizeof(SnapshotBeginBody));
  const size_t cut = sizeof(SnapshotBeginBody) - kSnapshotBeginBytesV12;
  rh.body_bytes = kSnapshotBeginBytesV12;
  std::memcpy(bytes.data() + rec, &rh, sizeof(rh));
  const auto from = bytes.begin() + static_cast<std::ptrdiff_t>(rec + sizeof(rh) + kSnapshotBeginBytesV12);
  bytes.erase(from, from + static_cast<std::ptrdiff_t>(cut));
  ch.payload_bytes -= static_cast<uint32_t>(cut);
  ch.checksum = XXH3_64bits(bytes.data() + chunk + sizeof(ChunkHeader), ch.payload_bytes);
  std::memcpy(bytes.data() + chunk, &ch, sizeof(ch));
  const LogData old = readLog(bytes);
  CHECK(old.intact());
  REQUIRE(old.snapshots.size() == 1);
  CHECK(old.snapshots[0].begin.dropped_tallies == 7);
  CHECK(old.snapshots[0].begin.max_keys == 0);
  CHECK(droppedTalliesText(old.snapshots[0].begin) ==
        "tallies dropped at KCOUNT_MAX_KEYS: 7 events not tallied or not by kernel name (this log does not say which)");
  LoadedLog lo{"old", old, summarize(old)};
  CHECK(summaryJson(lo)["snapshot"]["dropped_ranges"].is_null());
}

TEST_CASE("summary mode gives the same Summary as trace mode for the same run") {
  const auto batches = syntheticRun(300);
  const LogData trace = readLog(traceLog(batches));
  const LogData summary = readLog(summaryLog(batches, 10));
  REQUIRE(trace.intact());
  REQUIRE(summary.intact());
  CHECK_FALSE(trace.summary_mode);
  CHECK(summary.summary_mode);
  CHECK(summary.launches.empty());
  CHECK(summary.kernels.empty());
  REQUIRE(summary.snapshots.size() == 31);  // 30 periodic + the final one
  CHECK((summary.snapshots.back().begin.flags & kSnapshotFinal) != 0);
  const Summary a = summarize(trace), b = summarize(summary);
  CHECK(b.snapshot == 30);
  // The run has every case: not a vacuous comparison.
  CHECK(a.unmatched_kernels > 0);
  CHECK(a.launches_without_kernel > 0);
  CHECK(a.captured_launches > 0);
  CHECK(a.unmatched_mem_ops > 0);
  CHECK(a.exclusive[kGraph].kernels == 30 * 25);
  CHECK(a.exclusive[kMem].memset_count > 0);
  checkSummary(a, b);

  // The tools' reports: identical JSON but for the mode and the snapshot fields.
  LoadedLog la{"run", trace, a}, lb{"run", summary, b};
  auto ja = summaryJson(la), jb = summaryJson(lb);
  for (const char* k : {"metadata", "mode", "snapshot", "snapshots", "incomplete_snapshots", "snapshots_skipped", "issues"}) {
    ja.erase(k);
    jb.erase(k);
  }
  CHECK(ja == jb);
  // kcount diff and report: a summary-mode side compares like the trace-mode side.
  CHECK(diffJson({lb}, {la}) == diffJson({la}, {la}));
  CHECK(diffJson({la}, {lb}) == diffJson({la}, {la}));
  auto ha = htmlReportData({la}), hb = htmlReportData({lb});
  CHECK(ha["runs"][0]["totals"] == hb["runs"][0]["totals"]);
  CHECK(ha["runs"][0]["ranges"] == hb["runs"][0]["ranges"]);
  REQUIRE(ha["runs"][0]["kernels"].size() == hb["runs"][0]["kernels"].size());
  for (size_t i = 0; i < ha["runs"][0]["kernels"].size(); ++i) {
    const auto ka = ha["runs"][0]["kernels"][i], kb = hb["runs"][0]["kernels"][i];
    CHECK(ka["name"] == kb["name"]);
    CHECK(ka["count"] == kb["count"]);
    CHECK(ka["gpu_ns"] == kb["gpu_ns"]);
    CHECK(ka["ranges"] == kb["ranges"]);
  }
  CHECK(kernelsJson({la})["kernels"].size() == kernelsJson({lb})["kernels"].size());
  for (size_t i = 0; i < kernelsJson({la})["kernels"].size(); ++i) {
    const auto ka = kernelsJson({la})["kernels"][i], kb = kernelsJson({lb})["kernels"][i];
    CHECK(ka["name"] == kb["name"]);
    CHECK(ka["count"] == kb["count"]);
    CHECK(ka["gpu_ns"] == kb["gpu_ns"]);
    CHECK(ka["ranges"] == kb["ranges"]);
  }
}

TEST_CASE("summary mode equals trace mode with scrambled correlation ids (probe runs, deletions that wrap)") {
  // Correlation ids mapped through a bijection (odd multiplier, then xor-shift): the window's hash
  // table sees clustered and wrapping probe runs, and every deletion must keep the other entries findable.
  auto scramble = [](uint64_t c) {
    c *= 0x9E3779B97F4A7C15ull;
    return c ^ (c >> 29);
  };
  auto batches = syntheticRun(2000, 7);
  for (Batch& b : batches) {
    for (HostEvent& e : b.events)
      if (e.kind == HostEvent::kLaunch) e.launch.correlation_id = scramble(e.launch.correlation_id);
    for (KernelBody& k : b.kernels) k.correlation_id = scramble(k.correlation_id);
    for (MemOpBody& m : b.mem_ops) m.correlation_id = scramble(m.correlation_id);
  }
  const LogData trace = readLog(traceLog(batches));
  const LogData summary = readLog(summaryLog(batches, 50));
  checkSummary(summarize(trace), summarize(summary));
}

TEST_CASE("summary mode equals trace mode in a launch-bound loop (the window's ring wraps and grows)") {
  // 40 drains of 20,000 launches each, correlation ids 3 apart (the other API calls take ids too), each
  // kernel one drain after its launch; every 2,003rd launch never gets a kernel and every 997th gets it
  // 30 drains (1.8 M ids) later, so both wait while the ring wraps over their slots (they are found in
  // the overflow table); every 4,001st is a graph launch whose 3 kernels come over three drains, and a
  // second kernel comes for every 5,003rd launch two drains later. Trace and summary must agree field by
  // field.
  constexpr uint32_t kDrains = 40, kPerDrain = 20'000;
  std::vector<Batch> batches(kDrains + 31);
  uint64_t corr = 1'000'001;
  std::mt19937_64 rng(3);
  for (uint32_t d = 0; d < kDrains; ++d) {
    const uint64_t t = 1'000'000 + uint64_t(d) * 100'000'000;
    for (uint32_t i = 0; i < kPerDrain; ++i, corr += 3) {
      const uint64_t n = uint64_t(d) * kPerDrain + i;
      const bool graph = n % 4001 == 0;
      const uint32_t scope = graph ? kGraph : (n % 2 == 0 ? kGate : kAct);
      batches[d].events.push_back(launchEvent(corr, scope, t + i * 4, t + i * 4 + 2, 0, graph));
      if (n % 2003 == 0 && !graph) continue;
      const uint32_t name = kNames + static_cast<uint32_t>(rng() % kNameCount);
      if (n % 997 == 0 && !graph) {
        batches[d + 30].kernels.push_back(kernel(corr, name, t + i * 4 + 10, 5000));
        continue;
      }
      if (graph) {
        for (uint32_t g = 0; g < 3; ++g) batches[d + 1 + g].kernels.push_back(kernel(corr, name, t + i, 100 + g));
        continue;
      }
      batches[d + 1].kernels.push_back(kernel(corr, name, t + i * 4 + 10, 100 + rng() % 900));
      if (n % 5003 == 0) batches[d + 3].kernels.push_back(kernel(corr, name, t + i * 4 + 20, 77));
    }
    batches[d].events.push_back(rangeEvent(kStep, t, t + 90'000'000));
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    batches[i].now_ns = 1'000'000 + uint64_t(i) * 100'000'000 + 50'000'000;
    batches[i].flushed = i % 10 == 9;
  }
  const LogData trace = readLog(traceLog(batches));
  Aggregator agg;
  const LogData summary = readLog(summaryLog(batches, 10, {}, &agg));
  const Summary a = summarize(trace), b = summarize(summary);
  CHECK(a.launches == uint64_t(kDrains) * kPerDrain);
  CHECK(a.launches_without_kernel > 350);  // the every-2,003rd launches: not a vacuous comparison
  CHECK(a.unmatched_kernels == 0);        // the late kernels (every 997th) found their launches
  CHECK(a.exclusive[kGraph].kernels > 0);
  checkSummary(a, b);
}

TEST_CASE("aggregator: joined non-graph launches beyond max_joined leave the window without waiting for flushes") {
  Aggregator::Limits lim;
  lim.max_joined = 2;
  Aggregator agg(lim);
  for (uint64_t c = 1; c <= 5; ++c) agg.addLaunch(launchEvent(c, kStep, 10 * c, 10 * c + 5).launch, 0);
  for (uint64_t c = 1; c <= 5; ++c) agg.addKernel(kernel(c, kNames, 100 * c, 10), 0);
  agg.settle(0, 0);
  CHECK(agg.inflight() == 2);  // the 2 joined last stay for a second record with their correlation id
  agg.addKernel(kernel(5, kNames, 900, 10), 0);  // joins: launch 5 is still in the window
  agg.addKernel(kernel(1, kNames, 901, 10), 0);  // launch 1 left: waits, then settles unmatched
  agg.settle(0, 0);
  CHECK(agg.waiting() == 1);
  agg.finish();
  const SnapshotBeginBody t = agg.totals();
  CHECK(t.kernels == 7);
  CHECK(t.unmatched_kernels == 1);
  CHECK(t.launches_without_kernel == 0);
}

TEST_CASE("summary mode matches trace mode with a tiny window (evictions) only in what it reports as evicted") {
  // A window too small for the run: launches are pushed out before their kernels arrive. The summary
  // must then say so (evicted_launches) and the difference must show up as unmatched kernels, never as
  // kernels credited to another range.
  const auto batches = syntheticRun(100);
  Aggregator::Limits lim;
  lim.max_inflight = 3;
  const LogData trace = readLog(traceLog(batches));
  const LogData summary = readLog(summaryLog(batches, 10, lim));
  const Summary a = summarize(trace), b = summarize(summary);
  const SnapshotBeginBody& fin = summary.snapshots.back().begin;
  CHECK(fin.evicted_launches > 0);
  CHECK(b.launches == a.launches);
  CHECK(b.kernels == a.kernels);
  CHECK(b.unmatched_kernels > a.unmatched_kernels);
  for (size_t i = 0; i < a.exclusive.size(); ++i) CHECK(b.exclusive[i].kernels <= a.exclusive[i].kernels);
  uint64_t credited_a = 0, credited_b = 0;
  for (size_t i = 0; i < a.exclusive.size(); ++i) {
    credited_a += a.exclusive[i].kernels;
    credited_b += b.exclusive[i].kernels;
  }
  CHECK(credited_a - credited_b == b.unmatched_kernels - a.unmatched_kernels);
}

TEST_CASE("summary log size does not grow with the number of steps") {
  // The same number of snapshots (10 + the final one) for 1,000 and 100,000 steps.
  const auto small_run = syntheticRun(1000);
  const auto big_run = syntheticRun(100000);
  const std::vector<uint8_t> small_log = summaryLog(small_run, small_run.size() / 10);
  const std::vector<uint8_t> big_log = summaryLog(big_run, big_run.size() / 10);
  INFO("1k steps: " << small_log.size() << " bytes, 100k steps: " << big_log.size() << " bytes");
  // Fixed bound: definitions + 11 snapshots of at most 8 scope rows and 8 x 12 + 12 kernel rows.
  constexpr size_t kBound = 4096 + 11 * (24 + 136 + 8 * 128 + 108 * 56 + 16);
  CHECK(small_log.size() <= kBound);
  CHECK(big_log.size() <= kBound);
  CHECK(big_log.size() <= small_log.size() + small_log.size() / 10);
  const LogData big = readLog(big_log);
  REQUIRE(big.intact());
  const Summary s = summarize(big);
  CHECK(s.exclusive[kGate].launches == 100000);
  CHECK(s.exclusive[kGate].kernels == 100000);
  CHECK(s.launches_without_kernel == 100000 / 13 + 1);  // the launch in `cap` whose kernel never comes
}

/// The files of summaryLog()'s path under KCOUNT_MAX_BYTES=`max_bytes`, `max_files` files, with the
/// session's preamble (definitions, rotated_file) and closing (snapshots_skipped metadata, Stats, End).
/// `measure` false: snapshots sized by their bound before compression only (LogWriter::setMeasureGroups).
struct CappedSummaryLog {
  std::vector<std::vector<uint8_t>> files;  // part order
  uint64_t skipped = 0;                     // Aggregator::skippedSnapshots()
  uint64_t dropped_bytes = 0;               // LogWriter::droppedBytes()
};
CappedSummaryLog cappedSummaryLog(const std::vector<Batch>& batches, size_t max_bytes, size_t max_files,
                                  bool measure = true) {
  MemorySink sink;
  sink.max_bytes = max_bytes;
  sink.max_files = max_files;
  LogWriter w(&sink);
  w.setMeasureGroups(measure);
  w.setPreamble(
      [](LogWriter& pw, void*) {
        writeDefinitions(pw, true);
        pw.writeMetadata(kMetaRotatedFile, std::to_string(pw.rotations()));
      },
      nullptr);
  writeDefinitions(w, true);
  Aggregator agg;
  uint64_t flushes = 0;
  for (const Batch& b : batches) {
    if (b.flushed) ++flushes;
    for (const HostEvent& e : b.events) {
      if (e.kind == HostEvent::kLaunch) agg.addLaunch(e.launch, b.now_ns);
      if (e.kind == HostEvent::kRange) agg.addRange(e.range);
    }
    for (const KernelBody& k : b.kernels) agg.addKernel(k, b.now_ns);
    for (const MemOpBody& m : b.mem_ops) agg.addMemOp(m, b.now_ns);
    agg.settle(b.now_ns, flushes);
    if (agg.writeSnapshot(w, b.now_ns, false)) w.flush();  // one due every drain
  }
  agg.finish();
  CHECK(agg.writeSnapshot(w, batches.back().now_ns + 1, true));
  w.flush();
  if (agg.skippedSnapshots() > 0) w.writeMetadata(kMetaSnapshotsSkipped, std::to_string(agg.skippedSnapshots()));
  w.writeStats(StatsBody{});
  w.writeEnd();
  w.flush();
  CappedSummaryLog out{std::move(sink.files), agg.skippedSnapshots(), w.droppedBytes()};
  out.files.push_back(std::move(sink.bytes));
  return out;
}

TEST_CASE("summary mode at KCOUNT_MAX_BYTES: periodic snapshots leave room for the final one") {
  const auto batches = syntheticRun(300);
  const LogData whole = readLog(summaryLog(batches, 1));
  const Summary want = summarize(whole);
  REQUIRE(whole.snapshots.size() == batches.size() + 1);

  // One file: a snapshot every drain would fill 64 KiB long before the end. The periodic snapshots that
  // would not leave room for one more as large are not written; the final one is, under the cap.
  constexpr size_t kCap = 64 * 1024;
  const CappedSummaryLog one = cappedSummaryLog(batches, kCap, 1);
  REQUIRE(one.files.size() == 1);
  CHECK(one.files[0].size() <= kCap);
  CHECK(one.skipped > 0);
  CHECK(one.dropped_bytes == 0);  // nothing kept out: the skipped snapshots were never written
  LogData log = readLog(one.files[0]);
  CHECK(log.complete);
  CHECK(log.incomplete_snapshots == 0);
  REQUIRE_FALSE(log.snapshots.empty());
  CHECK(log.snapshots.size() + one.skipped == batches.size() + 1);
  CHECK((log.snapshots.back().begin.flags & kSnapshotFinal) != 0);
  const Summary s = summarize(log);
  CHECK(s.launches == want.launches);
  CHECK(s.kernels == want.kernels);
  CHECK(s.exclusive[kGate].launches == want.exclusive[kGate].launches);
  CHECK(s.launches_without_kernel == want.launches_without_kernel);
  // The reader names the skipped ones and takes its totals from the final snapshot.
  LoadedLog l{"capped", std::move(log), s};
  std::ostringstream table;
  printSummaryTable(table, l, SummaryOptions{});
  INFO(table.str());
  CHECK(table.str().find("(" + std::to_string(one.skipped) + (one.skipped == 1 ? " periodic snapshot" : " periodic snapshots") +
                         " not written at KCOUNT_MAX_BYTES, to keep room for the final one)") != std::string::npos);
  CHECK(table.str().find("(final)") != std::string::npos);
  CHECK(summaryJson(l)["snapshots_skipped"] == one.skipped);

  // Rotation (3 files of 16 KiB): a snapshot that does not fit in the room a file has left starts the
  // next file, so none is split between two files (read as incomplete in both), and in the last file
  // the periodic snapshots leave room for the final one.
  constexpr size_t kPartCap = 16 * 1024;
  const CappedSummaryLog parts = cappedSummaryLog(batches, kPartCap, 3);
  REQUIRE(parts.files.size() == 3);
  CHECK(parts.skipped > 0);
  CHECK(parts.dropped_bytes == 0);
  for (size_t i = 0; i < parts.files.size(); ++i) {
    INFO("part " << i);
    CHECK(parts.files[i].size() <= kPartCap);
    const LogData part = readLog(parts.files[i]);
    CHECK(part.incomplete_snapshots == 0);
    CHECK_FALSE(part.snapshots.empty());
  }
  const LogData last = readLog(parts.files.back());
  CHECK(last.complete);
  REQUIRE_FALSE(last.snapshots.empty());
  CHECK((last.snapshots.back().begin.flags & kSnapshotFinal) != 0);
  CHECK(summarize(last).launches == want.launches);

  // Sized by what they write (compressed) rather than by their bound before compression, more periodic
  // snapshots are written for the same cap, and the final one still fits: one file and three parts.
  const CappedSummaryLog one_bound = cappedSummaryLog(batches, kCap, 1, false);
  const CappedSummaryLog parts_bound = cappedSummaryLog(batches, kPartCap, 3, false);
  CHECK(one_bound.files.size() == 1);
  CHECK(one_bound.dropped_bytes == 0);
  CHECK(one.skipped < one_bound.skipped);
  CHECK(parts_bound.dropped_bytes == 0);
  CHECK(parts.skipped < parts_bound.skipped);
  size_t snapshots_parts = 0, snapshots_parts_bound = 0;
  for (const auto& f : parts.files) snapshots_parts += readLog(f).snapshots.size();
  for (const auto& f : parts_bound.files) snapshots_parts_bound += readLog(f).snapshots.size();
  CHECK(snapshots_parts > snapshots_parts_bound);
  CHECK(readLog(one_bound.files[0]).snapshots.size() < readLog(one.files[0]).snapshots.size());
  MESSAGE("snapshots written, one 64 KiB file: " << readLog(one.files[0]).snapshots.size() << " (bound before "
          "compression: " << readLog(one_bound.files[0]).snapshots.size() << "); three 16 KiB parts: "
          << snapshots_parts << " (" << snapshots_parts_bound << ")");
}

TEST_CASE("summary mode: why the totals' snapshot is not final, and what a rotated part read alone holds") {
  auto tableOf = [](const std::vector<uint8_t>& bytes) {
    LogData log = readLog(bytes);
    const Summary s = summarize(log);
    LoadedLog l{"t", std::move(log), s};
    std::ostringstream out;
    printSummaryTable(out, l, SummaryOptions{});
    return out.str();
  };
  // A closed log whose last snapshot is not the final one: the final one was kept out (size cap).
  // `capped`: the metadata and Stats record name records kept out at KCOUNT_MAX_BYTES, as the library writes
  // them. `damaged_final`: the final snapshot is written in its own chunk, then one byte of it is flipped.
  auto build = [](bool closed, const char* rotated_part, bool capped = false, bool damaged_final = false) {
    MemorySink sink;
    LogWriter w(&sink);
    writeDefinitions(w, true);
    if (rotated_part != nullptr) w.writeMetadata(kMetaRotatedFile, rotated_part);
    Aggregator agg;
    agg.addRange(rangeEvent(kStep, 10, 50).range);
    agg.writeSnapshot(w, 100, false);
    w.flush();
    size_t final_at = 0;
    if (damaged_final) {
      final_at = sink.bytes.size();
      agg.addRange(rangeEvent(kStep, 60, 90).range);
      agg.writeSnapshot(w, 200, true);
      w.flush();
    }
    const size_t final_end = sink.bytes.size();
    if (closed) {
      StatsBody st{};
      st.ranges = 2;
      if (capped) {
        w.writeMetadata("records_not_written", "not written: 0 launches, 0 kernels, 0 ranges, 9 other records, at "
                                               "KCOUNT_MAX_BYTES");
        st.not_written_other = 9;
        st.bytes_dropped = 900;
      }
      w.writeStats(st);
      w.writeEnd();
    }
    w.flush();
    if (damaged_final) sink.bytes[(final_at + final_end) / 2] ^= 0xff;
    return sink.bytes;
  };
  // Kept out at the size cap: the log's metadata and Stats record say records were kept out there.
  const std::string capped = tableOf(build(true, nullptr, /*capped=*/true));
  CHECK(capped.find("(not final: the final snapshot is not in the log, kept out at its size cap (KCOUNT_MAX_BYTES); "
                    "the run went on after it)") != std::string::npos);
  // Nothing kept out: the size cap is not named.
  const std::string closed = tableOf(build(true, nullptr));
  CHECK(closed.find("(not final: the log was closed without its final snapshot, though it counts no record kept out "
                    "of it; the run went on after it)") != std::string::npos);
  CHECK(closed.find("size cap") == std::string::npos);
  CHECK(closed.find("the run had not ended") == std::string::npos);
  // The final snapshot's chunk damaged (read with --salvage): the damage, not the size cap.
  const std::string damaged = tableOf(build(true, nullptr, false, /*damaged_final=*/true));
  CHECK(damaged.find("(not final: the final snapshot is not in the log's intact part (damaged bytes were skipped); "
                     "the run went on after it)") != std::string::npos);
  CHECK(damaged.find("size cap") == std::string::npos);
  const std::string cut = tableOf(build(false, nullptr));
  CHECK(cut.find("(not final: the log ends before the run did)") != std::string::npos);
  // A later part of a rotated summary-mode log: cumulative snapshots, so the run's numbers up to it.
  const std::string part = tableOf(build(false, "2"));
  CHECK(part.find("rotated part 2; parts 0..1 not given") != std::string::npos);
  CHECK(part.find("the numbers are the run's up to this part's last snapshot (cumulative)") != std::string::npos);
  CHECK(part.find("cover this part only") == std::string::npos);
}

TEST_CASE("a log cut inside a snapshot: the reader uses the last complete one and says so") {
  const auto batches = syntheticRun(200);
  std::vector<uint8_t> bytes = summaryLog(batches, 20);
  const LogData whole = readLog(bytes);
  REQUIRE(whole.snapshots.size() == 11);
  // Each snapshot is its own chunk; cut the file in the middle of the last one (the final snapshot).
  const auto chunks = chunkOffsets(bytes);
  REQUIRE(chunks.size() >= 3);
  const size_t last = chunks.back();
  std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(last + 60));
  LogData log = readLog(cut);
  CHECK(log.truncated);
  REQUIRE(log.snapshots.size() == 10);
  const Summary s = summarize(log);
  CHECK(s.snapshot == 9);
  CHECK(s.launches == whole.snapshots[9].begin.launches);
  LoadedLog l{"cut", log, s};
  std::ostringstream out;
  printSummaryTable(out, l, SummaryOptions{});
  CHECK(out.str().find("totals from snapshot 9") != std::string::npos);
  CHECK(out.str().find("not final") != std::string::npos);

  // A snapshot larger than a chunk (20,000 kernel rows) spans chunks; cut between them: the reader
  // reports the incomplete snapshot and which complete one it used.
  MemorySink sink;
  LogWriter w(&sink);
  writeDefinitions(w, true);
  Aggregator agg;
  agg.addLaunch(launchEvent(1, kStep, 0, 1).launch, 0);
  agg.addKernel(kernel(1, kNames, 0, 5), 0);
  agg.writeSnapshot(w, 10, false);
  w.flush();
  for (uint32_t i = 0; i < 20000; ++i) {
    agg.addLaunch(launchEvent(10 + i, kStep, 0, 1).launch, 0);
    agg.addKernel(kernel(10 + i, 100 + i, 0, 5), 0);
  }
  agg.writeSnapshot(w, 20, false);
  w.flush();
  const auto big_chunks = chunkOffsets(sink.bytes);
  REQUIRE(big_chunks.size() >= 3);
  std::vector<uint8_t> cut2(sink.bytes.begin(), sink.bytes.begin() + static_cast<std::ptrdiff_t>(big_chunks.back()));
  LogData log2 = readLog(cut2);
  CHECK_FALSE(log2.truncated);  // cut exactly at a chunk boundary: intact, but the snapshot is not complete
  CHECK(log2.incomplete_snapshots == 1);
  REQUIRE(log2.snapshots.size() == 1);
  bool reported = false;
  for (const auto& i : log2.issues)
    reported = reported || (i.message.find("snapshot 1 at byte") != std::string::npos &&
                               i.message.find("the last complete one before it is snapshot 0") != std::string::npos);
  CHECK(reported);
  CHECK(summarize(log2).launches == 1);
}

TEST_CASE("series: the change between snapshots per range") {
  const auto batches = syntheticRun(100);
  const LogData log = readLog(summaryLog(batches, 10));
  LoadedLog l{"s", log, summarize(log)};
  const auto series = snapshotSeries(l);
  REQUIRE(series.size() == log.snapshots.size());
  uint64_t gate_launches = 0, step_instances = 0;
  for (const auto& iv : series) {
    CHECK(iv.end_ns >= iv.begin_ns);
    for (const auto& [id, r] : iv.ranges) {
      if (id == kGate) gate_launches += r.launches;
      if (id == kStep) step_instances += r.instances;
    }
  }
  CHECK(gate_launches == 100);  // the changes add up to the totals
  CHECK(step_instances == 100);
  // Ten steps per snapshot: gate runs ten times in every interval but the last (the final one).
  bool found = false;
  for (const auto& [id, r] : series[3].ranges)
    if (id == kGate) found = r.launches == 10 && r.instances == 10;
  CHECK(found);
  const auto j = seriesJson({l});
  CHECK(j["logs"][0]["mode"] == "summary");
  CHECK(j["logs"][0]["intervals"].size() == series.size());
}

TEST_CASE("aggregator: GPU-time sums past 2^64 - 1 saturate instead of wrapping") {
  constexpr uint64_t kHuge = (uint64_t{1} << 63) - 1;
  Aggregator agg;
  for (uint64_t c = 1; c <= 3; ++c) {
    agg.addLaunch(launchEvent(c, kStep, c * 10, c * 10 + 1).launch, 0);
    agg.addKernel(kernel(c, 20, 1000, kHuge), 0);
  }
  agg.addKernel(kernel(99, 21, 1000, kHuge), 0);  // no launch: unmatched at finish
  agg.addKernel(kernel(98, 21, 1000, kHuge), 0);
  agg.settle(20'000'000'000ull, 2);
  const LogData log = finalSnapshotLog(agg, true);
  REQUIRE(log.snapshots.size() == 1);
  const SnapshotData& sd = log.snapshots[0];
  REQUIRE(!sd.scopes.empty());
  CHECK(sd.scopes[0].scope_id == kStep);
  CHECK(sd.scopes[0].kernels == 3);
  CHECK(sd.scopes[0].gpu_ns == kSaturated);
  bool tally = false;
  for (const auto& k : sd.kernels) tally = tally || (k.name_id == 20 && k.gpu_ns == kSaturated && k.count == 3);
  CHECK(tally);
  const Summary s = summarize(log);
  REQUIRE(s.exclusive.size() > kStep);
  CHECK(s.exclusive[kStep].gpu_ns == kSaturated);
  CHECK(s.inclusive[0].gpu_ns == kSaturated);
  CHECK(saturatedSums(s) > 0);
}

namespace {
/// The library's tables as a DefinitionSource: string id -> text, scope id -> ScopeBody.
struct TableDefinitions final : DefinitionSource {
  std::vector<std::string> strings{""};
  std::vector<ScopeBody> scopes{ScopeBody{}};
  bool stringText(uint32_t id, std::string* text) override {
    if (id >= strings.size()) return false;
    *text = strings[id];
    return true;
  }
  bool scope(uint32_t id, ScopeBody* s) override {
    if (id >= scopes.size()) return false;
    *s = scopes[id];
    return true;
  }
};
}  // namespace

TEST_CASE("summary mode at KCOUNT_MAX_BYTES with definitions on demand: a snapshot's size counts the definitions it writes") {
  // 200 top-level ranges with long names that compress little (500 pseudo-random characters of 64 each:
  // 100 KB of definitions), one instance each. The first snapshot writes those definitions before its rows,
  // in the file it goes to.
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.";
  TableDefinitions defs;
  std::mt19937_64 rng(7);
  for (uint32_t i = 1; i <= 200; ++i) {
    std::string name;
    for (int j = 0; j < 500; ++j) name += kAlphabet[rng() % 64];
    defs.strings.push_back(name);
    defs.scopes.push_back(ScopeBody{i, kRootScope, i, kNoString});
  }
  struct Run {
    std::vector<std::vector<uint8_t>> files;
    uint64_t head = 0, periodic = 0;
  };
  // `filler`: a metadata entry of that many characters in the first file only (not repeated by the
  // preamble), which takes room there.
  const auto run = [&](size_t cap, size_t filler) {
    MemorySink sink;
    sink.max_bytes = cap;
    sink.max_files = 3;
    LogWriter w(&sink);
    w.setDefinitions(&defs);
    w.setPreamble(
        [](LogWriter& pw, void*) {
          pw.writeMetadata("mode", "summary");
          pw.writeMetadata(kMetaRotatedFile, std::to_string(pw.rotations()));
        },
        nullptr);
    w.writeMetadata("mode", "summary");
    w.flush();
    Run r;
    r.head = w.bytesWritten();
    if (filler > 0) {
      std::string text;
      for (size_t j = 0; j < filler; ++j) text += kAlphabet[rng() % 64];
      w.writeMetadata("filler", text);
      w.flush();
    }
    const uint64_t before = w.bytesWritten();
    Aggregator agg;
    for (uint32_t i = 1; i <= 200; ++i) agg.addRange(RangeBody{100 * i, 100 * i + 50, i, 1, 1, 0});
    agg.settle(100000, 0);
    if (agg.writeSnapshot(w, 100000, false)) w.flush();
    r.periodic = w.bytesWritten() - before;
    agg.addRange(RangeBody{200000, 200050, 7, 1, 1, 0});
    agg.finish();
    CHECK(agg.writeSnapshot(w, 300000, true));
    w.flush();
    w.writeStats(StatsBody{});
    w.writeEnd();
    w.flush();
    CHECK(w.droppedBytes() == 0);
    CHECK(sink.refusals.empty());
    r.files = std::move(sink.files);
    r.files.push_back(std::move(sink.bytes));
    return r;
  };
  // Without a cap: what the periodic snapshot writes, definitions included.
  const Run whole = run(0, 0);
  REQUIRE(whole.periodic > 60000);
  // Files with room for that snapshot and 2000 bytes more; the first one holds 16000 characters of
  // metadata besides, so the snapshot does not fit in the room it has left, though its rows alone (about a
  // third of what it writes) do. Sized by its rows alone, it would start there and be split between two
  // files, read as incomplete in both. Sized with its definitions, it starts the next file, whole.
  const Run parts = run(whole.head + whole.periodic + LogWriter::kTailReserve + 2000, 16000);
  REQUIRE(parts.files.size() >= 2);
  std::vector<LogData> logs;
  std::vector<std::string> names;
  for (size_t k = 0; k < parts.files.size(); ++k) {
    INFO("part " << k);
    LogData d = readLog(parts.files[k]);
    for (const auto& i : d.issues) CHECK_MESSAGE(i.severity != ReadIssue::Severity::kError, i.message);
    CHECK(d.incomplete_snapshots == 0);
    logs.push_back(std::move(d));
    names.push_back("p" + std::to_string(k));
  }
  CHECK(logs[0].snapshots.empty());  // the snapshot went to the next file, whole
  const LogData log = joinRotatedParts(std::move(logs), names);
  CHECK(log.complete);
  CHECK(log.incomplete_snapshots == 0);
  REQUIRE(log.snapshots.size() == 2);
  const SnapshotData& last = log.snapshots.back();
  CHECK((last.begin.flags & kSnapshotFinal) != 0);
  CHECK(last.begin.ranges == 201);
  CHECK(log.scopePath(200) == defs.strings[200]);
}
