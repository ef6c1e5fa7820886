// Test driver for KCOUNT_GPU_TIME=0 (no GPU): trace mode, or summary mode with KC_GPU_TIME_SUMMARY;
// KCOUNT_GPU_TIME=graphs with KC_GPU_TIME_GRAPHS.
#include <cstdlib>

#include "tests/support/session_test_main.h"

int main(int argc, char** argv) {
#ifdef KC_GPU_TIME_GRAPHS
  setenv("KCOUNT_GPU_TIME", "graphs", 1);
#else
  setenv("KCOUNT_GPU_TIME", "0", 1);
#endif
#ifdef KC_GPU_TIME_SUMMARY
  return runSessionTests(argc, argv, "/tmp/kcount-gpu-time-summary.XXXXXX", "test.kcount", /*summary_mode=*/true);
#else
  return runSessionTests(argc, argv, "/tmp/kcount-gpu-time.XXXXXX", "test.kcount");
#endif
}
