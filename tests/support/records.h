// Launch and kernel records for reader and report tests: fixed, easily recognized field values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collector/log_format.h"

namespace kc::test {

/// A runtime launch (cudaLaunchKernel, cbid 211) on thread 4242 in `scope`: enter 100·corr ns, 7 ns long.
inline LaunchBody launch(uint64_t corr, uint32_t scope) {
  LaunchBody l{};
  l.correlation_id = corr;
  l.enter_ns = 100 * corr;
  l.exit_ns = 100 * corr + 7;
  l.scope_id = scope;
  l.thread_id = 4242;
  l.api_id = 3;
  l.cbid = 211;
  l.domain = static_cast<uint8_t>(ApiDomain::kRuntime);
  return l;
}

/// The kernel of launch `corr`, named by string `name_id`: starts at 1000·corr ns, 55 ns long, grid 128,
/// block 256.
inline KernelBody kernel(uint64_t corr, uint32_t name_id) {
  KernelBody k{};
  k.correlation_id = corr;
  k.start_ns = 1000 * corr;
  k.end_ns = 1000 * corr + 55;
  k.name_id = name_id;
  k.grid[0] = 128;
  k.block[0] = 256;
  return k;
}

/// Byte offsets of the chunks of a log file's bytes (plain or packed), in file order, read from the chunk
/// headers' lengths (for tests that cut, repeat or damage chunks of a log they wrote: the lengths are trusted).
inline std::vector<size_t> chunkOffsets(const std::vector<uint8_t>& b) {
  std::vector<size_t> at;
  size_t pos = sizeof(FileHeader);
  while (pos + sizeof(ChunkHeader) <= b.size()) {
    uint32_t magic;
    std::memcpy(&magic, b.data() + pos, sizeof(magic));
    at.push_back(pos);
    if (magic == kPackedChunkMagic && pos + sizeof(PackedChunkHeader) <= b.size()) {
      PackedChunkHeader h;
      std::memcpy(&h, b.data() + pos, sizeof(h));
      pos += sizeof(h) + h.stored_bytes;
    } else {
      ChunkHeader h;
      std::memcpy(&h, b.data() + pos, sizeof(h));
      pos += sizeof(h) + h.payload_bytes;
    }
  }
  return at;
}

}  // namespace kc::test
