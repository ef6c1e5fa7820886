// KCOUNT_MODE, KCOUNT_INTERVAL and KCOUNT_MAX_KEYS parsing (inject/config.cpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "inject/config.h"

using kc::inject::parseDuration;

TEST_CASE("KCOUNT_INTERVAL durations") {
  uint64_t ns = 0;
  CHECK(parseDuration("10s", &ns));
  CHECK(ns == 10'000'000'000ull);
  CHECK(parseDuration("2", &ns));
  CHECK(ns == 2'000'000'000ull);
  CHECK(parseDuration("250ms", &ns));
  CHECK(ns == 250'000'000ull);
  CHECK(parseDuration("1.5s", &ns));
  CHECK(ns == 1'500'000'000ull);
  CHECK(parseDuration("7us", &ns));
  CHECK(ns == 7000);
  CHECK(parseDuration("2m", &ns));
  CHECK(ns == 120'000'000'000ull);
  ns = 42;
  for (const char* bad : {"", "s", "0", "-1s", "10 s", "10sec", "abc", "1e30"}) {
    INFO(bad);
    CHECK_FALSE(parseDuration(bad, &ns));
  }
  CHECK(ns == 42);  // untouched on failure
}

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
