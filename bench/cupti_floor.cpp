// libcupti_floor.so: the bare CUPTI subscriber of the overhead benchmark (bench/run_bench.py). It turns
// on exactly what libkcount.so turns on (inject/cupti_attach.cpp) and does nothing else, so its cost
// is the floor any CUPTI-based tool pays, and kcount's cost above it is kcount's own:
//
//   - the launch callback ids of inject/callbacks.cpp (25 runtime and driver ids; an empty callback),
//   - activity kind CONCURRENT_KERNEL with buffer-requested/-completed callbacks (buffers of 8 MiB,
//     kcount's default KCOUNT_ACTIVITY_BUFFER_MB, pooled; a completed buffer is walked record by record
//     with cuptiActivityGetNextRecord and handed back to the pool),
//   - a CLOCK_MONOTONIC timestamp callback (cuptiActivityRegisterTimestampCallback),
//   - with CUPTI_FLOOR_MEMORY=1: the memcpy/memset API callbacks (every runtime and driver callback id
//     whose cuptiGetCallbackName starts with cudaMemcpy, cudaMemset, cuMemcpy or cuMemset) and activity
//     kinds MEMCPY and MEMSET, as libkcount.so versions that record memory operations do,
//   - with CUPTI_FLOOR_GRAPH_NODES=1: the resource callbacks GRAPHNODE_CREATED and GRAPHNODE_CLONED, as
//     libkcount.so versions that record graph nodes do.
// bench/run_bench.py sets the last two to match the libkcount.so it measures. Keep this file in step
// with the attach in inject/cupti_attach.cpp.
//
// Loaded by the CUDA driver inside cuInit:
//
//     CUDA_INJECTION64_PATH=/path/to/libcupti_floor.so ./program
//
// CUPTI is dlopen()ed like kcount does it (inject/cupti_api.cpp): a libcupti.so.13 already in the
// process first (PyTorch's copy from its CUDA wheel), then CUPTI_FLOOR_PATH, the CUDA wheel folder next
// to a loaded site-packages/nvidia/ library, $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, the loader's path.
//
// Variations, for finding out which CUPTI setting lowers the floor (all optional, read once):
//   CUPTI_FLOOR_CALLBACKS  all (default: kcount's ids) | driver | runtime | none
//   CUPTI_FLOOR_ACTIVITY   1 (default) | 0: activity on or off (0: no CONCURRENT_KERNEL, and no MEMCPY/MEMSET
//                          even with CUPTI_FLOOR_MEMORY=1: what kcount enables with KCOUNT_GPU_TIME=0)
//   CUPTI_FLOOR_GRAPH_TRACE 0 (default) | 1: also CUPTI_ACTIVITY_KIND_GRAPH_TRACE, one record per graph launch
//                          instead of one per kernel of the graph (cupti_activity.h, CUDA 13)
//   CUPTI_FLOOR_BUFFER_MB  size of one activity buffer in MiB (default 8, at least 1)
//   CUPTI_FLOOR_TIMESTAMP  1 (default) | 0: register the timestamp callback or not
//   CUPTI_FLOOR_MEMORY     0 (default) | 1: memcpy/memset API callbacks and MEMCPY/MEMSET activity
//   CUPTI_FLOOR_GRAPH_NODES 0 (default) | 1: resource callbacks GRAPHNODE_CREATED and GRAPHNODE_CLONED
//   CUPTI_FLOOR_ACTIVITY_DUTY ON_MS/PERIOD_MS (default: unset, activity on all the time): kernel activity
//                          (CONCURRENT_KERNEL) on for the first ON_MS of every PERIOD_MS only; a thread of
//                          this library calls cuptiActivityDisable / cuptiActivityEnable at the edges. What a
//                          tool that samples GPU time in windows (and counts kernels at launch) would pay.
//                          At exit (and at each detach) one line on stderr gives the kernel activity records
//                          seen and the windows opened: "cupti_floor: duty: ...".
//
//   CUPTI_FLOOR_START      on (default) | paused: paused: InitializeInjection subscribes to nothing; the
//                          program switches the floor with cuptiFloorAttach() / cuptiFloorDetach()
//
// Switched from inside the program (bench/launch_loop.cu `ab`, the same-process comparison with
// libkcount.so): the program dlopen()s this library itself (libkcount.so, preloaded, owns
// CUDA_INJECTION64_PATH) and calls cuptiFloorAttach() / cuptiFloorDetach() between timed loops, while
// kcount is stopped. An attach registers the activity buffer and timestamp callbacks again (they are
// process-wide: kcount's own replaced them while it recorded), subscribes and enables; a detach flushes,
// disables the activity kinds and unsubscribes, as libkcount.so's detach does minus cuptiFinalize.
//
// One line on stderr at the first attach says what was enabled ("cupti_floor: active: ...") or why
// nothing was ("cupti_floor: inactive: ..."); the benchmark checks for it. The CUDA program is never
// stopped: InitializeInjection always returns 1.
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#define FLOOR_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// One launch callback: (CUpti_CallbackDomain, CUpti_CallbackId). Same list and order as kLaunchApis in
/// inject/callbacks.cpp; tests/bench/floor_callbacks_test.cpp checks that the two lists are equal.
struct LaunchCallback {
  uint32_t domain;
  uint32_t cbid;
};

