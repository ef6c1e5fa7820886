// Summary and check reports on unusual logs: files holding two logs, records of an unknown range,
// parents without an instance, range names that look like paths, kernels tables with many ranges.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include "collector/analysis.h"
#include "collector/counted.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "collector/stream_summary.h"
#include "tests/support/capped_log.h"
#include "tests/support/records.h"
#include "tests/support/verdict_inputs.h"
#include "tools/check_output.h"
#include "tools/diff.h"
#include "tools/kernels_output.h"
#include "tools/loaded_log.h"
#include "tools/log_state.h"
#include "tools/range_names.h"
#include "tools/range_tree.h"
#include "tools/report_html.h"
#include "tools/kernel_names.h"
#include "tools/multi_log.h"
#include "tools/series.h"
#include "tools/summary_output.h"
#include "tools/text.h"
#include "tools/verdict.h"
#include "tests/support/loaded_log.h"

namespace {

using kc::test::kernel;
using kc::test::kernelRange;
using kc::test::launch;

using kc::test::loaded;

std::string table(const kc::LoadedLog& l, kc::SummaryView view = kc::SummaryView::kTree) {
  std::ostringstream out;
  kc::SummaryOptions opt;
  opt.view = view;
  kc::printSummaryTable(out, l, opt);
  return out.str();
}

/// Strings 1 "step", 2 "gemm", 3 "cudaLaunchKernel" (the launches' API) and scope 1 "step".
void stepDefinitions(kc::LogWriter& w) {
  w.writeString(1, "step");
  w.writeString(2, "gemm");
  w.writeString(3, "cudaLaunchKernel");
  w.writeScope({1, 0, 1, 0});
}

/// One log: range "step" (scope 1) with two launches and their kernels, and End.
/// Two launches, their kernels and one range of "step"; with `stats`, a Stats record before the End record.
std::vector<uint8_t> smallLog(const kc::StatsBody* stats = nullptr) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  stepDefinitions(w);
  for (uint64_t c = 1; c <= 2; ++c) {
    w.writeLaunch(launch(c, 1));
    w.writeKernel(kernel(c, 2));
  }
  w.writeRange({10, 900, 1, 7, 7, 0});
  if (stats != nullptr) w.writeStats(*stats);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

bool hasLine(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("check: a trace log whose Stats record counts more records than the file holds says records are missing") {
  auto withStats = [](uint64_t launches, uint64_t kernels, uint64_t not_written_kernels) {
    kc::StatsBody st{};
    st.launches = launches;
    st.kernels = kernels;
    st.ranges = 1;
    st.not_written_kernels = not_written_kernels;
    return loaded(smallLog(&st));
  };
  std::ostringstream ok, kept_out, missing;
  CHECK(kc::printCheck(ok, withStats(2, 2, 0)) == 0);
  CHECK_FALSE(hasLine(ok.str(), "does not match"));
  CHECK(kc::printCheck(kept_out, withStats(2, 5, 3)) == 1);  // 3 kernels kept out at the size cap: lossy, counted
  CHECK_FALSE(hasLine(kept_out.str(), "does not match"));
  CHECK(kc::printCheck(missing, withStats(9666, 10055, 0)) == 1);
  CHECK(hasLine(missing.str(), "warning: the log's Stats record does not match its records: 9666 launch records "
                               "written by the library, 2 in the file; 10055 kernel records written by the library, 2 "
                               "in the file"));
  CHECK(hasLine(missing.str(), "\nRECORDS MISSING: the file's records do not add up to its Stats record's counts"));
  CHECK_FALSE(hasLine(missing.str(), "\nOK\n"));
  // summary, its JSON and the other commands' warnings say the same as check, not "log complete".
  const kc::LoadedLog short_log = withStats(9666, 10055, 0);
  CHECK(kc::logState(short_log) == "records missing");
  CHECK(kc::logStateWarning(short_log, "above").starts_with("log RECORDS MISSING: 9666 launch records written by the "
                                                            "library, 2 in the file;"));
  CHECK(kc::summaryJson(std::vector<kc::LoadedLog>{short_log})["logs"][0]["state"] == "records missing");
  CHECK(kc::logState(withStats(2, 2, 0)) == "complete");
  // More records in the file than the Stats record counts: none is missing, and check says what it is.
  std::ostringstream extra;
  CHECK(kc::printCheck(extra, withStats(1, 2, 0)) == 1);
  CHECK(hasLine(extra.str(), "warning: the log's Stats record does not match its records: 1 launch record written by "
                             "the library, 2 in the file (more records than the library counted: a file put together "
                             "from pieces, or a Stats record that undercounts)\n"));
  CHECK(hasLine(extra.str(), "\nEXTRA RECORDS: the file holds more records than the library counted in its Stats "
                             "record (see above); every record it holds is read\n"));
  CHECK_FALSE(hasLine(extra.str(), "MISSING"));
  CHECK_FALSE(hasLine(extra.str(), "missing"));
  CHECK(kc::logState(withStats(1, 2, 0)) == "complete");
}

TEST_CASE("KCOUNT_LAUNCH_TIMING: a log whose launch CPU is estimated says so under the table and in JSON") {
  auto withSample = [](const char* sample) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    if (sample != nullptr) w.writeMetadata("launch_timing_sample", sample);
    stepDefinitions(w);
    w.writeLaunch(launch(1, 1));
    w.writeKernel(kernel(1, 2));
    w.writeEnd();
    w.flush();
    return loaded(sink.bytes);
  };
  const kc::LoadedLog sampled = withSample("16");
  CHECK(kc::launchTimingSample(sampled.data) == 16);
  CHECK(hasLine(table(sampled), "launch CPU: estimated (KCOUNT_LAUNCH_TIMING=16): one launch call in 16 was timed"));
  CHECK(kc::summaryJson(sampled)["launch_timing_sample"] == 16);
  for (const char* plain : {static_cast<const char*>(nullptr), "1", "0", "x", "4096"}) {
    const kc::LoadedLog l = withSample(plain);
    CHECK(kc::launchTimingSample(l.data) == 1);
    CHECK_FALSE(hasLine(table(l), "launch CPU: estimated"));
    CHECK(kc::summaryJson(l)["launch_timing_sample"] == 1);
    CHECK(kc::launchTimingNote(l.data).empty());
  }

  // Every other output that shows launch CPU says so too: diff, across logs, series, the HTML report.
  kc::LoadedLog plain = withSample(nullptr);
  plain.path = "plain.kcount";
  {
    std::ostringstream out;
    kc::printDiff(out, {plain}, {sampled});
    CHECK(hasLine(out.str(), "launch CPU: estimated in B (1 in 16 calls timed) (KCOUNT_LAUNCH_TIMING)"));
    const auto j = kc::diffJson({plain}, {sampled});
    CHECK(j["launch_timing_sample"]["a"] == 1);
    CHECK(j["launch_timing_sample"]["b"] == 16);
    std::ostringstream same;
    kc::printDiff(same, {plain}, {plain});
    CHECK_FALSE(hasLine(same.str(), "launch CPU: estimated"));
  }
  {
    std::ostringstream out;
    kc::printAcrossLogs(out, {plain, sampled}, kc::AcrossMetric::kLaunchApiNs);
    CHECK(hasLine(out.str(), "launch CPU: estimated in "));
    CHECK(hasLine(out.str(), "(1 in 16) (KCOUNT_LAUNCH_TIMING)"));
    CHECK(kc::acrossLogsJson({plain, sampled})["launch_timing_sample"] == nlohmann::json::array({1, 16}));
  }
  CHECK(kc::seriesJson({sampled})["logs"][0]["launch_timing_sample"] == 16);
  const auto html = kc::htmlReportData({plain, sampled});
  CHECK(html["runs"][0]["launch_timing_note"] == "");
  CHECK(html["runs"][1]["launch_timing_note"] == kc::launchTimingNote(sampled.data));
}

namespace {

}  // namespace

TEST_CASE("a file holding a log twice: only the first log is read, check says so, nothing is doubled") {
  const std::vector<uint8_t> one = smallLog();
  std::vector<uint8_t> two = one;
  two.insert(two.end(), one.begin(), one.end());

  const kc::LoadedLog single = loaded(one);
  CHECK_FALSE(single.data.dataAfterEnd());
  const kc::LoadedLog l = loaded(two);
  CHECK(l.data.complete);
  CHECK(l.data.intact());
  CHECK(l.data.dataAfterEnd());
  CHECK(l.data.after_end_offset == one.size());
  CHECK(l.data.after_end_bytes == one.size());
  CHECK(l.data.after_end_is_log);
  CHECK(l.data.launch_records == 2);
  CHECK(l.summary.launches == single.summary.launches);
  CHECK(l.summary.kernels == single.summary.kernels);
  CHECK(l.summary.launches_without_kernel == 0);
  bool warned = false;
  for (const auto& i : l.data.issues)
    warned = warned || (i.severity == kc::ReadIssue::Severity::kWarning && i.offset == one.size() &&
                        hasLine(i.message, "a second log starts there"));
  CHECK(warned);

  // The streaming reader stops at the same place.
  const kc::StreamedLog st = kc::summarizeLogBytes(two);
  CHECK(st.data.after_end_offset == one.size());
  CHECK(st.summary.launches == 2);

  std::ostringstream check;
  CHECK(kc::printCheck(check, l) == 1);
  CHECK(hasLine(check.str(), "NOT ONE LOG: " + std::to_string(one.size()) + " bytes follow the end record, from byte " +
                                 std::to_string(one.size()) + " (a second log starts there"));
  CHECK_FALSE(hasLine(check.str(), "\nOK\n"));
  const std::string t = table(l);
  CHECK(hasLine(t, "log complete up to byte " + std::to_string(one.size())));

  // Bytes that are not a log after the end record: reported too, not called a second log.
  std::vector<uint8_t> junk = one;
  junk.insert(junk.end(), 40, uint8_t{0xab});
  const kc::LoadedLog j = loaded(junk);
  CHECK(j.data.dataAfterEnd());
  CHECK_FALSE(j.data.after_end_is_log);
  CHECK(j.data.after_end_bytes == 40);
  std::ostringstream jc;
  CHECK(kc::printCheck(jc, j) == 1);
  CHECK(hasLine(jc.str(), "TRAILING BYTES: 40 bytes follow the end record, from byte " + std::to_string(one.size()) +
                              ", not a log; the log before them is read whole"));
  CHECK_FALSE(hasLine(jc.str(), "NOT ONE LOG"));
}

TEST_CASE("records whose range definition is lost: their own row, no verdict, never 'log complete'") {
  // Scope 1 is defined; scope 5 (its Scope record "lost") is referred to by a launch, a kernel and a range.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  stepDefinitions(w);
  w.writeLaunch(launch(1, 1));
  w.writeKernel(kernel(1, 2));
  w.writeLaunch(launch(2, 5));
  w.writeKernel(kernel(2, 2));
  w.writeLaunch(launch(3, 0));  // a launch outside every range
  w.writeKernel(kernel(3, 2));
  w.writeRange({10, 900, 1, 7, 7, 0});
  w.writeRange({20, 500, 5, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  REQUIRE_FALSE(l.data.intact());  // the reference to scope 5 is an error

  CHECK(l.summary.unresolved.launches == 1);
  CHECK(l.summary.unresolved.kernels == 1);
  CHECK(l.summary.unresolved.instances == 1);
  CHECK(l.summary.exclusive[kc::kRootScope].launches == 2);  // still credited to the root: totals hold
  const kc::RangeStats none = kc::noRangeStats(l.summary);
  CHECK(none.launches == 1);
  CHECK(none.instances == 0);
  CHECK(none.by_kernel.begin()->second.count == 1);
  const kc::StreamedLog st = kc::summarizeLogBytes(sink.bytes);
  CHECK(st.summary.unresolved.launches == 1);
  CHECK(st.summary.unresolved.instances == 1);

  const std::string t = table(l);
  CHECK(hasLine(t, std::string(kc::kUnresolvedLabel) + "  "));
  CHECK_FALSE(hasLine(t, "log complete"));
  CHECK(hasLine(t, "log DAMAGED"));
  // The (no range) row keeps 0 instances and has no verdict; the unknown range has none either.
  const size_t root_at = t.find("\n(no range) ");
  REQUIRE(root_at != std::string::npos);
  std::istringstream root_row(t.substr(root_at + 11));
  uint64_t root_instances = 99;
  root_row >> root_instances;
  CHECK(root_instances == 0);
  CHECK_FALSE(hasLine(t, "(no range): GPU-bound"));
  CHECK_FALSE(hasLine(t, std::string(kc::kUnresolvedLabel) + ": GPU-bound"));
  CHECK_FALSE(hasLine(t, std::string(kc::kUnresolvedLabel) + ": CPU-bound"));

  const auto j = kc::summaryJson(l);
  CHECK(j["intact"] == false);
  REQUIRE(j["ranges"].size() == 3);
  CHECK(j["ranges"][0]["instances"] == 0);
  CHECK(j["ranges"][1]["unknown_range"] == true);
  CHECK(j["ranges"][1]["verdict"].is_null());
  CHECK(j["ranges"][1]["exclusive"]["launches"] == 1);
  // Its ranges may be several lost ranges nested in one another: no instances and no wall time are shown
  // for the row (the table's '-', CSV's empty fields, JSON's 0 and null), as docs/usage.md says.
  CHECK(j["ranges"][1]["instances"] == 0);
  CHECK(j["ranges"][1]["cpu_ns"].is_null());
  CHECK(j["ranges"][1]["kernels_per_instance"].is_null());
  const size_t unknown_at = t.find(std::string("\n") + std::string(kc::kUnresolvedLabel));
  REQUIRE(unknown_at != std::string::npos);
  std::istringstream unknown_row(t.substr(unknown_at + 1 + kc::kUnresolvedLabel.size()));
  std::string unknown_instances;
  unknown_row >> unknown_instances;
  CHECK(unknown_instances == "-");
  std::ostringstream csv;
  kc::printSummaryCsv(csv, l, true, {});
  const std::string c = csv.str();
  const size_t csv_at = c.find(std::string(",") + std::string(kc::kUnresolvedLabel) + ",1,0,,");
  CHECK(csv_at != std::string::npos);  // depth 1, instances 0, cpu_ns empty
}

TEST_CASE("ranges whose parent's definition was lost are grouped under one marked '(lost range P)' row") {
  // Chunk 0 (lost): strings 1-2 and scopes 1 "train", 2 "eval", 3 "train/step". Chunk 1: strings 4-7 and
  // scopes 4 "up" and 5 "down", both inside step (parent 3); launches in up, down and step itself.
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  w.writeString(1, "train");
  w.writeString(2, "step");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 0, 1, 0});
  w.writeScope({3, 1, 2, 0});
  w.flush();
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "up");
  w.writeString(5, "down");
  w.writeString(6, "gemm");
  w.writeScope({4, 3, 4, 0});
  w.writeScope({5, 3, 5, 0});
  w.writeLaunch(launch(1, 4));
  w.writeKernel(kernel(1, 6));
  w.writeLaunch(launch(2, 5));
  w.writeKernel(kernel(2, 6));
  w.writeLaunch(launch(3, 5));
  w.writeKernel(kernel(3, 6));
  w.writeLaunch(launch(4, 3));  // made in step itself: its range is not known
  w.writeKernel(kernel(4, 6));
  w.writeRange({100, 200, 4, 7, 7, 0});
  w.writeRange({300, 500, 5, 7, 7, 0});
  w.writeEnd();
  w.flush();
  std::vector<uint8_t> b = sink.bytes;
  b[sizeof(kc::FileHeader) + sizeof(kc::ChunkHeader) + 3] ^= 0xff;  // chunk 0 lost
  const kc::LoadedLog l = loaded(b);
  REQUIRE_FALSE(l.data.intact());
  REQUIRE(l.data.scopeLost(3));
  CHECK(l.data.scopePath(4) == "(lost range 3)/up");

