#pragma once
#include <string>
/// Path of the log the session under test writes (set by tests/inject/main.cpp).
extern std::string g_log_path;
/// True in the executable that runs the same handlers with KCOUNT_MODE=summary (tests/inject/summary/main.cpp):
/// the log then holds snapshots instead of records, and its Summary must be the same.
extern bool g_summary_mode;