constexpr LaunchCallback kLaunchCallbacks[] = {
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunch},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz},
};
constexpr size_t kNumLaunchCallbacks = sizeof(kLaunchCallbacks) / sizeof(kLaunchCallbacks[0]);

constexpr const char* kSoname = "libcupti.so.13";

// CUPTI entry points, resolved with dlsym.
struct CuptiFns {
  decltype(&cuptiGetVersion) getVersion = nullptr;
  decltype(&cuptiGetResultString) getResultString = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enableCallback = nullptr;
  decltype(&cuptiActivityEnable) activityEnable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) activityRegisterCallbacks = nullptr;
  decltype(&cuptiActivityGetNextRecord) activityGetNextRecord = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) activityRegisterTimestampCallback = nullptr;
  decltype(&cuptiGetCallbackName) getCallbackName = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiActivityDisable) activityDisable = nullptr;
  decltype(&cuptiActivityFlushAll) activityFlushAll = nullptr;
};
CuptiFns g_cupti;

// ---- Activity buffers: a pool guarded by a mutex (kcount pools and reuses its buffers too). --------
constexpr size_t kMaxPooledBuffers = 256;
pthread_mutex_t g_pool_mutex = PTHREAD_MUTEX_INITIALIZER;  // guards g_pool, g_pool_size
uint8_t* g_pool[kMaxPooledBuffers];
size_t g_pool_size = 0;
size_t g_buffer_bytes = 8u << 20;

// ---- The CUPTI callbacks: as little as CUPTI allows. -----------------------------------------------
void CUPTIAPI onCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  uint8_t* b = nullptr;
  pthread_mutex_lock(&g_pool_mutex);
  if (g_pool_size > 0) b = g_pool[--g_pool_size];
  pthread_mutex_unlock(&g_pool_mutex);
  if (b == nullptr) b = static_cast<uint8_t*>(std::aligned_alloc(8, g_buffer_bytes));
  *buffer = b;
  *size = b != nullptr ? g_buffer_bytes : 0;
  *max_records = 0;
}

// Kernel activity records walked so far (CUPTI_FLOOR_ACTIVITY_DUTY's report).
std::atomic<uint64_t> g_kernel_records{0};

void CUPTIAPI onBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  uint64_t kernels = 0;
  while (valid > 0 && g_cupti.activityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
  }
  if (kernels > 0) g_kernel_records.fetch_add(kernels, std::memory_order_relaxed);
  if (buffer == nullptr) return;
  bool pooled = false;
  pthread_mutex_lock(&g_pool_mutex);
  if (g_pool_size < kMaxPooledBuffers) {
    g_pool[g_pool_size++] = buffer;
    pooled = true;
  }
  pthread_mutex_unlock(&g_pool_mutex);
  if (!pooled) std::free(buffer);
}