  // The tree: step (lost) holds up and down; it hangs under the root; totals hold.
  const kc::Summary& s = l.summary;
  REQUIRE(s.children.size() > 3);
  CHECK(s.children[3] == std::vector<uint32_t>{4, 5});
  CHECK(std::find(s.children[0].begin(), s.children[0].end(), 4u) == s.children[0].end());
  CHECK(s.exclusive[3].launches == 0);  // its own launch is in the unknown-range row and the root
  CHECK(s.inclusive[3].launches == 3);
  CHECK(s.unresolved.launches == 1);
  CHECK(s.inclusive[kc::kRootScope].launches == 4);
  CHECK(s.inclusive[kc::kRootScope].kernels == 4);
  CHECK(s.inclusive[4].instances + s.inclusive[5].instances == 2);

  const std::string t = table(l);
  INFO(t);
  CHECK(t.substr(0, t.find("\nlog DAMAGED")).find("<bad scope id") == std::string::npos);  // the table and verdicts
  CHECK(hasLine(t, "(lost range 3)  "));
  CHECK(hasLine(t, "  up  "));
  CHECK(hasLine(t, "  down  "));
  CHECK(hasLine(t, std::string(kc::kLostRangeNote)));
  CHECK(hasLine(t, "  (lost range 3)/up: "));
  CHECK(hasLine(t, "  (lost range 3)/down: "));
  // Its own instances and kernels are not known: '-', not 0.
  const size_t at = t.find("\n(lost range 3) ");
  REQUIRE(at != std::string::npos);
  std::istringstream row(t.substr(at + 16));
  std::string instances, launches;
  row >> instances >> launches;
  CHECK(instances == "-");
  CHECK(launches == "3");
  const std::string flat = table(l, kc::SummaryView::kInclusive);
  CHECK(hasLine(flat, "(lost range 3)/up  "));

