// The log path of a test executable that drives the library's process-wide Session, and a look-up of a
// range in the Summary of that log.
#pragma once
#include <string>

/// Path of the log the session under test writes (set by runSessionTests, tests/support/session_test_main.h,
/// before any test runs).
inline std::string g_log_path;
/// True in the executable that runs the handler tests with KCOUNT_MODE=summary (tests/inject/summary/):
/// the log then holds snapshots instead of records, and its Summary must be the same.
inline bool g_summary_mode = false;

#include "collector/analysis.h"
#include "collector/log_reader.h"

namespace kc::test {

/// The exclusive numbers of the range at `path` ("step/gate") in `s` (summarize(log)); nullptr if the log
/// has no such range.
inline const RangeStats* rangeAt(const LogData& log, const Summary& s, const std::string& path) {
  for (uint32_t id = 0; id < log.scopes.size(); ++id)
    if (log.scopePath(id) == path) return &s.exclusive[id];
  return nullptr;
}

}  // namespace kc::test
