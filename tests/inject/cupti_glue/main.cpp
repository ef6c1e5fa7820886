// Test driver for the CUPTI glue (no GPU): the library's entry points through a stub CUPTI, configured from
// the environment as a user configures it. KCOUNT_CUPTI_PATH names a library that does not exist: the stub
// loader must be the one that answers, and must be given that path.
#include <cstdlib>

#include "inject/cupti_api.h"
#include "tests/support/session_test_main.h"
#include "tests/support/stub_cupti.h"

int main(int argc, char** argv) {
  setenv("KCOUNT_CUPTI_PATH", "/nonexistent/stub/libcupti.so.13", 1);
  setenv("KCOUNT_ACTIVITY_BUFFER_MB", "1", 1);  // each activity buffer 1 MiB ...
  setenv("KCOUNT_MAX_ACTIVITY_MB", "3", 1);     // ... and at most 3 of them
  setenv("KCOUNT_CONTROL", "off", 1);
  kc::inject::setCuptiLoader(&kc::test::stubCuptiLoader);
  return runSessionTests(argc, argv, "/tmp/kcount-cupti-glue.XXXXXX", "test.kcount");
}
