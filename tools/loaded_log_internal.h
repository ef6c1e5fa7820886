// The implausible-record warnings of loaded_log.cpp (noteImplausible()), which check_output.cpp prints too.
// Internal to tools/.
#pragma once

#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "tools/loaded_log.h"

namespace kc {

/// The records of `s` whose times or counts no run gives (Summary::kernels_end_all_ones, a kernel longer than
/// the log's span, more than one kernel on a launch that runs one: Summary::launches_many_kernels): one
/// message each, without "warning: " and newline (noteImplausible() records them); none when there are
/// none. `what` gets the verdict's words for them ("1 kernel ending at 2^64 - 1, ...").
std::vector<std::string> implausibleWarningLines(const Summary& s, std::string& what);

/// Whether `i` is one of the warnings noteImplausible() added to `l` (check prints them itself, before the
/// issues): a warning with no place in the file whose message is one it recorded (LoadedLog::implausible_issues).
bool isImplausibleIssue(const LoadedLog& l, const ReadIssue& i);

}  // namespace kc
