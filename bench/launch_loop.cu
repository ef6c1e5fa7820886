// Launch-cost workloads of the overhead benchmark (bench/run_bench.py): empty-kernel launches in a C++
// loop, through the runtime (<<<1,1>>>) and through the driver (cuLaunchKernel), and a CUDA graph of
// small kernels replayed many times.
//
//     nvcc -O2 -arch=sm_90 bench/launch_loop.cu -lcuda -o launch_loop
//     launch_loop runtime N          N launches of empty_kernel<<<1,1>>> on the legacy default stream
//     launch_loop driver N           N cuLaunchKernel launches of the same kernel (1x1x1 grid and block)
//     launch_loop graph M [K]        a graph of K (default 1000) empty kernels, captured once, replayed M times
//     launch_loop all N M [K]        the three above in this order, in one process
//     launch_loop ab runtime|driver N R   same-process comparison (below): R rounds of N launches per side
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
// `ab`: the profiler switched inside one process, so that process-to-process spread (0.1-0.4 us per
// launch between fresh processes on the H200, docs/performance.md Run 7) does not hide kcount's cost
// above the CUPTI floor. Sides, each present when its switch is given:
//   none    nothing subscribed;
//   floor   libcupti_floor.so (path in CUPTI_FLOOR_LIB), dlopen()ed here and switched with
//           cuptiFloorAttach() / cuptiFloorDetach() (bench/cupti_floor.cpp);
//   kcount  libkcount.so, preloaded with KCOUNT_START=paused KCOUNT_CONTROL=on KCOUNT_CONTROL_DIR=D,
//           switched with "start" / "stop" requests to its control socket D/<pid>.sock (docs/usage.md,
//           "kcount ctl"; a stop detaches CUPTI, so the floor can subscribe after it).
// Each round runs every side once, the order rotated by round; a side is switched on, runs 10,000
// untimed launches (CUPTI instruments on first use) and a synchronize, then N timed launches and a
// synchronize, then is switched off, followed by one synchronize (the API call at which kcount's
// deferred cuptiFinalize runs). The N launches are timed as a whole (with the synchronize: the budget
// figure) and in blocks of 1,000 launches without a synchronize between them (the blocks' median: the
// cost of a launch when the host does not stall), and the launching thread's CPU time is read around
// them. One line per round, then one summary line (all values in microseconds per launch):
//     {"workload":"ab-runtime","round":r,"order":["floor","kcount","none"],"us_per_launch":{"none":U,...},
//      "block_us_per_launch":{...},"cpu_us_per_launch":{...}}
//     {"workload":"ab-runtime","n":N,"rounds":R,"median_us_per_launch":{...},
//      "paired_us_per_launch":{"kcount-floor":{"median":D,"min":D,"max":D},"floor-none":...,"kcount-none":...},
//      "paired_block_us_per_launch":{...},"paired_cpu_us_per_launch":{...}}
// Paired differences are per round (same process, adjacent in time), medians over rounds.
// Two settings of the ab mode, from the environment (bench/ab_floor.py --pin-cpu, --no-none):
//   LAUNCH_LOOP_PIN_CPU=C   the launching thread runs each side's timed launches on CPU C alone (its
//                           affinity is restored after them, so threads the profiler creates while a side
//                           is switched on do not inherit it); the parent keeps the process's other threads
//                           off C. The round line then carries "pinned_cpu":C.
//   LAUNCH_LOOP_AB_NONE=0   no `none` side: rounds of floor and kcount only, in alternating order (the
//                           budget figure is kcount - floor; a third of the time goes to more pairs).
//
// Arguments are parsed by hand: this program is compiled on the GPU machine, where CLI11 is not installed.
// Exit status: 0, 1 on a CUDA error (message on stderr), 2 on bad arguments.
#include <cuda.h>
#include <cuda_runtime.h>

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

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

