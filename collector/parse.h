// Parsers for the numbers, sizes and durations that users type (KCOUNT_* variables, kcount ctl options).
// One implementation for the injected library and the tool, so both accept and refuse the same text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kc {

/// Parses all of `text` as an unsigned integer in `base` (10, or 8 for file modes) with std::from_chars:
/// digits only, no sign, no blanks, no exponent, nothing after the digits. Returns nullopt for anything
/// else and for values above UINT64_MAX. Pure; thread-safe.
std::optional<uint64_t> parseUnsigned(std::string_view text, int base = 10);

/// Parses a size in bytes: a whole number, optionally followed by a binary unit K (or k), M, G or T, which
/// may be followed by B or iB (KB, KiB, kB, kiB, MB, MiB, ...; all powers of 1024: 1K = 1KB = 1KiB = 1024),
/// e.g. "4096", "64K", "4KB", "1MiB". Returns nullopt for anything else (signs, fractions, exponents,
/// blanks, lower-case m, g, t or b) and when the result passes UINT64_MAX. Pure; thread-safe.
std::optional<uint64_t> parseBytes(std::string_view text);
/// What parseBytes() accepts, in words, for messages about a size that it refused.
inline constexpr std::string_view kBytesAccepted =
    "a whole number of bytes, optionally with a unit K (or k), M, G or T, which may be followed by B or iB, all "
    "powers of 1024: 1048576, 64K, 4KiB, 1GB";

/// Parses a duration into ns: a decimal number ("10", "1.5", ".5"; no sign, no exponent, no blanks)
/// followed by ns, us, ms, s, m (or min), h, or nothing (seconds), e.g. "10s", "250ms", "1.5m", "2".
/// Fractions of a ns are cut. Returns nullopt for anything else and above UINT64_MAX ns (about 584
/// years). 0 ("0", "0s") is accepted: callers that need a positive duration refuse it themselves.
/// Pure; thread-safe. Used by the library's KCOUNT_INTERVAL / KCOUNT_CAPTURE_DURATION and by
/// `kcount ctl --duration`.
std::optional<uint64_t> parseDurationNs(std::string_view text);

/// Whether `text` is written as the parser accepts it (digits, then for sizes a unit K..T, for durations
/// a unit ns..h) but its value passes the largest the parser returns: UINT64_MAX (bytes for sizes, ns
/// for durations: about 584 years). For messages that say "too large" rather than "not a number".
/// Pure; thread-safe.
bool tooLargeUnsigned(std::string_view text, int base = 10);
bool tooLargeBytes(std::string_view text);
bool tooLargeDuration(std::string_view text);
/// What the messages say of a duration tooLargeDuration() accepts: "too large (the longest ...)".
inline constexpr std::string_view kDurationTooLarge =
    "too large (the longest duration is 18446744073709551615 ns, about 584 years)";

/// An on/off switch word of the KCOUNT_* settings: "1", "on", "yes" or "true" is true; "0", "off", "no" or
/// "false" is false; anything else (another case, blanks, "00", "") is nullopt. Pure; thread-safe.
std::optional<bool> parseSwitch(std::string_view text);

/// Whether a KCOUNT_DISABLE value disables kcount: unset or empty (""), or a switch word for off ("0",
/// "off", "no", "false"), does not; any other value does, "1", "on", "yes", "true" and also values that are
/// not switch words (" 0", "00", "disable"): a value meant to disable never profiles by mistake. Used by
/// the library and by `kcount ctl` (reading /proc/PID/environ). Pure; thread-safe.
bool disableRequested(std::string_view value);

/// Edit distance between two short names (insertions, deletions, substitutions and swaps of adjacent
/// characters, each 1; optimal string alignment), capped: returns `cap` + 1 as soon as it is larger than
/// `cap`, and for names longer than 64 bytes. Used to suggest a name for a misspelled one (KCOUNT_*
/// settings, kcount commands). Thread-safe, no allocation.
size_t nameDistance(std::string_view a, std::string_view b, size_t cap);

}  // namespace kc
