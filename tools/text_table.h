// The plain-text tables of kcount's text output (Table), fitted to a width. Internal to tools/.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "tools/kernel_names.h"
#include "tools/name_elision.h"
#include "tools/table_width.h"

namespace kc {

/// Plain-text table: columns padded to their widest cell, numbers right-aligned. Cells of the columns
/// marked in `elide` are shortened to kMaxNameColumn display columns (elideDistinct). With `max_width`,
/// the table is fitted to it (fitColumns()): the `elide` and `fit` columns narrowed, then columns dropped
/// by their `drop` rank, a line above the table naming those dropped.
struct Table {
  /// The line of '-' under the heading: up to the last column's heading (the last column is free text),
  /// across every column, or none.
  enum class Rule { kToLastHeading, kFull, kNone };

  std::vector<std::string> head;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> elide;        // column indexes
  std::vector<NameColumn> fit;      // other name columns that may be narrowed, their names whole
  std::vector<unsigned> drop;       // per column: 0 kept, else dropped to fit max_width, the highest first
  std::vector<std::string> labels;  // per column: its name in the dropped-columns line (fitColumns())
  size_t max_width = 0;             // display columns; 0: no limit
  size_t indent = 0;                // blanks before every line
  Rule rule = Rule::kToLastHeading;

  /// Sets the drop rank of the column headed `heading` (when there is one).
  void dropRank(const std::string& heading, unsigned rank) {
    const auto at = std::find(head.begin(), head.end(), heading);
    if (at == head.end()) return;
    drop.resize(head.size(), 0);
    drop[static_cast<size_t>(at - head.begin())] = rank;
  }

  /// Drop ranks from a list of headings, the first dropped first (headings not in the table skipped).
  void dropOrder(const std::vector<std::string>& first_dropped_first) {
    unsigned rank = static_cast<unsigned>(first_dropped_first.size());
    for (const auto& h : first_dropped_first) dropRank(h, rank--);
  }

  void print(std::ostream& out) {
    fitTo(shortenNames(), out);
    std::vector<size_t> w(head.size(), 0);
    for (size_t i = 0; i < head.size(); ++i) w[i] = displayWidth(head[i]);
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], displayWidth(r[i]));
    auto line = [&](const std::vector<std::string>& r) {
      std::string s(indent, ' ');
      for (size_t i = 0; i < r.size() && i < w.size(); ++i) {
        const std::string pad(w[i] - displayWidth(r[i]), ' ');
        const bool last = i + 1 == r.size();
        s += right[i] ? pad + r[i] : (last ? r[i] : r[i] + pad);
        if (!last) s += "  ";
      }
      // An empty last cell (a row without verdict under --wide) leaves no trailing blanks.
      s.erase(s.find_last_not_of(' ') + 1);
      out << s << '\n';
    };
    line(head);
    if (rule != Rule::kNone) {
      size_t total = indent;
      for (size_t i = 0; i + 1 < w.size(); ++i) total += w[i] + 2;
      if (!head.empty()) total += rule == Rule::kFull ? w.back() : displayWidth(head.back());
      out << std::string(total, '-') << '\n';
    }
    for (const auto& r : rows) line(r);
  }

  /// Shortens the `elide` columns to kMaxNameColumn display columns (elideDistinct(), together so that
  /// different names stay different); returns them, their names whole, with `fit`: the columns fitTo() may
  /// narrow.
  std::vector<NameColumn> shortenNames() {
    std::vector<NameColumn> narrow = fit;
    for (size_t c : elide) {
      NameColumn col;
      col.index = c;
      for (const auto& r : rows) col.names.push_back(c < r.size() ? r[c] : std::string());
      const std::vector<std::string> shown = elideDistinct(col.names);
      for (size_t i = 0; i < rows.size(); ++i)
        if (c < rows[i].size()) rows[i][c] = shown[i];
      narrow.push_back(std::move(col));
    }
    return narrow;
  }

  /// Fits the table to max_width (fitColumns()): the columns `narrow` narrowed, then columns dropped, named
  /// on a line of `out` (the table follows it). Nothing when max_width is 0 or the table fits.
  void fitTo(const std::vector<NameColumn>& narrow, std::ostream& out) {
    if (max_width == 0) return;
    std::vector<std::vector<std::string>> all{head};
    all.insert(all.end(), rows.begin(), rows.end());
    const DroppedColumns dropped = fitColumns(all, 1, narrow, indent, max_width, drop, labels);
    if (!dropped.empty()) {
      std::vector<bool> kept_right;
      for (size_t c = 0; c < right.size(); ++c)
        if (std::find(dropped.columns.begin(), dropped.columns.end(), c) == dropped.columns.end())
          kept_right.push_back(right[c]);
      right = std::move(kept_right);
      out << droppedColumnsLine(dropped, max_width) << '\n';
    }
    head = all.front();
    rows.assign(all.begin() + 1, all.end());
  }
};

}  // namespace kc
