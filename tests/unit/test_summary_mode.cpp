// Reports of summary-mode logs (KCOUNT_MODE=summary) in two edge cases: a log with no snapshot yet (a
// process killed before its first KCOUNT_INTERVAL), and a log recorded in several capture windows (its
// snapshots are cumulative over all of them, so no per-window numbers).
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "collector/aggregator.h"
#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "collector/stream_summary.h"
#include "tools/check_output.h"
#include "tools/kernels_output.h"
#include "tools/loaded_log.h"
#include "tools/log_state.h"
#include "tools/multi_log.h"
#include "tools/report_html.h"
#include "tools/run.h"
#include "tools/series.h"
#include "tools/summary_output.h"
#include "tests/support/loaded_log.h"

namespace {

constexpr uint64_t kHourNs = 3'600'000'000'000;

/// The metadata the library writes first in summary mode (KCOUNT_INTERVAL=1h), strings 1 "step" and 2
/// "gemm", scope 1 "step".
void summaryDefinitions(kc::LogWriter& w) {
  w.writeMetadata("host", "test");
  w.writeMetadata("start_ns", "1000");
  w.writeMetadata("mode", "summary");
  w.writeMetadata("interval_ns", std::to_string(kHourNs));
  w.writeString(1, "step");
  w.writeString(2, "gemm");
  w.writeScope({1, 0, 1, 0});
}

/// A summary-mode log cut before its first snapshot: definitions only, no End record (a process killed
/// with SIGKILL before one KCOUNT_INTERVAL had passed).
std::vector<uint8_t> noSnapshotLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  w.flush();
  return sink.bytes;
}

/// A complete summary-mode log recorded in 3 capture windows (each 1 ms, `ctl` -> `ctl`), then one final
/// snapshot: 30 instances of "step", 300 launches and kernels of "gemm", 10 µs of GPU time each.
std::vector<uint8_t> windowsLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  w.writeString(3, "ctl");
  for (uint32_t i = 0; i < 3; ++i) {
    kc::SegmentBody sg{};
    sg.start_ns = 10'000'000ull * (i + 1);
    sg.stop_ns = sg.start_ns + 1'000'000;
    sg.first_correlation_id = 100 * i + 1;
    sg.last_correlation_id = 100 * i + 100;
    sg.index = i;
    sg.reason_id = 3;
    sg.end_reason_id = 3;
    w.writeSegment(sg);
  }
  kc::SnapshotBeginBody b{};
  b.time_ns = 50'000'000;
  b.flags = kc::kSnapshotFinal;
  b.scope_rows = 1;
  b.kernel_rows = 1;
  b.launches = b.kernels = 300;
  b.ranges = 30;
  w.writeSnapshotBegin(b);
  kc::SnapshotScopeBody sc{};
  sc.scope_id = 1;
  sc.instances = 30;
  sc.cpu_ns = 30'000'000;
  sc.launches = sc.kernels = 300;
  sc.launch_api_ns = 300'000;
  sc.gpu_ns = 3'000'000;
  w.writeSnapshotScope(sc);
  kc::SnapshotKernelBody k{};
  k.scope_id = 1;
  k.name_id = 2;
  k.count = 300;
  k.gpu_ns = 3'000'000;
  k.min_ns = k.max_ns = 10'000;
  w.writeSnapshotKernel(k);
  w.writeSnapshotEnd({0, 2});
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

using kc::test::loaded;