  const auto j = kc::summaryJson(l);
  bool seen = false;
  for (const auto& r : j["ranges"]) {
    if (r["path"] == "(lost range 3)") {
      seen = true;
      CHECK(r["lost_range"] == true);
      CHECK(r["depth"] == 1);
      CHECK(r["inclusive"]["launches"] == 3);
    }
    if (r["path"] == "(lost range 3)/up") CHECK(r["depth"] == 2);
  }
  CHECK(seen);
}

TEST_CASE("a parent with no instance (open around the capture window) is a placeholder row, not a gap") {
  // outer > request > inner: only request and inner closed while recording, and nothing was launched.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "outer");
  w.writeString(2, "request");
  w.writeString(3, "inner");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  w.writeScope({3, 2, 3, 0});
  w.writeRange({20, 60, 3, 7, 7, 0});
  w.writeRange({10, 90, 2, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  const auto shown = kc::shownScopes(l.data, l.summary);
  CHECK(shown == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK(kc::isPlaceholder(l.summary, 1));
  CHECK_FALSE(kc::isPlaceholder(l.summary, 2));
  const std::string t = table(l);
  CHECK(hasLine(t, "\nouter " + std::string(kc::kPlaceholderMark) + " "));  // marked, explained once below
  CHECK(hasLine(t, "\n" + std::string(kc::kPlaceholderNote) + "\n"));
  CHECK(hasLine(t, "\n  request "));
  CHECK(hasLine(t, "\n    inner "));
  CHECK(hasLine(table(l, kc::SummaryView::kInclusive), "\nouter/request "));
}

TEST_CASE("range names with '/', newlines or nothing read one way in tables; JSON keeps them raw") {
  CHECK(kc::displayName("a/b") == "a\\/b");
  CHECK(kc::displayName("x\ny") == "x\\ny");
  CHECK(kc::displayName("back\\slash") == "back\\\\slash");
  CHECK(kc::displayName("") == "(empty name)");
  CHECK(kc::displayName(std::string("t\x01z")) == "t\\x01z");
  CHECK(kc::displayName("µs") == "µs");

  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "a/b");
  w.writeString(2, "x\ny");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "gemm");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  w.writeScope({3, 1, 0, 0});  // no name string: an empty NVTX message
  w.writeLaunch(launch(1, 2));
  w.writeKernel(kernel(1, 4));
  w.writeRange({10, 90, 2, 7, 7, 0});
  w.writeRange({5, 95, 1, 7, 7, 0});
  w.writeRange({96, 99, 3, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  CHECK(kc::displayPath(l.data, 2) == "a\\/b/x\\ny");
  CHECK(kc::displayPath(l.data, 3) == "a\\/b/(empty name)");

  const std::string t = table(l);
  CHECK(hasLine(t, "\na\\/b "));
  CHECK(hasLine(t, "\n  x\\ny "));
  CHECK(hasLine(t, "\n  (empty name) "));
  CHECK_FALSE(hasLine(t, "x\ny"));
  CHECK(hasLine(table(l, kc::SummaryView::kInclusive), "\na\\/b/x\\ny "));

  std::ostringstream csv;
  kc::printSummaryCsv(csv, l, true, kc::SummaryOptions{});
  CHECK(hasLine(csv.str(), ",a\\/b/x\\ny,"));
  CHECK(hasLine(csv.str(), ",a\\/b/(empty name),"));
  CHECK_FALSE(hasLine(csv.str(), "<scope"));

  const auto j = kc::summaryJson(l);
  bool raw = false;
  for (const auto& r : j["ranges"]) raw = raw || r["name"] == "x\ny";
  CHECK(raw);
}

TEST_CASE("range names that are not valid UTF-8: tables and summary CSV escape the bytes, CSV fields are UTF-8") {
  // Valid characters of 1 to 4 bytes are kept; what is not valid UTF-8 becomes one U+FFFD per maximal
  // invalid subpart (Unicode 15.0, section 3.9) in CSV and JSON, and "\xHH" per byte in text.
  const std::string fffd = "\xef\xbf\xbd";
  for (const char* valid : {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
    CHECK(kc::replaceInvalidUtf8(valid) == valid);
    CHECK(kc::displayName(valid) == valid);
  }
  CHECK(kc::replaceInvalidUtf8("\xff") == fffd);
  CHECK(kc::replaceInvalidUtf8("\xc0\xaf") == fffd + fffd);               // overlong '/': no subpart longer than 1
  CHECK(kc::replaceInvalidUtf8("\xed\xa0\x80") == fffd + fffd + fffd);    // surrogate
  CHECK(kc::replaceInvalidUtf8("\xe2\x82") == fffd);                       // cut short: one subpart of 2
  CHECK(kc::replaceInvalidUtf8("\xf0\x9f\x98") == fffd);                  // cut short: one subpart of 3
  CHECK(kc::replaceInvalidUtf8("\xf4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // past U+10FFFF
  CHECK(kc::replaceInvalidUtf8("\xe0\x80\xaf") == fffd + fffd + fffd);    // overlong, 3 bytes
  // Unicode 15.0, section 3.9, table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  CHECK(kc::replaceInvalidUtf8("a\xf1\x80\x80\xe1\x80\xc2" "b\x80" "c\x80\xbf" "d") ==
        "a" + fffd + fffd + fffd + "b" + fffd + "c" + fffd + fffd + "d");
  CHECK(kc::displayName("\xed\xa0\x80!") == "\\xed\\xa0\\x80!");
  CHECK(kc::displayText("\xf0\x9f\x98\xc3\xa9") == "\\xf0\\x9f\\x98\xc3\xa9");  // a cut character before a valid one
  CHECK(kc::displayName("caf\xe9") == "caf\\xe9");
  CHECK(kc::displayName("\xe2\x82/x") == "\\xe2\\x82\\/x");
  CHECK(kc::displayName("\xc3\xa9t\xc3\xa9") == "\xc3\xa9t\xc3\xa9");
  CHECK(kc::replaceInvalidUtf8("caf\xe9!") == "caf\xef\xbf\xbd!");
  CHECK(kc::replaceInvalidUtf8("\xe2\x82" "A\xff") == "\xef\xbf\xbd" "A\xef\xbf\xbd");
  // CSV writes such bytes as the text tables do, "\xHH" (was U+FFFD, which made different names equal).
  CHECK(kc::csvField("k\xff,x") == "\"k\\xff,x\"");
  CHECK(kc::csvField("k\xfe") != kc::csvField("k\xff"));
  CHECK(kc::escapeInvalidUtf8("caf\xe9") == "caf\\xe9");
  CHECK(kc::escapeInvalidUtf8("a\\b\n\xe2\x82") == "a\\b\n\\xe2\\x82");  // only the invalid bytes
  CHECK(kc::escapeInvalidUtf8("\xc3\xa9t\xc3\xa9") == "\xc3\xa9t\xc3\xa9");
  CHECK(kc::csvField("plain") == "plain");

  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "caf\xe9");  // Latin-1, not UTF-8
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "gemm");
  w.writeScope({1, 0, 1, 0});
  w.writeLaunch(launch(1, 1));
  w.writeKernel(kernel(1, 4));
  w.writeRange({10, 90, 1, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  const std::string t = table(l);
  CHECK(hasLine(t, "\ncaf\\xe9 "));
  CHECK(t.find("caf\xe9") == std::string::npos);
  std::ostringstream csv;
  kc::printSummaryCsv(csv, l, true, kc::SummaryOptions{});
  CHECK(hasLine(csv.str(), ",caf\\xe9,"));
  CHECK(csv.str().find("caf\xe9") == std::string::npos);
  const std::string j = kc::dumpJson(kc::summaryJson(l));
  CHECK(j.find("caf\xef\xbf\xbd") != std::string::npos);  // JSON: U+FFFD for the byte
}

TEST_CASE("an empty range name: JSON path and name keep \"\", the scope id is in scope_id") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "outer");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "gemm");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 0, 0});  // empty NVTX message: name id 0 (kNoString, "")
  w.writeScope({3, 0, 0, 0});  // empty top-level range
  w.writeLaunch(launch(1, 2));
  w.writeKernel(kernel(1, 4));
  w.writeRange({10, 90, 2, 7, 7, 0});
  w.writeRange({5, 95, 1, 7, 7, 0});
  w.writeRange({96, 99, 3, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  CHECK(l.data.scopePath(2) == "outer/");
  CHECK(l.data.scopePath(3) == "");
  const auto j = kc::summaryJson(l);
  bool inner = false, top = false;
  for (const auto& r : j["ranges"]) {
    CHECK(r["path"].get<std::string>().find("<scope") == std::string::npos);
    if (r["scope_id"] == 2) inner = r["path"] == "outer/" && r["name"] == "";
    if (r["scope_id"] == 3) top = r["path"] == "" && r["name"] == "" && r["depth"] == 1;
  }
  CHECK(inner);
  CHECK(top);
  CHECK(hasLine(table(l), "\n  (empty name) "));
}

TEST_CASE("JSON parent_scope_id tells \"a/b\" at the top level from b inside a, whose paths are equal") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "a");
  w.writeString(2, "b");
  w.writeString(5, "a/b");
  w.writeScope({1, 0, 1, 0});  // a
  w.writeScope({2, 1, 2, 0});  // a -> b
  w.writeScope({3, 0, 5, 0});  // "a/b" at the top level
  w.writeRange({5, 95, 1, 7, 7, 0});
  w.writeRange({10, 90, 2, 7, 7, 0});
  w.writeRange({96, 99, 3, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const auto j = kc::summaryJson(loaded(sink.bytes));
  std::map<uint32_t, nlohmann::json> by_id;
  for (const auto& r : j["ranges"])
    if (!r["scope_id"].is_null()) by_id[r["scope_id"].get<uint32_t>()] = r;
  REQUIRE(by_id.size() == 4);
  CHECK(by_id[0]["parent_scope_id"].is_null());  // (no range)
  CHECK(by_id[1]["parent_scope_id"] == 0);
  CHECK(by_id[2]["path"] == "a/b");
  CHECK(by_id[3]["path"] == "a/b");
  CHECK(by_id[2]["parent_scope_id"] == 1);
  CHECK(by_id[3]["parent_scope_id"] == 0);
}

TEST_CASE("kernels table: at most three ranges per kernel, all in CSV/JSON; several logs get a log column") {
  auto logWith = [](const std::string& pid, int ranges) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    w.writeMetadata("pid", pid);
    w.writeString(1, "gemm");
    w.writeString(3, "cudaLaunchKernel");
    for (int i = 0; i < ranges; ++i) {
      const uint32_t id = static_cast<uint32_t>(10 + i);
      w.writeString(id, "r" + std::to_string(i));
      w.writeScope({id, 0, id, 0});
      // range i gets i + 1 kernels: r4 is the most frequent
      for (int n = 0; n <= i; ++n) {
        const uint64_t corr = static_cast<uint64_t>(100 * i + n + 1);
        w.writeLaunch(launch(corr, id));
        w.writeKernel(kernel(corr, 1));
      }
    }
    w.writeEnd();
    w.flush();
    return loaded(sink.bytes, "run-" + pid + ".kcount");
  };
  const std::vector<kc::LoadedLog> one{logWith("11", 5)};
  std::ostringstream t;
  kc::printKernelsTable(t, one, false);
  CHECK(hasLine(t.str(), "r4 ×5, r3 ×4, r2 ×3, +2 more"));
  CHECK_FALSE(hasLine(t.str(), "r0 ×1"));
  CHECK_FALSE(hasLine(t.str(), "\nlog "));
  std::ostringstream csv;
  kc::printKernelsCsv(csv, one, false);
  CHECK(hasLine(csv.str(), R"("{""r4"":5,""r3"":4,""r2"":3,""r1"":2,""r0"":1}")"));
  CHECK(kc::kernelsJson(one)["kernels"][0]["ranges"].size() == 5);

  const std::vector<kc::LoadedLog> two{logWith("11", 5), logWith("22", 2)};
  std::ostringstream t2;
  kc::printKernelsTable(t2, two, false);
  // Labelled by file name (run-11.kcount, run-22.kcount), not by pid.
  CHECK(hasLine(t2.str(), "log     kernel"));
  CHECK(hasLine(t2.str(), "\nrun-11  gemm       15"));
  CHECK(hasLine(t2.str(), "\nrun-22  gemm        3"));
  std::ostringstream csv2;
  kc::printKernelsCsv(csv2, two, false);
  CHECK(hasLine(csv2.str(), "\nrun-11.kcount,gemm,gemm,15,"));
  CHECK(hasLine(csv2.str(), "\nrun-22.kcount,gemm,gemm,3,"));
  const auto j = kc::kernelsJson(two);
  CHECK(j["kernels"][0]["count"] == 18);  // merged by name
  REQUIRE(j["kernels"][0]["per_log"].size() == 2);
  CHECK(j["kernels"][0]["per_log"][1]["log"] == "run-22");
  CHECK(j["kernels"][0]["per_log"][1]["count"] == 3);
}

TEST_CASE("kernels JSON: grid and block as the table shows them, those of the first record of the name") {
  // "gemm" ran with grid 128 and block 256, then with grid 64 and block 32 (pid 11); once more with grid 7
  // (pid 22).
  auto logWith = [](const std::string& pid, std::vector<int32_t> grids) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    w.writeMetadata("pid", pid);
    stepDefinitions(w);
    for (size_t i = 0; i < grids.size(); ++i) {
      kc::KernelBody k = kernel(i + 1, 2);
      k.grid[0] = grids[i];
      if (i > 0) k.block[0] = 32;
      w.writeLaunch(launch(i + 1, 1));
      w.writeKernel(k);
    }
    w.writeEnd();
    w.flush();
    return loaded(sink.bytes, "run-" + pid + ".kcount");
  };
  const std::vector<kc::LoadedLog> one{logWith("11", {128, 64})};
  std::ostringstream t;
  kc::printKernelsTable(t, one, false);
  CHECK(hasLine(t.str(), "128x0x0 (1 of 2)  256x0x0 (1 of 2)"));  // the first record's, of two
  const auto j = kc::kernelsJson(one);
  CHECK(j["kernels"][0]["grid"] == nlohmann::json::array({128, 0, 0}));
  CHECK(j["kernels"][0]["block"] == nlohmann::json::array({256, 0, 0}));
  CHECK_FALSE(j["kernels"][0].contains("per_log"));

  // Several logs: merged, the first log's; per log, each log's own (the table's rows of each log).
  const std::vector<kc::LoadedLog> two{logWith("22", {7}), logWith("11", {128, 64})};
  const auto j2 = kc::kernelsJson(two);
  CHECK(j2["kernels"][0]["grid"] == nlohmann::json::array({7, 0, 0}));
  REQUIRE(j2["kernels"][0]["per_log"].size() == 2);
  CHECK(j2["kernels"][0]["per_log"][0]["grid"] == nlohmann::json::array({7, 0, 0}));
  CHECK(j2["kernels"][0]["per_log"][1]["grid"] == nlohmann::json::array({128, 0, 0}));
  CHECK(j2["kernels"][0]["per_log"][1]["block"] == nlohmann::json::array({256, 0, 0}));
}

