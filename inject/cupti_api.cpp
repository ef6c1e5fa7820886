#include "inject/cupti_api.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <string_view>
#include <vector>

namespace kc::inject {

namespace {

constexpr const char* kSoname = "libcupti.so.13";

std::string mappedPath(void* handle) {
  link_map* lm = nullptr;
  if (handle != nullptr && dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr && lm->l_name)
    return lm->l_name;
  return {};
}

// Paths of every object loaded in the process.
std::vector<std::string> loadedObjects() {
  std::vector<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        return 0;
      },
      &out);
  return out;
}

std::string dirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool loadWithDlopen(CuptiApi& api, const std::string& configured_path, std::string* error) {
  return api.load(configured_path, error);
}

CuptiLoader g_loader = &loadWithDlopen;

}  // namespace

CuptiApi& cupti() noexcept {
  static CuptiApi& api = *new CuptiApi();  // immortal: callbacks may arrive during exit
  return api;
}

void setCuptiLoader(CuptiLoader loader) noexcept { g_loader = loader != nullptr ? loader : &loadWithDlopen; }

bool loadCupti(const std::string& configured_path, std::string* error) {
  return g_loader(cupti(), configured_path, error);
}

bool CuptiApi::load(const std::string& configured_path, std::string* error) {
  // 1. A copy already in the process (PyTorch loads the CUDA wheel's libcupti with Kineto).
  for (const auto& obj : loadedObjects()) {
    if (obj.find(kSoname) != std::string::npos) {
      handle = dlopen(obj.c_str(), RTLD_NOW | RTLD_NOLOAD);
      if (handle != nullptr) {
        how = "already loaded in the process";
        break;
      }
    }
  }
  // 2..5: candidates in order.
  std::vector<std::pair<std::string, std::string>> candidates;
  if (!configured_path.empty()) candidates.emplace_back(configured_path, "KCOUNT_CUPTI_PATH");
  for (const auto& obj : loadedObjects()) {
    std::string_view o(obj);
    const size_t at = o.find("/site-packages/nvidia/");
    if (at != std::string_view::npos) {
      const std::string root(o.substr(0, at + std::string_view("/site-packages/nvidia/").size()));
      candidates.emplace_back(root + "cu13/lib/" + kSoname, "CUDA wheel next to " + obj);
      candidates.emplace_back(root + "cuda_cupti/lib/" + kSoname, "CUDA wheel next to " + obj);
    }
    if (o.find("libcudart.so.13") != std::string_view::npos)
      candidates.emplace_back(dirOf(obj) + "/" + kSoname, "next to " + obj);
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
      candidates.emplace_back(std::string(v) + "/lib64/" + kSoname, var);
      candidates.emplace_back(std::string(v) + "/extras/CUPTI/lib64/" + kSoname, var);
    }
  }
  for (const char* root : {"/usr/local/cuda"}) {
    candidates.emplace_back(std::string(root) + "/lib64/" + kSoname, "CUDA toolkit");
    candidates.emplace_back(std::string(root) + "/extras/CUPTI/lib64/" + kSoname, "CUDA toolkit");
    candidates.emplace_back(std::string(root) + "/targets/x86_64-linux/lib/" + kSoname, "CUDA toolkit");
  }
  candidates.emplace_back(kSoname, "loader search path");

  std::string tried;
  for (size_t i = 0; handle == nullptr && i < candidates.size(); ++i) {
    handle = dlopen(candidates[i].first.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      how = candidates[i].second;
    } else {
      const char* e = dlerror();
      if (i == 0 || candidates[i].second != candidates[i - 1].second || !configured_path.empty())
        tried += "\n  " + candidates[i].first + ": " + (e ? e : "not found");
    }
  }
  if (handle == nullptr) {
    *error = "no libcupti.so.13 found (set KCOUNT_CUPTI_PATH); tried:" + tried;
    return false;
  }
  path = mappedPath(handle);

  bool ok = true;
  std::string missing;
  auto need = [&](auto& fn, const char* name, bool required = true) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    if (fn == nullptr && required) {
      ok = false;
      missing += std::string(" ") + name;
    }
  };
  need(getVersion, "cuptiGetVersion");
  need(getResultString, "cuptiGetResultString");
  need(subscribe, "cuptiSubscribe");
  need(unsubscribe, "cuptiUnsubscribe");
  need(enableCallback, "cuptiEnableCallback");
  need(enableDomain, "cuptiEnableDomain");
  need(activityEnable, "cuptiActivityEnable");
  need(activityDisable, "cuptiActivityDisable");
  need(activityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
  need(activityFlushAll, "cuptiActivityFlushAll");
  need(activityGetNextRecord, "cuptiActivityGetNextRecord");
  need(activityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
  need(activityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", false);
  need(finalize, "cuptiFinalize", false);
  need(getCallbackName, "cuptiGetCallbackName");
  need(getGraphNodeId, "cuptiGetGraphNodeId");
  need(getGraphId, "cuptiGetGraphId");
  need(getGraphExecId, "cuptiGetGraphExecId", false);
  if (!ok) {
    *error = path + " lacks:" + missing;
    return false;
  }
  if (getVersion(&version) != CUPTI_SUCCESS) version = 0;
  // Activity record layouts (CUpti_ActivityKernel10) are those of the headers kcount was built with.
  if (version < CUPTI_API_VERSION / 10000 * 10000) {
    *error = path + " has CUPTI API version " + std::to_string(version) + ", kcount needs " +
             std::to_string(CUPTI_API_VERSION / 10000 * 10000) + " or newer (CUDA 13)";
    return false;
  }
  return true;
}

std::string CuptiApi::describe(CUptiResult r) const {
  const char* s = nullptr;
  if (getResultString != nullptr) getResultString(r, &s);
  return std::string(s != nullptr ? s : "CUPTI_ERROR") + " (code " + std::to_string(static_cast<int>(r)) + ")";
}

}  // namespace kc::inject