std::string table(const kc::LoadedLog& l) {
  std::ostringstream out;
  kc::printSummaryTable(out, l, kc::SummaryOptions{});
  return out.str();
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a summary-mode log without a snapshot yet is a summary-mode log without numbers") {
  const auto bytes = noSnapshotLog();
  const kc::LoadedLog l = loaded(bytes);
  REQUIRE(l.data.intact());
  CHECK_FALSE(l.data.complete);
  CHECK(l.data.snapshots.empty());
  CHECK(l.data.summary_mode);  // from metadata mode=summary
  CHECK(kc::summarizeLogBytes(bytes).data.summary_mode);  // the streaming reader too
  CHECK(kc::noSnapshotNumbers(l));

  // The table: no rows of zeros, and the summary mode line says why.
  const std::string t = table(l);
  CHECK(has(t, "no numbers: no complete snapshot"));
  CHECK(has(t, "summary mode: no snapshot written yet, so no numbers (a summary-mode log holds them only in its "
               "snapshots, written every 3600 s from the start of recording and at exit); the log has no end record: "
               "the process was killed before its first snapshot (or is still running)\n"));
  CHECK_FALSE(has(t, "(no range)"));
  CHECK(has(t, "totals: not known (no complete snapshot)\n"));
  CHECK_FALSE(has(t, "totals: 0 launches"));

  // JSON: summary mode, the documented snapshot key null.
  const auto j = kc::summaryJson(l);
  CHECK(j["mode"] == "summary");
  REQUIRE(j.contains("snapshot"));
  CHECK(j["snapshot"].is_null());
  CHECK(j["snapshots"] == 0);

  // --series: the table says there is no snapshot; no interval anywhere.
  std::ostringstream series;
  kc::printSeries(series, l);
  CHECK(has(series.str(), "no snapshot written yet, so no numbers"));
  CHECK(kc::seriesJson({l})["logs"][0]["mode"] == "summary");
  CHECK(kc::seriesJson({l})["logs"][0]["intervals"].empty());

  // check: the same line, and the log is incomplete (exit 1), not damaged.
  std::ostringstream check;
  CHECK(kc::printCheck(check, l, {}) == 1);
  CHECK(has(check.str(), "summary mode: no snapshot written yet, so no numbers"));
  CHECK(has(check.str(), "INCOMPLETE (no end record)"));
  CHECK_FALSE(has(check.str(), "join: "));  // join counts come from a snapshot
}

TEST_CASE("a complete summary-mode log without a snapshot says that it was closed without one") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  REQUIRE(l.data.complete);
  CHECK(l.data.summary_mode);
  CHECK(has(table(l), "summary mode: no snapshot, so no numbers"));
  CHECK(has(table(l), "; the log was closed without its final snapshot (it has no stats record to say why)\n"));
}