TEST_CASE("kernels: a name that ran with several grids or blocks is marked, and its distinct ones counted") {
  // "gemm" with grids 128, 64, 128 and blocks 256, 32, 32 (pid 11); with grid 7, 8, ..., 26 (pid 22); "relu"
  // always with one grid and block.
  auto logWith = [](const std::string& pid, std::vector<int32_t> grids) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    w.writeMetadata("pid", pid);
    stepDefinitions(w);
    w.writeString(4, "relu");
    uint64_t corr = 0;
    for (size_t i = 0; i < grids.size(); ++i) {
      kc::KernelBody k = kernel(++corr, 2);
      k.grid[0] = grids[i];
      k.block[0] = i == 0 ? 256 : 32;
      w.writeLaunch(launch(corr, 1));
      w.writeKernel(k);
      w.writeLaunch(launch(++corr, 1));
      w.writeKernel(kernel(corr, 4));
    }
    w.writeEnd();
    w.flush();
    return loaded(sink.bytes, "run-" + pid + ".kcount");
  };
  const std::vector<kc::LoadedLog> one{logWith("11", {128, 64, 128})};
  std::ostringstream t;
  kc::printKernelsTable(t, one, false);
  CHECK(hasLine(t.str(), "128x0x0 (1 of 2)  256x0x0 (1 of 2)"));
  CHECK(hasLine(t.str(), "grid, block 'AxBxC (1 of N)': the first record's, of N different ones"));
  CHECK(hasLine(t.str(), "  128x0x0           256x0x0  "));  // relu: one grid, one block, no mark
  CHECK_FALSE(hasLine(t.str(), "(1 of 1)"));
  std::ostringstream csv;
  kc::printKernelsCsv(csv, one, false);
  // The columns of before keep their places; the counts end the row.
  CHECK(hasLine(csv.str(), "epilogue,fused_ops,distinct_grids,distinct_blocks\n"));
  CHECK(hasLine(csv.str(), "\nrun-11.kcount,gemm,gemm,3,165,128,0,0,256,0,0,\"{\"\"step\"\":3}\","));
  CHECK(hasLine(csv.str(), ",2,2\n"));
  CHECK(hasLine(csv.str(), "\nrun-11.kcount,relu,relu,3,165,128,0,0,256,0,0,\"{\"\"step\"\":3}\","));
  CHECK(hasLine(csv.str(), ",1,1\n"));
  const auto j = kc::kernelsJson(one);
  REQUIRE(j["kernels"].size() == 2);
  const auto& gemm = j["kernels"][0]["name"] == "gemm" ? j["kernels"][0] : j["kernels"][1];
  const auto& relu = j["kernels"][0]["name"] == "gemm" ? j["kernels"][1] : j["kernels"][0];
  CHECK(gemm["grid"] == nlohmann::json::array({128, 0, 0}));
  CHECK(gemm["distinct_grids"] == 2);
  CHECK(gemm["distinct_blocks"] == 2);
  CHECK(relu["distinct_grids"] == 1);
  CHECK(relu["distinct_blocks"] == 1);

  // Counting stops at 16: 20 grids are "16+"; two logs: the union of their grids, per log each its own.
  std::vector<int32_t> many;
  for (int32_t g = 7; g < 27; ++g) many.push_back(g);
  const std::vector<kc::LoadedLog> two{logWith("22", many), logWith("11", {128, 64, 128})};
  std::ostringstream t2;
  kc::printKernelsTable(t2, two, false);
  CHECK(hasLine(t2.str(), "7x0x0 (1 of 16+)  256x0x0 (1 of 2)"));
  CHECK(hasLine(t2.str(), "128x0x0 (1 of 2)  256x0x0 (1 of 2)"));
  const auto j2 = kc::kernelsJson(two);
  const auto& g2 = j2["kernels"][0]["name"] == "gemm" ? j2["kernels"][0] : j2["kernels"][1];
  CHECK(g2["distinct_grids"] == 16);
  CHECK(g2["distinct_blocks"] == 2);
  REQUIRE(g2["per_log"].size() == 2);
  CHECK(g2["per_log"][0]["distinct_grids"] == 16);
  CHECK(g2["per_log"][1]["distinct_grids"] == 2);
  const std::vector<kc::LoadedLog> small{logWith("22", {64, 5}), logWith("11", {128, 64, 128})};
  const auto j3 = kc::kernelsJson(small);
  const auto& g3 = j3["kernels"][0]["name"] == "gemm" ? j3["kernels"][0] : j3["kernels"][1];
  CHECK(g3["distinct_grids"] == 3);  // 64, 5, 128

  // The HTML report's data: the distinct grids and blocks, the first record's first.
  const auto h = kc::htmlReportData(one);
  bool seen = false;
  for (const auto& k : h["runs"][0]["kernels"])
    if (k["name"] == "gemm") {
      seen = true;
      CHECK(k["grids"] == nlohmann::json::parse("[[128,0,0],[64,0,0]]"));
      CHECK(k["blocks"] == nlohmann::json::parse("[[256,0,0],[32,0,0]]"));
    }
  CHECK(seen);
}

