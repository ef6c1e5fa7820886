// `kcount diff`'s text layout, answer first: which rows and sections its default output shows (the verdicts,
// then the largest changes), which `--range PATH` shows, and verdict lines wrapped at the table width.
// Pure helpers; printDiff() (tools/diff.h) prints with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kc {

/// Which parts of the diff the text shows.
struct DiffLayout {
  bool all = false;   // --all: every range and kernel row, every nesting line
  std::string range;  // --range PATH: that range's subtree in full and its verdict ("" : none)
};

/// Rows the default layout shows of the range table and of the kernel table.
inline constexpr size_t kLargestChanges = 10;
/// Verdicts of ranges the default layout shows at most (the most repeated ones; the whole run's besides).
inline constexpr size_t kMaxAnswerVerdicts = 3;
/// Width verdict lines wrap at when the output has no width limit (--width 0, not a terminal).
inline constexpr size_t kVerdictWrap = 120;

/// One row's change as largestChanges() ranks it: the GPU time change in ns where both sides recorded GPU
/// time (`gpu` set), else the change of launches (or kernels) in counts. Magnitudes only matter.
struct RowChange {
  std::optional<uint64_t> gpu;  // |B - A| of GPU time, ns
  uint64_t count = 0;           // |B - A| of launches or kernels
  bool both = true;             // the row is on both sides (a row of one side only ranks after those)
};

/// Indices of the (at most) `n` rows with the largest change (rows on both sides first; GPU time first; rows
/// without a GPU time change by their count change after those that have one), in their original order. Ties keep the earlier row.
/// Pure; never throws but std::bad_alloc.
std::vector<size_t> largestChanges(const std::vector<RowChange>& rows, size_t n);

/// Whether DiffSide key `path` is `root` or a range under it ("step/mlp" is under "step"; "stepper" is not).
bool underPath(const std::string& path, const std::string& root);

/// `line` cut into lines of at most `width` display columns (UTF-8 characters) at spaces: the first line
/// starts with `indent`, the others with `indent` plus `hang` spaces (a hanging indent). A word longer than
/// a line is left whole on a line of its own (nothing is cut). Width 0 is kVerdictWrap. No newlines in the
/// result. Pure.
std::vector<std::string> wrapLine(const std::string& line, size_t width, const std::string& indent, size_t hang);

/// The line after the default layout's tables: "not shown: 40 of 44 verdicts, 80 of 90 ranges, 30 of 40
/// kernels (kcount diff --all shows everything; --range PATH one range's subtree and verdict)". "" when
/// everything is shown.
std::string notShownLine(size_t verdicts_shown, size_t verdicts, size_t ranges_shown, size_t ranges,
                         size_t kernels_shown, size_t kernels);

}  // namespace kc
