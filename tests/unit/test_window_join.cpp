// The correlation join within capture windows: a log whose windows reuse correlation ids (CUPTI numbers
// them anew after the cuptiFinalize of a stop, and the library wrote them so before it renumbered) joins
// each kernel and memory operation to the launch of its own window, in summarize() and in the streaming
// join, and the tools name repeated ids; per-window totals, --segment and the exports give each window its
// own records.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "collector/stream_summary.h"
#include "tests/support/loaded_log.h"
#include "tools/check_output.h"
#include "tools/export.h"
#include "tools/loaded_log.h"
#include "tools/report_html.h"

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kFwd = 1, kBwd = 2;         // scopes: the ranges "fwd" and "bwd"
constexpr uint32_t kGemm = 3, kRelu = 4;       // kernel names
constexpr uint32_t kCtl = 5;                   // the windows' reason

kc::LaunchBody launch(uint64_t corr, uint32_t scope, uint8_t flags = 0) {
  kc::LaunchBody l{};
  l.correlation_id = corr;
  l.scope_id = scope;
  l.flags = flags;
  l.enter_ns = 1000 + corr * 10;
  l.exit_ns = l.enter_ns + 2;
  return l;
}

kc::KernelBody kernel(uint64_t corr, uint32_t name, uint64_t ns) {
  kc::KernelBody k{};
  k.correlation_id = corr;
  k.name_id = name;
  k.start_ns = 5000 + corr * 100;
  k.end_ns = k.start_ns + ns;
  return k;
}

kc::MemOpBody memcpyOp(uint64_t corr, uint64_t bytes) {
  kc::MemOpBody m{};
  m.correlation_id = corr;
  m.start_ns = 100;
  m.end_ns = 140;
  m.bytes = bytes;
  m.kind = static_cast<uint8_t>(kc::MemOpKind::kMemcpy);
  return m;
}

void definitions(kc::LogWriter& w) {
  w.writeString(kFwd, "fwd");
  w.writeString(kBwd, "bwd");
  w.writeString(kGemm, "gemm");
  w.writeString(kRelu, "relu");
  w.writeString(kCtl, "ctl");
  w.writeScope({kFwd, kc::kRootScope, kFwd, 0});
  w.writeScope({kBwd, kc::kRootScope, kBwd, 0});
}

/// The records of one capture window, in the order the library writes them: kernels whose launches come
/// later in the window (`kernels_before`), launches 1..last_launch in `scope` and memcpy call 7, the
/// window's range, the other kernels (`kernels_after`), a memcpy of `memcpy_bytes` for call 7, then its
/// Segment record (correlation ids 1 to 7, [start_ns, stop_ns]) and a flush.
struct WindowRecords {
  uint32_t scope;
  uint64_t last_launch;
  std::vector<uint64_t> kernels_before, kernels_after;  // correlation ids
  uint32_t kernel_name;
  uint64_t kernel_ns;
  uint64_t memcpy_bytes;
  kc::RangeBody range;
  uint64_t start_ns, stop_ns;
};

void writeWindow(kc::LogWriter& w, const WindowRecords& r, uint32_t index) {
  for (uint64_t c : r.kernels_before) w.writeKernel(kernel(c, r.kernel_name, r.kernel_ns));
  for (uint64_t c = 1; c <= r.last_launch; ++c) w.writeLaunch(launch(c, r.scope));
  w.writeLaunch(launch(7, r.scope, kc::kLaunchMemOp));
  w.writeRange(r.range);
  for (uint64_t c : r.kernels_after) w.writeKernel(kernel(c, r.kernel_name, r.kernel_ns));
  w.writeMemOp(memcpyOp(7, r.memcpy_bytes));
  w.writeSegment({r.start_ns, r.stop_ns, 1, 7, index, kCtl, kCtl, 0});
  w.flush();
}

