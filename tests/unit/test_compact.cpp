// Format 1.2: compact batches (types 16-18) in packed (zstd) chunks. Round trip of every field with
// extreme values, damage inside packed chunks, and the streaming join against summarize().
#include <doctest/doctest.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/compact.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "collector/stream_summary.h"
#include "tests/support/records.h"

namespace {

using kc::ReadIssue;
using Bytes = std::vector<uint8_t>;

bool hasIssue(const kc::LogData& d, ReadIssue::Severity sev, const std::string& text) {
  for (const auto& i : d.issues)
    if (i.severity == sev && i.message.find(text) != std::string::npos) return true;
  return false;
}

template <typename T>
bool sameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

/// Values at the edges of each field's range, and ordinary ones.
uint64_t pick64(std::mt19937_64& rng) {
  static const uint64_t edges[] = {0, 1, 2, 127, 128, 16383, 16384, UINT32_MAX, uint64_t{UINT32_MAX} + 1,
                                   INT64_MAX, uint64_t{INT64_MAX} + 1, UINT64_MAX - 1, UINT64_MAX};
  switch (rng() % 4) {
    case 0: return edges[rng() % std::size(edges)];
    case 1: return rng();
    default: return 1'000'000'000'000ull + rng() % 100000;  // a plausible clock value
  }
}
uint32_t pick32(std::mt19937_64& rng) {
  static const uint32_t edges[] = {0, 1, 127, 128, 65535, 0x7fffffffu, 0x80000000u, UINT32_MAX};
  return rng() % 3 == 0 ? edges[rng() % std::size(edges)] : static_cast<uint32_t>(rng() % 50);
}

kc::LaunchBody randomLaunch(std::mt19937_64& rng, uint64_t corr) {
  kc::LaunchBody l{};
  l.correlation_id = rng() % 5 == 0 ? pick64(rng) : corr;
  l.enter_ns = pick64(rng);
  l.exit_ns = rng() % 4 == 0 ? pick64(rng) : l.enter_ns + rng() % 10000;  // sometimes before enter
  l.scope_id = pick32(rng);
  l.thread_id = rng() % 3 == 0 ? pick32(rng) : 4242;
  l.api_id = pick32(rng);
  l.cbid = rng() % 2 ? 211 : pick32(rng);
  l.domain = static_cast<uint8_t>(rng());
  l.is_graph_launch = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : 0);
  l.flags = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : 0);
  if (rng() % 7 == 0)
    for (auto& b : l.reserved) b = static_cast<uint8_t>(rng());
  return l;
}

kc::KernelBody randomKernel(std::mt19937_64& rng, uint64_t corr) {
  kc::KernelBody k{};
  k.correlation_id = rng() % 5 == 0 ? pick64(rng) : corr;
  k.start_ns = pick64(rng);
  k.end_ns = rng() % 4 == 0 ? pick64(rng) : k.start_ns + rng() % 100000;
  k.graph_node_id = rng() % 3 == 0 ? pick64(rng) : 0;
  k.name_id = pick32(rng);
  k.device_id = rng() % 4 == 0 ? pick32(rng) : 0;
  k.context_id = rng() % 4 == 0 ? pick32(rng) : 1;
  k.stream_id = rng() % 4 == 0 ? pick32(rng) : 7;
  for (auto& g : k.grid) g = rng() % 3 == 0 ? static_cast<int32_t>(pick32(rng)) : 128;
  for (auto& b : k.block) b = rng() % 3 == 0 ? std::numeric_limits<int32_t>::min() + static_cast<int32_t>(rng() % 3) : 256;
  k.graph_id = rng() % 3 == 0 ? pick32(rng) : 0;
  k.shared_bytes = rng() % 3 == 0 ? pick32(rng) : 0;
  for (auto& c : k.cluster) c = rng() % 5 == 0 ? pick32(rng) : 0;
  k.registers = rng() % 3 == 0 ? pick32(rng) : 32;
  return k;
}

kc::RangeBody randomRange(std::mt19937_64& rng) {
  kc::RangeBody r{};
  r.begin_ns = pick64(rng);
  r.end_ns = rng() % 4 == 0 ? pick64(rng) : r.begin_ns + rng() % 1000000;
  r.scope_id = pick32(rng);
  r.thread_id = rng() % 3 == 0 ? pick32(rng) : 4242;
  r.end_thread_id = rng() % 3 == 0 ? pick32(rng) : r.thread_id;
  r.flags = rng() % 3 == 0 ? pick32(rng) : 0;
  return r;
}

