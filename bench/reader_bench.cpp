// Reader and log-size benchmark (not a test): writes synthetic trace logs of a training loop with the
// library's LogWriter, then summarizes them with the streaming reader in a child process, and reports
// bytes per kernel, write throughput, summary records per second and the reader's peak RSS.
//
// The synthetic process: a step loop on 3 threads (forward on the main thread, backward on an autograd
// thread, a loader thread issuing memcpy calls), nested NVTX ranges (step > fwd/bwd/optim > layer N >
// attn/mlp), 24 distinct kernels with fixed launch shapes, the optimizer as a CUDA graph replay (one
// launch, 32 kernels from consecutive graph nodes). Host times have ns resolution and jitter; GPU times
// are on a 32 ns grid with +-1 ns of clock conversion, as CUPTI delivers them on the H200 (see
// tests/data/launches.kcount). Records reach the writer as the library's writer thread hands them over:
// per drain, each thread's launches and ranges, then the kernels CUPTI delivered.
//
// Rates are per CPU second of the one thread that does the work (getrusage), so a CPU shared with other
// processes does not lower them; wall times are printed beside them.
// Usage: reader_bench [--kernels N[,N...]] [--windows W] [--dir DIR] [--kcount PATH] [--plain] [--keep]
//        reader_bench --ranges N[,N...] [--dir DIR] [--kcount PATH] [--keep]
//   --kernels   kernel records per log (default 1000000,10000000,50000000)
//   --ranges    instead: logs of N steps of 2 nested NVTX ranges each and nothing else (2 range paths, one
//               thread, one capture window; tests/support/instance_log.h), as NVTX-heavy runs with
//               --torch-modules/--torch-ops give; reports the reader per range instance and, with
//               --kcount, `kcount summary` (table and JSON) and `kcount diff LOG LOG`
//   --dir       where the logs are written (default /tmp)
//   --kcount    also time `kcount summary LOG` (the command line tool) on each log
//   --plain     write plain 1.1-layout chunks instead (for comparison)
//   --windows   cut each log into W capture windows of about N / W kernels, each closed by its Segment
//               record and a flush, whose correlation ids start at 1 again (as CUPTI numbers them after
//               the cuptiFinalize of a stop, and the library wrote them before it renumbered)
// Internal: reader_bench --summarize LOG  (the child that reads; prints its numbers)
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "collector/file_sink.h"
#include "collector/log_writer.h"
#include "collector/stream_summary.h"
#include "tests/support/child_process.h"
#include "tests/support/instance_log.h"

namespace {

using Clock = std::chrono::steady_clock;
double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

struct KernelKind {
  uint32_t name_id;
  uint64_t base_ns;
  int32_t grid, block;
  uint32_t registers, shared;
};

/// GPU clock: a 32 ns grid plus the +-1 ns of CUPTI's conversion to the host clock.
uint64_t gpuTime(uint64_t t, std::mt19937_64& rng) { return t / 32 * 32 + (rng() % 3) - 1; }

struct Generator {
  std::mt19937_64 rng{2026};
  uint64_t corr = 1;
  uint64_t host = 1'000'000'000'000ull;  // CLOCK_MONOTONIC ns
  uint64_t gpu = host;
  uint64_t node = 5000;
  std::vector<KernelKind> kinds;
  // Per drain: host events by thread, then kernels.
  std::vector<kc::LaunchBody> launches[3];
  std::vector<kc::RangeBody> ranges[3];
  std::vector<kc::KernelBody> kernels;
  std::vector<kc::MemOpBody> mem_ops;
  uint64_t kernel_count = 0;

  Generator() {
    std::uniform_int_distribution<uint64_t> base(3000, 250000);
    for (uint32_t i = 0; i < 24; ++i)
      kinds.push_back({10 + i, base(rng), static_cast<int32_t>(66 * (1 + i % 4)), 128 << (i % 3), 40 + 8 * (i % 5),
                       static_cast<uint32_t>(i % 2 ? 49152 : 0)});
  }

  uint64_t jitter(uint64_t base, double frac) {
    std::normal_distribution<double> n(0.0, frac * static_cast<double>(base));
    const double v = static_cast<double>(base) + n(rng);
    return v < 1 ? 1 : static_cast<uint64_t>(v);
  }

