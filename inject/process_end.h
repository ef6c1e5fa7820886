// The end of the process: the log is closed (final flush: the last records, Stats and End) however the
// process ends. exit() and a return from main run closeAtExit (atexit); SIGTERM, SIGINT and SIGHUP at their
// default action are taken by a handler that closes the log and re-raises; _exit/_Exit and kill/raise of
// the process's own ending signal are interposed (process_end.cpp), and so is the exec family (exec.cpp).
#pragma once

namespace kc::inject {

/// Closes this process's log (final flush: the last records, Stats and End) if its session is recording,
/// and removes its control socket: called before the process ends or replaces its image without
/// running atexit handlers (_exit, a signal sent to itself, exec). Nothing in a fork child. Keeps errno.
/// Never throws.
void finishBeforeProcessEnds() noexcept;
/// The atexit handler: the final flush (Session::finish with the CUPTI flush) and the control socket's
/// removal. Registered once, when recording starts.
void closeAtExit();
/// Takes SIGTERM, SIGINT and SIGHUP, each only where the program left it at its default action and the
/// configuration wants it (KCOUNT_SIGTERM, KCOUNT_SIGINT, KCOUNT_SIGHUP). Called once, when recording
/// starts.
void installTerminateHandler();

}  // namespace kc::inject
