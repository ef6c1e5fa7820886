// kcount's own cost per range through the library's real handlers (no GPU): nested NVTX ranges with a known
// number of launches inside each; the closed log's RangeCallbacks records hold, per range, exactly the
// callbacks strictly between each instance's push and pop on its thread (its child ranges' push and pop
// included, its own not), the timed ones exactly those the thread's draw picked among them, and the reader's
// self counts the inclusive ones less the child ranges'. A range still open at the close counts up to the
// close; a process-wide range counts nothing. One session per process: the session test is one test case.
#include <cupti.h>
#include <doctest/doctest.h>
#include <nvtx3/nvToolsExt.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collector/log_reader.h"
#include "collector/self_cost.h"
#include "inject/callbacks.h"
#include "inject/self_cost.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/launch_calls.h"
#include "tests/support/session_log_path.h"

namespace {

using namespace kc;
using namespace kc::inject;
using namespace kc::test;

// The main thread's callbacks in order: each entry says whether the thread's draw timed it (the library's
// own draw, replayed), so a range's timed count is the number of timed entries between its push and pop.
class Sequence {
 public:
  explicit Sequence(uint32_t thread_id) : draw_(selfCostSeed(thread_id)) {}
  /// One more callback; returns its index.
  size_t next() {
    timed_.push_back(launchTimed(&draw_, UINT32_MAX / kSelfCostSample));
    return timed_.size() - 1;
  }
  /// Callbacks strictly between indices `a` and `b` (or from `a` to the end: b = SIZE_MAX), and the timed ones.
  CallbackCounts between(size_t a, size_t b) const {
    CallbackCounts c;
    for (size_t i = a + 1; i < timed_.size() && i < b; ++i) {
      ++c.callbacks;
      c.timed += timed_[i] ? 1 : 0;
    }
    return c;
  }
  size_t size() const { return timed_.size(); }

 private:
  uint32_t draw_;
  std::vector<bool> timed_;
};

nvtxRangeId_t startA(const char* m) {
  return reinterpret_cast<nvtxRangeStartA_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangeStartA])(m);
}
void end(nvtxRangeId_t id) { reinterpret_cast<nvtxRangeEnd_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangeEnd])(id); }

uint32_t g_corr = 1;
// `n` driver launches: enter and exit, 2 callbacks each.
void launches(Sequence& seq, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    launchCall(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, g_corr++);
    seq.next();
    seq.next();
  }
}

// The expected inclusive counts of one range path, summed over its instances.
std::map<std::string, CallbackCounts> g_expected;

// Pushes `name`, runs `body`, pops; adds the instance's callbacks (strictly between push and pop) to `path`.
template <typename Body>
void range(Sequence& seq, const std::string& path, const char* name, Body&& body) {
  pushA(name);
  const size_t push = seq.next();
  body();
  pop();
  const size_t pop_at = seq.next();
  g_expected[path] += seq.between(push, pop_at);
}

}  // namespace

