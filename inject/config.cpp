#include "inject/config.h"

#include <cstdlib>
#include <string_view>

namespace kc::inject {

namespace {
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

void readNumber(const char* name, uint64_t scale, int base, uint64_t* out, std::string* problems) {
  const char* v = env(name);
  if (v == nullptr) return;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, base);
  if (end == v || *end != '\0') {
    if (problems) *problems += std::string("ignoring ") + name + "=" + v + ": not a number\n";
    return;
  }
  *out = static_cast<uint64_t>(n) * scale;
}
}  // namespace

bool parseDuration(const char* text, uint64_t* ns) {
  if (text == nullptr) return false;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || !(v > 0)) return false;
  const std::string_view unit(end);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ns") scale = 1;
  else if (unit == "m" || unit == "min") scale = 60e9;
  else if (unit == "h") scale = 3600e9;
  else return false;
  const double r = v * scale;
  if (!(r >= 1) || r > 1e18) return false;
  *ns = static_cast<uint64_t>(r);
  return true;
}

Config readConfig(std::string* problems) {
  Config c;
  try {
    if (const char* v = env("KCOUNT_OUTPUT")) c.output = v;
    if (const char* v = env("KCOUNT_CUPTI_PATH")) c.cupti_path = v;
    if (const char* v = env("KCOUNT_RUN_REPORT")) c.run_report = v;
    if (const char* v = env("KCOUNT_LOG_LEVEL")) c.log_level = v;
    if (const char* v = env("KCOUNT_DISABLE")) c.disabled = std::string_view(v) != "0";
    for (const char* name : {"KCOUNT_TORCH_MODULES", "KCOUNT_TORCH_BACKWARD", "KCOUNT_TORCH_OPS"})
      if (const char* v = env(name); v != nullptr && std::string_view(v) != "0") c.torch_helper = true;
    if (const char* v = env("KCOUNT_TORCH_OPS")) c.torch_ops = std::string_view(v) != "0";
    readNumber("KCOUNT_MAX_HOST_MB", 1ull << 20, 10, &c.max_host_bytes, problems);
    readNumber("KCOUNT_ACTIVITY_BUFFER_MB", 1ull << 20, 10, &c.activity_buffer_bytes, problems);
    readNumber("KCOUNT_MAX_ACTIVITY_MB", 1ull << 20, 10, &c.max_activity_bytes, problems);
    readNumber("KCOUNT_MAX_BYTES", 1, 10, &c.max_file_bytes, problems);
    uint64_t mode = c.file_mode;
    readNumber("KCOUNT_FILE_MODE", 1, 8, &mode, problems);
    c.file_mode = static_cast<unsigned>(mode & 0777);
    if (const char* v = env("KCOUNT_MODE")) {
      const std::string_view m(v);
      if (m == "summary") c.mode = RecordMode::kSummary;
      else if (m == "trace") c.mode = RecordMode::kTrace;
      else if (problems) *problems += std::string("ignoring KCOUNT_MODE=") + v + ": not trace or summary\n";
    }
    if (const char* v = env("KCOUNT_INTERVAL"); v != nullptr && !parseDuration(v, &c.interval_ns) && problems)
      *problems += std::string("ignoring KCOUNT_INTERVAL=") + v + ": not a duration (e.g. 10s, 500ms)\n";
    readNumber("KCOUNT_MAX_KEYS", 1, 10, &c.max_keys, problems);
    if (c.activity_buffer_bytes < (64u << 10)) c.activity_buffer_bytes = 64u << 10;
    uint64_t files = c.max_files;
    readNumber("KCOUNT_MAX_FILES", 1, 10, &files, problems);
    c.max_files = static_cast<uint32_t>(files == 0 ? 1 : (files > 100000 ? 100000 : files));
    if (const char* v = env("KCOUNT_START")) {
      const std::string_view sv(v);
      if (sv == "paused") c.start_paused = true;
      else if (sv != "on" && problems) *problems += std::string("ignoring KCOUNT_START=") + v + ": not 'on' or 'paused'\n";
    }
    if (const char* v = env("KCOUNT_CAPTURE_RANGE")) c.capture_range = v;
    readNumber("KCOUNT_CAPTURE_SKIP", 1, 10, &c.capture_skip, problems);
    readNumber("KCOUNT_CAPTURE_COUNT", 1, 10, &c.capture_count, problems);
    if (c.capture_count == 0) c.capture_count = 1;
    if (const char* v = env("KCOUNT_CAPTURE_DURATION"); v != nullptr && !parseDuration(v, &c.capture_duration_ns) && problems)
      *problems += std::string("ignoring KCOUNT_CAPTURE_DURATION=") + v + ": not a duration (10s, 500ms, 2m)\n";
    if (const char* v = env("KCOUNT_CONTROL")) {
      const std::string_view sv(v);
      if (sv == "off" || sv == "0" || sv == "cuda" || sv == "on" || sv == "1")
        c.control = (sv == "0") ? "off" : (sv == "1") ? "on" : std::string(sv);
      else if (problems)
        *problems += std::string("ignoring KCOUNT_CONTROL=") + v + ": not 'off', 'cuda' or 'on'\n";
    }
    if (const char* v = env("KCOUNT_CONTROL_DIR")) c.control_dir = v;
    if (const char* v = env("KCOUNT_YIELD")) c.yield = std::string_view(v) != "0" && std::string_view(v) != "off";
    if (const char* v = env("KCOUNT_CUPTI_FINALIZE"))
      c.cupti_finalize = std::string_view(v) != "0" && std::string_view(v) != "off";
    if (const char* v = env("KCOUNT_SIGTERM")) c.sigterm = std::string_view(v) != "0" && std::string_view(v) != "off";
  } catch (...) {
  }
  return c;
}

}  // namespace kc::inject
