// Text tables fitted to a width: the terminal's width, and name columns narrowed to fit it.
// Pure functions but terminalWidth() (which reads the environment and standard output); no CUDA headers.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "tools/report.h"

namespace kc {

/// Narrowest a name column is cut to when a table is fitted to a width (display columns). A table that is
/// still too wide with its name columns this narrow is printed as it is without a width (names cut at
/// kMaxNameColumn only), never with its columns squeezed or wrapped.
inline constexpr size_t kMinFitNameColumn = 20;

/// A column of names that may be narrowed so that its table fits a width: row i (of the table's rows
/// after its headings) shows prefix[i] + names[i] + suffix[i], the name shortened. `prefix` and `suffix`
/// are empty (nothing around the names) or as long as `names`. Owns its strings; not thread-safe to share
/// while being filled.
struct NameColumn {
  size_t index = 0;                      // the column's position in each row
  std::vector<std::string> names;        // whole names (display text, escaped), one per row
  std::vector<std::string> prefix;       // an indent in a tree, or a whole cell not to cut ("(overall)")
  std::vector<std::string> suffix;       // marks after a name ("~")
  size_t widest = kMaxNameColumn;        // names are never shown wider than this (display columns)
  bool cut_end = false;                  // a list: cut at its end (ellipsize), not in the middle (elideDistinct)

  /// The column's cells (row order) with each name at most min(`cap`, widest) display columns: cut in the
  /// middle together (elideDistinct(), so different names stay different; a name may then be a little
  /// wider) or, with cut_end, at its end (ellipsize()). `cap` below 5 counts as 5.
  std::vector<std::string> cells(size_t cap) const;
};

/// Narrows the name columns `fit` of a text table so that its widest line takes at most `max_width`
/// display columns. `rows`: the table's cells, its `headings` first rows (never cut) then the rows that
/// `fit`'s vectors describe; a line is `indent` columns, then each column padded to its widest cell,
/// two spaces between columns. All name columns are cut to one cap, so the widest is shortened first;
/// the cap goes no lower than kMinFitNameColumn. Returns true when cells were replaced; false, with
/// `rows` unchanged, when `max_width` is 0, when the table already fits, or when it cannot fit.
bool fitTable(std::vector<std::vector<std::string>>& rows, size_t headings, const std::vector<NameColumn>& fit,
              size_t indent, size_t max_width);

/// Display columns the text tables fit by default: when standard output is a terminal, $COLUMNS if it
/// is a whole number from 1 to 100000, else the terminal's width (ioctl TIOCGWINSZ); 0 (no limit) when
/// standard output is not a terminal or its width is not known. Never fails.
size_t terminalWidth();

}  // namespace kc
