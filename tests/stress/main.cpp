// Concurrency stress tests (no GPU), built into their own executable (the session is a process
// singleton). CI runs them under ThreadSanitizer (build-tsan) as well as in the plain and ASan+UBSan builds.
#include "tests/support/session_test_main.h"

int main(int argc, char** argv) { return runSessionTests(argc, argv, "/tmp/kcount-stress-test.XXXXXX", "stress.kcount"); }
