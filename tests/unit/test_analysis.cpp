// Correlation join and per-range aggregation, and the summary/kernels JSON built on it.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "tools/check_output.h"
#include "tools/kernel_names.h"
#include "tools/kernels_output.h"
#include "tools/loaded_log.h"
#include "tools/log_state.h"
#include "tools/name_elision.h"
#include "tools/summary_output.h"
#include "tools/text.h"
#include "tests/support/loaded_log.h"
#include "tests/support/records.h"

namespace {

kc::LaunchBody launchAt(uint64_t corr, uint32_t scope, uint64_t enter, uint64_t exit, bool graph = false) {
  kc::LaunchBody l{};
  l.correlation_id = corr;
  l.enter_ns = enter;
  l.exit_ns = exit;
  l.scope_id = scope;
  l.is_graph_launch = graph ? 1 : 0;
  return l;
}

kc::KernelBody kernelAt(uint64_t corr, uint32_t name_id, uint64_t start, uint64_t end) {
  kc::KernelBody k{};
  k.correlation_id = corr;
  k.name_id = name_id;
  k.start_ns = start;
  k.end_ns = end;
  k.grid[0] = 4;
  k.block[0] = 32;
  return k;
}

// Strings 1 "step", 2 "gemm", 3 "cudaLaunchKernel" and scope 1 (range "step" under the root).
void writeStepGemm(kc::LogWriter& w) {
  w.writeString(1, "step");
  w.writeString(2, "gemm");
  w.writeString(3, "cudaLaunchKernel");
  w.writeScope({1, 0, 1, 0});
}

// The log in `bytes` read from a file both ways the tools read logs: streamed (kcount summary's join) and
// loaded whole (summarize()). The temporary file is removed.
std::pair<kc::LoadedLog, kc::LoadedLog> streamedAndLoaded(const std::vector<uint8_t>& bytes) {
  char path[] = "/tmp/kc_analysis_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  close(fd);
  std::pair<kc::LoadedLog, kc::LoadedLog> both{kc::streamLog(path), kc::loadLog(path)};
  std::remove(path);
  return both;
}

/// step (2 instances) > gate (2 instances), up (1 instance, one graph launch of 3 kernels).
/// corr 1: no range, kA 10 ns. corr 2: step, kA 20 ns. corr 3: step/gate, kB 100 ns.
/// corr 4: step/up graph launch, kA 1 ns + kB 2 ns + kB 3 ns. corr 5: step/gate, no kernel.
/// corr 99: a kernel with no launch (kA, 500 ns).
kc::LogData nestedLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("host", "node1");
  w.writeString(1, "step");
  w.writeString(2, "gate");
  w.writeString(3, "up");
  w.writeString(4, "kA");
  w.writeString(5, "kB");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  w.writeScope({3, 1, 3, 0});
  w.writeLaunch(launchAt(1, 0, 100, 110));
  w.writeLaunch(launchAt(2, 1, 200, 230));
  w.writeLaunch(launchAt(3, 2, 300, 305));
  w.writeLaunch(launchAt(4, 3, 400, 450, true));
  w.writeLaunch(launchAt(5, 2, 500, 501));
  w.writeKernel(kernelAt(1, 4, 1000, 1010));
  w.writeKernel(kernelAt(2, 4, 2000, 2020));
  w.writeKernel(kernelAt(3, 5, 3000, 3100));
  w.writeKernel(kernelAt(4, 4, 4000, 4001));
  w.writeKernel(kernelAt(4, 5, 4010, 4012));
  w.writeKernel(kernelAt(4, 5, 4020, 4023));
  w.writeKernel(kernelAt(99, 4, 9000, 9500));
  w.writeRange({150, 650, 1, 1, 1, 0});
  w.writeRange({700, 800, 1, 1, 1, 0});
  w.writeRange({290, 310, 2, 1, 1, 0});
  w.writeRange({490, 510, 2, 1, 1, 0});
  w.writeRange({390, 460, 3, 1, 2, kc::kRangeProcessWide});
  kc::StatsBody st{};
  st.dropped_activity_records = 6;
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  return kc::readLog(sink.bytes);
}

}  // namespace

TEST_CASE("exclusive numbers per range") {
  const kc::LogData d = nestedLog();
  REQUIRE(d.issues.empty());
  const kc::Summary s = kc::summarize(d);
  REQUIRE(s.exclusive.size() == 4);
  CHECK(s.launches == 5);
  CHECK(s.kernels == 7);
  CHECK(s.unmatched_kernels == 1);
  CHECK(s.launches_without_kernel == 1);

  const kc::RangeStats& root = s.exclusive[0];
  CHECK(root.instances == 0);
  CHECK(root.launches == 1);
  CHECK(root.kernels == 1);  // the unmatched kernel is not credited to the root
  CHECK(root.gpu_ns == 10);
  CHECK(root.launch_api_ns == 10);

  const kc::RangeStats& step = s.exclusive[1];
  CHECK(step.instances == 2);
  CHECK(step.cpu_ns == 600);
  CHECK(step.launches == 1);
  CHECK(step.kernels == 1);
  CHECK(step.gpu_ns == 20);
  CHECK(step.launch_api_ns == 30);

  const kc::RangeStats& gate = s.exclusive[2];
  CHECK(gate.instances == 2);
  CHECK(gate.cpu_ns == 40);
  CHECK(gate.launches == 2);
  CHECK(gate.kernels == 1);
  CHECK(gate.gpu_ns == 100);
  CHECK(gate.launch_api_ns == 6);
  REQUIRE(gate.by_kernel.size() == 1);
  CHECK(gate.by_kernel.at(5).count == 1);

  const kc::RangeStats& up = s.exclusive[3];  // one graph launch, three kernels
  CHECK(up.instances == 1);
  CHECK(up.cpu_ns == 70);
  CHECK(up.launches == 1);
  CHECK(up.graph_launches == 1);
  CHECK(up.kernels == 3);
  CHECK(up.gpu_ns == 6);
  CHECK(up.launch_api_ns == 50);
  CHECK(up.by_kernel.at(4).count == 1);
  CHECK(up.by_kernel.at(4).gpu_ns == 1);
  CHECK(up.by_kernel.at(5).count == 2);
  CHECK(up.by_kernel.at(5).gpu_ns == 5);
}

