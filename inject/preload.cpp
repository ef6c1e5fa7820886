// LD_PRELOAD entry: a constructor that makes NO CUDA or CUPTI call. It reads the configuration and
// points CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at this library, so the CUDA driver calls
// InitializeInjection inside cuInit and each NVTX3 user calls InitializeInjectionNvtx2.
#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

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

__attribute__((constructor)) void kcountConstructor() {
  try {
    const std::string self = selfPath();
    if (self.empty() || !preloaded(self)) return;  // dlopen()ed by CUDA or NVTX: nothing to set up
    Session& s = Session::get();  // reads KCOUNT_* and sets the log level
    if (s.state() == SessionState::kDisabled) return;
    pointAtSelf("CUDA_INJECTION64_PATH", self, "kernel launches and kernels");
    pointAtSelf("NVTX_INJECTION64_PATH", self, "NVTX ranges");
  } catch (...) {
  }
}

}  // namespace
}  // namespace kc::inject
