// `kcount export` writers on a small hand-built log: what the shipped H200 logs do not contain
// (kernels overlapping on one stream, ranges of two domains closed out of order, a process-wide range,
// a graph launch, an unmatched kernel, records that once gave two flow arrows one id: a direct launch
// joined to two kernels, correlation ids repeated across capture windows, a graph launch's memcpy node).
// The shipped logs are checked by tests/cli/test_export.py.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "tools/export.h"
#include "tools/loaded_log.h"
#include "tools/summary_output.h"
#include "tests/support/loaded_log.h"

namespace {

using nlohmann::json;

kc::LaunchBody launch(uint64_t corr, uint32_t scope, uint64_t enter, uint64_t exit, uint32_t tid, bool graph = false) {
  kc::LaunchBody l{};
  l.correlation_id = corr;
  l.enter_ns = enter;
  l.exit_ns = exit;
  l.scope_id = scope;
  l.thread_id = tid;
  l.api_id = 3;
  l.domain = static_cast<uint8_t>(kc::ApiDomain::kRuntime);
  l.is_graph_launch = graph ? 1 : 0;
  return l;
}

kc::KernelBody kernel(uint64_t corr, uint64_t start, uint64_t end, uint32_t stream) {
  kc::KernelBody k{};
  k.correlation_id = corr;
  k.name_id = 4;
  k.start_ns = start;
  k.end_ns = end;
  k.stream_id = stream;
  k.grid[0] = 2;
  k.block[0] = 128;
  return k;
}

/// Thread 10: range "a" (default domain) 100..500 and range "b" (domain "d") 200..600: b outlives a,
/// so they overlap without nesting. Launch 1 (in b) 300..310 has kernels 1000..2000 and 1500..2500 on
/// stream 7 (a graph launch: the kernels overlap). Kernel with corr 9 has no launch. Range "p" is
/// process-wide, started on thread 10 and ended on thread 11.
kc::LoadedLog overlapLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("pid", "10");
  w.writeMetadata("host", "h");
  w.writeString(1, "a");
  w.writeString(2, "b");
  w.writeString(3, "cudaGraphLaunch");
  w.writeString(4, "kern");
  w.writeString(5, "d");
  w.writeString(6, "p");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 5});
  w.writeScope({3, 0, 6, 0});
  w.writeLaunch(launch(1, 2, 300, 310, 10, true));
  w.writeKernel(kernel(1, 1000, 2000, 7));
  w.writeKernel(kernel(1, 1500, 2500, 7));
  w.writeKernel(kernel(9, 3000, 3100, 7));
  w.writeRange({100, 500, 1, 10, 10, 0});
  w.writeRange({200, 600, 2, 10, 10, 0});
  w.writeRange({50, 5000, 3, 10, 11, kc::kRangeProcessWide});
  w.writeEnd();
  w.flush();
  return kc::test::loaded(sink.bytes, "mem");
}

}  // namespace