TEST_CASE("a closed summary-mode log whose final snapshot was kept out at the size cap: no totals, and why") {
  // As the library closes such a log: records kept out at KCOUNT_MAX_BYTES named in the metadata and the
  // Stats record, which counts the range records tallied; no snapshot in the file.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  w.writeMetadata("records_not_written", "not written: 0 launches, 0 kernels, 0 ranges, 500 other records, at "
                                         "KCOUNT_MAX_BYTES");
  kc::StatsBody st{};
  st.ranges = 400;
  st.bytes_dropped = 53824;
  st.not_written_other = 500;
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  REQUIRE(l.data.complete);
  REQUIRE(kc::noSnapshotNumbers(l));

  // The table: the cause, the state NO TOTALS (with the loss), never "the numbers above".
  const std::string t = table(l);
  INFO(t);
  CHECK(has(t, "summary mode: no snapshot, so no numbers"));
  CHECK(has(t, "; the final snapshot is not in the log, kept out at its size cap (KCOUNT_MAX_BYTES)\n"));
  CHECK(has(t, "\nlog complete but NO TOTALS: a summary-mode log closed without a complete snapshot, though its stats "
               "record counts 0 launch records, 0 kernel records and 400 range records tallied: its final snapshot is "
               "missing (kept out at the log's size cap, KCOUNT_MAX_BYTES), so it holds no numbers; LOSSY: 500 records "
               "dropped while recording"));
  CHECK_FALSE(has(t, "numbers above"));
  CHECK_FALSE(has(t, "closed without one"));
  CHECK(kc::logState(l) == "no totals");

  // check: NO TOTALS wins over LOSSY, and says the loss too.
  std::ostringstream check;
  CHECK(kc::printCheck(check, l, {}) == 1);
  INFO(check.str());
  CHECK(has(check.str(), "\nNO TOTALS: a summary-mode log closed without a complete snapshot"));
  CHECK(has(check.str(), "(kept out at the log's size cap, KCOUNT_MAX_BYTES), so it holds no numbers; also LOSSY: see "
                         "DROPS\n"));
  CHECK(has(check.str(), "\nDROPS: 500 records dropped while recording"));
  CHECK_FALSE(has(check.str(), "COMPLETE BUT LOSSY"));

  // JSON: totals, overall and ranges not known (null), not zeros.
  const auto j = kc::summaryJson(l);
  CHECK(j["snapshot"].is_null());
  CHECK(j["totals"].is_null());
  CHECK(j["overall"].is_null());
  CHECK(j["ranges"].is_null());
  CHECK(j["state"] == "no totals");
  CHECK(j["lossy"] == true);

  // CSV: the header, no row of zeros; the warning for outputs without a footer names the cause.
  std::ostringstream csv;
  kc::printSummaryCsv(csv, l, true, kc::SummaryOptions{});
  const std::string rows = csv.str();
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 1);
  CHECK(has(kc::noTotalsWarning(l), "no totals: summary mode: no snapshot, so no numbers"));
  CHECK(has(kc::noTotalsWarning(l), "kept out at its size cap (KCOUNT_MAX_BYTES); LOSSY: 500 records dropped"));
  CHECK(kc::noTotalsWarning(loaded(windowsLog())).empty());
}

TEST_CASE("events past KCOUNT_MAX_KEYS are named as events not tallied in their row, not as records dropped") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  kc::SnapshotBeginBody b{};
  b.time_ns = 5000;
  b.flags = kc::kSnapshotFinal;
  b.ranges = 204;
  b.dropped_tallies = 204;
  b.max_keys = 1;
  b.dropped_ranges = 5;
  b.dropped_range_instances = 204;
  w.writeSnapshotBegin(b);
  w.writeSnapshotEnd({0, 0});
  w.writeStats(kc::StatsBody{});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  const kc::LogLosses loss = kc::logLosses(l);
  CHECK(loss.records == 0);
  CHECK(loss.untallied == 204);
  CHECK_FALSE(loss.totalsUndercount());
  CHECK(loss.text() == "204 events not tallied in their row at KCOUNT_MAX_KEYS=1 (still in the totals)");
  const std::string t = table(l);
  INFO(t);
  // No launch was evicted: that clause is left out (a "0 launches evicted" would only be noise).
  CHECK(has(t, "(final); 204 events not tallied in their row at KCOUNT_MAX_KEYS=1 (still in the totals)\n"));
  CHECK_FALSE(has(t, "evicted"));
  CHECK(has(t, "\nlog complete but LOSSY: 204 events not tallied in their row at KCOUNT_MAX_KEYS=1 (still in the "
               "totals); the rows above undercount, the totals do not\n"));
  CHECK_FALSE(has(t, "tallies dropped (key cap)"));
  CHECK_FALSE(has(t, "records dropped"));
  std::ostringstream check;
  CHECK(kc::printCheck(check, l, {}) == 1);
  CHECK(has(check.str(), "\nDROPS: 204 events not tallied in their row at KCOUNT_MAX_KEYS=1 (still in the totals)\n"));
  CHECK(has(check.str(), "\nCOMPLETE BUT LOSSY (not damaged; events not tallied in their row at the key cap, still in "
                         "the totals: see DROPS)\n"));
  CHECK(kc::logStateWarning(l) == "log complete but LOSSY: 204 events not tallied in their row at KCOUNT_MAX_KEYS=1 "
                                  "(still in the totals); its rows undercount, the totals do not");
}

