// `kcount check`'s report of one log: what it holds, what the reader found, and the verdict line (OK,
// DAMAGED, INCOMPLETE, ...) with the exit status it gives.
#pragma once

#include <iosfwd>
#include <string_view>

#include "collector/run_files.h"
#include "tools/loaded_log.h"

namespace kc {

/// The states of `kcount check`'s verdict line, in the order the line names them when several apply: the
/// first leads the line, each other follows as "; also STATE ...". docs/usage.md lists them in this order
/// (tests/unit/test_analysis.cpp compares). DAMAGED stands alone; OK is said when none applies.
inline constexpr std::string_view kCheckStates[] = {
    "RECORDS MISSING", "EXTRA RECORDS",  "REORDERED",  "IMPLAUSIBLE", "PARTIAL",
    "NOT ONE LOG",     "TRAILING BYTES", "INCOMPLETE", "NO TOTALS",   "COMPLETE BUT LOSSY"};

/// Prints the check report of one log. Returns 0 clean, 1 incomplete (no End record, bytes after the End
/// record), lossy (records dropped while recording: a DROPS line names the counters), partial (a
/// rotated part whose run is not whole among the files given: PARTIAL) or without totals (NO TOTALS:
/// noTotalsText()), 2 damaged (an error, or a
/// truncated tail), unreadable, or not a kcount log (then only what byte 0 holds is printed).
/// A rotated part K > 0 is PARTIAL unless `given.earlier`; a part closed for rotation (continued in part
/// N) is PARTIAL unless `given.next`; with both, it is OK as a part of a whole run.
int printCheck(std::ostream& out, const LoadedLog& log, PartsGiven given = {});

}  // namespace kc
