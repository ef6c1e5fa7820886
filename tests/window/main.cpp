// Test driver for capture windows (no GPU): a process whose session starts paused (KCOUNT_START=paused),
// so every window is opened by the test through the same calls `kcount ctl` and KCOUNT_CAPTURE_* use.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

std::string g_log_path;

int main(int argc, char** argv) {
  char dir[] = "/tmp/kcount-window-test.XXXXXX";
  if (mkdtemp(dir) == nullptr) return 2;
  g_log_path = std::string(dir) + "/test.kcount";
  setenv("KCOUNT_OUTPUT", g_log_path.c_str(), 1);
  setenv("KCOUNT_LOG_LEVEL", "warn", 1);
  setenv("KCOUNT_START", "paused", 1);
  setenv("KCOUNT_CONTROL", "off", 1);
  doctest::Context ctx(argc, argv);
  const int rc = ctx.run();
  unlink(g_log_path.c_str());
  rmdir(dir);
  return rc;
}
