// CPU cost of summary mode's aggregator per event (collector/aggregator.h), on the writer thread: a
// steady-state stream like a training step (nested ranges, one kernel per launch, a graph launch with many
// kernels now and then, kernels arriving in the next drain), fed in drains of `--batch` launches, with
// settle() after each drain and a forced-flush tick every 10 drains. Reports ns per event (a launch, a
// range or an activity record each count as one event) and ns per launch (its kernel and ranges
// included), in CPU time of the thread (CLOCK_THREAD_CPUTIME_ID). Not a test: numbers depend on the machine.
// Usage: kc_aggregator_bench [LAUNCHES] [BATCH]     (defaults 5,000,000 and 20,000)
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "collector/aggregator.h"
#include "collector/log_writer.h"

namespace {
/// CPU time of this thread (s): on a shared machine, wall time would count the time other processes ran.
double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

int main(int argc, char** argv) {
  const uint64_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 5'000'000;
  const uint64_t batch = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20'000;
  kc::Aggregator agg;
  std::vector<kc::LaunchBody> ls;
  std::vector<kc::RangeBody> rs;
  std::vector<kc::KernelBody> ks, next_ks;
  uint64_t corr = 1, events = 0, flushes = 0, drains = 0;
  uint64_t now = 1'000'000'000;
  double total_s = 0;
  for (uint64_t done = 0; done < launches;) {
    ls.clear();
    rs.clear();
    ks.swap(next_ks);
    next_ks.clear();
    // Build one drain's records (not timed).
    for (uint64_t i = 0; i < batch && done < launches; ++i, ++done) {
      kc::LaunchBody l{};
      l.correlation_id = corr;
      l.scope_id = 2 + static_cast<uint32_t>(corr % 6);  // six ranges
      l.enter_ns = now + i * 1000;
      l.exit_ns = l.enter_ns + 3000;
      const bool graph = corr % 1000 == 0;
      l.is_graph_launch = graph;
      ls.push_back(l);
      if (corr % 5 == 0) rs.push_back(kc::RangeBody{l.enter_ns, l.exit_ns + 100, l.scope_id, 1, 1, 0});
      const int nk = graph ? 50 : 1;
      for (int k = 0; k < nk; ++k) {
        kc::KernelBody kb{};
        kb.correlation_id = corr;
        kb.name_id = 100 + static_cast<uint32_t>((corr + k) % 40);  // 40 kernel names
        kb.start_ns = l.exit_ns + 5000;
        kb.end_ns = kb.start_ns + 20000 + corr % 777;
        (i % 2 ? next_ks : ks).push_back(kb);  // half arrive one drain later
      }
      ++corr;
    }
    now += 100'000'000;
    if (++drains % 10 == 0) ++flushes;
    const double t0 = threadCpuSeconds();
    for (const auto& l : ls) agg.addLaunch(l, now);
    for (const auto& r : rs) agg.addRange(r);
    for (const auto& k : ks) agg.addKernel(k, now);
    agg.settle(now, flushes);
    total_s += threadCpuSeconds() - t0;
    events += ls.size() + rs.size() + ks.size();
  }
  const double t0 = threadCpuSeconds();
  for (const auto& k : next_ks) agg.addKernel(k, now);
  agg.finish();
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  agg.writeSnapshot(w, now, true);
  w.flush();
  total_s += threadCpuSeconds() - t0;
  events += next_ks.size();
  const auto t = agg.totals();
  std::printf("launches %llu, events %llu (launches + ranges + kernels), %.3f s of thread CPU time in the aggregator\n",
              static_cast<unsigned long long>(launches), static_cast<unsigned long long>(events), total_s);
  std::printf("%.1f ns per event, %.1f ns per launch; keys %zu; kernels %llu, unmatched %llu, without kernel %llu; "
              "final snapshot %zu bytes\n",
              total_s * 1e9 / static_cast<double>(events), total_s * 1e9 / static_cast<double>(launches), agg.keys(),
              static_cast<unsigned long long>(t.kernels), static_cast<unsigned long long>(t.unmatched_kernels),
              static_cast<unsigned long long>(t.launches_without_kernel), sink.bytes.size());
  return t.unmatched_kernels == 0 && t.launches_without_kernel == 0 ? 0 : 1;
}
