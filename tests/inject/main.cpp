// Test driver for the injected library's handlers (no GPU). The session is a process singleton that
// reads KCOUNT_* once, so the log path is set here, before any test touches it.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

#include "tests/inject/inject_test_env.h"

std::string g_log_path;
bool g_summary_mode = false;

int main(int argc, char** argv) {
  char dir[] = "/tmp/kcount-inject-test.XXXXXX";
  if (mkdtemp(dir) == nullptr) return 2;
  g_log_path = std::string(dir) + "/test.kcount";
  setenv("KCOUNT_OUTPUT", g_log_path.c_str(), 1);
  setenv("KCOUNT_LOG_LEVEL", "warn", 1);
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  unlink(g_log_path.c_str());
  rmdir(dir);
  return rc;
}
