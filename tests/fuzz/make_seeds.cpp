// Writes the fuzzer's seed corpus: the shipped H200 logs (launches.kcount re-encoded to its first
// records, so seeds stay under the fuzzer's -max_len), and small hand-made damaged logs: cut at
// chosen bytes, flipped bytes, lying length fields (chunk payload, record body, metadata key), ids past
// every definition, a scope cycle, a wrong magic and an unsupported version. Chunk checksums are
// recomputed where the damage is meant to reach the record decoder.
// Usage: kc_make_seeds OUT_DIR REPO_ROOT
#include <xxhash.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collector/log_reader.h"
#include "collector/log_writer.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

fs::path g_out;
int g_written = 0;

void emit(const std::string& name, const Bytes& b) {
  std::ofstream f(g_out / name, std::ios::binary);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  ++g_written;
}

Bytes readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The first `max_records` launches, kernels and ranges of a log (with every string, scope and metadata
/// entry), re-encoded in chunks of about `chunk_bytes`.
Bytes reencode(const kc::LogData& d, size_t max_records, size_t chunk_bytes,
               kc::LogEncoding enc = kc::LogEncoding::kPlain) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, enc);
  size_t since = 0;
  auto tick = [&](size_t bytes) {
    since += bytes;
    if (since >= chunk_bytes) {
      w.flush();
      since = 0;
    }
  };
  for (const auto& [k, v] : d.metadata) w.writeMetadata(k, v), tick(16 + k.size() + v.size());
  for (uint32_t id = 1; id < d.strings.size(); ++id)
    if (!d.strings[id].empty()) w.writeString(id, d.strings[id]), tick(12 + d.strings[id].size());
  for (uint32_t id = 1; id < d.scopes.size(); ++id) w.writeScope(d.scopes[id]), tick(24);
  for (size_t i = 0; i < d.launches.size() && i < max_records; ++i) w.writeLaunch(d.launches[i]), tick(56);
  for (size_t i = 0; i < d.kernels.size() && i < max_records; ++i) w.writeKernel(d.kernels[i]), tick(104);
  for (size_t i = 0; i < d.ranges.size() && i < max_records; ++i) w.writeRange(d.ranges[i]), tick(40);
  if (d.has_stats) w.writeStats(d.stats);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

/// Offsets of the chunk headers of an intact log.
std::vector<size_t> chunkOffsets(const Bytes& b) {
  std::vector<size_t> at;
  size_t pos = sizeof(kc::FileHeader);
  while (pos + sizeof(kc::ChunkHeader) <= b.size()) {
    kc::ChunkHeader h;
    std::memcpy(&h, b.data() + pos, sizeof(h));
    at.push_back(pos);
    pos += sizeof(h) + h.payload_bytes;
  }
  return at;
}

void fixChecksum(Bytes& b, size_t chunk_at) {
  kc::ChunkHeader h;
  std::memcpy(&h, b.data() + chunk_at, sizeof(h));
  h.checksum = XXH3_64bits(b.data() + chunk_at + sizeof(h), h.payload_bytes);
  std::memcpy(b.data() + chunk_at, &h, sizeof(h));
}

template <typename T>
void put(Bytes& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof(v));
}

/// A small log built record by record: two chunks (definitions + launches, then kernels + ranges + End).
Bytes smallLog(kc::LogEncoding enc = kc::LogEncoding::kPlain) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, enc);
  w.writeMetadata("host", "seed");
  w.writeString(1, "step");
  w.writeString(2, "_ZN2at6native29vectorized_elementwise_kernelILi8ENS0_10MulFunctorIfEESt5arrayIPcLm3EEEEviT0_T1_");
  w.writeString(3, "cudaLaunchKernel");
  w.writeString(4, "gate");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 4, 0});
  for (uint64_t c = 1; c <= 4; ++c) {
    kc::LaunchBody l{};
    l.correlation_id = c;
    l.enter_ns = 100 * c;
    l.exit_ns = 100 * c + 9;
    l.scope_id = static_cast<uint32_t>(c % 3);
    l.api_id = 3;
    l.cbid = 211;
    l.domain = 1;
    l.is_graph_launch = c == 4;
    w.writeLaunch(l);
  }
  w.flush();
  for (uint64_t c = 1; c <= 5; ++c) {
    kc::KernelBody k{};
    k.correlation_id = c;
    k.start_ns = 1000 * c;
    k.end_ns = 1000 * c + 50;
    k.name_id = 2;
    k.grid[0] = 4;
    k.block[0] = 128;
    w.writeKernel(k);
  }
  w.writeRange({10, 900, 1, 7, 7, 0});
  w.writeRange({20, 800, 2, 7, 7, 0});
  kc::StatsBody st{};
  st.launches = 4;
  st.kernels = 5;
  st.ranges = 2;
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

