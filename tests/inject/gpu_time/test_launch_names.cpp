// KCOUNT_GPU_TIME=0 through the library's real handlers (no GPU): kernels named at their launch callbacks
// from CUpti_CallbackData::symbolName, and a graph launch's kernels read from its graph exec, without
// activity records, in trace and in summary mode (KC_GPU_TIME_SUMMARY). One session per process: everything
// is in one test, in order.
#include <cupti.h>
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "inject/callbacks.h"
#include "inject/cupti_api.h"
#include "inject/cupti_graphs.h"
#include "inject/graph_execs.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/launch_calls.h"
#include "tests/support/session_log_path.h"

namespace {

using namespace kc;
using namespace kc::inject;
using namespace kc::test;

// One launch call with the driver call inside a runtime launch sharing its correlation id (tests/support).
void launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t corr, const char* symbol,
            bool nested_driver = false) {
  launchCall(domain, cbid, corr, symbol, nested_driver);
}

// A cudaGraphLaunch of the exec whose CUPTI id is `exec` (the stub below hands the handle's value back).
void graphLaunch(uint32_t corr, uintptr_t exec) {
  cudaGraphLaunch_v10000_params params{reinterpret_cast<cudaGraphExec_t>(exec), nullptr};
  CUpti_CallbackData d{};
  d.correlationId = corr;
  d.functionParams = &params;
  d.callbackSite = CUPTI_API_ENTER;
  onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &d);
  d.callbackSite = CUPTI_API_EXIT;
  onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &d);
}

// Graph exec and node ids as CUPTI would give them: here the handle's value itself.
CUptiResult stubExecId(CUgraphExec exec, uint32_t* id) {
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(exec));
  return CUPTI_SUCCESS;
}
CUptiResult stubNodeId(CUgraphNode node, uint64_t* id) {
  *id = reinterpret_cast<uintptr_t>(node);
  return CUPTI_SUCCESS;
}

}  // namespace

