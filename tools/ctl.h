// `kcount ctl`: talks to the control socket of running processes that have libkcount.so loaded
// (inject/control.h). Exit codes: docs/usage.md#kcount-ctl.
#pragma once

#include <string>
#include <vector>

namespace kc {

struct CtlOptions {
  std::vector<std::string> args;  // PID COMMAND, or COMMAND with --all
  bool all = false;
  std::string duration;           // "10s", "500ms", ... ("" none)
  std::string range;              // capture range name ("" none)
  bool range_given = false;       // --range was on the command line (an empty NAME is refused)
  long long count = -1, skip = -1;
  std::string format = "text";    // text | json
  double timeout_s = 30;
};

/// Longest request line the library's control socket reads, in bytes, its newline included
/// (kMaxRequestBytes in inject/control.cpp): a longer one is never answered, so ctl refuses it up front.
inline constexpr size_t kCtlMaxRequestBytes = 4096;

/// Exit codes of `kcount ctl`.
enum CtlExit : int {
  kCtlOk = 0,
  kCtlRefusedCommand = 1,   // the process answered with an error (already recording, no window open, ...)
  kCtlUsage = 2,            // bad arguments
  kCtlNoProcess = 3,        // no such process
  kCtlPermission = 4,       // another user's process, or the socket refused us
  kCtlNotKcount = 5,        // no control socket: kcount not loaded, control off, or the process used no CUDA
  kCtlFailed = 6,           // connection broke, no answer in time, unreadable answer
};

/// Runs `kcount ctl`; `--duration` is parsed by kc::parseDurationNs (collector/parse.h), as the library's
/// KCOUNT_CAPTURE_DURATION. A PID that is a `kcount run` process stands for its profiled process (the
/// nearest descendant with a control socket; said on stderr). Prints to stdout/stderr; returns a CtlExit code (for --all the highest of all).
int runCtl(const CtlOptions& opt);

/// Folders where the control socket of a process of user `uid` may be, most specific first: this
/// process's KCOUNT_CONTROL_DIR, the target's KCOUNT_CONTROL_DIR and XDG_RUNTIME_DIR (from
/// /proc/PID/environ when readable; pid 0: none), /run/user/UID/kcount, /tmp/kcount-UID.
std::vector<std::string> controlDirsFor(int pid, unsigned uid);

}  // namespace kc
