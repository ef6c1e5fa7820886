// Test driver for KCOUNT_LAUNCH_TIMING=16 in summary mode (no GPU): one launch call in 16 timed.
#include <cstdlib>

#include "tests/support/session_test_main.h"

int main(int argc, char** argv) {
  setenv("KCOUNT_LAUNCH_TIMING", "16", 1);
  return runSessionTests(argc, argv, "/tmp/kcount-launch-timing.XXXXXX", "test.kcount", /*summary_mode=*/true);
}
