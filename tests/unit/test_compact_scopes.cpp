// compactScopes(): a sparse scope table (a rotated part, a corrupt id) renumbered densely, with the same
// analysis, paths and displayed ids as the table indexed by the log's ids.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "collector/stream_summary.h"
#include "tests/support/records.h"
#include "tools/loaded_log.h"
#include "tools/summary_output.h"

namespace {

using kc::test::kernel;
using kc::test::launch;

/// A part-like log with high, sparse scope ids: step (400000) > inner (400001); up (500000) whose parent
/// 450000 is never defined (a lost range); launches in inner, in 420000 (no definition, inside the table)
/// and in 600000 (past the highest defined id), each with one kernel; a graph node created in inner.
std::vector<uint8_t> sparseLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(6, "gemm_kernel");
  w.writeString(700001, "step");
  w.writeString(900000, "inner");
  w.writeString(900001, "up");
  w.writeScope({400000, kc::kRootScope, 700001, kc::kNoString});
  w.writeScope({400001, 400000, 900000, kc::kNoString});
  w.writeScope({500000, 450000, 900001, kc::kNoString});
  w.writeRange({100, 2000, 400000, 1, 1, 0});
  w.writeRange({200, 1000, 400001, 1, 1, 0});
  w.writeRange({3000, 4000, 500000, 1, 1, 0});
  uint64_t corr = 7;
  for (uint32_t scope : {400001u, 400001u, 420000u, 600000u, 500000u}) {
    w.writeLaunch(launch(corr, scope));
    w.writeKernel(kernel(corr, 6));
    ++corr;
  }
  kc::GraphNodeBody g{};
  g.node_id = 77;
  g.scope_id = 400001;
  w.writeGraphNode(g);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

/// Per path (LogData::scopePath of each row), its exclusive kernels and launches, and the unresolved row.
std::map<std::string, std::pair<uint64_t, uint64_t>> byPath(const kc::LogData& d, const kc::Summary& s) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> out;
  for (uint32_t i = 0; i < s.exclusive.size(); ++i)
    if (s.exclusive[i].kernels + s.exclusive[i].launches > 0)
      out[d.scopePath(i)] = {s.exclusive[i].kernels, s.exclusive[i].launches};
  out["unresolved"] = {s.unresolved.kernels, s.unresolved.launches};
  return out;
}

}  // namespace

TEST_CASE("compactScopes: a sparse table keeps the defined, lost-parent and referenced ids, in order") {
  const std::vector<uint8_t> bytes = sparseLog();
  const kc::LogData raw = kc::readLog(bytes);
  REQUIRE(raw.scopes.size() == 500001);
  CHECK(raw.undefined_scope_refs == std::vector<uint32_t>{420000, 450000, 600000});
  kc::LogData d = raw;
  kc::compactScopes(d);
  // root, 1 (reserved), 400000, 400001, 420000 (used by a launch), 450000 (a lost parent), 500000
  CHECK(d.scope_log_ids == std::vector<uint32_t>{0, 1, 400000, 400001, 420000, 450000, 500000});
  CHECK(d.scopes.size() == 7);
  CHECK(d.scope_id_end == 500001);
  CHECK(d.scopeIndex(400001) == 3);
  CHECK(d.scopeIndex(600000) == 600000);  // past the old table: as written
  CHECK(d.scopeIndex(399999) == kc::LogData::kUnknownScopeIndex);
  CHECK(d.logScopeId(3) == 400001);
  CHECK(d.scopes[3].parent_id == 2);
  CHECK(d.scopePath(3) == "step/inner");
  CHECK(d.scopePath(6) == "(lost range 450000)/up");
  CHECK(d.scopePath(d.scopeIndex(420000)) == "<bad scope id 420000>");
  CHECK(d.scopePath(600000) == "<bad scope id 600000>");
  CHECK(d.scopeLost(5));
  CHECK_FALSE(d.scopeDefined(4));
  REQUIRE(d.launches.size() == 5);
  CHECK(d.launches[0].scope_id == 3);
  CHECK(d.launches[2].scope_id == 4);
  CHECK(d.launches[3].scope_id == 600000);
  CHECK(d.ranges[2].scope_id == 6);
  REQUIRE(d.graph_nodes.size() == 1);
  CHECK(d.graph_nodes[0].scope_id == 3);

  const kc::Summary s_raw = kc::summarize(raw), s = kc::summarize(d);
  CHECK(s.exclusive.size() == 7);
  CHECK(s_raw.exclusive.size() == 500001);
  CHECK(byPath(d, s) == byPath(raw, s_raw));
  CHECK(s.unresolved.kernels == 2);
  CHECK(s.kernels == s_raw.kernels);
  CHECK(s.inclusive[2].kernels == 2);  // step holds inner's two kernels

  // Twice: nothing more happens.
  const std::vector<uint32_t> ids = d.scope_log_ids;
  kc::compactScopes(d, 0);
  CHECK(d.scope_log_ids == ids);
}

TEST_CASE("compactScopes: the streaming join maps the ids it saw and builds the same tree") {
  const std::vector<uint8_t> bytes = sparseLog();
  kc::LogData d = kc::readLog(bytes);
  kc::compactScopes(d);
  const kc::Summary s = kc::summarize(d);
  const kc::StreamedLog st = kc::summarizeLogBytes(bytes);
  CHECK(st.data.scope_log_ids == d.scope_log_ids);  // kept the same ids without the records
  CHECK(st.summary.children_order == s.children_order);
  REQUIRE(st.summary.exclusive.size() == s.exclusive.size());
  for (size_t i = 0; i < s.exclusive.size(); ++i) {
    CAPTURE(i);
    CHECK(st.summary.exclusive[i].kernels == s.exclusive[i].kernels);
    CHECK(st.summary.exclusive[i].launches == s.exclusive[i].launches);
    CHECK(st.summary.exclusive[i].instances == s.exclusive[i].instances);
  }
  CHECK(st.summary.unresolved.kernels == s.unresolved.kernels);
}

TEST_CASE("compactScopes: JSON names the ids the log wrote") {
  kc::LoadedLog l;
  l.data = kc::readLog(sparseLog());
  kc::compactScopes(l.data);
  l.summary = kc::summarize(l.data);
  const auto j = kc::summaryJson(l);
  bool inner = false;
  for (const auto& r : j.at("ranges"))
    if (r.at("path") == "step/inner") {
      inner = true;
      CHECK(r.at("scope_id") == 400001);
      CHECK(r.at("parent_scope_id") == 400000);
    }
  CHECK(inner);
}

TEST_CASE("compactScopes: a dense table is left alone, and compacting it anyway is the identity") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "a");
  w.writeString(5, "b");
  w.writeScope({2, kc::kRootScope, 4, kc::kNoString});
  w.writeScope({3, 2, 5, kc::kNoString});
  w.writeLaunch(launch(1, 3));
  w.writeEnd();
  w.flush();
  kc::LogData d = kc::readLog(sink.bytes);
  const std::vector<kc::ScopeBody> before = d.scopes;
  kc::compactScopes(d);
  CHECK(d.scope_log_ids.empty());
  kc::compactScopes(d, 0);
  CHECK(d.scope_log_ids == std::vector<uint32_t>{0, 1, 2, 3});
  REQUIRE(d.scopes.size() == before.size());
  for (size_t i = 0; i < before.size(); ++i) CHECK(d.scopes[i].parent_id == before[i].parent_id);
  CHECK(d.launches[0].scope_id == 3);
  CHECK(d.scopePath(3) == "a/b");
}
