// What CUDA events would cost a launching thread if kcount timed GPU work with them instead of activity
// records (issue: sampled GPU time of direct launches). No profiler is loaded: this measures the driver
// calls a sampling design adds to the program's launch path, against the same launch loop without them.
//
//     nvcc -O2 -arch=sm_90 bench/event_cost.cu -lcuda -o event_cost
//     event_cost N R        R rounds; each round runs every variant once on N launches, the order rotated
//
// Variants (empty_kernel<<<1,1,0,s>>> on a stream s made with cudaStreamNonBlocking, and on the legacy
// default stream for `plain0` and `ev1_0`):
//   plain      the launch alone
//   capq       cuStreamIsCapturing(s) before each launch (what a sampler must ask before recording:
//              an event recorded into a capturing stream becomes a graph node)
//   ev1        cuEventRecord before and after every launch (a pool of 4,096 event pairs, reused in turn)
//   ev16       the same around 1 launch in 16 (capq on every launch)
//   rng8       "ranges" of 10 launches; events at the first launch and after the last of 1 range in 8
//   plain0     plain on the legacy default stream
//   ev1_0      ev1 on the legacy default stream
// Each timed region is the N launches plus one cudaStreamSynchronize, timed with steady_clock. After the
// rounds, the elapsed GPU time of the last round's ev1 pairs is read with cuEventElapsedTime (checks the
// events measure something: mean µs per pair). Output: one JSON line per round and one summary line with
// the median µs per launch of each variant and its median difference to `plain` (paired per round).
// Exit status: 0, 1 on a CUDA error, 2 on bad arguments.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

__global__ void empty_kernel() {}

#define CHECK_RT(x)                                                               \
  do {                                                                            \
    cudaError_t e_ = (x);                                                         \
    if (e_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));               \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)
#define CHECK_DRV(x)                                                              \
  do {                                                                            \
    CUresult r_ = (x);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                     \
      std::fprintf(stderr, "%s: CUresult %d\n", #x, static_cast<int>(r_));        \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

namespace {

constexpr int kPairs = 4096;
CUevent g_start[kPairs];
CUevent g_end[kPairs];

bool capturing(cudaStream_t s) {
  CUstreamCaptureStatus st;
  CHECK_DRV(cuStreamIsCapturing(reinterpret_cast<CUstream>(s), &st));
  return st != CU_STREAM_CAPTURE_STATUS_NONE;
}

// Runs one variant on n launches; returns µs per launch (launches plus one synchronize).
double runVariant(const std::string& v, cudaStream_t s, long n) {
  const auto t0 = std::chrono::steady_clock::now();
  int pair = 0;
  for (long i = 0; i < n; ++i) {
    bool rec = false;
    if (v == "capq" || v == "ev16") {
      rec = !capturing(s) && v == "ev16" && (i % 16) == 0;
    } else if (v == "ev1" || v == "ev1_0") {
      rec = true;
    } else if (v == "rng8") {
      const long range = i / 10;
      if (range % 8 == 0 && i % 10 == 0 && !capturing(s)) CHECK_DRV(cuEventRecord(g_start[pair], (CUstream)s));
      empty_kernel<<<1, 1, 0, s>>>();
      if (range % 8 == 0 && i % 10 == 9) {
        CHECK_DRV(cuEventRecord(g_end[pair], (CUstream)s));
        pair = (pair + 1) % kPairs;
      }
      continue;
    }
    if (rec) CHECK_DRV(cuEventRecord(g_start[pair], (CUstream)s));
    empty_kernel<<<1, 1, 0, s>>>();
    if (rec) {
      CHECK_DRV(cuEventRecord(g_end[pair], (CUstream)s));
      pair = (pair + 1) % kPairs;
    }
  }
  CHECK_RT(cudaStreamSynchronize(s));
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / static_cast<double>(n);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: event_cost N R\n");
    return 2;
  }
  const long n = std::atol(argv[1]);
  const int rounds = std::atoi(argv[2]);
  if (n < 100 || rounds < 1) return 2;
  CHECK_RT(cudaFree(nullptr));
  cudaStream_t s;
  CHECK_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < kPairs; ++i) {
    CHECK_DRV(cuEventCreate(&g_start[i], CU_EVENT_DEFAULT));
    CHECK_DRV(cuEventCreate(&g_end[i], CU_EVENT_DEFAULT));
  }
  const std::vector<std::string> variants = {"plain", "capq", "ev1", "ev16", "rng8", "plain0", "ev1_0"};
  for (const auto& v : variants) runVariant(v, v.back() == '0' ? nullptr : s, 2000);  // warm-up
  std::map<std::string, std::vector<double>> us, diff;
  for (int r = 0; r < rounds; ++r) {
    std::map<std::string, double> got;
    std::printf("{\"round\":%d", r);
    for (size_t k = 0; k < variants.size(); ++k) {
      const std::string& v = variants[(k + r) % variants.size()];
      got[v] = runVariant(v, v.back() == '0' ? nullptr : s, n);
      std::printf(",\"%s\":%.4f", v.c_str(), got[v]);
    }
    std::printf("}\n");
    for (const auto& [v, u] : got) {
      us[v].push_back(u);
      diff[v].push_back(u - got[v.back() == '0' ? "plain0" : "plain"]);
    }
  }
  // The last variant run of ev1 left pairs around single empty kernels: their elapsed GPU time.
  runVariant("ev1", s, kPairs);
  double sum_ms = 0;
  for (int i = 0; i < kPairs; ++i) {
    float ms = 0;
    CHECK_DRV(cuEventElapsedTime(&ms, g_start[i], g_end[i]));
    sum_ms += ms;
  }
  std::printf("{\"summary\":true,\"n\":%ld,\"rounds\":%d,\"ev1_pair_gpu_us_mean\":%.3f", n, rounds,
              sum_ms * 1000.0 / kPairs);
  for (const auto& v : variants) {
    std::printf(",\"%s\":{\"median_us_per_launch\":%.4f,\"median_paired_diff_us\":%.4f}", v.c_str(),
                median(us[v]), median(diff[v]));
  }
  std::printf("}\n");
  return 0;
}
