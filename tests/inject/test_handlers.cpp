// The library's real handlers driven with records built from the real CUPTI and NVTX3 structs: NVTX
// injection tables, launch callbacks (runtime + driver sharing a correlation id, driver-only, graph
// launches), kernel activity records, several threads, and the final flush through the log reader.
#include <cupti.h>
#include <doctest/doctest.h>
#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "inject/callbacks.h"
#include "inject/nvtx_injection.h"
#include "inject/session.h"
#include "inject/thread_state.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/launch_calls.h"
#include "tests/support/session_log_path.h"

namespace {

using namespace kc;
using namespace kc::inject;
using namespace kc::test;

void installNvtx() {
  REQUIRE(installFakeNvtx() == 1);
  // A second library embedding NVTX3 initializes again; that must work too.
  REQUIRE(installFakeNvtx() == 1);
}

void launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t corr, bool nested_driver = false) {
  launchCall(domain, cbid, corr, nullptr, nested_driver);
}

CUpti_ActivityKernel10 kernelRecord(uint32_t corr, const char* name, uint64_t start, uint32_t graph_id = 0) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.correlationId = corr;
  k.name = name;
  k.start = start;
  k.end = start + 1000;
  k.deviceId = 0;
  k.streamId = 7;
  k.gridX = 132;
  k.gridY = k.gridZ = 1;
  k.blockX = 256;
  k.blockY = k.blockZ = 1;
  k.graphId = graph_id;
  k.graphNodeId = graph_id != 0 ? 1000 + start : 0;
  k.registersPerThread = 42;
  return k;
}

void deliver(const std::vector<CUpti_ActivityKernel10>& records) {
  std::vector<const CUpti_Activity*> ptrs;
  for (const auto& r : records) ptrs.push_back(reinterpret_cast<const CUpti_Activity*>(&r));
  onActivityRecords(ptrs.data(), ptrs.size());
}

}  // namespace

