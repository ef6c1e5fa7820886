// Launch-cost workloads of the overhead benchmark (bench/run_bench.py): empty-kernel launches in a C++
// loop, through the runtime (<<<1,1>>>) and through the driver (cuLaunchKernel), and a CUDA graph of
// small kernels replayed many times.
//
//     nvcc -O2 -arch=sm_90 bench/launch_loop.cu -lcuda -o launch_loop
//     launch_loop runtime N          N launches of empty_kernel<<<1,1>>> on the legacy default stream
//     launch_loop driver N           N cuLaunchKernel launches of the same kernel (1x1x1 grid and block)
//     launch_loop graph M [K]        a graph of K (default 1000) empty kernels, captured once, replayed M times
//     launch_loop all N M [K]        the three above in this order, in one process
//
// Every workload first runs a warm-up (1,000 launches, or 2 graph replays) and synchronizes; the timed
// region is the loop plus one final cudaDeviceSynchronize (so kernels still queued when the loop ends
// are paid for), timed with std::chrono::steady_clock on the host. One JSON object per line on stdout:
//
//     {"workload":"info","device":"...","driver_version":13000,"runtime_version":13000}
//     {"workload":"runtime","n":N,"launches":N,"kernels":N,"seconds":S,"us_per_launch":U,"us_per_kernel":U}
//     {"workload":"graph","n":M,"graph_kernels":K,"launches":M,"kernels":M*K,"seconds":S,
//      "us_per_launch":<per graph launch>,"us_per_kernel":<per kernel>}
//
// Arguments are parsed by hand: this program is compiled on the GPU machine, where CLI11 is not installed.
// Exit status: 0, 1 on a CUDA error (message on stderr), 2 on bad arguments.
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

__global__ void empty_kernel() {}

#define CK(x)                                                                                 \
  do {                                                                                        \
    const int err_ = static_cast<int>(x);                                                     \
    if (err_ != 0) {                                                                          \
      std::fprintf(stderr, "launch_loop: %s:%d: %s failed with %d\n", __FILE__, __LINE__, #x, err_); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

constexpr long kWarmupLaunches = 1000;
constexpr long kWarmupReplays = 2;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void printResult(const char* workload, long n, long launches, long kernels, double seconds, long graph_kernels) {
  std::printf("{\"workload\":\"%s\",\"n\":%ld,", workload, n);
  if (graph_kernels > 0) std::printf("\"graph_kernels\":%ld,", graph_kernels);
  std::printf("\"launches\":%ld,\"kernels\":%ld,\"seconds\":%.9f,\"us_per_launch\":%.6f,\"us_per_kernel\":%.6f}\n",
              launches, kernels, seconds, seconds * 1e6 / static_cast<double>(launches),
              seconds * 1e6 / static_cast<double>(kernels));
  std::fflush(stdout);
}

void printInfo() {
  int device = 0, driver = 0, runtime = 0;
  CK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, device));
  CK(cudaDriverGetVersion(&driver));
  CK(cudaRuntimeGetVersion(&runtime));
  std::string name(prop.name);
  for (char& c : name)
    if (c == '"' || c == '\\') c = ' ';
  std::printf("{\"workload\":\"info\",\"device\":\"%s\",\"driver_version\":%d,\"runtime_version\":%d}\n",
              name.c_str(), driver, runtime);
  std::fflush(stdout);
}

// N launches of empty_kernel<<<1,1>>> (runtime API: cudaLaunchKernel inside, cuLaunchKernel below it).
void runRuntime(long n) {
  for (long i = 0; i < kWarmupLaunches; ++i) empty_kernel<<<1, 1>>>();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  const auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) empty_kernel<<<1, 1>>>();
  CK(cudaDeviceSynchronize());
  const double s = secondsSince(t0);
  CK(cudaGetLastError());
  printResult("runtime", n, n, n, s, 0);
}

// N cuLaunchKernel launches of the same kernel (driver API only, no runtime call around them).
void runDriver(long n) {
  cudaFunction_t fn = nullptr;
  CK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&empty_kernel)));
  const CUfunction f = reinterpret_cast<CUfunction>(fn);
  for (long i = 0; i < kWarmupLaunches; ++i) CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  CK(cudaDeviceSynchronize());
  const auto t0 = Clock::now();
  for (long i = 0; i < n; ++i) {
    // Checked inline, as a real caller would: one compare per launch.
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS) {
      std::fprintf(stderr, "launch_loop: cuLaunchKernel failed at launch %ld\n", i);
      std::exit(1);
    }
  }
  CK(cudaDeviceSynchronize());
  const double s = secondsSince(t0);
  printResult("driver", n, n, n, s, 0);
}

// A graph of K empty kernels in a chain (captured from one stream), replayed M times on that stream.
void runGraph(long m, long k) {
  cudaStream_t stream = nullptr;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (long i = 0; i < k; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  CK(cudaStreamEndCapture(stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (long i = 0; i < kWarmupReplays; ++i) CK(cudaGraphLaunch(exec, stream));
  CK(cudaStreamSynchronize(stream));
  const auto t0 = Clock::now();
  for (long i = 0; i < m; ++i) CK(cudaGraphLaunch(exec, stream));
  CK(cudaDeviceSynchronize());
  const double s = secondsSince(t0);
  printResult("graph", m, m, m * k, s, k);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  CK(cudaStreamDestroy(stream));
}

bool parseCount(const char* text, long* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1) return false;
  *out = v;
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: launch_loop runtime N | driver N | graph M [K] | all N M [K]\n"
               "  N: launches per loop, M: graph replays, K: kernels per graph (default 1000); all >= 1\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  long n = 0, m = 0, k = 1000;
  if (mode == "runtime" || mode == "driver") {
    if (argc != 3 || !parseCount(argv[2], &n)) return usage();
  } else if (mode == "graph") {
    if (argc < 3 || argc > 4 || !parseCount(argv[2], &m) || (argc == 4 && !parseCount(argv[3], &k))) return usage();
  } else if (mode == "all") {
    if (argc < 4 || argc > 5 || !parseCount(argv[2], &n) || !parseCount(argv[3], &m) ||
        (argc == 5 && !parseCount(argv[4], &k)))
      return usage();
  } else {
    return usage();
  }
  CK(cudaFree(nullptr));  // context creation (and CUDA_INJECTION64_PATH's InitializeInjection) before timing
  printInfo();
  if (mode == "runtime" || mode == "all") runRuntime(n);
  if (mode == "driver" || mode == "all") runDriver(n);
  if (mode == "graph" || mode == "all") runGraph(m, k);
  return 0;
}
