#include "tools/table_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "collector/parse.h"
#include "tools/kernel_names.h"

namespace kc {
namespace {

/// Widest cell of each column of `rows` (display columns); as many as the longest row has cells.
std::vector<size_t> columnWidths(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w;
  for (const auto& r : rows) {
    if (r.size() > w.size()) w.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], displayWidth(r[i]));
  }
  return w;
}

/// Columns a line of a table with column widths `w` takes: `indent`, the widths, two between columns.
size_t lineWidth(const std::vector<size_t>& w, size_t indent) {
  size_t total = indent;
  for (size_t x : w) total += x;
  return w.empty() ? total : total + 2 * (w.size() - 1);
}

/// Widest of the heading cells of column `index` (the first `headings` rows) and of `cells`.
size_t widthWith(const std::vector<std::vector<std::string>>& rows, size_t headings, size_t index,
                 const std::vector<std::string>& cells) {
  size_t w = 0;
  for (size_t r = 0; r < headings && r < rows.size(); ++r)
    if (index < rows[r].size()) w = std::max(w, displayWidth(rows[r][index]));
  for (const auto& c : cells) w = std::max(w, displayWidth(c));
  return w;
}

/// Widest name of `fit` as it may be shown (at most its column's `widest`), display columns.
size_t widestName(const std::vector<NameColumn>& fit) {
  size_t cap = 0;
  for (const auto& c : fit)
    for (const auto& n : c.names) cap = std::max(cap, std::min(displayWidth(n), c.widest));
  return cap;
}

/// Columns the widest line of a table takes with `fit`'s names at `cap` (NameColumn::cells(), left in
/// `cells`, one list per column), its other columns and separators taking `other`.
size_t widthAt(const std::vector<std::vector<std::string>>& rows, size_t headings, const std::vector<NameColumn>& fit,
               size_t other, size_t cap, std::vector<std::vector<std::string>>& cells) {
  cells.clear();
  size_t width = other;
  for (const auto& c : fit) {
    cells.push_back(c.cells(cap));
    width += widthWith(rows, headings, c.index, cells.back());
  }
  return width;
}

}  // namespace

std::vector<std::string> NameColumn::cells(size_t cap) const {
  const size_t width = std::max<size_t>(5, std::min(cap, widest));
  std::vector<std::string> shown;
  if (cut_end)
    for (const auto& n : names) shown.push_back(ellipsize(n, width));
  else
    shown = elideDistinct(names, width);
  for (size_t i = 0; i < shown.size(); ++i)
    shown[i] = (i < prefix.size() ? prefix[i] : std::string()) + shown[i] + (i < suffix.size() ? suffix[i] : std::string());
  return shown;
}

bool fitTable(std::vector<std::vector<std::string>>& rows, size_t headings, const std::vector<NameColumn>& fit,
              size_t indent, size_t max_width) {
  if (max_width == 0 || fit.empty()) return false;
  const std::vector<size_t> w = columnWidths(rows);
  const size_t total = lineWidth(w, indent);
  const size_t widest = widestName(fit);
  if (total <= max_width || widest < kMinFitNameColumn) return false;
  size_t other = total;  // the columns and separators that are not cut
  for (const auto& c : fit) other -= c.index < w.size() ? w[c.index] : 0;
  // One cap for every name column. elideDistinct() may keep names wider than the cap to tell them apart,
  // so each cap is measured: the narrowest first (a table that does not fit then never does), then the
  // widest cap that fits, by bisection (a few elideDistinct() calls, not one per column of width).
  std::vector<std::vector<std::string>> best, cells;
  if (widthAt(rows, headings, fit, other, kMinFitNameColumn, best) > max_width) return false;
  for (size_t lo = kMinFitNameColumn, hi = widest; lo < hi;) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    if (widthAt(rows, headings, fit, other, mid, cells) <= max_width) {
      lo = mid;
      best = std::move(cells);
    } else {
      hi = mid - 1;
    }
  }
  for (size_t k = 0; k < fit.size(); ++k)
    for (size_t i = 0; i < best[k].size() && headings + i < rows.size(); ++i)
      if (fit[k].index < rows[headings + i].size()) rows[headings + i][fit[k].index] = std::move(best[k][i]);
  return true;
}

size_t terminalWidth() {
  if (isatty(STDOUT_FILENO) == 0) return 0;
  if (const char* columns = std::getenv("COLUMNS")) {
    const std::optional<uint64_t> n = parseUnsigned(columns);
    if (n && *n >= 1 && *n <= 100000) return static_cast<size_t>(*n);
  }
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

}  // namespace kc
