// Text helpers of the tools (tools/text.h).
#include "tools/text.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <utf8.h>  // utfcpp (Debian libutfcpp-dev)

#include "collector/counted.h"
#include "collector/log_format.h"
#include "collector/log_reader.h"
#include "collector/saturating.h"

namespace kc {

std::string snapshotPeriodText(const LogData& d) {
  const std::string interval = d.meta("interval_ns");
  if (interval.empty()) return {};
  uint64_t ns = 0;
  std::from_chars(interval.data(), interval.data() + interval.size(), ns);
  // Snapshots are written when the library's writer thread drains (kDrainIntervalNs): a shorter
  // interval acts as that.
  return ns >= kDrainIntervalNs ? "every " + formatDuration(ns)
                                : fmt::format("every {} (KCOUNT_INTERVAL={}, below the {} drain interval)",
                                              formatDuration(kDrainIntervalNs), formatDuration(ns),
                                              formatDuration(kDrainIntervalNs));
}

std::string formatDuration(uint64_t ns) {
  if (ns == kSaturated) return "≥" + formatDuration(ns - 1);  // a sum held at 2^64 - 1: at least that
  if (ns < 1000) return fmt::format("{} ns", ns);
  // Three significant digits: rounded first, then the unit and the decimals chosen for the rounded text, so
  // 9999 ns is 10.0 µs (not 10.00 µs), 999500 ns 1.00 ms (not 1000 µs). Seconds take any number of digits.
  // Rounded half up on the integer ns, never through binary floating point (9995 ns is 10.0 µs: 9.995 as a
  // double is 9.99499..., which printed 9.99 µs).
  constexpr std::pair<int, const char*> kUnits[] = {{3, "µs"}, {6, "ms"}, {9, "s"}};  // powers of ten of ns
  for (const auto& [power, unit] : kUnits) {
    for (int decimals = 2; decimals >= 0; --decimals) {
      uint64_t q = 1;  // ns per unit of the last digit shown
      for (int i = 0; i < power - decimals; ++i) q *= 10;
      uint64_t scaled = ns / q + (ns % q >= q / 2 ? 1 : 0);  // the value in last digits, half up (no overflow)
      uint64_t one = 1;  // last digits per unit
      for (int i = 0; i < decimals; ++i) one *= 10;
      const std::string whole = std::to_string(scaled / one);
      if (whole.size() + decimals <= 3 || (decimals == 0 && std::string_view(unit) == "s"))
        return decimals == 0 ? whole + " " + unit
                             : fmt::format("{}.{:0{}} {}", whole, scaled % one, decimals, unit);
    }
  }
  return {};  // not reached: seconds take any number of digits
}

uint64_t roundedMean(uint64_t total, uint64_t n) noexcept {
  if (n == 0) return 0;
  const uint64_t q = total / n, r = total % n;
  return q + (r >= n - r ? 1 : 0);  // r / n >= 1/2, without overflow
}

std::string formatMeanDuration(uint64_t total_ns, uint64_t n) {
  return formatDuration(roundedMean(total_ns, n));
}

std::string launchesText(uint64_t launches, uint64_t mem_calls) {
  return counted(launches, "launch", "launches") +
         (mem_calls > 0 ? " (+" + counted(mem_calls, "memcpy/memset call") + ")" : std::string());
}

namespace {
/// percentChange()'s text for a != b, a > 0.
std::string changeText(double a, double b) {
  const double p = 100.0 * (b - a) / a;
  const double mag = p < 0 ? -p : p;
  // Ten times as much and more: a factor reads at a glance where "+504862%" does not.
  if (p >= 900) {
    const double factor = b / a;
    // One decimal below 100, judged on the rounded value: 99.949 is ×99.9, 99.96 is ×100.
    const std::string one = fmt::format("{:.1f}", factor);
    return "×" + (one.size() < 5 ? one : fmt::format("{:.0f}", factor));
  }
  if (mag >= 0.95) return fmt::format("{:+.0f}%", p);  // rounds to 1% or more: whole percent
  if (mag >= 0.05) return fmt::format("{:+.1f}%", p);
  return "<0.1%";  // not zero, but below what one decimal shows: no sign to misread as a direction
}
}  // namespace

std::string percentChange(uint64_t a, uint64_t b) {
  if (a == b) return "0%";
  if (a == 0) return "new";
  return changeText(static_cast<double>(a), static_cast<double>(b));
}

std::string meanPercentChange(double a, double b) {
  if (a == b) return "0%";
  if (a == 0) return "new";
  return changeText(a, b);
}

namespace {
/// Length (1 to 3 bytes) of the maximal subpart of the ill-formed UTF-8 at the start of `t` (Unicode
/// 15.0, section 3.9, "U+FFFD Substitution of Maximal Subparts"), where utf8::find_invalid(t) == 0: its
/// first byte and the bytes after it that still begin a well-formed character. utfcpp's own
/// replace_invalid() takes a whole broken sequence at once (one U+FFFD for an overlong form or a surrogate
/// of 2 to 4 bytes), so the subpart is found here: a prefix of 2 or 3 bytes begins a character exactly when
/// completing it with continuation bytes (0x80) gives text utfcpp calls valid (one character: the
/// character at t[0] is longer than the prefix, since t is invalid at 0).
size_t maximalSubpart(std::string_view t) noexcept {
  for (size_t k = std::min<size_t>(3, t.size()); k >= 2; --k) {
    for (size_t fill = 1; k + fill <= 4; ++fill) {
      char buf[4];
      std::memcpy(buf, t.data(), k);
      std::memset(buf + k, 0x80, fill);
      if (utf8::is_valid(std::string_view(buf, k + fill))) return k;
    }
  }
  return 1;
}

/// Offset of the first byte of `s` that does not begin a valid UTF-8 character (utfcpp), s.size() if none.
size_t firstInvalid(std::string_view s) noexcept { return std::min(utf8::find_invalid(s), s.size()); }
}  // namespace

std::string replaceInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  while (!s.empty()) {
    const size_t bad = firstInvalid(s);
    out.append(s.substr(0, bad));
    if (bad == s.size()) break;
    out += "\xEF\xBF\xBD";  // U+FFFD
    s.remove_prefix(bad + maximalSubpart(s.substr(bad)));
  }
  return out;
}

