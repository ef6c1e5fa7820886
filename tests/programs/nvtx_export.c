/* The NVTX3 API as an ordinary shared library (NVTX_EXPORT_API: nvtxRangePushA, nvtxRangePop, ...
   exported unmangled), like libnvToolsExt.so.1. The Python helper's tests use it as the NVTX backend
   of a PyTorch built without CUDA (KCOUNT_TORCH_NVTX_LIB), so module ranges reach libkcount.so through
   NVTX_INJECTION64_PATH as PyTorch's own NVTX does on a GPU machine. */
#define NVTX_EXPORT_API
#include <nvtx3/nvToolsExt.h>
