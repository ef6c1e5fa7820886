// kcount's own cost as the tools show it (collector/self_cost.h: what the library wrote): one line in
// `kcount check`, one in the summary footer, an object in the summary JSON, and the sum under the table
// across several logs. A log without the keys (written before them) shows nothing, and null in JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/self_cost.h"
#include "tools/loaded_log.h"

namespace kc {

/// `kcount check`'s line, with its newline: "kcount's own cost: N callbacks on the program's threads; T
/// timed: mean M, about E in all (estimated from the sample)"; when none was timed, "...; none timed (one in
/// about 64 is, at random)". "" for nullopt. Pure.
std::string selfCostCheckLine(const std::optional<SelfCost>& cost);

/// The summary footer's line, with its newline: "kcount's own cost: about E on the program's threads (N
/// callbacks, mean M over T timed)"; "" for nullopt. `what` replaces "kcount's own cost" (the across-logs
/// line names how many logs it sums). Pure.
std::string selfCostFooterLine(const std::optional<SelfCost>& cost, std::string_view what = "kcount's own cost");

/// {"callbacks", "timed", "timed_ns", "mean_ns", "estimated_ns"} (the last two null when nothing was timed),
/// or null for nullopt. Pure.
nlohmann::json selfCostJson(const std::optional<SelfCost>& cost);

/// How many ranges `kcount check` names by kcount's own self time, and the summary footer.
inline constexpr size_t kCheckRangeCosts = 5;
inline constexpr size_t kFooterRangeCosts = 3;

/// `kcount check`'s lines on kcount's own cost per range (format 1.4), after its per-log line: a heading,
/// "  by range (self: callbacks inside the range but not its child ranges), most first:", then one line
/// per range of the first kCheckRangeCosts of rangeCallbackCostsOf(), "    PATH: N callbacks, about E (T
/// timed, mean M)" or "    PATH: N callbacks (none timed)"; ranges with no callback of their own are
/// left out. "" for a log without RangeCallbacks records. Pure.
std::string rangeCostCheckLines(const LogData& log);

/// The summary footer's line on kcount's own cost per range, with its newline: "kcount's own cost by range
/// (self): PATH about E (N callbacks), ..." for the first kFooterRangeCosts ranges ("PATH N callbacks (none
/// timed)" for one without a sample); "" for a log without RangeCallbacks records. Pure.
std::string rangeCostFooterLine(const LogData& log);

/// The "by_range" array of the summary JSON's kcount_cost object, in rangeCallbackCostsOf() order: per range
/// {"path", "callbacks", "timed", "timed_ns" (inclusive: the range's child ranges included), "self_callbacks",
/// "self_timed", "self_timed_ns" (without its child ranges), "estimated_ns" (self_callbacks x self_timed_ns /
/// self_timed, rounded; null when self_timed is 0)}. nullopt for a log without RangeCallbacks records (the
/// key is then left out). Pure.
std::optional<nlohmann::json> rangeCostJson(const LogData& log);

/// The sum of the logs' own costs (selfCostOf() of each; logs without one add nothing), and in `with` how
/// many logs had one; nullopt if none had. Pure.
std::optional<SelfCost> selfCostOfLogs(const std::vector<LoadedLog>& logs, size_t* with);

}  // namespace kc