void damaged(const std::string& base, const Bytes& log) {
  const auto chunks = chunkOffsets(log);
  // Cut tails: inside the file header, a chunk header, a payload; one byte short.
  for (size_t cut : {size_t{5}, size_t{16 + 10}, size_t{16 + 24 + 7}, log.size() / 2, log.size() - 1})
    if (cut < log.size()) emit(base + "-cut-" + std::to_string(cut), Bytes(log.begin(), log.begin() + cut));
  // Flipped bytes: magic, version, header_bytes, chunk magic, payload length, checksum, a payload byte.
  for (size_t at : {size_t{0}, size_t{8}, size_t{12}, size_t{16}, size_t{20}, size_t{24}, size_t{16 + 24 + 3}}) {
    Bytes b = log;
    b[at] ^= 0x5A;
    emit(base + "-flip-" + std::to_string(at), b);
  }
  if (chunks.size() < 2) return;
  {  // Payload length past the end of the file, and beyond kMaxChunkPayload.
    Bytes b = log;
    put<uint32_t>(b, chunks[0] + 4, static_cast<uint32_t>(b.size()));
    emit(base + "-chunk-length-past-end", b);
    put<uint32_t>(b, chunks[0] + 4, 0xFFFFFFF0u);
    emit(base + "-chunk-length-huge", b);
  }
  {  // First record's body length larger than the chunk, checksum recomputed.
    Bytes b = log;
    put<uint32_t>(b, chunks[0] + 24 + 4, 0x7FFFFFFFu);
    fixChecksum(b, chunks[0]);
    emit(base + "-body-length-huge", b);
    put<uint32_t>(b, chunks[0] + 24 + 4, 2u);  // shorter than the metadata body
    fixChecksum(b, chunks[0]);
    emit(base + "-body-length-short", b);
  }
  {  // Metadata key longer than its body, checksum recomputed.
    Bytes b = log;
    put<uint32_t>(b, chunks[0] + 24 + 8, 0xFFFFFF00u);
    fixChecksum(b, chunks[0]);
    emit(base + "-metadata-key-huge", b);
  }
  {  // Chunk 0 lost: chunk 1 refers to strings and scopes nobody defined.
    Bytes b = log;
    b[chunks[0] + 24 + 1] ^= 0xFF;
    emit(base + "-chunk0-lost", b);
  }
  {  // Unsupported major version; wrong magic; header_bytes past the end.
    Bytes b = log;
    put<uint16_t>(b, 8, 2);
    emit(base + "-version-2", b);
    b = log;
    std::memcpy(b.data(), "NOTALOG!", 8);
    emit(base + "-not-a-log", b);
    b = log;
    put<uint32_t>(b, 12, 0xFFFFu);
    emit(base + "-header-bytes-huge", b);
  }
  // Two copies back to back, and a chunk duplicated: resynchronization and repeated definitions.
  Bytes twice = log;
  twice.insert(twice.end(), log.begin() + 16, log.end());
  emit(base + "-chunks-twice", twice);
}

