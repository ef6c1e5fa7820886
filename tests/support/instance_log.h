// A synthetic trace log with many NVTX range instances and few distinct range paths, as a training loop
// with --torch-modules/--torch-ops gives (one range per module call): for the reader's memory test
// (tests/programs/instance_memory.cpp) and the reader benchmark (bench/reader_bench.cpp --ranges).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "collector/file_sink.h"
#include "collector/log_writer.h"

namespace kc::testing {

/// What writeInstanceLog() wrote.
struct InstanceLogInfo {
  uint64_t ranges = 0, launches = 0, kernels = 0, bytes = 0;
};

/// Writes a complete compact log to `path` (replaced): `steps` steps on one thread, each a range "step"
/// holding a range "inner" (2 range instances per step, 2 range paths); every `kernel_every` steps
/// (0: never) one kernel launch in "inner" and its kernel (2 distinct kernel names). Records are written
/// as the library's writer thread hands them over: per drain of 1,000 steps, the launches and ranges,
/// then the kernels. The steps are split into `windows` capture windows (Segment records, reasons "ctl"
/// -> "ctl", each after its window's records, as the library writes them); windows == 1 gives the one
/// window "start" -> "exit" of a log the library closed itself. Host clock: about 1 µs per step, times
/// jittered by a fixed pseudo-random sequence (the log compresses about as a recorded one does).
/// Returns false (message on stderr) if the file cannot be written.
inline bool writeInstanceLog(const std::string& path, uint64_t steps, uint64_t kernel_every, uint32_t windows,
                             InstanceLogInfo* info = nullptr) {
  std::remove(path.c_str());
  InstanceLogInfo out;
  {
    FileSink sink(path, 0600, UINT64_MAX, [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); });
    LogWriter w(&sink, LogEncoding::kCompact);
    w.writeMetadata("pid", "1");
    w.writeMetadata("command_line", "instance_log " + std::to_string(steps));
    w.writeString(1, "step");
    w.writeString(2, "inner");
    w.writeString(3, "cudaLaunchKernel");
    w.writeString(4, "void gemm_kernel<float>(float*, int)");
    w.writeString(5, "void elementwise_kernel<float>(float*, int)");
    w.writeString(6, windows == 1 ? "start" : "ctl");
    w.writeString(7, windows == 1 ? "exit" : "ctl");
    w.writeScope({1, 0, 1, 0});
    w.writeScope({2, 1, 2, 0});
    if (windows == 0) windows = 1;
    const uint64_t per_window = (steps + windows - 1) / windows;
    uint64_t host = 1'000'000'000ull, corr = 1;
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    auto jitter = [&rng](uint64_t range) {  // xorshift64: the same log on every run
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      return rng % range;
    };
    std::vector<LaunchBody> launches;
    std::vector<RangeBody> ranges;
    std::vector<KernelBody> kernels;
    auto put = [&](auto write) {
      write();
      if (w.chunkFull()) w.flush();
    };
    auto drain = [&] {
      for (const LaunchBody& l : launches) put([&] { w.writeLaunch(l); });
      for (const RangeBody& r : ranges) put([&] { w.writeRange(r); });
      for (const KernelBody& k : kernels) put([&] { w.writeKernel(k); });
      out.launches += launches.size();
      out.ranges += ranges.size();
      out.kernels += kernels.size();
      launches.clear();
      ranges.clear();
      kernels.clear();
    };
    uint32_t window = 0;
    SegmentBody seg{};
    seg.start_ns = host;
    for (uint64_t i = 0; i < steps; ++i) {
      const uint64_t step_begin = host;
      const uint64_t inner_begin = host + 50 + jitter(100);
      if (kernel_every != 0 && i % kernel_every == 0) {
        LaunchBody l{};
        l.correlation_id = corr++;
        l.enter_ns = host + 200;
        l.exit_ns = host + 400;
        l.scope_id = 2;
        l.thread_id = 100;
        l.api_id = 3;
        l.cbid = 211;
        l.domain = 1;
        launches.push_back(l);
        KernelBody k{};
        k.correlation_id = l.correlation_id;
        k.start_ns = host + 5000;
        k.end_ns = host + 5000 + 2000 + (i % 7) * 32;
        k.name_id = (i / kernel_every) % 2 ? 5 : 4;
        k.context_id = 1;
        k.stream_id = 7;
        k.grid[0] = k.grid[1] = k.grid[2] = 1;
        k.block[0] = 128;
        k.block[1] = k.block[2] = 1;
        kernels.push_back(k);
        if (seg.first_correlation_id == 0) seg.first_correlation_id = l.correlation_id;
        seg.last_correlation_id = l.correlation_id;
      }
      const uint64_t inner_end = host + 500 + jitter(200);
      ranges.push_back({inner_begin, inner_end, 2, 100, 100, 0});
      ranges.push_back({step_begin, inner_end + 50 + jitter(100), 1, 100, 100, 0});
      host += 900 + jitter(200);
      if ((i + 1) % 1000 == 0) drain();
      if ((i + 1) % per_window == 0 || i + 1 == steps) {
        drain();
        seg.stop_ns = host;
        seg.index = window++;
        seg.reason_id = 6;
        seg.end_reason_id = 7;
        w.writeSegment(seg);
        seg = SegmentBody{};
        seg.start_ns = host + 1;
      }
    }
    drain();
    StatsBody stats{};
    stats.launches = out.launches;
    stats.kernels = out.kernels;
    stats.ranges = out.ranges;
    w.writeStats(stats);
    w.writeEnd();
    if (!w.flush()) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return false;
    }
    out.bytes = w.bytesWritten();
  }
  if (info != nullptr) *info = out;
  return true;
}

}  // namespace kc::testing