TEST_CASE("inclusive numbers sum launches and kernels, not instances or CPU time") {
  const kc::Summary s = kc::summarize(nestedLog());
  const kc::RangeStats& step = s.inclusive[1];
  CHECK(step.instances == 2);
  CHECK(step.cpu_ns == 600);
  CHECK(step.launches == 4);
  CHECK(step.graph_launches == 1);
  CHECK(step.kernels == 5);
  CHECK(step.gpu_ns == 126);
  CHECK(step.launch_api_ns == 86);
  CHECK(step.by_kernel.at(4).count == 2);
  CHECK(step.by_kernel.at(4).gpu_ns == 21);
  CHECK(step.by_kernel.at(5).count == 3);
  CHECK(step.by_kernel.at(5).gpu_ns == 105);

  const kc::RangeStats& root = s.inclusive[0];
  CHECK(root.instances == 0);
  CHECK(root.cpu_ns == 0);
  CHECK(root.launches == 5);
  CHECK(root.kernels == 6);
  CHECK(root.gpu_ns == 136);
  CHECK(root.launch_api_ns == 96);

  CHECK(s.inclusive[2].kernels == s.exclusive[2].kernels);  // leaves: inclusive == exclusive
  CHECK(s.inclusive[3].gpu_ns == 6);

  CHECK(s.children_order == std::vector<uint32_t>{0, 1, 2, 3});
  REQUIRE(s.children.size() == 4);
  CHECK(s.children[0] == std::vector<uint32_t>{1});
  CHECK(s.children[1] == std::vector<uint32_t>{2, 3});
  CHECK(s.children[2].empty());
}

TEST_CASE("corrupt parents and scope ids do not loop and lose nothing") {
  kc::LogData d;
  d.strings = {"", "a"};
  d.scopes.resize(8);
  d.scopes[1] = {1, 0, 1, 0};
  d.scopes[2] = {2, 999, 1, 0};  // parent out of range -> under the root
  d.scopes[3] = {3, 4, 1, 0};    // 3 -> 4 -> 5 -> 4: 3 hangs under a cycle
  d.scopes[4] = {4, 5, 1, 0};
  d.scopes[5] = {5, 4, 1, 0};
  d.scopes[6] = {6, 6, 1, 0};    // its own parent
  d.scopes[7] = {7, 1, 1, 0};
  d.launches.push_back(launchAt(1, 3, 0, 1));
  d.launches.push_back(launchAt(2, 77, 0, 1));  // scope id never defined -> root
  d.launches.push_back(launchAt(3, 7, 0, 1));
  d.kernels.push_back(kernelAt(1, 1, 0, 5));
  d.kernels.push_back(kernelAt(2, 1, 0, 5));
  const kc::Summary s = kc::summarize(d);
  CHECK(s.children_order.size() == 8);
  CHECK(std::set<uint32_t>(s.children_order.begin(), s.children_order.end()).size() == 8);
  CHECK(s.children_order.front() == 0);
  CHECK(s.exclusive[0].launches == 1);
  CHECK(s.exclusive[0].kernels == 1);
  CHECK(s.inclusive[0].launches == 3);  // every launch reaches the root exactly once
  CHECK(s.inclusive[0].kernels == 2);
  CHECK(s.inclusive[0].gpu_ns == 10);
  CHECK(s.inclusive[1].launches == 1);
}