/// Two capture windows, each ended by its Segment record and a flush as the library writes them, whose
/// launches both use correlation ids 1..5 (and 7, a memcpy call):
/// window 0, range fwd: launches 1..6, memcpy call 7; kernels gemm 1..5 of 10 ns; memcpy 7 of 100 bytes.
/// window 1, range bwd: kernels relu 1, 2 before their launches, launches 1..5, memcpy call 7, kernels
/// relu 3..6 of 20 ns (6 has no launch in the window: window 0's launch 6 must not take it), memcpy 7 of
/// 300 bytes.
Bytes twoWindowLog(kc::LogEncoding encoding) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, encoding);
  definitions(w);
  writeWindow(w, {kFwd, 6, {}, {1, 2, 3, 4, 5}, kGemm, 10, 100, {1000, 1200, kFwd, 1, 1, 0}, 900, 1300}, 0);
  writeWindow(w, {kBwd, 5, {1, 2}, {3, 4, 5, 6}, kRelu, 20, 300, {1400, 1600, kBwd, 1, 1, 0}, 1350, 1700}, 1);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

void checkWindowsJoined(const kc::Summary& s) {
  CHECK(s.launches == 11);
  CHECK(s.kernels == 11);
  CHECK(s.unmatched_kernels == 1);         // window 1's relu of id 6
  CHECK(s.launches_without_kernel == 1);   // window 0's launch 6
  CHECK(s.unmatched_mem_ops == 0);
  CHECK(s.launches_in_earlier_window_ids == 6);  // window 1's launches 1..5 and memcpy call 7
  CHECK(s.repeated_launch_ids == 0);
  const kc::RangeStats& fwd = s.exclusive[kFwd];
  CHECK(fwd.launches == 6);
  CHECK(fwd.kernels == 5);
  CHECK(fwd.gpu_ns == 50);
  CHECK(fwd.by_kernel.size() == 1);
  CHECK(fwd.by_kernel.count(kGemm) == 1);
  CHECK(fwd.memcpy_count == 1);
  CHECK(fwd.memcpy_bytes == 100);
  const kc::RangeStats& bwd = s.exclusive[kBwd];
  CHECK(bwd.launches == 5);
  CHECK(bwd.kernels == 5);
  CHECK(bwd.gpu_ns == 100);
  CHECK(bwd.by_kernel.count(kRelu) == 1);
  CHECK(bwd.by_kernel.count(kGemm) == 0);
  CHECK(bwd.memcpy_count == 1);
  CHECK(bwd.memcpy_bytes == 300);
  CHECK(s.exclusive[kc::kRootScope].kernels == 0);
  CHECK(s.unmatched_by_kernel.count(kRelu) == 1);
}

std::string writeTemp(const Bytes& bytes) {
  char path[] = "/tmp/kc_window_join_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  close(fd);
  return path;
}

std::string checkText(const kc::LoadedLog& l) {
  std::ostringstream out;
  kc::printCheck(out, l);
  return out.str();
}

}  // namespace

TEST_CASE("capture windows that reuse correlation ids join within their window (summarize and streaming)") {
  for (auto encoding : {kc::LogEncoding::kCompact, kc::LogEncoding::kPlain}) {
    CAPTURE(static_cast<int>(encoding));
    const Bytes b = twoWindowLog(encoding);
    const kc::LogData d = kc::readLog(b);
    REQUIRE(d.intact());
    REQUIRE(d.segments.size() == 2);
    REQUIRE(d.segment_marks.size() == 2);
    CHECK(d.segment_marks[0].launches == 7);
    CHECK(d.segment_marks[0].kernels == 5);
    CHECK(d.segment_marks[0].mem_ops == 1);
    CHECK(d.segment_marks[1].launches == 13);
    checkWindowsJoined(kc::summarize(d));
    const kc::StreamedLog st = kc::summarizeLogBytes(b);
    CHECK(st.summary.join_window_evicted == 0);
    checkWindowsJoined(st.summary);
    // The smallest join window (its smallest ring) gives the same numbers.
    checkWindowsJoined(kc::summarizeLogBytes(b, {}, 2).summary);
    // Rotated parts joined: the windows are found in the joined data too.
    const std::vector<kc::LogData> parts{d};
    CHECK(kc::joinRotatedParts(parts, {"a.kcount"}).segment_marks.size() == 2);
  }
}

