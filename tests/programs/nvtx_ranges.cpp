// A CUDA-free program that emits NVTX3 ranges, for testing libkcount.so's NVTX injection without a GPU.
// Usage: nvtx_ranges [steps] [normal|_exit|sigterm|exec|execfail|wait|distinct]: how the program ends (return from
// main, _exit(0) which skips atexit handlers, SIGTERM to itself with the default action, execl of
// /bin/true which replaces the image without atexit handlers, an exec of a missing file and then 10
// more steps and a normal return, or waiting for a signal with pause() after printing "nvtx_ranges done"; distinct:
// a normal return, each step's outer range named "step N").
// Each step: push "step", push "inner", pop, pop. Then one domain range
// with a registered string, one process-wide start/end range that ends on another thread, one pop with
// nothing pushed, and a range left open at exit.
#include <nvtx3/nvToolsExt.h>

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10;
  if (argc > 2 && std::strcmp(argv[2], "popfirst") == 0) {  // two stray pops before the process's first push
    nvtxRangePop();
    nvtxRangePop();
  }
  // distinct: each step's outer range has a name of its own ("step 0", "step 1", ...), then a normal return.
  const bool distinct = argc > 2 && std::strcmp(argv[2], "distinct") == 0;
  char step_name[32] = "step";
  for (int i = 0; i < steps; ++i) {
    if (distinct) std::snprintf(step_name, sizeof(step_name), "step %d", i);
    nvtxRangePushA(step_name);
    nvtxRangePushA("inner");
    nvtxRangePop();
    nvtxRangePop();
  }
  nvtxDomainHandle_t domain = nvtxDomainCreateA("mylib");
  nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "registered");
  nvtxEventAttributes_t attr = {};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = name;
  nvtxDomainRangePushEx(domain, &attr);
  nvtxRangePop();  // default domain: nothing pushed there -> counted as underflow, must not pop "registered"
  nvtxDomainRangePop(domain);

  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "ex";
  nvtxRangePushEx(&attr);
  nvtxRangePop();

  nvtxRangeId_t id = nvtxRangeStartA("crossing");
  std::thread([id] { nvtxRangeEnd(id); }).join();

  nvtxRangePushA("open_at_exit");
  std::printf("nvtx_ranges done\n");
  std::fflush(stdout);
  const char* how = argc > 2 ? argv[2] : "normal";
  if (std::strcmp(how, "_exit") == 0) _exit(0);
  if (std::strcmp(how, "sigterm") == 0) {
    kill(getpid(), SIGTERM);
    pause();
  }
  if (std::strcmp(how, "exec") == 0) {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    return 3;  // exec failed
  }
  if (std::strcmp(how, "execfail") == 0) {
    execl("/kcount-no-such-file", "x", static_cast<char*>(nullptr));
    for (int i = 0; i < 10; ++i) {
      nvtxRangePushA("after_exec");
      nvtxRangePop();
    }
  }
  if (std::strcmp(how, "wait") == 0) {
    for (;;) pause();
  }
  return 0;
}
