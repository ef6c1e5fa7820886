// `kcount report` page: the embedded data cannot end its script element, and the tree is depth first.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "tools/diff.h"
#include "tools/loaded_log.h"
#include "tools/report_html.h"
#include "tools/summary_output.h"
#include "tests/support/loaded_log.h"

TEST_CASE("report page: a range named </script> stays inside the data; ranges depth first") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("pid", "7");
  w.writeString(1, "</script><script>alert(1)</script>");
  w.writeString(2, "inner");
  w.writeString(3, "k");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  kc::LaunchBody l{};
  l.correlation_id = 1;
  l.scope_id = 2;
  l.exit_ns = 5;
  w.writeLaunch(l);
  kc::KernelBody k{};
  k.correlation_id = 1;
  k.name_id = 3;
  k.start_ns = 10;
  k.end_ns = 30;
  w.writeKernel(k);
  w.writeRange({0, 100, 1, 7, 7, 0});
  w.writeRange({1, 50, 2, 7, 7, 0});
  w.writeEnd();
  w.flush();
  std::vector<kc::LoadedLog> logs(1);
  logs[0].path = "/x/run-a.kcount";
  logs[0].data = kc::readLog(sink.bytes);
  logs[0].summary = kc::summarize(logs[0].data);

  const auto data = kc::htmlReportData(logs);
  const auto& run = data["runs"][0];
  CHECK(run["label"] == "run-a");
  REQUIRE(run["ranges"].size() == 3);
  CHECK(run["ranges"][0]["parent"].is_null());
  CHECK(run["ranges"][1]["depth"] == 1);
  CHECK(run["ranges"][2]["path"] == "</script><script>alert(1)</script>/inner");
  CHECK(run["ranges"][2]["excl"]["gpu_ns"] == 20);
  CHECK(run["ranges"][1]["incl"]["kernels"] == 1);
  // A kernel's ranges as `kcount kernels` writes them: a '/' inside a name is "\/".
  CHECK(run["kernels"][0]["ranges"]["<\\/script><script>alert(1)<\\/script>/inner"] == 1);
  // Each range's verdict is the one `kcount summary` gives it (summary JSON "verdict"); the root has none.
  const auto summary = kc::summaryJson(logs[0]);
  size_t compared = 0;
  for (const auto& r : summary["ranges"])
    for (const auto& n : run["ranges"])
      if (n["parent"].is_number() && r["path"] == n["path"]) {
        CHECK(n["verdict"] == r["verdict"]);
        ++compared;
      }
  CHECK(compared == 2);
  CHECK(run["ranges"][2]["verdict"].is_string());
  CHECK(run["ranges"][0]["verdict"].is_null());

  std::ostringstream out;
  kc::writeHtmlReport(out, logs);
  const std::string page = out.str();
  CHECK(page.find("alert(1)") != std::string::npos);
  CHECK(page.find("<script>alert") == std::string::npos);
  CHECK(page.find("/*KCOUNT_DATA*/") == std::string::npos);
  // Exactly the page's own three script elements end (data, kc-lib, the page).
  size_t ends = 0;
  for (size_t at = page.find("</script>"); at != std::string::npos; at = page.find("</script>", at + 1)) ++ends;
  CHECK(ends == 3);
}

TEST_CASE("report page: ranges under a parent without instance are kept, with the parent") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "outer");
  w.writeString(2, "request");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  w.writeRange({10, 90, 2, 7, 7, 0});  // only request closed while recording; nothing launched
  w.writeEnd();
  w.flush();
  std::vector<kc::LoadedLog> logs(1);
  logs[0].path = "w.kcount";
  logs[0].data = kc::readLog(sink.bytes);
  logs[0].summary = kc::summarize(logs[0].data);
  const auto run = kc::htmlReportData(logs)["runs"][0];
  REQUIRE(run["ranges"].size() == 3);
  CHECK(run["ranges"][1]["path"] == "outer");
  CHECK(run["ranges"][1]["instances"] == 0);
  CHECK(run["ranges"][2]["path"] == "outer/request");
  CHECK(run["ranges"][2]["depth"] == 2);
}

