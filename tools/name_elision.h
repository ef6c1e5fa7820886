// Names shortened in the middle for the text tables (elideMiddle(), elideDistinct()), so that different
// names stay different, and kernels whose short names read alike told apart (tellKernelsApart()).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kc {

/// Widest range or kernel name column of the text tables (summary, kernels, diff), in display columns
/// (displayWidth(): a wide CJK character takes two): a longer name is shortened in the middle with
/// elideMiddle(). JSON and CSV keep full names.
inline constexpr size_t kMaxNameColumn = 60;
/// `s` if it takes at most `max_width` display columns (`max_width` >= 5, less counts as 5), else its head
/// and tail joined by "…" so that the result takes exactly `max_width` columns, or one less where a wide
/// character would be split; never cuts inside a UTF-8 sequence nor between a character and its combining
/// marks.
std::string elideMiddle(std::string_view s, size_t max_width = kMaxNameColumn);
/// Each of `names` shortened with elideMiddle() to `max_width` display columns, except that names that
/// differ but would be shortened to the same text are shortened less: their width grows to one at
/// which the kept head or tail reaches a character where they differ, with the rest of the word (letters
/// and digits, at most 24 more) that character starts or ends, so "…uniform_and_transform" and
/// "…normal_and_transform" read apart, not "…m_and_transform" and "…l_and_transform" (the smallest for two such names;
/// in a larger group, the longest start and the longest end any other name shares with it, found among
/// its neighbours in sorted order: at worst the full names), so rows of a text table stay
/// distinguishable; the other names are then shortened to the
/// widest such width, not to `max_width` (the column is that wide anyway; a wider head and tail keep
/// different names different). Equal names give equal results. Same order and
/// size as `names`. Time: per pass, a sort of each group of clashing names (a chain of 256 nested ranges,
/// whose 256 paths all clash: 2.7 s for `kcount summary`, was 32 s with a comparison of every pair).
std::vector<std::string> elideDistinct(const std::vector<std::string>& names, size_t max_width = kMaxNameColumn);

/// Tells different kernels apart in text: `shown[i]` is the text of the recorded kernel name `names[i]`;
/// every group of different names shown alike (short names that differ past kMaxShortName characters, or
/// only in what the short form drops: nested template arguments) is shown instead by its demangled names
/// (escaped, displayText()), shortened in the middle together to `max_width` display columns (elideDistinct()),
/// so the part where they differ shows. Equal names keep equal texts; other texts are left as they are.
void tellKernelsApart(std::vector<std::string>& shown, const std::vector<std::string>& names,
                      size_t max_width = kMaxNameColumn);

}  // namespace kc
