// "1 kernel", "3 kernels": a count and the noun in the number it takes, for the messages of the log reader
// and the text output of the tool. Header only; pure; thread-safe; throws only std::bad_alloc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kc {

/// The noun alone, as counted() picks it: `one` for n == 1, else `many` (default `one` + "s").
inline std::string plural(uint64_t n, std::string_view one, std::string_view many = {}) {
  if (n == 1) return std::string(one);
  return many.empty() ? std::string(one) + "s" : std::string(many);
}

/// "1 kernel", "3 kernels", "0 kernels": `n` and the noun in the number it takes. `many` defaults to
/// `one` + "s" ("1 launch" needs many = "launches"). The one plural helper of kcount's text output.
inline std::string counted(uint64_t n, std::string_view one, std::string_view many = {}) {
  return std::to_string(n) + " " + plural(n, one, many);
}

}  // namespace kc