TEST_CASE("check: a closed summary-mode log without a snapshot is OK only if its stats say nothing was recorded") {
  // Closed (End record), no snapshot; `stats`: the Stats record before the End record, or none.
  auto closedLog = [](const kc::StatsBody* stats) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    summaryDefinitions(w);
    if (stats != nullptr) w.writeStats(*stats);
    w.writeEnd();
    w.flush();
    return loaded(sink.bytes);
  };
  auto check = [](const kc::LoadedLog& l, std::string* text) {
    std::ostringstream out;
    const int rc = kc::printCheck(out, l, {});
    *text = out.str();
    return rc;
  };
  std::string text;
  kc::StatsBody recorded{};
  recorded.launches = 5;
  recorded.kernels = 4;
  recorded.ranges = 2;
  CHECK(check(closedLog(&recorded), &text) == 1);
  CHECK(has(text, "NO TOTALS: a summary-mode log closed without a complete snapshot, though its stats record counts "
                  "5 launch records, 4 kernel records and 2 range records tallied: its final snapshot is missing, so "
                  "it holds no numbers\n"));
  CHECK_FALSE(has(text, "\nOK"));

  // No Stats record: it cannot tell "nothing recorded" from "snapshot missing".
  CHECK(check(closedLog(nullptr), &text) == 1);
  CHECK(has(text, "NO TOTALS: a summary-mode log closed without a complete snapshot and without a stats record, so it "
                  "cannot tell whether nothing was recorded or its final snapshot is missing: it holds no numbers\n"));

  // A Stats record that counts nothing: nothing was recorded, so no snapshot was due.
  const kc::StatsBody nothing{};
  CHECK(check(closedLog(&nothing), &text) == 0);
  CHECK(has(text, "\nOK\n"));
  CHECK(has(text, "summary mode: no snapshot, so no numbers"));

  // A log with its final snapshot (and without a Stats record) is OK.
  CHECK(check(loaded(windowsLog()), &text) == 0);
  CHECK(has(text, "\nOK\n"));
}

TEST_CASE("across logs: a summary-mode log without a snapshot has no totals, not zeros") {
  const kc::LoadedLog full = loaded(windowsLog(), "run/full.kcount");
  const kc::LoadedLog none = loaded(noSnapshotLog(), "run/killed.kcount");
  REQUIRE(kc::noSnapshotNumbers(none));
  const auto j = kc::acrossLogsJson({full, none});
  CHECK(j["totals_known"] == nlohmann::json::array({true, false}));
  bool step_seen = false;
  for (const auto& r : j["ranges"]) {
    INFO(r["path"]);
    CHECK(r["in_logs"] == 1);  // the log without numbers is not counted as having the range
    for (const auto& [metric, values] : r["per_log"].items()) {
      INFO(metric);
      CHECK(values[1].is_null());
    }
    if (r["path"] == "step") {
      step_seen = true;
      CHECK(r["total"]["launches"] == 300);
      CHECK(r["spread"]["launches"]["min"] == 300);  // not 0 from the log without numbers
    }
  }
  CHECK(step_seen);

  // Cells are separated by two spaces or more.
  auto stepRow = [](const std::string& t) {
    std::istringstream lines(t);
    std::vector<std::string> step;
    for (std::string line; std::getline(lines, line);) {
      if (!line.starts_with("step ")) continue;
      for (size_t at = 0; at < line.size();) {
        const size_t gap = line.find("  ", at);
        step.push_back(line.substr(at, gap == std::string::npos ? std::string::npos : gap - at));
        at = gap == std::string::npos ? line.size() : line.find_first_not_of(' ', gap);
      }
    }
    return step;
  };
  {
    // Not added up by default: step's row is range, full, killed, min, median, max, in logs.
    std::ostringstream table;
    kc::printAcrossLogs(table, {full, none}, kc::AcrossMetric::kLaunches);
    const std::string t = table.str();
    INFO(t);
    CHECK(has(t, "no totals: killed (summary-mode log without a complete snapshot, so without numbers): left out of "
                 "spread and in logs\n"));
    CHECK(has(t, "not added up: each log's launches in its own column; --sum adds a total column"));
    CHECK(stepRow(t) == std::vector<std::string>{"step", "300", "no totals", "300", "300", "300", "1/2"});
  }
  {
    // --sum: range, full, killed, total, min, median, max, in logs.
    std::ostringstream table;
    kc::printAcrossLogs(table, {full, none}, kc::AcrossMetric::kLaunches, 0, /*sum=*/true);
    const std::string t = table.str();
    INFO(t);
    CHECK(has(t, "no totals: killed (summary-mode log without a complete snapshot, so without numbers): left out of "
                 "total, spread and in logs\n"));
    CHECK_FALSE(has(t, "not added up"));
    CHECK(stepRow(t) == std::vector<std::string>{"step", "300", "no totals", "300", "300", "300", "300", "1/2"});
  }
}

