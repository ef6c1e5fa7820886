// `kcount run`: runs a command with libkcount.so injected and reports the logs it wrote.
#pragma once

#include <string>
#include <vector>

namespace kc {

struct RunOptions {
  std::string output;            // KCOUNT_OUTPUT for the child; empty: leave the library's default
  std::string inject = "preload";  // "preload" (LD_PRELOAD) or "cuda" (CUDA/NVTX injection variables)
  std::string lib;               // path of libkcount.so; empty: look beside the kcount binary
  bool torch_modules = false;    // --torch-modules: KCOUNT_TORCH_MODULES=1 and the Python helper on PYTHONPATH
  bool torch_backward = false;   // --torch-backward: KCOUNT_TORCH_BACKWARD=1 (implies modules)
  bool torch_ops = false;        // --torch-ops: KCOUNT_TORCH_OPS=1
  std::vector<std::string> command;
  bool paused = false;           // --paused: KCOUNT_START=paused for the child
};

/// Finds libkcount.so: explicit path, else <dir of kcount>/../lib/libkcount.so, else <dir>/libkcount.so.
/// Returns "" if none exists.
std::string findInjectionLibrary(const std::string& explicit_path);

/// Finds the Python helper folder (the one holding kcount's sitecustomize.py): <folder of `lib`>/../share/
/// kcount/python, else <folder of kcount>/../share/kcount/python. Returns "" if none exists.
std::string findTorchHelper(const std::string& lib);

/// Runs the command (fork + execvp, no shell), forwarding SIGINT and SIGTERM; returns the exit code to
/// use: the child's, or 128 + signal. Prints "kcount: log: PATH" to stderr for each log written.
int runCommand(const RunOptions& opt);

}  // namespace kc