uint64_t CUPTIAPI onTimestamp() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// ---- Loading CUPTI. ----------------------------------------------------------------------------------
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// Finds "<prefix>/site-packages/nvidia/" in the path of any loaded object; copies the prefix up to and
// including "nvidia/" into out. Returns false if no loaded object comes from a CUDA wheel.
bool cudaWheelRoot(char* out, size_t out_size) {
  struct Search {
    char* out;
    size_t size;
    bool found;
  } search{out, out_size, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        const char* name = info->dlpi_name;
        const char* key = "/site-packages/nvidia/";
        const char* at = name != nullptr ? std::strstr(name, key) : nullptr;
        if (at == nullptr || s->found) return 0;
        const size_t n = static_cast<size_t>(at - name) + std::strlen(key);
        if (n + 1 > s->size) return 0;
        std::memcpy(s->out, name, n);
        s->out[n] = '\0';
        s->found = true;
        return 1;
      },
      &search);
  return search.found;
}

void* tryOpen(const char* path, const char* how, const char** how_out) {
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h != nullptr) *how_out = how;
  return h;
}

void* tryOpenIn(const char* dir, const char* sub, const char* how, const char** how_out) {
  char path[4096];
  if (std::snprintf(path, sizeof(path), "%s%s%s", dir, sub, kSoname) >= static_cast<int>(sizeof(path))) return nullptr;
  return tryOpen(path, how, how_out);
}

// kcount's search order (inject/cupti_api.cpp).
void* loadCupti(const char** how) {
  void* h = dlopen(kSoname, RTLD_NOW | RTLD_NOLOAD);
  if (h != nullptr) {
    *how = "already loaded in the process";
    return h;
  }
  if (const char* p = env("CUPTI_FLOOR_PATH")) {
    if ((h = tryOpen(p, "CUPTI_FLOOR_PATH", how)) != nullptr) return h;
  }
  char wheel[4096];
  if (cudaWheelRoot(wheel, sizeof(wheel))) {
    if ((h = tryOpenIn(wheel, "cu13/lib/", "CUDA wheel", how)) != nullptr) return h;
    if ((h = tryOpenIn(wheel, "cuda_cupti/lib/", "CUDA wheel", how)) != nullptr) return h;
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* root = env(var)) {
      if ((h = tryOpenIn(root, "/lib64/", var, how)) != nullptr) return h;
      if ((h = tryOpenIn(root, "/extras/CUPTI/lib64/", var, how)) != nullptr) return h;
    }
  }
  for (const char* sub : {"/lib64/", "/extras/CUPTI/lib64/", "/targets/x86_64-linux/lib/"}) {
    if ((h = tryOpenIn("/usr/local/cuda", sub, "CUDA toolkit", how)) != nullptr) return h;
  }
  return tryOpen(kSoname, "loader search path", how);
}

template <typename Fn>
bool resolve(void* handle, Fn* fn, const char* name) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  return *fn != nullptr;
}

const char* resultString(CUptiResult r) {
  const char* s = nullptr;
  if (g_cupti.getResultString != nullptr) g_cupti.getResultString(r, &s);
  return s != nullptr ? s : "CUPTI_ERROR";
}

bool check(CUptiResult r, const char* call) {
  if (r == CUPTI_SUCCESS) return true;
  std::fprintf(stderr, "cupti_floor: inactive: %s failed: %s (code %d)\n", call, resultString(r), static_cast<int>(r));
  return false;
}

bool flag(const char* name, bool fallback) {
  const char* v = env(name);
  return v == nullptr ? fallback : std::strcmp(v, "0") != 0;
}

/// What to enable, from the CUPTI_FLOOR_* variables (read once, at the first load).
struct Settings {
  const char* callbacks = "all";
  bool activity = true;
  bool timestamp = true;
  bool memory = false;
  bool graph_nodes = false;
  bool graph_trace = false;
  bool memory_activity = false;
  uint32_t duty_on_ms = 0;      // CUPTI_FLOOR_ACTIVITY_DUTY; 0: kernel activity on all the time
  uint32_t duty_period_ms = 0;
};

Settings g_settings;
char g_cupti_path[4096] = "?";
const char* g_how = "";
uint32_t g_version = 0;
int g_loaded = 0;  // 0 not tried, 1 loaded, -1 failed (message printed)
bool g_announced = false;
CUpti_SubscriberHandle g_subscriber = nullptr;
size_t g_enabled_ids = 0;
size_t g_memory_ids = 0;

