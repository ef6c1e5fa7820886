// CUDA injection entry point (InitializeInjection, called by the driver during cuInit when
// CUDA_INJECTION64_PATH names this library) and the CUPTI trampolines. The only file that calls CUPTI.
#include <cupti.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <string_view>

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "collector/clock.h"
#include "inject/callbacks.h"
#include "inject/control.h"
#include "inject/cupti_api.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/session.h"
#include "inject/thread_state.h"

namespace kc::inject {

namespace {

CuptiApi& g_cupti = *new CuptiApi();  // immortal: callbacks may arrive during exit
CUpti_SubscriberHandle g_subscriber = nullptr;  // set while attached; attach/detach under the control lock
std::atomic<bool> g_cupti_active{false};        // attached: subscribed, callbacks and activity enabled
// Dynamic detach (see "Attach and detach" below): after a window closes, CUPTI is finalized inside the
// next CUDA API exit callback. kDetachPending: every runtime/driver API calls back until one exits;
// kDetachFinalizing: that callback is in cuptiFinalize; kDetachDone: CUPTI is finalized (the next attach
// subscribes and registers the activity callbacks again).
enum DetachState : int { kDetachNone = 0, kDetachPending = 1, kDetachFinalizing = 2, kDetachDone = 3 };
std::atomic<int> g_detach{kDetachNone};
std::atomic<bool> g_reregister{true};  // activity callbacks to (re)register at the next attach
std::atomic<bool> g_ever_attached{false};  // for cuptiState()
thread_local bool t_keep_cupti = false;  // detach without finalizing (another subscriber is about to take CUPTI)
// Memory API callbacks found by name at initialization, enabled at each attach.
std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>* g_memory_apis =
    new std::vector<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>>();  // immortal

// ---- Activity buffers: pooled and capped (Kineto's buffer cap). -------------------------------------
std::mutex g_buffers_mutex;            // guards g_free_buffers, g_buffers_allocated, g_our_buffers
std::vector<uint8_t*>* g_free_buffers = new std::vector<uint8_t*>();  // immortal
std::vector<uint8_t*>* g_our_buffers = new std::vector<uint8_t*>();   // every buffer kcount allocated
uint64_t g_buffers_allocated = 0;

uint64_t maxActivityBuffers() {
  const Config& c = Session::get().config();
  return std::max<uint64_t>(2, c.max_activity_bytes / c.activity_buffer_bytes);
}

void CUPTIAPI onBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = nullptr;
  *size = 0;
  try {
    const size_t bytes = Session::get().config().activity_buffer_bytes;
    std::lock_guard<std::mutex> lock(g_buffers_mutex);
    if (!g_free_buffers->empty()) {
      *buffer = g_free_buffers->back();
      g_free_buffers->pop_back();
    } else if (g_buffers_allocated < maxActivityBuffers()) {
      *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, bytes));
      if (*buffer != nullptr) {
        ++g_buffers_allocated;
        g_our_buffers->push_back(*buffer);
      }
    }
    if (*buffer != nullptr) {
      *size = bytes;
    } else {
      // CUPTI drops the records it cannot store and counts them (cuptiActivityGetNumDroppedRecords).
      Session::get().counters().activity_buffers_refused.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {
  }
}

void CUPTIAPI onBufferCompleted(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  try {
    thread_local std::vector<const CUpti_Activity*> records;
    records.clear();
    CUpti_Activity* record = nullptr;
    while (valid > 0 && g_cupti.activityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      records.push_back(record);
    }
    onActivityRecords(records.data(), records.size());
    size_t dropped = 0;
    if (g_cupti.activityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS && dropped > 0)
      Session::get().counters().dropped_activity_records.fetch_add(dropped, std::memory_order_relaxed);
  } catch (...) {
  }
  if (buffer != nullptr) {
    try {
      std::lock_guard<std::mutex> lock(g_buffers_mutex);
      // A buffer another CUPTI client handed out before kcount took the callbacks back (KCOUNT_YIELD)
      // is not ours to reuse or free.
      if (std::find(g_our_buffers->begin(), g_our_buffers->end(), buffer) != g_our_buffers->end())
        g_free_buffers->push_back(buffer);
    } catch (...) {
      std::free(buffer);
    }
  }
}

void onGraphResource(CUpti_CallbackId cbid, const CUpti_ResourceData* data) {
  const auto* g = data != nullptr ? static_cast<const CUpti_GraphData*>(data->resourceDescriptor) : nullptr;
  if (g == nullptr || g->nodeType != CU_GRAPH_NODE_TYPE_KERNEL) return;
  GraphNodeBody node{};
  if (g_cupti.getGraphNodeId(g->node, &node.node_id) != CUPTI_SUCCESS) return;
  if (g->graph != nullptr) g_cupti.getGraphId(g->graph, &node.graph_id);
  const bool created = cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED;
  if (!created && g->originalNode != nullptr) g_cupti.getGraphNodeId(g->originalNode, &node.original_node_id);
  onGraphNode(node, created);
}

void finalizeAtApiExit(CUpti_CallbackDomain domain, const void* data);

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  try {
    if (g_detach.load(std::memory_order_relaxed) != kDetachNone) [[unlikely]] {
      finalizeAtApiExit(domain, data);  // a window closed: nothing of this call is recorded
      return;
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
#if defined(KCOUNT_BENCH_LAUNCH_PATH) && KCOUNT_BENCH_LAUNCH_PATH == 0
      return;  // benchmark variant (bench/CMakeLists.txt): kcount's subscription, none of its launch work
#endif
      onLaunchCallback(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
               (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED || cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)) {
      onGraphResource(cbid, static_cast<const CUpti_ResourceData*>(data));
    }
  } catch (...) {
  }
}

uint64_t CUPTIAPI onTimestamp() { return nowNs(); }

// ---- Driver calls used at the edges (never on the hot path). -----------------------------------------
using CuCtxSynchronize = int (*)();
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);

