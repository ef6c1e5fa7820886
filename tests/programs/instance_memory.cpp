// The reading commands' memory does not grow with the number of NVTX range instances (docs/reader-guarantees.md):
// `kcount summary` (table, JSON), `kcount diff`, `kcount check` and `kcount kernels` run on two synthetic logs of the same
// shape (2 range paths, 2 kernel names, one thread, capture windows), one with 20 times the range
// instances of the other, and the peak RSS of each run (getrusage of the child, not a timing) may grow by
// at most kSlackKiB from the small log to the large one. A reader that kept every range (32 bytes each)
// would need about 60 MiB more for the large log; the slack covers allocator noise.
//
// Usage: kc_instance_memory KCOUNT DIR   (prints "NAME  PASS|FAIL  details" rows; exit 1 on a failure)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/instance_log.h"

namespace {

constexpr uint64_t kSmallSteps = 50'000;     // 100,000 range instances
constexpr uint64_t kLargeSteps = 1'000'000;  // 2,000,000 range instances
constexpr long kSlackKiB = 16 * 1024;

/// Runs argv with stdout to `out`; returns the child's peak RSS in KiB, or -1 if it did not exit 0.
long peakRssKiB(const std::vector<std::string>& args, const std::string& out) {
  const kc::test::ChildRun r = kc::test::runChild(args, out);
  return r.exit_status == 0 ? r.rss_kib : -1;
}

bool contains(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::string s;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s.find(text) != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s KCOUNT DIR\n", argv[0]);
    return 2;
  }
  const std::string kcount = argv[1], dir = argv[2];
  // An ASan build's quarantine keeps freed blocks (up to 256 MiB) in the RSS; keep it small so that the
  // number compared is what the reader holds.
  const char* asan = std::getenv("ASAN_OPTIONS");
  setenv("ASAN_OPTIONS", ((asan && *asan ? std::string(asan) + ":" : std::string()) + "quarantine_size_mb=1").c_str(), 1);

  int failures = 0;
  // One window from start to exit (as the library closes a log), and three windows (the summary table
  // lists them: a second pass counts their records).
  for (uint32_t windows : {1u, 3u}) {
    const std::string small = dir + "/instances_small_w" + std::to_string(windows) + ".kcount";
    const std::string large = dir + "/instances_large_w" + std::to_string(windows) + ".kcount";
    kc::testing::InstanceLogInfo si, li;
    if (!kc::testing::writeInstanceLog(small, kSmallSteps, 10, windows, &si) ||
        !kc::testing::writeInstanceLog(large, kLargeSteps, 10, windows, &li)) {
      std::printf("write logs  FAIL  cannot write %s\n", dir.c_str());
      return 1;
    }
    const std::vector<std::pair<std::string, std::vector<std::string>>> commands = {
        {"summary", {"summary"}},
        {"summary json", {"summary", "--format", "json"}},
        {"diff", {"diff", "SELF"}},
        {"check", {"check"}},
        {"kernels", {"kernels"}},
    };
    for (const auto& [label, args] : commands) {
      long rss[2] = {0, 0};
      bool ok = true;
      for (int i = 0; i < 2; ++i) {
        const std::string& log = i == 0 ? small : large;
        std::vector<std::string> argv{kcount};
        for (const auto& a : args) argv.push_back(a == "SELF" ? log : a);
        argv.push_back(log);
        const std::string out = log + ".out";
        rss[i] = peakRssKiB(argv, out);
        // The run read every instance: the step count is in the output.
        const uint64_t steps = i == 0 ? kSmallSteps : kLargeSteps;
        if (rss[i] < 0 || (label != "check" && label != "diff" && label != "kernels" && !contains(out, std::to_string(steps)))) ok = false;
        std::remove(out.c_str());
      }
      const bool pass = ok && rss[1] <= rss[0] + kSlackKiB;
      std::printf("%s (%u windows)  %s  peak RSS %ld KiB for %llu range instances, %ld KiB for %llu (limit +%ld KiB)%s\n",
                  label.c_str(), windows, pass ? "PASS" : "FAIL", rss[0], static_cast<unsigned long long>(si.ranges),
                  rss[1], static_cast<unsigned long long>(li.ranges), kSlackKiB, ok ? "" : "; a run failed");
      if (!pass) ++failures;
    }
    std::remove(small.c_str());
    std::remove(large.c_str());
  }
  return failures == 0 ? 0 : 1;
}