  void kernel(const KernelKind& k, uint64_t c, uint64_t launched_at, uint32_t stream, uint64_t graph_node) {
    const uint64_t start = std::max(gpu + jitter(1500, 0.3), launched_at + 4000);
    const uint64_t end = start + jitter(k.base_ns, 0.02);
    gpu = end;
    kc::KernelBody b{};
    b.correlation_id = c;
    b.start_ns = gpuTime(start, rng);
    b.end_ns = gpuTime(end, rng);
    b.name_id = k.name_id;
    b.device_id = 0;
    b.context_id = 1;
    b.stream_id = stream;
    b.grid[0] = k.grid;
    b.grid[1] = b.grid[2] = 1;
    b.block[0] = k.block;
    b.block[1] = b.block[2] = 1;
    b.registers = k.registers;
    b.shared_bytes = k.shared;
    b.graph_node_id = graph_node;
    b.graph_id = graph_node ? 3 : 0;
    kernels.push_back(b);
    ++kernel_count;
  }

  /// One launch on thread t in scope; returns its correlation id and exit time.
  uint64_t launch(int t, uint32_t scope, bool graph = false, bool memop = false) {
    kc::LaunchBody l{};
    l.correlation_id = corr++;
    host += jitter(graph ? 20000 : 6000, 0.5);
    l.enter_ns = host;
    host += jitter(graph ? 12000 : 4500, 0.15);
    l.exit_ns = host;
    l.scope_id = scope;
    l.thread_id = 30000 + static_cast<uint32_t>(t);
    l.api_id = graph ? 3 : memop ? 4 : 2;
    l.cbid = graph ? 311 : memop ? 41 : 211;
    l.domain = 1;
    l.is_graph_launch = graph ? 1 : 0;
    l.flags = memop ? kc::kLaunchMemOp : 0;
    launches[t].push_back(l);
    if (rng() % 50 == 0) ++corr;  // an id taken by another API call
    return l.correlation_id;
  }

  void range(int t, uint32_t scope, uint64_t begin) {
    ranges[t].push_back({begin, host + 500, scope, 30000u + static_cast<uint32_t>(t), 30000u + static_cast<uint32_t>(t), 0});
  }

  /// Scopes: 1 step, 2 fwd, 3 bwd, 4 optim, 5+2i layer i (fwd), 6+2i its mlp (only layers 0-3 named).
  void step() {
    const uint64_t step_begin = host;
    // Forward: 4 layers x (attn: 3 kernels, mlp: 3 kernels) on the main thread.
    const uint64_t fwd_begin = host;
    for (uint32_t layer = 0; layer < 4; ++layer) {
      const uint64_t lb = host;
      for (int i = 0; i < 6; ++i) {
        const uint64_t c = launch(0, 5 + 2 * layer + (i >= 3 ? 1 : 0));
        kernel(kinds[i], c, host, 7, 0);
      }
      range(0, 5 + 2 * layer, lb);
    }
    range(0, 2, fwd_begin);
    // Backward on the autograd thread: 4 layers x 8 kernels.
    const uint64_t bwd_begin = host;
    for (uint32_t layer = 0; layer < 4; ++layer)
      for (int i = 0; i < 8; ++i) {
        const uint64_t c = launch(1, 3);
        kernel(kinds[6 + i], c, host, 7, 0);
      }
    range(1, 3, bwd_begin);
    // Optimizer: one graph replay of 32 kernels.
    const uint64_t opt_begin = host;
    const uint64_t g = launch(0, 4, true);
    for (int i = 0; i < 32; ++i) kernel(kinds[14 + i % 10], g, host, 9, node + static_cast<uint64_t>(i));
    range(0, 4, opt_begin);
    // Loader: one host-to-device copy per step.
    const uint64_t m = launch(2, 0, false, true);
    mem_ops.push_back({m, gpuTime(gpu, rng), gpuTime(gpu + 20000, rng), 1u << 20, 0, 11, 1, 1, {}});
    range(0, 1, step_begin);
  }