TEST_CASE("DistinctDims: counts distinct dimensions up to 16, merges as a union") {
  kc::DistinctDims a, b;
  a.add({1, 1, 1});
  a.add({1, 1, 1});
  a.add({2, 1, 1});
  CHECK(a.size() == 2);
  CHECK_FALSE(a.full());
  for (int32_t i = 0; i < 30; ++i) b.add({i, 1, 1});
  CHECK(b.size() == 16);
  CHECK(b.full());
  kc::DistinctDims c = a;
  c.merge(a);
  CHECK(c.size() == 2);
  c.merge(b);
  CHECK(c.full());
  kc::DistinctDims d;
  d.add({3, 1, 1});
  d.merge(a);
  CHECK(d.size() == 3);
}

TEST_CASE("kernels table: different kernels get different names, also when they differ only near the end") {
  // 12 kernels whose names (longer than the short-name cut) differ only in their last characters, as cuBLAS
  // template instances do (`..., true, false, false, false>` against `..., true, true, false, false>`), and
  // two recorded demangled whose short names are equal (they differ in a nested template argument).
  const std::string head = "cublasLt::splitKreduce_kernel_" + std::string(110, 'x') + "_";
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) names.push_back(head + std::to_string(100 + i));
  names.push_back("void ns::k<ns::Vec<float, 4> >(int)");
  names.push_back("void ns::k<ns::Vec<double, 4> >(int)");
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  stepDefinitions(w);
  for (size_t i = 0; i < names.size(); ++i) {
    const auto id = static_cast<uint32_t>(10 + i);
    w.writeString(id, names[i]);
    w.writeLaunch(launch(i + 1, 1));
    w.writeKernel(kernel(i + 1, id));
  }
  w.writeEnd();
  w.flush();
  const std::vector<kc::LoadedLog> one{loaded(sink.bytes, "run.kcount")};
  auto shownNames = [&](const std::vector<kc::LoadedLog>& logs, size_t column) {
    std::ostringstream out;
    kc::printKernelsTable(out, logs, false);
    std::istringstream in(out.str());
    std::vector<std::string> shown;
    std::string line;
    std::getline(in, line);  // heading
    std::getline(in, line);  // rule
    while (std::getline(in, line) && !line.starts_with("-:")) {
      // Cells are separated by two spaces or more; a name holds single spaces at most.
      std::vector<std::string> cells;
      for (size_t at = 0; at < line.size();) {
        const size_t gap = line.find("  ", at);
        cells.push_back(line.substr(at, gap == std::string::npos ? std::string::npos : gap - at));
        at = gap == std::string::npos ? line.size() : line.find_first_not_of(' ', gap);
      }
      REQUIRE(cells.size() > column);
      shown.push_back(cells[column]);
    }
    return shown;
  };
  const std::vector<std::string> shown = shownNames(one, 0);
  REQUIRE(shown.size() == names.size());
  CHECK(std::set<std::string>(shown.begin(), shown.end()).size() == names.size());
  for (const auto& s : shown) CHECK(kc::displayWidth(s) < 100);  // still shortened in the middle
  // Several logs: the same kernel has the same name in every log's rows, different kernels different ones.
  const std::vector<kc::LoadedLog> two{loaded(sink.bytes, "a/run.kcount"), loaded(sink.bytes, "b/run.kcount")};
  const std::vector<std::string> shown2 = shownNames(two, 1);
  REQUIRE(shown2.size() == 2 * names.size());
  CHECK(std::set<std::string>(shown2.begin(), shown2.end()).size() == names.size());
  // The kernels section of diff shows them as the kernels table does.
  std::ostringstream diff;
  kc::printDiff(diff, one, one);
  std::set<std::string> in_diff;
  std::istringstream lines(diff.str());
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("  same  ")) continue;
    const size_t name_at = line.find_first_not_of(' ', line.find("  ", line.find_first_not_of(' ', 8)));
    in_diff.insert(line.substr(name_at, line.find("  ", name_at) - name_at));
  }
  CHECK(in_diff == std::set<std::string>(shown.begin(), shown.end()));
}

TEST_CASE("a rotated run given in part is PARTIAL, with what is missing named; check needs the next part too") {
  // Part 0 alone, closed for rotation (continued in part 1): partial, not damaged.
  kc::LoadedLog part0;
  part0.path = "r.kcount";
  part0.data.complete = false;
  part0.data.metadata = {{kc::kMetaContinuedIn, "1"}};
  CHECK(kc::partialRunText(part0.data) ==
        "rotated run continues in part 1 (not given): the numbers cover part 0 only (give every part to read the run)");
  CHECK(kc::logState(part0) == "rotated part");
  CHECK(kc::logStateWarning(part0).starts_with("rotated run continues in part 1 (not given)"));
  std::ostringstream alone, with_next;
  CHECK(kc::printCheck(alone, part0) == 1);
  CHECK(alone.str().find("PARTIAL: rotated part 0, continued in part 1 (not given)") != std::string::npos);
  CHECK(kc::printCheck(with_next, part0, kc::PartsGiven{false, true}) == 0);
  CHECK(with_next.str().find("OK: rotated part 0, continued in part 1 (given too") != std::string::npos);

  // Parts 0..1 joined, the last continued in part 2.
  kc::LogData joined;
  joined.complete = false;
  joined.parts = 2;
  joined.joined_parts = {0, 1};
  joined.metadata = {{kc::kMetaContinuedIn, "2"}};
  CHECK(kc::partialRunText(joined).starts_with(
      "rotated run continues in part 2 (not given): the numbers cover parts 0..1 only"));
  // A gap: parts 0 and 2, the last complete.
  kc::LogData gap;
  gap.complete = true;
  gap.parts = 2;
  gap.joined_parts = {0, 2};
  CHECK(kc::partialRunText(gap).starts_with("rotated run: part 1 not given: the numbers cover parts 0, 2 only"));
  // A whole run, and a log never rotated: not partial.
  kc::LogData whole;
  whole.complete = true;
  whole.parts = 3;
  whole.joined_parts = {0, 1, 2};
  CHECK(kc::partialRunText(whole).empty());
  CHECK(kc::partialRunText(kc::LogData{}).empty());
}