TEST_CASE("chrome trace: overlapping slices go to overlap tracks, flows to every kernel of a launch") {
  std::vector<kc::LoadedLog> logs;
  logs.push_back(overlapLog());
  REQUIRE(logs[0].data.issues.empty());
  std::ostringstream out;
  kc::writeChromeTrace(out, logs);
  const json doc = json::parse(out.str());
  std::map<std::string, std::vector<json>> by_phase;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  for (const auto& e : doc["traceEvents"]) {
    by_phase[e["ph"].get<std::string>()].push_back(e);
    if (e["ph"] == "M" && e["name"] == "thread_name")
      thread_names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = e["args"]["name"].get<std::string>();
  }
  // Two kernels of stream 7 overlap: the second goes to "stream 7 (overlap 1)".
  std::set<std::string> kernel_tracks;
  int kernels = 0;
  for (const auto& e : by_phase["X"])
    if (e["cat"] == "kernel") {
      ++kernels;
      kernel_tracks.insert(thread_names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}]);
    }
  CHECK(kernels == 3);
  CHECK(kernel_tracks == std::set<std::string>{"stream 7", "stream 7 (overlap 1)"});
  // Ranges a and b overlap without nesting: b goes to an overlap track of thread 10.
  std::set<std::string> range_tracks;
  for (const auto& e : by_phase["X"])
    if (e["cat"] == "nvtx") range_tracks.insert(thread_names[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}]);
  CHECK(range_tracks == std::set<std::string>{"main thread 10", "main thread 10 (overlap 1)"});
  // The graph launch: a flow of its own to each of its two kernels (a viewer draws one arrow per id), both
  // starting on the launch; the unmatched kernel has none.
  REQUIRE(by_phase["s"].size() == 2);
  REQUIRE(by_phase["f"].size() == 2);
  std::set<uint64_t> start_ids, finish_ids;
  for (const auto& s : by_phase["s"]) {
    start_ids.insert(s["id"].get<uint64_t>());
    CHECK(s["tid"] == by_phase["s"][0]["tid"]);
    CHECK(s["ts"] == by_phase["s"][0]["ts"]);
  }
  for (const auto& f : by_phase["f"]) {
    finish_ids.insert(f["id"].get<uint64_t>());
    CHECK(f["bp"] == "e");
  }
  CHECK(start_ids.size() == 2);
  CHECK(start_ids == finish_ids);
  CHECK(start_ids.count(1) == 0);  // not the correlation id, which the two would share
  // The process-wide range is an async pair, begun on thread 10 and ended on thread 11.
  REQUIRE(by_phase["b"].size() == 1);
  REQUIRE(by_phase["e"].size() == 1);
  CHECK(by_phase["b"][0]["id2"] == by_phase["e"][0]["id2"]);
  CHECK(by_phase["b"][0]["tid"] == 10);
  CHECK(by_phase["e"][0]["tid"] == 11);
  CHECK(by_phase["e"][0]["ts"].get<double>() == doctest::Approx(5.0));
  // Exact microseconds: 1500 ns is 1.500 µs.
  bool found = false;
  for (const auto& e : by_phase["X"])
    if (e["cat"] == "kernel" && e["args"]["correlation id"] == 1 && e["ts"].get<double>() == 1.5) found = true;
  CHECK(found);
}

TEST_CASE("processes: launches counts kernel launch calls as the launches table does, memcpy/memset calls apart") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("pid", "10");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "kern");
  w.writeLaunch(launch(1, 0, 100, 110, 10));
  w.writeKernel(kernel(1, 1000, 2000, 7));
  for (uint64_t corr : {2, 3}) {
    kc::LaunchBody m = launch(corr, 0, 200 + corr, 210 + corr, 10);
    m.flags = kc::kLaunchMemOp;
    w.writeLaunch(m);
  }
  w.writeEnd();
  w.flush();
  std::vector<kc::LoadedLog> logs;
  logs.push_back(kc::test::loaded(sink.bytes, "mem"));
  std::ostringstream out;
  kc::writeJsonRecords(out, logs);
  const json doc = json::parse(out.str());
  REQUIRE(doc["processes"].size() == 1);
  CHECK(doc["processes"][0]["launches"] == 1);
  CHECK(doc["processes"][0]["launches"] == doc["launches"].size());
  CHECK(doc["processes"][0]["memoryCalls"] == 2);
}

TEST_CASE("JSON records: the unmatched kernel has no range, the graph launch counts its kernels") {
  std::vector<kc::LoadedLog> logs;
  logs.push_back(overlapLog());
  std::ostringstream out;
  kc::writeJsonRecords(out, logs);
  const json doc = json::parse(out.str());
  REQUIRE(doc["kernels"].size() == 3);
  // Range b was pushed in NVTX domain d: paths name it as the summary table does.
  CHECK(doc["kernels"][0]["path"] == "a/d: b");
  CHECK(doc["kernels"][2]["correlationId"] == 9);
  CHECK(doc["kernels"][2]["path"].is_null());
  CHECK(doc["kernels"][2]["scopeId"].is_null());
  REQUIRE(doc["launches"].size() == 1);
  CHECK(doc["launches"][0]["kernels"] == 2);
  CHECK(doc["launches"][0]["isGraphLaunch"] == 1);
  CHECK(doc["launches"][0]["name"] == "cudaGraphLaunch");
  CHECK(doc["scopes"][2]["path"] == "a/d: b");
  CHECK(doc["scopes"][2]["domain"] == "d");
  CHECK(doc["ranges"][2]["processWide"] == 1);
  CHECK(doc["ranges"][2]["endTid"] == 11);
  // globalTid as Nsight Systems serializes it: pid in bits 24..47, thread id below.
  CHECK(doc["ranges"][0]["globalTid"].get<int64_t>() / 0x1000000 % 0x1000000 == 10);
  CHECK(doc["ranges"][0]["globalTid"].get<int64_t>() % 0x1000000 == 10);
  CHECK(doc["processes"][0]["pid"] == 10);
}

