#include "collector/parse.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace kc {

std::optional<uint64_t> parseUnsigned(std::string_view text, int base) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;  // from_chars takes '-'
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<uint64_t> parseBytes(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::optional<uint64_t> n = parseUnsigned(text.substr(0, digits));
  if (!n) return std::nullopt;
  std::string_view unit = text.substr(digits);
  if (unit.empty()) return n;
  unsigned shift = 0;
  switch (unit.front()) {
    case 'k': case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: return std::nullopt;
  }
  unit.remove_prefix(1);
  if (!unit.empty() && unit != "B" && unit != "iB") return std::nullopt;
  if (*n > (UINT64_MAX >> shift)) return std::nullopt;
  return *n << shift;
}

std::optional<bool> parseSwitch(std::string_view text) {
  if (text == "1" || text == "on" || text == "yes" || text == "true") return true;
  if (text == "0" || text == "off" || text == "no" || text == "false") return false;
  return std::nullopt;
}

bool disableRequested(std::string_view value) { return !value.empty() && parseSwitch(value) != false; }

std::optional<uint64_t> parseDurationNs(std::string_view text) {
  // The number: digits, optionally '.' and more digits (at least one digit in all). Checked here because
  // from_chars also reads "inf", "nan" and, in the general format, exponents.
  size_t at = 0, digits = 0;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at, ++digits;
  if (at < text.size() && text[at] == '.')
    for (++at; at < text.size() && text[at] >= '0' && text[at] <= '9';) ++at, ++digits;
  if (digits == 0) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + at, value, std::chars_format::fixed);
  if (ec != std::errc() || end != text.data() + at) return std::nullopt;
  const std::string_view unit = text.substr(at);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ns") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else return std::nullopt;
  const double ns = value * scale;
  if (!(ns < 18446744073709551616.0)) return std::nullopt;  // 2^64
  return static_cast<uint64_t>(ns);
}

namespace {
/// Digits only in `base` (10 or 8), at least one.
bool allDigits(std::string_view text, int base) {
  if (text.empty()) return false;
  for (char c : text)
    if (c < '0' || c >= '0' + base) return false;
  return true;
}
}  // namespace

bool tooLargeUnsigned(std::string_view text, int base) { return allDigits(text, base) && !parseUnsigned(text, base); }

bool tooLargeBytes(std::string_view text) {
  if (parseBytes(text)) return false;
  // The same text with the number made small parses: then only the value was too large.
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return false;
  return parseBytes(std::string("1") + std::string(text.substr(digits))).has_value();
}

bool tooLargeDuration(std::string_view text) {
  if (parseDurationNs(text)) return false;
  // Well formed (digits with at most one '.', and a unit that parses) is then only too large.
  size_t at = 0, digits = 0, dots = 0;
  for (; at < text.size() && ((text[at] >= '0' && text[at] <= '9') || text[at] == '.'); ++at)
    (text[at] == '.' ? dots : digits) += 1;
  if (digits == 0 || dots > 1) return false;
  return parseDurationNs("1" + std::string(text.substr(at))).has_value();
}

size_t nameDistance(std::string_view a, std::string_view b, size_t cap) {
  if (a.size() > b.size() + cap || b.size() > a.size() + cap || a.size() > 64 || b.size() > 64) return cap + 1;
  size_t prev2[65], prev[65], cur[65];
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t d = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d = std::min(d, prev2[j - 2] + 1);
      cur[j] = d;
      row_min = std::min(row_min, d);
    }
    if (row_min > cap) return cap + 1;
    std::copy(prev, prev + b.size() + 1, prev2);
    std::copy(cur, cur + b.size() + 1, prev);
  }
  return prev[b.size()];
}

}  // namespace kc