std::string escapeInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  while (!s.empty()) {
    const size_t bad = firstInvalid(s);
    out.append(s.substr(0, bad));
    if (bad == s.size()) break;
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[bad]));
    s.remove_prefix(bad + 1);
  }
  return out;
}

std::string csvField(std::string_view raw) {
  const bool valid = utf8::is_valid(raw);
  const std::string replaced = valid ? std::string() : escapeInvalidUtf8(raw);
  const std::string_view s = valid ? raw : std::string_view(replaced);
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {
/// displayName() and displayText(): control bytes and bytes of no valid UTF-8 character as escapes;
/// with `path`, '/' and '\\' too (a range name inside a path). A byte that begins no valid character
/// (firstInvalid) is escaped alone and the text after it checked again: the rest of its maximal invalid
/// subpart are continuation bytes, which begin none either, so every byte of the subpart is "\xHH".
std::string escapeForDisplay(std::string_view text, bool path) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t bad = firstInvalid(text);
    for (const char ch : text.substr(0, bad)) {
      const auto c = static_cast<unsigned char>(ch);
      switch (c) {
        case '/': out += path ? "\\/" : "/"; break;
        case '\\': out += path ? "\\\\" : "\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f)
            out += fmt::format("\\x{:02x}", c);
          else
            out += ch;  // printable ASCII, or a byte of a valid UTF-8 character
      }
    }
    if (bad == text.size()) break;
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[bad]));
    text.remove_prefix(bad + 1);
  }
  return out;
}
}  // namespace

std::string displayName(std::string_view name) {
  if (name.empty()) return "(empty name)";
  std::string out = escapeForDisplay(name, true);
  // ": " joins a named domain to its range's name ("mylib: gemm"): in a name it is "\: ", so a range of the
  // default domain named "mylib: gemm" reads apart. ('\' itself is "\\", so "\: " cannot come from a name.)
  for (size_t at = out.find(": "); at != std::string::npos; at = out.find(": ", at + 3)) out.insert(at, "\\");
  // The labels of rows that are no range of that name ("(no range)", "(overall)", ...) get a '\' before
  // them when a range is so named, so that diff and kernels --range do not take one for the other.
  const bool label = name == "(no range)" || name == kOverallRow || name == "(empty name)" || name == kUnmatchedLabel ||
                     name == kUnresolvedLabel || name.starts_with("(lost range ");
  if (label) out.insert(0, "\\");
  return out;
}

std::string displayText(std::string_view text) {
  // The common case: valid UTF-8 without control bytes, returned as is.
  const bool plain = std::none_of(text.begin(), text.end(), [](char ch) {
                       const auto c = static_cast<unsigned char>(ch);
                       return c < 0x20 || c == 0x7f;
                     }) && utf8::is_valid(text);
  return plain ? std::string(text) : escapeForDisplay(text, false);
}

}  // namespace kc