/// A training-like log: strings, scopes, a loop of launches and their kernels, ranges, graph replays
/// (one launch, several kernels), memory operations; kernels of a drain written after its launches.
Bytes trainingLog(kc::LogEncoding enc, int steps, bool kernels_first_sometimes = false) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, enc);
  w.writeMetadata("pid", "77");
  const char* names[] = {"", "step", "fwd", "bwd", "gemm_a", "gemm_b", "relu", "cudaLaunchKernel", "cudaGraphLaunch",
                         "cudaMemcpyAsync"};
  for (uint32_t i = 1; i < std::size(names); ++i) w.writeString(i, names[i]);
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  w.writeScope({3, 1, 3, 0});
  w.writeGraphNode({900, 0, 0, 5, 3, 1, 0});
  w.writeGraphNode({901, 900, 0, 6, 0, 1, 0});
  uint64_t corr = 1, t = 1'000'000'000;
  std::mt19937_64 rng(7);
  for (int s = 0; s < steps; ++s) {
    std::vector<kc::LaunchBody> ls;
    std::vector<kc::KernelBody> ks;
    const uint64_t step_begin = t;
    for (int i = 0; i < 6; ++i) {
      kc::LaunchBody l{};
      l.correlation_id = corr;
      l.enter_ns = t += 2000 + rng() % 3000;
      l.exit_ns = t += 3000 + rng() % 500;
      l.scope_id = i < 3 ? 2 : 3;
      l.thread_id = i == 5 ? 11 : 10;
      l.api_id = 7;
      l.cbid = 211;
      l.domain = 1;
      ls.push_back(l);
      kc::KernelBody k{};
      k.correlation_id = corr++;
      k.start_ns = t + 1000 + rng() % 100;
      k.end_ns = k.start_ns + 20000 + rng() % 2000;
      k.name_id = 4 + i % 3;
      k.grid[0] = 132 * (1 + i % 3);
      k.block[0] = 128;
      k.stream_id = 7;
      k.context_id = 1;
      k.registers = 90;
      ks.push_back(k);
    }
    if (s % 4 == 0) {  // a graph replay: one launch, three kernels from nodes 901.. of graph 6
      kc::LaunchBody g = ls.back();
      g.correlation_id = corr;
      g.is_graph_launch = 1;
      g.api_id = 8;
      g.cbid = 311;
      ls.push_back(g);
      for (int n = 0; n < 3; ++n) {
        kc::KernelBody k = ks.back();
        k.correlation_id = corr;
        k.graph_id = 6;
        k.graph_node_id = n == 0 ? 901 : 950 + n;
        ks.push_back(k);
      }
      ++corr;
    }
    if (s % 5 == 0) {  // a memcpy call and its operation
      kc::LaunchBody m = ls.back();
      m.correlation_id = corr;
      m.is_graph_launch = 0;
      m.flags = kc::kLaunchMemOp;
      m.api_id = 9;
      ls.push_back(m);
      w.writeMemOp({corr, t, t + 500, 4096, 0, 7, 1, 1, {}});
      ++corr;
    }
    if (s % 7 == 3) ++corr;  // a correlation id used by another API call
    if (s % 11 == 5) {      // a launch whose kernel was lost
      kc::LaunchBody l = ls.front();
      l.correlation_id = corr++;
      ls.push_back(l);
    }
    const bool kernels_first = kernels_first_sometimes && s % 3 == 1;
    if (kernels_first)
      for (const auto& k : ks) w.writeKernel(k);
    for (const auto& l : ls) w.writeLaunch(l);
    if (!kernels_first)
      for (const auto& k : ks) w.writeKernel(k);
    w.writeRange({step_begin + 10, t - 10, 2, 10, 10, 0});
    w.writeRange({step_begin + 5, t - 5, 3, 10, 10, 0});
    w.writeRange({step_begin, t, 1, 10, 10, 0});
    if (w.chunkFull() || s % 200 == 199) w.flush();
  }
  kc::KernelBody orphan{};
  orphan.correlation_id = 1u << 30;  // matches no launch
  orphan.name_id = 6;
  orphan.end_ns = 5;
  w.writeKernel(orphan);
  w.writeStats(kc::StatsBody{});
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

