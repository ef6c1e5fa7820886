#include "tools/diff_answer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <tuple>

#include "tools/kernel_names.h"

namespace kc {

std::vector<size_t> largestChanges(const std::vector<RowChange>& rows, size_t n) {
  std::vector<size_t> idx(rows.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
    const RowChange& a = rows[x];
    const RowChange& b = rows[y];
    if (a.both != b.both) return a.both;  // a range of one side only is no change of the same work
    if (a.gpu.has_value() != b.gpu.has_value()) return a.gpu.has_value();
    if (a.gpu && *a.gpu != *b.gpu) return *a.gpu > *b.gpu;
    return a.count > b.count;
  });
  if (idx.size() > n) idx.resize(n);
  std::sort(idx.begin(), idx.end());
  return idx;
}

bool underPath(const std::string& path, const std::string& root) {
  if (path == root) return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

std::vector<std::string> wrapLine(const std::string& line, size_t width, const std::string& indent, size_t hang) {
  if (width == 0) width = kVerdictWrap;
  std::vector<std::string> words;
  for (size_t i = 0; i < line.size();) {
    const size_t j = std::min(line.find(' ', i), line.size());
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j + 1;
  }
  std::vector<std::string> out;
  std::string cur = indent;
  size_t cur_width = displayWidth(indent), start_width = cur_width;
  for (const auto& w : words) {
    const size_t ww = displayWidth(w);
    if (cur_width > start_width && cur_width + 1 + ww > width) {
      out.push_back(cur);
      cur = indent + std::string(hang, ' ');
      cur_width = start_width = displayWidth(cur);
    }
    if (cur_width > start_width) {
      cur += ' ';
      ++cur_width;
    }
    cur += w;
    cur_width += ww;
  }
  out.push_back(cur);
  return out;
}

std::string notShownLine(size_t verdicts_shown, size_t verdicts, size_t ranges_shown, size_t ranges,
                         size_t kernels_shown, size_t kernels) {
  std::string parts;
  for (const auto& [shown, all, what] : {std::tuple{verdicts_shown, verdicts, "verdicts"},
                                         std::tuple{ranges_shown, ranges, "ranges"},
                                         std::tuple{kernels_shown, kernels, "kernels"}})
    if (shown < all) parts += fmt::format("{}{} of {} {}", parts.empty() ? "" : ", ", all - shown, all, what);
  if (parts.empty()) return {};
  return "not shown: " + parts + " (kcount diff --all shows everything; --range PATH one range's subtree and verdict)";
}

}  // namespace kc
