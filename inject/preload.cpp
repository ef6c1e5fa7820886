// LD_PRELOAD entry: a constructor that makes NO CUDA or CUPTI call. It reads the configuration and
// points CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at this library, so the CUDA driver calls
// InitializeInjection inside cuInit and each NVTX3 user calls InitializeInjectionNvtx2. With a
// KCOUNT_TORCH_* switch set it also puts the Python helper's folder first on PYTHONPATH.
// With KCOUNT_CONTROL=on (kcount run --paused) it also opens the control socket. Also here:
// kcount_recording(), the recording state for that helper, and the notes for `kcount run`'s report.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "inject/config.h"
#include "inject/control.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/preload.h"
#include "inject/recording.h"
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

}  // namespace

const char* libraryFileName() noexcept { return g_self_name; }

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