TEST_CASE("a trace-mode log is not taken for a summary-mode one by its metadata") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("mode", "trace");
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  CHECK_FALSE(l.data.summary_mode);
  CHECK(kc::summaryJson(l)["mode"] == "trace");
  CHECK_FALSE(kc::summaryJson(l).contains("snapshot"));
}

TEST_CASE("kcount run's note on a killed summary-mode log names its snapshots, not its chunks") {
  char path[] = "/tmp/kc-summary-note-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  auto write = [&](const std::vector<uint8_t>& bytes) {
    REQUIRE(ftruncate(fd, 0) == 0);
    REQUIRE(pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  };
  write(noSnapshotLog());
  std::string note = kc::incompleteLogNote(path, SIGKILL);
  CHECK(has(note, "a summary-mode log holds only the snapshots written before (every 3600 s from the start of "
                  "recording), and none was written, so it holds no numbers"));
  CHECK_FALSE(has(note, "about once a second"));

  // One complete snapshot, then cut before the End record.
  kc::MemorySink sink;
  {
    kc::LogWriter w(&sink);
    summaryDefinitions(w);
    kc::SnapshotBeginBody b{};
    b.time_ns = 5000;
    w.writeSnapshotBegin(b);
    w.writeSnapshotEnd({0, 0});
    w.flush();
  }
  write(sink.bytes);
  note = kc::incompleteLogNote(path, SIGKILL);
  CHECK(has(note, "kcount summary reads its one complete snapshot, not the run up to the kill"));
  CHECK_FALSE(has(note, "about once a second"));
  close(fd);
  std::remove(path);
}

TEST_CASE("summary mode with capture windows: windows listed, no per-window numbers, tallies cumulative") {
  const kc::LoadedLog l = loaded(windowsLog());
  REQUIRE(l.data.intact());
  REQUIRE(l.data.segments.size() == 3);
  REQUIRE(l.summary.snapshot == 0);
  CHECK(l.summary.launches == 300);

  const std::string t = table(l);
  CHECK(has(t, "capture windows: 3; summary mode: the numbers above are cumulative over all of them (per-window "
               "numbers need KCOUNT_MODE=trace)\n"));
  CHECK(has(t, "  segment 0: ctl -> ctl, 1.00 ms\n"));
  CHECK(has(t, "  segment 2: ctl -> ctl, 1.00 ms\n"));
  CHECK_FALSE(has(t, "--segment"));
  CHECK_FALSE(has(t, " unmatched, GPU time"));  // the trace-mode window line

  const auto j = kc::summaryJson(l);
  REQUIRE(j["segments"].size() == 3);
  for (const auto& sg : j["segments"]) {
    CHECK(sg["duration_ns"] == 1'000'000);
    CHECK(sg["reason"] == "ctl");
    for (const char* k : {"launches", "kernels", "unmatched_kernels", "gpu_ns", "ranges", "mem_ops"})
      CHECK_MESSAGE(sg[k].is_null(), k);
  }
  CHECK(j["segments"][1]["index"] == 1);
  CHECK(j["totals"]["launches"] == 300);
}

