// The log path of a test executable that drives the library's process-wide Session.
#pragma once
#include <string>

/// Path of the log the session under test writes (set by runSessionTests, tests/support/session_test_main.h,
/// before any test runs).
inline std::string g_log_path;