// n cuLaunchKernel launches of f (1x1x1 grid and block), each checked inline as a real caller would:
// one compare per launch. Exits 1 on a failure.
void driverLaunches(CUfunction f, long n) {
  for (long i = 0; i < n; ++i) {
    if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS) {
      std::fprintf(stderr, "launch_loop: cuLaunchKernel failed at launch %ld\n", i);
      std::exit(1);
    }
  }
}

// N cuLaunchKernel launches of the same kernel (driver API only, no runtime call around them).
void runDriver(long n) {
  cudaFunction_t fn = nullptr;
  CK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&empty_kernel)));
  const CUfunction f = reinterpret_cast<CUfunction>(fn);
  for (long i = 0; i < kWarmupLaunches; ++i) CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));
  CK(cudaDeviceSynchronize());
  const auto t0 = Clock::now();
  driverLaunches(f, n);
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

// ---- ab: the sides and their switches ----------------------------------------------------------------

// One request to this process's kcount control socket; true when the answer says "ok":true.
bool kcountControl(const char* cmd) {
  const char* dir = std::getenv("KCOUNT_CONTROL_DIR");
  if (dir == nullptr) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%d.sock", dir, static_cast<int>(getpid())) >=
      static_cast<int>(sizeof(addr.sun_path)))
    return false;
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = std::string("{\"cmd\":\"") + cmd + "\"}\n";
    if (write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t got = 0;
      while (answer.find('\n') == std::string::npos && (got = read(fd, buf, sizeof(buf))) > 0) answer.append(buf, got);
    }
  }
  close(fd);
  const bool ok = answer.find("\"ok\":true") != std::string::npos;
  if (!ok) std::fprintf(stderr, "launch_loop: kcount control '%s' failed: %s\n", cmd, answer.c_str());
  return ok;
}

struct FloorSwitch {
  int (*attach)() = nullptr;
  void (*detach)() = nullptr;
};

