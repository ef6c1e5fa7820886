#include "tools/table_width.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "collector/parse.h"
#include "tools/kernel_names.h"
#include "tools/name_elision.h"

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

/// `s` in at most `width` display columns keeping a few characters around each byte of `at` (where it
/// differs from like names), its start and its end, "…" for each run left out. Empty when the places of
/// `at` alone take more than `width`. A name that fits is unchanged.
std::string elideAround(std::string_view s, const std::vector<size_t>& at, size_t width) {
  if (displayWidth(s) <= width) return std::string(s);
  std::vector<size_t> off, cw;  // each character's byte offset and columns
  for (size_t i = 0; i < s.size();) {
    const DisplayChar c = nextDisplayChar(s, i);
    off.push_back(i);
    cw.push_back(c.width);
    i += c.bytes;
  }
  const size_t n = off.size();
  if (n == 0) return std::string(s);
  std::vector<bool> keep(n, false);
  for (size_t p : at) {
    const size_t ci = static_cast<size_t>(std::upper_bound(off.begin(), off.end(), std::min(p, s.size() - 1)) - off.begin()) - 1;
    for (size_t k = ci >= 2 ? ci - 2 : 0; k < std::min(n, ci + 4); ++k) keep[k] = true;
  }
  size_t shown = 0;  // columns of the text as kept: the characters kept, one "…" per run left out
  for (size_t k = 0; k < n; ++k)
    if (keep[k]) shown += cw[k];
    else if (k == 0 || keep[k - 1]) shown += 1;
  if (shown > width) return {};
  // Keeping character k (left out): its columns, less the "…" of its run, plus one for each part of the
  // run left on either side.
  auto grow = [&](size_t k) {
    const size_t after = shown + cw[k] + (k > 0 && !keep[k - 1] ? 1 : 0) + (k + 1 < n && !keep[k + 1] ? 1 : 0) - 1;
    if (after > width) return false;
    keep[k] = true;
    shown = after;
    return true;
  };
  // The room left: the start and the end grow in turn, a character at a time.
  size_t head = 0, tail = n;  // next character of the start to keep; the end kept from `tail`
  for (bool grew = true; grew;) {
    grew = false;
    while (head < n && keep[head]) ++head;
    if (head < n) grew = grow(head) || grew;
    while (tail > 0 && keep[tail - 1]) --tail;
    if (tail > 0) grew = grow(tail - 1) || grew;
  }
  std::string out;
  for (size_t k = 0; k < n; ++k) {
    const size_t end = k + 1 < n ? off[k + 1] : s.size();
    if (keep[k]) out += s.substr(off[k], end - off[k]);
    else if (k == 0 || keep[k - 1]) out += "…";
  }
  return out;
}

/// Where each name differs from the names most like it: the first byte not in the common start of its
/// neighbours in byte order, the last byte not in the common end of its neighbours in reversed byte order.
std::vector<std::vector<size_t>> differences(const std::vector<std::string>& names) {
  const size_t n = names.size();
  std::vector<std::vector<size_t>> at(n);
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  auto neighbours = [&](auto less, auto mark) {
    std::sort(order.begin(), order.end(), less);
    for (size_t k = 0; k < n; ++k) {
      const std::string& a = names[order[k]];
      for (size_t m = k; m-- > 0;)  // the previous different name
        if (names[order[m]] != a) {
          mark(order[k], names[order[m]]);
          break;
        }
      for (size_t m = k + 1; m < n; ++m)  // the next different name
        if (names[order[m]] != a) {
          mark(order[k], names[order[m]]);
          break;
        }
    }
  };
  neighbours([&](size_t x, size_t y) { return names[x] < names[y]; },
             [&](size_t i, const std::string& b) {
               const std::string& a = names[i];
               size_t p = 0;
               while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
               at[i].push_back(p);
             });
  neighbours(
      [&](size_t x, size_t y) {
        return std::lexicographical_compare(names[x].rbegin(), names[x].rend(), names[y].rbegin(), names[y].rend());
      },
      [&](size_t i, const std::string& b) {
        const std::string& a = names[i];
        size_t q = 0;
        while (q < a.size() && q < b.size() && a[a.size() - 1 - q] == b[b.size() - 1 - q]) ++q;
        if (q < a.size()) at[i].push_back(a.size() - 1 - q);
      });
  for (auto& v : at) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return at;
}

