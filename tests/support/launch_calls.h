// CUPTI launch callbacks as the library receives them, for tests that drive inject/callbacks.cpp without a GPU.
#pragma once

#include <cupti.h>

#include <cstdint>

#include "inject/callbacks.h"

namespace kc::test {

/// One launch API call through onLaunchCallback: enter, then exit, of the outermost API (`domain`, `cbid`)
/// with correlation id `corr` and kernel symbol `symbol` (CUpti_CallbackData::symbolName; may be null).
/// With `nested_driver`, a cuLaunchKernel call with the same correlation id sits inside it, as CUPTI reports
/// the driver call a runtime launch makes. `inside()` runs between the innermost call's enter and exit
/// (the time the call takes on the host). Calling thread's state; not thread-safe beyond that.
template <typename Inside>
void launchCallAround(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t corr, const char* symbol,
                      bool nested_driver, Inside&& inside) {
  CUpti_CallbackData d{};
  d.correlationId = corr;
  d.symbolName = symbol;
  d.callbackSite = CUPTI_API_ENTER;
  kc::inject::onLaunchCallback(domain, cbid, &d);
  if (nested_driver) {
    CUpti_CallbackData inner = d;
    kc::inject::onLaunchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &inner);
    inside();
    inner.callbackSite = CUPTI_API_EXIT;
    kc::inject::onLaunchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &inner);
  } else {
    inside();
  }
  d.callbackSite = CUPTI_API_EXIT;
  kc::inject::onLaunchCallback(domain, cbid, &d);
}

/// launchCallAround() with nothing inside the call.
inline void launchCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t corr, const char* symbol = nullptr,
                       bool nested_driver = false) {
  launchCallAround(domain, cbid, corr, symbol, nested_driver, [] {});
}

}  // namespace kc::test