TEST_CASE("kcount's own cost per range: the callbacks inside each range, inclusive and self, exactly") {
  REQUIRE(installFakeNvtx() == 1);
  Session& session = Session::get();
  Sequence seq(static_cast<uint32_t>(syscall(SYS_gettid)));

  // request (40 launches, then decode twice, prefill once with a nested attention, 25 launches), a second
  // request, a process-wide range around 10 launches, and a range still open when the log closes.
  range(seq, "request", "request", [&] {
    REQUIRE(session.recording());  // the first push started recording
    initLaunchApiNames(session.strings());
    launches(seq, 40);
    range(seq, "request/decode", "decode", [&] { launches(seq, 700); });
    range(seq, "request/prefill", "prefill", [&] {
      launches(seq, 100);
      range(seq, "request/prefill/attention", "attention", [&] { launches(seq, 300); });
    });
    range(seq, "request/decode", "decode", [&] { launches(seq, 500); });
    launches(seq, 25);
  });
  range(seq, "request", "request", [&] { launches(seq, 3); });
  const nvtxRangeId_t io = startA("io");
  seq.next();
  launches(seq, 10);
  end(io);
  seq.next();
  pushA("open");
  const size_t open_push = seq.next();
  launches(seq, 60);
  g_expected["open"] = seq.between(open_push, SIZE_MAX);
  session.finish(nullptr);  // writes "open" as unclosed: its callbacks up to now

  // The plan itself: decode holds 2 x 1200 launch callbacks, request the rest and its children's push/pop.
  CHECK(g_expected["request/decode"].callbacks == 2 * (700 + 500));
  CHECK(g_expected["request/prefill"].callbacks == 2 * 100 + 2 + 2 * 300);
  CHECK(g_expected["request"].callbacks == 2 * 40 + (2 + 2400) + (2 + 800) + 2 * 25 + 2 * 3 + /*push/pop*/ 4);

  const LogData log = readLogFile(g_log_path);
  REQUIRE_FALSE(log.damaged());
  CHECK(log.complete);
  CHECK(log.minor == kLogMinor);
  std::map<std::string, RangeCallbacksBody> written;
  for (const RangeCallbacksBody& r : log.range_callbacks) {
    CHECK_MESSAGE(written.count(log.scopePath(r.scope_id)) == 0, "one record per range: ", log.scopePath(r.scope_id));
    written[log.scopePath(r.scope_id)] = r;
  }
  CHECK_MESSAGE(written.count("io") == 0, "a process-wide range has no record");
  REQUIRE(written.size() == g_expected.size());
  for (const auto& [path, want] : g_expected) {
    INFO("range ", path);
    REQUIRE(written.count(path) == 1);
    const RangeCallbacksBody& got = written[path];
    CHECK(got.callbacks == want.callbacks);
    CHECK(got.timed == want.timed);
    CHECK((got.timed == 0) == (got.timed_ns == 0));
  }
  // Timed ones exist at all (about 1 in 64 of 2400 decode callbacks), so the sample is exercised.
  CHECK(written["request/decode"].timed > 0);

  // The reader's self counts: inclusive less the child ranges' inclusive.
  std::map<std::string, RangeCallbackCost> costs;
  for (const RangeCallbackCost& c : rangeCallbackCostsOf(log)) costs[log.scopePath(c.scope_id)] = c;
  REQUIRE(costs.size() == g_expected.size());
  const RangeCallbackCost& req = costs["request"];
  const CallbackCounts& dec = costs["request/decode"].inclusive;
  const CallbackCounts& pre = costs["request/prefill"].inclusive;
  CHECK(req.self.callbacks == 2 * 40 + 2 * 25 + 2 * 3 + /*the children's push and pop*/ 3 * 2);
  CHECK(req.self.callbacks == req.inclusive.callbacks - dec.callbacks - pre.callbacks);
  CHECK(req.self.timed == req.inclusive.timed - dec.timed - pre.timed);
  // Each range's ns are converted from its own ticks, rounded: the difference may be off by a ns or two,
  // and is held at 0.
  const int64_t self_ns = static_cast<int64_t>(req.inclusive.timed_time) - static_cast<int64_t>(dec.timed_time) -
                          static_cast<int64_t>(pre.timed_time);
  CHECK(req.self.timed_time == static_cast<uint64_t>(self_ns > 0 ? self_ns : 0));
  CHECK(costs["request/prefill"].self.callbacks == 2 * 100 + 2);
  CHECK(costs["request/decode"].self.callbacks == 2400);  // no child: self is inclusive
  CHECK(costs["request/decode"].self.timed == dec.timed);
  CHECK(costs["open"].self.callbacks == 120);
  // The per-log total holds every range's callbacks and more (the top-level pushes and pops, io's).
  const std::optional<SelfCost> total = selfCostOf(log);
  REQUIRE(total.has_value());
  CHECK(total->callbacks == seq.size());
  CHECK(total->callbacks == req.inclusive.callbacks + costs["open"].inclusive.callbacks + 2 * 2 + 2 + 20 + 1);
}
