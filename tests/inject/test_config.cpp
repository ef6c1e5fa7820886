// KCOUNT_* settings: parsing (inject/config.cpp) and the table of their names (inject/settings.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>

#include "inject/config.h"
#include "inject/settings.h"

TEST_CASE("KCOUNT_MODE, KCOUNT_INTERVAL and KCOUNT_MAX_KEYS from the environment") {
  const char* saved_mode = std::getenv("KCOUNT_MODE");
  const std::string keep_mode = saved_mode ? saved_mode : "";
  setenv("KCOUNT_MODE", "summary", 1);
  setenv("KCOUNT_INTERVAL", "500ms", 1);
  setenv("KCOUNT_MAX_KEYS", "1000", 1);
  std::string problems;
  kc::inject::Config c = kc::inject::readConfig(&problems);
  CHECK(problems.empty());
  CHECK(c.mode == kc::inject::RecordMode::kSummary);
  CHECK(c.interval_ns == 500'000'000ull);
  CHECK(c.max_keys == 1000);
  setenv("KCOUNT_MODE", "fast", 1);
  setenv("KCOUNT_INTERVAL", "soon", 1);
  problems.clear();
  c = kc::inject::readConfig(&problems);
  CHECK(c.mode == kc::inject::RecordMode::kTrace);
  CHECK(c.interval_ns == 10'000'000'000ull);
  CHECK(problems.find("KCOUNT_MODE=fast") != std::string::npos);
  CHECK(problems.find("KCOUNT_INTERVAL=soon") != std::string::npos);
  unsetenv("KCOUNT_INTERVAL");
  unsetenv("KCOUNT_MAX_KEYS");
  if (saved_mode) setenv("KCOUNT_MODE", keep_mode.c_str(), 1);
  else unsetenv("KCOUNT_MODE");
}

namespace {
// Sets one KCOUNT_* variable for the scope of a test, then restores what the process had (the test
// main sets KCOUNT_OUTPUT and KCOUNT_LOG_LEVEL for the session tests that run later in this process).
struct EnvVar {
  const char* name;
  std::optional<std::string> before;
  EnvVar(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) before = v;
    setenv(n, value, 1);
  }
  ~EnvVar() {
    if (before) setenv(name, before->c_str(), 1);
    else unsetenv(name);
  }
};

std::string problemsFor(const char* name, const char* value, kc::inject::Config* c = nullptr) {
  EnvVar v(name, value);
  std::string problems;
  kc::inject::Config got = kc::inject::readConfig(&problems);
  if (c != nullptr) *c = got;
  return problems;
}
}  // namespace

