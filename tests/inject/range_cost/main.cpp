// Test driver for kcount's own cost per range, trace mode (no GPU): its own process, as the session reads
// KCOUNT_* once.
#include "tests/support/session_test_main.h"

int main(int argc, char** argv) { return runSessionTests(argc, argv, "/tmp/kcount-range-cost.XXXXXX", "test.kcount"); }
