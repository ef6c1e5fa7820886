// Exact launch and kernel counts through every common launch path, for tests/gpu/run_gpu_checks.sh.
// Built on the GPU machine: nvcc -O2 -arch=sm_90 launches.cu -lcuda -o launches
//
// Ranges and what each must show (launches / kernels):
//   runtime   1000 <<<>>> launches                             1000 / 1000
//   driver     500 cuLaunchKernel launches                      500 / 500
//   graph      a graph of 5 kernels captured in "capture", replayed 100 times in "replay":
//              replay: 100 graph launches / 500 kernels (each with a graph id);
//              capture: 0 launches executed on the GPU (captured kernels do not run)
//   threads    4 threads x 2000 launches, each inside its own range "worker" on its own stream
//   api.*      one launch each through <<<>>>, cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel,
//              cuLaunchKernelEx: 1 launch and 1 kernel per range
//   memops     cudaMemcpyAsync H2D, D2H, D2D (4 KiB each) and cudaMemsetAsync (4 KiB): 3 memcpy, 1 memset,
//              0 launches, 0 kernels
//   exit       50 launches, then return from main with no synchronize
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "tests/gpu/cuda_check.h"

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

__global__ void empty_kernel(int* p) {
  if (p != nullptr && threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(p, 1);
}


int main() {
  int* counter = nullptr;
  CK(cudaMalloc(&counter, sizeof(int)));
  CK(cudaMemset(counter, 0, sizeof(int)));
  CK(cudaDeviceSynchronize());

  nvtxRangePushA("runtime");
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 32>>>(counter);
  nvtxRangePop();
  CK(cudaGetLastError());

  cudaFunction_t fn = nullptr;
  CK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&empty_kernel)));
  void* args[] = {&counter};
  nvtxRangePushA("driver");
  for (int i = 0; i < 500; ++i) CK(cuLaunchKernel(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  nvtxRangePop();

  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  nvtxRangePushA("capture");
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 5; ++i) empty_kernel<<<1, 32, 0, s>>>(counter);
  CK(cudaStreamEndCapture(s, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  nvtxRangePop();
  nvtxRangePushA("replay");
  for (int i = 0; i < 100; ++i) CK(cudaGraphLaunch(exec, s));
  nvtxRangePop();
  CK(cudaStreamSynchronize(s));

  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([counter] {
      cudaStream_t ws;
      CK(cudaStreamCreateWithFlags(&ws, cudaStreamNonBlocking));
      nvtxRangePushA("worker");
      for (int i = 0; i < 2000; ++i) empty_kernel<<<1, 32, 0, ws>>>(counter);
      nvtxRangePop();
      CK(cudaStreamSynchronize(ws));
    });
  }
  for (auto& w : workers) w.join();

  int host = 0;
  CK(cudaMemcpy(&host, counter, sizeof(int), cudaMemcpyDeviceToHost));
  const int want = 1000 + 500 + 500 + 8000;  // checked before the api.* launches
  std::printf("launches: counter=%d (want %d)\n", host, want);
  if (host != want) return 3;

  // One launch per API, each in its own range.
  nvtxRangePushA("api.chevron");
  empty_kernel<<<1, 32>>>(counter);
  nvtxRangePop();
  nvtxRangePushA("api.cudaLaunchKernel");
  CK(cudaLaunchKernel(reinterpret_cast<const void*>(&empty_kernel), dim3(1), dim3(32), args, 0, nullptr));
  nvtxRangePop();
  nvtxRangePushA("api.cudaLaunchKernelExC");
  {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(32);
    CK(cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(&empty_kernel), args));
  }
  nvtxRangePop();
  nvtxRangePushA("api.cuLaunchKernel");
  CK(cuLaunchKernel(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
  nvtxRangePop();
  nvtxRangePushA("api.cuLaunchKernelEx");
  {
    CUlaunchConfig cfg = {};
    cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32;
    cfg.blockDimY = cfg.blockDimZ = 1;
    CK(cuLaunchKernelEx(&cfg, reinterpret_cast<CUfunction>(fn), args, nullptr));
  }
  nvtxRangePop();
  CK(cudaDeviceSynchronize());

  // Memory operations: reported as their own kind, never as kernels.
  {
    constexpr size_t kBytes = 4096;
    void* host = nullptr;
    void* d0 = nullptr;
    void* d1 = nullptr;
    CK(cudaMallocHost(&host, kBytes));
    CK(cudaMalloc(&d0, kBytes));
    CK(cudaMalloc(&d1, kBytes));
    CK(cudaDeviceSynchronize());
    nvtxRangePushA("memops");
    CK(cudaMemcpyAsync(d0, host, kBytes, cudaMemcpyHostToDevice, nullptr));
    CK(cudaMemcpyAsync(host, d0, kBytes, cudaMemcpyDeviceToHost, nullptr));
    CK(cudaMemcpyAsync(d1, d0, kBytes, cudaMemcpyDeviceToDevice, nullptr));
    CK(cudaMemsetAsync(d1, 0, kBytes, nullptr));
    nvtxRangePop();
    CK(cudaDeviceSynchronize());
  }

  nvtxRangePushA("exit");
  for (int i = 0; i < 50; ++i) empty_kernel<<<1, 32>>>(counter);
  nvtxRangePop();
  return 0;  // no synchronize: the profiler must still see all 50 kernels
}
