// kcount's own cost as the library writes it and the tools read and show it (collector/self_cost.h,
// tools/self_cost.h): the estimate from the sample, sums over logs, keys that do not add up.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collector/log_reader.h"
#include "collector/saturating.h"
#include "collector/self_cost.h"
#include "tools/self_cost.h"

namespace {

kc::LogData logWith(const std::string& callbacks, const std::string& timed, const std::string& timed_ns) {
  kc::LogData d;
  for (const auto& [k, v] : kc::selfCostMetadata(kc::SelfCost{}))  // the keys the library writes, in order
    d.metadata.emplace_back(k, k == kc::kMetaSelfCallbacks ? callbacks : k == kc::kMetaSelfTimed ? timed : timed_ns);
  return d;
}

}  // namespace

TEST_CASE("kcount's own cost: the estimate is callbacks x the sample's mean, rounded") {
  const kc::SelfCost c = kc::selfCostFromNs({1000, 3, 100});  // mean 33.33 ns
  CHECK(c.meanNs() == 33);
  REQUIRE(c.estimated_ns.has_value());
  CHECK(*c.estimated_ns == 33333);
  CHECK_FALSE(kc::selfCostFromNs({12, 0, 0}).estimated_ns.has_value());
  CHECK(kc::selfCostFromNs({12, 0, 0}).meanNs() == 0);
  // Held at 2^64 - 1 rather than wrapping.
  CHECK(*kc::selfCostFromNs({kc::kSaturated, 1, 2}).estimated_ns == kc::kSaturated);
  CHECK(kc::selfCostMetadata(c) ==
        std::vector<std::pair<std::string, std::string>>{
            {"kcount_callbacks", "1000"}, {"kcount_callbacks_timed", "3"}, {"kcount_callback_timed_ns", "100"}});
}

TEST_CASE("kcount's own cost: read back from the metadata; nothing for missing or inconsistent keys") {
  const std::optional<kc::SelfCost> c = kc::selfCostOf(logWith("64000", "1000", "50000"));
  REQUIRE(c.has_value());
  CHECK(c->callbacks == 64000);
  CHECK(c->timed == 1000);
  CHECK(c->timed_ns == 50000);
  CHECK(*c->estimated_ns == 3200000);
  CHECK_FALSE(kc::selfCostOf(kc::LogData{}).has_value());
  CHECK_FALSE(kc::selfCostOf(logWith("10", "11", "5")).has_value());  // more timed than handled
  CHECK_FALSE(kc::selfCostOf(logWith("10", "-1", "5")).has_value());  // not a number
  CHECK_FALSE(kc::selfCostOf(logWith("10", "1", "5 ns")).has_value());
}

TEST_CASE("kcount's own cost: several logs add up, each log's estimate summed") {
  kc::SelfCost sum = kc::selfCostFromNs({1000, 10, 1000});  // 100 µs
  sum += kc::selfCostFromNs({100, 0, 0});                   // no sample: counted, no estimate
  sum += kc::selfCostFromNs({64, 2, 50});                   // 1600 ns
  CHECK(sum.callbacks == 1164);
  CHECK(sum.timed == 12);
  CHECK(sum.timed_ns == 1050);
  CHECK(*sum.estimated_ns == 101600);
  kc::SelfCost none = kc::selfCostFromNs({5, 0, 0});
  none += kc::selfCostFromNs({7, 0, 0});
  CHECK_FALSE(none.estimated_ns.has_value());
}

TEST_CASE("kcount's own cost: check's line, the footer's line, JSON; nothing for a log that does not state it") {
  const kc::SelfCost c = kc::selfCostFromNs({1234567, 19290, 19290 * 84});
  CHECK(kc::selfCostCheckLine(c) ==
        "kcount's own cost: 1234567 callbacks on the program's threads; 19290 timed: mean 84 ns, about 104 ms in all "
        "(estimated from the sample)\n");
  CHECK(kc::selfCostFooterLine(c) ==
        "kcount's own cost: about 104 ms on the program's threads (1234567 callbacks, mean 84 ns over 19290 timed)\n");
  CHECK(kc::selfCostJson(c) == nlohmann::json{{"callbacks", 1234567},
                                              {"timed", 19290},
                                              {"timed_ns", 19290 * 84},
                                              {"mean_ns", 84},
                                              {"estimated_ns", 103703628}});
  CHECK(kc::selfCostCheckLine(std::nullopt).empty());
  CHECK(kc::selfCostFooterLine(std::nullopt).empty());
  CHECK(kc::selfCostJson(std::nullopt).is_null());
  CHECK(kc::selfCostFooterLine(kc::selfCostFromNs({1, 0, 0})) ==
        "kcount's own cost: 1 callback on the program's threads (none timed)\n");
}

