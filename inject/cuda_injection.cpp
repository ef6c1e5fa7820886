// CUDA injection entry point: InitializeInjection, called by the driver during cuInit when
// CUDA_INJECTION64_PATH names this library. Loads CUPTI and wires the configuration into the launch
// handlers and the session; CUPTI itself is attached only while a capture window is open (cupti_attach.h).
#include <atomic>
#include <exception>
#include <string>

#include "inject/callbacks.h"
#include "inject/control.h"
#include "inject/cuda_driver.h"
#include "inject/cupti_api.h"
#include "inject/cupti_attach.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/preload.h"
#include "inject/recording.h"
#include "inject/session.h"

namespace kc::inject {
namespace {

// After CUPTI loaded: the session started, the configuration applied to the handlers (KCOUNT_LAUNCH_TIMING,
// KCOUNT_GPU_TIME) and the first window opened if it is due (KCOUNT_START, KCOUNT_CAPTURE_*).
void startWithCupti(Session& s) {
  const CuptiApi& api = cupti();
  // Said at debug level only: a process that records nothing must print nothing. The closing "log:"
  // line names the CUPTI that was used.
  KC_LOG(debug, "CUPTI {} (API version {}, {})", api.path, api.version, api.how);
  s.setCuptiDescription(api.path + " (API version " + std::to_string(api.version) + ")");
  if (!startRecording()) return;
  s.addMetadata("cupti_path", api.path);
  s.addMetadata("cupti_version", std::to_string(api.version));
  if (const std::string v = cudaDriverVersion(); !v.empty()) s.addMetadata("cuda_driver_version", v);
  initLaunchApiNames(s.strings());
  setLaunchTiming(s.config().launch_timing);
  if (!s.config().gpu_time) {
    setLaunchNames(true);
    s.addMetadata("gpu_time", s.config().graph_gpu_time ? "graphs" : "off");
  }
  if (s.config().driver_launch_callbacks) s.addMetadata("launch_callbacks", "driver");
  // CUPTI is set up and attached (subscribed, callbacks and activity enabled) only while a capture
  // window is open: now for KCOUNT_START=on, later for KCOUNT_START=paused, a capture range or
  // `kcount ctl`. Until then nothing initializes CUPTI.
  s.setCaptureHooks(&attachCupti, &detachCupti);
  s.applyStartConfig();
  if (s.state() == SessionState::kDisabled) return;
  if (!s.config().gpu_time && !s.windowOpen()) watchGraphs();  // paused or waiting for a capture range
  if (s.config().control != "off") startControlServer();
}

}  // namespace
}  // namespace kc::inject

using namespace kc::inject;

/// CUDA injection entry point, called once by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH
/// names this library (LD_PRELOAD sets that variable). Loads CUPTI (loadCupti: KCOUNT_CUPTI_PATH first)
/// and starts the session. Later calls return at once. Always returns 1: a failure disables kcount, never
/// CUDA. Never throws.
KC_EXPORT int InitializeInjection(void) {
  noteEntryPointCalled();
  static std::atomic<bool> once{false};
  if (once.exchange(true)) return 1;
  try {
    Session& s = Session::get();
    if (s.state() == SessionState::kDisabled) return 1;
    std::string error;
    if (!loadCupti(s.config().cupti_path, &error)) {
      s.disable(error);
      return 1;
    }
    startWithCupti(s);
  } catch (const std::exception& e) {
    Session::get().disable(std::string("InitializeInjection: ") + e.what());
  } catch (...) {
    Session::get().disable("InitializeInjection: unknown error");
  }
  return 1;
}
