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
    if (c.activity_buffer_bytes < (64u << 10)) c.activity_buffer_bytes = 64u << 10;
  } catch (...) {
  }
  return c;
}

}  // namespace kc::inject
