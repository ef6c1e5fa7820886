// The benchmark's CUPTI floor (bench/cupti_floor.cpp) must enable exactly kcount's launch callback ids
// (inject/callbacks.cpp), or "kcount above the floor" compares different CUPTI configurations. Loads
// the built libcupti_floor.so (which must load without CUPTI: it dlopen()s it only in
// InitializeInjection) and compares its list with kc::inject::launchApis(). No GPU needed.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <utility>

#include "inject/callbacks.h"

TEST_CASE("libcupti_floor.so enables the same launch callback ids as libkcount.so") {
  void* floor = dlopen(KC_CUPTI_FLOOR_LIB, RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(floor != nullptr, dlerror());
  CHECK(dlsym(floor, "InitializeInjection") != nullptr);
  using ListFn = const uint32_t* (*)(size_t*);
  void* symbol = dlsym(floor, "cuptiFloorLaunchCallbacks");
  REQUIRE(symbol != nullptr);
  auto list = reinterpret_cast<ListFn>(symbol);

  size_t floor_count = 0;
  const uint32_t* pairs = list(&floor_count);
  std::set<std::pair<uint32_t, uint32_t>> floor_ids;
  for (size_t i = 0; i < floor_count; ++i) floor_ids.emplace(pairs[2 * i], pairs[2 * i + 1]);

  size_t kcount_count = 0;
  const kc::inject::LaunchApi* apis = kc::inject::launchApis(&kcount_count);
  std::set<std::pair<uint32_t, uint32_t>> kcount_ids;
  for (size_t i = 0; i < kcount_count; ++i)
    kcount_ids.emplace(static_cast<uint32_t>(apis[i].domain), static_cast<uint32_t>(apis[i].cbid));

  CHECK(floor_ids.size() == floor_count);  // no duplicates
  CHECK(kcount_count > 0);
  CHECK(floor_ids == kcount_ids);
  for (const auto& id : kcount_ids)
    if (floor_ids.count(id) == 0) FAIL_CHECK("kcount enables domain " << id.first << " cbid " << id.second << ", the floor does not");
  for (const auto& id : floor_ids)
    if (kcount_ids.count(id) == 0) FAIL_CHECK("the floor enables domain " << id.first << " cbid " << id.second << ", kcount does not");
}