void checkSameSummary(const kc::Summary& a, const kc::Summary& b) {
  CHECK(a.launches == b.launches);
  CHECK(a.kernels == b.kernels);
  CHECK(a.unmatched_kernels == b.unmatched_kernels);
  CHECK(a.launches_without_kernel == b.launches_without_kernel);
  CHECK(a.captured_launches == b.captured_launches);
  CHECK(a.mem_ops == b.mem_ops);
  CHECK(a.unmatched_mem_ops == b.unmatched_mem_ops);
  CHECK(a.kernel_gpu_ns == b.kernel_gpu_ns);
  CHECK(a.children_order == b.children_order);
  CHECK(a.children == b.children);
  REQUIRE(a.exclusive.size() == b.exclusive.size());
  REQUIRE(a.inclusive.size() == b.inclusive.size());
  auto same = [](const kc::RangeStats& x, const kc::RangeStats& y) {
    CAPTURE(x.scope_id);
    CHECK(x.scope_id == y.scope_id);
    CHECK(x.instances == y.instances);
    CHECK(x.cpu_ns == y.cpu_ns);
    CHECK(x.launches == y.launches);
    CHECK(x.graph_launches == y.graph_launches);
    CHECK(x.launch_api_ns == y.launch_api_ns);
    CHECK(x.kernels == y.kernels);
    CHECK(x.gpu_ns == y.gpu_ns);
    CHECK(x.captured_launches == y.captured_launches);
    CHECK(x.memcpy_count == y.memcpy_count);
    CHECK(x.memcpy_bytes == y.memcpy_bytes);
    CHECK(x.memcpy_ns == y.memcpy_ns);
    CHECK(x.memset_count == y.memset_count);
    CHECK(x.memset_ns == y.memset_ns);
    REQUIRE(x.by_kernel.size() == y.by_kernel.size());
    for (auto i = x.by_kernel.begin(), j = y.by_kernel.begin(); i != x.by_kernel.end(); ++i, ++j) {
      CHECK(i->first == j->first);
      CHECK(i->second.count == j->second.count);
      CHECK(i->second.gpu_ns == j->second.gpu_ns);
    }
  };
  for (size_t i = 0; i < a.exclusive.size(); ++i) same(a.exclusive[i], b.exclusive[i]);
  for (size_t i = 0; i < a.inclusive.size(); ++i) same(a.inclusive[i], b.inclusive[i]);
  REQUIRE(a.unmatched_by_kernel.size() == b.unmatched_by_kernel.size());
  for (auto i = a.unmatched_by_kernel.begin(), j = b.unmatched_by_kernel.begin(); i != a.unmatched_by_kernel.end();
       ++i, ++j) {
    CHECK(i->first == j->first);
    CHECK(i->second.count == j->second.count);
    CHECK(i->second.gpu_ns == j->second.gpu_ns);
  }
  CHECK(a.kernel_shapes.size() == b.kernel_shapes.size());
  for (const auto& [name, shape] : a.kernel_shapes) {
    REQUIRE(b.kernel_shapes.count(name) == 1);
    CHECK(std::equal(std::begin(shape.grid), std::end(shape.grid), std::begin(b.kernel_shapes.at(name).grid)));
    CHECK(std::equal(std::begin(shape.block), std::end(shape.block), std::begin(b.kernel_shapes.at(name).block)));
    CHECK(shape.grids.size() == b.kernel_shapes.at(name).grids.size());
    CHECK(shape.blocks.size() == b.kernel_shapes.at(name).blocks.size());
  }
}

/// A file header and one packed chunk holding `stored` with the given header fields, checksum correct.
Bytes packedLog(const Bytes& stored, uint32_t payload_bytes, uint8_t codec, uint32_t records) {
  Bytes out(sizeof(kc::FileHeader));
  kc::FileHeader fh{};
  std::memcpy(fh.magic, kc::kLogMagic, 8);
  fh.major = kc::kLogMajor;
  fh.minor = kc::kLogMinor;
  fh.header_bytes = sizeof(fh);
  std::memcpy(out.data(), &fh, sizeof(fh));
  kc::PackedChunkHeader h{};
  h.magic = kc::kPackedChunkMagic;
  h.stored_bytes = static_cast<uint32_t>(stored.size());
  h.checksum = XXH3_64bits(stored.data(), stored.size());
  h.record_count = records;
  h.payload_bytes = payload_bytes;
  h.codec = codec;
  const size_t at = out.size();
  out.resize(at + sizeof(h));
  std::memcpy(out.data() + at, &h, sizeof(h));
  out.insert(out.end(), stored.begin(), stored.end());
  return out;
}

void appendRecord(Bytes& p, kc::RecordType type, const void* body, size_t bytes) {
  kc::RecordHeader h{static_cast<uint16_t>(type), 0, static_cast<uint32_t>(bytes)};
  const size_t at = p.size();
  p.resize(at + sizeof(h) + bytes);
  std::memcpy(p.data() + at, &h, sizeof(h));
  if (bytes) std::memcpy(p.data() + at + sizeof(h), body, bytes);
}

}  // namespace