void* libcuda() { return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); }

void recordDeviceMetadata() {
  void* cuda = libcuda();
  if (cuda == nullptr) return;
  auto count_fn = reinterpret_cast<CuDeviceGetCount>(dlsym(cuda, "cuDeviceGetCount"));
  auto get_fn = reinterpret_cast<CuDeviceGet>(dlsym(cuda, "cuDeviceGet"));
  auto name_fn = reinterpret_cast<CuDeviceGetName>(dlsym(cuda, "cuDeviceGetName"));
  int n = 0;
  if (count_fn == nullptr || get_fn == nullptr || name_fn == nullptr || count_fn(&n) != 0) return;
  for (int i = 0; i < n && i < 64; ++i) {
    int dev = 0;
    char name[256] = {};
    if (get_fn(&dev, i) == 0 && name_fn(name, sizeof(name) - 1, dev) == 0)
      Session::get().addMetadata("gpu." + std::to_string(i), name);
  }
}

// Final activity flush: wait for GPU work the program already queued on this thread's context (its
// kernel records exist only once the kernels ended), then make CUPTI hand over every buffer.
void flushActivityForExit() {
  recordDeviceMetadata();
  if (!g_cupti_active.load()) return;  // no window open: CUPTI holds nothing of ours
  if (void* cuda = libcuda()) {
    if (auto sync = reinterpret_cast<CuCtxSynchronize>(dlsym(cuda, "cuCtxSynchronize"))) sync();
  }
  g_cupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void onProcessExit() {
  Session::get().finish(&flushActivityForExit);
  removeControlSocket();
}

// The writer thread's periodic flush: hand over what CUPTI holds, so a process killed without warning
// (SIGKILL, OOM killer) leaves a log complete up to the last second.
void periodicActivityFlush() {
  if (g_cupti_active.load()) g_cupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

// SIGTERM, SIGINT and SIGHUP: each taken only when the program left it at its default action when
// recording started (a C program; Python leaves SIGTERM and SIGHUP there but has its own SIGINT handler by
// then), and never with KCOUNT_SIGTERM=0 / KCOUNT_SIGINT=0 / KCOUNT_SIGHUP=0. The handler asks the writer
// thread to close the log, waits for it (at most 3.5 s), then restores the default action and re-raises,
// so the process still ends by the signal (exit status 143 / 130 / 129), as it would have without kcount.
// SIGHUP is the terminal closing under a job started from it (or `kcount run` passing it on). A handler
// the program installs later replaces this one (sigaction), so the program's own behavior and exit code
// are kept. If such a handler
// saved this one and calls it (chaining), kcount closes the log and returns to it without re-raising:
// what happens next is the program's decision.
void onTerminate(int sig) {
  const int saved_errno = errno;
  Session& s = Session::get();
  struct sigaction current {};
  const bool chained = sigaction(sig, nullptr, &current) == 0 && current.sa_handler != &onTerminate;
  if (getpid() == s.pid() && s.state() == SessionState::kActive) {
    if (Session::recordingNow()) writeUnclosedRanges(/*from_signal_handler=*/true);
    s.noteEndSignal(sig);
    s.requestFinish(&flushActivityForExit);
    for (int i = 0; i < 3000 && s.state() == SessionState::kActive; ++i) {
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
    for (int i = 0; i < 500 && !s.closed(); ++i) {
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
  }
  if (getpid() == s.pid()) removeControlSocket();
  if (chained) {
    errno = saved_errno;
    return;
  }
  signal(sig, SIG_DFL);
  errno = saved_errno;
  raise(sig);  // pending until this handler returns, then the default action ends the process
}

void installTerminateHandler() {
  const Config& c = Session::get().config();
  for (const auto& [sig, wanted] :
       {std::pair{SIGTERM, c.sigterm}, std::pair{SIGINT, c.sigint}, std::pair{SIGHUP, c.sighup}}) {
    if (!wanted) continue;
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction sa {};
    sa.sa_handler = &onTerminate;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
  }
}

std::string failure(CUptiResult r, const char* call) {
  std::string hint;
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    hint = " (another CUPTI client, e.g. torch.profiler or Nsight, already subscribed in this process)";
  return std::string(call) + " failed: " + g_cupti.describe(r) + hint;
}

// Finds the memcpy/memset API callbacks (runtime and driver) by name; they are enabled at each attach.
void findMemoryApis(Session& s) {
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    const uint32_t max = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                                                                : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
    for (uint32_t cbid = 1; cbid < max; ++cbid) {
      const char* name = nullptr;
      if (g_cupti.getCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      const std::string_view n(name);
      const bool memory = n.starts_with("cudaMemcpy") || n.starts_with("cudaMemset") || n.starts_with("cuMemcpy") ||
                          n.starts_with("cuMemset");
      if (memory && registerMemoryApi(domain, cbid, name, s.strings())) g_memory_apis->emplace_back(domain, cbid);
    }
  }
}

constexpr CUpti_ActivityKind kActivityKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_MEMSET};

// ---- Attach and detach (a capture window opens and closes). Called under the session's control lock,
// never from a CUPTI callback, with no other kcount lock held.
//
// CUPTI is not touched before the first window opens: the activity callbacks, the timestamp callback and
// the memory API names are set up at the first attach, so a process loaded paused runs with CUPTI
// loaded but never initialized.
//
// Detach is CUPTI's "dynamic detach" (https://docs.nvidia.com/cupti/r_main.html#r_dynamic_detach):
// after the last records are flushed and every activity kind is disabled, kcount enables the callbacks
// of every runtime and driver API and calls cuptiFinalize inside the first API exit callback that comes
// (on whichever program thread makes the next CUDA call). CUPTI allows cuptiFinalize only there: called
// from another thread it races with threads inside CUPTI (PyTorch Kineto hit a crash in
// cuptiActivityFlushAll that way and moved its teardown to the API exit callsite, pytorch/kineto commit
// c7c76c3 "Safely teardown CUPTI (#686)"). Unsubscribing without finalizing leaves CUPTI's
// instrumentation in the driver: measured on the H200, a launch loop stayed 32% slower after a stop
// (docs/performance.md). A window that opens before the finalize happened cancels it and keeps the
// subscriber; one that opens after it subscribes again (CUPTI re-initializes at its next call).
// Detach for another subscriber (KCOUNT_YIELD) only unsubscribes: that client is about to use CUPTI.

void undoAttach() {
  for (CUpti_ActivityKind k : kActivityKinds) g_cupti.activityDisable(k);
  if (g_subscriber != nullptr) {
    for (CUpti_CallbackDomain d : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RESOURCE})
      g_cupti.enableDomain(0, g_subscriber, d);
    g_cupti.unsubscribe(g_subscriber);
  }
  g_subscriber = nullptr;
}

// In a CUPTI callback while a detach is pending: at a runtime or driver API exit, finalizes CUPTI (once).
// Not while the session closes: the process is exiting and CUPTI's own teardown follows.
void finalizeAtApiExit(CUpti_CallbackDomain domain, const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb == nullptr || cb->callbackSite != CUPTI_API_EXIT) return;
  if (Session::get().state() != SessionState::kActive) return;
  int expected = kDetachPending;
  if (!g_detach.compare_exchange_strong(expected, kDetachFinalizing)) return;
  g_cupti.finalize();
  g_detach.store(kDetachDone, std::memory_order_release);
}

// Before an attach: cancels a pending finalize (the subscriber is still there: undone, then attached as
// new), or waits for one in progress (at most 10 s) and forgets the finalized subscriber. False if the
// finalize did not end in time.
bool settleDetach() {
  int expected = kDetachPending;
  if (g_detach.compare_exchange_strong(expected, kDetachNone)) {
    undoAttach();
    return true;
  }
  for (int i = 0; i < 10000 && g_detach.load(std::memory_order_acquire) == kDetachFinalizing; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (g_detach.load(std::memory_order_acquire) == kDetachFinalizing) return false;
  if (g_detach.exchange(kDetachNone) == kDetachDone) {
    g_subscriber = nullptr;  // finalized with CUPTI
    g_reregister.store(true);
  }
  return true;
}

// First attach only: the memory API callbacks, found by name.
void prepareCuptiOnce() {
  static bool done = false;
  if (done) return;
  done = true;
  findMemoryApis(Session::get());
}

// Registers the timestamp callback (process-wide, gone after cuptiFinalize); the first time, records in
// the log's metadata which clock activity records use.
void registerTimestampCallback() {
  const bool ok = g_cupti.activityRegisterTimestampCallback != nullptr &&
                  g_cupti.activityRegisterTimestampCallback(&onTimestamp) == CUPTI_SUCCESS;
  static bool said = false;
  if (said) return;
  said = true;
  if (ok) {
    Session::get().addMetadata("kernel_clock", "CLOCK_MONOTONIC (CUPTI timestamp callback)");
  } else {
    Session::get().addMetadata("kernel_clock", "CUPTI default (not aligned with host times)");
    KC_LOG(warn, "cuptiActivityRegisterTimestampCallback unavailable: GPU times are on CUPTI's own clock");
  }
}

bool attachCupti() {
  if (g_cupti_active.load()) return true;
  auto fail = [](CUptiResult r, const char* call) {
    KC_LOG(error, "cannot start recording: {}", failure(r, call));
    undoAttach();
    return false;
  };
  if (!settleDetach()) {
    KC_LOG(error, "cannot start recording: CUPTI is still finalizing the previous window's detach");
    return false;
  }
  prepareCuptiOnce();
  CUptiResult r;
  if (g_reregister.exchange(false)) {
    // CUPTI was finalized (or may have been, by the client kcount yielded to): its correlation ids
    // start again, so the session renumbers them to stay unique in the log.
    if (g_ever_attached.load()) Session::get().beginCorrelationNumbering();
    // Process-wide settings, gone after cuptiFinalize; a subscriber kcount yielded to may have replaced them.
    if ((r = g_cupti.activityRegisterCallbacks(&onBufferRequested, &onBufferCompleted)) != CUPTI_SUCCESS) {
      g_reregister.store(true);
      return fail(r, "cuptiActivityRegisterCallbacks");
    }
    registerTimestampCallback();
  }
  r = g_cupti.subscribe(&g_subscriber, &onCallback, nullptr);
  if (r != CUPTI_SUCCESS) {
    g_subscriber = nullptr;
    return fail(r, "cuptiSubscribe");
  }
  size_t n = 0;
  const LaunchApi* apis = launchApis(&n);
  for (size_t i = 0; i < n; ++i)
    if ((r = g_cupti.enableCallback(1, g_subscriber, apis[i].domain, apis[i].cbid)) != CUPTI_SUCCESS)
      return fail(r, "cuptiEnableCallback");
  for (const auto& [domain, cbid] : *g_memory_apis)
    if ((r = g_cupti.enableCallback(1, g_subscriber, domain, cbid)) != CUPTI_SUCCESS)
      return fail(r, "cuptiEnableCallback(memory API)");
  if ((r = g_cupti.enableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED)) !=
      CUPTI_SUCCESS)
    return fail(r, "cuptiEnableCallback(GRAPHNODE_CREATED)");
  if ((r = g_cupti.enableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)) !=
      CUPTI_SUCCESS)
    return fail(r, "cuptiEnableCallback(GRAPHNODE_CLONED)");
  // KCOUNT_GPU_TIME=0: no activity at all (kernels are named at their launch callbacks); kernel activity
  // is most of CUPTI's cost per launch, and all of it for graph replays (docs/performance.md, Run 5).
  if (Session::get().config().gpu_time)
    for (CUpti_ActivityKind k : kActivityKinds)
      if ((r = g_cupti.activityEnable(k)) != CUPTI_SUCCESS) return fail(r, "cuptiActivityEnable");
  g_cupti_active.store(true);
  g_ever_attached.store(true);
  return true;
}

