// Text tables fitted to a width: the terminal's width, and name columns narrowed to fit it.
// Pure functions but terminalWidth() (which reads the environment and standard output); no CUDA headers.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>
#include "tools/name_elision.h"


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
  /// Where each name differs from the names most like it, found once for all the widths tried (shared by
  /// copies; set by cells()).
  mutable std::shared_ptr<const std::vector<std::vector<size_t>>> differ_at;

  /// The column's cells (row order) with each name at most min(`cap`, widest) display columns: cut in the
  /// middle together (elideDistinct(), so different names stay different; a name that would then be wider
  /// is shown as its start, its part around where it differs from a like name and its end, "…" between)
  /// or, with cut_end, at its end (ellipsize()). `cap` below 5 counts as 5.
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

/// Narrowest a name column is cut to when a table still does not fit with every column that may be dropped
/// dropped (fitColumns()).
inline constexpr size_t kLastResortNameColumn = 5;

/// Narrowest `--width` accepted besides 0 (no limit): every text table fits it with its kept columns.
inline constexpr size_t kMinWidth = 60;

/// What fitColumns() did to a table: the columns it dropped, as indexes into the rows it was given (in the
/// order dropped), and their labels (one per group dropped, in that order).
struct DroppedColumns {
  std::vector<size_t> columns;
  std::vector<std::string> labels;
  bool empty() const { return columns.empty(); }
};

/// Fits a text table to `max_width` display columns, the one way every text table is fitted:
///  1. name columns `fit` narrowed (as fitTable(), not below kMinFitNameColumn);
///  2. while the table still does not fit, whole columns dropped: those of the highest `drop_rank` first
///     (columns of one rank, e.g. a change's "A", "B" and "change", go together); rank 0 is never dropped;
///  3. when only rank-0 columns are left and the table still does not fit, the names are narrowed down to
///     kLastResortNameColumn.
/// Numbers are never cut: a column is shown whole or not at all. `rows`: the table's cells, its `headings`
/// first rows then the rows `fit` describes (as fitTable()); cells of dropped columns are removed from every
/// row. `drop_rank` and `labels` have one entry per column (a missing rank counts as 0; a missing or empty
/// label is the column's first heading cell); `fit`'s indexes are those of the table as given. Returns the
/// columns dropped; with `max_width` 0, or a table that fits, nothing changes.
DroppedColumns fitColumns(std::vector<std::vector<std::string>>& rows, size_t headings,
                          const std::vector<NameColumn>& fit, size_t indent, size_t max_width,
                          const std::vector<unsigned>& drop_rank, const std::vector<std::string>& labels = {});

/// The line a table that lost columns prints above itself: "columns left out to fit 80 display columns:
/// CPU time, launch CPU (--width 0 shows them)". Wrapped at `max_width` (wrapLine()). Empty when nothing
/// was dropped.
std::string droppedColumnsLine(const DroppedColumns& dropped, size_t max_width);

/// `line` (one line, no newline) broken at spaces into lines of at most `max_width` display columns, the
/// lines after the first indented by the first's leading blanks plus `hang` (a hanging indent); a word longer
/// than a line is broken inside (at a character boundary). Lines joined with '\n', no newline at the end.
/// `max_width` 0: `line` unchanged.
std::string wrapLine(const std::string& line, size_t max_width, size_t hang = 4);

/// Every line of `text` longer than `max_width` wrapped (wrapLine()); the others unchanged. 0: unchanged.
std::string wrapText(const std::string& text, size_t max_width, size_t hang = 4);

/// Display columns the text tables fit by default: when standard output is a terminal, $COLUMNS if it
/// is a whole number from 1 to 100000, else the terminal's width (ioctl TIOCGWINSZ); 0 (no limit) when
/// standard output is not a terminal or its width is not known. Never fails.
size_t terminalWidth();

}  // namespace kc
