// Test driver for the injected library's handlers in summary mode (KCOUNT_MODE=summary; no GPU): the same
// tests as tests/inject/main.cpp, whose log must give the same Summary.
#include "tests/support/session_test_main.h"

int main(int argc, char** argv) {
  return runSessionTests(argc, argv, "/tmp/kcount-inject-summary-test.XXXXXX", "test.kcount", /*summary_mode=*/true);
}
