// The live kcount processes `kcount exporter` serves: those of the current user that have a control socket
// (inject/control.cpp) in one of the user's control folders, asked for their status (the request `kcount
// ctl PID status` sends; it changes nothing in the process). Another user's process or folder is never
// asked nor read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kc {

/// One process with a control socket, and what its status said.
struct LiveProcess {
  int pid = 0;
  std::string error;                   // why it did not answer ("" when it did)
  std::string state;                   // "recording", "paused" or "dormant" (SessionStatus::mode)
  std::string record_mode;             // "summary" or "trace" (KCOUNT_MODE)
  std::vector<std::string> log_files;  // its log, part 0 first ("" entries dropped); empty before it is created
  uint64_t dropped_records = 0;        // host records + activity records dropped so far
};

/// The processes of this effective uid with a socket PID.sock in the user's control folders
/// (controlDirsFor(0, uid): KCOUNT_CONTROL_DIR, XDG_RUNTIME_DIR/kcount, /run/user/UID/kcount,
/// /tmp/kcount-UID), each asked for its status with `timeout_s` to answer. A folder kcount would refuse
/// (another owner, open to others) is passed over; a socket whose process is gone is passed over (not
/// removed: the exporter changes nothing); a process of another uid is not asked. Sorted by pid. Thread-safe.
std::vector<LiveProcess> findLiveProcesses(double timeout_s);

}  // namespace kc
