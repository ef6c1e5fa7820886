// Process ends kcount must close a log for, with real kernels, for tests/gpu/check_run_edges.sh.
// Built on the GPU machine: nvcc -O2 -arch=sm_90 run_edges.cu -o run_edges
// Usage: run_edges exec|wait: 100 steps (range "step", one kernel each), synchronize, then exec /bin/true,
// or print "ready" and wait for a signal (pause()).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
  const char* how = argc > 1 ? argv[1] : "wait";
  for (int i = 0; i < 100; ++i) {
    nvtxRangePushA("step");
    empty_kernel<<<1, 1>>>();
    nvtxRangePop();
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 2;
  if (std::strcmp(how, "exec") == 0) {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    return 3;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) pause();
}
