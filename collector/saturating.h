// Saturating sums for the join's counters and times: a sum that would pass 2^64 - 1 (ns, bytes or a
// count) is held at that value instead of wrapping to a small number. A field at kSaturated is reported
// by the readers as a sum that reached the limit (saturatedSums(), collector/analysis.h).
#pragma once

#include <cstdint>
#include <limits>

namespace kc {

/// The value a saturated sum is held at: 2^64 - 1 (18446744073709551615).
inline constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

/// `into += v`, held at kSaturated rather than wrapping. Thread-safety: none (plain read-modify-write).
inline void satAdd(uint64_t& into, uint64_t v) noexcept { into = v > kSaturated - into ? kSaturated : into + v; }

/// `a * b`, held at kSaturated rather than wrapping (a sampled duration scaled by its sampling factor).
inline uint64_t satMul(uint64_t a, uint64_t b) noexcept {
  uint64_t p = 0;
  return __builtin_mul_overflow(a, b, &p) ? kSaturated : p;
}

/// Duration from `begin` to `end` (ns): end - begin, or 0 when end is not after begin (a record whose end
/// was not given). Never wraps.
inline uint64_t span(uint64_t begin, uint64_t end) noexcept { return end > begin ? end - begin : 0; }

}  // namespace kc