TEST_CASE("kernels of a summary-mode log: grid and block not known ('-', empty CSV fields, null), not 0x0x0") {
  const std::vector<kc::LoadedLog> logs{loaded(windowsLog(), "s.kcount")};
  std::ostringstream t;
  kc::printKernelsTable(t, logs, false);
  // The row of "gemm": kernel, count, GPU total, GPU avg, grid, block, ... (cells apart by 2 spaces or more).
  std::istringstream lines(t.str());
  std::string line;
  std::vector<std::string> cells;
  while (std::getline(lines, line))
    if (line.starts_with("gemm ")) {
      const std::regex gap(" {2,}");
      cells.assign(std::sregex_token_iterator(line.begin(), line.end(), gap, -1), std::sregex_token_iterator());
    }
  REQUIRE(cells.size() > 5);
  CHECK(cells[1] == "300");
  CHECK(cells[2] == "3.00 ms");  // GPU time is known
  CHECK(cells[4] == "-");
  CHECK(cells[5] == "-");
  CHECK_FALSE(has(t.str(), "0x0x0"));
  CHECK(has(t.str(), "grid, block: not recorded in s.kcount (KCOUNT_MODE=summary: kernels tallied by name, without "
                     "their records; grid and block are '-')\n"));

  std::ostringstream csv;
  kc::printKernelsCsv(csv, logs, false);
  CHECK(has(csv.str(), "\ns.kcount,gemm,gemm,300,3000000,,,,,,,\"{\"\"step\"\":300}\","));
  CHECK(csv.str().ends_with(",,\n"));  // distinct_grids, distinct_blocks: empty (not known), never 0

  const auto j = kc::kernelsJson(logs);
  REQUIRE(j["kernels"].size() == 1);
  CHECK(j["kernels"][0]["gpu_ns"] == 3'000'000);
  CHECK(j["kernels"][0]["grid"].is_null());
  CHECK(j["kernels"][0]["block"].is_null());
  CHECK(j["kernels"][0]["distinct_grids"].is_null());
  CHECK(j["kernels"][0]["distinct_blocks"].is_null());

  // The HTML report's data: grid and block null (the page shows "—"), no distinct ones; were [0, 0, 0].
  const auto h = kc::htmlReportData(logs);
  REQUIRE(h["runs"][0]["kernels"].size() == 1);
  CHECK(h["runs"][0]["kernels"][0]["grid"].is_null());
  CHECK(h["runs"][0]["kernels"][0]["block"].is_null());
  CHECK(h["runs"][0]["kernels"][0]["grids"].empty());
}

TEST_CASE("a summary-mode log cut short before any complete snapshot names the cut, not a kill") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  w.flush();  // chunk 0: metadata and definitions, intact
  const size_t intact = sink.bytes.size();
  kc::SnapshotBeginBody b{};
  b.time_ns = 5000;
  b.flags = kc::kSnapshotFinal;
  w.writeSnapshotBegin(b);
  w.writeSnapshotEnd({0, 0});
  w.writeEnd();
  w.flush();
  std::vector<uint8_t> cut(sink.bytes.begin(), sink.bytes.begin() + static_cast<long>(intact + 20));
  const kc::LoadedLog l = loaded(cut);
  REQUIRE(!l.data.complete);
  REQUIRE(!l.data.intact());
  const std::string why = kc::noSnapshotText(l.data);
  CHECK(has(why, "damaged or cut short before any complete snapshot"));
  CHECK(!has(why, "killed"));
  // Closed by the process and read whole: the kill is still what a missing end record means.
  std::vector<uint8_t> open_log(sink.bytes.begin(), sink.bytes.begin() + static_cast<long>(intact));
  CHECK(has(kc::noSnapshotText(loaded(open_log).data), "killed before its first snapshot"));
}