namespace {

/// A log as the library writes it: string 1 and scope 1 reserved ("(string table full)", a top-level scope
/// named by string 1) whether used or not, a range "step" (scope 2) holding launch 1 and its kernel, and,
/// with `overflowed`, launch 2 and its kernel in scope 1 (the scope tree was full). `name1`: the text of
/// string 1 (another writer's log may use id 1 for a range name of its own).
kc::LoadedLog reservedScopeLog(bool overflowed, std::string_view name1 = kc::kStringTableFullText) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("pid", "10");
  w.writeString(kc::kOverflowString, std::string(name1));
  w.writeString(2, "step");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "kern");
  w.writeScope({kc::kOverflowScope, kc::kRootScope, kc::kOverflowString, kc::kNoString});
  w.writeScope({2, kc::kRootScope, 2, kc::kNoString});
  w.writeLaunch(launch(1, 2, 300, 310, 10));
  w.writeKernel(kernel(1, 1000, 2000, 7));
  if (overflowed) {
    w.writeLaunch(launch(2, kc::kOverflowScope, 700, 710, 10));
    w.writeKernel(kernel(2, 3000, 3500, 7));
  }
  w.writeRange({100, 500, 2, 10, 10, 0});
  w.writeEnd();
  w.flush();
  return kc::test::loaded(sink.bytes, "mem");
}

/// Paths of the scopes table, and whether the summary table has a row "(string table full)".
std::pair<std::set<std::string>, bool> scopePathsAndTable(const kc::LoadedLog& l) {
  std::vector<kc::LoadedLog> logs{l};
  std::ostringstream out;
  kc::writeJsonRecords(out, logs);
  std::set<std::string> paths;
  const json doc = json::parse(out.str());
  for (const auto& sc : doc["scopes"]) paths.insert(sc["path"].get<std::string>());
  std::ostringstream table;
  kc::printSummaryTable(table, l, kc::SummaryOptions{});
  return {paths, table.str().find("(string table full)") != std::string::npos};
}

}  // namespace

TEST_CASE("exports list the reserved scope (string table full) only when a record is in it, as summary shows it") {
  const kc::LoadedLog unused = reservedScopeLog(false);
  REQUIRE(unused.data.issues.empty());
  CHECK(unused.data.isOverflowScope(kc::kOverflowScope));
  const auto [paths, in_table] = scopePathsAndTable(unused);
  CHECK(paths == std::set<std::string>{"(no range)", "step"});
  CHECK_FALSE(in_table);

  const kc::LoadedLog used = reservedScopeLog(true);
  const auto [used_paths, used_in_table] = scopePathsAndTable(used);
  CHECK(used_paths == std::set<std::string>{"(no range)", "(string table full)", "step"});
  CHECK(used_in_table);
  // The CSV scopes table is the same table (SQLite too: tests/cli/test_table_parity.py).
  std::vector<kc::LoadedLog> logs{unused};
  std::ostringstream csv;
  kc::writeCsvTable(csv, "scopes", logs);
  CHECK(csv.str().find("(string table full)") == std::string::npos);
  CHECK(csv.str().find("step") != std::string::npos);
}

TEST_CASE("a scope 1 of another writer (a range of its own, not the reserved scope) is listed without records") {
  const kc::LoadedLog l = reservedScopeLog(false, "warmup");
  CHECK_FALSE(l.data.isOverflowScope(1));
  CHECK(scopePathsAndTable(l).first == std::set<std::string>{"(no range)", "warmup", "step"});
}

