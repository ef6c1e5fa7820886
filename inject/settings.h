// The names of kcount's KCOUNT_* settings: one table that readConfig() (inject/config.cpp) reads through and
// that the misspelling check compares unknown names against, so the two cannot drift apart.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string_view>

namespace kc::inject {

/// Every KCOUNT_* environment variable that configures kcount: those readConfig() reads (each through a
/// SettingName, so a name missing here does not compile), and those the Python helper reads
/// (python/kcount/torch: KCOUNT_TORCH_POLL_MS, KCOUNT_TORCH_ROOT_NAME, KCOUNT_TORCH_NVTX_LIB). An unknown
/// KCOUNT_* variable within two edits of one of these is reported as a probable misspelling.
inline constexpr std::string_view kSettings[] = {
    "KCOUNT_OUTPUT", "KCOUNT_CUPTI_PATH", "KCOUNT_RUN_REPORT", "KCOUNT_LOG_LEVEL", "KCOUNT_DISABLE",
    "KCOUNT_MAX_HOST_MB", "KCOUNT_ACTIVITY_BUFFER_MB", "KCOUNT_MAX_ACTIVITY_MB", "KCOUNT_MAX_BYTES",
    "KCOUNT_MAX_FILES", "KCOUNT_FILE_MODE", "KCOUNT_TORCH_MODULES", "KCOUNT_TORCH_BACKWARD", "KCOUNT_TORCH_OPS",
    "KCOUNT_MODE", "KCOUNT_INTERVAL", "KCOUNT_MAX_KEYS", "KCOUNT_START", "KCOUNT_CAPTURE_RANGE",
    "KCOUNT_CAPTURE_SKIP", "KCOUNT_CAPTURE_COUNT", "KCOUNT_CAPTURE_DURATION", "KCOUNT_CONTROL",
    "KCOUNT_CONTROL_DIR", "KCOUNT_YIELD", "KCOUNT_CUPTI_FINALIZE", "KCOUNT_SIGTERM", "KCOUNT_GPU_TIME",
    "KCOUNT_SIGINT", "KCOUNT_SIGHUP", "KCOUNT_HOST_CLOCK", "KCOUNT_LAUNCH_TIMING", "KCOUNT_LAUNCH_CALLBACKS",
    "KCOUNT_TORCH_POLL_MS", "KCOUNT_TORCH_ROOT_NAME",
    "KCOUNT_TORCH_NVTX_LIB"};

/// KCOUNT_WARNED: the hash of the configuration problems a process already printed (config.h,
/// markProblemsPrinted()). Kept by the library itself, not a setting.
inline constexpr char kWarnedVariable[] = "KCOUNT_WARNED";

/// KCOUNT_* names that are not settings but are known: the library's own KCOUNT_WARNED, and the variables
/// `kcount run`, the Python helper and the repository's scripts use. Never reported as misspellings.
inline constexpr std::string_view kOtherNames[] = {
    kWarnedVariable, "KCOUNT_NEEDS", "KCOUNT_ENV", "KCOUNT_JOBS", "KCOUNT_DATA", "KCOUNT_EXAMPLES_OUT",
    "KCOUNT_BENCH_SAMPLE_LOG", "KCOUNT_BENCH_FAKE_REPEAT", "KCOUNT_BENCH_FAKE_CONFIG", "KCOUNT_AB_FAKE_CONFIG",
    "KCOUNT_CONTROL_TOL", "KCOUNT_FUZZ_CLEAN", "KCOUNT_HELPER", "KCOUNT_SANITIZE", "KCOUNT_BUILD_BENCH",
    "KCOUNT_BUILD_TESTS", "KCOUNT_VERSION",
    "KCOUNT_TOOL"};  // the kcount tool the Python package runs (python/kcount/_tool.py)

/// True if `name` is in kSettings. Usable at compile time; no allocation.
constexpr bool isSetting(std::string_view name) noexcept {
  return std::find(std::begin(kSettings), std::end(kSettings), name) != std::end(kSettings);
}

/// True if `name` is in kSettings or kOtherNames: a KCOUNT_* name that is not a misspelling.
constexpr bool isKnownName(std::string_view name) noexcept {
  return isSetting(name) || std::find(std::begin(kOtherNames), std::end(kOtherNames), name) != std::end(kOtherNames);
}

namespace detail {
// Not constexpr on purpose: a SettingName built from a name that kSettings lacks calls it, which makes
// the build fail with this function's name in the error.
void settingNameNotInKSettings();
}  // namespace detail

/// The name of one setting of kSettings, checked when the program is compiled: readConfig() takes every
/// setting through one, so reading a new KCOUNT_ variable there does not compile until kSettings lists
/// it (and a listed name is never reported as a misspelling of another setting). Only from string
/// literals and other constants (consteval; tests/inject/compile/setting_name.cpp checks both ways). A
/// pointer to the literal; no allocation.
class SettingName {
 public:
  consteval SettingName(const char* name) : name_(name) {  // NOLINT: implicit from a literal on purpose
    if (!isSetting(name)) detail::settingNameNotInKSettings();
  }
  constexpr const char* c_str() const noexcept { return name_; }

 private:
  const char* name_;
};

/// The value of the setting `name` in the environment (std::getenv()), nullptr if it is not set.
/// Thread-safe as std::getenv is (not against a concurrent setenv()).
inline const char* getSetting(SettingName name) noexcept { return std::getenv(name.c_str()); }

}  // namespace kc::inject