// Waits for the GPU work queued so far: a kernel's activity record exists only once the kernel ended.
// On a thread with a current context (a capture range closing on the application thread) that context;
// otherwise (the control or writer thread) the context of the last launch, made current for the call.
void waitForQueuedWork() {
  void* cuda = libcuda();
  if (cuda == nullptr) return;
  auto get_current = reinterpret_cast<int (*)(CUcontext*)>(dlsym(cuda, "cuCtxGetCurrent"));
  auto sync = reinterpret_cast<CuCtxSynchronize>(dlsym(cuda, "cuCtxSynchronize"));
  auto push = reinterpret_cast<int (*)(CUcontext)>(dlsym(cuda, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<int (*)(CUcontext*)>(dlsym(cuda, "cuCtxPopCurrent_v2"));
  if (get_current == nullptr || sync == nullptr) return;
  CUcontext current = nullptr;
  if (get_current(&current) == 0 && current != nullptr) {
    sync();
    return;
  }
  auto ctx = static_cast<CUcontext>(const_cast<void*>(lastLaunchContext()));
  if (ctx == nullptr || push == nullptr || pop == nullptr || push(ctx) != 0) return;
  sync();
  CUcontext popped = nullptr;
  pop(&popped);
}

void detachCupti() {
  if (!g_cupti_active.load()) return;
  waitForQueuedWork();
  g_cupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (CUpti_ActivityKind k : kActivityKinds) g_cupti.activityDisable(k);
  g_cupti.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  g_cupti_active.store(false);
  const bool finalize = g_cupti.finalize != nullptr && !t_keep_cupti && g_subscriber != nullptr &&
                        Session::get().config().cupti_finalize;
  if (finalize && g_cupti.enableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS &&
      g_cupti.enableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS) {
    g_cupti.enableDomain(0, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE);
    g_detach.store(kDetachPending, std::memory_order_release);  // finalized at the next API exit
    return;
  }
  undoAttach();
}

void afterForkChild() {
  Session::get().abandonAfterFork();
  controlAfterFork();
}

void keepLoaded() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&onProcessExit), &info) != 0 && info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace

namespace {
std::atomic<bool> g_start_done{false};  // startRecording() has run to its end in some thread
}  // namespace

const char* cuptiState() noexcept {
  switch (g_detach.load(std::memory_order_acquire)) {
    case kDetachPending: return "finalize pending";
    case kDetachFinalizing: return "finalizing";
    case kDetachDone: return "finalized";
    default: break;
  }
  if (g_cupti_active.load()) return "attached";
  if (g_cupti.handle == nullptr) return "not loaded";
  return g_ever_attached.load() ? "unsubscribed" : "not initialized";
}

bool startRecording() noexcept {
  Session& s = Session::get();
  const SessionState st = s.state();
  if (st != SessionState::kDormant && st != SessionState::kActive) {
    g_start_done.store(true, std::memory_order_release);  // disabled or finished: nothing to wait for
    return false;
  }
  // One thread starts the session (activation, then the first window); NVTX threads that arrive
  // meanwhile wait for it in waitForStart(), or their ranges would fall outside every window. Threads
  // in here wait for nothing: InitializeInjection runs inside cuInit, and the starter may need CUDA.
  static std::atomic<bool> starter{false};
  bool expected = false;
  if (starter.compare_exchange_strong(expected, true)) {
    static std::once_flag exit_once;
    if (s.activate()) {
      try {
        std::call_once(exit_once, [] {
          keepLoaded();  // atexit handlers of an unloaded library would crash
          std::atexit(onProcessExit);
          pthread_atfork(nullptr, nullptr, afterForkChild);
          Session::get().setPeriodicFlush(&periodicActivityFlush);
          Session::get().setBeforeFinalDrain(&closeOpenStartedRanges);
          installTerminateHandler();
          if (Session::get().config().control == "on") startControlServer();  // also without CUDA
        });
      } catch (...) {
      }
      s.applyStartConfig();  // KCOUNT_START, KCOUNT_CAPTURE_*: open the first window or arm the range
    }
    g_start_done.store(true, std::memory_order_release);
  }
  return s.recording();
}