TEST_CASE("kernel activity record conversion keeps every field kcount reports") {
  CUpti_ActivityKernel10 r = kernelRecord(42, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", 5000, 3);
  r.staticSharedMemory = 1024;
  r.dynamicSharedMemory = 2048;
  r.clusterX = 2;
  r.clusterY = 1;
  r.clusterZ = 1;
  const KernelBody k = toKernelBody(r, 77);
  CHECK(k.correlation_id == 42);
  CHECK(k.start_ns == 5000);
  CHECK(k.end_ns == 6000);
  CHECK(k.name_id == 77);
  CHECK(k.stream_id == 7);
  CHECK(k.grid[0] == 132);
  CHECK(k.block[0] == 256);
  CHECK(k.graph_id == 3);
  CHECK(k.graph_node_id == 6000);
  CHECK(k.shared_bytes == 3072);
  CHECK(k.cluster[0] == 2);
  CHECK(k.registers == 42);
}

TEST_CASE("launch table covers the CUDA 13 launch entry points once each") {
  size_t n = 0;
  const LaunchApi* apis = launchApis(&n);
  bool have_ex = false, have_graph = false, have_cuda13 = false;
  for (size_t i = 0; i < n; ++i) {
    have_ex |= apis[i].cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx && apis[i].domain == CUPTI_CB_DOMAIN_DRIVER_API;
    have_graph |= apis[i].cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 && apis[i].graph_launch;
    have_cuda13 |= apis[i].cbid == CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000;
    for (size_t j = i + 1; j < n; ++j) CHECK_FALSE((apis[i].cbid == apis[j].cbid && apis[i].domain == apis[j].domain));
  }
  CHECK(have_ex);
  CHECK(have_graph);
  CHECK(have_cuda13);
}

// One session per process: everything that goes through it is in this one test, in order.
TEST_CASE("session: NVTX ranges, launches and kernels end up joined in the log") {
  installNvtx();
  Session& session = Session::get();
  CHECK(session.state() == SessionState::kDormant);

  CHECK(pushA("step") == 0);  // the first range starts recording
  REQUIRE(session.recording());
  initLaunchApiNames(session.strings());
  CHECK(pushA("gemm") == 1);
  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, /*nested_driver=*/true);
  CHECK(pop() == 1);
  launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 2);  // in step
  CHECK(pop() == 0);
  CHECK(pop() == -1);  // nothing pushed: counted, ignored
  launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 3);  // no range

  // A domain range with a registered string; a default-domain pop must not pop it.
  nvtxDomainHandle_t dom = domainCreate("mylib");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = registerString(dom, "graph");
  CHECK(domainPush(dom, &attr) == 0);
  CHECK(pop() == -1);
  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 4);
  CHECK(domainPop(dom) == 0);

  // Stream capture: a launch inside `cap` creates a graph node (captured, not run); instantiation clones
  // the node; the replay in `rep` runs the clone.
  CHECK(pushA("cap") == 0);
  {
    CUpti_CallbackData d{};
    d.correlationId = 50;
    d.callbackSite = CUPTI_API_ENTER;
    onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &d);
    onGraphNode(GraphNodeBody{500, 0, 0, 7, 0, 0, 0}, /*created=*/true);
    d.callbackSite = CUPTI_API_EXIT;
    onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &d);
  }
  CHECK(pop() == 0);
  onGraphNode(GraphNodeBody{600, 500, 0, 8, 0, 0, 0}, /*created=*/false);
  CHECK(pushA("rep") == 0);
  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 51);
  CHECK(pop() == 0);

  // Memory operations: API calls flagged as memory calls, joined to MEMCPY/MEMSET records.
  REQUIRE(registerMemoryApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                            "cudaMemcpyAsync_v3020", session.strings()));
  REQUIRE(registerMemoryApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                            "cudaMemsetAsync_v3020", session.strings()));
  CHECK(pushA("mem") == 0);
  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 60);
  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 61);
  CHECK(pop() == 0);

  // Times: a range around a 20 ms sleep, bracketed by clock_gettime. The hot path takes its timestamps with
  // hostTicks() (the TSC where the kernel keeps time with it); the log must hold CLOCK_MONOTONIC ns.
  const uint64_t timed_before = nowNs();
  CHECK(pushA("timed") == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(pop() == 0);
  const uint64_t timed_after = nowNs();

  // Four threads, each with its own range and 12,000 launches.
  constexpr uint32_t kPerThread = 12000;  // more than one drain batch (kDrainBatch) together
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      pushA("worker");
      for (uint32_t i = 0; i < kPerThread; ++i)
        launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1000 + t * kPerThread + i,
               true);
      pop();
    });
  }
  for (auto& th : threads) th.join();
  // A thread that exits with a range still pushed: the range is written as unclosed, by that thread.
  uint32_t leaver_tid = 0;
  std::thread([&leaver_tid] {
    pushA("left-open");
    leaver_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  }).join();

  // Ranges nested deeper than the thread's stack (ThreadState::kMaxDepth = 256) are not tracked: each one
  // popped inside the window is a range record not written, counted with the dropped host records.
  std::thread([] {
    for (uint32_t i = 0; i < ThreadState::kMaxDepth + 4; ++i) pushA("deep");
    for (uint32_t i = 0; i < ThreadState::kMaxDepth + 4; ++i) pop();
  }).join();

  std::vector<CUpti_ActivityKernel10> records{
      kernelRecord(1, "gemm_kernel", 100), kernelRecord(2, "_ZN2at6native18elementwise_kernelEv", 200),
      kernelRecord(3, "no_range_kernel", 300), kernelRecord(99, "orphan", 400)};
  for (uint64_t i = 0; i < 3; ++i) records.push_back(kernelRecord(4, "graph_node_kernel", 500 + i, 9));
  CUpti_ActivityKernel10 replayed = kernelRecord(51, "replayed_kernel", 700, 8);
  replayed.graphNodeId = 600;
  records.push_back(replayed);
  deliver(records);
  {
    CUpti_ActivityMemcpy6 copy{};
    copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    copy.bytes = 4096;
    copy.start = 800;
    copy.end = 900;
    copy.correlationId = 60;
    CUpti_ActivityMemset4 set{};
    set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    set.bytes = 1024;
    set.start = 950;
    set.end = 1000;
    set.correlationId = 61;
    const CUpti_Activity* mem[] = {reinterpret_cast<const CUpti_Activity*>(&copy),
                                   reinterpret_cast<const CUpti_Activity*>(&set)};
    onActivityRecords(mem, 2);
  }
  // The worker kernels' name comes from one buffer whose text changes between two deliveries, as when a
  // module is unloaded and another one's name lands at the same address: the name cache must see it.
  char reused_name[32] = "worker_kernel_a";
  std::vector<CUpti_ActivityKernel10> worker_records;
  for (uint32_t c = 1000; c < 1000 + 4 * kPerThread; ++c) {
    worker_records.push_back(kernelRecord(c, reused_name, c));
    if (c + 1 == 1000 + 2 * kPerThread) {
      deliver(worker_records);
      worker_records.clear();
      std::strcpy(reused_name, "worker_kernel_b");
    }
  }
  deliver(worker_records);

  // `kcount ctl status` counts launches as `kcount summary` does: memcpy/memset calls apart.
  session.flushNow();
  {
    const SessionStatus st = session.status();
    CHECK(st.launches == 6 + 4 * kPerThread);
    CHECK(st.mem_calls == 2);
  }

  session.finish(nullptr);
  CHECK(session.state() == SessionState::kFinished);
  deliver({kernelRecord(5, "late", 900)});  // after the log is closed: counted as late

  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.complete);
  CHECK(log.summary_mode == g_summary_mode);
  if (g_summary_mode) {  // no records, only snapshots; the last one is the final one and settled everything
    CHECK(log.launches.empty());
    CHECK(log.kernels.empty());
    REQUIRE_FALSE(log.snapshots.empty());
    CHECK((log.snapshots.back().begin.flags & kSnapshotFinal) != 0);
    CHECK(log.snapshots.back().begin.inflight_launches == 0);
    CHECK(log.meta("mode") == "summary");
  }
  const Summary s = summarize(log);
  CHECK(s.launches == 6 + 4 * kPerThread);  // memory calls are not launches
  CHECK(s.kernels == 8 + 4 * kPerThread);
  CHECK(s.unmatched_kernels == 1);  // correlation id 99
  CHECK(s.captured_launches == 1);
  CHECK(s.launches_without_kernel == 0);  // the captured launch ran nothing, by design
  CHECK(s.mem_ops == 2);

  const RangeStats* cap = rangeAt(log, s, "cap");
  const RangeStats* rep = rangeAt(log, s, "rep");
  REQUIRE(cap != nullptr);
  REQUIRE(rep != nullptr);
  CHECK(cap->launches == 1);
  CHECK(cap->captured_launches == 1);
  CHECK(cap->kernels == 0);
  CHECK(rep->launches == 1);
  CHECK(rep->graph_launches == 1);
  CHECK(rep->kernels == 1);
  if (!g_summary_mode) {  // the capture path needs graph-node records (trace mode)
    const Summary by_capture = summarize(log, JoinOptions{GraphView::kCapturePath});
    CHECK(rangeAt(log, by_capture, "cap")->kernels == 1);  // the replayed kernel, credited where it was captured
    CHECK(rangeAt(log, by_capture, "rep")->kernels == 0);
    CHECK(rangeAt(log, by_capture, "rep")->launches == 1);
  }

  const RangeStats* mem = rangeAt(log, s, "mem");
  REQUIRE(mem != nullptr);
  CHECK(mem->launches == 0);
  CHECK(mem->kernels == 0);
  CHECK(mem->memcpy_count == 1);
  CHECK(mem->memcpy_bytes == 4096);
  CHECK(mem->memcpy_ns == 100);
  CHECK(mem->memset_count == 1);
  CHECK(mem->memset_bytes == 1024);
  bool memcpy_named = false;
  for (const LaunchBody& l : log.launches)
    if (l.correlation_id == 60) memcpy_named = log.str(l.api_id) == "cudaMemcpyAsync" && (l.flags & kLaunchMemOp);
  CHECK(memcpy_named == !g_summary_mode);  // records exist in trace mode only

  const RangeStats* gemm = rangeAt(log, s, "step/gemm");
  REQUIRE(gemm != nullptr);
  CHECK(gemm->launches == 1);
  CHECK(gemm->kernels == 1);
  CHECK(gemm->instances == 1);
  const RangeStats* step = rangeAt(log, s, "step");
  REQUIRE(step != nullptr);
  CHECK(step->launches == 1);
  CHECK(step->kernels == 1);
  CHECK(s.exclusive[kRootScope].launches == 1);
  CHECK(s.exclusive[kRootScope].kernels == 1);
  const RangeStats* graph = rangeAt(log, s, "graph");
  REQUIRE(graph != nullptr);
  CHECK(graph->launches == 1);
  CHECK(graph->graph_launches == 1);
  CHECK(graph->kernels == 3);
  const RangeStats* worker = rangeAt(log, s, "worker");
  REQUIRE(worker != nullptr);
  CHECK(worker->instances == 4);
  CHECK(worker->launches == 4 * kPerThread);
  CHECK(worker->kernels == 4 * kPerThread);
  std::map<std::string, uint64_t> worker_names;
  for (const auto& [name_id, t] : worker->by_kernel) worker_names[std::string(log.str(name_id))] = t.count;
  CHECK(worker_names == std::map<std::string, uint64_t>{{"worker_kernel_a", 2 * kPerThread},
                                                        {"worker_kernel_b", 2 * kPerThread}});
  CHECK(s.unmatched_by_kernel.size() == 1);  // "orphan"
  CHECK(s.kernel_gpu_ns == (8 + 4 * kPerThread) * 1000);
  // Converted times (collector/clock.h): within 50 µs of the clock_gettime reads around them.
  constexpr uint64_t kSlackNs = 50'000;
  const RangeStats* timed = rangeAt(log, s, "timed");
  REQUIRE(timed != nullptr);
  CHECK(timed->cpu_ns >= 20'000'000 - kSlackNs);
  CHECK(timed->cpu_ns <= timed_after - timed_before + kSlackNs);
  if (!g_summary_mode) {
    for (const RangeBody& r : log.ranges)
      if (r.scope_id == timed->scope_id) {
        CHECK(r.begin_ns + kSlackNs >= timed_before);
        CHECK(r.end_ns <= timed_after + kSlackNs);
      }
    const uint64_t start_ns = std::stoull(std::string(log.meta("start_ns")));
    const uint64_t end_ns = nowNs();
    size_t in_order = 0;
    for (const LaunchBody& l : log.launches)
      in_order += l.enter_ns + kSlackNs >= start_ns && l.enter_ns <= l.exit_ns && l.exit_ns <= end_ns;
    CHECK(in_order == log.launches.size());
    CHECK(log.meta("host_clock") == (tscUsableHere() ? "tsc" : "CLOCK_MONOTONIC"));  // KCOUNT_HOST_CLOCK unset
  }
  const RangeStats* left_open = rangeAt(log, s, "left-open");
  REQUIRE(left_open != nullptr);
  CHECK(left_open->instances == 1);
  if (!g_summary_mode) {  // range records exist in trace mode only
    int unclosed_by_leaver = 0;
    for (const RangeBody& r : log.ranges)
      if (r.scope_id == left_open->scope_id)
        unclosed_by_leaver += (r.flags & kRangeUnclosed) && r.thread_id == leaver_tid && r.end_ns >= r.begin_ns;
    CHECK(unclosed_by_leaver == 1);
  }

  // The outermost API names the launch (runtime call around the driver call).
  bool saw_runtime_name = false;
  for (const LaunchBody& l : log.launches)
    if (l.correlation_id == 1) saw_runtime_name = log.str(l.api_id) == "cudaLaunchKernel";
  CHECK(saw_runtime_name == !g_summary_mode);
  CHECK(log.stats.nvtx_pop_underflow == 2);
  CHECK(log.stats.late_activity_records == 0);  // written before the late record arrived
  CHECK(session.counters().late_activity_records.load() == 1);
  CHECK(log.stats.dropped_host_records == 4);  // the 4 ranges past 256 deep on the "deep" thread
}

TEST_CASE("PyTorch emit_nvtx names lose their per-call suffixes (KCOUNT_TORCH_OPS)") {
  auto len = [](const char* s) { return std::string(s, torchOpNameLength(s, std::strlen(s))); };
  CHECK(len("aten::addmm, seq = 12, op_id = 345") == "aten::addmm");
  CHECK(len("aten::mm, op_id = 7") == "aten::mm");
  CHECK(len("aten::relu, seq = 3") == "aten::relu");
  CHECK(len("aten::linear, op_id = 9, sizes = [[2, 3]]") == "aten::linear");
  CHECK(len("model.layers.0.mlp") == "model.layers.0.mlp");
  CHECK(len(", seq = 1") == ", seq = 1");  // nothing before the suffix: kept
  CHECK(len("") == "");
}
