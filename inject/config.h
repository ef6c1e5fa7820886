// Configuration of libkcount.so, read once from KCOUNT_* environment variables (docs/usage.md).
#pragma once

#include <cstdint>
#include <string>

namespace kc::inject {

/// KCOUNT_MODE: trace writes every launch, kernel and range record; summary joins and tallies them in
/// the process and writes a snapshot every KCOUNT_INTERVAL (collector/aggregator.h).
enum class RecordMode { kTrace, kSummary };

/// The library's configuration, read once from the KCOUNT_* environment (readConfig) when the session is
/// created; read-only afterwards, from any thread. Invalid values are reported once and replaced by the
/// default.
struct Config {
  std::string output;            // KCOUNT_OUTPUT: folder or pattern (%p pid, %h host, %r rank)
  std::string cupti_path;        // KCOUNT_CUPTI_PATH: libcupti to load if none is loaded yet
  std::string run_report;        // KCOUNT_RUN_REPORT: file to which each log's path is appended (kcount run)
  std::string log_level = "info";  // KCOUNT_LOG_LEVEL: off|error|warn|info|debug ("off" when disabled)
  bool disabled = false;         // KCOUNT_DISABLE set, not to 0/off/no/false (disableRequested): load, do nothing
  /// Non-empty: a setting the library will not record without is malformed (KCOUNT_MAX_BYTES, a disk
  /// safety limit: recording without the cap asked for could fill the disk). The library loads and stays
  /// disabled, as with KCOUNT_DISABLE, but says why (one warning, and kcount run's report); this is the
  /// reason, e.g. `KCOUNT_MAX_BYTES=1.5G is not a size`.
  std::string refused;
  uint64_t max_host_bytes = 256ull << 20;      // KCOUNT_MAX_HOST_MB: launch/range buffers
  uint64_t activity_buffer_bytes = 8ull << 20; // KCOUNT_ACTIVITY_BUFFER_MB: one CUPTI buffer
  uint64_t max_activity_bytes = 256ull << 20;  // KCOUNT_MAX_ACTIVITY_MB: all CUPTI buffers
  uint64_t max_file_bytes = 0;                 // KCOUNT_MAX_BYTES: log size cap, 0 = none
  unsigned file_mode = 0600;                   // KCOUNT_FILE_MODE (octal)
  bool torch_helper = false;  // KCOUNT_TORCH_MODULES, KCOUNT_TORCH_BACKWARD or KCOUNT_TORCH_OPS set (not "0"):
                              // the preload constructor puts the Python helper on PYTHONPATH
  bool torch_ops = false;     // KCOUNT_TORCH_OPS set (not "0"): PyTorch's emit_nvtx range names are cut at
                              // ", seq = " / ", op_id = " (docs/torch-modules.md)
  uint32_t max_files = 8;                      // KCOUNT_MAX_FILES: files per log with KCOUNT_MAX_BYTES (rotation)
  bool start_paused = false;                   // KCOUNT_START=paused: loaded, nothing recorded until started
  std::string capture_range;                   // KCOUNT_CAPTURE_RANGE: record occurrences of this range only
  uint64_t capture_skip = 0;                   // KCOUNT_CAPTURE_SKIP: occurrences skipped first
  uint64_t capture_count = 1;                  // KCOUNT_CAPTURE_COUNT: occurrences recorded
  uint64_t capture_duration_ns = 0;            // KCOUNT_CAPTURE_DURATION: longest window, 0 = unbounded
  std::string control = "cuda";                // KCOUNT_CONTROL: off | cuda | on (control socket)
  std::string control_dir;                     // KCOUNT_CONTROL_DIR: folder of the control socket
  bool sigterm = true;                         // KCOUNT_SIGTERM=0: never install the SIGTERM handler
  bool sigint = true;                          // KCOUNT_SIGINT=0: never install the SIGINT handler
  bool sighup = true;                          // KCOUNT_SIGHUP=0: never install the SIGHUP handler
  bool yield = false;                          // KCOUNT_YIELD=1: step aside for another CUPTI subscriber
  bool cupti_finalize = true;                  // KCOUNT_CUPTI_FINALIZE=0: a closed window only unsubscribes
  bool gpu_time = true;  // KCOUNT_GPU_TIME=0: no kernel/memcpy/memset activity; each kernel launch counts as one
                         // kernel named from the launch callback (CUpti_CallbackData::symbolName), no GPU time
  bool graph_gpu_time = false;  // KCOUNT_GPU_TIME=graphs: as 0 (gpu_time false), plus CUPTI's GRAPH_TRACE
                                // activity: the GPU span of each graph launch, no per-kernel records
  RecordMode mode = RecordMode::kTrace;        // KCOUNT_MODE=trace|summary
  uint64_t interval_ns = 10'000'000'000ull;    // KCOUNT_INTERVAL: summary snapshot period ("10s", "500ms", "2")
  uint64_t max_keys = 65536;                   // KCOUNT_MAX_KEYS: summary tally rows (range, kernel name)
  bool host_clock_auto = true;  // KCOUNT_HOST_CLOCK=auto|monotonic: launch and range timestamps from the TSC
                                // where the kernel keeps time with it (collector/clock.h), or clock_gettime always
  bool driver_launch_callbacks = false;  // KCOUNT_LAUNCH_CALLBACKS=driver: subscribe to the driver API's launch
                                        // callbacks only (a runtime launch is seen through the driver call inside it)
  uint32_t launch_timing = 1;   // KCOUNT_LAUNCH_TIMING=N (summary mode): one launch call in N is timed, at
                                // random, and counts N times in the launch CPU sums; 1..1024
};

/// Largest KCOUNT_LAUNCH_TIMING: one launch call in 1024 timed.
inline constexpr uint32_t kMaxLaunchTimingSample = 1024;

/// Smallest KCOUNT_MAX_BYTES other than 0 (bytes): room for a log's header and its first chunk. A
/// smaller value is raised to it with a warning.
inline constexpr uint64_t kMinMaxFileBytes = 4096;

/// Reads the environment. Never throws; each malformed or out-of-range value keeps the default (or,
/// for KCOUNT_MAX_BYTES below kMinMaxFileBytes, that minimum) and is reported in `problems`: one line
/// each, naming the variable, the value, what is allowed and what is used instead; lines are separated
/// by '\n', no trailing newline. Numbers, sizes and durations use collector/parse.h. Problems that a
/// process this one was exec()ed from already printed (same text: KCOUNT_WARNED, see
/// markProblemsPrinted) are not reported again. Settings that only summary mode reads (KCOUNT_INTERVAL,
/// KCOUNT_MAX_KEYS, KCOUNT_LAUNCH_TIMING above 1) given in trace mode are reported too ("only read in summary
/// mode") and keep their defaults. With KCOUNT_DISABLE set to anything but 0/off/no/false (kc::disableRequested)
/// nothing is reported and log_level is
/// "off": a disabled library prints nothing. Makes no CUDA or CUPTI call (safe in a constructor).
Config readConfig(std::string* problems);

/// Records in the environment (KCOUNT_WARNED) that the problems readConfig() reports now were printed,
/// so that programs exec()ed from this process with the same settings (a shell or a pyenv shim in front
/// of the real program) do not print them again; with KCOUNT_DISABLE set nothing was printed and nothing is
/// recorded. Calls setenv(): only from the preload constructor,
/// before the program's threads exist. Never throws.
void markProblemsPrinted();

}  // namespace kc::inject