TEST_CASE("a rotated part without metadata, given, is read as its part by its name, not as a part not given") {
  // Part 0 closed for rotation; part 1's first chunk (which repeats the metadata) was kept out at the cap,
  // so it holds no identity and no part number: only its final chunk.
  kc::LogData p0, p1;
  p0.metadata = {{"host", "h"}, {"pid", "7"}, {"start_ns", "99"}, {kc::kMetaContinuedIn, "1"}};
  p1.complete = true;
  const std::vector<std::string> paths{"d/rot.1.kcount", "d/rot.kcount"};
  const auto groups = kc::groupRotatedParts(paths, {p1, p0});
  REQUIRE(groups.size() == 1);
  CHECK(groups[0] == std::vector<std::string>{"d/rot.kcount", "d/rot.1.kcount"});
  const kc::LogData joined = kc::joinRotatedParts({p0, p1}, {"d/rot.kcount", "d/rot.1.kcount"});
  CHECK(joined.joined_parts == std::vector<uint32_t>{0, 1});
  CHECK(kc::partialRunText(joined).empty());
  bool named = false;
  for (const auto& i : joined.issues) named = named || i.message.find("read as part 1 of the run of d/rot.kcount") != std::string::npos;
  CHECK(named);
  // check: part 0's next part is given.
  kc::LogData c0 = p0, c1 = p1;
  kc::adoptUnnamedParts({"d/rot.kcount", "d/rot.1.kcount"}, {&c0, &c1});
  CHECK(c1.rotationPart() == 1);
  CHECK(kc::partsGiven(std::vector<const kc::LogData*>{&c0, &c1})[0].next);
  // Not adopted: another run's name, or a name that is not a part's.
  kc::LogData o1 = p1, o2 = p1;
  kc::adoptUnnamedParts({"d/rot.kcount", "d/other.1.kcount", "d/rot.x.kcount"}, {&c0, &o1, &o2});
  CHECK(o1.rotationPart() == 0);
  CHECK(o2.rotationPart() == 0);
}

TEST_CASE("text helpers: counted() singular for 1; percentChange() never -0%; means rounded half up") {
  CHECK(kc::counted(0, "kernel") == "0 kernels");
  CHECK(kc::counted(1, "kernel") == "1 kernel");
  CHECK(kc::counted(2, "launch", "launches") == "2 launches");
  CHECK(kc::counted(1, "launch", "launches") == "1 launch");
  CHECK(kc::plural(1, "tally", "tallies") == "tally");
  CHECK(kc::plural(7, "tally", "tallies") == "tallies");

  CHECK(kc::percentChange(1000, 1000) == "0%");
  CHECK(kc::percentChange(0, 0) == "0%");
  CHECK(kc::percentChange(0, 5) == "new");
  CHECK(kc::percentChange(1000, 999) == "-0.1%");    // was "-0%"
  CHECK(kc::percentChange(1000, 1004) == "+0.4%");   // was "+0%"
  CHECK(kc::percentChange(100000, 99999) == "<0.1%");
  CHECK(kc::percentChange(100000, 100001) == "<0.1%");
  CHECK(kc::percentChange(1000, 990) == "-1%");
  CHECK(kc::percentChange(1000, 1500) == "+50%");
  CHECK(kc::percentChange(1000, 0) == "-100%");
  CHECK(kc::percentChange(1000, 9990) == "+899%");
  CHECK(kc::percentChange(1000, 10000) == "×10.0");  // ten times and more: a factor
  CHECK(kc::percentChange(13600, 68500000) == "×5037");  // 13.6 us -> 68.5 ms (+503576%)
  // One decimal below 100, judged after rounding: 99.949 is not "×100".
  CHECK(kc::percentChange(1000, 99949) == "×99.9");  // was "×100"
  CHECK(kc::percentChange(1000, 99500) == "×99.5");
  CHECK(kc::percentChange(1000, 99960) == "×100");  // rounds to 100.0: whole
  CHECK(kc::percentChange(1000, 100000) == "×100");
  for (uint64_t b = 900; b <= 1100; ++b) {
    const std::string p = kc::percentChange(1000, b);
    CHECK_MESSAGE(p != "-0%", b);
    CHECK_MESSAGE(p != "+0%", b);
    CHECK_MESSAGE(p != "-0.0%", b);
    CHECK_MESSAGE(p != "+0.0%", b);
  }

  CHECK(kc::roundedMean(83, 2) == 42);  // 41.5 rounds up
  CHECK(kc::roundedMean(82, 2) == 41);
  CHECK(kc::roundedMean(100, 3) == 33);
  CHECK(kc::roundedMean(101, 3) == 34);
  CHECK(kc::roundedMean(5, 0) == 0);
  CHECK(kc::roundedMean(UINT64_MAX, 2) == UINT64_MAX / 2 + 1);  // no overflow
  CHECK(kc::formatMeanDuration(83, 2) == "42 ns");
  CHECK(kc::formatMeanDuration(2999999, 2) == "1.50 ms");
  // The verdict divides its sums the same way.
  CHECK(kc::layerVerdict(kernelRange(2, 1600, 1000, 83, 2, 2)) ==
        "launch-bound: 500 ns of launch calls for 42 ns of GPU work per instance");
}

TEST_CASE("displayText: kernel names escaped for text like range names, '/' and '\\' kept") {
  CHECK(kc::displayText("nvjet_sm90_tst_256x128") == "nvjet_sm90_tst_256x128");
  CHECK(kc::displayText("a/b\\c") == "a/b\\c");
  CHECK(kc::displayText("caf\xe9_kernel") == "caf\\xe9_kernel");
  CHECK(kc::displayText("k\x01\n\t") == "k\\x01\\n\\t");
  CHECK(kc::displayText("µs … ok") == "µs … ok");  // valid UTF-8 unchanged
  CHECK(kc::displayText("") == "");
  CHECK(kc::displayName("caf\xe9/x") == "caf\\xe9\\/x");  // range names: '/' escaped too, as before
}

TEST_CASE("kernels: rows by GPU total time by default; --sort count, avg and name; table, CSV and JSON alike") {
  // Kernels with (launches, ns each): many_short (6, 10), few_long (1, 500), mid (3, 100), alpha (2, 30).
  // GPU totals 60, 500, 300, 60: alpha ties many_short and goes after it (fewer launches).
  auto logWith = [](const std::string& pid, uint64_t scale) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    w.writeMetadata("pid", pid);
    w.writeString(1, "step");
    w.writeString(3, "cudaLaunchKernel");
    w.writeScope({1, 0, 1, 0});
    const std::vector<std::tuple<uint32_t, std::string, int, uint64_t>> ks{
        {10, "many_short", 6, 10}, {11, "few_long", 1, 500}, {12, "mid", 3, 100}, {13, "alpha", 2, 30}};
    uint64_t corr = 0;
    for (const auto& [id, name, n, ns] : ks) {
      w.writeString(id, name);
      for (int i = 0; i < n; ++i) {
        ++corr;
        w.writeLaunch(launch(corr, 1));
        kc::KernelBody k = kernel(corr, id);
        k.end_ns = k.start_ns + ns * scale;
        w.writeKernel(k);
      }
    }
    w.writeRange({1, 1000000, 1, 7, 7, 0});
    w.writeEnd();
    w.flush();
    return loaded(sink.bytes, "run-" + pid + ".kcount");
  };
  const std::vector<kc::LoadedLog> one{logWith("11", 1)};
  // Names in the order a text appears to list them (each name once, by its first position).
  auto order = [](const std::string& text) {
    std::vector<std::pair<size_t, std::string>> at;
    for (const char* n : {"many_short", "few_long", "mid", "alpha"}) {
      const size_t p = text.find(std::string(n) + (text.find(",mid,") != std::string::npos ? "," : " "));
      if (p != std::string::npos) at.emplace_back(p, n);
    }
    std::sort(at.begin(), at.end());
    std::vector<std::string> out;
    for (const auto& [_, n] : at) out.push_back(n);
    return out;
  };
  auto jsonOrder = [](const nlohmann::json& j) {
    std::vector<std::string> out;
    for (const auto& k : j["kernels"]) out.push_back(k["name"].get<std::string>());
    return out;
  };
  using V = std::vector<std::string>;
  const std::vector<std::pair<kc::KernelSort, V>> cases{
      {kc::KernelSort::kGpuTotal, V{"few_long", "mid", "many_short", "alpha"}},
      {kc::KernelSort::kCount, V{"many_short", "mid", "alpha", "few_long"}},
      {kc::KernelSort::kGpuAvg, V{"few_long", "mid", "alpha", "many_short"}},
      {kc::KernelSort::kName, V{"alpha", "few_long", "many_short", "mid"}}};
  for (const auto& [sort, want] : cases) {
    const std::string sort_name(kc::kernelSortName(sort));
    CAPTURE(sort_name);
    std::ostringstream t, csv;
    kc::printKernelsTable(t, one, false, sort);
    kc::printKernelsCsv(csv, one, false, sort);
    CHECK(order(t.str()) == want);
    CHECK(order(csv.str()) == want);
    const auto j = kc::kernelsJson(one, sort);
    CHECK(jsonOrder(j) == want);
    CHECK(j["sort"] == sort_name);
    CHECK((kc::parseKernelSort(sort_name) == sort));
  }
  // The default is GPU total time.
  std::ostringstream t;
  kc::printKernelsTable(t, one, false);
  CHECK(order(t.str()) == cases[0].second);
  CHECK(jsonOrder(kc::kernelsJson(one)) == cases[0].second);
  CHECK_FALSE(kc::parseKernelSort("time").has_value());
  // Several logs: kernels in the order of their GPU time over all logs, each kernel's rows together.
  const std::vector<kc::LoadedLog> two{logWith("11", 1), logWith("22", 2)};
  std::ostringstream t2;
  kc::printKernelsTable(t2, two, false);
  CHECK(order(t2.str()) == cases[0].second);
  CHECK(t2.str().find("run-22  few_long") < t2.str().find("run-11  mid"));
}