TEST_CASE("exports of a rotated part with sparse ids list the scopes it defines, not the ids between them") {
  // A part defines only the ids its records use: scopes 400000 and 400001 (under it), nothing below.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(700001, "step 699999");
  w.writeString(900000, "inner");
  w.writeScope({400000, kc::kRootScope, 700001, kc::kNoString});
  w.writeScope({400001, 400000, 900000, kc::kNoString});
  w.writeRange({100, 200, 400001, 1, 1, 0});
  w.writeRange({50, 300, 400000, 1, 1, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = kc::test::loaded(sink.bytes);
  REQUIRE(l.data.issues.empty());
  CHECK(scopePathsAndTable(l).first == std::set<std::string>{"(no range)", "step 699999", "step 699999/inner"});
  std::vector<kc::LoadedLog> logs{l};
  std::ostringstream csv;
  kc::writeCsvTable(csv, "scopes", logs);
  CHECK(csv.str().find("bad scope id") == std::string::npos);
}

namespace {

/// The flow events of a Chrome trace by id: its starts ("s") and finishes ("f"), and every "X" slice.
struct Flows {
  std::map<uint64_t, std::vector<json>> starts, finishes;
  std::vector<json> slices;
};
Flows flowsOf(const std::vector<kc::LoadedLog>& logs) {
  std::ostringstream out;
  kc::writeChromeTrace(out, logs);
  Flows f;
  const json doc = json::parse(out.str());
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "s") f.starts[e["id"].get<uint64_t>()].push_back(e);
    if (e["ph"] == "f") f.finishes[e["id"].get<uint64_t>()].push_back(e);
    if (e["ph"] == "X") f.slices.push_back(e);
  }
  return f;
}

/// Nanoseconds of a trace timestamp (microseconds with three decimals).
int64_t ns(const json& us) { return std::llround(us.get<double>() * 1000); }

/// The "X" slice of category `cat` on the flow event's thread whose [ts, ts + dur] holds its ts, or null.
const json* sliceAround(const Flows& f, const json& e, std::string_view cat) {
  for (const auto& x : f.slices)
    if (x["cat"] == cat && x["pid"] == e["pid"] && x["tid"] == e["tid"] && ns(x["ts"]) <= ns(e["ts"]) &&
        ns(e["ts"]) <= ns(x["ts"]) + ns(x["dur"]))
      return &x;
  return nullptr;
}

}  // namespace

TEST_CASE("chrome trace: a flow never points back in time, from inside its launch call to inside its kernel") {
  // Launch 1 (direct) 100..200, its kernel 110..130: the kernel starts (and ends) before the launch call's
  // middle (150), where the arrow used to start. Graph launch 2 300..400, its kernels 310..320 and
  // 500..600. Launch 3 700..710 and its kernel 900..1000, started after the call returned. Launch 4
  // 1100..1110: its kernel has no GPU time (0..0, as some kernels of examples/logs/sweep-*.kcount): no
  // arrow can go forward to it, so it has none.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("pid", "10");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "kern");
  w.writeLaunch(launch(1, 0, 100, 200, 10));
  w.writeKernel(kernel(1, 110, 130, 7));
  w.writeLaunch(launch(2, 0, 300, 400, 10, true));
  w.writeKernel(kernel(2, 310, 320, 7));
  w.writeKernel(kernel(2, 500, 600, 7));
  w.writeLaunch(launch(3, 0, 700, 710, 10));
  w.writeKernel(kernel(3, 900, 1000, 7));
  w.writeLaunch(launch(4, 0, 1100, 1110, 10));
  w.writeKernel(kernel(4, 0, 0, 7));
  w.writeEnd();
  w.flush();
  std::vector<kc::LoadedLog> logs;
  logs.push_back(kc::test::loaded(sink.bytes, "mem"));
  REQUIRE(logs[0].data.issues.empty());
  const Flows f = flowsOf(logs);
  REQUIRE(f.starts.size() == 4);
  REQUIRE(f.finishes.size() == 4);
  std::map<int64_t, int64_t> start_of_kernel;  // kernel slice start -> flow start (ns)
  for (const auto& [id, starts] : f.starts) {
    REQUIRE(starts.size() == 1);
    REQUIRE(f.finishes.count(id) == 1);
    REQUIRE(f.finishes.at(id).size() == 1);
    const json& s = starts[0];
    const json& fin = f.finishes.at(id)[0];
    CHECK(ns(s["ts"]) <= ns(fin["ts"]));
    const json* call = sliceAround(f, s, "cuda_api");
    const json* kern = sliceAround(f, fin, "kernel");
    REQUIRE(call != nullptr);
    REQUIRE(kern != nullptr);
    CHECK(fin["bp"] == "e");
    CHECK(ns(s["ts"]) <= ns((*kern)["ts"]));  // the arrow leaves the call no later than the kernel starts
    start_of_kernel[ns((*kern)["ts"])] = ns(s["ts"]);
  }
  // Direct launch 1: at the kernel's start (110), not the call's middle (150), which is after the kernel ended.
  CHECK(start_of_kernel.at(110) == 110);
  // Graph launch 2: the first kernel's arrow at its start (310), the second's at the call's middle (350).
  CHECK(start_of_kernel.at(310) == 310);
  CHECK(start_of_kernel.at(500) == 350);
  CHECK(start_of_kernel.at(900) == 705);  // the call's middle
  CHECK(start_of_kernel.count(0) == 0);   // the kernel without GPU time: no arrow
  // The size estimate counts the events written: 5 kernel slices, 4 launch slices, 4 arrows of 2 events.
  CHECK(kc::estimateChromeTrace(logs).events == 5 + 4 + 8);
}