void waitForStart() noexcept {
  for (int i = 0; i < 2000 && !g_start_done.load(std::memory_order_acquire); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // at most 2 s, once per thread at start
}

bool startDone() noexcept { return g_start_done.load(std::memory_order_acquire); }

void finishBeforeProcessEnds() noexcept {
  try {
    Session& s = Session::get();
    if (s.state() == SessionState::kActive && getpid() == s.pid()) {
      const int saved_errno = errno;
      s.finish(&flushActivityForExit);
      errno = saved_errno;
    }
    removeControlSocket();  // only this process's own socket (a fork child's inherited one stays)
  } catch (...) {
  }
}

}  // namespace kc::inject

using namespace kc::inject;

/// CUDA injection entry point, called once by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH
/// names this library (LD_PRELOAD sets that variable). Loads CUPTI, subscribes to the launch callbacks
/// and enables kernel activity. Always returns 1: a failure disables kcount, never CUDA.
KC_EXPORT int InitializeInjection(void) {
  noteEntryPointCalled();
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return 1;
  try {
    Session& s = Session::get();
    if (s.state() == SessionState::kDisabled) return 1;
    std::string error;
    if (!g_cupti.load(s.config().cupti_path, &error)) {
      s.disable(error);
      return 1;
    }
    // Said at debug level only: a process that records nothing must print nothing. The closing "log:"
    // line names the CUPTI that was used.
    KC_LOG(debug, "CUPTI {} (API version {}, {})", g_cupti.path, g_cupti.version, g_cupti.how);
    s.setCuptiDescription(g_cupti.path + " (API version " + std::to_string(g_cupti.version) + ")");
    if (!startRecording()) return 1;
    s.addMetadata("cupti_path", g_cupti.path);
    s.addMetadata("cupti_version", std::to_string(g_cupti.version));
    if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
      int v = 0;
      auto fn = reinterpret_cast<int (*)(int*)>(dlsym(cuda, "cuDriverGetVersion"));
      if (fn != nullptr && fn(&v) == 0) s.addMetadata("cuda_driver_version", std::to_string(v));
    }
    initLaunchApiNames(s.strings());
    setLaunchTiming(s.config().launch_timing);
    if (!s.config().gpu_time) {
      setLaunchNames(true);
      s.addMetadata("gpu_time", "off");
    }
    // CUPTI is set up and attached (subscribed, callbacks and activity enabled) only while a capture
    // window is open: now for KCOUNT_START=on, later for KCOUNT_START=paused, a capture range or
    // `kcount ctl`. Until then nothing initializes CUPTI.
    s.setCaptureHooks(&attachCupti, &detachCupti);
    s.applyStartConfig();
    if (s.state() == SessionState::kDisabled) return 1;
    if (s.config().control != "off") startControlServer();
  } catch (const std::exception& e) {
    Session::get().disable(std::string("InitializeInjection: ") + e.what());
  } catch (...) {
    Session::get().disable("InitializeInjection: unknown error");
  }
  return 1;
}