namespace {

/// The verdict line of `path` under a summary table ("  path: verdict..."), without the "  path: ".
std::string verdictLine(const std::string& text, const std::string& path) {
  const std::string key = "\n  " + path + ": ";
  const size_t at = text.find(key);
  if (at == std::string::npos) return {};
  const size_t from = at + key.size();
  return text.substr(from, text.find('\n', from) - from);
}

/// A memcpy/memset API call (flag kLaunchMemOp) in `scope`, and the operation it ran on the GPU.
void writeMemCall(kc::LogWriter& w, uint64_t corr, uint32_t scope, kc::MemOpKind kind, uint64_t start, uint64_t ns) {
  kc::LaunchBody l = launch(corr, scope);
  l.flags = kc::kLaunchMemOp;
  w.writeLaunch(l);
  kc::MemOpBody m{};
  m.correlation_id = corr;
  m.start_ns = start;
  m.end_ns = start + ns;
  m.bytes = 4096;
  m.kind = static_cast<uint8_t>(kind);
  m.copy_kind = kind == kc::MemOpKind::kMemcpy ? 1 : 0;
  w.writeMemOp(m);
}

}  // namespace

TEST_CASE("summary --metric and --sort words: one per AcrossMetric, read back by parseAcrossMetric") {
  std::vector<std::string> words;
  for (kc::AcrossMetric m : kc::kAcrossMetrics) {
    words.emplace_back(kc::acrossMetricName(m));
    CHECK((kc::parseAcrossMetric(words.back()) == m));
  }
  CHECK(words == std::vector<std::string>{"gpu", "kernels", "launches", "cpu", "launch-cpu"});
  CHECK_FALSE(kc::parseAcrossMetric("run").has_value());  // --sort run: the run order, no metric
  CHECK_FALSE(kc::parseAcrossMetric("size").has_value());
}

TEST_CASE("verdict: memory copies and memsets are GPU work; memcpy calls are not launch calls") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "copy");
  w.writeString(2, "mix");
  w.writeString(3, "gemm");
  w.writeString(4, "cudaLaunchKernel");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 0, 2, 0});
  // "copy": one memcpy (3 µs) and one memset (500 ns) on the GPU, no kernel, in 20 µs.
  writeMemCall(w, 1, 1, kc::MemOpKind::kMemcpy, 1000, 3000);
  writeMemCall(w, 2, 1, kc::MemOpKind::kMemset, 5000, 500);
  w.writeRange({10, 20010, 1, 7, 7, 0});
  // "mix": a kernel (55 ns, its launch call 7 ns) and a copy of 100 ns in 100 ns: GPU-bound with the copy.
  w.writeLaunch(launch(3, 2));
  w.writeKernel(kernel(3, 3));
  writeMemCall(w, 4, 2, kc::MemOpKind::kMemcpy, 4000, 100);
  w.writeRange({30000, 30100, 2, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  const std::string t = table(l);
  CHECK(verdictLine(t, "copy") ==
        "CPU-bound: 20.0 µs in the range for 3.50 µs of GPU work (memory copies and memsets; no kernel launch calls)");
  CHECK(verdictLine(t, "mix").starts_with("GPU-bound: 155 ns of GPU work (kernels and memory copies) in 100 ns of range time"));
  CHECK(t.find("no GPU work") == std::string::npos);
  const nlohmann::json j = kc::summaryJson(l);
  CHECK(j["ranges"][1]["path"] == "copy");
  CHECK(j["ranges"][1]["verdict"] == verdictLine(t, "copy"));
  CHECK(j["ranges"][1]["layers"]["innermost"]["verdict"] == verdictLine(t, "copy"));

  // The rule, on its inputs: the memcpy calls' CPU time is not launch CPU; a copy's GPU time can make a
  // range that launch calls would dominate CPU-bound (60 ns of launch calls, 20 ns of kernels + 50 ns of copies).
  kc::VerdictInputs v;
  v.instances = 1;
  v.cpu_ns = 100;
  v.launch_api_ns = 60;
  v.launches = 1;
  v.kernels = 1;
  v.kernel_gpu_ns = 20;
  CHECK(kc::layerVerdict(v).starts_with("launch-bound: 60 ns of launch calls for 20 ns of GPU work"));
  v.memcpy_count = 1;
  v.mem_gpu_ns = 50;
  CHECK(kc::layerVerdict(v) ==
        "CPU-bound: 100 ns in the range for 70 ns of GPU work (kernels and memory copies; 60 ns in launch calls)");
  v.memset_count = 2;
  v.mem_gpu_ns = 90;
  CHECK(kc::layerVerdict(v) == "GPU-bound: 110 ns of GPU work (kernels, memory copies and memsets) in 100 ns of range time");
  // Memory operations under 1% of the GPU work are counted in it without a word.
  v.memcpy_count = 0;
  v.memset_count = 1;
  v.kernel_gpu_ns = 100000;
  v.mem_gpu_ns = 990;
  v.cpu_ns = 1000000;
  v.launch_api_ns = 600000;
  v.launches = 100;
  v.kernels = 100;
  CHECK(kc::layerVerdict(v) == "launch-bound: 600 µs of launch calls for 101 µs of GPU work");
  v.mem_gpu_ns = 1020;
  CHECK(kc::layerVerdict(v) == "launch-bound: 600 µs of launch calls for 101 µs of GPU work (kernels and memsets)");
  // Copies only, in a log whose launch CPU is sampled: no launch call to estimate, none named.
  kc::VerdictInputs copies;
  copies.instances = 1;
  copies.cpu_ns = 9000;
  copies.memcpy_count = 2;
  copies.mem_gpu_ns = 3000;
  copies.launch_timing_sample = 16;
  CHECK(kc::layerVerdict(copies) == "CPU-bound: 9.00 µs in the range for 3.00 µs of GPU work (memory copies; no kernel "
                                    "launch calls)");
  // No kernel, no copy, no launch: no GPU work.
  kc::VerdictInputs none;
  none.instances = 2;
  none.cpu_ns = 4000;
  CHECK(kc::layerVerdict(none) == "no GPU work: 2.00 µs in the range per instance");
}

TEST_CASE("verdict under --view innermost: a parent whose work is in its child ranges gets its inclusive verdict") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "step");
  w.writeString(2, "mm");
  w.writeString(3, "gemm");
  w.writeString(4, "idle");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});  // step/mm
  w.writeScope({3, 0, 4, 0});  // idle: no GPU work at all
  w.writeLaunch(launch(1, 2));
  w.writeKernel(kernel(1, 3));
  w.writeRange({100, 200, 2, 7, 7, 0});
  w.writeRange({0, 1000, 1, 7, 7, 0});
  w.writeRange({2000, 2500, 3, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  const std::string tree = table(l), inner = table(l, kc::SummaryView::kInnermost);
  const std::string step = "CPU-bound: 1.00 µs in the range for 55 ns of GPU work (7 ns in launch calls)";
  CHECK(verdictLine(tree, "step") == step);  // the default view: unchanged
  CHECK(verdictLine(inner, "step") == "with its child ranges: " + step);
  CHECK(verdictLine(inner, "step/mm").starts_with("CPU-bound: 100 ns in the range for 55 ns"));
  CHECK(verdictLine(inner, "step/mm") == verdictLine(tree, "step/mm"));  // a leaf: its own numbers
  CHECK(verdictLine(inner, "step/mm").find("child") == std::string::npos);
  CHECK(verdictLine(inner, "idle") == "no GPU work: 500 ns in the range");
  CHECK(inner.find("step: no GPU work") == std::string::npos);
  const nlohmann::json j = kc::summaryJson(l);
  CHECK(j["ranges"][1]["path"] == "step");
  CHECK(j["ranges"][1]["verdict"] == step);
  CHECK(j["ranges"][1]["layers"]["inclusive"]["verdict"] == step);
  CHECK(j["ranges"][1]["layers"]["innermost"]["verdict"] == "with its child ranges: " + step);
  // The inclusive view (flat paths) reads like the tree view.
  CHECK(verdictLine(table(l, kc::SummaryView::kInclusive), "step") == step + "; top: gemm ×1");
}

TEST_CASE("verdict under --graph-view capture: graph launches and replayed kernels are not weighed against each other") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "cap");
  w.writeString(2, "rep");
  w.writeString(3, "add_kernel");
  w.writeString(4, "cudaLaunchKernel");
  w.writeString(5, "warm");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 0, 2, 0});
  w.writeScope({3, 0, 5, 0});
  // "cap" captures one kernel launch into a graph (node 77); "rep" launches the graph once (8 µs call),
  // which runs the kernel as node 88, a clone of 77.
  kc::LaunchBody captured = launch(1, 1);
  captured.flags = kc::kLaunchCaptured;
  w.writeLaunch(captured);
  w.writeGraphNode({77, 0, 1, 1, 1, 4242, 0});
  w.writeGraphNode({88, 77, 0, 2, 0, 4242, 0});
  w.writeRange({0, 10000, 1, 7, 7, 0});
  kc::LaunchBody graph = launch(2, 2);
  graph.is_graph_launch = 1;
  graph.enter_ns = 20500;
  graph.exit_ns = 28500;
  w.writeLaunch(graph);
  kc::KernelBody k = kernel(2, 3);
  k.graph_node_id = 88;
  w.writeKernel(k);
  w.writeRange({20000, 30000, 2, 7, 7, 0});
  // "warm": a plain kernel launch, the same in both views.
  w.writeLaunch(launch(3, 3));
  w.writeKernel(kernel(3, 3));
  w.writeRange({40000, 40100, 3, 7, 7, 0});
  w.writeEnd();
  w.flush();
  kc::LoadedLog l = loaded(sink.bytes);
  const std::string launch_view = table(l);
  CHECK(verdictLine(launch_view, "rep").starts_with("launch-bound: 8.00 µs of launch calls for 55 ns of GPU work"));
  CHECK(verdictLine(launch_view, "cap") == "CPU-bound: 10.0 µs in the range for 0 ns of GPU work (7 ns in launch calls)");
  const std::string warm = verdictLine(launch_view, "warm");

  l.summary = kc::summarize(l.data, kc::JoinOptions{kc::GraphView::kCapturePath});
  CHECK(l.summary.graph_view == kc::GraphView::kCapturePath);
  const std::string capture_view = table(l);
  CHECK(verdictLine(capture_view, "rep") ==
        "graph launches: their kernels are credited to the ranges they were captured in (--graph-view capture, no "
        "bound verdict): 8.00 µs of launch calls in 10.0 µs of range time");
  CHECK(verdictLine(capture_view, "cap").starts_with(
      "captured kernels: their replays' GPU work is credited here (--graph-view capture, no bound verdict): 55 ns of "
      "GPU work, 10.0 µs in the range, 7 ns in launch calls"));
  CHECK(verdictLine(capture_view, "warm") == warm);
  const nlohmann::json j = kc::summaryJson(l);
  CHECK(j["ranges"][2]["path"] == "rep");
  CHECK(j["ranges"][2]["verdict"] == verdictLine(capture_view, "rep"));

  // The streaming join (kcount summary's) keeps the view too, and says the same.
  char path[] = "/tmp/kc_report_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, sink.bytes.data(), sink.bytes.size()) == static_cast<ssize_t>(sink.bytes.size()));
  close(fd);
  const kc::LoadedLog streamed = kc::streamLog(path, kc::JoinOptions{kc::GraphView::kCapturePath});
  std::remove(path);
  CHECK(streamed.summary.graph_view == kc::GraphView::kCapturePath);
  CHECK(verdictLine(table(streamed), "rep") == verdictLine(capture_view, "rep"));
  CHECK(verdictLine(table(streamed), "cap") == verdictLine(capture_view, "cap"));
}