/// Names elideDistinct() left wider than `width` (to tell them apart) shown around the places they differ
/// from the names most like them instead (elideAround(); `at`: differences()), when that keeps every
/// different name different.
void narrowDistinct(const std::vector<std::string>& names, const std::vector<std::vector<size_t>>& at,
                    std::vector<std::string>& shown, size_t width) {
  std::vector<size_t> wide;
  for (size_t i = 0; i < names.size(); ++i)
    if (displayWidth(shown[i]) > width) wide.push_back(i);
  if (wide.empty()) return;
  std::vector<std::string> tried = shown;
  std::map<std::string_view, size_t> done;  // a name shown on several rows: measured once
  for (size_t i : wide) {
    if (const auto it = done.find(names[i]); it != done.end()) {
      tried[i] = tried[it->second];
      continue;
    }
    done[names[i]] = i;
    const std::string t = elideAround(names[i], at[i], width);
    if (!t.empty()) tried[i] = t;
  }
  // A name whose new text another name's text equals keeps elideDistinct()'s (they differ by it), then
  // checked again: still alike, every name keeps elideDistinct()'s.
  for (int pass = 0; pass < 2; ++pass) {
    std::map<std::string, std::vector<size_t>> rows_of;  // shown text -> the rows showing it
    for (size_t i = 0; i < names.size(); ++i) rows_of[tried[i]].push_back(i);
    bool alike = false;
    for (const auto& [text, rows] : rows_of)
      for (size_t r : rows)
        if (names[r] != names[rows.front()]) {
          alike = true;
          for (size_t x : rows) tried[x] = shown[x];
          break;
        }
    if (!alike) {
      shown = std::move(tried);
      return;
    }
  }
}

}  // namespace

std::vector<std::string> NameColumn::cells(size_t cap) const {
  const size_t width = std::max<size_t>(5, std::min(cap, widest));
  std::vector<std::string> shown;
  if (cut_end) {
    for (const auto& n : names) shown.push_back(ellipsize(n, width));
  } else {
    shown = elideDistinct(names, width);
    if (!differ_at) differ_at = std::make_shared<std::vector<std::vector<size_t>>>(differences(names));
    narrowDistinct(names, *differ_at, shown, width);
  }
  for (size_t i = 0; i < shown.size(); ++i)
    shown[i] = (i < prefix.size() ? prefix[i] : std::string()) + shown[i] + (i < suffix.size() ? suffix[i] : std::string());
  return shown;
}

