// Variants of the launch hot path (inject/launch_path.h) for the overhead benchmark: built into
// libkcount_bench_cbN.so in place of inject/launch_callbacks.cpp (bench/CMakeLists.txt), never into
// libkcount.so. KCOUNT_BENCH_LAUNCH_PATH selects one:
//   0 the launch callbacks return at once (kcount's CUPTI subscription and activity, none of its launch work);
//   1 the open-launch bookkeeping only (no timestamps, no record, no count of kcount's own callbacks);
//   2 everything but the record (timestamps taken);
//   4 everything, each launch written in the two-slot HostEvent form (64 bytes) instead of one 32-byte slot;
//   5 everything, the slot written with two non-temporal 16-byte stores and an sfence before it is published.
#include <emmintrin.h>

#include "inject/callbacks.h"
#include "inject/launch_path.h"

#ifndef KCOUNT_BENCH_LAUNCH_PATH
#error "bench/launch_path_variants.cpp is built with KCOUNT_BENCH_LAUNCH_PATH set (bench/CMakeLists.txt)"
#endif

namespace kc::inject {
namespace {

using launch_path::FullPath;
using launch_path::Stop;

struct BookkeepingOnly : FullPath {
  static constexpr Stop kStop = Stop::kAfterOpenLaunches;
  static constexpr bool kTimestamps = false;
  static constexpr bool kSelfCost = false;
};

struct NoRecord : FullPath {
  static constexpr Stop kStop = Stop::kBeforeRecord;
};

struct WideRecord : FullPath {
  static constexpr bool kWideRecord = true;
};

struct NonTemporalSlot : FullPath {
  // No read for ownership of a line the writer thread read last; fenced before commit()'s release stores
  // publish the slot.
  static void writeSlot(LaunchSlot* e, const OpenLaunch& l, uint8_t slot_flags, uint32_t duration, uint32_t api_id,
                        uint32_t kernel_name) {
    const uint64_t w0 = uint64_t{LaunchSlot::kTagLaunch} | uint64_t{slot_flags} << 8 |
                        uint64_t{static_cast<uint16_t>(l.cbid)} << 16 |
                        uint64_t{static_cast<uint32_t>(l.correlation_id)} << 32;
    const uint64_t w2 = uint64_t{duration} | uint64_t{l.scope_id} << 32;
    const uint64_t w3 = uint64_t{api_id} | uint64_t{kernel_name} << 32;
    auto* out = reinterpret_cast<__m128i*>(e);
    _mm_stream_si128(out, _mm_set_epi64x(static_cast<long long>(l.enter_ticks), static_cast<long long>(w0)));
    _mm_stream_si128(out + 1, _mm_set_epi64x(static_cast<long long>(w3), static_cast<long long>(w2)));
    _mm_sfence();
  }
};

}  // namespace

void onLaunchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept {
#if KCOUNT_BENCH_LAUNCH_PATH == 0
  (void)domain, (void)cbid, (void)data;  // kcount's subscription, none of its launch work
#elif KCOUNT_BENCH_LAUNCH_PATH == 1
  launch_path::onLaunch<BookkeepingOnly>(domain, cbid, data);
#elif KCOUNT_BENCH_LAUNCH_PATH == 2
  launch_path::onLaunch<NoRecord>(domain, cbid, data);
#elif KCOUNT_BENCH_LAUNCH_PATH == 4
  launch_path::onLaunch<WideRecord>(domain, cbid, data);
#elif KCOUNT_BENCH_LAUNCH_PATH == 5
  launch_path::onLaunch<NonTemporalSlot>(domain, cbid, data);
#else
#error "KCOUNT_BENCH_LAUNCH_PATH must be 0, 1, 2, 4 or 5"
#endif
}

}  // namespace kc::inject
