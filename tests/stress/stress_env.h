#pragma once
#include <string>
/// Path of the log the session under test writes (set by tests/stress/main.cpp).
extern std::string g_log_path;
