#include "collector/self_cost.h"

#include <algorithm>
#include <map>

#include "collector/log_reader.h"
#include "collector/parse.h"
#include "collector/saturating.h"

namespace kc {

namespace {
// a * b / c rounded half up, held at 2^64 - 1; c > 0.
uint64_t mulDivRounded(uint64_t a, uint64_t b, uint64_t c) noexcept {
  const unsigned __int128 q = (static_cast<unsigned __int128>(a) * b + c / 2) / c;
  return q > kSaturated ? kSaturated : static_cast<uint64_t>(q);
}
}  // namespace

CallbackCounts& CallbackCounts::operator+=(const CallbackCounts& o) noexcept {
  satAdd(callbacks, o.callbacks);
  satAdd(timed, o.timed);
  satAdd(timed_time, o.timed_time);
  return *this;
}

uint64_t SelfCost::meanNs() const noexcept { return timed == 0 ? 0 : mulDivRounded(timed_ns, 1, timed); }

SelfCost& SelfCost::operator+=(const SelfCost& o) noexcept {
  satAdd(callbacks, o.callbacks);
  satAdd(timed, o.timed);
  satAdd(timed_ns, o.timed_ns);
  if (o.estimated_ns) {
    uint64_t sum = estimated_ns.value_or(0);
    satAdd(sum, *o.estimated_ns);
    estimated_ns = sum;
  }
  return *this;
}

SelfCost selfCostFromNs(const CallbackCounts& counts) noexcept {
  SelfCost c{counts.callbacks, counts.timed, counts.timed_time, std::nullopt};
  if (c.timed > 0) c.estimated_ns = mulDivRounded(c.callbacks, c.timed_ns, c.timed);
  return c;
}

std::vector<std::pair<std::string, std::string>> selfCostMetadata(const SelfCost& cost) {
  return {{kMetaSelfCallbacks, std::to_string(cost.callbacks)},
          {kMetaSelfTimed, std::to_string(cost.timed)},
          {kMetaSelfTimedNs, std::to_string(cost.timed_ns)}};
}

std::optional<SelfCost> selfCostOf(const LogData& log) {
  const std::optional<uint64_t> callbacks = parseUnsigned(log.meta(kMetaSelfCallbacks));
  const std::optional<uint64_t> timed = parseUnsigned(log.meta(kMetaSelfTimed));
  const std::optional<uint64_t> timed_ns = parseUnsigned(log.meta(kMetaSelfTimedNs));
  if (!callbacks || !timed || !timed_ns || *timed > *callbacks) return std::nullopt;
  return selfCostFromNs(CallbackCounts{*callbacks, *timed, *timed_ns});
}

std::vector<RangeCallbackCost> rangeCallbackCostsOf(const LogData& log) {
  std::map<uint32_t, CallbackCounts> inclusive;  // by scope id, summed
  for (const RangeCallbacksBody& r : log.range_callbacks)
    inclusive[r.scope_id] += CallbackCounts{r.callbacks, r.timed, r.timed_ns};
  std::map<uint32_t, CallbackCounts> children;  // by parent scope id: its child scopes' inclusive counts
  for (const auto& [id, counts] : inclusive)
    if (id != kRootScope && log.scopeDefined(id) && id < log.scopes.size())
      children[log.scopes[id].parent_id] += counts;
  auto less = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
  std::vector<RangeCallbackCost> out;
  out.reserve(inclusive.size());
  for (const auto& [id, counts] : inclusive) {
    RangeCallbackCost c{id, counts, counts};
    if (auto it = children.find(id); it != children.end()) {
      c.self.callbacks = less(counts.callbacks, it->second.callbacks);
      c.self.timed = less(counts.timed, it->second.timed);
      c.self.timed_time = less(counts.timed_time, it->second.timed_time);
      c.self.timed = std::min(c.self.timed, c.self.callbacks);
    }
    out.push_back(c);
  }
  std::stable_sort(out.begin(), out.end(), [](const RangeCallbackCost& a, const RangeCallbackCost& b) {
    const SelfCost x = a.selfCost(), y = b.selfCost();
    if (x.estimated_ns.has_value() != y.estimated_ns.has_value()) return x.estimated_ns.has_value();
    if (x.estimated_ns != y.estimated_ns) return x.estimated_ns > y.estimated_ns;
    return x.callbacks > y.callbacks;
  });
  return out;
}

}  // namespace kc
