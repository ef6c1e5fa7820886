// The folder of the control socket (KCOUNT_CONTROL_DIR, docs/usage.md#kcount-ctl): which folder a process
// uses, and whether kcount refuses it. One rule for libkcount.so (inject/control.cpp), which makes the
// socket there, and for `kcount ctl` (tools/ctl.cpp), which says why a process has no socket.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

namespace kc {

/// The control folder of a process whose KCOUNT_CONTROL_DIR is `control_dir` and XDG_RUNTIME_DIR is
/// `xdg_runtime_dir` ("" for unset or empty) and whose effective uid is `uid`: `control_dir` if not empty,
/// else `xdg_runtime_dir` + "/kcount" if that is an absolute path, else "/tmp/kcount-UID". Pure.
std::string controlFolder(const std::string& control_dir, const std::string& xdg_runtime_dir, uid_t uid);

/// Why kcount refuses the existing `dir` as the control folder of a process of effective uid `uid`, ""
/// if it takes it: "not a folder (or a symbolic link)", "owned by uid N", "open to group or others (mode
/// 777)", or the error of lstat() ("No such file or directory" for a folder that does not exist). Only
/// looks at the folder (lstat, which does not follow a link); creates and changes nothing. Thread-safe.
std::string refusedFolderReason(const std::string& dir, uid_t uid);

/// The same rule applied to `st`, what lstat() gave for an existing folder: "" if kcount takes it, else
/// the reason above. No system call: for a caller that lstat()ed the folder already (to learn whether it
/// exists), so that the folder is looked at once. Pure.
std::string refusedFolderReason(const struct stat& st, uid_t uid);

}  // namespace kc
