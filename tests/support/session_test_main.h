// main() of a doctest executable that drives the library's process-wide Session (no GPU). The session
// reads KCOUNT_* once, at first use, so the log path is chosen here, before any test runs: a fresh
// temporary folder per run, removed afterwards.
#pragma once

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

#include "tests/support/session_log_path.h"

/// Creates `dir_template` (mkdtemp syntax, e.g. "/tmp/kcount-x.XXXXXX"), sets KCOUNT_OUTPUT to
/// `<dir>/<file_name>` and KCOUNT_LOG_LEVEL=warn (with `summary_mode`: KCOUNT_MODE=summary and a 50 ms
/// KCOUNT_INTERVAL, and g_summary_mode), runs doctest, removes the log and the folder.
/// Returns doctest's exit code, or 2 if the folder cannot be created.
inline int runSessionTests(int argc, char** argv, std::string dir_template, const char* file_name,
                           bool summary_mode = false) {
  if (mkdtemp(dir_template.data()) == nullptr) return 2;
  g_log_path = dir_template + "/" + file_name;
  setenv("KCOUNT_OUTPUT", g_log_path.c_str(), 1);
  setenv("KCOUNT_LOG_LEVEL", "warn", 1);
  g_summary_mode = summary_mode;
  if (summary_mode) {
    setenv("KCOUNT_MODE", "summary", 1);
    setenv("KCOUNT_INTERVAL", "50ms", 1);
  }
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  unlink(g_log_path.c_str());
  rmdir(dir_template.c_str());
  return rc;
}
