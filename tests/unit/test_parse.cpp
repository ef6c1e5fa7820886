// The shared parsers of numbers, sizes and durations (collector/parse.h): what KCOUNT_* variables and
// kcount ctl --duration accept and refuse.
#include <doctest/doctest.h>

#include <string>

#include "collector/parse.h"

using kc::parseBytes;
using kc::parseDurationNs;
using kc::parseUnsigned;

TEST_CASE("parseUnsigned: digits only, whole text, no overflow") {
  CHECK(parseUnsigned("0") == 0u);
  CHECK(parseUnsigned("42") == 42u);
  CHECK(parseUnsigned("18446744073709551615") == UINT64_MAX);
  CHECK(parseUnsigned("0640", 8) == 0640u);
  CHECK(parseUnsigned("777", 8) == 0777u);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1e20", "1.5", "0x10", "abc", "18446744073709551616", "12k"}) {
    INFO(bad);
    CHECK_FALSE(parseUnsigned(bad).has_value());
  }
  for (const char* bad : {"999", "8", "0649", "-7"}) {
    INFO(bad);
    CHECK_FALSE(parseUnsigned(bad, 8).has_value());
  }
}

TEST_CASE("parseBytes: whole bytes with optional binary units") {
  CHECK(parseBytes("0") == 0u);
  CHECK(parseBytes("4096") == 4096u);
  CHECK(parseBytes("64K") == 64u << 10);
  CHECK(parseBytes("64k") == 64u << 10);
  CHECK(parseBytes("64KB") == 64u << 10);
  CHECK(parseBytes("1MiB") == 1u << 20);
  CHECK(parseBytes("2G") == 2ull << 30);
  CHECK(parseBytes("1T") == 1ull << 40);
  for (const char* bad : {"", "-1", "1e20", "1.5M", "M", "10 M", "10X", "10MBs", "16777216T", "99999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(parseBytes(bad).has_value());
  }
}

TEST_CASE("parseDurationNs: a decimal number and a unit") {
  CHECK(parseDurationNs("10s") == 10'000'000'000ull);
  CHECK(parseDurationNs("2") == 2'000'000'000ull);
  CHECK(parseDurationNs("250ms") == 250'000'000ull);
  CHECK(parseDurationNs("1.5s") == 1'500'000'000ull);
  CHECK(parseDurationNs(".5s") == 500'000'000ull);
  CHECK(parseDurationNs("7us") == 7000u);
  CHECK(parseDurationNs("100ns") == 100u);
  CHECK(parseDurationNs("2m") == 120'000'000'000ull);
  CHECK(parseDurationNs("2min") == 120'000'000'000ull);
  CHECK(parseDurationNs("1h") == 3'600'000'000'000ull);
  CHECK(parseDurationNs("0") == 0u);  // accepted here; the callers refuse 0 with their own message
  CHECK(parseDurationNs("0s") == 0u);
  for (const char* bad : {"", "s", ".", "-1s", "+1s", "10 s", " 10s", "10sec", "abc", "1e3", "1e30", "inf", "nan",
                          "1.2.3s", "600000000000h", "10S"}) {
    INFO(bad);
    CHECK_FALSE(parseDurationNs(bad).has_value());
  }
}

TEST_CASE("tooLarge*: well formed but past UINT64_MAX, told apart from text that is no number") {
  CHECK(kc::tooLargeUnsigned("18446744073709551616"));
  CHECK_FALSE(kc::tooLargeUnsigned("18446744073709551615"));
  CHECK_FALSE(kc::tooLargeUnsigned("12x"));
  CHECK_FALSE(kc::tooLargeUnsigned(""));
  CHECK(kc::tooLargeUnsigned("77777777777777777777777", 8));
  CHECK_FALSE(kc::tooLargeUnsigned("0778", 8));
  CHECK(kc::tooLargeBytes("99999999999T"));
  CHECK(kc::tooLargeBytes("16777216T"));
  CHECK_FALSE(kc::tooLargeBytes("16777215T"));
  CHECK(kc::tooLargeBytes("99999999999999999999999"));
  CHECK_FALSE(kc::tooLargeBytes("12Q"));
  CHECK_FALSE(kc::tooLargeBytes("-1K"));
  CHECK_FALSE(kc::tooLargeBytes("64K"));
  CHECK(kc::tooLargeDuration("99999999999999h"));
  CHECK(kc::tooLargeDuration("1e400") == false);
  CHECK(kc::tooLargeDuration("600y") == false);
  CHECK_FALSE(kc::tooLargeDuration("1.2.3s"));
  CHECK_FALSE(kc::tooLargeDuration("10s"));
  CHECK(kc::tooLargeDuration("18446744073709551616ns"));
}

TEST_CASE("parseSwitch and disableRequested: the switch words; KCOUNT_DISABLE disables on anything else") {
  for (const char* on : {"1", "on", "yes", "true"}) {
    INFO(on);
    CHECK(kc::parseSwitch(on) == true);
    CHECK(kc::disableRequested(on));
  }
  for (const char* off : {"0", "off", "no", "false"}) {
    INFO(off);
    CHECK(kc::parseSwitch(off) == false);
    CHECK_FALSE(kc::disableRequested(off));
  }
  CHECK_FALSE(kc::disableRequested(""));  // empty: as unset
  for (const char* other : {" 0", "00", "0 ", "False", "OFF", "1\n", "disable"}) {
    INFO(other);
    CHECK_FALSE(kc::parseSwitch(other).has_value());
    CHECK(kc::disableRequested(other));
  }
}