TEST_CASE("varints and zigzag round trip at the edges, and a bad varint is refused") {
  const uint64_t values[] = {0, 1, 127, 128, 300, UINT32_MAX, INT64_MAX, uint64_t{INT64_MAX} + 1, UINT64_MAX};
  for (uint64_t v : values) {
    CAPTURE(v);
    Bytes b;
    kc::putVarint(b, v);
    CHECK(b.size() <= 10);
    kc::VarintCursor c(b);
    CHECK(c.next() == v);
    CHECK(c.atEnd());
    CHECK_FALSE(c.failed());
    CHECK(kc::unzigzag(kc::zigzag(v)) == v);
  }
  CHECK(kc::zigzag(0) == 0);
  CHECK(kc::zigzag(static_cast<uint64_t>(-1)) == 1);
  CHECK(kc::zigzag(1) == 2);
  const Bytes eleven(11, 0x80);  // never terminates within 10 bytes
  kc::VarintCursor c(eleven);
  CHECK(c.next() == 0);
  CHECK(c.failed());
  const Bytes cut = {0x80, 0x80};  // runs past the column
  kc::VarintCursor d(cut);
  d.next();
  CHECK(d.failed());
  const Bytes overflow = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};  // 65 bits
  kc::VarintCursor e(overflow);
  e.next();
  CHECK(e.failed());
}

TEST_CASE("compact encoding round trip: every field, extremes, non-monotonic times, huge deltas") {
  std::mt19937_64 rng(12345);
  std::vector<kc::LaunchBody> launches;
  std::vector<kc::KernelBody> kernels;
  std::vector<kc::RangeBody> ranges;
  for (uint64_t i = 0; i < 20000; ++i) {
    launches.push_back(randomLaunch(rng, i + 1));
    kernels.push_back(randomKernel(rng, i + 1));
    if (i % 3 == 0) ranges.push_back(randomRange(rng));
  }
  // All-extreme records too.
  kc::LaunchBody lmax;
  std::memset(&lmax, 0xff, sizeof(lmax));
  launches.push_back(lmax);
  launches.push_back(kc::LaunchBody{});
  kc::KernelBody kmax;
  std::memset(&kmax, 0xff, sizeof(kmax));
  kernels.push_back(kmax);
  kernels.push_back(kc::KernelBody{});
  kc::RangeBody rmax;
  std::memset(&rmax, 0xff, sizeof(rmax));
  ranges.push_back(rmax);
  ranges.push_back(kc::RangeBody{});

  for (auto enc : {kc::LogEncoding::kCompact, kc::LogEncoding::kPlain}) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink, enc);
    for (size_t i = 0; i < launches.size(); ++i) {
      w.writeLaunch(launches[i]);
      if (i < kernels.size()) w.writeKernel(kernels[i]);
      if (i < ranges.size()) w.writeRange(ranges[i]);
      if (i % 7000 == 6999) w.flush();  // several chunks: delta state restarts in each
    }
    w.writeEnd();
    w.flush();
    const kc::LogData d = kc::readLog(sink.bytes);
    CAPTURE(static_cast<int>(enc));
    // Ids point nowhere (no String/Scope records): only reference errors are expected.
    for (const auto& i : d.issues)
      CHECK((i.message.find("out of range") != std::string::npos || i.message.starts_with("undefined ids")));
    CHECK(d.chunks_skipped == 0);
    CHECK(d.complete);
    CHECK(sameBytes(d.launches, launches));
    CHECK(sameBytes(d.kernels, kernels));
    CHECK(sameBytes(d.ranges, ranges));
    CHECK(d.launch_records == launches.size());
    CHECK(d.kernel_records == kernels.size());
    CHECK(d.range_records == ranges.size());
    CHECK(d.packed_chunks == (enc == kc::LogEncoding::kCompact ? d.chunks_read : 0));
  }
}

TEST_CASE("batches are split at kMaxBatchRecords and read back in order") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  std::vector<kc::KernelBody> ks;
  for (uint64_t i = 0; i < kc::kMaxBatchRecords + 1000; ++i) {
    kc::KernelBody k{};
    k.correlation_id = i;
    k.start_ns = 10 * i;
    k.end_ns = 10 * i + 5;
    ks.push_back(k);
    w.writeKernel(k);
  }
  w.flush();
  const kc::LogData d = kc::readLog(sink.bytes);
  CHECK(sameBytes(d.kernels, ks));
  CHECK(d.chunks_read == 1);
}