/// A summary-mode log (format 1.2): definitions, two snapshots (the second final, with an unmatched
/// kernel row), Stats and End; the second snapshot starts in one chunk and ends in the next.
Bytes summaryModeLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("mode", "summary");
  w.writeMetadata("start_ns", "100");
  w.writeMetadata("interval_ns", "1000000000");
  w.writeString(1, "step");
  w.writeString(2, "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN");
  w.writeString(3, "gate");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 3, 0});
  for (uint32_t seq = 0; seq < 2; ++seq) {
    kc::SnapshotBeginBody b{};
    b.time_ns = 1000 + seq * 1000;
    b.sequence = seq;
    b.flags = seq == 1 ? kc::kSnapshotFinal : 0;
    b.scope_rows = 2;
    b.kernel_rows = seq == 1 ? 2 : 1;
    b.launches = 4 * (seq + 1);
    b.kernels = 4 * (seq + 1) + seq;
    b.unmatched_kernels = seq;
    b.unmatched_kernel_gpu_ns = 7 * seq;
    b.ranges = 6 * (seq + 1);
    w.writeSnapshotBegin(b);
    kc::SnapshotScopeBody step{};
    step.scope_id = 1;
    step.instances = 2 * (seq + 1);
    step.cpu_ns = 900 * (seq + 1);
    w.writeSnapshotScope(step);
    kc::SnapshotScopeBody gate{};
    gate.scope_id = 2;
    gate.instances = 4 * (seq + 1);
    gate.launches = 4 * (seq + 1);
    gate.kernels = 4 * (seq + 1);
    gate.gpu_ns = 400 * (seq + 1);
    gate.launch_api_ns = 40 * (seq + 1);
    w.writeSnapshotScope(gate);
    if (seq == 1) w.flush();  // the final snapshot spans two chunks
    kc::SnapshotKernelBody k{2, 2, 0, 0, 4 * (seq + 1), 400 * (seq + 1), 90, 110};
    w.writeSnapshotKernel(k);
    if (seq == 1) w.writeSnapshotKernel(kc::SnapshotKernelBody{0, 2, kc::kSnapshotKernelUnmatched, 0, 1, 7, 7, 7});
    w.writeSnapshotEnd(kc::SnapshotEndBody{seq, b.scope_rows + b.kernel_rows});
    w.flush();
  }
  kc::StatsBody st{};
  st.launches = 8;
  st.kernels = 9;
  st.ranges = 12;
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

/// Damage to a log of packed chunks (format 1.2): cuts, flipped header fields, a flipped payload byte
/// with the checksum recomputed (a stored chunk: it reaches the batch decoder; a zstd chunk: the
/// decompressor), a lying decoded size, an unknown codec.
void damagedPacked(const std::string& base, const Bytes& log) {
  std::vector<size_t> chunks;
  for (size_t pos = sizeof(kc::FileHeader); pos + sizeof(kc::PackedChunkHeader) <= log.size();) {
    kc::PackedChunkHeader h;
    std::memcpy(&h, log.data() + pos, sizeof(h));
    chunks.push_back(pos);
    pos += sizeof(h) + h.stored_bytes;
  }
  auto fix = [](Bytes& b, size_t at) {
    kc::PackedChunkHeader h;
    std::memcpy(&h, b.data() + at, sizeof(h));
    h.checksum = XXH3_64bits(b.data() + at + sizeof(h), std::min<size_t>(h.stored_bytes, b.size() - at - sizeof(h)));
    std::memcpy(b.data() + at, &h, sizeof(h));
  };
  for (size_t cut : {size_t{16 + 20}, size_t{16 + 32 + 5}, log.size() / 2, log.size() - 1})
    if (cut < log.size()) emit(base + "-cut-" + std::to_string(cut), Bytes(log.begin(), log.begin() + cut));
  if (chunks.empty()) return;
  const size_t c0 = chunks[0];
  for (size_t field : {size_t{0}, size_t{4}, size_t{8}, size_t{20}, size_t{24}, size_t{28}}) {
    Bytes b = log;
    b[c0 + field] ^= 0x5A;
    emit(base + "-flip-header-" + std::to_string(field), b);
  }
  for (size_t off : {size_t{3}, size_t{10}, size_t{40}}) {
    if (c0 + 32 + off >= log.size()) continue;
    Bytes b = log;
    b[c0 + 32 + off] ^= 0x21;
    fix(b, c0);
    emit(base + "-payload-flip-" + std::to_string(off) + "-fixed", b);
  }
  {
    Bytes b = log;
    put<uint32_t>(b, c0 + 24, 0x7FFFFFFFu);  // decoded size beyond kMaxChunkPayload
    emit(base + "-payload-bytes-huge", b);
    put<uint32_t>(b, c0 + 24, 7u);  // smaller than the payload
    emit(base + "-payload-bytes-small", b);
    b = log;
    b[c0 + 28] = 9;  // unknown codec
    emit(base + "-codec-9", b);
  }
}

