// JsonWriter writes the text dumpJson() writes for the document built whole, and the JSON outputs written
// through it are the text of their documents.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/diff.h"
#include "tools/json_writer.h"
#include "tools/kernels_output.h"
#include "tools/loaded_log.h"
#include "tools/multi_log.h"
#include "tools/series.h"
#include "tools/summary_output.h"

namespace {

using nlohmann::json;

/// `doc` (an object) written by JsonWriter::object(), every member in `streamed` written as an array one
/// element at a time (null: written as value()).
std::string streamed(const json& doc, const std::vector<std::string>& keys) {
  std::ostringstream out;
  kc::JsonWriter w(out);
  kc::JsonWriter::Members members;
  for (const auto& k : keys)
    members[k] = [&w, &doc, k] {
      const json& v = doc.at(k);
      if (!v.is_array()) return w.value(v);
      w.beginArray();
      for (const auto& e : v) w.value(e);
      w.end();
    };
  w.object(doc, members);
  return out.str();
}

std::string logPath(const char* relative) { return std::string(KC_SOURCE_DIR) + "/" + relative; }

}  // namespace

TEST_CASE("JsonWriter writes the text of dumpJson() with members written an element at a time") {
  const json element{{"name", "a\nb \"q\" \\"},  // escapes; a newline inside a string is not the layout's
                     {"bad", std::string("x\xff y")},  // invalid UTF-8: U+FFFD, as dumpJson() writes it
                     {"empty_array", json::array()},
                     {"empty_object", json::object()},
                     {"nested", {{"list", {1, 2.5, nullptr, true}}, {"deeper", {{"k", {json::array(), json::object()}}}}}}};
  json doc{{"a key \"quoted\"", 1},
           {"rows", json::array({element, element, element})},
           {"one", json::array({element})},
           {"none", json::array()},
           {"null", nullptr},
           {"scalar", "text"},
           {"z", {{"inner", json::array({1, 2})}}}};
  CHECK(streamed(doc, {}) == kc::dumpJson(doc));
  CHECK(streamed(doc, {"rows", "one", "none", "null", "scalar", "z"}) == kc::dumpJson(doc));
  CHECK(streamed(json::object(), {}) == kc::dumpJson(json::object()));

  // Arrays and objects nested in streamed members (summary's logs, each with its ranges).
  json outer{{"logs", json::array({doc, doc})}, {"across", element}};
  std::ostringstream out;
  kc::JsonWriter w(out);
  w.object(outer, {{"logs", [&] {
                      w.beginArray();
                      for (const auto& d : outer["logs"])
                        w.object(d, {{"rows", [&] {
                                        w.beginArray();
                                        for (const auto& e : d["rows"]) w.value(e);
                                        w.end();
                                      }}});
                      w.end();
                    }}});
  CHECK(out.str() == kc::dumpJson(outer));

  // A document that is an array.
  std::ostringstream arr;
  kc::JsonWriter wa(arr);
  wa.beginArray();
  wa.value(element);
  wa.beginArray();
  wa.end();
  wa.value(2);
  wa.end();
  CHECK(arr.str() == kc::dumpJson(json::array({element, json::array(), 2})));
}

TEST_CASE("summary JSON written a range at a time is the text of its document") {
  std::vector<kc::LoadedLog> logs;
  for (const char* p : {"examples/logs/geglu-eager.kcount", "examples/logs/geglu-compiled.kcount",
                        "tests/data/graphs.kcount", "tests/data/fuzz-regressions/summary-mode-no-complete-snapshot.kcount"})
    logs.push_back(kc::loadLog(logPath(p)));
  for (size_t n = 1; n <= logs.size(); ++n) {
    const std::vector<kc::LoadedLog> some(logs.begin(), logs.begin() + static_cast<std::ptrdiff_t>(n));
    json doc = kc::summaryJson(some);
    if (n > 1) doc["across_logs"] = kc::acrossLogsJson(some);
    std::ostringstream out;
    kc::writeSummaryJson(out, some);
    CHECK(out.str() == kc::dumpJson(doc) + "\n");
  }
  // The last log alone: no complete snapshot, "ranges" null.
  std::ostringstream out;
  kc::writeSummaryJson(out, {logs.back()});
  CHECK(out.str() == kc::dumpJson(kc::summaryJson(std::vector<kc::LoadedLog>{logs.back()})) + "\n");
}

TEST_CASE("kernels JSON written a kernel at a time is the text of its document") {
  std::vector<kc::LoadedLog> logs;
  for (const char* p : {"examples/logs/geglu-eager.kcount", "examples/logs/geglu-compiled.kcount"})
    logs.push_back(kc::streamLog(logPath(p)));
  for (size_t n = 1; n <= logs.size(); ++n) {
    const std::vector<kc::LoadedLog> some(logs.begin(), logs.begin() + static_cast<std::ptrdiff_t>(n));
    for (kc::KernelSort sort : {kc::KernelSort::kGpuTotal, kc::KernelSort::kName}) {
      std::ostringstream out;
      kc::writeKernelsJson(out, some, sort);
      CHECK(out.str() == kc::dumpJson(kc::kernelsJson(some, sort)) + "\n");
    }
  }
}

TEST_CASE("diff JSON written a range at a time is the text of its document") {
  auto read = [](const char* p) { return std::vector<kc::LoadedLog>{kc::streamLog(logPath(p))}; };
  const auto eager = read("examples/logs/geglu-eager.kcount"), compiled = read("examples/logs/geglu-compiled.kcount");
  const auto sweep = read("examples/logs/sweep-eager.kcount"), graphs = read("tests/data/graphs.kcount");
  // Kernels on both sides and on one, ranges on one side only, different work (work_differs).
  for (const auto& [a, b] : {std::pair{&eager, &compiled}, std::pair{&compiled, &eager}, std::pair{&eager, &eager},
                             std::pair{&sweep, &graphs}}) {
    std::ostringstream out;
    kc::writeDiffJson(out, *a, *b);
    CHECK(out.str() == kc::dumpJson(kc::diffJson(*a, *b)) + "\n");
  }
}

TEST_CASE("series JSON written a range at a time is the text of its document") {
  std::vector<kc::LoadedLog> logs;
  for (const char* p : {"tests/data/fuzz-regressions/summary-mode-two-snapshots.kcount",
                        "tests/data/fuzz-regressions/summary-mode-snapshot-totals.kcount",
                        "tests/data/fuzz-regressions/summary-mode-no-complete-snapshot.kcount"})
    logs.push_back(kc::loadLog(logPath(p)));
  for (size_t n = 1; n <= logs.size(); ++n) {
    const std::vector<kc::LoadedLog> some(logs.begin(), logs.begin() + static_cast<std::ptrdiff_t>(n));
    std::ostringstream out;
    kc::writeSeriesJson(out, some);
    CHECK(out.str() == kc::dumpJson(kc::seriesJson(some)) + "\n");
  }
}
