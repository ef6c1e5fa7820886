// The exec family, interposed when the library is preloaded. exec replaces the process image without
// running atexit handlers: the records the session holds would be lost, and the new image (same pid) loads
// the library afresh and starts a session of its own. So the interposed exec functions close the log first
// (final flush with Stats and End, as at exit) and remove the control socket, then call the C library's
// function. Only when the exec can be expected to succeed (the file, or for the p variants a file found on
// PATH, exists and is executable): a call that fails at once, as programs that try several paths do, leaves
// recording on. If an exec that passed this check still fails, the process carries on unrecorded (the log is
// closed; one warning). A fork or vfork child's exec closes nothing (its parent's session is not its own).
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "collector/file_sink.h"
#include "inject/control.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/preload.h"
#include "inject/process_end.h"
#include "inject/session.h"
#include "inject/settings.h"

namespace kc::inject {
namespace {

// True if `file` would be found the way execvp looks for it: a path with a slash, else a PATH entry.
bool findsExecutable(const char* file, bool search_path) {
  if (file == nullptr || *file == '\0') return false;
  if (!search_path || std::strchr(file, '/') != nullptr) return ::access(file, X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/bin:/usr/bin";
  char candidate[PATH_MAX];
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    const int n = std::snprintf(candidate, sizeof(candidate), "%.*s%s%s", static_cast<int>(dir.size()), dir.data(),
                                dir.empty() ? "" : "/", file);
    if (n > 0 && static_cast<size_t>(n) < sizeof(candidate) && ::access(candidate, X_OK) == 0) return true;
    if (colon == std::string_view::npos) return false;
    dirs.remove_prefix(colon + 1);
  }
}

// Before an exec of `file` by this process: closes the log if the exec is expected to succeed.
// Returns true if it did (the session was recording here).
bool closeBeforeExec(const char* file, bool search_path) noexcept {
  try {
    Session& s = Session::get();
    const bool mine = getpid() == s.pid() && s.state() == SessionState::kActive;
    if (!mine && !ownsControlSocket()) return false;  // a fork or vfork child: touch nothing (no allocation)
    if (file != nullptr && !findsExecutable(file, search_path)) return false;
    finishBeforeProcessEnds();
    return mine;
  } catch (...) {
    return false;
  }
}

// The value of `key` ("NAME=") in `envp`, nullptr if absent.
const char* envValue(char* const envp[], const char* key) {
  const size_t n = std::strlen(key);
  for (char* const* e = envp; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, key, n) == 0) return *e + n;
  return nullptr;
}

// Under `kcount run`: before an exec of `file` that is expected to succeed, appends the note
// "exec PID kept|cleared FILE" (kept: `envp`'s LD_PRELOAD still names this library); the new image, if it
// loads the library, follows with "loaded PID preload", so `kcount run` can say that it did not (a
// program that clears LD_PRELOAD, a static one). Only where the new image would write to the same report.
// Also in a vfork child: no allocation, no lock; a fixed buffer and plain system calls.
bool noteExec(const char* file, char* const envp[], bool search_path) noexcept {
  const char* report = getSetting("KCOUNT_RUN_REPORT");
  if (report == nullptr || *report == '\0' || file == nullptr) return false;
  const char* next_report = envValue(envp, "KCOUNT_RUN_REPORT=");
  if (next_report == nullptr || std::strcmp(next_report, report) != 0) return false;
  if (!findsExecutable(file, search_path)) return false;
  const char* preload = envValue(envp, "LD_PRELOAD=");
  const bool kept = preload != nullptr && std::strstr(preload, libraryFileName()) != nullptr;
  char line[PATH_MAX + 64];
  const int n = std::snprintf(line, sizeof(line), "%cexec %d %s %s\n", kc::kFileSinkNote, static_cast<int>(getpid()),
                              kept ? "kept" : "cleared", file);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(line) || std::strchr(file, '\n') != nullptr) return false;
  const int fd = ::open(report, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool ok = ::write(fd, line, static_cast<size_t>(n)) == n;
  ::close(fd);
  return ok;
}

// After an exec noted by noteExec() (`noted`) failed: "execfail PID" (this image goes on).
void noteFailedExec(bool noted) noexcept {
  const char* report = getSetting("KCOUNT_RUN_REPORT");
  if (!noted || report == nullptr) return;
  const int saved_errno = errno;
  char line[64];
  const int n = std::snprintf(line, sizeof(line), "%cexecfail %d\n", kc::kFileSinkNote, static_cast<int>(getpid()));
  const int fd = ::open(report, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    if (n > 0) [[maybe_unused]] ssize_t w = ::write(fd, line, static_cast<size_t>(n));
    ::close(fd);
  }
  errno = saved_errno;
}

void afterFailedExec(bool closed, const char* file) noexcept {
  if (!closed) return;
  const int saved_errno = errno;
  try {
    KC_LOG(warn, "exec {} failed ({}): the log was closed before the exec; this process records nothing more",
           file != nullptr ? file : "(fd)", std::strerror(saved_errno));
  } catch (...) {
  }
  errno = saved_errno;
}

using ExecveFn = int (*)(const char*, char* const[], char* const[]);
using ExecvFn = int (*)(const char*, char* const[]);
using FexecveFn = int (*)(int, char* const[], char* const[]);

template <typename Fn>
Fn nextExec(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}
// The C library's functions, resolved at load (a vfork child should not enter the dynamic loader), or
// at the call if an exec comes before this library's initialization.
ExecveFn g_execve = nextExec<ExecveFn>("execve");
ExecvFn g_execv = nextExec<ExecvFn>("execv");
ExecvFn g_execvp = nextExec<ExecvFn>("execvp");
ExecveFn g_execvpe = nextExec<ExecveFn>("execvpe");
FexecveFn g_fexecve = nextExec<FexecveFn>("fexecve");

template <typename Fn>
Fn resolved(Fn* cached, const char* name) {
  if (*cached == nullptr) *cached = nextExec<Fn>(name);
  return *cached;
}

int callExecve(const char* path, char* const argv[], char* const envp[], bool search_path) {
  const bool noted = noteExec(path, envp, search_path);
  const bool closed = closeBeforeExec(path, search_path);
  const ExecveFn fn = search_path ? resolved(&g_execvpe, "execvpe") : resolved(&g_execve, "execve");
  int r = -1;
  if (fn != nullptr) {
    r = fn(path, argv, envp);
  } else {
    errno = ENOSYS;
  }
  noteFailedExec(noted);
  afterFailedExec(closed, path);
  return r;
}

int callExecv(const char* path, char* const argv[], bool search_path) {
  const bool noted = noteExec(path, environ, search_path);
  const bool closed = closeBeforeExec(path, search_path);
  const ExecvFn fn = search_path ? resolved(&g_execvp, "execvp") : resolved(&g_execv, "execv");
  int r = -1;
  if (fn != nullptr) {
    r = fn(path, argv);
  } else {
    errno = ENOSYS;
  }
  noteFailedExec(noted);
  afterFailedExec(closed, path);
  return r;
}

int callFexecve(int fd, char* const argv[], char* const envp[]) {
  const bool closed = closeBeforeExec(nullptr, false);
  const FexecveFn fn = resolved(&g_fexecve, "fexecve");
  int r = -1;
  if (fn != nullptr) {
    r = fn(fd, argv, envp);
  } else {
    errno = ENOSYS;
  }
  afterFailedExec(closed, nullptr);
  return r;
}

// execl-style lists: the number of arguments from `first` up to the terminating null pointer (not
// counted), and the copy of them into argv[0..n] (argv[n] null), consuming the null pointer from *ap.
size_t execlCount(const char* first, va_list* ap) {
  if (first == nullptr) return 0;
  va_list probe;
  va_copy(probe, *ap);
  size_t n = 1;
  while (va_arg(probe, char*) != nullptr) ++n;
  va_end(probe);
  return n;
}

void execlCopy(const char* first, va_list* ap, char** argv, size_t n) {
  argv[0] = const_cast<char*>(first);
  for (size_t i = 1; i < n; ++i) argv[i] = va_arg(*ap, char*);
  if (n > 0) (void)va_arg(*ap, char*);  // the terminating null pointer
  argv[n] = nullptr;
}

}  // namespace
}  // namespace kc::inject