// Reads the settings and loads CUPTI, once. False (with one "inactive" line) if unusable.
bool loadOnce() {
  if (g_loaded != 0) return g_loaded > 0;
  g_loaded = -1;
  Settings& st = g_settings;
  if (const char* which = env("CUPTI_FLOOR_CALLBACKS")) st.callbacks = which;
  if (std::strcmp(st.callbacks, "all") != 0 && std::strcmp(st.callbacks, "driver") != 0 &&
      std::strcmp(st.callbacks, "runtime") != 0 && std::strcmp(st.callbacks, "none") != 0) {
    std::fprintf(stderr, "cupti_floor: inactive: CUPTI_FLOOR_CALLBACKS=%s (want all, driver, runtime or none)\n",
                 st.callbacks);
    return false;
  }
  st.activity = flag("CUPTI_FLOOR_ACTIVITY", true);
  st.timestamp = flag("CUPTI_FLOOR_TIMESTAMP", true);
  st.memory = flag("CUPTI_FLOOR_MEMORY", false);
  st.graph_nodes = flag("CUPTI_FLOOR_GRAPH_NODES", false);
  st.graph_trace = st.activity && flag("CUPTI_FLOOR_GRAPH_TRACE", false);
  st.memory_activity = st.memory && st.activity;
  if (const char* duty = env("CUPTI_FLOOR_ACTIVITY_DUTY")) {
    unsigned on = 0, period = 0;
    char rest = 0;
    if (std::sscanf(duty, "%u/%u%c", &on, &period, &rest) != 2 || on == 0 || period <= on || period > 600000) {
      std::fprintf(stderr, "cupti_floor: inactive: CUPTI_FLOOR_ACTIVITY_DUTY=%s (want ON_MS/PERIOD_MS, 0 < ON < PERIOD)\n",
                   duty);
      return false;
    }
    st.duty_on_ms = on;
    st.duty_period_ms = period;
  }
  if (const char* mb = env("CUPTI_FLOOR_BUFFER_MB")) {
    const long v = std::strtol(mb, nullptr, 10);
    if (v >= 1 && v <= 1024) g_buffer_bytes = static_cast<size_t>(v) << 20;
  }

  void* handle = loadCupti(&g_how);
  if (handle == nullptr) {
    std::fprintf(stderr, "cupti_floor: inactive: no %s found\n", kSoname);
    return false;
  }
  const bool ok = resolve(handle, &g_cupti.getVersion, "cuptiGetVersion") &&
                  resolve(handle, &g_cupti.getResultString, "cuptiGetResultString") &&
                  resolve(handle, &g_cupti.subscribe, "cuptiSubscribe") &&
                  resolve(handle, &g_cupti.unsubscribe, "cuptiUnsubscribe") &&
                  resolve(handle, &g_cupti.enableCallback, "cuptiEnableCallback") &&
                  resolve(handle, &g_cupti.activityEnable, "cuptiActivityEnable") &&
                  resolve(handle, &g_cupti.activityDisable, "cuptiActivityDisable") &&
                  resolve(handle, &g_cupti.activityFlushAll, "cuptiActivityFlushAll") &&
                  resolve(handle, &g_cupti.activityRegisterCallbacks, "cuptiActivityRegisterCallbacks") &&
                  resolve(handle, &g_cupti.activityGetNextRecord, "cuptiActivityGetNextRecord");
  resolve(handle, &g_cupti.activityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
  resolve(handle, &g_cupti.getCallbackName, "cuptiGetCallbackName");
  link_map* lm = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr && lm->l_name != nullptr)
    std::snprintf(g_cupti_path, sizeof(g_cupti_path), "%s", lm->l_name);
  if (!ok) {
    std::fprintf(stderr, "cupti_floor: inactive: %s lacks a required CUPTI function\n", g_cupti_path);
    return false;
  }
  if (st.memory && g_cupti.getCallbackName == nullptr) {
    std::fprintf(stderr, "cupti_floor: inactive: CUPTI_FLOOR_MEMORY=1 needs cuptiGetCallbackName\n");
    return false;
  }
  if (g_cupti.getVersion(&g_version) != CUPTI_SUCCESS) g_version = 0;
  g_loaded = 1;
  return true;
}

