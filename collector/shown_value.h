// How kcount's messages show a KCOUNT_* value taken from an environment (the library's warnings, the
// `kcount run` and `kcount ctl` reasons), and a file path that would split a message line. Header only: it uses fmt, which the library and the tool both
// use header-only; the collector library itself does not include it.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace kc {

/// A setting's value as a message shows it: as given when it is a plain word (printable ASCII, no blank,
/// quote or backslash); else in double quotes, escaped by fmt's debug format ("{:?}"): a blank is visible,
/// and a newline, which would split the message over two lines, reads \n. "" shows as "". Pure;
/// thread-safe; throws only std::bad_alloc.
inline std::string shownSettingValue(std::string_view v) {
  const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return u > 0x20 && u < 0x7f && ch != '\'' && ch != '\\' && ch != '"';
  });
  return plain ? std::string(v) : fmt::format("{:?}", v);
}

/// A file path as a message shows it: as given, blanks and quotes included, unless it holds a control
/// character (a newline, tab, escape, ... : bytes below 0x20 and 0x7f) or starts with a double quote; then
/// in double quotes, escaped as shownSettingValue() escapes (fmt's "{:?}"), so the message stays one line
/// and such a path cannot be taken for a plain one. Pure; thread-safe; throws only std::bad_alloc.
inline std::string shownPath(std::string_view path) {
  const bool plain = !path.starts_with('"') && std::none_of(path.begin(), path.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return u < 0x20 || u == 0x7f;
  });
  return plain ? std::string(path) : fmt::format("{:?}", path);
}

}  // namespace kc
