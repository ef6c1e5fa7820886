// Test driver for the injected library's handlers (no GPU).
#include "tests/support/session_test_main.h"

int main(int argc, char** argv) { return runSessionTests(argc, argv, "/tmp/kcount-inject-test.XXXXXX", "test.kcount"); }