namespace {
/// A summary-mode log as the library closes it when its final snapshot was cut at KCOUNT_MAX_BYTES: the
/// final snapshot's first chunk (SnapshotBegin and its scope row, 1 of 2 rows) is in the file, the rest
/// was kept out, then the final chunk (records_not_written naming the cap, Stats, End). With
/// `periodic_before`, a complete periodic snapshot 0 at +1 s comes first.
std::vector<uint8_t> finalSnapshotCutLog(bool periodic_before) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  uint32_t sequence = 0;
  kc::SnapshotScopeBody sc{};
  sc.scope_id = 1;
  sc.instances = 10;
  sc.cpu_ns = 10'000'000;
  sc.launches = sc.kernels = 100;
  sc.gpu_ns = 1'000'000;
  kc::SnapshotKernelBody k{};
  k.scope_id = 1;
  k.name_id = 2;
  k.count = 100;
  k.gpu_ns = 1'000'000;
  k.min_ns = k.max_ns = 10'000;
  if (periodic_before) {
    kc::SnapshotBeginBody b{};
    b.time_ns = 1'000'001'000;
    b.sequence = sequence++;
    b.scope_rows = b.kernel_rows = 1;
    b.launches = b.kernels = 100;
    b.ranges = 10;
    w.writeSnapshotBegin(b);
    w.writeSnapshotScope(sc);
    w.writeSnapshotKernel(k);
    w.writeSnapshotEnd({b.sequence, 2});
  }
  w.flush();
  kc::SnapshotBeginBody f{};
  f.time_ns = 2'000'001'000;
  f.sequence = sequence;
  f.flags = kc::kSnapshotFinal;
  f.scope_rows = f.kernel_rows = 1;
  f.launches = f.kernels = 300;
  f.ranges = 30;
  w.writeSnapshotBegin(f);
  w.writeSnapshotScope(sc);
  w.flush();  // the chunk that fit; the kernel row and the SnapshotEnd were kept out
  w.writeMetadata("records_not_written", "not written: 0 launches, 0 kernels, 0 ranges, 2 other records, at "
                                         "KCOUNT_MAX_BYTES");
  kc::StatsBody st{};
  st.launches = st.kernels = 300;
  st.ranges = 30;
  st.bytes_dropped = 120;
  st.not_written_other = 2;
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}
}  // namespace

TEST_CASE("a final snapshot cut at the size cap, then the End record: said as cut, not as missing or as a cut file") {
  for (const bool periodic_before : {false, true}) {
    CAPTURE(periodic_before);
    const kc::LoadedLog l = loaded(finalSnapshotCutLog(periodic_before));
    REQUIRE(l.data.complete);
    REQUIRE(l.data.intact());
    CHECK(l.data.incomplete_snapshots == 1);
    CHECK(l.data.snapshot_cut_at_end.open_at_end);
    CHECK(l.data.snapshot_cut_at_end.final);
    CHECK(l.data.snapshot_cut_at_end.rows_read == 1);
    CHECK(l.data.snapshot_cut_at_end.rows == 2);
    // The reader: the End record follows the snapshot, so the log does not end inside it.
    bool warned = false;
    for (const auto& i : l.data.issues) {
      if (i.message.find("is incomplete") == std::string::npos) continue;
      warned = true;
      INFO(i.message);
      CHECK(has(i.message, "is incomplete (cut at the size cap (KCOUNT_MAX_BYTES): the rest was kept out, and the "
                           "log's End record follows, 1 of 2 rows read)"));
      CHECK_FALSE(has(i.message, "ends inside it"));
    }
    CHECK(warned);
    const std::string t = table(l);
    INFO(t);
    CHECK_FALSE(has(t, "not in the log"));
    if (periodic_before) {
      // Totals from the last complete snapshot, and the final one named as cut at the cap.
      CHECK(l.summary.snapshot == 0);
      CHECK(has(t, "summary mode: 1 complete snapshot every 3600 s, 1 incomplete; totals from snapshot 0 at +1.00 s "
                   "(not final: the final snapshot was cut at the size cap (KCOUNT_MAX_BYTES) after 1 of its 2 rows; "
                   "the run went on after it)"));
    } else {
      // No totals, and the line says why: the cap cut the final snapshot.
      CHECK(kc::noSnapshotNumbers(l));
      CHECK(has(t, "; no complete snapshot: no totals (the final snapshot was cut at the size cap (KCOUNT_MAX_BYTES) "
                   "after 1 of its 2 rows)\n"));
      CHECK(has(kc::noTotalsWarning(l), "no complete snapshot (1 incomplete), so no numbers"));
      CHECK(has(kc::noTotalsWarning(l), "; the final snapshot was cut at the size cap (KCOUNT_MAX_BYTES) after 1 of "
                                        "its 2 rows"));
      CHECK(has(t, "its final snapshot was cut at the size cap (KCOUNT_MAX_BYTES) after 1 of its 2 rows, so it holds "
                   "no numbers"));
    }
  }
}

