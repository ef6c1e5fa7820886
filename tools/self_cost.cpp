#include "tools/self_cost.h"

#include <fmt/format.h>

#include "collector/counted.h"
#include "collector/log_reader.h"
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

namespace {
// The ranges worth naming: those with a callback of their own, in rangeCallbackCostsOf() order, at most `n`.
std::vector<RangeCallbackCost> namedRanges(const LogData& log, size_t n) {
  std::vector<RangeCallbackCost> out;
  for (const RangeCallbackCost& c : rangeCallbackCostsOf(log)) {
    if (out.size() == n) break;
    if (c.self.callbacks > 0) out.push_back(c);
  }
  return out;
}
}  // namespace

std::string rangeCostCheckLines(const LogData& log) {
  if (log.range_callbacks.empty()) return {};
  std::string out = "  by range (self: callbacks inside the range but not its child ranges), most first:";
  const std::vector<RangeCallbackCost> ranges = namedRanges(log, kCheckRangeCosts);
  if (ranges.empty()) return out + " none had a callback of its own\n";
  out += '\n';
  for (const RangeCallbackCost& c : ranges) {
    const SelfCost self = c.selfCost();
    out += fmt::format("    {}: {}", log.scopePath(c.scope_id), counted(self.callbacks, "callback"));
    out += self.estimated_ns ? fmt::format(", about {} ({} timed, mean {})\n", formatDuration(*self.estimated_ns),
                                           self.timed, formatMeanDuration(self.timed_ns, self.timed))
                             : std::string(" (none timed)\n");
  }
  return out;
}

std::string rangeCostFooterLine(const LogData& log) {
  const std::vector<RangeCallbackCost> ranges = namedRanges(log, kFooterRangeCosts);
  if (ranges.empty()) return {};
  std::string out = "kcount's own cost by range (self):";
  for (size_t i = 0; i < ranges.size(); ++i) {
    const SelfCost self = ranges[i].selfCost();
    out += i == 0 ? " " : ", ";
    out += log.scopePath(ranges[i].scope_id);
    out += self.estimated_ns ? fmt::format(" about {} ({})", formatDuration(*self.estimated_ns),
                                           counted(self.callbacks, "callback"))
                             : fmt::format(" {} (none timed)", counted(self.callbacks, "callback"));
  }
  return out + '\n';
}

std::optional<nlohmann::json> rangeCostJson(const LogData& log) {
  if (log.range_callbacks.empty()) return std::nullopt;
  nlohmann::json out = nlohmann::json::array();
  for (const RangeCallbackCost& c : rangeCallbackCostsOf(log)) {
    const SelfCost self = c.selfCost();
    out.push_back({{"path", log.scopePath(c.scope_id)},
                   {"callbacks", c.inclusive.callbacks},
                   {"timed", c.inclusive.timed},
                   {"timed_ns", c.inclusive.timed_time},
                   {"self_callbacks", self.callbacks},
                   {"self_timed", self.timed},
                   {"self_timed_ns", self.timed_ns},
                   {"estimated_ns", self.estimated_ns ? nlohmann::json(*self.estimated_ns) : nlohmann::json(nullptr)}});
  }
  return out;
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
