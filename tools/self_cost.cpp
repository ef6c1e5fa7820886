#include "tools/self_cost.h"

#include <fmt/format.h>

#include "collector/counted.h"
#include "tools/text.h"

namespace kc {

std::string selfCostCheckLine(const std::optional<SelfCost>& cost) {
  if (!cost) return {};
  const std::string head =
      fmt::format("kcount's own cost: {} on the program's threads; ", counted(cost->callbacks, "callback"));
  if (!cost->estimated_ns) return head + fmt::format("none timed (one in about {} is, at random)\n", kSelfCostSample);
  return head + fmt::format("{} timed: mean {}, about {} in all (estimated from the sample)\n", cost->timed,
                            formatMeanDuration(cost->timed_ns, cost->timed), formatDuration(*cost->estimated_ns));
}

std::string selfCostFooterLine(const std::optional<SelfCost>& cost, std::string_view what) {
  if (!cost) return {};
  if (!cost->estimated_ns)
    return fmt::format("{}: {} on the program's threads (none timed)\n", what, counted(cost->callbacks, "callback"));
  return fmt::format("{}: about {} on the program's threads ({}, mean {} over {} timed)\n", what,
                     formatDuration(*cost->estimated_ns), counted(cost->callbacks, "callback"),
                     formatMeanDuration(cost->timed_ns, cost->timed), cost->timed);
}

nlohmann::json selfCostJson(const std::optional<SelfCost>& cost) {
  if (!cost) return nullptr;
  const bool timed = cost->estimated_ns.has_value();
  return nlohmann::json{{"callbacks", cost->callbacks},
                        {"timed", cost->timed},
                        {"timed_ns", cost->timed_ns},
                        {"mean_ns", timed ? nlohmann::json(cost->meanNs()) : nlohmann::json(nullptr)},
                        {"estimated_ns", timed ? nlohmann::json(*cost->estimated_ns) : nlohmann::json(nullptr)}};
}

std::optional<SelfCost> selfCostOfLogs(const std::vector<LoadedLog>& logs, size_t* with) {
  std::optional<SelfCost> sum;
  *with = 0;
  for (const auto& l : logs)
    if (const std::optional<SelfCost> c = selfCostOf(l.data)) {
      ++*with;
      if (sum)
        *sum += *c;
      else
        sum = c;
    }
  return sum;
}

}  // namespace kc