TEST_CASE("malformed or out-of-range numbers: one warning naming variable, value and what is allowed; default kept") {
  const kc::inject::Config d;
  struct Case {
    const char* name;
    const char* value;
    const char* says;  // part of the warning
  } cases[] = {
      {"KCOUNT_MAX_FILES", "0", "from 1 to 100000"},
      {"KCOUNT_MAX_FILES", "-2", "not a whole number"},
      {"KCOUNT_ACTIVITY_BUFFER_MB", "-3", "not a whole number"},
      {"KCOUNT_ACTIVITY_BUFFER_MB", "0", "from 1 to 1024"},
      {"KCOUNT_MAX_HOST_MB", "0", "from 1 to 1048576"},
      {"KCOUNT_MAX_ACTIVITY_MB", "12x", "not a whole number"},
      {"KCOUNT_CAPTURE_COUNT", "0", "1 or more"},
      {"KCOUNT_CAPTURE_SKIP", "-1", "not a whole number"},
      {"KCOUNT_MAX_KEYS", "0", "from 1 to"},
      {"KCOUNT_FILE_MODE", "999", "not an octal file mode"},
      {"KCOUNT_FILE_MODE", "1777", "from 0 to 0777"},
      {"KCOUNT_INTERVAL", "0", "more than 0"},
      {"KCOUNT_INTERVAL", "-1s", "not a duration"},
      {"KCOUNT_CAPTURE_DURATION", "0", "more than 0"},
      {"KCOUNT_CAPTURE_DURATION", "1e3", "not a duration"},
      // Well formed but past 2^64 - 1: too large, with the maximum.
      {"KCOUNT_MAX_FILES", "99999999999999999999999", "too large (allowed: files from 1 to 100000)"},
      {"KCOUNT_CAPTURE_SKIP", "99999999999999999999999", "too large (allowed: occurrences from 0 to 18446744073709551615)"},
      {"KCOUNT_FILE_MODE", "77777777777777777777777", "out of range (permission bits from 0 to 0777)"},
      {"KCOUNT_INTERVAL", "99999999999999h", "too large (the longest duration is 18446744073709551615 ns"},
  };
  for (const Case& k : cases) {
    INFO(k.name << "=" << k.value);
    kc::inject::Config c;
    const std::string p = problemsFor(k.name, k.value, &c);
    CHECK(p.find(std::string(k.name) + "=" + k.value) != std::string::npos);
    CHECK(p.find(k.says) != std::string::npos);
    CHECK(p.find("using") != std::string::npos);
    CHECK(p.find('\n') == std::string::npos);  // one line
    CHECK(c.max_file_bytes == d.max_file_bytes);
    CHECK(c.max_files == d.max_files);
    CHECK(c.activity_buffer_bytes == d.activity_buffer_bytes);
    CHECK(c.max_host_bytes == d.max_host_bytes);
    CHECK(c.max_activity_bytes == d.max_activity_bytes);
    CHECK(c.capture_count == d.capture_count);
    CHECK(c.capture_skip == d.capture_skip);
    CHECK(c.max_keys == d.max_keys);
    CHECK(c.file_mode == d.file_mode);
    CHECK(c.interval_ns == d.interval_ns);
    CHECK(c.capture_duration_ns == d.capture_duration_ns);
  }
}

