// Lines of log_state.cpp that the summary footer (summary_output.cpp) and the check report
// (check_output.cpp) print too. Internal to tools/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/log_reader.h"
#include "tools/loaded_log.h"

namespace kc {

const char* severityName(ReadIssue::Severity s);

/// "summary mode: N snapshots every I, totals from snapshot S at +T (final)" for a summary-mode log, else "";
/// then "; N events not tallied in their row ..." and "; N launches evicted from the correlation window", each
/// only when not zero.
/// A summary-mode log without any snapshot (none begun) says so (noSnapshotText).
std::string snapshotLine(const LoadedLog& l);

/// "rotated part K; parts 0..K-1 not given[, continued in part K+1 (not given|given)]; the numbers cover
/// this part only" for a later part of a rotated log read alone (LogData::isLaterPartAlone()); `missing`,
/// when known, the earlier parts not given (others were: "part 1 not given").
std::string laterPartText(const LogData& d, bool next_part_given = false, const std::vector<uint32_t>& missing = {});

/// logStateOnly(), then how the process ended where it was by a signal (metadata kMetaEndSignal): ranges
/// open at that moment were closed there by the library, so their instances end at the signal.
std::string logStateLine(const LoadedLog& l, std::string_view errors_at = "listed below");

/// For a log that was not read whole (damaged, cut short, or without its End record) whose join left
/// launches without kernel or unmatched kernels: their other half may be in the part not read, so the
/// counts say nothing about the program. "" otherwise.
std::string joinCaveat(const LoadedLog& l);

/// What compareWithStats() finds, in the words of statsShortfall(): every kind whose count differs, and the
/// kinds of which the file holds fewer records than the Stats record counts.
struct StatsComparison {
  std::string differ, fewer;
};

StatsComparison statsShortfalls(const LoadedLog& l);

}  // namespace kc