// ---- CUPTI_FLOOR_ACTIVITY_DUTY: a thread that switches kernel activity off and on. -------------------
pthread_mutex_t g_duty_mutex = PTHREAD_MUTEX_INITIALIZER;  // guards g_duty_stop
pthread_cond_t g_duty_cond;
bool g_duty_stop = false;
bool g_duty_running = false;  // under g_switch_mutex
pthread_t g_duty_thread;
std::atomic<uint64_t> g_duty_windows{0};       // windows opened (the first at attach)
std::atomic<uint64_t> g_duty_switch_ns{0};     // time inside cuptiActivityEnable/Disable, all switches
std::atomic<uint64_t> g_duty_switches{0};
std::atomic<uint64_t> g_duty_failures{0};

uint64_t monotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Waits until `deadline_ns` (CLOCK_MONOTONIC) or a stop request. True when asked to stop.
bool dutyWait(uint64_t deadline_ns) {
  timespec until{static_cast<time_t>(deadline_ns / 1000000000ull), static_cast<long>(deadline_ns % 1000000000ull)};
  pthread_mutex_lock(&g_duty_mutex);
  while (!g_duty_stop && pthread_cond_timedwait(&g_duty_cond, &g_duty_mutex, &until) == 0) {
  }
  const bool stop = g_duty_stop;
  pthread_mutex_unlock(&g_duty_mutex);
  return stop;
}

void dutySwitch(bool on) {
  const uint64_t t0 = monotonicNs();
  const CUptiResult r = on ? g_cupti.activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                           : g_cupti.activityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  g_duty_switch_ns.fetch_add(monotonicNs() - t0, std::memory_order_relaxed);
  g_duty_switches.fetch_add(1, std::memory_order_relaxed);
  if (r != CUPTI_SUCCESS) g_duty_failures.fetch_add(1, std::memory_order_relaxed);
  if (on && r == CUPTI_SUCCESS) g_duty_windows.fetch_add(1, std::memory_order_relaxed);
}

// Kernel activity is on when the thread starts (attach enabled it): off at ON_MS, on again at PERIOD_MS.
void* dutyMain(void*) {
  const uint64_t on_ns = uint64_t{g_settings.duty_on_ms} * 1000000ull;
  const uint64_t period_ns = uint64_t{g_settings.duty_period_ms} * 1000000ull;
  uint64_t window_start = monotonicNs();
  for (;;) {
    if (dutyWait(window_start + on_ns)) break;
    dutySwitch(false);
    window_start += period_ns;
    if (dutyWait(window_start)) {
      dutySwitch(true);  // leave activity on, as attach() left it: detach() disables it
      break;
    }
    dutySwitch(true);
  }
  return nullptr;
}

void dutyStart() {
  if (g_settings.duty_on_ms == 0 || !g_settings.activity || g_duty_running) return;
  static bool cond_ready = false;
  if (!cond_ready) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&g_duty_cond, &attr);
    pthread_condattr_destroy(&attr);
    cond_ready = true;
  }
  g_duty_stop = false;
  g_duty_windows.fetch_add(1, std::memory_order_relaxed);
  g_duty_running = pthread_create(&g_duty_thread, nullptr, &dutyMain, nullptr) == 0;
  if (!g_duty_running) std::fprintf(stderr, "cupti_floor: duty: no thread; kernel activity stays on\n");
}

void dutyReport(const char* when) {
  const uint64_t switches = g_duty_switches.load();
  std::fprintf(stderr,
               "cupti_floor: duty: %s: %llu kernel activity records; %llu windows of %u ms every %u ms; %llu switches, "
               "%.1f us each on average, %llu failed\n",
               when, static_cast<unsigned long long>(g_kernel_records.load()),
               static_cast<unsigned long long>(g_duty_windows.load()), g_settings.duty_on_ms, g_settings.duty_period_ms,
               static_cast<unsigned long long>(switches),
               switches > 0 ? static_cast<double>(g_duty_switch_ns.load()) / 1e3 / static_cast<double>(switches) : 0.0,
               static_cast<unsigned long long>(g_duty_failures.load()));
}