TEST_CASE("a training loop costs a few bytes per kernel in packed chunks") {
  const Bytes compact = trainingLog(kc::LogEncoding::kCompact, 3000);
  const Bytes plain = trainingLog(kc::LogEncoding::kPlain, 3000);
  const kc::LogData dc = kc::readLog(compact), dp = kc::readLog(plain);
  CHECK(dc.intact());
  CHECK(dp.intact());
  CHECK(sameBytes(dc.launches, dp.launches));
  CHECK(sameBytes(dc.kernels, dp.kernels));
  CHECK(sameBytes(dc.ranges, dp.ranges));
  CHECK(sameBytes(dc.mem_ops, dp.mem_ops));
  CHECK(dc.strings == dp.strings);
  CHECK(dc.packed_chunks > 0);
  const double per_kernel = static_cast<double>(compact.size()) / static_cast<double>(dc.kernels.size());
  MESSAGE("compact: " << per_kernel << " bytes per kernel; plain: "
                      << static_cast<double>(plain.size()) / static_cast<double>(dp.kernels.size()));
  CHECK(per_kernel < 16.0);  // plain is about 170
  CHECK(compact.size() * 10 < plain.size());
}

TEST_CASE("a flipped byte in a packed log never crashes; the damaged chunk is reported, the others read") {
  const Bytes log = trainingLog(kc::LogEncoding::kCompact, 420);  // chunks at steps 199, 399, and the last
  const std::vector<size_t> chunks = kc::test::chunkOffsets(log);
  REQUIRE(chunks.size() == 3);
  const kc::LogData whole = kc::readLog(log);
  REQUIRE(whole.intact());
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t i = sizeof(kc::FileHeader) + rng() % (log.size() - sizeof(kc::FileHeader));
    CAPTURE(i);
    Bytes b = log;
    b[i] ^= static_cast<uint8_t>(1 + rng() % 255);
    const kc::LogData d = kc::readLog(b);
    size_t c = 0;
    while (c + 1 < chunks.size() && chunks[c + 1] <= i) ++c;
    const size_t in_header = i - chunks[c];
    // The sequence number (16-19) and reserved bytes (29-31) are not checked; a wrong record count
    // (20-23) is a warning; every other byte makes the chunk unreadable, and says so.
    const bool unchecked = (in_header >= 16 && in_header < 20) || (in_header >= 29 && in_header < 32);
    const bool count = in_header >= 20 && in_header < 24;
    bool named = false;
    for (const auto& is : d.issues)
      if (is.chunk == static_cast<int64_t>(c) && is.offset == chunks[c]) named = true;
    if (unchecked || count) {
      CHECK(d.kernels.size() == whole.kernels.size());
      CHECK(d.chunks_read == chunks.size());
      CHECK(named == count);
      continue;
    }
    CHECK_FALSE(d.intact());
    CHECK(named);
    CHECK(d.kernels.size() < whole.kernels.size());
    // The other chunks are still read (a damaged first chunk loses definitions, not records).
    CHECK(d.chunks_read == chunks.size() - 1);
    CHECK(d.kernels.size() > 0);
  }
}

TEST_CASE("packed chunk that verifies but does not decode: zstd garbage, unknown codec, lying sizes") {
  Bytes payload;
  kc::KernelBody k{};
  k.correlation_id = 5;
  appendRecord(payload, kc::RecordType::kKernel, &k, sizeof(k));
  appendRecord(payload, kc::RecordType::kEnd, nullptr, 0);
  Bytes z(ZSTD_compressBound(payload.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), payload.data(), payload.size(), 3));
  const auto size = static_cast<uint32_t>(payload.size());

  kc::LogData d = kc::readLog(packedLog(z, size, 1, 2));
  CHECK(d.intact());
  CHECK(d.kernels.size() == 1);
  CHECK(d.complete);

  d = kc::readLog(packedLog(payload, size, 0, 2));  // stored
  CHECK(d.intact());
  CHECK(d.kernels.size() == 1);

  d = kc::readLog(packedLog(z, size, 7, 2));
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "chunk 0 at byte 16 uses compression codec 7, which this reader does not know"));
  CHECK(d.kernels.empty());
  CHECK(d.chunks_skipped == 1);

  Bytes garbage = z;
  for (size_t i = 4; i < garbage.size(); ++i) garbage[i] ^= 0x5a;
  d = kc::readLog(packedLog(garbage, size, 1, 2));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "chunk 0 at byte 16: zstd cannot decompress the payload"));
  CHECK(d.chunks_skipped == 1);

  d = kc::readLog(packedLog(z, size + 100, 1, 2));  // announces more than the frame holds
  CHECK(d.damaged());
  CHECK(d.kernels.empty());
  d = kc::readLog(packedLog(z, size - 1, 1, 2));  // less: zstd refuses to write past the buffer
  CHECK(d.damaged());
  CHECK(d.kernels.empty());
  d = kc::readLog(packedLog(payload, size + 1, 0, 2));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "stored chunk 0 at byte 16 announces"));

  d = kc::readLog(packedLog(z, kc::kMaxChunkPayload + 1, 1, 2));  // no 64 MiB allocation
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "payload bytes (limit 67108864)"));
  CHECK(d.kernels.empty());

  // A damaged packed chunk followed by an intact one: the second is read.
  Bytes two = packedLog(garbage, size, 1, 2);
  const Bytes good = packedLog(z, size, 1, 2);
  two.insert(two.end(), good.begin() + sizeof(kc::FileHeader), good.end());
  d = kc::readLog(two);
  CHECK(d.chunks_skipped == 1);
  CHECK(d.chunks_read == 1);
  CHECK(d.kernels.size() == 1);
  CHECK(d.complete);

  // Cut inside the packed header: a truncated tail naming the 32-byte header.
  d = kc::readLog(std::span(good.data(), sizeof(kc::FileHeader) + 20));
  CHECK(d.truncated);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "(chunk header needs 32 bytes, 20 remain)"));
}

