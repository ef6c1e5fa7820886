// Text helpers of the tools: durations, counts of launches, percent changes, CSV fields, and names and
// texts from a log escaped for display (invalid UTF-8, control bytes). Pure functions, thread-safe; no JSON
// and no Summary, so any tools file (ctl, run) can include this.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kc {

struct LogData;

/// How often a summary-mode log's library wrote snapshots, from metadata `interval_ns`: "every 10 s", or
/// "every 100 ms (KCOUNT_INTERVAL=50 ms, below the 100 ms drain interval)"; "" without that key.
std::string snapshotPeriodText(const LogData& d);

/// "812 ns", "3.25 µs", "14.0 ms", "2.51 s"; a sum held at 2^64 - 1 (kSaturated) "≥18446744074 s".
std::string formatDuration(uint64_t ns);
/// A mean duration, total_ns / n, rounded to the nearest ns (half up) and shown with formatDuration():
/// the one way per-instance and per-kernel times are written in text (verdicts, tables), so that a
/// sentence and a table never show one value two ways. n == 0 gives formatDuration(0).
std::string formatMeanDuration(uint64_t total_ns, uint64_t n);
/// total_ns / n rounded to the nearest ns (half up), without overflow; 0 for n == 0.
uint64_t roundedMean(uint64_t total, uint64_t n) noexcept;

/// "9660 launches (+6 memcpy/memset calls)": kernel and graph launches, with the memcpy/memset API calls
/// (launch records with kLaunchMemOp) named apart when there are any; as summary, check and ctl show them.
std::string launchesText(uint64_t launches, uint64_t mem_calls);

/// Change from a to b in percent, as diffs print it: "+12%", "-4%" at 1% and above (whole percent);
/// "+0.4%", "-0.3%" with one decimal below 1%; "<0.1%" (no sign) when it is not zero but rounds to 0.0;
/// "0%" when a == b; "new" when a == 0 < b; a factor from ten times a on ("×10.0", "×5037": b / a, one
/// decimal below 100). Never "-0%".
std::string percentChange(uint64_t a, uint64_t b);
/// percentChange() of two values that need not be whole (per-instance means, a, b >= 0): the same text.
/// Pure.
std::string meanPercentChange(double a, double b);

/// One CSV field (RFC 4180): quoted, with '"' doubled, if it holds a comma, a quote or a line break.
/// Always valid UTF-8: each byte of `s` that is not part of a valid UTF-8 character is written "\xHH"
/// (escapeInvalidUtf8()), as the text tables write it, so that names that differ in such bytes stay
/// different (JSON, which must hold text, has U+FFFD there instead).
std::string csvField(std::string_view s);

/// `s` with each byte that is not part of a valid UTF-8 character (utfcpp's utf8::find_invalid, byte by
/// byte: every byte of a maximal invalid subpart) written "\xHH", lower-case hex; everything else, control
/// bytes and '\' included, as it is. Valid text comes back unchanged. CSV fields and the SQLite export's
/// text: valid UTF-8, and the bytes can be read back (but for a name that holds the text "\xHH" itself).
/// Thread-safe.
std::string escapeInvalidUtf8(std::string_view s);

/// `s` with each maximal invalid subpart replaced by U+FFFD (Unicode 15.0, section 3.9: a byte that begins
/// no well-formed character, with the bytes after it that still fit one, 1 to 3 bytes; "\xE2\x82A" gives
/// U+FFFD "A", an overlong "\xC0\xAF" or a surrogate "\xED\xA0\x80" one U+FFFD per byte), as the JSON
/// outputs do (nlohmann::json's error_handler_t::replace), and as Python's errors="replace" decodes it.
/// Validation by utfcpp (utf8::find_invalid, utf8::is_valid). Thread-safe.
std::string replaceInvalidUtf8(std::string_view s);

/// Row label of the records whose range is unknown (Summary::unresolved: their Scope record was lost to
/// damage). Such a row has no verdict.
inline constexpr std::string_view kUnresolvedLabel = "(unknown range: definition lost to damage)";
/// The ranges entry of `kcount kernels` (and the report page) for the kernels whose correlation id matches no
/// launch. A range so named is written "\(unmatched)" (displayName()), so the two stay apart.
inline constexpr std::string_view kUnmatchedLabel = "(unmatched)";
/// Path of the whole-process row of `summary --format csv` (last row of each log: every matched launch,
/// kernel and their times, in the incl_* fields), as `kcount diff` names the whole run. Not a range:
/// "(no range)" is what ran outside every range.
inline constexpr std::string_view kOverallRow = "(overall)";

/// A range name as text tables and CSV show it, so that a path reads one way: '/' becomes "\/", '\'
/// becomes "\\", newline "\n", carriage return "\r", tab "\t", other bytes below 0x20 and 0x7f "\xHH";
/// an empty name is "(empty name)". Valid UTF-8 characters of 0x80 and above are kept; each byte that is
/// not part of a valid UTF-8 character (utfcpp's utf8::find_invalid) is "\xHH" too, so the result is
/// valid UTF-8 and the name's bytes can be read back. JSON keeps the raw name (invalid bytes as U+FFFD).
/// So that labels cannot be taken for names: ": " in a name is "\: " (": " joins a named NVTX domain to
/// its range's name, displayRangeName()), and a name that is one of the row labels "(no range)",
/// "(overall)", "(empty name)", kUnmatchedLabel, kUnresolvedLabel or begins with "(lost range " gets a
/// leading '\'.
std::string displayName(std::string_view name);

/// Text from a log (a kernel name, a sentence naming one) as text tables and sentences show it: newline
/// "\n", carriage return "\r", tab "\t", other bytes below 0x20 and 0x7f "\xHH", and each byte that is not
/// part of a valid UTF-8 character "\xHH", as displayName() does for range names; '/' and '\' are kept
/// (a kernel name is not a path). Valid text comes back unchanged. CSV and JSON write the
/// name as recorded instead, with invalid bytes as U+FFFD (csvField(), dumpJson()).
std::string displayText(std::string_view text);

}  // namespace kc