void dutyStop() {
  if (!g_duty_running) return;
  pthread_mutex_lock(&g_duty_mutex);
  g_duty_stop = true;
  pthread_cond_signal(&g_duty_cond);
  pthread_mutex_unlock(&g_duty_mutex);
  pthread_join(g_duty_thread, nullptr);
  g_duty_running = false;
}

void detach() {
  if (g_subscriber == nullptr) return;
  const Settings& st = g_settings;
  dutyStop();
  g_cupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (st.activity) g_cupti.activityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (st.graph_trace) g_cupti.activityDisable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  if (st.memory_activity) {
    g_cupti.activityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
    g_cupti.activityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
  }
  g_cupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_cupti.unsubscribe(g_subscriber);
  g_subscriber = nullptr;
  if (st.duty_on_ms != 0) dutyReport("detach");
}

// Subscribes and enables what the settings say. False on a CUPTI failure (one "inactive" line; what was
// enabled is undone).
bool attach() {
  if (g_subscriber != nullptr) return true;
  if (!loadOnce()) return false;
  const Settings& st = g_settings;
  auto failed = [] {
    detach();
    return false;
  };
  bool timestamp_on = false;
  if (st.timestamp && g_cupti.activityRegisterTimestampCallback != nullptr)
    timestamp_on = g_cupti.activityRegisterTimestampCallback(&onTimestamp) == CUPTI_SUCCESS;
  if (st.activity && !check(g_cupti.activityRegisterCallbacks(&onBufferRequested, &onBufferCompleted),
                            "cuptiActivityRegisterCallbacks"))
    return false;
  CUpti_SubscriberHandle subscriber = nullptr;
  if (!check(g_cupti.subscribe(&subscriber, &onCallback, nullptr), "cuptiSubscribe")) return false;
  g_subscriber = subscriber;
  size_t enabled = 0;
  for (const LaunchCallback& cb : kLaunchCallbacks) {
    const bool want = std::strcmp(st.callbacks, "all") == 0 ||
                      (std::strcmp(st.callbacks, "driver") == 0 && cb.domain == CUPTI_CB_DOMAIN_DRIVER_API) ||
                      (std::strcmp(st.callbacks, "runtime") == 0 && cb.domain == CUPTI_CB_DOMAIN_RUNTIME_API);
    if (!want) continue;
    if (!check(g_cupti.enableCallback(1, subscriber, static_cast<CUpti_CallbackDomain>(cb.domain), cb.cbid),
               "cuptiEnableCallback"))
      return failed();
    ++enabled;
  }
  size_t memory_ids = 0;
  if (st.memory) {
    const CUpti_CallbackDomain domains[] = {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API};
    for (const CUpti_CallbackDomain domain : domains) {
      const uint32_t max = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                                                  : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
      for (uint32_t cbid = 1; cbid < max; ++cbid) {
        const char* name = nullptr;
        if (g_cupti.getCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
        const bool is_memory = std::strncmp(name, "cudaMemcpy", 10) == 0 || std::strncmp(name, "cudaMemset", 10) == 0 ||
                               std::strncmp(name, "cuMemcpy", 8) == 0 || std::strncmp(name, "cuMemset", 8) == 0;
        if (!is_memory) continue;
        if (!check(g_cupti.enableCallback(1, subscriber, domain, cbid), "cuptiEnableCallback(memory API)"))
          return failed();
        ++memory_ids;
      }
    }
  }
  if (st.graph_nodes &&
      (!check(g_cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED),
              "cuptiEnableCallback(GRAPHNODE_CREATED)") ||
       !check(g_cupti.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED),
              "cuptiEnableCallback(GRAPHNODE_CLONED)")))
    return failed();
  if (st.activity &&
      !check(g_cupti.activityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable(CONCURRENT_KERNEL)"))
    return failed();
  if (st.graph_trace &&
      !check(g_cupti.activityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE), "cuptiActivityEnable(GRAPH_TRACE)"))
    return failed();
  if (st.memory_activity &&
      (!check(g_cupti.activityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "cuptiActivityEnable(MEMCPY)") ||
       !check(g_cupti.activityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "cuptiActivityEnable(MEMSET)")))
    return failed();
  g_enabled_ids = enabled;
  g_memory_ids = memory_ids;
  if (!g_announced) {
    g_announced = true;
    std::fprintf(stderr,
                 "cupti_floor: active: CUPTI %s (API version %u, %s); %zu launch callback ids (%s); "
                 "activity CONCURRENT_KERNEL %s, GRAPH_TRACE %s; memory: %zu callback ids, activity MEMCPY/MEMSET %s; "
                 "graph node callbacks %s; buffers %zu MiB; timestamp callback %s; kernel activity duty %s\n",
                 g_cupti_path, g_version, g_how, enabled, st.callbacks, st.activity ? "on" : "off",
                 st.graph_trace ? "on" : "off", memory_ids, st.memory_activity ? "on" : "off",
                 st.graph_nodes ? "on" : "off", g_buffer_bytes >> 20, timestamp_on ? "on" : "off",
                 st.duty_on_ms != 0 ? env("CUPTI_FLOOR_ACTIVITY_DUTY") : "none (always on)");
  }
  dutyStart();
  return true;
}