  void defineNames(kc::LogWriter& w) {
    const char* scopes[] = {"", "step", "forward", "backward", "optimizer"};
    w.writeString(1, "step");
    w.writeString(2, "cudaLaunchKernel");
    w.writeString(3, "cudaGraphLaunch");
    w.writeString(4, "cudaMemcpyAsync");
    for (uint32_t i = 0; i < kinds.size(); ++i)
      w.writeString(kinds[i].name_id, "void kernel_" + std::to_string(i) + "<float, 128>(float*, int)");
    for (uint32_t i = 1; i < 5; ++i) w.writeString(100 + i, scopes[i]);
    w.writeString(110, "attn");
    w.writeString(111, "mlp");
    for (uint32_t i = 0; i < 4; ++i) w.writeString(120 + i, "layer" + std::to_string(i));
    w.writeScope({1, 0, 101, 0});
    w.writeScope({2, 1, 102, 0});
    w.writeScope({3, 1, 103, 0});
    w.writeScope({4, 1, 104, 0});
    for (uint32_t l = 0; l < 4; ++l) {
      w.writeScope({5 + 2 * l, 2, 120 + l, 0});
      w.writeScope({6 + 2 * l, 5 + 2 * l, 111, 0});
    }
  }
};

long maxRssKb(const rusage& ru) { return ru.ru_maxrss; }

/// Runs argv in a child (tests/support/child_process.h); returns its wall time and peak RSS (KiB); its
/// stdout goes to `out`. True if it exited 0 or 1 (`kcount check` of a lossy log exits 1).
bool runChild(const std::vector<std::string>& args, const std::string& out, double& wall, long& rss_kb) {
  const kc::test::ChildRun r = kc::test::runChild(args, out);
  wall = r.wall_s;
  rss_kb = r.rss_kib;
  return r.exit_status == 0 || r.exit_status == 1;
}

double cpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/// Prints: kernels launches ranges cpu_seconds peak_rss_kib intact evicted wall_seconds. CPU time is the
/// measure (one thread, one core); wall time is also printed, it includes waiting for a shared CPU.
int summarizeChild(const char* path) {
  const auto t0 = Clock::now();
  const double c0 = cpuSeconds();
  const kc::StreamedLog s = kc::summarizeLogFile(path);
  const double t = cpuSeconds() - c0;
  const double wall = seconds(Clock::now() - t0);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("%llu %llu %llu %.6f %ld %d %llu %.6f\n", static_cast<unsigned long long>(s.data.kernel_records),
              static_cast<unsigned long long>(s.data.launch_records),
              static_cast<unsigned long long>(s.data.range_records), t, maxRssKb(ru), s.data.intact() ? 1 : 0,
              static_cast<unsigned long long>(s.summary.join_window_evicted), wall);
  return s.data.intact() ? 0 : 1;
}

/// What the reader child (`--summarize PATH`, summarizeChild) printed: record counts, its CPU and wall time
/// (s), its own peak RSS (KiB), whether the log was intact, the join window's evictions.
struct ReaderRun {
  unsigned long long kernels = 0, launches = 0, ranges = 0, evicted = 0;
  double read_s = 0, read_wall = 0;
  long child_rss = 0;
  int intact = 0;
  double wall = 0;  // the child process, start to exit (s)
  long rss = 0;     // the child's peak RSS seen by wait4 (KiB)
};

/// Runs the reader on `path` in a child process and parses its line; false (with a message) on failure.
bool runReader(const std::string& path, ReaderRun& r) {
  const std::string out = path + ".out";
  if (!runChild({"/proc/self/exe", "--summarize", path}, out, r.wall, r.rss)) {
    std::fprintf(stderr, "reader failed on %s\n", path.c_str());
    return false;
  }
  FILE* o = std::fopen(out.c_str(), "r");
  const bool ok = o != nullptr && std::fscanf(o, "%llu %llu %llu %lf %ld %d %llu %lf", &r.kernels, &r.launches, &r.ranges,
                                              &r.read_s, &r.child_rss, &r.intact, &r.evicted, &r.read_wall) == 8;
  if (o != nullptr) std::fclose(o);
  std::remove(out.c_str());
  if (!ok) std::fprintf(stderr, "cannot parse the reader's output for %s\n", path.c_str());
  return ok;
}

/// --ranges: per log of `steps` steps, the streaming reader (child) and, with `kcount`, the commands.
int rangesMain(const std::vector<uint64_t>& sizes, const std::string& dir, const std::string& kcount, bool keep) {
  std::printf("%-11s %-13s %12s %9s %10s %10s %13s %11s\n", "steps", "instances", "log bytes", "B/inst",
              "read CPU s", "read wall", "instances/s", "reader RSS");
  for (uint64_t steps : sizes) {
    const std::string path = dir + "/reader_bench_ranges_" + std::to_string(steps) + ".kcount";
    kc::testing::InstanceLogInfo info;
    if (!kc::testing::writeInstanceLog(path, steps, 0, 1, &info)) return 1;
    ReaderRun r;
    if (!runReader(path, r)) return 1;
    if (!r.intact || r.ranges != info.ranges) {
      std::fprintf(stderr, "the reader's output is not as expected\n");
      return 1;
    }
    const unsigned long long ranges = r.ranges;
    const double read_s = r.read_s, read_wall = r.read_wall;
    const long rss = r.rss;
    std::printf("%-11llu %-13llu %12llu %9.2f %10.3f %10.3f %13.3g %7.1f MiB\n", static_cast<unsigned long long>(steps),
                ranges, static_cast<unsigned long long>(info.bytes),
                static_cast<double>(info.bytes) / static_cast<double>(ranges), read_s, read_wall,
                static_cast<double>(ranges) / read_s, static_cast<double>(rss) / 1024.0);
    if (!kcount.empty()) {
      const std::vector<std::pair<const char*, std::vector<std::string>>> runs = {
          {"kcount summary", {kcount, "summary", path}},
          {"kcount summary --format json", {kcount, "summary", "--format", "json", path}},
          {"kcount diff LOG LOG", {kcount, "diff", path, path}},
          {"kcount check", {kcount, "check", path}},
      };
      for (const auto& [label, args] : runs) {
        double kwall = 0;
        long krss = 0;
        if (!runChild(args, "/dev/null", kwall, krss)) {
          std::fprintf(stderr, "%s failed on %s\n", label, path.c_str());
          return 1;
        }
        std::printf("  %-28s %.3f s wall, peak RSS %.1f MiB\n", label, kwall, static_cast<double>(krss) / 1024.0);
      }
    }
    std::fflush(stdout);
    if (!keep) std::remove(path.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--summarize") == 0) return summarizeChild(argv[2]);
  std::vector<uint64_t> sizes = {1'000'000, 10'000'000, 50'000'000};
  std::string dir = "/tmp", kcount;
  bool plain = false, keep = false, ranges = false;
  uint64_t windows = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--kernels" || a == "--ranges") && i + 1 < argc) {
      ranges = a == "--ranges";
      sizes.clear();
      std::string v = argv[++i];
      for (size_t p = 0; p <= v.size();) {
        size_t q = v.find(',', p);
        if (q == std::string::npos) q = v.size();
        sizes.push_back(std::stoull(v.substr(p, q - p)));
        p = q + 1;
      }
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--kcount" && i + 1 < argc) {
      kcount = argv[++i];
    } else if (a == "--windows" && i + 1 < argc) {
      windows = std::stoull(argv[++i]);
    } else if (a == "--plain") {
      plain = true;
    } else if (a == "--keep") {
      keep = true;
    } else {
      std::fprintf(stderr, "usage: %s [--kernels N,...|--ranges N,...] [--windows W] [--dir DIR] [--kcount PATH] [--plain] "
                   "[--keep]\n",
                   argv[0]);
      return 2;
    }
  }
  // One core: the writer and the reader are single-threaded; pin to CPU 0 so the numbers are per core.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  sched_setaffinity(0, sizeof(one), &one);
  if (ranges) return rangesMain(sizes, dir, kcount, keep);

  std::printf("%-11s %-8s %12s %9s %9s %13s %10s %10s %11s %11s %13s %8s\n", "kernels", "encoding", "log bytes",
              "B/kernel", "B/record", "write krec/s", "read CPU s", "read wall", "kernels/s", "records/s", "reader RSS",
              "evicted");
  for (uint64_t n : sizes) {
    const std::string path = dir + "/reader_bench_" + std::to_string(n) + (plain ? "_plain" : "") +
                             (windows > 0 ? "_w" + std::to_string(windows) : "") + ".kcount";
    std::remove(path.c_str());
    Generator g;
    uint64_t records = 0;
    double write_s = 0;
    {
      kc::FileSink sink(path, 0600, UINT64_MAX, [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); });
      kc::LogWriter w(&sink, plain ? kc::LogEncoding::kPlain : kc::LogEncoding::kCompact);
      w.writeMetadata("pid", "1");
      g.defineNames(w);
      // --windows: the window open, its launches' correlation ids, where the next one starts.
      uint32_t window = 0;
      uint64_t first_corr = 0, last_corr = 0, window_start = g.host;
      uint64_t next_cut = windows > 0 ? n / windows : UINT64_MAX;
      auto closeWindow = [&] {
        w.writeSegment({window_start, g.host, first_corr, last_corr, window++, 0, 0, 0});
        w.flush();
        first_corr = last_corr = 0;
        window_start = g.host;
        g.corr = 1;
      };
      // A drain every 40 steps (about what the writer thread takes per flush interval at this rate).
      while (g.kernel_count < n) {
        for (int s = 0; s < 40 && g.kernel_count < n; ++s) g.step();
        const double t0 = cpuSeconds();
        for (int t = 0; t < 3; ++t) {
          for (const auto& l : g.launches[t]) {
            first_corr = first_corr == 0 ? l.correlation_id : std::min(first_corr, l.correlation_id);
            last_corr = std::max(last_corr, l.correlation_id);
            w.writeLaunch(l);
            if (w.chunkFull()) w.flush();
          }
          for (const auto& r : g.ranges[t]) {
            w.writeRange(r);
            if (w.chunkFull()) w.flush();
          }
          records += g.launches[t].size() + g.ranges[t].size();
        }
        for (const auto& k : g.kernels) {
          w.writeKernel(k);
          if (w.chunkFull()) w.flush();
        }
        for (const auto& m : g.mem_ops) w.writeMemOp(m);
        records += g.kernels.size() + g.mem_ops.size();
        write_s += cpuSeconds() - t0;
        for (auto& v : g.launches) v.clear();
        for (auto& v : g.ranges) v.clear();
        g.kernels.clear();
        g.mem_ops.clear();
        if (g.kernel_count >= next_cut && window + 1 < windows) {
          closeWindow();
          next_cut += n / windows;
        }
      }
      const double t0 = cpuSeconds();
      if (windows > 0) closeWindow();
      w.writeStats(kc::StatsBody{});
      w.writeEnd();
      w.flush();
      write_s += cpuSeconds() - t0;
    }
    FILE* f = std::fopen(path.c_str(), "rb");
    std::fseek(f, 0, SEEK_END);
    const long bytes = std::ftell(f);
    std::fclose(f);

    // The reader in a child, so its peak RSS is its own.
    ReaderRun r;
    if (!runReader(path, r)) return 1;
    const unsigned long long kernels = r.kernels, launches = r.launches, ranges = r.ranges, evicted = r.evicted;
    const double read_s = r.read_s, read_wall = r.read_wall;
    const long rss = r.rss;
    const int intact = r.intact;
    const double recs = static_cast<double>(kernels + launches + ranges);
    std::printf("%-11llu %-8s %12ld %9.2f %9.2f %13.0f %10.3f %10.3f %11.3g %11.3g %9.1f MiB %8llu\n", kernels,
                plain ? "plain" : "compact", bytes, static_cast<double>(bytes) / static_cast<double>(kernels),
                static_cast<double>(bytes) / recs, static_cast<double>(records) / write_s / 1e3, read_s, read_wall,
                static_cast<double>(kernels) / read_s, recs / read_s, static_cast<double>(rss) / 1024.0, evicted);
    if (!kcount.empty()) {
      double kwall = 0;
      long krss = 0;
      if (!runChild({kcount, "summary", path}, "/dev/null", kwall, krss)) {
        std::fprintf(stderr, "kcount summary failed on %s\n", path.c_str());
        return 1;
      }
      std::printf("  kcount summary: %.3f s wall (process start to exit), %.3g kernels/s, peak RSS %.1f MiB\n", kwall,
                  static_cast<double>(kernels) / kwall, static_cast<double>(krss) / 1024.0);
    }
    std::fflush(stdout);
    if (!intact) {
      std::fprintf(stderr, "log not intact: %s\n", path.c_str());
      return 1;
    }
    if (!keep) std::remove(path.c_str());
  }
  return 0;
}
