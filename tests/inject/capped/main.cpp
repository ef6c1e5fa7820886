// Test driver for a log capped by KCOUNT_MAX_BYTES in one file (KCOUNT_MAX_FILES=1), no GPU.
#include <cstdlib>

#include "tests/support/session_test_main.h"

int main(int argc, char** argv) {
  setenv("KCOUNT_MAX_BYTES", "4096", 1);
  setenv("KCOUNT_MAX_FILES", "1", 1);
  return runSessionTests(argc, argv, "/tmp/kcount-capped.XXXXXX", "test.kcount");
}
