// Configuration of libkcount.so, read once from KCOUNT_* environment variables (docs/usage.md).
#pragma once

#include <cstdint>
#include <string>

namespace kc::inject {

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
  bool torch_helper = false;  // KCOUNT_TORCH_MODULES, KCOUNT_TORCH_BACKWARD or KCOUNT_TORCH_OPS set (not "0"):
                              // the preload constructor puts the Python helper on PYTHONPATH
  bool torch_ops = false;     // KCOUNT_TORCH_OPS set (not "0"): PyTorch's emit_nvtx range names are cut at
                              // ", seq = " / ", op_id = " (docs/torch-modules.md)
};

/// Reads the environment. Never throws; malformed numbers keep the default (and are reported in
/// `problems`, one line each). Makes no CUDA or CUPTI call (safe in a constructor).
Config readConfig(std::string* problems);

}  // namespace kc::inject
