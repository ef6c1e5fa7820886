// The log path of a test executable that drives the library's process-wide Session.
#pragma once
#include <string>

/// Path of the log the session under test writes (set by runSessionTests, tests/support/session_test_main.h,
/// before any test runs).
inline std::string g_log_path;
/// True in the executable that runs the handler tests with KCOUNT_MODE=summary (tests/inject/summary/):
/// the log then holds snapshots instead of records, and its Summary must be the same.
inline bool g_summary_mode = false;
