// KCOUNT_GPU_TIME=graphs in summary mode with capture windows (no GPU; the session starts paused): GRAPH_TRACE
// stays on while paused, so CUPTI delivers the GPU spans of graph launches made outside any window too;
// only the window's reach the tallies, the others are counted as activity outside windows, and no span is
// a memory operation in the totals. One session per process: everything is in one test, in order.
#include <cupti.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "inject/callbacks.h"
#include "inject/cupti_api.h"
#include "inject/graph_execs.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/session_test_main.h"

namespace {

using namespace kc;
using namespace kc::inject;
using namespace kc::test;

CUptiResult stubExecId(CUgraphExec exec, uint32_t* id) {
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(exec));
  return CUPTI_SUCCESS;
}

// A cudaGraphLaunch of exec 42 with correlation id `corr`.
void graphLaunch(uint32_t corr) {
  cudaGraphLaunch_v10000_params params{reinterpret_cast<cudaGraphExec_t>(uintptr_t{42}), nullptr};
  CUpti_CallbackData d{};
  d.correlationId = corr;
  d.functionParams = &params;
  for (CUpti_ApiCallbackSite site : {CUPTI_API_ENTER, CUPTI_API_EXIT}) {
    d.callbackSite = site;
    onLaunchCallback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &d);
  }
}

// CUPTI's GRAPH_TRACE records of the graph launches `corrs`, each 1000 ns long.
void deliverSpans(const std::vector<uint32_t>& corrs) {
  std::vector<CUpti_ActivityGraphTrace2> records(corrs.size());
  std::vector<const CUpti_Activity*> ptrs;
  for (size_t i = 0; i < corrs.size(); ++i) {
    records[i].kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    records[i].correlationId = corrs[i];
    records[i].start = 10000ull * corrs[i];
    records[i].end = records[i].start + 1000;
    ptrs.push_back(reinterpret_cast<const CUpti_Activity*>(&records[i]));
  }
  onActivityRecords(ptrs.data(), ptrs.size());
}

bool attach() { return true; }
void detach() {}

}  // namespace

TEST_CASE("KCOUNT_GPU_TIME=graphs, paused: only the window's graph spans are tallied") {
  REQUIRE(installFakeNvtx() == 1);
  Session& s = Session::get();
  REQUIRE(s.config().graph_gpu_time);
  s.setCaptureHooks(&attach, &detach);
  initLaunchApiNames(s.strings());
  setLaunchNames(true);  // what InitializeInjection does without kernel activity
  cupti().getGraphExecId = &stubExecId;
  GraphProgram p;
  p.graph_id = 1;
  p.kernels.push_back(GraphKernelNode{0x101, s.strings().intern("_Z6decodev"), true});
  graphExecs().instantiated(42, p);

  CHECK(pushA("decode") == 0);
  graphLaunch(1);  // paused: not recorded
  graphLaunch(2);
  std::string error;
  REQUIRE(s.startCapture("ctl", 0, &error));
  deliverSpans({1, 2});  // CUPTI's buffer with the paused launches' spans, delivered in the window
  graphLaunch(10);
  graphLaunch(11);
  s.flushNow();
  deliverSpans({10, 11});
  REQUIRE(s.stopCapture("ctl", &error));
  graphLaunch(20);  // paused again
  deliverSpans({20});
  CHECK(pop() == 0);
  s.finish(nullptr);

  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  REQUIRE(log.summary_mode);
  const Summary sum = summarize(log);
  uint64_t spans = 0, span_ns = 0, graph_launches = 0;
  for (uint32_t id = 0; id < log.scopes.size(); ++id) {
    spans += sum.exclusive[id].graph_gpu_launches;
    span_ns += sum.exclusive[id].graph_gpu_ns;
    graph_launches += sum.exclusive[id].graph_launches;
  }
  CHECK(graph_launches == 2);
  CHECK(spans == 2);
  CHECK(span_ns == 2000);
  CHECK(sum.kernels == 2);
  CHECK(sum.mem_ops == 0);  // a graph's span is no memory operation
  CHECK(sum.unmatched_mem_ops == 0);
  CHECK(s.counters().activity_outside_windows.load() == 3);  // the spans of 1, 2 and 20
}

int main(int argc, char** argv) {
  setenv("KCOUNT_START", "paused", 1);
  setenv("KCOUNT_CONTROL", "off", 1);
  setenv("KCOUNT_GPU_TIME", "graphs", 1);
  return runSessionTests(argc, argv, "/tmp/kcount-graph-spans.XXXXXX", "test.kcount", /*summary_mode=*/true);
}