/// _exit/_Exit interposed when the library is preloaded: os._exit() in Python and _exit() in C skip
/// atexit handlers, so the log is closed here first (only in the process that recorded: a fork or
/// vfork/posix_spawn child goes straight to the system call). Then the process exits with `status`.
[[noreturn]] static void closeThenExit(int status) {
  noteIdleProcess();
  finishBeforeProcessEnds();
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
KC_EXPORT void _exit(int status) { closeThenExit(status); }
KC_EXPORT void _Exit(int status) { closeThenExit(status); }

// A program that ends itself by a signal left at its default action skips atexit handlers too. Python
// does that after an unhandled KeyboardInterrupt (Ctrl-C): it restores SIGINT's default action and calls
// kill(getpid(), SIGINT), so that its parent sees "killed by SIGINT" (bpo-1054041). kill() and raise()
// are interposed when the library is preloaded: for SIGINT, SIGTERM or SIGHUP sent by the process to
// itself (its pid, or its process group) while that signal is at its default action, the log is closed
// first; then the signal is sent as asked (system call), with kill()'s result and errno.
namespace {
bool endsThisProcess(pid_t pid, int sig) {
  if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP) return false;
  if (pid != getpid() && pid != 0 && pid != -getpgrp()) return false;
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
         !(current.sa_flags & SA_SIGINFO);
}

void closeBeforeSignal(pid_t pid, int sig) {
  if (!endsThisProcess(pid, sig)) return;
  Session& s = Session::get();
  if (s.state() == SessionState::kActive && getpid() == s.pid()) s.noteEndSignal(sig);
  finishBeforeProcessEnds();
}
}  // namespace