/// Ids past every definition and a scope cycle, inside a chunk whose checksum verifies.
Bytes badReferences(kc::LogEncoding enc = kc::LogEncoding::kPlain) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, enc);
  w.writeString(1, "a");
  w.writeScope({1, 2, 1, 0});  // 1 -> 2 -> 1
  w.writeScope({2, 1, 1, 0});
  w.writeScope({3, 3, 9, 77});  // its own parent, undefined name and domain
  kc::LaunchBody l{};
  l.correlation_id = 5;
  l.scope_id = 40;
  l.api_id = 500;
  w.writeLaunch(l);
  kc::KernelBody k{};
  k.correlation_id = 5;
  k.name_id = 600;
  k.end_ns = 1;
  w.writeKernel(k);
  w.writeRange({5, 1, 2, 0, 0, 0});  // ends before it begins
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

}  // namespace

/// Format 1.2: two capture windows (Segment records) with their launches and kernels, a kernel between
/// them that belongs to none, and a log rotated into two files, each self-contained.
Bytes segmentsLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("host", "seed");
  w.writeString(1, "step");
  w.writeString(2, "k");
  w.writeString(3, "ctl");
  w.writeString(4, "capture-range step 6-15");
  w.writeString(5, "range end");
  w.writeScope({1, 0, 1, 0});
  uint32_t index = 0;
  for (uint64_t base : {10, 50}) {
    for (uint64_t c = base; c < base + 3; ++c) {
      kc::LaunchBody l{};
      l.correlation_id = c;
      l.enter_ns = 100 * c;
      l.exit_ns = 100 * c + 5;
      l.scope_id = 1;
      w.writeLaunch(l);
      kc::KernelBody k{};
      k.correlation_id = c;
      k.start_ns = 100 * c + 10;
      k.end_ns = 100 * c + 20;
      k.name_id = 2;
      w.writeKernel(k);
    }
    w.writeRange({100 * base, 100 * base + 300, 1, 7, 7, 0});
    w.writeSegment({100 * base - 1, 100 * base + 301, base, base + 2, index, index == 0 ? 3u : 4u,
                    index == 0 ? 3u : 5u, 0});
    ++index;
    w.flush();
  }
  w.writeEnd();
  w.flush();
  return sink.bytes;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR REPO_ROOT\n", argv[0]);
    return 2;
  }
  g_out = argv[1];
  const fs::path root = argv[2];
  fs::create_directories(g_out);
  for (const auto& e : fs::directory_iterator(root / "examples" / "logs"))
    if (e.path().extension() == ".kcount") emit(e.path().filename().string(), readFile(e.path()));
  // tests/data/launches.kcount is 1.5 MB: its first 100 records of each kind, in 4 KiB chunks.
  const kc::LogData launches = kc::readLogFile((root / "tests" / "data" / "launches.kcount").string());
  if (launches.launches.empty()) {
    std::fprintf(stderr, "%s: cannot read tests/data/launches.kcount\n", argv[0]);
    return 1;
  }
  emit("launches-first-records.kcount", reencode(launches, 100, 4096));
  const Bytes small = smallLog();
  emit("small.kcount", small);
  damaged("small", small);
  emit("bad-references.kcount", badReferences());
  const Bytes segments = segmentsLog();
  emit("segments.kcount", segments);
  damaged("segments", segments);
  const Bytes summary = summaryModeLog();
  emit("summary-mode.kcount", summary);
  damaged("summary-mode", summary);
  // Format 1.2: the same logs in packed chunks, zstd-compressed and stored (codec 0).
  for (auto [enc, tag] : {std::pair{kc::LogEncoding::kCompact, "compact"}, std::pair{kc::LogEncoding::kCompactStored, "stored"}}) {
    const std::string t = tag;
    emit("launches-first-records-" + t + ".kcount", reencode(launches, 100, 4096, enc));
    const Bytes packed = smallLog(enc);
    emit("small-" + t + ".kcount", packed);
    damagedPacked("small-" + t, packed);
    emit("bad-references-" + t + ".kcount", badReferences(enc));
  }
  emit("empty", {});
  std::printf("%d seeds in %s\n", g_written, g_out.c_str());
  return 0;
}
