// LD_PRELOAD entry: a constructor that makes NO CUDA or CUPTI call. It reads the configuration and
// points CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at this library, so the CUDA driver calls
// InitializeInjection inside cuInit and each NVTX3 user calls InitializeInjectionNvtx2. With a
// KCOUNT_TORCH_* switch set it also puts the Python helper's folder first on PYTHONPATH.
// With KCOUNT_CONTROL=on (kcount run --paused) it also opens the control socket. Also here:
// kcount_recording(), the recording state for that helper, and the exec family, interposed so that the
// log is closed before the process image is replaced.
#include <alloca.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "collector/file_sink.h"
#include "inject/config.h"
#include "inject/control.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/session.h"
#include "inject/settings.h"

namespace kc::inject {
namespace {

std::string selfPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&selfPath), &info) == 0 || info.dli_fname == nullptr) return {};
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) != nullptr ? std::string(resolved) : std::string(info.dli_fname);
}

bool samePath(const char* a, const std::string& b) {
  char resolved[PATH_MAX];
  return realpath(a, resolved) != nullptr && b == resolved;
}

// True when this library was named in LD_PRELOAD (as opposed to being dlopen()ed by CUDA or NVTX).
bool preloaded(const std::string& self) {
  const char* v = std::getenv("LD_PRELOAD");
  if (v == nullptr) return false;
  std::string_view list(v);
  const std::string_view base = std::string_view(self).substr(self.rfind('/') + 1);
  return list.find(base) != std::string_view::npos;
}

void pointAtSelf(const char* var, const std::string& self, const char* what) {
  const char* current = std::getenv(var);
  if (current == nullptr || *current == '\0') {
    setenv(var, self.c_str(), 1);
  } else if (!samePath(current, self)) {
    KC_LOG(warn, "{} is already set to {}: kcount leaves it alone, so {} may be missed (that library, not "
                 "kcount, is what {} loads)", var, current, what, var);
  }
}

// The Python helper shipped with the library: <lib folder>/../share/kcount/python (install and build
// tree alike). "" if it has no sitecustomize.py.
std::string helperFolder(const std::string& self) {
  const size_t slash = self.rfind('/');
  if (slash == std::string::npos) return {};
  const std::string folder = self.substr(0, slash) + "/../share/kcount/python";
  char resolved[PATH_MAX];
  if (realpath(folder.c_str(), resolved) == nullptr) return {};
  struct stat st {};
  if (stat((std::string(resolved) + "/sitecustomize.py").c_str(), &st) != 0) return {};
  return resolved;
}

// Prepends `folder` to PYTHONPATH unless an entry of it already names that folder (kcount run sets it).
void prependPythonPath(const std::string& folder) {
  const char* current = std::getenv("PYTHONPATH");
  std::string_view rest = current != nullptr ? current : "";
  for (std::string_view list = rest; !list.empty();) {
    const size_t colon = list.find(':');
    const std::string entry(list.substr(0, colon));
    if (!entry.empty() && samePath(entry.c_str(), folder)) return;
    list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
  }
  const std::string value = rest.empty() ? folder : folder + ":" + std::string(rest);
  setenv("PYTHONPATH", value.c_str(), 1);
}

// Under `kcount run` (KCOUNT_RUN_REPORT set): appends a note that this process loaded the library and
// how, so that `kcount run` can say why no log was written (run.h, RunReport). One O_APPEND write.
void noteLoaded(bool by_preload) {
  const char* report = getSetting("KCOUNT_RUN_REPORT");
  if (report == nullptr || *report == '\0') return;
  noteRunReport(report, "loaded", by_preload ? "preload" : "injection");
}

void removeSocketAtExit() { removeControlSocket(); }

// Set by the constructor of a preloaded library: the process that loaded it (0 when CUDA or NVTX
// dlopen()ed it, or in a process that is not preloaded). noteIdleProcess() speaks only for that process.
std::atomic<int> g_preloaded_pid{0};
std::atomic<bool> g_entry_called{false};

// This library's file name ("libkcount.so"), set by the constructor: what an exec's LD_PRELOAD must name.
char g_self_name[128] = "libkcount.so";

void rememberName(const std::string& self) {
  const std::string name = self.substr(self.rfind('/') + 1);
  if (!name.empty() && name.size() < sizeof(g_self_name)) std::memcpy(g_self_name, name.c_str(), name.size() + 1);
}

