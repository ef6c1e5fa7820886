// Concurrency stress tests (no GPU), built into their own executable: the session is a process
// singleton configured from KCOUNT_* at first use, so the log path is set here before any test runs.
// CI runs them under ThreadSanitizer (build-tsan) as well as in the plain and ASan+UBSan builds.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

#include "tests/stress/stress_env.h"

std::string g_log_path;

int main(int argc, char** argv) {
  char dir[] = "/tmp/kcount-stress-test.XXXXXX";
  if (mkdtemp(dir) == nullptr) return 2;
  g_log_path = std::string(dir) + "/stress.kcount";
  setenv("KCOUNT_OUTPUT", g_log_path.c_str(), 1);
  setenv("KCOUNT_LOG_LEVEL", "warn", 1);
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  unlink(g_log_path.c_str());
  rmdir(dir);
  return rc;
}