KC_EXPORT int kill(pid_t pid, int sig) {
  closeBeforeSignal(pid, sig);
  return static_cast<int>(syscall(SYS_kill, pid, sig));
}

KC_EXPORT int raise(int sig) {
  closeBeforeSignal(getpid(), sig);
  return static_cast<int>(syscall(SYS_tgkill, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), sig)) == 0 ? 0 : -1;
}

// ---- Another CUPTI subscriber in the process (KCOUNT_YIELD) ----------------------------------------------
// CUPTI 13.0 allows one subscriber per process. When libkcount.so is preloaded, these definitions come
// before libcupti's in symbol lookup, so a program's own cuptiSubscribe (torch.profiler's Kineto) comes
// here first. Each forwards to the real function. With KCOUNT_YIELD=1 and a window open, kcount first
// closes its window (end reason "yield") and unsubscribes, so the other subscriber gets CUPTI; when it
// unsubscribes (or finalizes CUPTI), the writer thread opens a new window ("resume after yield") within
// 100 ms. Without KCOUNT_YIELD the other subscriber is refused by CUPTI, and kcount says so once.
// Loaded through CUDA_INJECTION64_PATH (dlopen, not preloaded) these are not reached.
namespace {

std::atomic<bool> g_yielded{false};
std::atomic<CUpti_SubscriberHandle> g_other_subscriber{nullptr};
std::atomic<bool> g_refusal_said{false};

// The function the program would have called: next in lookup order after libkcount.so, else the
// libcupti already loaded (a copy loaded with RTLD_LOCAL is not in the global scope), else kcount's own.
template <typename Fn>
Fn realCupti(const char* name) {
  if (void* f = dlsym(RTLD_NEXT, name)) return reinterpret_cast<Fn>(f);
  for (const char* lib : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"})
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD))
      if (void* f = dlsym(h, name)) return reinterpret_cast<Fn>(f);
  if (g_cupti.handle != nullptr)
    if (void* f = dlsym(g_cupti.handle, name)) return reinterpret_cast<Fn>(f);
  return nullptr;
}

