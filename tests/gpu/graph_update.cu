// A CUDA graph changed after instantiation, for tests/gpu/check_gpu_time.sh (row g5): kcount's kernel counts
// and names per range must follow each change, with and without kernel activity records.
// Built on the GPU machine, from the repository root: nvcc -O2 -arch=sm_90 -I. tests/gpu/graph_update.cu -o graph_update
//
// Ranges and the kernels each must show (10 graph launches each):
//   capture   ka, ka, ka, kb captured into one graph (4 captured launches, no kernel runs)
//   before    30 ka + 10 kb
//   params    cudaGraphExecKernelNodeSetParams: the kb node runs kc -> 30 ka + 10 kc
//   updated   cudaGraphExecUpdate from a graph of 4 kd nodes (same topology) -> 40 kd
//   disabled  cudaGraphNodeSetEnabled(first node, 0) -> 30 kd
// The program checks the values it computed (exit 3 when wrong).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "tests/gpu/cuda_check.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void ka(float* x) { x[threadIdx.x] += 1; }
__global__ void kb(float* x) { x[threadIdx.x] += 2; }
__global__ void kc(float* x) { x[threadIdx.x] += 3; }
__global__ void kd(float* x) { x[threadIdx.x] += 4; }


namespace {
cudaGraph_t capture(cudaStream_t s, float* x, bool update) {
  cudaGraph_t g = nullptr;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 3; ++i) (update ? kd : ka)<<<1, 32, 0, s>>>(x);
  (update ? kd : kb)<<<1, 32, 0, s>>>(x);
  CK(cudaStreamEndCapture(s, &g));
  return g;
}

std::vector<cudaGraphNode_t> nodesOf(cudaGraph_t g) {
  size_t n = 0;
  CK(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  CK(cudaGraphGetNodes(g, nodes.data(), &n));
  return nodes;
}

void replay(const char* range, cudaGraphExec_t exec, cudaStream_t s) {
  nvtxRangePushA(range);
  for (int i = 0; i < 10; ++i) CK(cudaGraphLaunch(exec, s));
  nvtxRangePop();
  CK(cudaStreamSynchronize(s));
}
}  // namespace

int main() {
  float* x = nullptr;
  CK(cudaMalloc(&x, 32 * sizeof(float)));
  CK(cudaMemset(x, 0, 32 * sizeof(float)));
  cudaStream_t s;
  CK(cudaStreamCreate(&s));

  nvtxRangePushA("capture");
  cudaGraph_t g = capture(s, x, false);
  nvtxRangePop();
  cudaGraphExec_t exec;
  CK(cudaGraphInstantiate(&exec, g, 0));
  replay("before", exec, s);  // +50 per launch

  std::vector<cudaGraphNode_t> nodes = nodesOf(g);
  cudaGraphNode_t kb_node = nullptr;
  cudaKernelNodeParams p{};
  for (cudaGraphNode_t n : nodes) {
    cudaKernelNodeParams q{};
    CK(cudaGraphKernelNodeGetParams(n, &q));
    if (q.func == reinterpret_cast<void*>(kb)) {
      kb_node = n;
      p = q;
    }
  }
  if (kb_node == nullptr) {
    std::fprintf(stderr, "graph_update: no kb node\n");
    return 2;
  }
  p.func = reinterpret_cast<void*>(kc);
  CK(cudaGraphExecKernelNodeSetParams(exec, kb_node, &p));
  replay("params", exec, s);  // +60 per launch

  cudaGraph_t g2 = capture(s, x, true);
  cudaGraphExecUpdateResultInfo info{};
  CK(cudaGraphExecUpdate(exec, g2, &info));
  replay("updated", exec, s);  // +160 per launch

  CK(cudaGraphNodeSetEnabled(exec, nodes[0], 0));
  replay("disabled", exec, s);  // +120 per launch

  float host[32];
  CK(cudaMemcpy(host, x, sizeof(host), cudaMemcpyDeviceToHost));
  const float want = 10 * (5 + 6 + 16 + 12);
  std::printf("graph_update: x = %.0f (want %.0f)\n", host[0], want);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(g));
  CK(cudaGraphDestroy(g2));
  return host[0] == want ? 0 : 3;
}