namespace {

/// fitTable() with names cut no narrower than `min_cap`.
/// With `scan` and `widen`, the narrowest cap that fits is then widened by bisection (the widest cap found
/// that fits; widths are not monotonic in the cap, so it is one that fits, not always the widest).
bool fitNames(std::vector<std::vector<std::string>>& rows, size_t headings, const std::vector<NameColumn>& fit,
              size_t indent, size_t max_width, size_t min_cap, bool scan = false, bool widen = false) {
  if (max_width == 0 || fit.empty()) return false;
  const std::vector<size_t> w = columnWidths(rows);
  const size_t total = lineWidth(w, indent);
  const size_t widest = widestName(fit);
  if (total <= max_width || widest < min_cap) return false;
  size_t other = total;  // the columns and separators that are not cut
  for (const auto& c : fit) other -= c.index < w.size() ? w[c.index] : 0;
  // One cap for every name column. elideDistinct() may keep names wider than the cap to tell them apart,
  // so each cap is measured: the narrowest first (a table that does not fit then never does), then the
  // widest cap that fits, by bisection (a few elideDistinct() calls, not one per column of width).
  std::vector<std::vector<std::string>> best, cells;
  bool scanned = false;  // `best` is the widest cap's that fits, found by the scan
  if (widthAt(rows, headings, fit, other, min_cap, best) > max_width) {
    // Names kept wide to tell them apart at a narrow cap may be narrower at a wider one: with `scan`, the
    // narrowest cap that fits, one at a time (the room left goes to columns fitColumns() brings back).
    if (!scan) return false;
    size_t cap = min_cap + 1;
    while (cap <= widest && widthAt(rows, headings, fit, other, cap, best) > max_width) ++cap;
    if (cap > widest) return false;
    scanned = !widen;
    min_cap = cap;
  }
  for (size_t lo = min_cap, hi = widest; lo < hi && !scanned;) {
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

/// `rows` with only the columns `keep` (indexes, ascending), and `fit` renumbered for them (a name column
/// not kept left out).
std::vector<std::vector<std::string>> keepColumns(const std::vector<std::vector<std::string>>& rows,
                                                  const std::vector<size_t>& keep, const std::vector<NameColumn>& fit,
                                                  std::vector<NameColumn>& kept_fit) {
  std::vector<std::vector<std::string>> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    std::vector<std::string> row;
    row.reserve(keep.size());
    for (size_t c : keep)
      if (c < r.size()) row.push_back(r[c]);
    out.push_back(std::move(row));
  }
  kept_fit.clear();
  for (const auto& c : fit) {
    const auto at = std::find(keep.begin(), keep.end(), c.index);
    if (at == keep.end()) continue;
    kept_fit.push_back(c);
    kept_fit.back().index = static_cast<size_t>(at - keep.begin());
  }
  return out;
}

/// Whether every line of `rows` fits `max_width` with `indent`.
bool fits(const std::vector<std::vector<std::string>>& rows, size_t indent, size_t max_width) {
  return lineWidth(columnWidths(rows), indent) <= max_width;
}

}  // namespace

bool fitTable(std::vector<std::vector<std::string>>& rows, size_t headings, const std::vector<NameColumn>& fit,
              size_t indent, size_t max_width) {
  return fitNames(rows, headings, fit, indent, max_width, kMinFitNameColumn);
}

DroppedColumns fitColumns(std::vector<std::vector<std::string>>& rows, size_t headings,
                          const std::vector<NameColumn>& fit, size_t indent, size_t max_width,
                          const std::vector<unsigned>& drop_rank, const std::vector<std::string>& labels) {
  DroppedColumns dropped;
  if (max_width == 0 || rows.empty() || fits(rows, indent, max_width)) return dropped;
  size_t columns = 0;
  for (const auto& r : rows) columns = std::max(columns, r.size());
  auto rank = [&](size_t c) { return c < drop_rank.size() ? drop_rank[c] : 0u; };
  std::vector<size_t> keep(columns);
  for (size_t c = 0; c < columns; ++c) keep[c] = c;
  auto labelOf = [&](size_t c) {
    std::string label = c < labels.size() ? labels[c] : std::string();
    for (size_t h = 0; h < headings && h < rows.size() && label.empty(); ++h)
      if (c < rows[h].size()) label = rows[h][c];
    return label;
  };
  std::vector<NameColumn> kept_fit;
  for (;;) {
    std::vector<std::vector<std::string>> kept = keepColumns(rows, keep, fit, kept_fit);
    fitNames(kept, headings, kept_fit, indent, max_width, kMinFitNameColumn);
    unsigned highest = 0;
    for (size_t c : keep) highest = std::max(highest, rank(c));
    if (fits(kept, indent, max_width) || highest == 0) {
      if (!fits(kept, indent, max_width)) {  // only columns never dropped left: names as narrow as can be
        kept = keepColumns(rows, keep, fit, kept_fit);
        if (fitNames(kept, headings, kept_fit, indent, max_width, kLastResortNameColumn, /*scan=*/true)) {
          // Names that fit only at a cap wider than the narrowest: columns dropped while they were measured
          // at the narrowest come back, the last dropped first, while the table fits.
          std::vector<std::vector<std::string>> named = rows;
          for (const auto& c : kept_fit)
            for (size_t r = headings; r < kept.size(); ++r) named[r][keep[c.index]] = kept[r][c.index];
          for (size_t g = dropped.labels.size(); g-- > 0 && !dropped.empty();) {
            std::vector<size_t> back = keep, group;
            for (size_t c : dropped.columns)
              if (labelOf(c) == dropped.labels[g]) group.push_back(c);
            back.insert(back.end(), group.begin(), group.end());
            std::sort(back.begin(), back.end());
            std::vector<NameColumn> unused;
            if (!fits(keepColumns(named, back, {}, unused), indent, max_width)) break;
            keep = std::move(back);
            for (size_t c : group) std::erase(dropped.columns, c);
            dropped.labels.erase(dropped.labels.begin() + static_cast<long>(g));
          }
          // The names then take the room left by the columns that stayed out.
          kept = keepColumns(rows, keep, fit, kept_fit);
          fitNames(kept, headings, kept_fit, indent, max_width, kLastResortNameColumn, /*scan=*/true, /*widen=*/true);
        }
      }
      rows = std::move(kept);
      return dropped;
    }
    // The columns of the highest rank go, together; named once, by their label.
    std::vector<size_t> left;
    for (size_t c : keep) {
      if (rank(c) != highest) {
        left.push_back(c);
        continue;
      }
      dropped.columns.push_back(c);
      const std::string label = labelOf(c);
      if (!label.empty() && std::find(dropped.labels.begin(), dropped.labels.end(), label) == dropped.labels.end())
        dropped.labels.push_back(label);
    }
    keep = std::move(left);
  }
}

std::string droppedColumnsLine(const DroppedColumns& dropped, size_t max_width) {
  if (dropped.empty()) return {};
  std::string list;
  for (const auto& l : dropped.labels) list += (list.empty() ? "" : ", ") + l;
  return wrapLine("columns left out to fit " + std::to_string(max_width) + " display columns: " + list +
                      " (--width 0 shows them)",
                  max_width);
}

std::string wrapLine(const std::string& line, size_t max_width, size_t hang) {
  if (max_width == 0 || displayWidth(line) <= max_width) return line;
  const size_t lead = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
  // The continuation's indent, never so deep that less than half a line is left for text.
  const std::string indent(std::min(lead + hang, max_width / 2), ' ');
  std::string out, cur = line.substr(0, lead);
  size_t cur_w = lead;
  bool first_word = true;  // no word on the current line yet
  auto newLine = [&] {
    while (!cur.empty() && cur.back() == ' ') cur.pop_back();
    out += cur + '\n';
    cur = indent;
    cur_w = indent.size();
    first_word = true;
  };
  size_t i = lead;
  size_t blanks = 0;  // blanks before the word (kept within a line, dropped at a break)
  while (i < line.size()) {
    const size_t sp = line.find(' ', i);
    const size_t end = sp == std::string::npos ? line.size() : sp;
    std::string_view word(line.data() + i, end - i);
    const size_t ww = displayWidth(word);
    if (!first_word && cur_w + blanks + ww > max_width) newLine();
    if (!first_word) {
      cur += std::string(blanks, ' ');
      cur_w += blanks;
    }
    // A word longer than the room left on an empty line: cut at a character boundary.
    while (cur_w + displayWidth(word) > max_width && cur_w < max_width) {
      const size_t take = headBytes(word, max_width - cur_w);
      if (take == 0) break;
      cur += std::string(word.substr(0, take));
      word.remove_prefix(take);
      newLine();
    }
    cur += std::string(word);
    cur_w += displayWidth(word);
    first_word = false;
    i = end;
    for (blanks = 0; i < line.size() && line[i] == ' '; ++i) ++blanks;
  }
  while (!cur.empty() && cur.back() == ' ') cur.pop_back();
  out += cur;
  return out;
}

std::string wrapText(const std::string& text, size_t max_width, size_t hang) {
  if (max_width == 0) return text;
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const size_t end = nl == std::string::npos ? text.size() : nl;
    out += wrapLine(text.substr(at, end - at), max_width, hang);
    if (nl != std::string::npos) out += '\n';
    at = end + 1;
  }
  return out;
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