void afterOtherLeft() {
  if (g_yielded.exchange(false)) Session::get().requestResume("resume after yield");
}

}  // namespace

namespace {
// With KCOUNT_YIELD and a window open: closes it and unsubscribes so the caller gets CUPTI. Returns true
// if kcount stepped aside now.
bool yieldToOther(const char* what) {
  try {
    Session& s = Session::get();
    if (!s.config().yield || !g_cupti_active.load() || !s.windowOpen()) return false;
    KC_LOG(warn, "another CUPTI client (e.g. torch.profiler) calls {}: kcount stops recording until it "
                 "unsubscribes (KCOUNT_YIELD)", what);
    std::string error;
    t_keep_cupti = true;  // the other client subscribes right after: unsubscribe only, never finalize
    const bool stopped = s.stopCapture("yield", &error);
    t_keep_cupti = false;
    if (!stopped) return false;
    g_reregister.store(true);
    g_yielded.store(true);
    return true;
  } catch (...) {
    return false;
  }
}
}  // namespace

// The activity buffer callbacks are process-wide: another client registering its own would take the
// records of kcount's open window. With KCOUNT_YIELD kcount closes its window first.
KC_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                              CUpti_BuffersCallbackCompleteFunc completed) {
  using Fn = CUptiResult(CUPTIAPI*)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
  const Fn real = realCupti<Fn>("cuptiActivityRegisterCallbacks");
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  yieldToOther("cuptiActivityRegisterCallbacks");
  return real(requested, completed);
}

KC_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                              void* userdata) {
  using Fn = CUptiResult(CUPTIAPI*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
  const Fn real = realCupti<Fn>("cuptiSubscribe");
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) {
    Dl_info info{};
    KC_LOG(debug, "the program's cuptiSubscribe goes through kcount to {}",
           dladdr(reinterpret_cast<void*>(real), &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "?");
  }
  const bool yielded_now = yieldToOther("cuptiSubscribe");
  const CUptiResult r = real(subscriber, callback, userdata);
  if (r == CUPTI_SUCCESS && g_yielded.load() && subscriber != nullptr) {
    g_other_subscriber.store(*subscriber);
  } else if (yielded_now) {
    afterOtherLeft();  // the other did not get CUPTI either
  } else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && g_cupti_active.load() &&
             !g_refusal_said.exchange(true)) {
    KC_LOG(warn, "another CUPTI subscriber (e.g. torch.profiler) was refused: kcount holds CUPTI in this process "
                 "(one subscriber per process); KCOUNT_YIELD=1 lets the other take it while it runs");
  }
  return r;
}

KC_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  using Fn = CUptiResult(CUPTIAPI*)(CUpti_SubscriberHandle);
  const Fn real = realCupti<Fn>("cuptiUnsubscribe");
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  const CUptiResult r = real(subscriber);
  if (subscriber != nullptr && subscriber == g_other_subscriber.load()) {
    g_other_subscriber.store(nullptr);
    afterOtherLeft();
  }
  return r;
}

KC_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void) {
  using Fn = CUptiResult(CUPTIAPI*)();
  const Fn real = realCupti<Fn>("cuptiFinalize");
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  const CUptiResult r = real();
  g_other_subscriber.store(nullptr);
  afterOtherLeft();  // only sets a flag: the finalizing thread may be inside a CUPTI callback
  return r;
}
