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

/// --width's values: 0 (no limit) or a whole number from `lo` (the narrowest a table fits) to `hi`. Otherwise
/// "--width: Value 40 is not 0 nor a whole number from 60 to 100000" (usage error, exit 2).
inline CLI::Validator widthNumber(long long lo, long long hi) {
  const std::string range = "0 or from " + std::to_string(lo) + " to " + std::to_string(hi);
  CLI::Validator v(
      [lo, hi](std::string& in) -> std::string {
        long long value = 0;
        const char* end = in.data() + in.size();
        const auto [p, ec] = std::from_chars(in.data(), end, value);
        if (ec != std::errc() || p != end || (value != 0 && (value < lo || value > hi)))
          return "Value " + in + " is not 0 (no limit) nor a whole number from " + std::to_string(lo) + " to " +
                 std::to_string(hi) + " (the narrowest width the tables fit is " + std::to_string(lo) + ")";
        return {};
      },
      range);
  return v;
}

/// Accepts a decimal number (integer or fraction, e.g. "0.5") greater than 0 and at most `hi`. Otherwise
/// "Value X is not a number more than 0 and at most HI" (usage error, exit 2).
inline CLI::Validator positiveDecimal(double hi) {
  std::string shown = std::to_string(static_cast<long long>(hi));
  const std::string range = "more than 0 and at most " + shown;
  CLI::Validator v(
      [hi, range](std::string& in) -> std::string {
        double value = 0;
        const char* end = in.data() + in.size();
        const auto [p, ec] = std::from_chars(in.data(), end, value);
        if (ec != std::errc() || p != end || !(value > 0) || value > hi)
          return "Value " + in + " is not a number " + range;
        return {};
      },
      range);
  return v;
}

}  // namespace kc
