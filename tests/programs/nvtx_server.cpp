// A CUDA-free long-running NVTX3 program for the control tests: reads commands from stdin, one per line.
// "N": handles N requests (each: push "request", push "inner", pop, pop) and prints "done N";
// "open NAME": pushes NAME and leaves it open, "close": pops it; "nodump": makes the process not dumpable
// (prctl PR_SET_DUMPABLE 0: /proc/PID then belongs to root), prints "nodump"; "quit": returns from main (exit 0).
#include <nvtx3/nvToolsExt.h>
#include <sys/prctl.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "quit") break;
    if (line.rfind("open ", 0) == 0) {
      nvtxRangePushA(line.substr(5).c_str());
      std::printf("opened\n");
    } else if (line == "nodump") {
      std::printf(prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? "nodump\n" : "nodump failed\n");
    } else if (line == "close") {
      nvtxRangePop();
      std::printf("closed\n");
    } else {
      const int n = std::atoi(line.c_str());
      for (int i = 0; i < n; ++i) {
        nvtxRangePushA("request");
        nvtxRangePushA("inner");
        nvtxRangePop();
        nvtxRangePop();
      }
      std::printf("done %d\n", n);
    }
    std::fflush(stdout);
  }
  return 0;
}
