// GraphExecTable (inject/graph_execs.h): what a graph launch ran, by the launch's correlation id, through
// changes after instantiation and destruction.
#include <doctest/doctest.h>

#include "inject/graph_execs.h"

namespace {

using kc::inject::GraphExecTable;
using kc::inject::GraphKernelNode;
using kc::inject::GraphProgram;

GraphProgram program(std::initializer_list<uint32_t> names) {
  GraphProgram p;
  uint64_t node = 100;
  for (uint32_t n : names) p.kernels.push_back(GraphKernelNode{node++, n, true});
  return p;
}

uint32_t firstName(const GraphExecTable& t, uint32_t exec, uint64_t corr) {
  auto p = t.find(exec, corr);
  return p == nullptr || p->kernels.empty() ? 0 : p->kernels.front().name_id;
}

}  // namespace

TEST_CASE("graph execs: a launch gets the version made before it, whenever the writer looks") {
  GraphExecTable t;
  CHECK(t.find(1, 10) == nullptr);  // never instantiated while recording: unknown
  t.instantiated(1, program({7, 8}));
  t.changed(1, 50, [](GraphProgram& p) { p.kernels[0].name_id = 9; });  // kernel node parameters at id 50
  t.changed(1, 80, [](GraphProgram& p) { p.kernels[1].enabled = false; });
  CHECK(firstName(t, 1, 49) == 7);  // launched before the change, looked up after it
  CHECK(firstName(t, 1, 51) == 9);
  CHECK(t.find(1, 79)->kernels[1].enabled);
  CHECK_FALSE(t.find(1, 81)->kernels[1].enabled);
  CHECK(firstName(t, 1, 81) == 9);  // a change keeps the earlier ones
  t.changed(2, 90, [](GraphProgram& p) { p.known = false; });  // not in the table: nothing
  CHECK(t.find(2, 91) == nullptr);
  t.instantiated(1, program({3}));  // instantiated again in place: the history starts over
  CHECK(firstName(t, 1, 10) == 3);
}

TEST_CASE("graph execs: the history is bounded; the oldest kept answers for older launches") {
  GraphExecTable t;
  t.instantiated(1, program({1}));
  for (uint32_t i = 1; i <= 20; ++i) t.changed(1, 10 * i, [&](GraphProgram& p) { p.kernels[0].name_id = 100 + i; });
  CHECK(firstName(t, 1, 1000) == 120);
  CHECK(firstName(t, 1, 15) == 100 + 20 - GraphExecTable::kMaxVersions + 1);  // folded away: the oldest kept
}

TEST_CASE("graph execs: a destroyed exec is kept until a drain that began after the destruction ends") {
  GraphExecTable t;
  t.instantiated(1, program({7}));
  const uint64_t before = t.drainBegins();  // a drain under way while the exec is destroyed
  t.destroyed(1);
  t.drainEnded(before);
  CHECK(firstName(t, 1, 5) == 7);  // launches made before the destruction may still be in thread buffers
  const uint64_t after = t.drainBegins();
  CHECK(firstName(t, 1, 5) == 7);
  t.drainEnded(after);
  CHECK(t.find(1, 5) == nullptr);
  CHECK(t.size() == 0);
}

TEST_CASE("graph execs: at most kMaxExecs execs; clear() forgets all") {
  GraphExecTable t;
  for (uint32_t i = 0; i < GraphExecTable::kMaxExecs + 5; ++i) t.instantiated(i, program({1}));
  CHECK(t.size() == GraphExecTable::kMaxExecs);
  CHECK(t.find(GraphExecTable::kMaxExecs + 1, 1) == nullptr);  // past the cap: unknown, not guessed
  t.instantiated(0, program({2}));                            // one already held may be instantiated again
  CHECK(firstName(t, 0, 1) == 2);
  t.clear();
  CHECK(t.size() == 0);
}
