// kcount exporter's pieces without a server: the text format, counters that never go backwards, the
// --listen address, and the tallies read from a summary-mode log (depth folding, the most repeated range,
// a log cut back to an older snapshot, files that are not read).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collector/aggregator.h"
#include "collector/log_writer.h"
#include "tools/exporter_http.h"
#include "tools/exporter_metrics.h"
#include "tools/exporter_tallies.h"

namespace {

// A summary-mode log: ranges a > b > c > d (scopes 2..5), each step one instance of each and one kernel
// launched in each, 1000 ns long; a snapshot after `steps_before` steps, then after `steps` in all (final).
std::vector<uint8_t> deepLog(int steps_before, int steps) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("mode", "summary");
  w.writeMetadata("host", "h");
  w.writeMetadata("pid", "42");
  w.writeMetadata("rank", "7");
  w.writeMetadata("start_ns", "1");
  w.writeMetadata("command_line", "/usr/bin/python3 serve.py");
  const char* names[] = {"", "(string table full)", "a", "b", "c", "d", "k"};
  for (uint32_t i = 1; i < 7; ++i) w.writeString(i, names[i]);
  w.writeScope({1, 0, 1, 0});
  for (uint32_t s = 2; s <= 5; ++s) w.writeScope({s, s == 2 ? 0 : s - 1, s, 0});
  kc::Aggregator agg;
  uint64_t corr = 0, t = 1000;
  for (int step = 0; step < steps; ++step) {
    for (uint32_t s = 2; s <= 5; ++s) {
      kc::LaunchBody l{};
      l.correlation_id = ++corr;
      l.enter_ns = t;
      l.exit_ns = t + 10;
      l.scope_id = s;
      agg.addLaunch(l, t);
      kc::KernelBody k{};
      k.correlation_id = corr;
      k.start_ns = t + 20;
      k.end_ns = t + 1020;
      k.name_id = 6;
      agg.addKernel(k, t);
      agg.addRange(kc::RangeBody{t, t + 2000, s, 0, 0, 0});
      t += 5000;
    }
    agg.settle(t, static_cast<uint64_t>(step) + 1);
    if (step + 1 == steps_before) {
      agg.writeSnapshot(w, t, false);
      w.flush();
    }
  }
  agg.finish();
  agg.writeSnapshot(w, t, true);
  w.writeStats(kc::StatsBody{});
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

std::string writeTemp(const std::vector<uint8_t>& bytes, size_t size) {
  char path[] = "/tmp/kcount-exporter-unit.XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, bytes.data(), size) == static_cast<ssize_t>(size));
  ::close(fd);
  return path;
}

const kc::RangeCounters* find(const kc::LogTallies& t, const std::string& path) {
  for (const auto& r : t.ranges)
    if (r.path == path) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("exporter: label values escaped, samples as integers or shortest decimals") {
  CHECK(kc::escapeLabelValue("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  kc::MetricsText m;
  m.family("x_total", "counter", "Things");
  m.sample("x_total", {{"range", "step/\"q\""}}, 3);
  m.sample("x_total", {}, 0.0012);
  m.sample("undeclared", {}, 1);  // not a declared family: ignored
  CHECK(m.text() == "# HELP x_total Things\n# TYPE x_total counter\nx_total{range=\"step/\\\"q\\\"\"} 3\nx_total 0.0012\n");
}

TEST_CASE("exporter: counters never go backwards; a new run under the same labels goes on from the last value") {
  kc::CounterKeeper k;
  CHECK(k.serve("s", "run1", 10) == 10);
  CHECK(k.serve("s", "run1", 4) == 10);   // an older snapshot read again
  CHECK(k.serve("s", "run1", 12) == 12);
  CHECK(k.serve("s", "run2", 3) == 15);   // the pid reused by another process
  CHECK(k.serve("s", "run2", 5) == 17);
  CHECK(k.serve("other", "run1", 1) == 1);
}

TEST_CASE("exporter: --listen HOST:PORT") {
  std::string host;
  int port = -1;
  CHECK(kc::splitListen("127.0.0.1:9464", host, port));
  CHECK((host == "127.0.0.1" && port == 9464));
  CHECK(kc::splitListen("[::1]:0", host, port));
  CHECK((host == "::1" && port == 0));
  CHECK_FALSE(kc::splitListen("::1:9464", host, port));
  CHECK_FALSE(kc::splitListen("127.0.0.1:65536", host, port));
  CHECK_FALSE(kc::splitListen("127.0.0.1", host, port));
  CHECK_FALSE(kc::splitListen(":9464", host, port));
}

TEST_CASE("exporter: tallies of a summary-mode log, deeper ranges folded into their ancestor") {
  const std::vector<uint8_t> bytes = deepLog(3, 10);
  const std::string path = writeTemp(bytes, bytes.size());
  const kc::LogTallies deep = kc::readLogTallies({path}, 4);
  CHECK(deep.error.empty());
  REQUIRE(deep.has_tallies);
  CHECK((deep.host == "h" && deep.pid == "42" && deep.rank == "7" && deep.command == "python3"));
  CHECK(deep.snapshot_final);
  REQUIRE(find(deep, "a/b/c/d") != nullptr);
  CHECK(find(deep, "a/b/c/d")->kernels == 10);
  CHECK(find(deep, "a")->gpu_ns == 10 * 1000);
  const kc::LogTallies cut = kc::readLogTallies({path}, 2);
  CHECK(find(cut, "a/b/c") == nullptr);
  REQUIRE(find(cut, "a/b") != nullptr);
  CHECK(find(cut, "a/b")->kernels == 30);      // b, c and d
  CHECK(find(cut, "a/b")->launches == 30);
  CHECK(find(cut, "a/b")->instances == 10);    // b's own
  CHECK(find(cut, "a")->kernels == 10);
  CHECK(cut.kernels_per_instance == doctest::Approx(4.0));  // most repeated: a (the first of equals), 4 kernels inside
  CHECK(cut.most_repeated == "a");
  std::remove(path.c_str());

  // The file cut after the first snapshot (a cut tail): that snapshot's numbers, not an error.
  const std::string older = writeTemp(bytes, bytes.size() * 2 / 3);
  const kc::LogTallies early = kc::readLogTallies({older}, 4);
  CHECK_MESSAGE(early.error.empty(), early.error);
  CHECK((early.has_tallies && !early.snapshot_final));
  CHECK((find(early, "a") != nullptr && find(early, "a")->kernels == 3));
  std::remove(older.c_str());
}

TEST_CASE("exporter: kernels in no range are served per process, so the range counters and it add up") {
  // A shipped summary-mode log with 9 kernels, 1 of them unmatched (kcount summary's totals).
  const kc::LogTallies t = kc::readLogTallies(
      {std::string(KC_SOURCE_DIR) + "/tests/data/fuzz-regressions/summary-mode-two-snapshots.kcount"}, 4);
  REQUIRE(t.has_tallies);
  uint64_t in_ranges = 0;
  for (const auto& r : t.ranges) in_ranges += r.kernels;
  CHECK(t.unmatched_kernels == 1);
  CHECK(in_ranges + t.unmatched_kernels == 9);
}

TEST_CASE("exporter: files not read") {
  const std::vector<uint8_t> bytes = deepLog(1, 2);
  const std::string path = writeTemp(bytes, bytes.size());
  const std::string link = path + ".link";
  REQUIRE(::symlink(path.c_str(), link.c_str()) == 0);
  CHECK(kc::readLogTallies({link}, 4).error.find("symbolic link") != std::string::npos);
  CHECK_FALSE(kc::readLogTallies({link}, 4).has_tallies);
  CHECK(kc::readLogTallies({path + ".missing"}, 4).error.find("No such file") != std::string::npos);
  CHECK(kc::readLogTallies({"/tmp"}, 4).error.find("not a regular file") != std::string::npos);
  std::remove(link.c_str());
  std::remove(path.c_str());
}
