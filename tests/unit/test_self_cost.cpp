// kcount's own cost as the library writes it and the tools read and show it (collector/self_cost.h,
// tools/self_cost.h): the estimate from the sample, sums over logs, keys that do not add up.
#include <doctest/doctest.h>

#include <optional>
#include <string>

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
