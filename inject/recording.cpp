#include "inject/recording.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "inject/control.h"
#include "inject/cupti_attach.h"
#include "inject/process_end.h"
#include "inject/session.h"

namespace kc::inject {

namespace {

std::atomic<bool> g_start_done{false};  // startRecording() has run to its end in some thread

void afterForkChild() {
  Session::get().abandonAfterFork();
  controlAfterFork();
}

// atexit handlers of an unloaded library would crash: the library stays loaded once it registered one.
void keepLoaded() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&afterForkChild), &info) != 0 && info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

void installProcessHooks() {
  keepLoaded();
  std::atexit(closeAtExit);
  pthread_atfork(nullptr, nullptr, afterForkChild);
  Session::get().setPeriodicFlush(&periodicActivityFlush);
  installTerminateHandler();
  if (Session::get().config().control == "on") startControlServer();  // also without CUDA
}

}  // namespace

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
        std::call_once(exit_once, installProcessHooks);
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

}  // namespace kc::inject
