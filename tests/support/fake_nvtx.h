// A fake NVTX3 client library for tests of the injected library's NVTX handlers (no GPU, no
// libnvToolsExt): the export table and per-module function tables laid out as nvtx3/nvtxDetail/
// nvtxImpl.h lays them out, handed to InitializeInjectionNvtx2 as a real NVTX3 client would, plus
// typed calls through the slots the library filled in. Header-only; one copy per test executable.
#pragma once

#include <nvtx3/nvToolsExt.h>

extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t);

namespace kc::test {

inline NvtxFunctionPointer g_core_slots[NVTX_CBID_CORE_SIZE + 1];
inline NvtxFunctionPointer* g_core[NVTX_CBID_CORE_SIZE + 1];
inline NvtxFunctionPointer g_core2_slots[NVTX_CBID_CORE2_SIZE + 1];
inline NvtxFunctionPointer* g_core2[NVTX_CBID_CORE2_SIZE + 1];

inline int NVTX_API fakeGetModuleFunctionTable(NvtxCallbackModule module, NvtxFunctionTable* out,
                                               unsigned int* size) {
  if (module == NVTX_CB_MODULE_CORE) {
    *out = g_core;
    *size = NVTX_CBID_CORE_SIZE;
    return 1;
  }
  if (module == NVTX_CB_MODULE_CORE2) {
    *out = g_core2;
    *size = NVTX_CBID_CORE2_SIZE;
    return 1;
  }
  return 0;
}
inline const NvtxExportTableCallbacks g_fake_callbacks{sizeof(NvtxExportTableCallbacks),
                                                       &fakeGetModuleFunctionTable};
inline const void* NVTX_API fakeGetExportTable(uint32_t id) {
  return id == NVTX_ETID_CALLBACKS ? &g_fake_callbacks : nullptr;
}

/// Points the tables at their slots and calls the library's InitializeInjectionNvtx2 as an NVTX3 client
/// does. Returns its result (1 = the library took the slots). May be called again: a second library
/// embedding NVTX3 initializes again.
inline int installFakeNvtx() {
  for (unsigned i = 0; i <= NVTX_CBID_CORE_SIZE; ++i) g_core[i] = &g_core_slots[i];
  for (unsigned i = 0; i <= NVTX_CBID_CORE2_SIZE; ++i) g_core2[i] = &g_core2_slots[i];
  return InitializeInjectionNvtx2(&fakeGetExportTable);
}

/// Calls through the slots (valid after installFakeNvtx() returned 1).
inline int pushA(const char* m) {
  return reinterpret_cast<nvtxRangePushA_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangePushA])(m);
}
inline int pop() { return reinterpret_cast<nvtxRangePop_impl_fntype>(g_core_slots[NVTX_CBID_CORE_RangePop])(); }
inline nvtxDomainHandle_t domainCreate(const char* n) {
  return reinterpret_cast<nvtxDomainCreateA_impl_fntype>(g_core2_slots[NVTX_CBID_CORE2_DomainCreateA])(n);
}
inline nvtxStringHandle_t registerString(nvtxDomainHandle_t d, const char* s) {
  return reinterpret_cast<nvtxDomainRegisterStringA_impl_fntype>(
      g_core2_slots[NVTX_CBID_CORE2_DomainRegisterStringA])(d, s);
}
inline int domainPush(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return reinterpret_cast<nvtxDomainRangePushEx_impl_fntype>(g_core2_slots[NVTX_CBID_CORE2_DomainRangePushEx])(d, a);
}
inline int domainPop(nvtxDomainHandle_t d) {
  return reinterpret_cast<nvtxDomainRangePop_impl_fntype>(g_core2_slots[NVTX_CBID_CORE2_DomainRangePop])(d);
}

}  // namespace kc::test
