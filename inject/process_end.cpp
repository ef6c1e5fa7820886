#include "inject/process_end.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <utility>

#include "inject/control.h"
#include "inject/cupti_attach.h"
#include "inject/entry.h"
#include "inject/preload.h"
#include "inject/session.h"
#include "inject/thread_state.h"

namespace kc::inject {

namespace {

// SIGTERM, SIGINT and SIGHUP: each taken only when the program left it at its default action when
// recording started (a C program; Python leaves SIGTERM and SIGHUP there but has its own SIGINT handler by
// then), and never with KCOUNT_SIGTERM=0 / KCOUNT_SIGINT=0 / KCOUNT_SIGHUP=0. The handler asks the writer
// thread to close the log, waits for it (at most 3.5 s), then restores the default action and re-raises,
// so the process still ends by the signal (exit status 143 / 130 / 129), as it would have without kcount.
// SIGHUP is the terminal closing under a job started from it (or `kcount run` passing it on). A handler
// the program installs later replaces this one (sigaction), so the program's own behavior and exit code
// are kept. If such a handler
// saved this one and calls it (chaining), kcount closes the log and returns to it without re-raising:
// what happens next is the program's decision.
void onTerminate(int sig) {
  const int saved_errno = errno;
  Session& s = Session::get();
  struct sigaction current {};
  const bool chained = sigaction(sig, nullptr, &current) == 0 && current.sa_handler != &onTerminate;
  if (getpid() == s.pid() && s.state() == SessionState::kActive) {
    if (Session::recordingNow()) writeUnclosedRanges(/*from_signal_handler=*/true);
    s.noteEndSignal(sig);
    s.requestFinish(&flushActivityForExit);
    for (int i = 0; i < 3000 && s.state() == SessionState::kActive; ++i) {
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
    for (int i = 0; i < 500 && !s.closed(); ++i) {
      timespec ts{0, 1000000};
      nanosleep(&ts, nullptr);
    }
  }
  if (getpid() == s.pid()) removeControlSocket();
  if (chained) {
    errno = saved_errno;
    return;
  }
  signal(sig, SIG_DFL);
  errno = saved_errno;
  raise(sig);  // pending until this handler returns, then the default action ends the process
}

}  // namespace

void installTerminateHandler() {
  const Config& c = Session::get().config();
  for (const auto& [sig, wanted] :
       {std::pair{SIGTERM, c.sigterm}, std::pair{SIGINT, c.sigint}, std::pair{SIGHUP, c.sighup}}) {
    if (!wanted) continue;
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO))
      continue;
    struct sigaction sa {};
    sa.sa_handler = &onTerminate;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
  }
}

void closeAtExit() {
  Session::get().finish(&flushActivityForExit);
  removeControlSocket();
}

void finishBeforeProcessEnds() noexcept {
  try {
    Session& s = Session::get();
    if (s.state() == SessionState::kActive && getpid() == s.pid()) {
      const int saved_errno = errno;
      s.finish(&flushActivityForExit);
      errno = saved_errno;
    }
    removeControlSocket();  // only this process's own socket (a fork child's inherited one stays)
  } catch (...) {
  }
}

}  // namespace kc::inject

using namespace kc::inject;

/// _exit/_Exit interposed when the library is preloaded: os._exit() in Python and _exit() in C skip
/// atexit handlers, so the log is closed here first (only in the process that recorded: a fork or
/// vfork/posix_spawn child goes straight to the system call). Then the process exits with `status`.
[[noreturn]] static void closeThenExit(int status) {
  noteIdleProcess();
  finishBeforeProcessEnds();
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}
KC_EXPORT void _exit(int status) { closeThenExit(status); }
KC_EXPORT void _Exit(int status) { closeThenExit(status); }

// A program that ends itself by a signal left at its default action skips atexit handlers too. Python
// does that after an unhandled KeyboardInterrupt (Ctrl-C): it restores SIGINT's default action and calls
// kill(getpid(), SIGINT), so that its parent sees "killed by SIGINT" (bpo-1054041). kill() and raise()
// are interposed when the library is preloaded: for SIGINT, SIGTERM or SIGHUP sent by the process to
// itself (its pid, or its process group) while that signal is at its default action, the log is closed
// first; then the signal is sent as asked (system call), with kill()'s result and errno.
namespace {
bool endsThisProcess(pid_t pid, int sig) {
  if (sig != SIGINT && sig != SIGTERM && sig != SIGHUP) return false;
  if (pid != getpid() && pid != 0 && pid != -getpgrp()) return false;
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_DFL &&
         !(current.sa_flags & SA_SIGINFO);
}

void closeBeforeSignal(pid_t pid, int sig) {
  if (!endsThisProcess(pid, sig)) return;
  Session& s = Session::get();
  if (s.state() == SessionState::kActive && getpid() == s.pid()) s.noteEndSignal(sig);
  finishBeforeProcessEnds();
}
}  // namespace

KC_EXPORT int kill(pid_t pid, int sig) {
  closeBeforeSignal(pid, sig);
  return static_cast<int>(syscall(SYS_kill, pid, sig));
}

KC_EXPORT int raise(int sig) {
  closeBeforeSignal(getpid(), sig);
  return static_cast<int>(syscall(SYS_tgkill, getpid(), static_cast<pid_t>(syscall(SYS_gettid)), sig)) == 0 ? 0 : -1;
}
