#include "inject/config.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include <unistd.h>  // environ

#include <fmt/format.h>

#include "collector/parse.h"
#include "collector/shown_value.h"
#include "inject/log.h"
#include "inject/settings.h"

namespace kc::inject {

namespace {
// The value of a setting, nullptr if it is not set or empty. `name` is checked against kSettings when
// this file is compiled (SettingName).
const char* env(SettingName name) {
  const char* v = getSetting(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// One more line of `problems` (nullptr: not collected).
void addLine(std::string* problems, const std::string& line) {
  if (problems == nullptr) return;
  if (!problems->empty()) *problems += '\n';
  *problems += line;
}

// One problem line: "ignoring NAME=VALUE: ALLOWED; using USED".
void problem(std::string* problems, const char* name, const char* value, const std::string& allowed,
             const std::string& used) {
  addLine(problems, std::string("ignoring ") + name + "=" + shownSettingValue(value) + ": " + allowed + "; using " + used);
}

// An on/off switch: 1/on/yes/true or 0/off/no/false; anything else keeps the default, with a warning.
void readSwitch(SettingName name, bool* out, std::string* problems) {
  const char* v = env(name);
  if (v == nullptr) return;
  if (const std::optional<bool> on = parseSwitch(v)) {
    *out = *on;
  } else {
    problem(problems, name.c_str(), v, "not a switch (allowed: 1, on, yes, true, 0, off, no, false)",
            *out ? "1" : "0");
  }
}

// A setting that takes one of `words`: its value, or nullptr when it is not set or is another word (with
// a warning: "ignoring NAME=VALUE: ALLOWED; using USED").
const char* readWord(SettingName name, std::initializer_list<std::string_view> words, const char* allowed,
                     const char* used, std::string* problems) {
  const char* v = env(name);
  if (v == nullptr) return nullptr;
  if (std::find(words.begin(), words.end(), std::string_view(v)) != words.end()) return v;
  problem(problems, name.c_str(), v, allowed, used);
  return nullptr;
}

// KCOUNT_GPU_TIME: a switch, or `graphs` (count-only launches plus the GPU span of each graph launch).
void readGpuTime(Config* c, std::string* problems) {
  const char* v = env("KCOUNT_GPU_TIME");
  if (v == nullptr) return;
  if (std::string_view(v) == "graphs") {
    c->gpu_time = false;
    c->graph_gpu_time = true;
  } else if (const std::optional<bool> on = parseSwitch(v)) {
    c->gpu_time = *on;
  } else {
    problem(problems, "KCOUNT_GPU_TIME", v, "not a switch or 'graphs' (allowed: 1, on, yes, true, 0, off, no, false, graphs)",
            "1");
  }
}

// A whole number from `min` to `max` (in `unit`s), stored times `scale`. True if the setting is set and
// its value was taken.
bool readNumber(SettingName name, uint64_t min, uint64_t max, const char* unit, uint64_t scale, uint64_t* out,
                std::string* problems) {
  const char* v = env(name);
  if (v == nullptr) return false;
  const std::optional<uint64_t> n = parseUnsigned(v);
  if (n && *n >= min && *n <= max) {
    *out = *n * scale;
    return true;
  }
  const std::string range = max == UINT64_MAX ? std::to_string(min) + " or more"
                                              : "from " + std::to_string(min) + " to " + std::to_string(max);
  const bool too_large = !n && tooLargeUnsigned(v);
  const std::string full_range = "from " + std::to_string(min) + " to " + std::to_string(max);
  problem(problems, name.c_str(), v,
          too_large ? std::string("too large (allowed: ") + unit + " " + full_range + ")"
                    : std::string(n ? "out of range" : "not a whole number") + " (allowed: " + unit + " " + range + ")",
          "the default " + std::to_string(*out / scale));
  return false;
}

// A duration of more than 0 (collector/parse.h); `dflt` says what the default means. True if the setting
// is set and its value was taken.
bool readDuration(SettingName name, const char* dflt, uint64_t* out, std::string* problems) {
  const char* v = env(name);
  if (v == nullptr) return false;
  const std::optional<uint64_t> ns = parseDurationNs(v);
  if (ns && *ns > 0) {
    *out = *ns;
    return true;
  }
  problem(problems, name.c_str(), v,
          ns                      ? "a duration must be more than 0"
          : tooLargeDuration(v) ? std::string(kDurationTooLarge)
                                : "not a duration (a number with ns, us, ms, s, m or h, or a plain "
                                  "number of seconds: 10s, 500ms, 2)",
          dflt);
  return false;
}

// A setting only summary mode reads (KCOUNT_MODE=summary), given a valid value in trace mode: one line
// "ignoring NAME=VALUE: only read in summary mode (KCOUNT_MODE=summary): WHY; using USED".
void summaryOnly(std::string* problems, SettingName name, const char* why, const char* used) {
  problem(problems, name.c_str(), env(name), std::string("only read in summary mode (KCOUNT_MODE=summary): ") + why,
          used);
}

uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

std::string hexHash(std::string_view text) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, fnv1a(text));
  return buf;
}

// "ignoring KCOUNT_MDOE=summary: not a kcount setting (did you mean KCOUNT_MODE?)" for each KCOUNT_*
// variable that no part of kcount reads (not in kSettings or kOtherNames, inject/settings.h) and whose
// name is within 2 edits of a setting.
void misspelledSettings(std::string* problems) {
  if (problems == nullptr || environ == nullptr) return;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const size_t eq = entry.find('=');
    if (eq == std::string_view::npos || entry.substr(0, 7) != "KCOUNT_") continue;
    const std::string_view name = entry.substr(0, eq);
    if (isKnownName(name)) continue;
    std::string_view best;
    size_t best_d = 3;
    for (std::string_view s : kSettings)
      if (const size_t d = kc::nameDistance(name, s, 2); d < best_d) {
        best_d = d;
        best = s;
      }
    if (best.empty()) continue;
    addLine(problems, "ignoring " + std::string(name) + "=" + kc::shownSettingValue(entry.substr(eq + 1)) +
                          ": not a kcount setting (did you mean " + std::string(best) + "?)");
  }
}

// KCOUNT_MAX_BYTES: a size, 0 for no cap, raised to kMinMaxFileBytes. A cap that does not parse is not
// replaced by no cap: the library records nothing (a mistyped disk limit must not let a log fill the disk
// of a production host).
void readMaxBytes(Config* c, std::string* problems) {
  const char* v = env("KCOUNT_MAX_BYTES");
  if (v == nullptr) return;
  const std::optional<uint64_t> n = parseBytes(v);
  if (!n) {
    c->refused = "KCOUNT_MAX_BYTES=" + shownSettingValue(v) +
                 (tooLargeBytes(v) ? " is too large (the largest size is 18446744073709551615 bytes, 16 EiB - 1: "
                                     "16777215T)"
                                   : fmt::format(" is not a size ({}; 0: no cap)", kBytesAccepted));
    addLine(problems, c->refused + ": kcount records nothing in this process rather than write a log without "
                                   "the size cap asked for (fix the value, or set 0 for no cap)");
  } else if (*n != 0 && *n < kMinMaxFileBytes)
    problem(problems, "KCOUNT_MAX_BYTES", v,
            "below the minimum of " + std::to_string(kMinMaxFileBytes) + " bytes (room for a log's header and metadata)",
            std::to_string(kMinMaxFileBytes));
  c->max_file_bytes = !n ? 0 : (*n != 0 && *n < kMinMaxFileBytes) ? kMinMaxFileBytes : *n;
}

// KCOUNT_FILE_MODE: octal permission bits from 0 to 0777 that let the log's owner read it.
void readFileMode(Config* c, std::string* problems) {
  const char* v = env("KCOUNT_FILE_MODE");
  if (v == nullptr) return;
  const std::optional<uint64_t> mode = parseUnsigned(v, 8);
  if (mode && *mode <= 0777 && (*mode & 0400) == 0)
    problem(problems, "KCOUNT_FILE_MODE", v,
            "no read permission for the log's owner (0400): kcount could not read the log back", "the default 0600");
  else if (mode && *mode <= 0777)
    c->file_mode = static_cast<unsigned>(*mode);
  else
    problem(problems, "KCOUNT_FILE_MODE", v,
            mode || tooLargeUnsigned(v, 8) ? "out of range (permission bits from 0 to 0777)" : "not an octal file mode (digits 0-7, e.g. 0640)",
            "the default 0600");
}

// KCOUNT_MAX_FILES, read after KCOUNT_MAX_BYTES: it counts only under a size cap.
void readMaxFiles(Config* c, std::string* problems) {
  uint64_t files = c->max_files;
  std::string files_problem;
  const bool files_taken = readNumber("KCOUNT_MAX_FILES", 1, 100000, "files", 1, &files, &files_problem);
  if (!files_problem.empty() && c->max_file_bytes != 0 && c->refused.empty()) {
    // Under a size cap, the file count is the other half of the disk limit: a mistyped one is not replaced
    // by the default (8 files where 1 was meant is 8 times the disk asked for), as a mistyped cap is not.
    c->refused = "KCOUNT_MAX_FILES=" + shownSettingValue(env("KCOUNT_MAX_FILES")) +
                 " is not a file count (a whole number from 1 to 100000)";
    addLine(problems, c->refused + ": kcount records nothing in this process rather than keep a number of log files "
                                   "other than the one asked for with KCOUNT_MAX_BYTES (fix the value)");
  } else if (!files_problem.empty()) {
    addLine(problems, files_problem);
  } else if (files_taken && c->max_file_bytes == 0 && c->refused.empty()) {
    addLine(problems, "KCOUNT_MAX_FILES=" + shownSettingValue(env("KCOUNT_MAX_FILES")) +
                          " has no effect without KCOUNT_MAX_BYTES: a log continues in a new file only when one "
                          "reaches its size cap, and without a cap it is one file of any size");
  }
  c->max_files = static_cast<uint32_t>(files);
}

// Everything readConfig() checks, without the KCOUNT_WARNED filter.
Config readAll(std::string* problems) {
  Config c;
  if (const char* v = env("KCOUNT_OUTPUT")) {
    // Only blanks (an unset shell variable with a space around it): a log named " " nobody would find.
    if (*v != '\0' && std::string_view(v).find_first_not_of(" \t") == std::string_view::npos)
      problem(problems, "KCOUNT_OUTPUT", v, "only blanks, not a file or folder name",
              "the default ./kcount-%h-%p.kcount");
    else
      c.output = v;
  }
  if (const char* v = env("KCOUNT_CUPTI_PATH")) c.cupti_path = v;
  if (const char* v = env("KCOUNT_RUN_REPORT")) c.run_report = v;
  if (const char* v = env("KCOUNT_LOG_LEVEL")) {
    if (isLogLevel(v))
      c.log_level = v;
    else
      problem(problems, "KCOUNT_LOG_LEVEL", v,
              "not a level (allowed: off, error, warn, info, debug; also trace, critical, warning, err)", "info");
  }
  // The switch words for off keep kcount on; any other value disables it (a value meant to disable never
  // profiles by mistake), without a word: a disabled library prints nothing.
  if (const char* v = env("KCOUNT_DISABLE")) c.disabled = disableRequested(v);
  for (const SettingName name :
       {SettingName("KCOUNT_TORCH_MODULES"), SettingName("KCOUNT_TORCH_BACKWARD"), SettingName("KCOUNT_TORCH_OPS")})
    if (const char* v = env(name); v != nullptr && std::string_view(v) != "0") c.torch_helper = true;
  if (const char* v = env("KCOUNT_TORCH_OPS")) c.torch_ops = std::string_view(v) != "0";
  readNumber("KCOUNT_MAX_HOST_MB", 1, 1u << 20, "MiB", 1ull << 20, &c.max_host_bytes, problems);
  readNumber("KCOUNT_ACTIVITY_BUFFER_MB", 1, 1024, "MiB", 1ull << 20, &c.activity_buffer_bytes, problems);
  readNumber("KCOUNT_MAX_ACTIVITY_MB", 1, 1u << 20, "MiB", 1ull << 20, &c.max_activity_bytes, problems);
  readMaxBytes(&c, problems);
  readFileMode(&c, problems);
  if (const char* m = readWord("KCOUNT_MODE", {"summary", "trace"}, "not trace or summary", "trace", problems))
    c.mode = std::string_view(m) == "summary" ? RecordMode::kSummary : RecordMode::kTrace;
  const bool interval_set = readDuration("KCOUNT_INTERVAL", "the default 10s", &c.interval_ns, problems);
  const bool max_keys_set = readNumber("KCOUNT_MAX_KEYS", 1, UINT32_MAX, "rows", 1, &c.max_keys, problems);
  if (c.activity_buffer_bytes < (64u << 10)) c.activity_buffer_bytes = 64u << 10;
  readMaxFiles(&c, problems);
  const char* start = readWord("KCOUNT_START", {"on", "paused"}, "not 'on' or 'paused'", "on", problems);
  if (start != nullptr && std::string_view(start) == "paused") c.start_paused = true;
  const bool start_on_set = start != nullptr && std::string_view(start) == "on";
  if (const char* v = env("KCOUNT_CAPTURE_RANGE")) c.capture_range = v;
  if (start_on_set && !c.capture_range.empty())
    addLine(problems, "KCOUNT_START=on with KCOUNT_CAPTURE_RANGE=" + shownSettingValue(c.capture_range.c_str()) +
                          ": recording starts at that range, not at the start of the process (a capture range "
                          "starts paused; unset one of the two)");
  readNumber("KCOUNT_CAPTURE_SKIP", 0, UINT64_MAX, "occurrences", 1, &c.capture_skip, problems);
  readNumber("KCOUNT_CAPTURE_COUNT", 1, UINT64_MAX, "occurrences", 1, &c.capture_count, problems);
  readDuration("KCOUNT_CAPTURE_DURATION", "no limit", &c.capture_duration_ns, problems);
  if (const char* v = readWord("KCOUNT_CONTROL", {"off", "0", "cuda", "on", "1"}, "not 'off', 'cuda' or 'on'", "cuda",
                               problems)) {
    const std::string_view sv(v);
    c.control = (sv == "0") ? "off" : (sv == "1") ? "on" : std::string(sv);
  }
  if (c.start_paused && c.control == "off" && c.capture_range.empty())
    addLine(problems, "KCOUNT_START=paused with KCOUNT_CONTROL=off and no KCOUNT_CAPTURE_RANGE: nothing can start "
                      "recording in this process (set KCOUNT_CONTROL=cuda or on and use kcount ctl, or set "
                      "KCOUNT_CAPTURE_RANGE)");
  if (const char* v = env("KCOUNT_CONTROL_DIR")) c.control_dir = v;
  readSwitch("KCOUNT_YIELD", &c.yield, problems);
  readSwitch("KCOUNT_CUPTI_FINALIZE", &c.cupti_finalize, problems);
  readSwitch("KCOUNT_SIGTERM", &c.sigterm, problems);
  readGpuTime(&c, problems);
  readSwitch("KCOUNT_SIGINT", &c.sigint, problems);
  readSwitch("KCOUNT_SIGHUP", &c.sighup, problems);
  if (const char* v = readWord("KCOUNT_HOST_CLOCK", {"auto", "monotonic"}, "not 'auto' or 'monotonic'", "auto", problems))
    c.host_clock_auto = std::string_view(v) == "auto";
  if (const char* v = readWord("KCOUNT_LAUNCH_CALLBACKS", {"all", "driver"}, "not 'all' or 'driver'", "all", problems))
    c.driver_launch_callbacks = std::string_view(v) == "driver";
  uint64_t sample = 1;
  readNumber("KCOUNT_LAUNCH_TIMING", 1, kMaxLaunchTimingSample, "launch calls per timed call", 1, &sample, problems);
  c.launch_timing = static_cast<uint32_t>(sample);
  // Settings of summary mode given in trace mode: each one warning, and the default kept (trace mode does not
  // read them). KCOUNT_LAUNCH_TIMING=1 is what trace mode does anyway.
  if (c.mode != RecordMode::kSummary) {
    const Config d;
    if (interval_set) {
      summaryOnly(problems, "KCOUNT_INTERVAL", "a trace log has no snapshots, its records are written as they come",
                  "no snapshots");
      c.interval_ns = d.interval_ns;
    }
    if (max_keys_set) {
      summaryOnly(problems, "KCOUNT_MAX_KEYS", "a trace log keeps no tally rows in the process (kcount summary "
                  "tallies its records)", "no cap on tally rows");
      c.max_keys = d.max_keys;
    }
    if (sample > 1) {
      summaryOnly(problems, "KCOUNT_LAUNCH_TIMING", "a trace log's timeline needs every launch call's times",
                  "1: every launch call timed");
      c.launch_timing = 1;
    }
  }
  misspelledSettings(problems);
  return c;
}
}  // namespace

Config readConfig(std::string* problems) {
  try {
    std::string found;
    Config c = readAll(&found);
    // KCOUNT_DISABLE: the library does nothing, and says nothing either (docs/usage.md): no configuration
    // problem, and no message later.
    if (c.disabled) {
      c.log_level = "off";
      return c;
    }
    const char* printed = std::getenv(kWarnedVariable);
    if (problems != nullptr && !found.empty() && (printed == nullptr || hexHash(found) != printed))
      *problems += found;
    return c;
  } catch (...) {
    return Config{};
  }
}

void markProblemsPrinted() {
  try {
    std::string found;
    // A disabled library printed nothing (readConfig()): a program it exec()s without KCOUNT_DISABLE
    // still prints the problems.
    if (readAll(&found).disabled) return;
    if (!found.empty()) setenv(kWarnedVariable, hexHash(found).c_str(), 1);
  } catch (...) {
  }
}

}  // namespace kc::inject