TEST_CASE("malformed batches inside an intact chunk are errors; the rest of the chunk is read") {
  std::vector<kc::KernelBody> ks(3);
  for (uint64_t i = 0; i < 3; ++i) ks[i].correlation_id = 10 + i;
  kc::KernelBatchEncoder enc;
  for (const auto& k : ks) enc.add(k);
  Bytes good;
  enc.finish(good);

  auto withBatch = [&](const Bytes& body) {
    Bytes payload;
    appendRecord(payload, kc::RecordType::kKernelBatch, body.data(), body.size());
    appendRecord(payload, kc::RecordType::kKernelBatch, good.data(), good.size());
    appendRecord(payload, kc::RecordType::kEnd, nullptr, 0);
    return kc::readLog(packedLog(payload, static_cast<uint32_t>(payload.size()), 0, 3));
  };
  kc::LogData d = withBatch(good);
  CHECK(d.intact());
  CHECK(d.kernels.size() == 6);

  Bytes big;  // announces more records than the limit
  kc::putVarint(big, kc::kMaxBatchRecords + 1);
  for (int i = 0; i < 5; ++i) kc::putVarint(big, 0);
  d = withBatch(big);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "batch announces 65537 records (limit 65536)"));
  CHECK(d.kernels.size() == 3);
  CHECK(d.complete);

  Bytes lying = good;
  lying[0] = 2;  // count 2, flags column holds 3
  d = withBatch(lying);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "batch announces 2 records but its flags column holds 3"));

  Bytes longcol = good;
  longcol[1] = 100;  // flags column longer than the body
  d = withBatch(longcol);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "batch column 0 announces 100 bytes"));

  Bytes badflag = good;
  badflag[6] |= 0x80;  // first flags byte: an unknown bit
  d = withBatch(badflag);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "unknown flag bits"));

  Bytes cut(good.begin(), good.end() - 1);  // last column one byte short
  d = withBatch(cut);
  CHECK(d.damaged());
  CHECK(d.kernels.size() == 3);

  // Every truncation and every flipped byte of a batch body: never a crash, all-or-nothing.
  for (size_t n = 0; n < good.size(); ++n) {
    Bytes b(good.begin(), good.begin() + static_cast<long>(n));
    std::vector<kc::KernelBody> out;
    std::string why;
    CHECK_FALSE(kc::decodeKernelBatch(b, out, why));
    CHECK(out.empty());
    for (int bit = 0; bit < 8; ++bit) {
      Bytes f = good;
      f[n] ^= static_cast<uint8_t>(1u << bit);
      out.clear();
      if (!kc::decodeKernelBatch(f, out, why)) CHECK(out.empty());
    }
  }
}

TEST_CASE("streaming summary equals summarize() on training-like logs, both encodings and graph views") {
  for (bool kernels_first : {false, true}) {
    for (auto enc : {kc::LogEncoding::kCompact, kc::LogEncoding::kPlain}) {
      const Bytes b = trainingLog(enc, 500, kernels_first);
      const kc::LogData d = kc::readLog(b);
      REQUIRE(d.intact());
      for (auto view : {kc::GraphView::kLaunch, kc::GraphView::kCapturePath}) {
        CAPTURE(kernels_first);
        CAPTURE(static_cast<int>(view));
        const kc::Summary in_memory = kc::summarize(d, {view});
        const kc::StreamedLog s = kc::summarizeLogBytes(b, {view});
        CHECK(s.summary.join_window_evicted == 0);
        checkSameSummary(s.summary, in_memory);
        CHECK(s.data.launches.empty());  // records were not kept
        CHECK(s.data.launch_records == d.launches.size());
        CHECK(s.data.kernel_records == d.kernels.size());
        CHECK(s.data.strings == d.strings);
        CHECK(s.data.issues.size() == d.issues.size());
      }
    }
  }
}