TEST_CASE("a log of one capture window joins as a log without Segment record") {
  // The windows' log, its Segment records left out but the last: one window, ids repeated within it.
  kc::MemorySink with, without;
  for (kc::MemorySink* sink : {&with, &without}) {
    kc::LogWriter w(sink);
    definitions(w);
    for (uint64_t c = 1; c <= 6; ++c) w.writeLaunch(launch(c, kFwd));
    for (uint64_t c = 1; c <= 5; ++c) w.writeKernel(kernel(c, kGemm, 10));
    w.flush();
    for (uint64_t c = 1; c <= 5; ++c) w.writeLaunch(launch(c, kBwd));
    for (uint64_t c = 3; c <= 6; ++c) w.writeKernel(kernel(c, kRelu, 20));
    if (sink == &with) w.writeSegment({900, 1700, 1, 6, 0, kCtl, kCtl, 0});
    w.writeEnd();
    w.flush();
  }
  for (const Bytes* b : {&with.bytes, &without.bytes}) {
    for (const kc::Summary& s : {kc::summarize(kc::readLog(*b)), kc::summarizeLogBytes(*b).summary}) {
      // The first launch of an id keeps it: every kernel joins window 0's fwd launches.
      CHECK(s.exclusive[kFwd].kernels == 9);
      CHECK(s.exclusive[kBwd].kernels == 0);
      CHECK(s.launches_without_kernel == 5);
      CHECK(s.unmatched_kernels == 0);
      CHECK(s.launches_in_earlier_window_ids == 0);
      CHECK(s.repeated_launch_ids == 5);
      CHECK(s.first_repeated_launch == 6);
      CHECK(s.first_repeated_id == 1);
    }
  }
}

TEST_CASE("check names correlation ids repeated across capture windows and within one") {
  const std::string across = writeTemp(twoWindowLog(kc::LogEncoding::kCompact));
  for (const kc::LoadedLog& l : {kc::streamLog(across), kc::loadLog(across)}) {
    const std::string text = checkText(l);
    CAPTURE(text);
    CHECK(text.find("join: 1 unmatched kernel, 1 launch without kernel") != std::string::npos);
    CHECK(text.find("warning: 6 launches carry correlation ids inside the span of an earlier capture window's "
                    "launches") != std::string::npos);
    CHECK(text.find("same capture window") == std::string::npos);
  }
  std::remove(across.c_str());

  // One window, launch ids 1, 2, 3, 2: the library never writes it.
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  definitions(w);
  w.flush();
  for (uint64_t c : {1, 2, 3, 2}) w.writeLaunch(launch(c, kFwd));
  for (uint64_t c = 1; c <= 3; ++c) w.writeKernel(kernel(c, kGemm, 10));
  w.writeEnd();
  w.flush();
  REQUIRE(kc::readLog(sink.bytes).chunks_read == 2);  // the definitions, then the records
  const std::string within = writeTemp(sink.bytes);
  const kc::LoadedLog streamed = kc::streamLog(within);
  CHECK(streamed.summary.first_repeated_chunk == 1);
  const std::string text = checkText(streamed);
  CAPTURE(text);
  CHECK(text.find("warning: 1 launch repeats the correlation id of an earlier launch in the same capture window "
                  "(the library writes each id once: a crafted or damaged log); the first, launch record 3 with "
                  "correlation id 2, lies in chunk 1 at byte " +
                  std::to_string(streamed.summary.first_repeated_offset)) != std::string::npos);
  CHECK(text.find("earlier capture window's") == std::string::npos);
  const std::string loaded_text = checkText(kc::loadLog(within));
  CHECK(loaded_text.find("the first, launch record 3 with correlation id 2;") != std::string::npos);
  std::remove(within.c_str());
}

