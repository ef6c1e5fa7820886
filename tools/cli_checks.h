// Validators for kcount's numeric command-line options, with short messages. CLI11's own
// PositiveNumber/NonNegativeNumber print their bound as a 300-digit double ("not in range 0.000000 to
// 1797...").
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>
#include <system_error>

namespace kc {

/// Accepts a decimal whole number from `lo` to `hi` (both included). Otherwise CLI11 reports
/// "--top: Value -1 is not a whole number from 0 to 10000" (usage error, exit 2). The name shown in
/// --help is "INT:from lo to hi".
inline CLI::Validator wholeNumber(long long lo, long long hi) {
  const std::string range = "from " + std::to_string(lo) + " to " + std::to_string(hi);
  CLI::Validator v(
      [lo, hi, range](std::string& in) -> std::string {
        long long value = 0;
        const char* end = in.data() + in.size();
        const auto [p, ec] = std::from_chars(in.data(), end, value);
        if (ec != std::errc() || p != end || value < lo || value > hi)
          return "Value " + in + " is not a whole number " + range;
        return {};
      },
      range);
  return v;
}

}  // namespace kc
