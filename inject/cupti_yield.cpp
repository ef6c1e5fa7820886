// Another CUPTI subscriber in the process (KCOUNT_YIELD): the CUPTI functions interposed when the library
// is preloaded.
//
// CUPTI 13.0 allows one subscriber per process. When libkcount.so is preloaded, these definitions come
// before libcupti's in symbol lookup, so a program's own cuptiSubscribe (torch.profiler's Kineto) comes
// here first. Each forwards to the real function. With KCOUNT_YIELD=1 and a window open, kcount first
// closes its window (end reason "yield") and unsubscribes, so the other subscriber gets CUPTI; when it
// unsubscribes (or finalizes CUPTI), the writer thread opens a new window ("resume after yield") within
// 100 ms. Without KCOUNT_YIELD the other subscriber is refused by CUPTI, and kcount says so once.
// Loaded through CUDA_INJECTION64_PATH (dlopen, not preloaded) these are not reached.
#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <string>

#include "inject/cupti_api.h"
#include "inject/cupti_attach.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/session.h"

namespace kc::inject {
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
  if (cupti().handle != nullptr)
    if (void* f = dlsym(cupti().handle, name)) return reinterpret_cast<Fn>(f);
  return nullptr;
}

void afterOtherLeft() {
  if (g_yielded.exchange(false)) Session::get().requestResume("resume after yield");
}

// With KCOUNT_YIELD and a window open: closes it and unsubscribes so the caller gets CUPTI. Returns true
// if kcount stepped aside now.
bool yieldToOther(const char* what) {
  try {
    Session& s = Session::get();
    if (!s.config().yield) return false;
    if (!cuptiAttached() || !s.windowOpen()) {
      // No window: only the graph watch of KCOUNT_GPU_TIME=0 may hold CUPTI; it steps aside for good.
      if (releaseGraphWatch())
        KC_LOG(warn, "another CUPTI client (e.g. torch.profiler) calls {}: kcount stops watching CUDA graphs "
                     "(KCOUNT_YIELD); graphs instantiated before later windows count as launches without kernel", what);
      return false;
    }
    KC_LOG(warn, "another CUPTI client (e.g. torch.profiler) calls {}: kcount stops recording until it "
                 "unsubscribes (KCOUNT_YIELD)", what);
    std::string error;
    keepCuptiAtDetach(true);  // the other client subscribes right after: unsubscribe only, never finalize
    const bool stopped = s.stopCapture("yield", &error);
    keepCuptiAtDetach(false);
    if (!stopped) return false;
    reregisterAtNextAttach();
    g_yielded.store(true);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace
}  // namespace kc::inject

using namespace kc::inject;

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
  } else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && cuptiAttached() &&
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