TEST_CASE("KCOUNT_GPU_TIME=0: each direct launch is one kernel named at its call, graph launches none") {
  REQUIRE(installFakeNvtx() == 1);
  Session& session = Session::get();
  CHECK_FALSE(session.config().gpu_time);  // the test driver set KCOUNT_GPU_TIME=0
  setLaunchNames(true);                   // what InitializeInjection does for that setting
  CHECK(pushA("step") == 0);
  REQUIRE(session.recording());
  initLaunchApiNames(session.strings());
  REQUIRE(registerMemoryApi(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
                            "cudaMemcpyAsync_v3020", session.strings()));

  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, "_Z4gemmv", true);
  launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 2, "triton_poi_fused_0");
  launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 3, "triton_poi_fused_0");
  // The same address holding another name (a module unloaded, another loaded there): not the cached name.
  char reused[32];
  std::strcpy(reused, "first_kernel");
  launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 4, reused);
  std::strcpy(reused, "second_kernel");
  launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 5, reused);
  launch(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 6, nullptr);  // no name given
  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 7, nullptr);
  launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 8, nullptr);
  {  // captured into a graph during stream capture: runs nothing
    CUpti_CallbackData d{};
    d.correlationId = 9;
    d.symbolName = "_Z8capturedv";
    d.callbackSite = CUPTI_API_ENTER;
    onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &d);
    onGraphNode(GraphNodeBody{900, 0, 0, 7, 0, 0, 0}, /*created=*/true);
    d.callbackSite = CUPTI_API_EXIT;
    onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &d);
  }
  {  // Graph exec 42 as the GRAPHEXEC_CREATED callback leaves it: three kernel nodes, read from its graph.
    cupti().getGraphExecId = &stubExecId;
    cupti().getGraphNodeId = &stubNodeId;
    GraphProgram p;
    p.graph_id = 5;
    for (const auto& [node, name] : {std::pair<uint64_t, const char*>{0x101, "_Z2g1v"}, {0x102, "_Z2g2v"}, {0x103, "_Z2g3v"}})
      p.kernels.push_back(GraphKernelNode{node, session.strings().intern(name), true});
    graphExecs().instantiated(42, p);
    graphLaunch(20, 42);  // 3 kernels
    // cuGraphNodeSetEnabled(exec 42, node 0x102, 0), the driver call with correlation id 21: the launches
    // after it run 2 kernels, even those the writer takes after a later change.
    cuGraphNodeSetEnabled_params off{reinterpret_cast<CUgraphExec>(uintptr_t{42}), reinterpret_cast<CUgraphNode>(uintptr_t{0x102}), 0};
    CUresult ok = CUDA_SUCCESS;
    CUpti_CallbackData d{};
    d.callbackSite = CUPTI_API_EXIT;
    d.correlationId = 21;
    d.functionParams = &off;
    d.functionReturnValue = &ok;
    onGraphExecEdit(CUPTI_DRIVER_TRACE_CBID_cuGraphNodeSetEnabled, &d);
    graphLaunch(22, 42);  // 2 kernels
    graphLaunch(23, 99);  // an exec kcount never saw instantiated: unknown, no kernel
  }
  CHECK(pop() == 0);
  if (session.config().graph_gpu_time) {
    // KCOUNT_GPU_TIME=graphs: CUPTI's GRAPH_TRACE record of each graph launch (the unknown graph's too: its
    // GPU span is known though its kernels are not), and one whose launch was never seen.
    std::vector<CUpti_ActivityGraphTrace2> traces;
    for (const auto& [corr, start, end] : {std::tuple<uint32_t, uint64_t, uint64_t>{20, 1000, 1700}, {22, 2000, 2500},
                                           {23, 3000, 3100}, {999, 4000, 4050}}) {
      CUpti_ActivityGraphTrace2 g{};
      g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
      g.correlationId = corr;
      g.start = start;
      g.end = end;
      traces.push_back(g);
    }
    std::vector<const CUpti_Activity*> records;
    for (const auto& g : traces) records.push_back(reinterpret_cast<const CUpti_Activity*>(&g));
    onActivityRecords(records.data(), records.size());
  }

  // Four threads, 3,000 launches each over three names, more names than one cache slot holds.
  constexpr uint32_t kPerThread = 3000;
  static const char* const kNames[] = {"_Z6kernelILi0EEvv", "_Z6kernelILi1EEvv", "_Z6kernelILi2EEvv"};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t)
    threads.emplace_back([t] {
      pushA("worker");
      for (uint32_t i = 0; i < kPerThread; ++i)
        launch(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1000 + t * kPerThread + i,
               kNames[i % 3], true);
      pop();
    });
  for (auto& th : threads) th.join();

  session.finish(nullptr);
  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.complete);
  CHECK(log.summary_mode == g_summary_mode);
  const Summary s = summarize(log);
  CHECK(s.launches == 11 + 4 * kPerThread);  // memcpy calls are not launches
  CHECK(s.kernels == 6 + 5 + 4 * kPerThread);  // all but the captured launch and two graph launches; 3 + 2 graph kernels
  CHECK(s.unmatched_kernels == 0);
  // The graph launches of unknown content: no functionParams (7), an exec never seen instantiated (23).
  CHECK(s.launches_without_kernel == 2);
  CHECK(log.meta("graph_launch_unknown").find("correlation id 7") != std::string::npos);
  CHECK(s.captured_launches == 1);
  CHECK(s.kernel_gpu_ns == 0);
  // The graph launches' GPU spans, in the range around them; none without KCOUNT_GPU_TIME=graphs.
  const bool graphs = session.config().graph_gpu_time;
  uint64_t graph_gpu_launches = 0, graph_gpu_ns = 0;
  for (uint32_t id = 0; id < log.scopes.size(); ++id) {
    graph_gpu_launches += s.exclusive[id].graph_gpu_launches;
    graph_gpu_ns += s.exclusive[id].graph_gpu_ns;
    if (graphs && log.str(log.scopes[id].name_id) == "step") {
      CHECK(s.exclusive[id].graph_gpu_launches == 3);
      CHECK(s.exclusive[id].graph_gpu_ns == 700 + 500 + 100);
    }
  }
  CHECK(graph_gpu_launches == (graphs ? 3 : 0));
  CHECK(graph_gpu_ns == (graphs ? 1300 : 0));
  CHECK(s.unmatched_mem_ops == (graphs ? 1 : 0));  // correlation id 999

  std::map<std::string, uint64_t> by_name;
  for (uint32_t id = 0; id < log.scopes.size(); ++id)
    for (const auto& [name_id, t] : s.exclusive[id].by_kernel) by_name[std::string(log.str(name_id))] += t.count;
  CHECK(by_name["_Z4gemmv"] == 1);
  CHECK(by_name["triton_poi_fused_0"] == 2);
  CHECK(by_name["first_kernel"] == 1);
  CHECK(by_name["second_kernel"] == 1);
  CHECK(by_name["(kernel name not given at launch)"] == 1);
  CHECK(by_name.count("_Z8capturedv") == 0);
  CHECK(by_name["_Z2g1v"] == 2);
  CHECK(by_name["_Z2g2v"] == 1);  // disabled after the first launch
  CHECK(by_name["_Z2g3v"] == 2);
  for (const char* n : kNames) CHECK(by_name[n] == 4 * kPerThread / 3);
  if (!g_summary_mode) {  // trace mode: one kernel record per launch, same correlation id, no GPU time
    CHECK(log.kernels.size() == 6 + 5 + 4 * kPerThread);
    for (const KernelBody& k : log.kernels) CHECK(k.end_ns == k.start_ns);
  }
}