TEST_CASE("streaming join: duplicates, a second kernel for one launch, kernels before launches") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "k");
  w.writeScope({1, 0, 1, 0});
  auto launch = [](uint64_t corr, uint32_t scope, uint8_t graph = 0) {
    kc::LaunchBody l{};
    l.correlation_id = corr;
    l.scope_id = scope;
    l.is_graph_launch = graph;
    l.enter_ns = corr * 10;
    l.exit_ns = corr * 10 + 3;
    return l;
  };
  auto kernel = [](uint64_t corr) {
    kc::KernelBody k{};
    k.correlation_id = corr;
    k.name_id = 1;
    k.start_ns = corr;
    k.end_ns = corr + 100;
    return k;
  };
  w.writeKernel(kernel(1));  // before its launch
  w.writeLaunch(launch(1, 1));
  w.writeLaunch(launch(2, 1));
  w.writeKernel(kernel(2));
  w.writeKernel(kernel(2));     // a second kernel for a non-graph launch
  w.writeLaunch(launch(2, 0));  // a repeated correlation id: the first launch keeps it
  w.writeLaunch(launch(3, 0, 1));
  for (int i = 0; i < 5; ++i) w.writeKernel(kernel(3));
  w.writeLaunch(launch(4, 1));  // no kernel
  w.writeKernel(kernel(99));    // no launch
  w.writeEnd();
  w.flush();
  const kc::LogData d = kc::readLog(sink.bytes);
  const kc::Summary m = kc::summarize(d);
  const kc::StreamedLog s = kc::summarizeLogBytes(sink.bytes);
  checkSameSummary(s.summary, m);
  CHECK(m.unmatched_kernels == 1);
  CHECK(m.launches_without_kernel == 2);  // the repeated id and corr 4
  CHECK(m.exclusive[1].kernels == 3);
  CHECK(m.exclusive[0].kernels == 5);
}

namespace {
void checkSameWindows(const std::vector<kc::SegmentTotals>& a, const std::vector<kc::SegmentTotals>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(a[i].segment.index == b[i].segment.index);
    CHECK(a[i].reason == b[i].reason);
    CHECK(a[i].end_reason == b[i].end_reason);
    CHECK(a[i].launches == b[i].launches);
    CHECK(a[i].kernels == b[i].kernels);
    CHECK(a[i].unmatched_kernels == b[i].unmatched_kernels);
    CHECK(a[i].gpu_ns == b[i].gpu_ns);
    CHECK(a[i].ranges == b[i].ranges);
    CHECK(a[i].mem_ops == b[i].mem_ops);
  }
}
}  // namespace

