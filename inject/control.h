// The control socket of libkcount.so: a Unix stream socket named by the process id, served by one
// thread that blocks in accept() and costs nothing while idle. `kcount ctl` connects to it to start and
// stop capture windows, read the status and flush. Only the process's own user and root may connect
// (SO_PEERCRED). Protocol: docs/usage.md#kcount-ctl.
#pragma once

#include <string>

namespace kc::inject {

/// Folder of the control sockets of this user: KCOUNT_CONTROL_DIR, else $XDG_RUNTIME_DIR/kcount, else
/// /tmp/kcount-UID. Created with mode 0700 if missing.
std::string controlDir();

/// Creates the socket `<controlDir()>/<pid>.sock` and starts the thread that serves it, once per process
/// (later calls return the first result). Refuses, with one warning, a folder that is a symbolic link,
/// belongs to another user or is open to group or others. Never throws.
bool startControlServer() noexcept;

/// Removes the socket file if this process created it. Async-signal-safe (unlink only); called at exit.
void removeControlSocket() noexcept;

/// In a fork() child: closes the inherited listening socket without removing the file (the parent still
/// serves it). The child has no control thread. Async-signal-safe.
void controlAfterFork() noexcept;

/// True if this process created the control socket (not a fork child). Async-signal-safe, no allocation.
bool ownsControlSocket() noexcept;

/// Answers one request (a JSON object: {"cmd": "start"|"stop"|"status"|"flush", "duration_ns": N,
/// "range": NAME, "skip": N, "count": M}) with a one-line JSON reply: {"ok": true|false, "error": TEXT,
/// "status": {...}}. Never throws. Thread-safe; called on the control thread (and by tests).
std::string handleControlRequest(const std::string& request) noexcept;

}  // namespace kc::inject
