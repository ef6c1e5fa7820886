// LD_PRELOAD entry: a constructor that makes NO CUDA or CUPTI call. It reads the configuration and
// points CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at this library, so the CUDA driver calls
// InitializeInjection inside cuInit and each NVTX3 user calls InitializeInjectionNvtx2. With a
// KCOUNT_TORCH_* switch set it also puts the Python helper's folder first on PYTHONPATH.
// Also here: kcount_recording(), the recording state for that helper.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "collector/file_sink.h"
#include "inject/config.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/session.h"

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
  const char* report = std::getenv("KCOUNT_RUN_REPORT");
  if (report == nullptr || *report == '\0') return;
  const int fd = ::open(report, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return;
  char line[64];
  const int n = std::snprintf(line, sizeof(line), "%cloaded %d %s\n", kFileSinkNote, static_cast<int>(getpid()),
                              by_preload ? "preload" : "injection");
  if (n > 0) [[maybe_unused]] ssize_t w = ::write(fd, line, static_cast<size_t>(n));
  ::close(fd);
}

__attribute__((constructor)) void kcountConstructor() {
  try {
    const std::string self = selfPath();
    const bool by_preload = !self.empty() && preloaded(self);
    noteLoaded(by_preload);
    if (!by_preload) return;  // dlopen()ed by CUDA or NVTX: nothing to set up
    Session& s = Session::get();  // reads KCOUNT_* and sets the log level
    markProblemsPrinted();  // programs this one exec()s with the same settings do not print them again
    if (s.state() == SessionState::kDisabled) return;
    pointAtSelf("CUDA_INJECTION64_PATH", self, "kernel launches and kernels");
    pointAtSelf("NVTX_INJECTION64_PATH", self, "NVTX ranges");
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
}  // namespace kc::inject

/// Whether NVTX ranges pushed now can be recorded, for the Python helper (python/kcount_torch), which
/// keeps its per-module hooks installed only while this is not 0:
///   1  a capture window is open (Session::recordingNow());
///   2  armed: a window opens without an operator: the session has not started yet and will record at
///      its start (KCOUNT_START=on, the default) or a capture range (KCOUNT_CAPTURE_RANGE) is armed;
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
        return s.triggerNameId() != 0 ? 2 : 0;
      default:
        return 0;
    }
  } catch (...) {
    return 0;
  }
}
