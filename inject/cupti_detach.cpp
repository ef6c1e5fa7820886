#include "inject/cupti_detach.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "inject/cupti_api.h"
#include "inject/session.h"

namespace kc::inject {

namespace {
std::atomic<int> g_detach{kDetachNone};
}  // namespace

DetachState detachState() noexcept { return static_cast<DetachState>(g_detach.load(std::memory_order_acquire)); }

bool detachUnderway() noexcept { return g_detach.load(std::memory_order_relaxed) != kDetachNone; }

void markFinalizePending() noexcept { g_detach.store(kDetachPending, std::memory_order_release); }

bool cancelPendingFinalize() noexcept {
  int expected = kDetachPending;
  return g_detach.compare_exchange_strong(expected, kDetachNone);
}

bool settleFinalize(bool* in_time) noexcept {
  for (int i = 0; i < 10000 && g_detach.load(std::memory_order_acquire) == kDetachFinalizing; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  *in_time = g_detach.load(std::memory_order_acquire) != kDetachFinalizing;
  if (!*in_time) return false;
  return g_detach.exchange(kDetachNone) == kDetachDone;
}

void finalizeAtApiExit(CUpti_CallbackDomain domain, const void* data) noexcept {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb == nullptr || cb->callbackSite != CUPTI_API_EXIT) return;
  if (Session::get().state() != SessionState::kActive) return;
  int expected = kDetachPending;
  if (!g_detach.compare_exchange_strong(expected, kDetachFinalizing)) return;
  cupti().finalize();
  g_detach.store(kDetachDone, std::memory_order_release);
}

}  // namespace kc::inject