TEST_CASE("summary JSON has exactly the documented keys and numbers") {
  const kc::LoadedLog l = kc::test::loaded(nestedLog(), "run.kcount");
  const nlohmann::json j = kc::summaryJson(std::vector<kc::LoadedLog>{l});
  REQUIRE(j.contains("logs"));
  REQUIRE(j["logs"].size() == 1);
  const auto& log = j["logs"][0];
  std::set<std::string> keys;
  for (const auto& [k, _] : log.items()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"path", "metadata", "complete", "intact", "issues", "totals", "overall", "ranges",
                                      "segments", "mode", "state", "lossy", "drops", "gpu_time", "launch_timing_sample",
                                      "kcount_cost"});
  CHECK(log["kcount_cost"].is_null());  // a log that does not state kcount's own cost
  CHECK(log["mode"] == "trace");
  CHECK(log["gpu_time"] == true);
  CHECK(log["launch_timing_sample"] == 1);
  // 6 activity records dropped (nestedLog's Stats record): complete, but lossy.
  CHECK(log["state"] == "complete, lossy");
  CHECK(log["lossy"] == true);
  CHECK(log["drops"]["records"] == 6);
  CHECK(log["drops"]["counters"] == nlohmann::json{{"dropped_activity_records", 6}});
  CHECK(log["path"] == "run.kcount");
  CHECK(log["metadata"]["host"] == "node1");
  CHECK(log["complete"] == true);
  CHECK(log["issues"].empty());

  keys.clear();
  for (const auto& [k, _] : log["totals"].items()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"launches", "graph_launches", "kernels", "unmatched_kernels",
                                      "launches_without_kernel", "captured_launches", "mem_ops",
                                      "unmatched_mem_ops", "gpu_ns", "dropped_host_records",
                                      "dropped_activity_records", "activity_buffers_refused",
                                      "late_activity_records", "nvtx_pop_underflow", "bytes_dropped"});
  CHECK(log["totals"]["launches"] == 5);
  CHECK(log["totals"]["graph_launches"] == 1);
  CHECK(log["totals"]["kernels"] == 7);
  CHECK(log["totals"]["unmatched_kernels"] == 1);
  CHECK(log["totals"]["launches_without_kernel"] == 1);
  CHECK(log["totals"]["gpu_ns"] == 636);  // every kernel record, the unmatched one included
  CHECK(log["totals"]["dropped_activity_records"] == 6);

  const auto& ranges = log["ranges"];
  REQUIRE(ranges.size() == 4);
  CHECK(ranges[0]["path"] == "(no range)");
  CHECK(ranges[0]["name"] == "(no range)");
  CHECK(ranges[0]["depth"] == 0);
  CHECK(ranges[0]["kernels_per_instance"].is_null());
  CHECK(ranges[0]["exclusive"]["kernels"] == 1);
  // "(no range)" is what ran outside every range, in both views; the whole process is "overall".
  CHECK(ranges[0]["inclusive"] == ranges[0]["exclusive"]);
  CHECK(ranges[0]["layers"]["inclusive"] == ranges[0]["layers"]["innermost"]);
  CHECK(log["overall"]["kernels"] == 6);
  CHECK(log["overall"]["launches"] == 5);
  CHECK(log["overall"]["gpu_ns"] == 636 - 500);  // matched kernels only: the unmatched one (500 ns) is in totals
  keys.clear();
  for (const auto& [k, _] : ranges[1].items()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"path", "name", "domain", "scope_id", "parent_scope_id", "depth", "unknown_range", "lost_range", "placeholder", "tally_dropped", "instances", "unclosed_instances", "cpu_ns", "exclusive", "inclusive",
                                      "kernels_per_instance", "kernels", "gemm_gpu_ns", "other_gpu_ns",
                                      "kernels_per_launch", "verdict", "layers"});
  keys.clear();
  for (const auto& [k, _] : ranges[1]["exclusive"].items()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"launches", "graph_launches", "captured_launches", "kernels", "gpu_ns",
                                      "launch_api_ns", "memcpy", "memset"});
  CHECK(ranges[1]["path"] == "step");
  CHECK(ranges[1]["depth"] == 1);
  CHECK(ranges[1]["instances"] == 2);
  CHECK(ranges[1]["cpu_ns"] == 600);
  CHECK(ranges[1]["inclusive"]["launches"] == 4);
  CHECK(ranges[1]["inclusive"]["launch_api_ns"] == 86);
  CHECK(ranges[1]["kernels_per_instance"].get<double>() == doctest::Approx(2.5));
  CHECK(ranges[2]["path"] == "step/gate");
  CHECK(ranges[2]["name"] == "gate");
  CHECK(ranges[2]["depth"] == 2);
  CHECK(ranges[3]["path"] == "step/up");
  CHECK(ranges[3]["exclusive"]["graph_launches"] == 1);
  CHECK(ranges[3]["exclusive"]["kernels"] == 3);
  const auto& ks = ranges[3]["kernels"];
  REQUIRE(ks.size() == 2);
  CHECK(ks[0] == nlohmann::json{{"name", "kB"}, {"short", "kB"}, {"count", 2}, {"gpu_ns", 5}});
  CHECK(ks[1] == nlohmann::json{{"name", "kA"}, {"short", "kA"}, {"count", 1}, {"gpu_ns", 1}});
}

TEST_CASE("kernels JSON merges by name and keeps unmatched kernels apart") {
  const kc::LoadedLog l = kc::test::loaded(nestedLog(), "run.kcount");
  const nlohmann::json j = kc::kernelsJson({l, l});  // two logs merge by name
  REQUIRE(j["kernels"].size() == 2);
  const auto& a = j["kernels"][0];
  CHECK(a["name"] == "kA");
  CHECK(a["count"] == 8);
  CHECK(a["gpu_ns"] == 2 * (10 + 20 + 1 + 500));
  CHECK(a["ranges"] == nlohmann::json{{"(no range)", 2}, {"step", 2}, {"step/up", 2}, {"(unmatched)", 2}});
  const auto& b = j["kernels"][1];
  CHECK(b["name"] == "kB");
  CHECK(b["count"] == 6);
  CHECK(b["ranges"] == nlohmann::json{{"step/gate", 2}, {"step/up", 4}});
}

