// A CUDA-free process that records as the library's summary mode does (KCOUNT_MODE=summary): launches and
// their kernels, in ranges "step" > "layer" and "step" > "sample", are joined and tallied by the
// collector's Aggregator and written as snapshots to a log every INTERVAL_MS by the LogWriter, as the
// library's writer thread does, while the log grows; at the end the final snapshot, Stats and End. For
// `kcount exporter` tests (tests/cli/test_exporter.py): a live summary-mode log with kernels, no GPU.
//
// Usage: kc_summary_process OUT.kcount STEPS STEP_MS INTERVAL_MS
// Each step: one "step" range holding 3 "layer" ranges of 2 kernels each and one "sample" range of 1
// kernel (7 kernels a step). Metadata: mode summary, host, pid, rank (RANK), start_ns, command_line.
// Exit status 0, or 2 with a message (usage, the log cannot be written).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "collector/aggregator.h"
#include "collector/file_sink.h"
#include "collector/log_writer.h"

namespace {

uint64_t nowNs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

struct Recorder {
  kc::LogWriter& w;
  kc::Aggregator& agg;
  uint64_t correlation = 0;

  void kernel(uint32_t scope, uint32_t name_id, uint64_t t) {
    kc::LaunchBody l{};
    l.correlation_id = ++correlation;
    l.enter_ns = t;
    l.exit_ns = t + 3000;
    l.scope_id = scope;
    l.thread_id = static_cast<uint32_t>(::getpid());
    l.api_id = 2;  // "cuLaunchKernelEx"
    l.cbid = 652;
    l.domain = static_cast<uint8_t>(kc::ApiDomain::kDriver);
    agg.addLaunch(l, t);
    kc::KernelBody k{};
    k.correlation_id = l.correlation_id;
    k.start_ns = t + 5000;
    k.end_ns = t + 5000 + 20000;  // 20 us
    k.name_id = name_id;
    agg.addKernel(k, t);
  }

  void range(uint32_t scope, uint64_t begin, uint64_t end) {
    kc::RangeBody r{};
    r.begin_ns = begin;
    r.end_ns = end;
    r.scope_id = scope;
    agg.addRange(r);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: kc_summary_process OUT.kcount STEPS STEP_MS INTERVAL_MS\n");
    return 2;
  }
  const long steps = std::atol(argv[2]), step_ms = std::atol(argv[3]), interval_ms = std::atol(argv[4]);
  if (steps < 1 || step_ms < 0 || interval_ms < 1) {
    std::fprintf(stderr, "kc_summary_process: STEPS >= 1, STEP_MS >= 0, INTERVAL_MS >= 1\n");
    return 2;
  }
  bool failed = false;
  kc::FileSink sink(argv[1], 0644, 0, [&failed](const std::string& m) {
    std::fprintf(stderr, "kc_summary_process: %s\n", m.c_str());
    failed = true;
  });
  kc::LogWriter w(&sink);
  kc::Aggregator agg;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  const uint64_t start = nowNs();
  w.writeMetadata("mode", "summary");
  w.writeMetadata("interval_ns", std::to_string(interval_ms * 1000000));
  w.writeMetadata("pid", std::to_string(::getpid()));
  w.writeMetadata("host", host);
  if (const char* rank = std::getenv("RANK"); rank != nullptr && *rank != '\0') w.writeMetadata("rank", rank);
  w.writeMetadata("start_ns", std::to_string(start));
  w.writeMetadata("command_line", std::string(argv[0]) + " " + argv[1] + " " + argv[2] + " " + argv[3] + " " + argv[4]);
  const char* strings[] = {"", "(string table full)", "cuLaunchKernelEx", "step", "layer", "sample",
                           "ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel<4>()"};
  for (uint32_t id = 1; id < sizeof(strings) / sizeof(strings[0]); ++id) w.writeString(id, strings[id]);
  // Scope 1 is the library's reserved scope (kOverflowScope); the ranges follow it.
  w.writeScope(kc::ScopeBody{1, kc::kRootScope, 1, kc::kNoString});
  w.writeScope(kc::ScopeBody{2, kc::kRootScope, 3, kc::kNoString});  // step
  w.writeScope(kc::ScopeBody{3, 2, 4, kc::kNoString});               // step/layer
  w.writeScope(kc::ScopeBody{4, 2, 5, kc::kNoString});               // step/sample
  w.flush();
  Recorder rec{w, agg};
  uint64_t flushes = 0, next_snapshot = start + static_cast<uint64_t>(interval_ms) * 1000000;
  for (long s = 0; s < steps; ++s) {
    const uint64_t step_begin = nowNs();
    for (int layer = 0; layer < 3; ++layer) {
      const uint64_t t = nowNs();
      rec.kernel(3, 6, t);
      rec.kernel(3, 7, t + 100000);
      rec.range(3, t, t + 200000);
    }
    const uint64_t t = nowNs();
    rec.kernel(4, 7, t);
    rec.range(4, t, t + 100000);
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
    rec.range(2, step_begin, nowNs());
    agg.settle(nowNs(), ++flushes);
    if (nowNs() >= next_snapshot) {
      agg.writeSnapshot(w, nowNs(), false);
      failed |= !w.flush();
      next_snapshot += static_cast<uint64_t>(interval_ms) * 1000000;
    }
  }
  agg.finish();
  agg.writeSnapshot(w, nowNs(), true);
  kc::StatsBody stats{};
  w.writeStats(stats);
  w.writeEnd();
  failed |= !w.flush();
  if (failed) {
    std::fprintf(stderr, "kc_summary_process: cannot write %s\n", argv[1]);
    return 2;
  }
  return 0;
}