// A capped log whose names did not all fit: the library writes the late String it still needs again in
// the final chunk, with its id in the whole run's table (3003 here), so the reader's table reaches 3003.
// check counts the String records read, not the table's size.
TEST_CASE("check: records counts the definitions read, not the highest id") {
  const kc::test::LateNameLog log = kc::test::lateNameLog(/*segment=*/false);
  REQUIRE(log.dropped.total() > 0);
  const kc::LoadedLog l = loaded(log.bytes);
  REQUIRE(l.data.strings.size() == 3004);
  const auto missing = std::count(l.data.strings_missing.begin(), l.data.strings_missing.end(), true);
  REQUIRE(missing > 0);
  std::ostringstream check;
  kc::printCheck(check, l);
  CHECK(hasLine(check.str(), "records: " + std::to_string(3003 - missing) + " strings, "));
  CHECK_FALSE(hasLine(check.str(), "records: 3003 strings"));
}

// cuBLAS names that differ only past the cut (kMaxShortName characters): split-K or not is in the tail.
// The verdict line's top kernels must not show them as the same name twice.
TEST_CASE("top kernels: names equal once cut are told apart, in the middle") {
  const std::string head = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_";
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "step");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, head + "execute_kernel__5x_cublas");
  w.writeString(5, head + "execute_split_k_kernel__5x_cublas");
  w.writeScope({1, 0, 1, 0});
  for (uint64_t c = 1; c <= 3; ++c) {
    w.writeLaunch(launch(c, 1));
    w.writeKernel(kernel(c, c == 3 ? 5 : 4));
  }
  w.writeRange({1, 100, 1, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const std::string t = table(loaded(sink.bytes));
  const size_t at = t.find("top: ");
  REQUIRE(at != std::string::npos);
  const std::string top = t.substr(at, t.find('\n', at) - at);
  CHECK(hasLine(top, "execute_kernel__5x_cublas ×2"));
  CHECK(hasLine(top, "execute_split_k_kernel__5x_cublas ×1"));
}

TEST_CASE("summary --full-names shows long range names and verdict paths whole") {
  const std::string name = "block norm=rms mlp=geglu attn=sdpa dtype=bf16 t=4096 h=2048 i=5504 with a long tail of settings";
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, name);
  w.writeString(2, "gemm");
  w.writeString(3, "cudaLaunchKernel");
  w.writeScope({1, 0, 1, 0});
  w.writeLaunch(launch(1, 1));
  w.writeKernel(kernel(1, 2));
  w.writeRange({1, 100, 1, 7, 7, 0});
  w.writeEnd();
  w.flush();
  const kc::LoadedLog l = loaded(sink.bytes);
  CHECK_FALSE(hasLine(table(l), name));  // shortened by default
  std::ostringstream out;
  kc::SummaryOptions opt;
  opt.full_names = true;
  kc::printSummaryTable(out, l, opt);
  CHECK(hasLine(out.str(), "\n" + name + " "));      // the table's row
  CHECK(hasLine(out.str(), "\n  " + name + ": "));   // its verdict line
}

TEST_CASE("a launch without kernel in a log not read whole: the footer says its kernel may be in the part not read") {
  const auto log = [](bool end) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    stepDefinitions(w);
    w.writeLaunch(launch(1, 1));
    w.writeKernel(kernel(1, 2));
    w.writeLaunch(launch(2, 1));  // its kernel is not in the log
    if (end) w.writeEnd();
    w.flush();
    return loaded(sink.bytes);
  };
  const std::string killed = table(log(false)), closed = table(log(true));
  CHECK(hasLine(killed, "1 launch without kernel"));
  CHECK(hasLine(killed, "\njoin: the log was not read whole (no end record): launches without kernel"));
  CHECK(hasLine(closed, "1 launch without kernel"));
  CHECK_FALSE(hasLine(closed, "not read whole"));
  std::ostringstream check;
  kc::printCheck(check, log(false));
  CHECK(hasLine(check.str(), "\njoin: the log was not read whole (no end record)"));
}