TEST_CASE("durations print with units") {
  CHECK(kc::formatDuration(0) == "0 ns");
  CHECK(kc::formatDuration(999) == "999 ns");
  CHECK(kc::formatDuration(1500) == "1.50 µs");
  CHECK(kc::formatDuration(14'000'000) == "14.0 ms");
  CHECK(kc::formatDuration(250'000'000) == "250 ms");
  CHECK(kc::formatDuration(2'510'000'000) == "2.51 s");
}

TEST_CASE("durations are rounded first, then given their unit and decimals: never 4 digits below seconds") {
  // Each boundary of 3 significant digits: the last value below it and the first that rounds onto it.
  CHECK(kc::formatDuration(1000) == "1.00 µs");
  CHECK(kc::formatDuration(9994) == "9.99 µs");
  CHECK(kc::formatDuration(9996) == "10.0 µs");  // was "10.00 µs"
  CHECK(kc::formatDuration(9999) == "10.0 µs");
  CHECK(kc::formatDuration(99949) == "99.9 µs");
  CHECK(kc::formatDuration(99950) == "100 µs");
  CHECK(kc::formatDuration(99999) == "100 µs");  // was "100.0 µs"
  CHECK(kc::formatDuration(999499) == "999 µs");
  CHECK(kc::formatDuration(999500) == "1.00 ms");  // was "1000 µs"
  CHECK(kc::formatDuration(999999) == "1.00 ms");
  CHECK(kc::formatDuration(9'996'000) == "10.0 ms");
  CHECK(kc::formatDuration(99'950'000) == "100 ms");
  CHECK(kc::formatDuration(999'499'999) == "999 ms");
  CHECK(kc::formatDuration(999'500'000) == "1.00 s");  // was "1000 ms"
  CHECK(kc::formatDuration(9'996'000'000) == "10.0 s");
  CHECK(kc::formatDuration(99'950'000'000) == "100 s");
  CHECK(kc::formatDuration(1'234'600'000'000) == "1235 s");  // seconds: no larger unit
  CHECK(kc::formatDuration(18'446'744'073'709'551'614ull) == "18446744074 s");
  // Half-way points round up, on the integer ns (binary floating point read 9.995 as 9.99499...: 9.99 µs).
  CHECK(kc::formatDuration(1005) == "1.01 µs");       // was "1.00 µs"
  CHECK(kc::formatDuration(2675) == "2.68 µs");       // was "2.67 µs"
  CHECK(kc::formatDuration(9995) == "10.0 µs");       // was "9.99 µs"
  CHECK(kc::formatDuration(10'005) == "10.0 µs");     // 10.005: two decimals would be 4 digits
  CHECK(kc::formatDuration(100'500) == "101 µs");
  CHECK(kc::formatDuration(1'005'000) == "1.01 ms");  // was "1.00 ms"
  CHECK(kc::formatDuration(9'995'000'000) == "10.0 s");
  CHECK(kc::formatDuration(1'234'500'000'000) == "1235 s");
}

TEST_CASE("a time window keeps the records that overlap it and both ends of each launch") {
  const kc::LogData d = nestedLog();
  // [290, 310]: launch 3 (300-305, its kernel at 3000-3100 comes along), range step/gate 290-310 and the
  // step range 150-650 around it.
  kc::LogData w = kc::selectTimeWindow(d, 290, 310);
  REQUIRE(w.launches.size() == 1);
  CHECK(w.launches[0].correlation_id == 3);
  REQUIRE(w.kernels.size() == 1);
  CHECK(w.kernels[0].correlation_id == 3);
  CHECK(w.ranges.size() == 2);
  CHECK(w.scopes.size() == d.scopes.size());  // definitions are kept whole
  CHECK(w.strings == d.strings);
  // [4005, 4015]: kernel 4's second record overlaps: its launch and every kernel of that launch come along.
  w = kc::selectTimeWindow(d, 4005, 4015);
  REQUIRE(w.launches.size() == 1);
  CHECK(w.launches[0].correlation_id == 4);
  CHECK(w.kernels.size() == 3);
  CHECK(w.ranges.empty());
  // Past every record: nothing.
  w = kc::selectTimeWindow(d, 100000, 200000);
  CHECK(w.launches.empty());
  CHECK(w.kernels.empty());
  CHECK(w.ranges.empty());
  CHECK(kc::recordTimeSpan(d) == std::pair<uint64_t, uint64_t>{100, 9500});
}

TEST_CASE("long names are shortened in the middle, by UTF-8 characters") {
  CHECK(kc::elideMiddle("short", 60) == "short");
  const std::string long_name = std::string(30, 'a') + std::string(5000, 'x') + std::string(30, 'z');
  const std::string e = kc::elideMiddle(long_name, 60);
  CHECK(e == std::string(30, 'a') + "…" + std::string(29, 'z'));
  // Multi-byte characters are never cut: 100 "é" become 60 characters.
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "é";
  const std::string ea = kc::elideMiddle(accents, 60);
  CHECK(ea.size() == 59 * 2 + std::string("…").size());
}

TEST_CASE("names shortened together stay distinguishable") {
  // Two names that differ only in their middle: shortened alone, both read the same.
  const std::string head(60, 'h'), tail(40, 't');
  const std::string a = head + "attn=sdpa" + tail, b = head + "attn=none" + tail, c = std::string(100, 'c');
  REQUIRE(kc::elideMiddle(a, 60) == kc::elideMiddle(b, 60));
  const auto e = kc::elideDistinct({a, b, c, a, "short"}, 60);
  REQUIRE(e.size() == 5);
  CHECK(e[0] != e[1]);
  CHECK(e[0] == e[3]);  // equal names, equal results
  CHECK(e[4] == "short");
  CHECK(e[0].find("…") != std::string::npos);  // still shortened, only as far as needed
  size_t chars = 0;  // UTF-8 characters
  for (char ch : e[0]) chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  CHECK(chars < a.size());
  CHECK(chars > 60);
  // No clash of its own, but the column is as wide as the widened names: not cut at 60 beside them.
  CHECK(e[2] == kc::elideMiddle(c, chars));
  CHECK(kc::elideDistinct({c, "short"}, 60)[0] == kc::elideMiddle(c, 60));  // nothing widened: the usual width
  // As far as needed to show the word where they differ: 65 characters in common at the start
  // ("hhh...attn="), 40 at the end; a tail of 41 characters would tell them apart by one letter ("a…" and
  // "e…"), the tail keeps the whole word instead, "sdpa" and "none" (44 characters, width 89).
  CHECK(chars == 89);
  CHECK(e[0].ends_with("…sdpa" + tail));
  CHECK(e[1].ends_with("…none" + tail));
  // The word is bounded: a difference inside a long run of letters shows at most 24 more of them.
  const std::string long_word(100, 'w');
  const auto w = kc::elideDistinct({head + long_word + "1" + tail, head + long_word + "2" + tail}, 60);
  CHECK(w[0] != w[1]);
  CHECK(kc::displayWidth(w[0]) <= 2 * (40 + 1 + 24) + 1);
  // Twenty names of 5,000 characters that differ only around their middle: all told apart.
  std::vector<std::string> long_names;
  for (int i = 0; i < 20; ++i) long_names.push_back(std::string(2500, 'x') + std::to_string(100 + i) + std::string(2500, 'y'));
  const auto g = kc::elideDistinct(long_names, 60);
  CHECK(std::set<std::string>(g.begin(), g.end()).size() == 20);
  // One name the start of the other (the common prefix is the whole shorter name): still told apart.
  const std::string shorter = std::string(70, 'p'), longer = shorter + std::string(30, 'q') + shorter.substr(0, 10);
  const auto h = kc::elideDistinct({shorter + "é" + std::string(40, 's'), shorter + "é" + std::string(40, 's') + "x"}, 60);
  CHECK(h[0] != h[1]);
  const auto k = kc::elideDistinct({longer, longer.substr(0, 90)}, 60);
  CHECK(k[0] != k[1]);
  // A clash that only the full names resolve (they differ in one middle character).
  const std::string x = std::string(50, 'a') + "1" + std::string(50, 'b'), y = std::string(50, 'a') + "2" + std::string(50, 'b');
  const auto f = kc::elideDistinct({x, y}, 60);
  CHECK(f[0] != f[1]);
  CHECK(kc::elideDistinct({}, 60).empty());
}

TEST_CASE("a log with drops is complete but lossy; the state names the counters") {
  kc::LoadedLog l = kc::test::loaded(nestedLog(), "run.kcount");
  CHECK(kc::logState(l) == "complete, lossy");
  const kc::LogLosses loss = kc::logLosses(l);
  CHECK(loss.records == 6);
  CHECK(loss.text() == "6 records dropped while recording (activity records: 6 (dropped by CUPTI))");
  l.data.stats = {};
  CHECK(kc::logState(l) == "complete");
  CHECK_FALSE(kc::logLosses(l).any());
  l.data.stats.bytes_dropped = 4096;
  CHECK(kc::logLosses(l).text() ==
        "4096 bytes not written while recording (bytes not written: 4096 (disk full, unwritable, or KCOUNT_MAX_BYTES))");
  // The records in those bytes, by kind: from the Stats fields, or from the metadata of earlier 1.2 logs.
  l.data.has_not_written_stats = true;
  l.data.stats.not_written_launches = 5;
  l.data.stats.not_written_mem_calls = 2;
  l.data.stats.not_written_ranges = 30;
  CHECK(kc::logLosses(l).records == 35);
  CHECK(kc::logLosses(l).text() ==
        "35 records dropped while recording (bytes not written: 4096 (disk full, unwritable, or KCOUNT_MAX_BYTES), "
        "launches not written: 3 (in the bytes not written), memcpy/memset calls not written: 2 (in the bytes not "
        "written), ranges not written: 30 (in the bytes not written))");
  l.data.has_not_written_stats = false;
  l.data.metadata.emplace_back("records_not_written",
                               "not written: 1 launches, 4 kernels, 9 ranges, 2 other records, from part 2 on, at "
                               "KCOUNT_MAX_BYTES");
  const kc::NotWritten n = kc::notWritten(l.data);
  CHECK(n.known);
  CHECK(n.launches == 1);
  CHECK(n.kernels == 4);
  CHECK(n.ranges == 9);
  CHECK(n.other == 2);
  CHECK(kc::logLosses(l).records == 16);
  l.data.complete = false;
  CHECK(kc::logState(l) == "incomplete");
}

TEST_CASE("GPU-time sums past 2^64 - 1 saturate in summarize() and summarizeLogFile(), with a warning") {
  constexpr uint64_t kHuge = (uint64_t{1} << 63) - 1;  // 3 kernels of this length: 3 * (2^63 - 1) wraps
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  writeStepGemm(w);
  for (uint64_t c = 1; c <= 3; ++c) {
    w.writeLaunch(launchAt(c, 1, c * 10, c * 10 + 5));
    w.writeKernel(kernelAt(c, 2, 1000, 1000 + kHuge));
  }
  w.writeRange({0, 100, 1, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LogData log = kc::readLog(sink.bytes);
  const kc::Summary s = kc::summarize(log);
  CHECK(s.kernel_gpu_ns == kc::kSaturated);
  CHECK(s.exclusive[1].gpu_ns == kc::kSaturated);
  CHECK(s.inclusive[0].gpu_ns == kc::kSaturated);
  CHECK(s.exclusive[1].by_kernel.at(2).gpu_ns == kc::kSaturated);
  CHECK(s.exclusive[1].kernels == 3);
  CHECK(kc::saturatedSums(s) > 0);

  // The streaming join (kcount summary) and the warning the readers add.
  const auto [streamed, loaded] = streamedAndLoaded(sink.bytes);
  for (const kc::LoadedLog* l : {&streamed, &loaded}) {
    CHECK(l->summary.kernel_gpu_ns == kc::kSaturated);
    CHECK(l->summary.exclusive[1].gpu_ns == kc::kSaturated);
    bool warned = false;
    for (const auto& i : l->data.issues)
      warned = warned || (i.severity == kc::ReadIssue::Severity::kWarning && i.message.rfind(kc::kSaturatedIssue, 0) == 0);
    CHECK(warned);
    CHECK(l->data.intact());
  }

  // An ordinary log: nothing saturated, no warning.
  const kc::Summary plain = kc::summarize(nestedLog());
  CHECK(kc::saturatedSums(plain) == 0);
}

TEST_CASE("kernel records that end before they start: 0 GPU ns, counted, and kcount check says so") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  writeStepGemm(w);
  for (uint64_t c = 1; c <= 3; ++c) w.writeLaunch(launchAt(c, 1, c * 10, c * 10 + 5));
  w.writeKernel(kernelAt(1, 2, 1000, 1100));  // 100 ns
  w.writeKernel(kernelAt(2, 2, 2000, 0));     // no valid end (CUPTI gave 0)
  w.writeKernel(kernelAt(3, 2, 3000, 2999));  // end 1 ns before start
  w.writeRange({0, 5000, 1, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const auto [streamed, loaded] = streamedAndLoaded(sink.bytes);
  for (const kc::LoadedLog* l : {&streamed, &loaded}) {
    CHECK(l->summary.kernels == 3);
    CHECK(l->summary.kernels_end_before_start == 2);
    CHECK(l->summary.kernel_gpu_ns == 100);
    CHECK(l->summary.exclusive[1].gpu_ns == 100);
  }
  std::ostringstream out;
  CHECK(kc::printCheck(out, streamed) == 0);  // odd times are no loss: the log is still complete
  CHECK(out.str().find("warning: 2 kernel records end before their start (CUPTI gave no valid end time); counted "
                       "with 0 ns of GPU time") != std::string::npos);
}

/// A log of the range `step` (scope 1) with one launch of a GEMM kernel and two instances: the first
/// from 0 to 5000 ns, the second `second` (a range record on scope 1 whose times or flags a test varies).
std::vector<uint8_t> stepWithTwoInstances(const kc::RangeBody& second) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  writeStepGemm(w);
  w.writeLaunch(launchAt(1, 1, 10, 15));
  w.writeKernel(kernelAt(1, 2, 1000, 1100));
  w.writeRange({0, 5000, 1, 7, 7, 0});
  w.writeRange(second);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

TEST_CASE("ranges still open when the log closed: counted per range, marked in the table, in JSON") {
  // The second instance was open at exit: it ends at the close.
  const auto [streamed, loaded] = streamedAndLoaded(stepWithTwoInstances({6000, 9000, 1, 7, 7, kc::kRangeUnclosed}));
  for (const kc::LoadedLog* l : {&streamed, &loaded}) {
    CHECK(l->summary.exclusive[1].instances == 2);
    CHECK(l->summary.exclusive[1].unclosed == 1);
    CHECK(l->summary.exclusive[0].unclosed == 0);
    std::ostringstream table;
    kc::printSummaryTable(table, *l, kc::SummaryOptions{});
    CHECK(table.str().find("\nstep ~ ") != std::string::npos);
    CHECK(table.str().find("\n~: still open when the log closed") != std::string::npos);
    const auto j = kc::summaryJson(*l);
    REQUIRE(j["ranges"].size() == 2);
    CHECK(j["ranges"][0]["unclosed_instances"] == 0);  // (no range)
    CHECK(j["ranges"][1]["unclosed_instances"] == 1);
  }
}

TEST_CASE("range records that end before they begin: 0 CPU ns, counted, and kcount check says so") {
  // The second instance ends 1 ns before it begins.
  const auto [streamed, loaded] = streamedAndLoaded(stepWithTwoInstances({6000, 5999, 1, 7, 7, 0}));
  for (const kc::LoadedLog* l : {&streamed, &loaded}) {
    CHECK(l->summary.ranges_end_before_begin == 1);
    CHECK(l->summary.exclusive[1].instances == 2);
    CHECK(l->summary.exclusive[1].cpu_ns == 5000);
  }
  std::ostringstream out;
  CHECK(kc::printCheck(out, streamed) == 0);
  CHECK(out.str().find("warning: 1 range record ends before its begin (damaged times); counted with 0 ns of CPU "
                       "time") != std::string::npos);
}

/// A log of the range `step` (scope 1, 0 to 5000 ns) with launches 1 and 2 (10 to 15 ns, 20 to 25 ns) and
/// their kernels: 1000 to 1100 ns, and `second` for launch 2; with `window_stop` > 0 also a Segment record
/// (the capture window from 1 ns to `window_stop`, as the library writes at the close).
std::vector<uint8_t> stepWithKernel(const kc::KernelBody& second, uint64_t window_stop = 0) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  writeStepGemm(w);
  w.writeLaunch(launchAt(1, 1, 10, 15));
  w.writeLaunch(launchAt(2, 1, 20, 25));
  w.writeKernel(kernelAt(1, 2, 1000, 1100));
  w.writeKernel(second);
  w.writeRange({0, 5000, 1, 7, 7, 0});
  if (window_stop > 0) w.writeSegment({1, window_stop, 1, 2, 0, 0, 0, 0});
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

TEST_CASE("kcount check of a kernel that ends at 2^64 - 1 or outlasts the log: IMPLAUSIBLE, exit 1") {
  {
    // The 584-year kernel: its end is all ones.
    const auto [streamed, loaded] = streamedAndLoaded(stepWithKernel(kernelAt(2, 2, 2000, UINT64_MAX)));
    for (const kc::LoadedLog* l : {&streamed, &loaded}) {
      CHECK(l->summary.kernels_end_all_ones == 1);
      CHECK(l->summary.longest_kernel_ns == 100);
      CHECK_FALSE(kc::kernelLongerThanLog(l->summary));
    }
    std::ostringstream out;
    CHECK(kc::printCheck(out, streamed) == 1);
    CHECK(out.str().find("\nwarning: 1 kernel record ends at 2^64 - 1 ns (18446744073709551615: all bits set, no "
                         "time a clock gives; damaged or crafted); its GPU time is counted up to it\n") !=
          std::string::npos);
    CHECK(out.str().find("\nIMPLAUSIBLE: 1 kernel ending at 2^64 - 1 (see above): times or counts no run gives, "
                         "from damage or crafting; the totals that include them are wrong\n") != std::string::npos);
  }
  {
    // Two days long, in a log whose times span 5000 ns.
    constexpr uint64_t kTwoDays = 2 * 86'400'000'000'000;
    const auto [streamed, loaded] = streamedAndLoaded(stepWithKernel(kernelAt(2, 2, 2000, 2000 + kTwoDays)));
    for (const kc::LoadedLog* l : {&streamed, &loaded}) {
      CHECK(l->summary.kernels_end_all_ones == 0);
      CHECK(l->summary.longest_kernel_ns == kTwoDays);
      CHECK(l->summary.longest_kernel_id == 2);
      CHECK(l->summary.times_first_ns == 10);
      CHECK(l->summary.times_last_ns == 5000);
      CHECK(kc::kernelLongerThanLog(l->summary));
    }
    std::ostringstream out;
    CHECK(kc::printCheck(out, streamed) == 1);
    CHECK(out.str().find("\nwarning: the longest kernel record (correlation id 2) lasts 172800 s (172800000000000 ns), "
                         "longer than a day and than the 4.99 µs (4990 ns) from the log's first to its last time") !=
          std::string::npos);
    CHECK(out.str().find("\nIMPLAUSIBLE: a kernel longer than the log (see above)") != std::string::npos);
  }
  {
    // A last kernel longer than everything recorded before it (one 2 s GEMM right after start-up, then a
    // sync): an ordinary run, though the log's times span 5000 ns and it has no close time.
    const auto [streamed, loaded] = streamedAndLoaded(stepWithKernel(kernelAt(2, 2, 2000, 2000 + 2'000'000'000)));
    for (const kc::LoadedLog* l : {&streamed, &loaded}) CHECK_FALSE(kc::kernelLongerThanLog(l->summary));
    std::ostringstream out;
    CHECK(kc::printCheck(out, streamed) == 0);
    CHECK(out.str().find("IMPLAUSIBLE") == std::string::npos);
  }
  {
    // A two-day kernel in a log closed three days after it began (its capture window's stop, the close
    // time): a kernel that ran while the process did.
    constexpr uint64_t kTwoDays = 2 * 86'400'000'000'000;
    const auto [streamed, loaded] =
        streamedAndLoaded(stepWithKernel(kernelAt(2, 2, 2000, 2000 + kTwoDays), 3 * 86'400'000'000'000));
    for (const kc::LoadedLog* l : {&streamed, &loaded}) CHECK_FALSE(kc::kernelLongerThanLog(l->summary));
    std::ostringstream out;
    CHECK(kc::printCheck(out, streamed) == 0);
    CHECK(out.str().find("IMPLAUSIBLE") == std::string::npos);
    CHECK(out.str().ends_with("\nOK\n"));
  }
}

TEST_CASE("kcount check of a direct launch joined by 129 kernels: IMPLAUSIBLE, exit 1; a graph or multi-device launch's are not") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  writeStepGemm(w);
  w.writeLaunch(launchAt(1, 1, 10, 15));
  w.writeLaunch(launchAt(2, 1, 20, 25, /*graph=*/true));
  kc::LaunchBody copy = launchAt(3, 1, 30, 35);
  copy.flags = kc::kLaunchMemOp;
  w.writeKernel(kernelAt(4, 2, 50, 60));  // two kernels written before their (direct) launch
  w.writeKernel(kernelAt(4, 2, 60, 70));
  w.writeLaunch(copy);
  w.writeLaunch(launchAt(4, 1, 40, 45));
  kc::LaunchBody multi = launchAt(5, 1, 50, 55);  // cudaLaunchCooperativeKernelMultiDevice: a kernel per device
  multi.domain = static_cast<uint8_t>(kc::ApiDomain::kRuntime);
  multi.cbid = kc::kCbidRuntimeLaunchMultiDevice;
  w.writeLaunch(multi);
  for (uint64_t i = 0; i < 2; ++i) w.writeKernel(kernelAt(5, 2, 2000 + 10 * i, 2005 + 10 * i));
  for (uint64_t i = 0; i < 129; ++i) w.writeKernel(kernelAt(1, 2, 1000 + 10 * i, 1005 + 10 * i));
  for (uint64_t i = 0; i < 5; ++i) w.writeKernel(kernelAt(2, 2, 3000 + 10 * i, 3005 + 10 * i));
  for (uint64_t i = 0; i < 2; ++i) {
    kc::MemOpBody m{};
    m.correlation_id = 3;
    m.start_ns = 4000 + 10 * i;
    m.end_ns = 4005 + 10 * i;
    m.kind = static_cast<uint8_t>(kc::MemOpKind::kMemcpy);
    w.writeMemOp(m);
  }
  w.writeRange({0, 5000, 1, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const auto [streamed, loaded] = streamedAndLoaded(sink.bytes);
  for (const kc::LoadedLog* l : {&streamed, &loaded}) {
    CHECK(l->summary.kernels == 138);
    CHECK(l->summary.unmatched_kernels == 0);
    CHECK(l->summary.launches_many_kernels == 2);
    CHECK(l->summary.extra_kernels == 129);
    CHECK(l->summary.most_kernels_one_launch == 129);
    CHECK(l->summary.most_kernels_id == 1);
  }
  std::ostringstream out;
  CHECK(kc::printCheck(out, streamed) == 1);
  CHECK(out.str().find("\nwarning: 2 direct launches (not a graph or multi-device launch) have more than one kernel "
                       "record joined (129 kernel records past the first; the most, 129, on correlation id 1): a "
                       "direct launch runs one kernel") != std::string::npos);
  CHECK(out.str().find("\nIMPLAUSIBLE: 2 direct launches with several kernels (see above)") != std::string::npos);
}

TEST_CASE("launch records whose exit precedes their enter: 0 API ns, counted, and kcount check says so") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  writeStepGemm(w);
  w.writeLaunch(launchAt(1, 1, 10, 15));
  w.writeLaunch(launchAt(2, 1, 40, 20));  // exit 20 ns before enter
  w.writeKernel(kernelAt(1, 2, 1000, 1100));
  w.writeKernel(kernelAt(2, 2, 2000, 2100));
  w.writeRange({0, 5000, 1, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const auto [streamed, loaded] = streamedAndLoaded(sink.bytes);
  for (const kc::LoadedLog* l : {&streamed, &loaded}) {
    CHECK(l->summary.launches_exit_before_enter == 1);
    CHECK(l->summary.exclusive[1].launch_api_ns == 5);
  }
  std::ostringstream out;
  CHECK(kc::printCheck(out, streamed) == 0);  // as kernels and ranges that end before they start
  CHECK(out.str().find("\nwarning: 1 launch record ends before its enter (damaged times: the library takes both "
                       "from one clock); counted with 0 ns of launch API time\n") != std::string::npos);
}

TEST_CASE("names shortened together: a chain of nested paths, each a clash of every other, stays distinguishable") {
  // The paths of 256 nested ranges: each is the one before it plus "/rangeB" or "/rangeA", so every path
  // past 60 characters shortens to the same head and, by period, to one of two tails.
  std::vector<std::string> paths;
  std::string p;
  for (int i = 0; i < 256; ++i) {
    p += (p.empty() ? "" : "/") + std::string(i % 2 ? "rangeB" : "rangeA");
    paths.push_back(p);
  }
  const auto e = kc::elideDistinct(paths, 60);
  REQUIRE(e.size() == paths.size());
  CHECK(std::set<std::string>(e.begin(), e.end()).size() == paths.size());
  for (size_t i = 0; i < 9; ++i) CHECK(e[i] == paths[i]);  // short paths whole
  // Three names: the longest start a name shares is with its neighbour in sorted order ("…x1…" with
  // "…x2…"), not with the third; each still reads apart from both others.
  const std::string head(50, 'h'), tail(50, 't');
  const auto t = kc::elideDistinct({head + "x1" + tail, head + "x2" + tail, head + "y" + tail}, 60);
  CHECK(std::set<std::string>(t.begin(), t.end()).size() == 3);
}

TEST_CASE("kcount check of a log whose chunks were swapped: REORDERED, exit 1, every record read") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kCompact);
  writeStepGemm(w);
  for (uint64_t c = 1; c <= 30; ++c) {
    w.writeLaunch(launchAt(c, 1, 10 * c, 10 * c + 5));
    if (c % 10 == 0) w.flush();  // three chunks of launches
  }
  kc::StatsBody st{};
  st.launches = 30;
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  const std::vector<size_t> at = kc::test::chunkOffsets(sink.bytes);
  REQUIRE(at.size() == 4);
  const auto part = [&](size_t from, size_t to) {
    return std::vector<uint8_t>(sink.bytes.begin() + static_cast<long>(from), sink.bytes.begin() + static_cast<long>(to));
  };
  std::vector<uint8_t> swapped = part(0, at[1]);
  for (const auto& p : {part(at[2], at[3]), part(at[1], at[2]), part(at[3], sink.bytes.size())})
    swapped.insert(swapped.end(), p.begin(), p.end());
  const auto [streamed, loaded] = streamedAndLoaded(swapped);
  CHECK(loaded.summary.launches == 30);
  std::ostringstream out;
  CHECK(kc::printCheck(out, streamed) == 1);
  CHECK(out.str().find("\nREORDERED: 1 chunk is out of write order (see above); every record is read, in write "
                       "order\n") != std::string::npos);
  std::ostringstream in_order;
  CHECK(kc::printCheck(in_order, streamedAndLoaded(sink.bytes).first) == 0);
}

TEST_CASE("kcount check's verdict names every state that applies: REORDERED, IMPLAUSIBLE, INCOMPLETE, LOSSY") {
  const kc::KernelBody all_ones = kernelAt(31, 2, 2000, UINT64_MAX);  // the 584-year kernel: IMPLAUSIBLE
  {
    // Chunks swapped (REORDERED) in a log that also holds a kernel ending at 2^64 - 1 and dropped records.
    kc::MemorySink sink;
    kc::LogWriter w(&sink, kc::LogEncoding::kCompact);
    writeStepGemm(w);
    for (uint64_t c = 1; c <= 30; ++c) {
      w.writeLaunch(launchAt(c, 1, 10 * c, 10 * c + 5));
      if (c % 10 == 0) w.flush();
    }
    w.writeLaunch(launchAt(31, 1, 400, 405));
    w.writeKernel(all_ones);
    kc::StatsBody st{};
    st.launches = 31;
    st.kernels = 1;
    st.dropped_host_records = 3;
    w.writeStats(st);
    w.writeEnd();
    w.flush();
    const std::vector<size_t> at = kc::test::chunkOffsets(sink.bytes);
    REQUIRE(at.size() == 4);
    const auto part = [&](size_t from, size_t to) {
      return std::vector<uint8_t>(sink.bytes.begin() + static_cast<long>(from), sink.bytes.begin() + static_cast<long>(to));
    };
    std::vector<uint8_t> swapped = part(0, at[1]);
    for (const auto& p : {part(at[2], at[3]), part(at[1], at[2]), part(at[3], sink.bytes.size())})
      swapped.insert(swapped.end(), p.begin(), p.end());
    std::ostringstream out;
    CHECK(kc::printCheck(out, streamedAndLoaded(swapped).first) == 1);
    CHECK(out.str().ends_with("\nREORDERED: 1 chunk is out of write order (see above); every record is read, in "
                              "write order; also IMPLAUSIBLE: 1 kernel ending at 2^64 - 1 (see above); also LOSSY: see "
                              "DROPS\n"));
  }
  {
    // A kernel ending at 2^64 - 1 in a log cut before its End record: IMPLAUSIBLE and INCOMPLETE.
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    writeStepGemm(w);
    w.writeLaunch(launchAt(31, 1, 10, 15));
    w.writeKernel(all_ones);
    w.flush();
    std::ostringstream out;
    CHECK(kc::printCheck(out, streamedAndLoaded(sink.bytes).first) == 1);
    CHECK(out.str().ends_with("\nIMPLAUSIBLE: 1 kernel ending at 2^64 - 1 (see above): times or counts no run gives, "
                              "from damage or crafting; the totals that include them are wrong; also INCOMPLETE (no "
                              "end record)\n"));
  }
}

TEST_CASE("tree view of a chain deeper than 256 ranges: indentation stops at 256 levels, deeper rows say their depth") {
  // Only a crafted log nests deeper than the library's 256 levels; indenting every row by its depth made
  // the text table grow with the square of the depth (800 MB for a 20,000-deep chain).
  constexpr uint32_t kDepth = 300;
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "r");
  w.writeString(3, "cudaLaunchKernel");
  for (uint32_t i = 1; i <= kDepth; ++i) w.writeScope({i, i - 1, 1, 0});
  w.writeLaunch(launchAt(1, kDepth, 10, 15));
  for (uint32_t i = kDepth; i >= 1; --i) w.writeRange({0, 5000, i, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const auto [streamed, loaded] = streamedAndLoaded(sink.bytes);
  std::ostringstream table;
  kc::SummaryOptions tree;
  tree.view = kc::SummaryView::kTree;
  kc::printSummaryTable(table, streamed, tree);
  size_t widest_indent = 0, depth_marks = 0;
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos || (line.compare(first, 2, "r ") != 0 && line.compare(first, 7, "(depth ") != 0))
      continue;
    widest_indent = std::max(widest_indent, first);
    depth_marks += line.compare(first, 7, "(depth ") == 0 ? 1 : 0;
  }
  CHECK(widest_indent == 2 * 256);
  CHECK(depth_marks == kDepth - 257);  // depths 258..300
  CHECK(table.str().find("(depth 300) r ") != std::string::npos);
}

TEST_CASE("kcount check's states are listed in docs/usage.md in the order the verdict line names them") {
  std::ifstream in(std::string(KC_SOURCE_DIR) + "/docs/usage.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t begin = doc.find("and last the state: `OK`, ");
  const size_t end = doc.find("`DAMAGED`, or for a file that is not a log at all", begin);
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  // Each state's first mention as "`STATE" in the list (a line break may stand for a space).
  std::string list = doc.substr(begin, end - begin);
  for (char& c : list)
    if (c == '\n') c = ' ';
  size_t last = 0;
  for (std::string_view state : kc::kCheckStates) {
    const size_t at = list.find("`" + std::string(state));
    CAPTURE(state);
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
}