__attribute__((constructor)) void kcountConstructor() {
  captureStderr();  // the stderr the process has now is where the library's messages go (log.h)
  try {
    const std::string self = selfPath();
    rememberName(self);
    const bool by_preload = !self.empty() && preloaded(self);
    noteLoaded(by_preload);
    if (!by_preload) return;  // dlopen()ed by CUDA or NVTX: nothing to set up
    g_preloaded_pid.store(getpid(), std::memory_order_relaxed);
    Session& s = Session::get();  // reads KCOUNT_* and sets the log level
    markProblemsPrinted();  // programs this one exec()s with the same settings do not print them again
    if (s.state() == SessionState::kDisabled) return;
    pointAtSelf("CUDA_INJECTION64_PATH", self, "kernel launches and kernels");
    pointAtSelf("NVTX_INJECTION64_PATH", self, "NVTX ranges");
    // KCOUNT_CONTROL=on (kcount run --paused): the socket exists from the start, so `kcount ctl` reaches
    // the process before its first CUDA or NVTX call. It costs one thread blocked in accept(); the session
    // stays dormant (no writer thread, no CUPTI) until recording starts. A fork child closes its copy of
    // the listening socket and has no control thread; the socket is removed at exit.
    if (s.config().control == "on" && startControlServer()) {
      pthread_atfork(nullptr, nullptr, &controlAfterFork);
      std::atexit(&removeSocketAtExit);
    }
    if (s.config().torch_helper) {
      const std::string folder = helperFolder(self);
      if (folder.empty())
        KC_LOG(warn, "KCOUNT_TORCH_* is set but the Python helper is not installed beside {} "
                     "(../share/kcount/python/sitecustomize.py): no torch ranges", self);
      else
        prependPythonPath(folder);
    }
  } catch (...) {
  }
}

// ---- exec -----------------------------------------------------------------------------------------
// exec replaces the process image without running atexit handlers: the records the session holds
// would be lost, and the new image (same pid) loads the library afresh and starts a session of its
// own. So the interposed exec functions close the log first (final flush with Stats and End, as at
// exit) and remove the control socket, then call the C library's function. Only when the exec can be
// expected to succeed (the file, or for the p variants a file found on PATH, exists and is executable):
// a call that fails at once, as programs that try several paths do, leaves recording on. If an exec that
// passed this check still fails, the process carries on unrecorded (the log is closed; one warning).
// A fork or vfork child's exec closes nothing (its parent's session is not its own).

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
  const bool kept = preload != nullptr && std::strstr(preload, g_self_name) != nullptr;
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

void noteEntryPointCalled() noexcept { g_entry_called.store(true, std::memory_order_relaxed); }

void noteIdleProcess() noexcept {
  try {
    // A vfork child shares this memory: it must not touch the flag, so the pid is compared first.
    const int pid = g_preloaded_pid.load(std::memory_order_relaxed);
    if (pid == 0 || pid != getpid() || g_entry_called.load(std::memory_order_relaxed)) return;
    if (g_preloaded_pid.exchange(0, std::memory_order_relaxed) == 0) return;  // once
    const char* report = getSetting("KCOUNT_RUN_REPORT");
    if (report == nullptr || *report == '\0' || Session::get().state() == SessionState::kDisabled) return;
    noteRunReport(report, "idle", "no CUDA or NVTX call");
  } catch (...) {
  }
}

// A preloaded process that exits normally (exit(), return from main) without a CUDA or NVTX call.
__attribute__((destructor)) void kcountDestructor() { noteIdleProcess(); }
}  // namespace kc::inject

// The exec family, interposed when the library is preloaded (see "exec" above). Each returns what the C
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

/// Whether NVTX ranges pushed now can be recorded, for the Python helper (python/kcount/torch), which
/// keeps its per-module hooks installed only while this is not 0:
///   1  a capture window is open (Session::recordingNow());
///   2  armed: a window opens without an operator: the session has not started yet, or is starting
///      right now on another thread (activated, first window not yet opened), and will record at its
///      start (KCOUNT_START=on, the default), or a capture range (KCOUNT_CAPTURE_RANGE) is armed;
///   0  otherwise: paused (KCOUNT_START=paused before `kcount ctl start`, or after a stop), log closed,
///      or kcount disabled.
/// Lock-free (atomic loads); any thread; never fails. Found with ctypes in the global symbol scope
/// (LD_PRELOAD) or through dlopen(RTLD_NOLOAD) of the injected path.
KC_EXPORT int kcount_recording(void) {
  using kc::inject::Session;
  using kc::inject::SessionState;
  if (Session::recordingNow()) return 1;
  try {
    const Session& s = Session::get();
    switch (s.state()) {
      case SessionState::kDormant:
        return !s.config().start_paused || !s.config().capture_range.empty() ? 2 : 0;
      case SessionState::kActive:
        // Between activate() and the first window (startRecording() on the thread that starts the
        // session) the answer stays 2: a 0 there made the helper remove its hooks for a whole poll period.
        // The gate is read again after startDone(): the window may have opened since the first read.
        if (s.triggerNameId() != 0) return 2;
        if (!kc::inject::startDone()) return !s.config().start_paused || !s.config().capture_range.empty() ? 2 : 0;
        return Session::recordingNow() ? 1 : 0;
      default:
        return 0;
    }
  } catch (...) {
    return 0;
  }
}
