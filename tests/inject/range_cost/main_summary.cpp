// Test driver for kcount's own cost per range, summary mode (KCOUNT_MODE=summary, no GPU): the same test
// as main.cpp's, its ranges tallied instead of written.
#include "tests/support/session_test_main.h"

int main(int argc, char** argv) {
  return runSessionTests(argc, argv, "/tmp/kcount-range-cost-summary.XXXXXX", "test.kcount", /*summary_mode=*/true);
}
