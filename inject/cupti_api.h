// The only place that knows where CUPTI comes from: libcupti is dlopen()ed at run time (never linked),
// reusing a copy already loaded in the process (Proton's dispatch style). Every CUPTI call of the library
// goes through the one function table cupti(), which tests fill with stub functions (setCuptiLoader).
#pragma once

#include <cupti.h>

#include <string>

namespace kc::inject {

/// Function table of the CUPTI entry points kcount uses, resolved with dlsym (or filled with stub functions
/// by a test's loader). Threads: filled once, before any CUPTI callback is enabled, then read-only from any
/// thread. Ownership: the libcupti handle is never closed (callbacks may arrive during exit). Errors: the
/// functions return CUPTI's CUptiResult; describe() turns one into text.
struct CuptiApi {
  void* handle = nullptr;
  std::string path;       // file actually mapped (from dlinfo)
  std::string how;        // "already loaded", "KCOUNT_CUPTI_PATH", "next to <lib>", "CUDA toolkit", ...
  uint32_t version = 0;   // cuptiGetVersion()

  decltype(&cuptiGetVersion) getVersion = nullptr;
  decltype(&cuptiGetResultString) getResultString = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableCallback) enableCallback = nullptr;
  decltype(&cuptiEnableDomain) enableDomain = nullptr;
  decltype(&cuptiActivityEnable) activityEnable = nullptr;
  decltype(&cuptiActivityDisable) activityDisable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) activityRegisterCallbacks = nullptr;
  decltype(&cuptiActivityFlushAll) activityFlushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) activityGetNextRecord = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) activityGetNumDroppedRecords = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) activityRegisterTimestampCallback = nullptr;  // optional
  decltype(&cuptiFinalize) finalize = nullptr;  // optional
  decltype(&cuptiGetCallbackName) getCallbackName = nullptr;
  decltype(&cuptiGetGraphNodeId) getGraphNodeId = nullptr;
  decltype(&cuptiGetGraphId) getGraphId = nullptr;
  decltype(&cuptiGetGraphExecId) getGraphExecId = nullptr;  // optional: graph kernels without activity

  /// Finds and loads libcupti. Order: a libcupti already mapped in the process; KCOUNT_CUPTI_PATH;
  /// the folder of an already-loaded CUDA wheel library (site-packages/nvidia/cu13/lib, where PyTorch's
  /// copy lives); $CUDA_HOME, $CUDA_PATH, /usr/local/cuda (lib64, extras/CUPTI/lib64,
  /// targets/x86_64-linux/lib); finally the loader's own search (LD_LIBRARY_PATH, ldconfig).
  /// Returns false with a message in *error if none loads or a required symbol is missing.
  /// Not thread-safe: call once, from InitializeInjection.
  bool load(const std::string& configured_path, std::string* error);

  /// "CUPTI_ERROR_X (code N)" for a result. Never throws.
  std::string describe(CUptiResult r) const;
};

/// The process's CUPTI function table. Immortal (CUPTI callbacks may arrive during exit); filled once by
/// loadCupti() in InitializeInjection and only read afterwards, from any thread.
CuptiApi& cupti() noexcept;

/// Fills `api` with CUPTI's entry points; `configured_path` is KCOUNT_CUPTI_PATH (may be empty). Returns
/// false with a message in *error if CUPTI cannot be used.
using CuptiLoader = bool (*)(CuptiApi& api, const std::string& configured_path, std::string* error);
/// Replaces the loader loadCupti() uses (default: CuptiApi::load, dlopen and dlsym). For tests that drive
/// the library's entry points through a stub function table without a GPU or libcupti. Call before
/// InitializeInjection; not thread-safe.
void setCuptiLoader(CuptiLoader loader) noexcept;
/// Fills cupti() through the loader. Not thread-safe: call once, from InitializeInjection.
bool loadCupti(const std::string& configured_path, std::string* error);

}  // namespace kc::inject