// Loads libcupti_floor.so from CUPTI_FLOOR_LIB; false (and a message) when it cannot.
bool loadFloor(FloorSwitch* f) {
  const char* path = std::getenv("CUPTI_FLOOR_LIB");
  if (path == nullptr || *path == '\0') return false;
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h != nullptr) {
    f->attach = reinterpret_cast<int (*)()>(dlsym(h, "cuptiFloorAttach"));
    f->detach = reinterpret_cast<void (*)()>(dlsym(h, "cuptiFloorDetach"));
  }
  if (f->attach == nullptr || f->detach == nullptr) {
    std::fprintf(stderr, "launch_loop: CUPTI_FLOOR_LIB=%s: %s\n", path,
                 h == nullptr ? dlerror() : "no cuptiFloorAttach/cuptiFloorDetach");
    return false;
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

// Launches per timed block of the ab mode (about 4-7 ms of launches on the H200).
constexpr long kAbBlock = 1000;

// One side's timed launches: the mean over all of them with the closing synchronize (the budget figure),
// the median over its blocks of kAbBlock launches (robust to stalls of the host: interrupts, preemption,
// the profiler's other threads), and the launching thread's CPU time (CLOCK_THREAD_CPUTIME_ID), all in
// microseconds per launch.
struct SideTiming {
  double us_per_launch = 0;
  double block_median_us = 0;
  double cpu_us_per_launch = 0;
};

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ,"KEY":{"side":value,...} for the sides present.
void printSides(const char* key, const std::vector<std::string>& sides, std::map<std::string, double>& v) {
  std::printf(",\"%s\":{", key);
  for (size_t i = 0; i < sides.size(); ++i) std::printf("%s\"%s\":%.6f", i ? "," : "", sides[i].c_str(), v[sides[i]]);
  std::printf("}");
}

// ,"KEY":{"a-b":{"median":D,"min":D,"max":D},...} over the rounds.
void printPaired(const char* key, const std::map<std::string, std::vector<double>>& paired) {
  std::printf(",\"%s\":{", key);
  bool first = true;
  for (const auto& [name, d] : paired) {
    std::printf("%s\"%s\":{\"median\":%.6f,\"min\":%.6f,\"max\":%.6f}", first ? "" : ",", name.c_str(), median(d),
                *std::min_element(d.begin(), d.end()), *std::max_element(d.begin(), d.end()));
    first = false;
  }
  std::printf("}");
}

// LAUNCH_LOOP_PIN_CPU (file comment): the calling thread's affinity set to that one CPU for the lifetime of
// this object, the previous affinity restored after. `cpu` < 0: nothing changed. A failed call prints why
// and leaves the affinity as it was (the timing is then unpinned, and the round line says so: ok() false).
class PinnedThread {
 public:
  explicit PinnedThread(int cpu) {
    if (cpu < 0) return;
    if (pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_) != 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    const int rc = pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    if (rc != 0) std::fprintf(stderr, "launch_loop: cannot pin the launching thread to CPU %d: %s\n", cpu, std::strerror(rc));
    pinned_ = rc == 0;
  }
  ~PinnedThread() {
    if (pinned_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
  }
  PinnedThread(const PinnedThread&) = delete;
  PinnedThread& operator=(const PinnedThread&) = delete;
  bool ok() const { return pinned_; }

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
};

// An integer environment variable; `fallback` when unset or empty, -2 when set to something else.
int envInt(const char* name, int fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  return (*end != '\0' || v < 0 || v >= CPU_SETSIZE) ? -2 : static_cast<int>(v);
}

// The ab mode: see the file comment. Returns the exit status.
int runAb(const std::string& api, long n, long rounds) {
  const int pin_cpu = envInt("LAUNCH_LOOP_PIN_CPU", -1);
  const int with_none = envInt("LAUNCH_LOOP_AB_NONE", 1);
  if (pin_cpu == -2 || (with_none != 0 && with_none != 1)) {
    std::fprintf(stderr, "launch_loop: LAUNCH_LOOP_PIN_CPU must be a CPU number, LAUNCH_LOOP_AB_NONE 0 or 1\n");
    return 2;
  }
  FloorSwitch floor;
  std::vector<std::string> sides;
  if (with_none == 1) sides.push_back("none");
  if (loadFloor(&floor)) sides.push_back("floor");
  else if (std::getenv("CUPTI_FLOOR_LIB") != nullptr) return 1;
  if (std::getenv("KCOUNT_CONTROL_DIR") != nullptr) sides.push_back("kcount");
  if (sides.empty()) {
    std::fprintf(stderr, "launch_loop: ab with LAUNCH_LOOP_AB_NONE=0 needs CUPTI_FLOOR_LIB or KCOUNT_CONTROL_DIR\n");
    return 2;
  }
  cudaFunction_t fn = nullptr;
  CK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&empty_kernel)));
  const CUfunction f = reinterpret_cast<CUfunction>(fn);
  auto launchesNoSync = [&](long count) {
    if (api == "runtime") {
      for (long i = 0; i < count; ++i) empty_kernel<<<1, 1>>>();
    } else {
      driverLaunches(f, count);
    }
  };
  auto launches = [&](long count) {
    launchesNoSync(count);
    CK(cudaDeviceSynchronize());
  };
  // The timed launches of one side: in blocks of kAbBlock, each block's host time kept (no synchronize
  // between blocks), then one synchronize; the launching thread's CPU time over all of it.
  const long block = std::min(n, kAbBlock);
  std::vector<double> block_us;
  block_us.reserve(static_cast<size_t>(n / block + 1));
  bool all_pinned = true;  // every timed side of the round ran pinned (LAUNCH_LOOP_PIN_CPU)
  auto timed = [&](SideTiming* t) {
    const PinnedThread pin(pin_cpu);
    all_pinned = all_pinned && pin.ok();
    block_us.clear();
    const double cpu0 = threadCpuSeconds();
    const auto t0 = Clock::now();
    auto b0 = t0;
    for (long done = 0; done < n;) {
      const long count = std::min(block, n - done);
      launchesNoSync(count);
      done += count;
      const auto b1 = Clock::now();
      if (count == block)
        block_us.push_back(std::chrono::duration<double>(b1 - b0).count() * 1e6 / static_cast<double>(count));
      b0 = b1;
    }
    CK(cudaDeviceSynchronize());
    t->us_per_launch = secondsSince(t0) * 1e6 / static_cast<double>(n);
    t->cpu_us_per_launch = (threadCpuSeconds() - cpu0) * 1e6 / static_cast<double>(n);
    t->block_median_us = median(block_us);
  };
  auto sw = [&](const std::string& side, bool on) {
    if (side == "floor") {
      if (on) return floor.attach() == 1;
      floor.detach();
      return true;
    }
    if (side == "kcount") return kcountControl(on ? "start" : "stop");
    return true;
  };
  launches(kWarmupLaunches);
  std::map<std::string, std::vector<double>> per;
  std::map<std::string, std::vector<double>> paired;  // from the mean over the whole side (the budget figure)
  std::map<std::string, std::vector<double>> paired_block, paired_cpu;
  const char* pairs[][2] = {{"kcount", "floor"}, {"floor", "none"}, {"kcount", "none"}};
  const std::string workload = "ab-" + api;
  for (long r = 0; r < rounds; ++r) {
    std::vector<std::string> order(sides);
    std::rotate(order.begin(), order.begin() + static_cast<long>(r % static_cast<long>(sides.size())), order.end());
    std::map<std::string, double> us, us_block, us_cpu;
    all_pinned = true;
    for (const std::string& side : order) {
      if (!sw(side, true)) return 1;
      launches(10000);
      SideTiming t;
      timed(&t);
      us[side] = t.us_per_launch;
      us_block[side] = t.block_median_us;
      us_cpu[side] = t.cpu_us_per_launch;
      if (!sw(side, false)) return 1;
      CK(cudaDeviceSynchronize());
      per[side].push_back(us[side]);
    }
    std::printf("{\"workload\":\"%s\",\"round\":%ld,\"order\":[", workload.c_str(), r);
    for (size_t i = 0; i < order.size(); ++i) std::printf("%s\"%s\"", i ? "," : "", order[i].c_str());
    std::printf("]");
    printSides("us_per_launch", sides, us);
    printSides("block_us_per_launch", sides, us_block);
    printSides("cpu_us_per_launch", sides, us_cpu);
    if (pin_cpu >= 0 && all_pinned) std::printf(",\"pinned_cpu\":%d", pin_cpu);
    std::printf("}\n");
    std::fflush(stdout);
    for (const auto& p : pairs)
      if (us.count(p[0]) != 0 && us.count(p[1]) != 0) {
        const std::string name = std::string(p[0]) + "-" + p[1];
        paired[name].push_back(us[p[0]] - us[p[1]]);
        paired_block[name].push_back(us_block[p[0]] - us_block[p[1]]);
        paired_cpu[name].push_back(us_cpu[p[0]] - us_cpu[p[1]]);
      }
  }
  std::printf("{\"workload\":\"%s\",\"n\":%ld,\"rounds\":%ld,\"median_us_per_launch\":{", workload.c_str(), n, rounds);
  for (size_t i = 0; i < sides.size(); ++i) std::printf("%s\"%s\":%.6f", i ? "," : "", sides[i].c_str(), median(per[sides[i]]));
  std::printf("}");
  printPaired("paired_us_per_launch", paired);
  printPaired("paired_block_us_per_launch", paired_block);
  printPaired("paired_cpu_us_per_launch", paired_cpu);
  std::printf("}\n");
  std::fflush(stdout);
  return 0;
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
               "usage: launch_loop runtime N | driver N | graph M [K] | all N M [K] | ab runtime|driver N R\n"
               "  N: launches per loop, M: graph replays, K: kernels per graph (default 1000), R: rounds; all >= 1\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  long n = 0, m = 0, k = 1000;
  if (mode == "ab") {
    const std::string api = argc == 5 ? argv[2] : "";
    if ((api != "runtime" && api != "driver") || !parseCount(argv[3], &n) || !parseCount(argv[4], &m)) return usage();
    CK(cudaFree(nullptr));
    printInfo();
    return runAb(api, n, m);
  }
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
