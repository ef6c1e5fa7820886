// Configuration of libkcount.so, read once from KCOUNT_* environment variables (docs/usage.md).
#pragma once

#include <cstdint>
#include <string>

namespace kc::inject {

/// KCOUNT_MODE: trace writes every launch, kernel and range record; summary joins and tallies them in
/// the process and writes a snapshot every KCOUNT_INTERVAL (collector/aggregator.h).
enum class RecordMode { kTrace, kSummary };

struct Config {
  std::string output;            // KCOUNT_OUTPUT: folder or pattern (%p pid, %h host, %r rank)
  std::string cupti_path;        // KCOUNT_CUPTI_PATH: libcupti to load if none is loaded yet
  std::string run_report;        // KCOUNT_RUN_REPORT: file to which each log's path is appended (kcount run)
  std::string log_level = "info";  // KCOUNT_LOG_LEVEL: off|error|warn|info|debug
  bool disabled = false;         // KCOUNT_DISABLE=1: load, do nothing
  uint64_t max_host_bytes = 256ull << 20;      // KCOUNT_MAX_HOST_MB: launch/range buffers
  uint64_t activity_buffer_bytes = 8ull << 20; // KCOUNT_ACTIVITY_BUFFER_MB: one CUPTI buffer
  uint64_t max_activity_bytes = 256ull << 20;  // KCOUNT_MAX_ACTIVITY_MB: all CUPTI buffers
  uint64_t max_file_bytes = 0;                 // KCOUNT_MAX_BYTES: log size cap, 0 = none
  unsigned file_mode = 0600;                   // KCOUNT_FILE_MODE (octal)
  RecordMode mode = RecordMode::kTrace;        // KCOUNT_MODE=trace|summary
  uint64_t interval_ns = 10'000'000'000ull;    // KCOUNT_INTERVAL: summary snapshot period ("10s", "500ms", "2")
  uint64_t max_keys = 65536;                   // KCOUNT_MAX_KEYS: summary tally rows (range, kernel name)
};

/// Reads the environment. Never throws; malformed numbers keep the default (and are reported in
/// `problems`, one line each). Makes no CUDA or CUPTI call (safe in a constructor).
Config readConfig(std::string* problems);

/// Parses a duration: a number followed by ns, us, ms, s, m or nothing (seconds), e.g. "10s", "250ms".
/// Returns false for anything else (and for 0).
bool parseDuration(const char* text, uint64_t* ns);

}  // namespace kc::inject
