#include "inject/cuda_driver.h"

#include <dlfcn.h>

#include "inject/session.h"

namespace kc::inject {

namespace {
using CuCtxSynchronize = int (*)();
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuCtxGetCurrent = int (*)(void**);
using CuCtxPushCurrent = int (*)(void*);
using CuCtxPopCurrent = int (*)(void**);

void* libcuda() { return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); }
}  // namespace

void* cudaDriverSymbol(const char* name) noexcept {
  void* cuda = libcuda();
  return cuda != nullptr ? dlsym(cuda, name) : nullptr;
}

std::string cudaDriverVersion() noexcept {
  try {
    if (void* cuda = libcuda()) {
      int v = 0;
      auto fn = reinterpret_cast<CuDriverGetVersion>(dlsym(cuda, "cuDriverGetVersion"));
      if (fn != nullptr && fn(&v) == 0) return std::to_string(v);
    }
  } catch (...) {
  }
  return {};
}

void recordDeviceMetadata(Session& session) noexcept {
  void* cuda = libcuda();
  if (cuda == nullptr) return;
  auto count_fn = reinterpret_cast<CuDeviceGetCount>(dlsym(cuda, "cuDeviceGetCount"));
  auto get_fn = reinterpret_cast<CuDeviceGet>(dlsym(cuda, "cuDeviceGet"));
  auto name_fn = reinterpret_cast<CuDeviceGetName>(dlsym(cuda, "cuDeviceGetName"));
  int n = 0;
  if (count_fn == nullptr || get_fn == nullptr || name_fn == nullptr || count_fn(&n) != 0) return;
  try {
    for (int i = 0; i < n && i < 64; ++i) {
      int dev = 0;
      char name[256] = {};
      if (get_fn(&dev, i) == 0 && name_fn(name, sizeof(name) - 1, dev) == 0)
        session.addMetadata("gpu." + std::to_string(i), name);
    }
  } catch (...) {
  }
}

void synchronizeCurrentContext() noexcept {
  if (void* cuda = libcuda()) {
    if (auto sync = reinterpret_cast<CuCtxSynchronize>(dlsym(cuda, "cuCtxSynchronize"))) sync();
  }
}

void waitForQueuedWork(const void* fallback) noexcept {
  void* cuda = libcuda();
  if (cuda == nullptr) return;
  auto get_current = reinterpret_cast<CuCtxGetCurrent>(dlsym(cuda, "cuCtxGetCurrent"));
  auto sync = reinterpret_cast<CuCtxSynchronize>(dlsym(cuda, "cuCtxSynchronize"));
  auto push = reinterpret_cast<CuCtxPushCurrent>(dlsym(cuda, "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<CuCtxPopCurrent>(dlsym(cuda, "cuCtxPopCurrent_v2"));
  if (get_current == nullptr || sync == nullptr) return;
  void* current = nullptr;
  if (get_current(&current) == 0 && current != nullptr) {
    sync();
    return;
  }
  void* ctx = const_cast<void*>(fallback);
  if (ctx == nullptr || push == nullptr || pop == nullptr || push(ctx) != 0) return;
  sync();
  void* popped = nullptr;
  pop(&popped);
}

}  // namespace kc::inject