TEST_CASE("periodic snapshots skipped at the size cap: one phrase for the library's closing line and the summary line") {
  CHECK(kc::snapshotsSkippedText(0).empty());
  CHECK(kc::snapshotsSkippedText(1) == "1 periodic snapshot not written at KCOUNT_MAX_BYTES, to keep room for the final one");
  CHECK(kc::snapshotsSkippedText(7) == "7 periodic snapshots not written at KCOUNT_MAX_BYTES, to keep room for the final one");
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  summaryDefinitions(w);
  kc::SnapshotBeginBody b{};
  b.time_ns = 2000;
  b.flags = kc::kSnapshotFinal;
  w.writeSnapshotBegin(b);
  w.writeSnapshotEnd({0, 0});
  w.writeMetadata(kc::kMetaSnapshotsSkipped, "1");
  w.writeEnd();
  w.flush();
  CHECK(has(table(loaded(sink.bytes)), "summary mode: 1 complete snapshot every 3600 s (" + kc::snapshotsSkippedText(1) +
                                           "); totals from snapshot 0"));
}

TEST_CASE("the summary-mode line names untallied events and evicted launches only when there are some") {
  // `dropped`: events past KCOUNT_MAX_KEYS; `evicted`: launches pushed out of the correlation window.
  auto line = [](uint64_t dropped, uint64_t evicted) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    summaryDefinitions(w);
    kc::SnapshotBeginBody b{};
    b.time_ns = 5000;
    b.flags = kc::kSnapshotFinal;
    b.dropped_tallies = dropped;
    b.max_keys = 8;
    b.evicted_launches = evicted;
    w.writeSnapshotBegin(b);
    w.writeSnapshotEnd({0, 0});
    w.writeStats(kc::StatsBody{});
    w.writeEnd();
    w.flush();
    const std::string t = table(loaded(sink.bytes));
    // What follows the snapshot's "(final)" on the summary-mode line.
    const size_t line_at = t.find("summary mode: ");
    REQUIRE(line_at != std::string::npos);
    const size_t at = t.find("(final)", line_at);
    REQUIRE(at != std::string::npos);
    return t.substr(at + 7, t.find('\n', at) - at - 7);
  };
  CHECK(line(0, 0) == "");
  CHECK(line(3, 0) == "; 3 events not tallied in their row at KCOUNT_MAX_KEYS=8 (still in the totals)");
  CHECK(line(0, 2) == "; 2 launches evicted from the correlation window");
  CHECK(line(1, 1) == "; 1 event not tallied in their row at KCOUNT_MAX_KEYS=8 (still in the totals), 1 launch "
                      "evicted from the correlation window");
}
