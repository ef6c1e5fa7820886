// The mark of the library's exported entry points (exports.map lists them): InitializeInjection,
// InitializeInjectionNvtx2, kcount_recording and the interposed C library and CUPTI functions.
#pragma once

#define KC_EXPORT extern "C" __attribute__((visibility("default")))