TEST_CASE("report page: a kernel's ranges are the paths kcount kernels writes, none empty") {
  // A top-level range with an empty name had the key "", so the kernels table's cell began with ", ".
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "");
  w.writeString(2, "k");
  w.writeString(3, "a/b");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 0, 3, 0});
  for (uint32_t scope = 0; scope < 3; ++scope) {
    kc::LaunchBody l{};
    l.correlation_id = scope + 1;
    l.scope_id = scope;
    l.exit_ns = 5;
    w.writeLaunch(l);
    kc::KernelBody k{};
    k.correlation_id = scope + 1;
    k.name_id = 2;
    k.start_ns = 10;
    k.end_ns = 30;
    w.writeKernel(k);
  }
  w.writeRange({0, 100, 1, 7, 7, 0});
  w.writeRange({0, 100, 2, 7, 7, 0});
  w.writeEnd();
  w.flush();
  std::vector<kc::LoadedLog> logs(1);
  logs[0].path = "e.kcount";
  logs[0].data = kc::readLog(sink.bytes);
  logs[0].summary = kc::summarize(logs[0].data);
  const auto run = kc::htmlReportData(logs)["runs"][0];
  REQUIRE(run["kernels"].size() == 1);
  CHECK(run["kernels"][0]["ranges"] == nlohmann::json{{"(no range)", 1}, {"(empty name)", 1}, {"a\\/b", 1}});
}

TEST_CASE("report page: runs labelled by file name, folders added only to tell equal names apart") {
  auto logAt = [](const std::string& path, const std::string& pid) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    w.writeMetadata("pid", pid);
    w.writeEnd();
    w.flush();
    return kc::test::loaded(sink.bytes, path);
  };
  auto labels = [](const std::vector<kc::LoadedLog>& logs) {
    std::vector<std::string> out;
    const nlohmann::json data = kc::htmlReportData(logs);
    for (const auto& run : data["runs"]) out.push_back(run["label"]);
    return out;
  };
  std::vector<kc::LoadedLog> logs;
  logs.push_back(logAt("/data/jobA/rank0/kcount-h-7.kcount", "7"));
  logs.push_back(logAt("/data/jobB/rank0/kcount-h-7.kcount", "7"));
  logs.push_back(logAt("other.kcount", "9"));
  CHECK(labels(logs) == std::vector<std::string>{"jobA/rank0/kcount-h-7", "jobB/rank0/kcount-h-7", "other"});
  // One path written two ways: no folder tells them apart, the pid does not either: " #2".
  logs.clear();
  logs.push_back(logAt("runs/x.kcount", "5"));
  logs.push_back(logAt("runs/./x.kcount", "6"));
  logs.push_back(logAt("x.log", "8"));
  CHECK(labels(logs) == std::vector<std::string>{"runs/x (pid 5)", "runs/x (pid 6)", "x.log"});
}

TEST_CASE("report page: two logs carry the verdicts kcount diff answers with; one log none") {
  // A log of `steps` instances of range "step", each one kernel "k" of `ns` ns.
  auto logOf = [](const std::string& path, int steps, uint64_t ns) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink);
    w.writeMetadata("pid", "7");
    w.writeString(1, "step");
    w.writeString(3, "k");
    w.writeScope({1, 0, 1, 0});
    for (int i = 0; i < steps; ++i) {
      const uint64_t t = 1000 * static_cast<uint64_t>(i);
      kc::LaunchBody l{};
      l.correlation_id = static_cast<uint64_t>(i + 1);
      l.scope_id = 1;
      l.enter_ns = t + 1;
      l.exit_ns = t + 2;
      w.writeLaunch(l);
      kc::KernelBody k{};
      k.correlation_id = static_cast<uint64_t>(i + 1);
      k.name_id = 3;
      k.start_ns = t + 10;
      k.end_ns = t + 10 + ns;
      w.writeKernel(k);
      w.writeRange({t, t + 900, 1, 7, 7, 0});
    }
    w.writeEnd();
    w.flush();
    return kc::test::loaded(sink.bytes, path);
  };
  std::vector<kc::LoadedLog> logs;
  logs.push_back(logOf("a.kcount", 4, 100));
  CHECK_FALSE(kc::htmlReportData(logs).contains("diff"));
  logs.push_back(logOf("b.kcount", 4, 50));
  const nlohmann::json data = kc::htmlReportData(logs);
  REQUIRE(data.contains("diff"));
  const nlohmann::json& shown = data["diff"]["verdicts"];
  REQUIRE(shown.size() == 2);
  CHECK(shown[0]["unit"] == "step");
  CHECK(shown[0]["heading"] == "verdict for step (most repeated range: 4 instances in A, 4 in B)");
  CHECK(shown[1]["unit"] == "(overall)");
  CHECK(shown[1]["heading"] == "verdict for the whole run");
  // The same lines as diff JSON's verdicts of those units.
  const nlohmann::json diff = kc::diffJson({logs[0]}, {logs[1]});
  for (const auto& v : shown) {
    bool found = false;
    for (const auto& d : diff["verdicts"])
      if (d["unit"] == v["unit"]) {
        found = true;
        CHECK(d["lines"] == v["lines"]);
        CHECK(!v["lines"].empty());
      }
    CHECK(found);
  }
}