// The exec family, interposed when the library is preloaded (see the file comment). Each returns what the C
// library's function returns (only on failure), with its errno. execl, execlp and execle collect their
// arguments on the stack (alloca: no allocation, as a vfork child may call them) and pass them on.
KC_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return kc::inject::callExecve(path, argv, envp, false);
}
KC_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return kc::inject::callExecve(file, argv, envp, true);
}
KC_EXPORT int execv(const char* path, char* const argv[]) { return kc::inject::callExecv(path, argv, false); }
KC_EXPORT int execvp(const char* file, char* const argv[]) { return kc::inject::callExecv(file, argv, true); }
KC_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) { return kc::inject::callFexecve(fd, argv, envp); }

// The argument list of an execl-style call, from `arg` to its null pointer, as `argv` (on this frame's stack:
// a macro, since alloca must run in the interposed function itself). Leaves `ap` after the null pointer.
#define KC_EXECL_ARGV(arg, ap, argv)                                              \
  const size_t argv##_n = kc::inject::execlCount(arg, &ap);                       \
  char** argv = static_cast<char**>(alloca((argv##_n + 1) * sizeof(char*)));      \
  kc::inject::execlCopy(arg, &ap, argv, argv##_n)

KC_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  KC_EXECL_ARGV(arg, ap, argv);
  va_end(ap);
  return kc::inject::callExecve(path, argv, environ, false);
}
KC_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  KC_EXECL_ARGV(arg, ap, argv);
  va_end(ap);
  return kc::inject::callExecve(file, argv, environ, true);
}
KC_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  KC_EXECL_ARGV(arg, ap, argv);
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return kc::inject::callExecve(path, argv, envp, false);
}
#undef KC_EXECL_ARGV
