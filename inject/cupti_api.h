// The only place that knows where CUPTI comes from: libcupti is dlopen()ed at run time (never linked),
// reusing a copy already loaded in the process (Proton's dispatch style).
#pragma once

#include <cupti.h>

#include <string>

namespace kc::inject {

/// Function table of the CUPTI entry points kcount uses, resolved with dlsym.
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

}  // namespace kc::inject