TEST_CASE("chrome trace: every arrow has an id of its own, one start and one finish") {
  // Two capture windows whose launches both use correlation id 1 (logs written before the library
  // numbered ids on across windows): the direct launch of each window and its kernel. In window 1 also a
  // direct launch (id 2) that two kernel records join (a crafted log), and a graph launch (id 3) with a
  // kernel and a memcpy node (a memory operation of id 3), and memcpy call 4 with its copy.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("pid", "10");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "kern");
  w.writeString(5, "ctl");
  w.writeLaunch(launch(1, 0, 100, 110, 10));
  w.writeKernel(kernel(1, 200, 300, 7));
  w.writeSegment({50, 400, 1, 1, 0, 5, 5, 0});
  w.flush();
  w.writeLaunch(launch(1, 0, 1100, 1110, 10));
  w.writeKernel(kernel(1, 1200, 1300, 7));
  w.writeLaunch(launch(2, 0, 1400, 1410, 10));
  w.writeKernel(kernel(2, 1500, 1600, 7));
  w.writeKernel(kernel(2, 1700, 1800, 7));
  w.writeLaunch(launch(3, 0, 1900, 1910, 10, true));
  w.writeKernel(kernel(3, 2000, 2100, 7));
  kc::MemOpBody node{};
  node.correlation_id = 3;
  node.start_ns = 2200;
  node.end_ns = 2300;
  node.stream_id = 7;
  node.bytes = 64;
  node.kind = static_cast<uint8_t>(kc::MemOpKind::kMemcpy);
  w.writeMemOp(node);
  kc::LaunchBody call = launch(4, 0, 2400, 2410, 10);
  call.flags = kc::kLaunchMemOp;
  w.writeLaunch(call);
  kc::MemOpBody copy = node;
  copy.correlation_id = 4;
  copy.start_ns = 2500;
  copy.end_ns = 2600;
  w.writeMemOp(copy);
  w.writeSegment({1000, 3000, 1, 4, 1, 5, 5, 0});
  w.writeEnd();
  w.flush();
  std::vector<kc::LoadedLog> logs;
  logs.push_back(kc::test::loaded(sink.bytes, "mem"));
  REQUIRE(logs[0].data.issues.empty());
  REQUIRE(logs[0].data.segments.size() == 2);
  const Flows f = flowsOf(logs);
  // 5 kernels and 2 memory operations, each joined to its call: 7 arrows, 7 ids.
  CHECK(f.starts.size() == 7);
  CHECK(f.finishes.size() == 7);
  std::map<std::string, int> by_cat;
  for (const auto& [id, starts] : f.starts) {
    CHECK(starts.size() == 1);
    REQUIRE(f.finishes.count(id) == 1);
    CHECK(f.finishes.at(id).size() == 1);
    CHECK(f.finishes.at(id)[0]["cat"] == starts[0]["cat"]);
    CHECK(ns(starts[0]["ts"]) <= ns(f.finishes.at(id)[0]["ts"]));
    CHECK(id > 0xFFFFFFFFu);  // never a correlation id (CUPTI's are 32 bits), which windows may repeat
    ++by_cat[starts[0]["cat"].get<std::string>()];
  }
  for (const auto& [id, finishes] : f.finishes) CHECK(f.starts.count(id) == 1);  // no finish without a start
  CHECK(by_cat == std::map<std::string, int>{{"launch", 5}, {"memory", 2}});
  CHECK(kc::estimateChromeTrace(logs).events == 5 + 2 + 5 + 14);  // kernels, memory operations, calls, arrows
}