namespace {

/// Per-window totals of the two-window log: each window's own launches, kernels and memory operations.
void checkWindowTotals(const std::vector<kc::SegmentTotals>& t) {
  REQUIRE(t.size() == 2);
  CHECK(t[0].launches == 6);
  CHECK(t[0].kernels == 5);
  CHECK(t[0].unmatched_kernels == 0);
  CHECK(t[0].gpu_ns == 50);
  CHECK(t[0].mem_ops == 1);
  CHECK(t[0].ranges == 1);
  CHECK(t[1].launches == 5);
  CHECK(t[1].kernels == 6);
  CHECK(t[1].unmatched_kernels == 1);  // relu of id 6
  CHECK(t[1].gpu_ns == 120);
  CHECK(t[1].mem_ops == 1);
  CHECK(t[1].ranges == 1);
}

std::set<uint64_t> scopesOf(const std::vector<kc::LaunchBody>& v) {
  std::set<uint64_t> out;
  for (const auto& l : v) out.insert(l.scope_id);
  return out;
}

}  // namespace

TEST_CASE("per-window totals count each window's own records when windows reuse correlation ids") {
  for (auto encoding : {kc::LogEncoding::kCompact, kc::LogEncoding::kPlain}) {
    CAPTURE(static_cast<int>(encoding));
    const Bytes b = twoWindowLog(encoding);
    const kc::LogData d = kc::readLog(b);
    checkWindowTotals(kc::segmentTotals(d));
    checkWindowTotals(kc::summarizeLogBytes(b, {}, kc::kDefaultJoinWindow, true).segments);
    checkWindowTotals(kc::summarizeLogBytes(b, {}, 2, true).segments);
    // A time window that holds the whole log keeps every record in its capture window.
    checkWindowTotals(kc::segmentTotals(kc::selectTimeWindow(d, 0, UINT64_MAX)));
  }
}

TEST_CASE("--segment N selects window N's own launches, kernels and memory operations") {
  const kc::LogData d = kc::readLog(twoWindowLog(kc::LogEncoding::kCompact));
  const kc::LogData w0 = kc::selectSegment(d, 0);
  CHECK(w0.launches.size() == 7);
  CHECK(scopesOf(w0.launches) == std::set<uint64_t>{kFwd});
  CHECK(w0.kernels.size() == 5);
  REQUIRE(w0.mem_ops.size() == 1);
  CHECK(w0.mem_ops[0].bytes == 100);
  const kc::Summary s0 = kc::summarize(w0);
  CHECK(s0.exclusive[kFwd].kernels == 5);
  CHECK(s0.exclusive[kBwd].kernels == 0);
  CHECK(s0.launches_without_kernel == 1);  // launch 6
  CHECK(s0.unmatched_kernels == 0);

  const kc::LogData w1 = kc::selectSegment(d, 1);
  CHECK(w1.launches.size() == 6);
  CHECK(scopesOf(w1.launches) == std::set<uint64_t>{kBwd});
  CHECK(w1.kernels.size() == 6);
  REQUIRE(w1.mem_ops.size() == 1);
  CHECK(w1.mem_ops[0].bytes == 300);
  const kc::Summary s1 = kc::summarize(w1);
  CHECK(s1.launches == 5);
  CHECK(s1.exclusive[kBwd].kernels == 5);
  CHECK(s1.exclusive[kBwd].gpu_ns == 100);
  CHECK(s1.exclusive[kBwd].memcpy_bytes == 300);
  CHECK(s1.exclusive[kFwd].kernels == 0);
  CHECK(s1.launches_without_kernel == 0);
  CHECK(s1.unmatched_kernels == 1);
  // kcount summary --segment 1 lists the window's totals from the records selected.
  const auto t1 = kc::segmentTotals(w1);
  REQUIRE(t1.size() == 1);
  CHECK(t1[0].launches == 5);
  CHECK(t1[0].kernels == 6);
  CHECK(t1[0].unmatched_kernels == 1);
  CHECK(t1[0].mem_ops == 1);
  // No window 2: the definitions only.
  CHECK(kc::selectSegment(d, 2).launches.empty());
}