TEST_CASE("valid numbers, sizes and durations are taken without a warning") {
  kc::inject::Config c;
  CHECK(problemsFor("KCOUNT_MAX_BYTES", "64K", &c).empty());
  CHECK(c.max_file_bytes == 65536);
  CHECK(problemsFor("KCOUNT_MAX_BYTES", "0", &c).empty());
  CHECK(c.max_file_bytes == 0);
  CHECK(problemsFor("KCOUNT_FILE_MODE", "0640", &c).empty());
  CHECK(c.file_mode == 0640);
  {
    EnvVar cap("KCOUNT_MAX_BYTES", "1M");  // KCOUNT_MAX_FILES alone has no effect, and says so
    CHECK(problemsFor("KCOUNT_MAX_FILES", "1", &c).empty());
    CHECK(c.max_files == 1);
  }
  CHECK(problemsFor("KCOUNT_CAPTURE_DURATION", "1.5", &c).empty());
  CHECK(c.capture_duration_ns == 1'500'000'000ull);
  {
    EnvVar summary("KCOUNT_MODE", "summary");  // KCOUNT_INTERVAL is read in summary mode only
    CHECK(problemsFor("KCOUNT_INTERVAL", "2", &c).empty());
    CHECK(c.interval_ns == 2'000'000'000ull);
  }
  CHECK(problemsFor("KCOUNT_ACTIVITY_BUFFER_MB", "1", &c).empty());
  CHECK(c.activity_buffer_bytes == 1u << 20);
}

TEST_CASE("KCOUNT_MAX_BYTES: the units the warning lists are the units taken") {
  kc::inject::Config c;
  // Every form the warning names is taken silently, at powers of 1024.
  for (const char* v : {"4k", "4K", "4KB", "4KiB", "4kB", "4kiB"}) {
    INFO(v);
    CHECK(problemsFor("KCOUNT_MAX_BYTES", v, &c).empty());
    CHECK(c.max_file_bytes == 4096);
  }
  for (const char* v : {"1M", "1MB", "1MiB"}) {
    INFO(v);
    CHECK(problemsFor("KCOUNT_MAX_BYTES", v, &c).empty());
    CHECK(c.max_file_bytes == 1u << 20);
  }
  CHECK(problemsFor("KCOUNT_MAX_BYTES", "2GB", &c).empty());
  CHECK(c.max_file_bytes == 2ull << 30);
  CHECK(problemsFor("KCOUNT_MAX_BYTES", "1TiB", &c).empty());
  CHECK(c.max_file_bytes == 1ull << 40);
  // A refused one gets the list of what is taken, and the library records nothing rather than write
  // without the cap asked for.
  for (const char* v : {"4m", "4Kb", "4KIB", "4 K", "4X", "-1", "1e20", "1.5G"}) {
    INFO(v);
    const std::string shown = std::string_view(v) == "4 K" ? "\"4 K\"" : v;
    CHECK(problemsFor("KCOUNT_MAX_BYTES", v, &c) ==
          "KCOUNT_MAX_BYTES=" + shown +
              " is not a size (a whole number of bytes, optionally with a unit K (or k), M, G or T, which may be "
              "followed by B or iB, all powers of 1024: 1048576, 64K, 4KiB, 1GB; 0: no cap): kcount records "
              "nothing in this process rather than write a log without the size cap asked for (fix the value, "
              "or set 0 for no cap)");
    CHECK(c.refused == "KCOUNT_MAX_BYTES=" + shown +
                           " is not a size (a whole number of bytes, optionally with a unit K (or k), M, G or T, "
                           "which may be followed by B or iB, all powers of 1024: 1048576, 64K, 4KiB, 1GB; 0: no cap)");
    CHECK_FALSE(c.disabled);  // not KCOUNT_DISABLE: the library says why it records nothing
  }
  const std::string p = problemsFor("KCOUNT_MAX_BYTES", "99999999999T", &c);
  CHECK(p.starts_with("KCOUNT_MAX_BYTES=99999999999T is too large (the largest size is 18446744073709551615 bytes"));
  CHECK(p.find("kcount records nothing in this process") != std::string::npos);
  CHECK(c.refused.starts_with("KCOUNT_MAX_BYTES=99999999999T is too large"));
  CHECK(problemsFor("KCOUNT_MAX_BYTES", "64K", &c).empty());
  CHECK(c.refused.empty());
}

TEST_CASE("KCOUNT_MAX_BYTES below the minimum is raised to it, with a warning") {
  kc::inject::Config c;
  const std::string p = problemsFor("KCOUNT_MAX_BYTES", "300", &c);
  CHECK(c.max_file_bytes == kc::inject::kMinMaxFileBytes);
  CHECK(p.find("KCOUNT_MAX_BYTES=300") != std::string::npos);
  CHECK(p.find("minimum of 4096 bytes") != std::string::npos);
}

TEST_CASE("switches take 1/on/yes/true and 0/off/no/false; anything else is one warning, default kept") {
  kc::inject::Config c;
  CHECK(problemsFor("KCOUNT_YIELD", "on", &c).empty());
  CHECK(c.yield);
  CHECK(problemsFor("KCOUNT_SIGTERM", "false", &c).empty());
  CHECK_FALSE(c.sigterm);
  CHECK(c.sigint);
  CHECK(problemsFor("KCOUNT_SIGINT", "0", &c).empty());
  CHECK_FALSE(c.sigint);
  CHECK(c.sighup);
  CHECK(problemsFor("KCOUNT_SIGHUP", "off", &c).empty());
  CHECK_FALSE(c.sighup);
  std::string p = problemsFor("KCOUNT_YIELD", "7", &c);
  CHECK_FALSE(c.yield);
  CHECK(p.find("KCOUNT_YIELD=7: not a switch") != std::string::npos);
  p = problemsFor("KCOUNT_CUPTI_FINALIZE", "x", &c);
  CHECK(c.cupti_finalize);
  CHECK(p.find("KCOUNT_CUPTI_FINALIZE=x") != std::string::npos);
  CHECK(c.gpu_time);
  CHECK(problemsFor("KCOUNT_GPU_TIME", "0", &c).empty());
  CHECK_FALSE(c.gpu_time);
  CHECK_FALSE(c.graph_gpu_time);
  CHECK(problemsFor("KCOUNT_GPU_TIME", "graphs", &c).empty());
  CHECK_FALSE(c.gpu_time);
  CHECK(c.graph_gpu_time);
  p = problemsFor("KCOUNT_GPU_TIME", "graph", &c);
  CHECK(c.gpu_time);  // the default kept
  CHECK_FALSE(c.graph_gpu_time);
  CHECK(p.find("KCOUNT_GPU_TIME=graph: not a switch or 'graphs'") != std::string::npos);
}

TEST_CASE("KCOUNT_START=paused with KCOUNT_CONTROL=off says that nothing can start recording") {
  EnvVar start("KCOUNT_START", "paused");
  CHECK(problemsFor("KCOUNT_CONTROL", "off").find("nothing can start recording") != std::string::npos);
  CHECK(problemsFor("KCOUNT_CONTROL", "cuda").empty());
  EnvVar control("KCOUNT_CONTROL", "off");
  CHECK(problemsFor("KCOUNT_CAPTURE_RANGE", "step").empty());
}

TEST_CASE("KCOUNT_MAX_FILES that does not parse under a size cap disables recording, as a bad cap does") {
  kc::inject::Config c;
  {
    EnvVar cap("KCOUNT_MAX_BYTES", "4K");
    for (const char* v : {"abc", "0", "-1", "1000000"}) {
      INFO(v);
      const std::string p = problemsFor("KCOUNT_MAX_FILES", v, &c);
      CHECK(c.refused == std::string("KCOUNT_MAX_FILES=") + v + " is not a file count (a whole number from 1 to 100000)");
      CHECK(p == c.refused + ": kcount records nothing in this process rather than keep a number of log files other "
                             "than the one asked for with KCOUNT_MAX_BYTES (fix the value)");
    }
    CHECK(problemsFor("KCOUNT_MAX_FILES", "2", &c).empty());
    CHECK(c.refused.empty());
    CHECK(c.max_files == 2);
  }
  {
    // A bad cap is the reason given; the file count is not also called "no effect without KCOUNT_MAX_BYTES".
    EnvVar cap("KCOUNT_MAX_BYTES", "10m");
    const std::string p = problemsFor("KCOUNT_MAX_FILES", "1", &c);
    CHECK(c.refused.starts_with("KCOUNT_MAX_BYTES=10m is not a size"));
    CHECK(p.find("has no effect") == std::string::npos);
  }
  // Without a cap, a bad count is a plain warning (it has no effect either way).
  CHECK(problemsFor("KCOUNT_MAX_FILES", "abc", &c).starts_with("ignoring KCOUNT_MAX_FILES=abc"));
  CHECK(c.refused.empty());
}

TEST_CASE("settings that have no effect as combined say so, in one line each") {
  kc::inject::Config c;
  std::string p = problemsFor("KCOUNT_MAX_FILES", "3", &c);
  CHECK(p.find("KCOUNT_MAX_FILES=3 has no effect without KCOUNT_MAX_BYTES") != std::string::npos);
  CHECK(p.find('\n') == std::string::npos);
  CHECK(c.max_files == 3);
  {
    EnvVar cap("KCOUNT_MAX_BYTES", "0");  // 0 is no cap: still no effect
    CHECK(problemsFor("KCOUNT_MAX_FILES", "3").find("has no effect") != std::string::npos);
  }
  {
    EnvVar start("KCOUNT_START", "on");
    p = problemsFor("KCOUNT_CAPTURE_RANGE", "step", &c);
    CHECK(p.find("KCOUNT_START=on with KCOUNT_CAPTURE_RANGE=step: recording starts at that range") != std::string::npos);
    CHECK(c.capture_range == "step");
  }
  CHECK(problemsFor("KCOUNT_CAPTURE_RANGE", "step").empty());  // KCOUNT_START unset: no conflict
  CHECK(problemsFor("KCOUNT_START", "on").empty());
}

TEST_CASE("KCOUNT_OUTPUT of only blanks is refused: the default name is used") {
  for (const char* v : {" ", "  ", "\t"}) {
    INFO('"' << v << '"');
    kc::inject::Config c;
    const std::string p = problemsFor("KCOUNT_OUTPUT", v, &c);
    CHECK(p.find("only blanks, not a file or folder name; using the default ./kcount-%h-%p.kcount") != std::string::npos);
    CHECK(c.output.empty());
  }
  kc::inject::Config c;
  CHECK(problemsFor("KCOUNT_OUTPUT", " a.kcount", &c).empty());  // a name with a blank in it is a name
  CHECK(c.output == " a.kcount");
}

TEST_CASE("KCOUNT_FILE_MODE without the owner's read bit is refused: kcount could not read the log") {
  const kc::inject::Config d;
  for (const char* mode : {"0000", "0200", "0077", "0377"}) {
    INFO(mode);
    kc::inject::Config c;
    const std::string p = problemsFor("KCOUNT_FILE_MODE", mode, &c);
    CHECK(p.find("no read permission for the log's owner (0400)") != std::string::npos);
    CHECK(p.find("using the default 0600") != std::string::npos);
    CHECK(c.file_mode == d.file_mode);
  }
  kc::inject::Config c;
  CHECK(problemsFor("KCOUNT_FILE_MODE", "0400", &c).empty());
  CHECK(c.file_mode == 0400);
}

TEST_CASE("problems already printed by the process this one was exec()ed from are not reported again") {
  EnvVar bad("KCOUNT_MAX_FILES", "0");
  std::string first;
  kc::inject::readConfig(&first);
  REQUIRE_FALSE(first.empty());
  kc::inject::markProblemsPrinted();
  std::string again;
  kc::inject::readConfig(&again);
  CHECK(again.empty());
  {
    EnvVar other("KCOUNT_MAX_HOST_MB", "0");  // different settings: a different text, printed
    std::string changed;
    kc::inject::readConfig(&changed);
    CHECK(changed.find("KCOUNT_MAX_HOST_MB=0") != std::string::npos);
    CHECK(changed.find("KCOUNT_MAX_FILES=0") != std::string::npos);
  }
  unsetenv("KCOUNT_WARNED");
}

TEST_CASE("a KCOUNT_* name within two edits of a setting is reported as a probable misspelling") {
  EnvVar a("KCOUNT_MDOE", "summary");         // swapped letters
  EnvVar b("KCOUNT_GPU_TIMES", "0");          // one letter added
  EnvVar c("KCOUNT_HOSTCLOCK", "monotonic");  // one letter missing
  EnvVar d("KCOUNT_JOBS", "4");               // a build script's variable: known
  EnvVar e("KCOUNT_SOMETHING_ELSE", "1");     // unknown, near no setting: left alone
  std::string problems;
  const kc::inject::Config cfg = kc::inject::readConfig(&problems);
  CHECK(cfg.mode == kc::inject::RecordMode::kTrace);  // the misspelt setting is not taken
  CHECK(problems.find("ignoring KCOUNT_MDOE=summary: not a kcount setting (did you mean KCOUNT_MODE?)") !=
        std::string::npos);
  CHECK(problems.find("ignoring KCOUNT_GPU_TIMES=0: not a kcount setting (did you mean KCOUNT_GPU_TIME?)") !=
        std::string::npos);
  CHECK(problems.find("(did you mean KCOUNT_HOST_CLOCK?)") != std::string::npos);
  CHECK(problems.find("KCOUNT_JOBS") == std::string::npos);
  CHECK(problems.find("KCOUNT_SOMETHING_ELSE") == std::string::npos);
}

TEST_CASE("KCOUNT_HOST_CLOCK: auto (default) or monotonic; anything else is one warning") {
  {
    std::string problems;
    CHECK(kc::inject::readConfig(&problems).host_clock_auto);
    CHECK(problems.empty());
  }
  {
    EnvVar v("KCOUNT_HOST_CLOCK", "monotonic");
    std::string problems;
    CHECK_FALSE(kc::inject::readConfig(&problems).host_clock_auto);
    CHECK(problems.empty());
  }
  {
    EnvVar v("KCOUNT_HOST_CLOCK", "rdtsc");
    std::string problems;
    CHECK(kc::inject::readConfig(&problems).host_clock_auto);
    CHECK(problems == "ignoring KCOUNT_HOST_CLOCK=rdtsc: not 'auto' or 'monotonic'; using auto");
  }
}

TEST_CASE("KCOUNT_LAUNCH_TIMING: 1 to 1024 in summary mode; elsewhere, or out of range, one warning and 1") {
  CHECK(kc::inject::readConfig(nullptr).launch_timing == 1);
  {
    EnvVar m("KCOUNT_MODE", "summary");
    for (const char* ok : {"1", "3", "16", "1024"}) {
      EnvVar v("KCOUNT_LAUNCH_TIMING", ok);
      std::string problems;
      CHECK(kc::inject::readConfig(&problems).launch_timing == std::stoul(ok));
      CHECK(problems.empty());
    }
    for (const auto& [bad, why] : std::vector<std::pair<const char*, const char*>>{
             {"0", "out of range"}, {"1025", "out of range"}, {"x", "not a whole number"}, {"-4", "not a whole number"}}) {
      EnvVar v("KCOUNT_LAUNCH_TIMING", bad);
      std::string problems;
      CHECK(kc::inject::readConfig(&problems).launch_timing == 1);
      CHECK(problems == std::string("ignoring KCOUNT_LAUNCH_TIMING=") + bad + ": " + why +
                            " (allowed: launch calls per timed call from 1 to 1024); using the default 1");
    }
    {
      EnvVar v("KCOUNT_LAUNCH_TIMING", "99999999999999999999999");
      std::string problems;
      CHECK(kc::inject::readConfig(&problems).launch_timing == 1);
      CHECK(problems.find(": too large (allowed: launch calls per timed call from 1 to 1024)") != std::string::npos);
    }
  }
  {
    EnvVar v("KCOUNT_LAUNCH_TIMING", "16");  // trace mode (the default): the timeline needs every call's times
    std::string problems;
    CHECK(kc::inject::readConfig(&problems).launch_timing == 1);
    CHECK(problems.find("ignoring KCOUNT_LAUNCH_TIMING=16: only read in summary mode") == 0);
  }
}

TEST_CASE("KCOUNT_LAUNCH_CALLBACKS: all (the default) or driver; anything else one warning and all") {
  CHECK_FALSE(kc::inject::readConfig(nullptr).driver_launch_callbacks);
  for (const auto& [value, driver] : std::vector<std::pair<const char*, bool>>{{"all", false}, {"driver", true}}) {
    EnvVar v("KCOUNT_LAUNCH_CALLBACKS", value);
    std::string problems;
    CHECK(kc::inject::readConfig(&problems).driver_launch_callbacks == driver);
    CHECK(problems.empty());
  }
  EnvVar v("KCOUNT_LAUNCH_CALLBACKS", "runtime");
  std::string problems;
  CHECK_FALSE(kc::inject::readConfig(&problems).driver_launch_callbacks);
  CHECK(problems == "ignoring KCOUNT_LAUNCH_CALLBACKS=runtime: not 'all' or 'driver'; using all");
}

TEST_CASE("KCOUNT_INTERVAL and KCOUNT_MAX_KEYS in trace mode: one warning each, as KCOUNT_LAUNCH_TIMING") {
  const kc::inject::Config d;
  for (const char* mode : {"", "trace"}) {  // unset: trace is the default
    INFO("KCOUNT_MODE=" << mode);
    EnvVar m("KCOUNT_MODE", mode);
    EnvVar interval("KCOUNT_INTERVAL", "5s");
    EnvVar keys("KCOUNT_MAX_KEYS", "1000");
    std::string problems;
    const kc::inject::Config c = kc::inject::readConfig(&problems);
    CHECK(problems ==
          "ignoring KCOUNT_INTERVAL=5s: only read in summary mode (KCOUNT_MODE=summary): a trace log has no snapshots, "
          "its records are written as they come; using no snapshots\n"
          "ignoring KCOUNT_MAX_KEYS=1000: only read in summary mode (KCOUNT_MODE=summary): a trace log keeps no tally "
          "rows in the process (kcount summary tallies its records); using no cap on tally rows");
    CHECK(c.interval_ns == d.interval_ns);
    CHECK(c.max_keys == d.max_keys);
    {
      EnvVar timing("KCOUNT_LAUNCH_TIMING", "16");  // the three through one check: one line each, in one form
      std::string all;
      kc::inject::readConfig(&all);
      CHECK(all.find("\nignoring KCOUNT_LAUNCH_TIMING=16: only read in summary mode (KCOUNT_MODE=summary): ") !=
            std::string::npos);
      CHECK(std::count(all.begin(), all.end(), '\n') == 2);
    }
  }
  {
    // A malformed value: the one warning about the value (as for KCOUNT_LAUNCH_TIMING).
    EnvVar interval("KCOUNT_INTERVAL", "soon");
    std::string problems;
    kc::inject::readConfig(&problems);
    CHECK(problems.find("ignoring KCOUNT_INTERVAL=soon: not a duration") == 0);
    CHECK(problems.find("only read in summary mode") == std::string::npos);
  }
  {
    EnvVar m("KCOUNT_MODE", "summary");
    EnvVar interval("KCOUNT_INTERVAL", "5s");
    EnvVar keys("KCOUNT_MAX_KEYS", "1000");
    std::string problems;
    const kc::inject::Config c = kc::inject::readConfig(&problems);
    CHECK(problems.empty());
    CHECK(c.interval_ns == 5'000'000'000ull);
    CHECK(c.max_keys == 1000);
  }
}

TEST_CASE("KCOUNT_DISABLE: the library reports no configuration problem and prints nothing") {
  EnvVar files("KCOUNT_MAX_FILES", "0");
  EnvVar level("KCOUNT_LOG_LEVEL", "loud");
  EnvVar interval("KCOUNT_INTERVAL", "5s");  // trace mode
  EnvVar misspelt("KCOUNT_MDOE", "summary");
  {
    std::string problems;
    const kc::inject::Config c = kc::inject::readConfig(&problems);
    CHECK_FALSE(c.disabled);
    CHECK(problems.find("KCOUNT_MAX_FILES=0") != std::string::npos);
    CHECK(problems.find("ignoring KCOUNT_LOG_LEVEL=loud: not a level (allowed: off, error, warn, info, debug; also "
                        "trace, critical, warning, err); using info") != std::string::npos);
    CHECK(c.log_level == "info");
  }
  // The switch words for on, and any other value (safe side: never profiles by mistake), disable.
  for (const char* on : {"1", "yes", "on", "true", " 0", "00", "False", "OFF", "1\n", "disable"}) {
    INFO('"' << on << '"');
    EnvVar disable("KCOUNT_DISABLE", on);
    std::string problems;
    const kc::inject::Config c = kc::inject::readConfig(&problems);
    CHECK(c.disabled);
    CHECK(problems.empty());
    CHECK(c.log_level == "off");  // nothing later either
    kc::inject::markProblemsPrinted();  // nothing was printed: nothing recorded for exec()ed programs
    CHECK(std::getenv("KCOUNT_WARNED") == nullptr);
  }
  // The switch words for off, as every other switch takes them: not disabled, and the problems reported.
  for (const char* off : {"0", "off", "no", "false"}) {
    INFO(off);
    EnvVar disable("KCOUNT_DISABLE", off);
    std::string problems;
    CHECK_FALSE(kc::inject::readConfig(&problems).disabled);
    CHECK(problems.find("KCOUNT_MAX_FILES=0") != std::string::npos);
    CHECK(problems.find("KCOUNT_DISABLE") == std::string::npos);  // a word it takes: no warning about it
  }
}

TEST_CASE("the setting table: settings and other known names, checked at compile time") {
  static_assert(kc::inject::isSetting("KCOUNT_MODE"));
  static_assert(!kc::inject::isSetting("KCOUNT_MDOE"));
  static_assert(!kc::inject::isSetting(kc::inject::kWarnedVariable));  // known, but not a setting
  static_assert(kc::inject::isKnownName(kc::inject::kWarnedVariable));
  static_assert(std::string_view(kc::inject::SettingName("KCOUNT_GPU_TIME").c_str()) == "KCOUNT_GPU_TIME");
  for (const std::string_view s : kc::inject::kSettings) {
    CHECK(s.substr(0, 7) == "KCOUNT_");
    // Listed once, and not also as a known non-setting (which would never be suggested as a correction).
    CHECK(std::count(std::begin(kc::inject::kSettings), std::end(kc::inject::kSettings), s) == 1);
    CHECK(std::find(std::begin(kc::inject::kOtherNames), std::end(kc::inject::kOtherNames), s) ==
          std::end(kc::inject::kOtherNames));
  }
}

TEST_CASE("every KCOUNT_* name quoted in the library, the tool and the Python helper is in the setting table") {
  // readConfig() cannot read an unlisted setting (SettingName); the rest of kcount reads the environment
  // with std::getenv (tools/run.cpp, python/: kcount.torch, the kcount package): a name read there and missing from kSettings
  // or kOtherNames would be reported as a misspelling, so this scans their sources for quoted names.
  const std::regex quoted(R"(["'](KCOUNT_[A-Z0-9_]*[A-Z0-9])["'=])");
  size_t names = 0;
  std::set<std::string> unknown;
  for (const char* dir : {"inject", "collector", "tools", "python"}) {
    const std::filesystem::path root = std::filesystem::path(KC_SOURCE_DIR) / dir;
    REQUIRE(std::filesystem::is_directory(root));
    for (const auto& f : std::filesystem::recursive_directory_iterator(root)) {
      const std::string ext = f.path().extension().string();
      if (!f.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".py")) continue;
      std::ifstream in(f.path());
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (auto it = std::sregex_iterator(text.begin(), text.end(), quoted); it != std::sregex_iterator(); ++it) {
        ++names;
        if (!kc::inject::isKnownName((*it)[1].str()))
          unknown.insert((*it)[1].str() + " (" + f.path().lexically_relative(KC_SOURCE_DIR).string() + ")");
      }
    }
  }
  CHECK(names > 100);  // the scan found the sources
  for (const std::string& u : unknown) FAIL_CHECK("not in inject/settings.h: " << u);
  CHECK(unknown.empty());
}

TEST_CASE("A warning shows a value with blanks, quotes or control characters quoted, on one line") {
  {
    EnvVar m("KCOUNT_MODE", "summary");
    EnvVar v("KCOUNT_LAUNCH_TIMING", " 16");
    std::string problems;
    CHECK(kc::inject::readConfig(&problems).launch_timing == 1);
    CHECK(problems == "ignoring KCOUNT_LAUNCH_TIMING=\" 16\": not a whole number (allowed: launch calls per timed "
                      "call from 1 to 1024); using the default 1");
  }
  {
    EnvVar v("KCOUNT_MODE", "summary\nx");
    std::string problems;
    kc::inject::readConfig(&problems);
    CHECK(problems == "ignoring KCOUNT_MODE=\"summary\\nx\": not trace or summary; using trace");
    CHECK(problems.find('\n') == std::string::npos);
  }
  {
    EnvVar v("KCOUNT_MODE", "sum'mary");
    std::string problems;
    kc::inject::readConfig(&problems);
    CHECK(problems == "ignoring KCOUNT_MODE=\"sum'mary\": not trace or summary; using trace");
  }
}

TEST_CASE("A misspelled setting's value is shown quoted and escaped as other warnings show values") {
  EnvVar a("KCOUNT_MDOE", "x\ny");
  std::string problems;
  kc::inject::readConfig(&problems);
  CHECK(problems.find("ignoring KCOUNT_MDOE=\"x\\ny\": not a kcount setting (did you mean KCOUNT_MODE?)") !=
        std::string::npos);
  CHECK(problems.find('\n') == std::string::npos);
}