TEST_CASE("per-window totals from the streaming passes equal segmentTotals() on the records") {
  // Three windows, each Segment record after its records and ending its chunk (as the library writes
  // them); kernels before and after their launches, a kernel of a memcpy call (unmatched in its window),
  // kernels and a memory operation with no launch, a kernel after the last Segment record, ranges ending
  // inside, between and after windows.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "k");
  w.writeString(2, "ctl");
  w.writeString(3, "duration");
  w.writeScope({1, 0, 1, 0});
  auto launch = [&](uint64_t corr, uint8_t flags = 0) {
    kc::LaunchBody l{};
    l.correlation_id = corr;
    l.scope_id = 1;
    l.flags = flags;
    l.enter_ns = 1000 + corr * 10;
    l.exit_ns = l.enter_ns + 3;
    w.writeLaunch(l);
  };
  auto kernel = [&](uint64_t corr) {
    kc::KernelBody k{};
    k.correlation_id = corr;
    k.name_id = 1;
    k.start_ns = corr * 100;
    k.end_ns = corr * 100 + 7 + corr;
    w.writeKernel(k);
  };
  auto range = [&](uint64_t end_ns) { w.writeRange({end_ns - 5, end_ns, 1, 1, 1, 0}); };
  auto memop = [&](uint64_t corr) {
    kc::MemOpBody m{};
    m.correlation_id = corr;
    m.start_ns = 1;
    m.end_ns = 9;
    m.bytes = 64;
    w.writeMemOp(m);
  };
  auto segment = [&](uint32_t index, uint64_t start, uint64_t stop, uint64_t first, uint64_t last) {
    w.writeSegment({start, stop, first, last, index, 2, 3, 0});
    w.flush();
  };
  kernel(2);  // before its launch
  for (uint64_t c = 1; c <= 10; ++c) launch(c, c == 5 ? uint8_t{kc::kLaunchMemOp} : uint8_t{0});
  for (uint64_t c = 3; c <= 9; ++c) kernel(c);  // corr 5: the memcpy call's id
  memop(5);
  range(1050);
  range(1200);  // between windows
  segment(0, 1000, 1100, 1, 10);
  kernel(15);  // between the windows' correlation ids, written in window 1: unmatched there
  for (uint64_t c = 20; c <= 30; ++c) launch(c);
  for (uint64_t c = 20; c <= 32; ++c) kernel(c);  // 31, 32: no launch
  memop(40);  // no launch, in the window
  range(1500);
  segment(1, 1300, 1600, 20, 40);
  segment(2, 1700, 1800, 0, 0);  // a window without launches
  kernel(10);  // after the last Segment record: in a window never closed, counted in none
  range(1750);
  range(9999);  // after every window
  w.writeEnd();
  w.flush();
  const kc::LogData d = kc::readLog(sink.bytes);
  REQUIRE(d.intact());
  REQUIRE(d.segments.size() == 3);
  const auto expected = kc::segmentTotals(d);
  CHECK(expected[0].unmatched_kernels == 1);  // the memcpy call's kernel
  CHECK(expected[0].kernels == 8);
  CHECK(expected[1].unmatched_kernels == 3);  // 15, 31, 32
  CHECK(expected[1].kernels == 14);
  CHECK(expected[2].kernels == 0);
  CHECK(expected[2].ranges == 1);
  const kc::StreamedLog s = kc::summarizeLogBytes(sink.bytes, {}, kc::kDefaultJoinWindow, true);
  checkSameWindows(s.segments, expected);
  CHECK(s.data.launches.empty());  // records were not kept
  // Without asking: no totals; a log without windows or records: none, or zero counts, without a pass.
  CHECK(kc::summarizeLogBytes(sink.bytes).segments.empty());
  for (auto view : {kc::GraphView::kLaunch, kc::GraphView::kCapturePath})
    checkSameWindows(kc::summarizeLogBytes(sink.bytes, {view}, 64, true).segments, expected);
}

TEST_CASE("streaming join window: launches waiting too long are counted, memory stays bounded") {
  // 5000 launches, then their kernels: with a window of 1000 launches most kernels miss theirs.
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  for (uint64_t c = 1; c <= 5000; ++c) {
    kc::LaunchBody l{};
    l.correlation_id = c;
    w.writeLaunch(l);
  }
  for (uint64_t c = 1; c <= 5000; ++c) {
    kc::KernelBody k{};
    k.correlation_id = c;
    w.writeKernel(k);
  }
  w.flush();
  const kc::StreamedLog exact = kc::summarizeLogBytes(sink.bytes);
  CHECK(exact.summary.join_window_evicted == 0);
  CHECK(exact.summary.unmatched_kernels == 0);
  CHECK(exact.summary.launches_without_kernel == 0);

  kc::StreamSummarizer small({}, 1000);
  kc::ReadOptions ro;
  ro.visitor = &small;
  ro.keep_records = false;
  const kc::LogData d = kc::readLog(sink.bytes, ro);
  const kc::Summary s = small.finish(d);
  CHECK(small.peakPendingLaunches() <= 1024 + 1001);  // the ring, and the launches pushed out of it
  CHECK(s.join_window_evicted > 0);
  CHECK(s.unmatched_kernels + (5000 - s.launches_without_kernel) == 5000);  // each kernel matched or not
}

TEST_CASE("readLogFile (mapped, pages released as it reads) equals readLog on the same bytes") {
  const Bytes b = trainingLog(kc::LogEncoding::kCompact, 2000);
  char path[] = "/tmp/kc_compact_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, b.data(), b.size()) == static_cast<ssize_t>(b.size()));
  close(fd);
  const kc::LogData f = kc::readLogFile(path);
  const kc::LogData m = kc::readLog(b);
  CHECK(f.intact());
  CHECK(sameBytes(f.kernels, m.kernels));
  CHECK(sameBytes(f.launches, m.launches));
  CHECK(f.file_bytes == b.size());
  const kc::StreamedLog s = kc::summarizeLogFile(path);
  checkSameSummary(s.summary, kc::summarize(m));
  std::remove(path);
}