TEST_CASE("exports give each launch, kernel and memory operation its capture window") {
  const kc::LoadedLog l = kc::test::loaded(twoWindowLog(kc::LogEncoding::kCompact));
  std::ostringstream out;
  kc::writeJsonRecords(out, {l});
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  const auto windowOfPath = [](const nlohmann::json& path) { return path == "fwd" ? 0 : 1; };
  REQUIRE(doc["launches"].size() == 11);
  std::map<std::pair<int64_t, int64_t>, nlohmann::json> launches;  // (segment, correlationId) -> row
  for (const auto& row : doc["launches"]) {
    CHECK(row["segment"] == windowOfPath(row["path"]));
    CHECK(launches.emplace(std::pair{row["segment"].get<int64_t>(), row["correlationId"].get<int64_t>()}, row).second);
    CHECK(row["kernels"] == (row["path"] == "fwd" && row["correlationId"] == 6 ? 0 : 1));
  }
  REQUIRE(doc["kernels"].size() == 11);
  for (const auto& row : doc["kernels"]) {
    CAPTURE(row.dump());
    const int64_t segment = row["shortName"] == "gemm" ? 0 : 1;
    CHECK(row["segment"] == segment);
    const auto launch = launches.find({segment, row["correlationId"].get<int64_t>()});
    if (launch == launches.end()) {
      CHECK(row["path"].is_null());  // relu of id 6
      continue;
    }
    CHECK(row["path"] == launch->second["path"]);  // joined on (segment, correlationId) as the export joined
    CHECK(row["path"] == (segment == 0 ? "fwd" : "bwd"));
  }
  REQUIRE(doc["memops"].size() == 2);
  for (const auto& row : doc["memops"]) {
    CHECK(row["segment"] == (row["bytes"] == 100 ? 0 : 1));
    CHECK(row["path"] == (row["bytes"] == 100 ? "fwd" : "bwd"));
  }
  // The HTML report's kernels table: relu in bwd (and the one without launch), gemm in fwd.
  const nlohmann::json report = kc::htmlReportData({l});
  for (const auto& k : report["runs"][0]["kernels"])
    CHECK(k["ranges"] == (k["name"] == "gemm" ? nlohmann::json{{"fwd", 5}} : nlohmann::json{{"bwd", 5}, {"(unmatched)", 1}}));
}

TEST_CASE("exports of a log of one capture window give every record window 0") {
  // The same records with and without their Segment record (index 0).
  for (bool segment : {true, false}) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    definitions(w);
    for (uint64_t c = 1; c <= 3; ++c) w.writeLaunch(launch(c, kFwd));
    w.writeLaunch(launch(7, kFwd, kc::kLaunchMemOp));
    for (uint64_t c = 1; c <= 3; ++c) w.writeKernel(kernel(c, kGemm, 10));
    w.writeMemOp(memcpyOp(7, 100));
    if (segment) w.writeSegment({900, 1700, 1, 7, 0, kCtl, kCtl, 0});
    w.writeEnd();
    w.flush();
    std::ostringstream out;
    kc::writeJsonRecords(out, {kc::test::loaded(sink.bytes)});
    const nlohmann::json doc = nlohmann::json::parse(out.str());
    for (const char* table : {"launches", "kernels", "memops"}) {
      CAPTURE(table);
      CHECK_FALSE(doc[table].empty());
      for (const auto& row : doc[table]) CHECK(row["segment"] == 0);
    }
  }
}
