// Which ranges `kcount summary`'s table shows: by default, in a log of many ranges, the part of the range
// tree that matters (the most repeated range and its children, the ranges issuing the most GPU time and
// the most launches, and their parents); all of them with --all, one subtree with --range, the top
// levels with --depth. CSV and JSON always carry every range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"

namespace kc {

/// The table's row choice, from summary's options.
struct SummaryFocus {
  bool all = false;    ///< --all: every range
  int64_t depth = -1;  ///< --depth N: ranges at most N levels deep (1: the top level); -1: not given
  std::string range;   ///< --range PATH: that range (its path as the table's verdict lines show it), its
                       ///< subtree and its parents; empty: not given
};

/// Shown ranges up to which the default table shows every range; above it, the ranges that matter.
inline constexpr size_t kFocusAllUpTo = 40;
/// Ranges picked by GPU time, and as many by launches, in a default table of a large tree.
inline constexpr size_t kFocusTop = 10;

/// The rows a summary table keeps, out of `shown` (shownScopes() order).
struct FocusedScopes {
  std::vector<uint8_t> keep;  ///< by scope id: 1 if the table shows it (the root always)
  size_t ranges = 0;          ///< ranges of `shown`, the root not counted
  size_t hidden = 0;          ///< of those, not shown
};

/// Chooses the table's rows of summary `s` of `log` among `shown` as `focus` says; by default every one
/// when there are at most kFocusAllUpTo ranges, else: the most repeated range (most instances, then most
/// GPU time) and its children, the kFocusTop ranges of most GPU time and the kFocusTop of most launches
/// of their own (innermost numbers: where the work was issued), and every parent of those. Errors: std::invalid_argument when --range names no
/// range of the log (the message says so). Thread-safety: pure function.
FocusedScopes focusScopes(const LogData& log, const Summary& s, const std::vector<uint32_t>& shown,
                          const SummaryFocus& focus);

/// The line under a table that hides rows: how many and how to see them; "" when none is hidden.
std::string focusNote(const FocusedScopes& f, const SummaryFocus& focus);

}  // namespace kc