namespace {

// A log with ranges req (1), req/decode (2), req/prefill (3), req/prefill/attn (4), idle (5) and the
// RangeCallbacks records `records` (format 1.4).
kc::LogData rangeLog(std::vector<kc::RangeCallbacksBody> records) {
  kc::LogData d;
  d.strings = {"", "req", "decode", "prefill", "attn", "idle"};
  d.scopes = {{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 1, 2, 0}, {3, 1, 3, 0}, {4, 3, 4, 0}, {5, 0, 5, 0}};
  d.range_callbacks = std::move(records);
  return d;
}

}  // namespace

TEST_CASE("kcount's own cost per range: self is inclusive less the child ranges', held at 0; most first") {
  const kc::LogData d = rangeLog({{1, 0, 5000, 80, 8000},  // req: 5000 inclusive
                                  {2, 0, 3000, 50, 4500},  // req/decode
                                  {3, 0, 1200, 20, 2400},  // req/prefill
                                  {4, 0, 1500, 30, 3000},  // req/prefill/attn: more than its parent (held at 0)
                                  {5, 0, 7, 0, 0},         // idle: none timed
                                  {2, 0, 100, 0, 0}});     // req/decode again: summed
  const std::vector<kc::RangeCallbackCost> c = kc::rangeCallbackCostsOf(d);
  REQUIRE(c.size() == 5);
  std::map<uint32_t, kc::RangeCallbackCost> by;
  for (const auto& r : c) by[r.scope_id] = r;
  CHECK(by[2].inclusive.callbacks == 3100);
  CHECK(by[2].self.callbacks == 3100);
  CHECK(by[1].self.callbacks == 5000 - 3100 - 1200);
  CHECK(by[1].self.timed == 80 - 50 - 20);
  CHECK(by[1].self.timed_time == 8000 - 4500 - 2400);
  CHECK(by[3].self.callbacks == 0);
  CHECK(by[3].self.timed == 0);
  CHECK(by[3].self.timed_time == 0);
  // Estimated self time: decode 3100 x 90 ns, attn 1500 x 100 ns, req 700 x 110 ns; idle none timed, after.
  CHECK(c[0].scope_id == 2);
  CHECK(*c[0].selfCost().estimated_ns == 279000);
  CHECK(c[1].scope_id == 4);
  CHECK(c[2].scope_id == 1);
  CHECK(*c[2].selfCost().estimated_ns == 77000);
  CHECK(c[3].scope_id == 5);
  CHECK_FALSE(c[3].selfCost().estimated_ns.has_value());
  CHECK(kc::rangeCallbackCostsOf(kc::LogData{}).empty());

  CHECK(kc::rangeCostCheckLines(d) ==
        "  by range (self: callbacks inside the range but not its child ranges), most first:\n"
        "    req/decode: 3100 callbacks, about 279 µs (50 timed, mean 90 ns)\n"
        "    req/prefill/attn: 1500 callbacks, about 150 µs (30 timed, mean 100 ns)\n"
        "    req: 700 callbacks, about 77.0 µs (10 timed, mean 110 ns)\n"
        "    idle: 7 callbacks (none timed)\n");
  CHECK(kc::rangeCostFooterLine(d) ==
        "kcount's own cost by range (self): req/decode about 279 µs (3100 callbacks), req/prefill/attn about 150 µs "
        "(1500 callbacks), req about 77.0 µs (700 callbacks)\n");
  const auto json = kc::rangeCostJson(d);
  REQUIRE(json.has_value());
  REQUIRE(json->size() == 5);
  CHECK((*json)[0] == nlohmann::json{{"path", "req/decode"}, {"callbacks", 3100}, {"timed", 50}, {"timed_ns", 4500},
                                     {"self_callbacks", 3100}, {"self_timed", 50}, {"self_timed_ns", 4500},
                                     {"estimated_ns", 279000}});
  CHECK((*json)[4]["path"] == "req/prefill");
  CHECK((*json)[4]["estimated_ns"].is_null());
  // A log without the records shows nothing.
  CHECK(kc::rangeCostCheckLines(kc::LogData{}).empty());
  CHECK(kc::rangeCostFooterLine(kc::LogData{}).empty());
  CHECK_FALSE(kc::rangeCostJson(kc::LogData{}).has_value());
}
