// Test driver for InitializeInjection's settings wiring (no GPU): summary mode, KCOUNT_START=paused,
// KCOUNT_GPU_TIME=0, KCOUNT_LAUNCH_TIMING=4, KCOUNT_CUPTI_FINALIZE=0 and
// KCOUNT_LAUNCH_CALLBACKS=driver from the environment, CUPTI stubbed.
#include <cstdlib>

#include "inject/cupti_api.h"
#include "tests/support/session_test_main.h"
#include "tests/support/stub_cupti.h"

int main(int argc, char** argv) {
  unsetenv("KCOUNT_CUPTI_PATH");
  setenv("KCOUNT_START", "paused", 1);
  setenv("KCOUNT_GPU_TIME", "0", 1);
  setenv("KCOUNT_LAUNCH_TIMING", "4", 1);
  setenv("KCOUNT_CUPTI_FINALIZE", "0", 1);
  setenv("KCOUNT_LAUNCH_CALLBACKS", "driver", 1);
  setenv("KCOUNT_CONTROL", "off", 1);
  kc::inject::setCuptiLoader(&kc::test::stubCuptiLoader);
  return runSessionTests(argc, argv, "/tmp/kcount-cupti-settings.XXXXXX", "test.kcount", /*summary_mode=*/true);
}