pthread_mutex_t g_switch_mutex = PTHREAD_MUTEX_INITIALIZER;  // serializes attach/detach

}  // namespace

/// CUDA injection entry point, called once by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH
/// names this library. Loads CUPTI and enables what kcount enables (see the file comment). Always
/// returns 1: a failure only prints "cupti_floor: inactive: <reason>" on stderr.
FLOOR_EXPORT int InitializeInjection(void) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return 1;
  const char* start = env("CUPTI_FLOOR_START");
  if (start != nullptr && std::strcmp(start, "paused") == 0) return 1;
  pthread_mutex_lock(&g_switch_mutex);
  attach();
  if (g_subscriber != nullptr && g_settings.duty_on_ms != 0) {
    // The records of the last window reach the count only after a flush; the floor never detaches here.
    std::atexit([] {
      pthread_mutex_lock(&g_switch_mutex);
      if (g_subscriber != nullptr) {
        dutyStop();
        g_cupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        dutyReport("exit");
      }
      pthread_mutex_unlock(&g_switch_mutex);
    });
  }
  pthread_mutex_unlock(&g_switch_mutex);
  return 1;
}

/// Subscribes and enables the floor's callbacks and activity kinds (the CUPTI_FLOOR_* settings, read at
/// the first call; CUPTI loaded then). For a program that switches the floor itself (bench/launch_loop.cu
/// `ab`), with no other CUPTI subscriber in the process at the time. Returns 1 when attached (or already
/// attached), 0 when CUPTI is missing or a CUPTI call failed (one "cupti_floor: inactive: ..." line on
/// stderr). Thread-safe (one mutex); not from inside a CUPTI callback.
FLOOR_EXPORT int cuptiFloorAttach(void) {
  pthread_mutex_lock(&g_switch_mutex);
  const bool ok = attach();
  pthread_mutex_unlock(&g_switch_mutex);
  return ok ? 1 : 0;
}

/// Undoes cuptiFloorAttach(): flushes the activity buffers (forced), disables the activity kinds and
/// unsubscribes, so another subscriber (libkcount.so's next window) can subscribe. No-op when not
/// attached. Thread-safe; not from inside a CUPTI callback.
FLOOR_EXPORT void cuptiFloorDetach(void) {
  pthread_mutex_lock(&g_switch_mutex);
  detach();
  pthread_mutex_unlock(&g_switch_mutex);
}

/// The launch callback ids this library enables with CUPTI_FLOOR_CALLBACKS=all, as (domain, callback
/// id) pairs of uint32_t, `*count` pairs in all. For the test that compares them with kcount's list.
FLOOR_EXPORT const uint32_t* cuptiFloorLaunchCallbacks(size_t* count) {
  static_assert(sizeof(LaunchCallback) == 2 * sizeof(uint32_t), "pairs of uint32_t");
  *count = kNumLaunchCallbacks;
  return reinterpret_cast<const uint32_t*>(kLaunchCallbacks);
}
