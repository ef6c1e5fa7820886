// Log reader: round trip through LogWriter, and damaged input of every kind (cut, flipped, lying lengths).
#include <doctest/doctest.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <cstring>
#include <string>
#include <vector>

#include "collector/analysis.h"
#include "collector/counted.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "tests/support/capped_log.h"
#include "tests/support/records.h"

namespace {

using kc::ReadIssue;

using kc::test::kernel;
using kc::test::launch;

bool hasIssue(const kc::LogData& d, ReadIssue::Severity sev, const std::string& text) {
  for (const auto& i : d.issues)
    if (i.severity == sev && i.message.find(text) != std::string::npos) return true;
  return false;
}

/// Two chunks: chunk 0 holds strings, scopes and 2 launches; chunk 1 holds 2 kernels, a range and End.
/// Plain chunks (the 1.0/1.1 layout, still written with LogEncoding::kPlain); the packed layout's damage
/// cases are in test_compact.cpp.
struct TwoChunkLog {
  std::vector<uint8_t> bytes;
  size_t chunk1_at = 0;
};

TwoChunkLog twoChunkLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  w.writeMetadata("command", "python train.py");
  w.writeString(1, "step");
  w.writeString(2, "gemm_kernel");
  w.writeString(3, "cudaLaunchKernel");
  w.writeScope({1, 0, 1, 0});
  w.writeLaunch(launch(1, 1));
  w.writeLaunch(launch(2, 0));
  w.flush();
  TwoChunkLog log;
  log.chunk1_at = sink.bytes.size();
  w.writeKernel(kernel(1, 2));
  w.writeKernel(kernel(2, 2));
  w.writeRange({50, 500, 1, 4242, 4242, 0});
  w.writeEnd();
  w.flush();
  log.bytes = sink.bytes;
  return log;
}

/// A file header plus one chunk holding exactly `payload`, with a correct checksum.
std::vector<uint8_t> rawLog(const std::vector<uint8_t>& payload, uint32_t records) {
  std::vector<uint8_t> out(sizeof(kc::FileHeader));
  kc::FileHeader fh{};
  std::memcpy(fh.magic, kc::kLogMagic, 8);
  fh.major = kc::kLogMajor;
  fh.header_bytes = sizeof(fh);
  std::memcpy(out.data(), &fh, sizeof(fh));
  kc::ChunkHeader ch{kc::kChunkMagic, static_cast<uint32_t>(payload.size()),
                     XXH3_64bits(payload.data(), payload.size()), 0, records};
  const size_t at = out.size();
  out.resize(at + sizeof(ch));
  std::memcpy(out.data() + at, &ch, sizeof(ch));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

void appendRecord(std::vector<uint8_t>& p, kc::RecordType type, const void* body, uint32_t bytes,
                  uint32_t announced = UINT32_MAX) {
  kc::RecordHeader h{static_cast<uint16_t>(type), 0, announced == UINT32_MAX ? bytes : announced};
  const size_t at = p.size();
  p.resize(at + sizeof(h) + bytes);
  std::memcpy(p.data() + at, &h, sizeof(h));
  if (bytes) std::memcpy(p.data() + at + sizeof(h), body, bytes);
}

}  // namespace

TEST_CASE("round trip through LogWriter and readLog") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("host", "gpu-node-7");
  w.writeMetadata("pid", "1234");
  w.writeMetadata("host", "gpu-node-8");
  w.writeString(1, "step");
  w.writeString(2, "gate");
  w.writeString(5, "_Z6kernelPf");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  kc::LaunchBody l9 = launch(9, 2);
  l9.api_id = 1;  // string 3 stays a gap no record refers to
  w.writeLaunch(l9);
  w.writeKernel(kernel(9, 5));
  w.writeRange({10, 20, 2, 1, 2, kc::kRangeProcessWide});
  kc::StatsBody st{};
  st.launches = 1;
  st.dropped_host_records = 3;
  w.writeStats(st);
  w.flush();
  st.dropped_host_records = 4;
  st.late_activity_records = 2;
  w.writeStats(st);
  w.writeEnd();
  w.flush();

  const kc::LogData d = kc::readLog(sink.bytes);
  CHECK(d.issues.empty());
  CHECK_FALSE(d.damaged());
  CHECK(d.complete);
  CHECK(d.major == kc::kLogMajor);
  CHECK(d.minor == kc::kLogMinor);
  CHECK(d.chunks_read == 2);
  CHECK(d.chunks_skipped == 0);
  CHECK(d.file_bytes == sink.bytes.size());
  CHECK(d.metadata.size() == 3);
  CHECK(d.meta("host") == "gpu-node-8");
  CHECK(d.meta("pid") == "1234");
  CHECK(d.meta("absent") == "");
  REQUIRE(d.strings.size() == 6);
  CHECK(d.strings[0] == "");
  CHECK(d.strings[3] == "");
  CHECK(d.str(3) == "<bad string id 3>");  // never defined: not shown as an empty name
  CHECK(d.str(5) == "_Z6kernelPf");
  CHECK(d.str(77) == "<bad string id 77>");
  REQUIRE(d.scopes.size() == 3);
  CHECK(d.scopes[0].name_id == 0);
  CHECK(d.scopes[0].parent_id == 0);
  CHECK(d.scopePath(0) == "(no range)");
  CHECK(d.scopePath(1) == "step");
  CHECK(d.scopePath(2) == "step/gate");
  REQUIRE(d.launches.size() == 1);
  CHECK(d.launches[0].correlation_id == 9);
  CHECK(d.launches[0].exit_ns == 907);
  CHECK(d.launches[0].scope_id == 2);
  CHECK(d.launches[0].cbid == 211);
  REQUIRE(d.kernels.size() == 1);
  CHECK(d.kernels[0].name_id == 5);
  CHECK(d.kernels[0].end_ns == 9055);
  CHECK(d.kernels[0].grid[0] == 128);
  CHECK(d.kernels[0].block[0] == 256);
  REQUIRE(d.ranges.size() == 1);
  CHECK(d.ranges[0].end_thread_id == 2);
  CHECK(d.ranges[0].flags == kc::kRangeProcessWide);
  CHECK(d.has_stats);
  CHECK(d.stats.launches == 2);
  CHECK(d.stats.dropped_host_records == 7);
  CHECK(d.stats.late_activity_records == 2);
}

TEST_CASE("a log without End record is read with a warning") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  w.writeString(3, "cudaLaunchKernel");  // the launch's api_id
  w.writeLaunch(launch(1, 0));
  w.flush();
  const kc::LogData d = kc::readLog(sink.bytes);
  CHECK_FALSE(d.complete);
  CHECK_FALSE(d.damaged());
  CHECK(d.launches.size() == 1);
  REQUIRE(d.issues.size() == 1);
  CHECK(d.issues[0].severity == ReadIssue::Severity::kWarning);
  CHECK(d.issues[0].message ==
        "log has no end record: the process did not close it (crash, kill, a write that failed such as a full disk, or still running); "
        "last intact chunk 0 ends at byte 124");
  CHECK(d.last_intact_chunk == 0);
  CHECK(d.last_intact_end == 124);
}

// A crash or power loss can leave a file whose last blocks were allocated but never written: zeros where
// the next chunk would start. They hold no chunk (a chunk starts with its magic): neither damage nor a
// second log. After the End record the log is complete; without one it is incomplete, as after a kill,
// and never "no intact end record". Zeros followed by anything else stay damage.
TEST_CASE("a zero tail is padding: complete after End, incomplete without, damage when not all zero") {
  const auto zeros = [](std::vector<uint8_t> bytes, size_t n) {
    bytes.insert(bytes.end(), n, uint8_t{0});
    return bytes;
  };
  kc::MemorySink killed;
  {
    kc::LogWriter w(&killed, kc::LogEncoding::kPlain);
    w.writeString(3, "cudaLaunchKernel");
    w.writeLaunch(launch(1, 0));
    w.flush();  // no End
  }
  kc::MemorySink closed;
  {
    kc::LogWriter w(&closed);
    w.writeString(3, "cudaLaunchKernel");
    w.writeLaunch(launch(1, 0));
    w.writeLaunch(launch(2, 0));
    w.writeEnd();
    w.flush();
  }
  for (size_t n : {size_t{1}, size_t{23}, size_t{4096}, size_t{3} << 20}) {
    INFO("zero bytes: " << n);
    const kc::LogData c = kc::readLog(zeros(closed.bytes, n));
    CHECK(c.complete);
    CHECK(c.intact());
    CHECK_FALSE(c.dataAfterEnd());
    CHECK(c.launches.size() == 2);
    CHECK(c.zero_tail_offset == closed.bytes.size());
    CHECK(c.zero_tail_bytes == n);
    REQUIRE(c.issues.size() == 1);
    CHECK(c.issues[0].severity == ReadIssue::Severity::kWarning);
    // One zero byte in the singular ("1 zero byte follows"; it said "1 zero bytes follow").
    CHECK(c.issues[0].message == kc::counted(n, "zero byte") + (n == 1 ? " follows" : " follow") +
                                     " the end record, from byte " +
                                     std::to_string(closed.bytes.size()) +
                                     ": padding (no chunk is in them); the log before them is complete");

    const kc::LogData k = kc::readLog(zeros(killed.bytes, n));
    CHECK_FALSE(k.complete);
    CHECK(k.intact());
    CHECK(k.launches.size() == 1);
    CHECK(k.zero_tail_bytes == n);
    REQUIRE(k.issues.size() == 2);
    CHECK(k.issues[0].message.starts_with("the file ends in " + kc::counted(n, "zero byte") + " from byte " +
                                          std::to_string(killed.bytes.size()) + ", where chunk 1 would start"));
    CHECK(k.issues[1].message.starts_with("log has no end record: the process did not close it"));
  }
  // Zeros, then one other byte: not a zero tail. Without End it is damage (bytes that are no chunk);
  // after End, bytes that follow the log.
  std::vector<uint8_t> k = zeros(killed.bytes, 4096);
  k.push_back(1);
  const kc::LogData kd = kc::readLog(k);
  CHECK(kd.damaged());
  CHECK(kd.zero_tail_bytes == 0);
  std::vector<uint8_t> c = zeros(closed.bytes, 4096);
  c.push_back(1);
  const kc::LogData cd = kc::readLog(c);
  CHECK(cd.dataAfterEnd());
  CHECK(cd.after_end_bytes == 4097);
  CHECK(cd.zero_tail_bytes == 0);
}

namespace {
/// The second log of the two tests below: four launches, a Stats record and End, in plain chunks.
std::vector<uint8_t> completeFourLaunchLog() {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  w.writeString(3, "cudaLaunchKernel");
  for (uint32_t c = 1; c <= 4; ++c) w.writeLaunch(launch(c, 0));
  w.writeStats(kc::StatsBody{});
  w.writeEnd();
  w.flush();
  return sink.bytes;
}
}  // namespace

// `cat killed.kcount other.kcount`: the first log has no End record, so the second log's header comes
// where a chunk should. Its chunks verify; read on, both processes' launches would be counted in one log
// through colliding ids. The reading stops at the second header (an error: not one log), with only the
// first log's launch, and the first log's own missing End is the plain "did not close it" warning.
TEST_CASE("a second log appended to one without End record is not read into it") {
  kc::MemorySink first;
  kc::LogWriter w1(&first, kc::LogEncoding::kPlain);
  w1.writeString(3, "cudaLaunchKernel");
  w1.writeLaunch(launch(1, 0));
  w1.flush();  // no End: the process was killed
  const std::vector<uint8_t> second = completeFourLaunchLog();
  std::vector<uint8_t> both = first.bytes;
  both.insert(both.end(), second.begin(), second.end());
  const kc::LogData d = kc::readLog(both);
  CHECK(d.launches.size() == 1);
  CHECK_FALSE(d.complete);
  CHECK_FALSE(d.intact());
  const std::string at = std::to_string(first.bytes.size());
  CHECK(std::any_of(d.issues.begin(), d.issues.end(), [&](const ReadIssue& i) {
    return i.severity == ReadIssue::Severity::kError && i.offset == first.bytes.size() &&
           i.message.starts_with("a second log starts at byte " + at + " (a kcount file header where chunk 1 should start");
  }));
  CHECK(std::any_of(d.issues.begin(), d.issues.end(), [](const ReadIssue& i) {
    return i.message.starts_with("log has no end record: the process did not close it");
  }));
}

// `cat cut.kcount other.kcount` with the first log cut inside a chunk: the cut chunk's length runs into
// the second log, so its checksum fails and the reader looks for the next intact chunk, the second log's
// first. The second log's file header lies in the bytes it skips: the reading stops there too.
TEST_CASE("a second log appended to one cut inside a chunk is not read into it") {
  kc::MemorySink first;
  kc::LogWriter w1(&first, kc::LogEncoding::kPlain);
  w1.writeString(3, "cudaLaunchKernel");
  w1.writeLaunch(launch(1, 0));
  w1.flush();
  for (uint32_t c = 2; c <= 40; ++c) w1.writeLaunch(launch(c, 0));
  w1.flush();
  const std::vector<size_t> chunks = kc::test::chunkOffsets(first.bytes);
  REQUIRE(chunks.size() == 2);
  std::vector<uint8_t> both(first.bytes.begin(), first.bytes.begin() + static_cast<long>(chunks[1] + 100));  // cut in chunk 1
  const std::vector<uint8_t> second = completeFourLaunchLog();
  const size_t second_at = both.size();
  both.insert(both.end(), second.begin(), second.end());
  const kc::LogData d = kc::readLog(both);
  CHECK(d.launches.size() == 1);  // chunk 0's launch; chunk 1 is cut; none of the second log's four
  CHECK_FALSE(d.complete);
  CHECK_FALSE(d.intact());
  CHECK(std::any_of(d.issues.begin(), d.issues.end(), [&](const ReadIssue& i) {
    return i.severity == ReadIssue::Severity::kError &&
           i.message.find("a second log starts at byte " + std::to_string(second_at) + " (a kcount file header in the "
                          "bytes before the next intact chunk") != std::string::npos;
  }));
}

TEST_CASE("truncation at every byte offset keeps every complete chunk") {
  const TwoChunkLog log = twoChunkLog();
  REQUIRE(log.chunk1_at > sizeof(kc::FileHeader));
  for (size_t n = 0; n < log.bytes.size(); ++n) {
    CAPTURE(n);
    const kc::LogData d = kc::readLog(std::span(log.bytes.data(), n));
    if (n == 0) {  // an empty file has no header: not a log (tested in "wrong magic ...")
      CHECK(d.not_a_log);
      continue;
    }
    CHECK_FALSE(d.not_a_log);
    CHECK_FALSE(d.complete);
    CHECK(d.kernels.empty());
    if (n >= log.chunk1_at) {
      CHECK(d.launches.size() == 2);
      CHECK(d.scopePath(1) == "step");
      CHECK(d.chunks_read == 1);
    } else {
      CHECK(d.launches.empty());
      CHECK(d.chunks_read == 0);
    }
    // A cut inside a chunk or a header is a "truncated" error (the log is damaged: not intact, exit 2);
    // a cut exactly between chunks is not, and the log is intact without End record.
    const bool at_boundary = n == sizeof(kc::FileHeader) || n == log.chunk1_at;
    CHECK(hasIssue(d, ReadIssue::Severity::kError, "truncated at byte " + std::to_string(n)) != at_boundary);
    CHECK_FALSE(hasIssue(d, ReadIssue::Severity::kWarning, "truncated at byte "));
    CHECK(d.damaged() == !at_boundary);
    CHECK(d.intact() == at_boundary);
    // Without End record: "the process did not close it" only when nothing follows the last intact chunk;
    // after a cut inside a chunk, the End record may have been in the lost bytes.
    if (n >= sizeof(kc::FileHeader)) {
      CHECK(hasIssue(d, ReadIssue::Severity::kWarning, "log has no end record: the process did not close it") ==
            at_boundary);
      const size_t lost_from = n >= log.chunk1_at ? log.chunk1_at : sizeof(kc::FileHeader);
      CHECK(hasIssue(d, ReadIssue::Severity::kWarning,
                     "log has no intact end record: the bytes from byte " + std::to_string(lost_from) +
                         " to the end of the file (chunk " + (n >= log.chunk1_at ? "1" : "0") +
                         " on) are damaged or cut short, and the end record may be among them") != at_boundary);
    }
  }
  const kc::LogData whole = kc::readLog(log.bytes);
  CHECK(whole.issues.empty());
  CHECK(whole.kernels.size() == 2);
}

TEST_CASE("truncation message names the chunk and the missing bytes") {
  const TwoChunkLog log = twoChunkLog();
  const size_t n = log.chunk1_at + sizeof(kc::ChunkHeader) + 10;
  const kc::LogData d = kc::readLog(std::span(log.bytes.data(), n));
  kc::ChunkHeader h;
  std::memcpy(&h, log.bytes.data() + log.chunk1_at, sizeof(h));
  // Two offsets, each said what it is: where the file ends, where the cut chunk starts.
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "truncated at byte " + std::to_string(n) + " in chunk 1, which starts at byte " +
                     std::to_string(log.chunk1_at) + " (payload needs " + std::to_string(h.payload_bytes) +
                     " bytes, 10 remain)"));
}

TEST_CASE("a file cut inside its file header says so, with its size and the header's") {
  const TwoChunkLog log = twoChunkLog();
  const kc::LogData d = kc::readLog(std::span(log.bytes.data(), 10));
  REQUIRE(d.issues.size() == 1);
  CHECK(d.truncated);
  CHECK(d.issues[0].message ==
        "truncated at byte 10 in the file header: the file is cut short (10 bytes, a file header is 16 bytes)");
}

TEST_CASE("a flipped byte anywhere never crashes and the other chunk survives") {
  const TwoChunkLog log = twoChunkLog();
  for (size_t i = 0; i < log.bytes.size(); ++i) {
    CAPTURE(i);
    std::vector<uint8_t> b = log.bytes;
    b[i] ^= 0xFF;
    const kc::LogData d = kc::readLog(b);
    if (i < 8) {  // one byte of the magic: a damaged header, every record still read
      CHECK(hasIssue(d, ReadIssue::Severity::kError, "damaged file header"));
      CHECK(d.launches.size() == 2);
      CHECK(d.kernels.size() == 2);
      continue;
    }
    if (i == 8 || i == 9) {  // major version 254 or 65281: no kcount writes them, a damaged header
      CHECK(hasIssue(d, ReadIssue::Severity::kError, "damaged file header: its version field says "));
      CHECK_FALSE(d.unsupported_version);
      CHECK(d.launches.size() == 2);
      CHECK(d.kernels.size() == 2);
      continue;
    }
    if (i < sizeof(kc::FileHeader)) {  // minor version or header size: every record is still read
      if (i == 10 || i == 11) CHECK(hasIssue(d, ReadIssue::Severity::kWarning, "is newer than this reader's"));
      CHECK(d.launches.size() == 2);
      CHECK(d.kernels.size() == 2);
      continue;
    }
    const size_t payload0 = sizeof(kc::FileHeader) + sizeof(kc::ChunkHeader);
    const size_t payload1 = log.chunk1_at + sizeof(kc::ChunkHeader);
    if (i < log.chunk1_at) {
      // Damage in chunk 0: chunk 1 (kernels, range, End) is still read.
      CHECK(d.kernels.size() == 2);
      CHECK(d.ranges.size() == 1);
      CHECK(d.complete);
      if (i >= payload0) {
        CHECK(d.damaged());
        CHECK(d.launches.empty());
        CHECK(d.chunks_skipped == 1);
      }
    } else {
      // Damage in chunk 1: chunk 0 (strings, scopes, launches) is intact.
      CHECK(d.launches.size() == 2);
      CHECK(d.scopePath(1) == "step");
      CHECK(d.meta("command") == "python train.py");
      if (i >= payload1) {
        CHECK(d.damaged());
        CHECK(d.kernels.empty());
        CHECK_FALSE(d.complete);
      }
    }
  }
}

TEST_CASE("checksum mismatch names chunk and byte, and reading continues after it") {
  TwoChunkLog log = twoChunkLog();
  log.bytes[sizeof(kc::FileHeader) + sizeof(kc::ChunkHeader) + 3] ^= 0x01;
  const kc::LogData d = kc::readLog(log.bytes);
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "checksum mismatch in chunk 0 at byte " + std::to_string(sizeof(kc::FileHeader))));
  CHECK(d.chunks_skipped == 1);
  CHECK(d.chunks_read == 1);
  CHECK(d.kernels.size() == 2);
  CHECK(d.complete);
}

TEST_CASE("a damaged last chunk: no intact end record, never 'the process did not close it'") {
  // The End record is in chunk 1: a flipped byte in its payload loses it to damage, not to a crash.
  TwoChunkLog log = twoChunkLog();
  log.bytes[log.bytes.size() - 5] ^= 0x01;
  const kc::LogData d = kc::readLog(log.bytes);
  CHECK_FALSE(d.complete);
  CHECK(d.damaged());
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "checksum mismatch in chunk 1 at byte " + std::to_string(log.chunk1_at)));
  CHECK(hasIssue(d, ReadIssue::Severity::kWarning,
                 "log has no intact end record: the bytes from byte " + std::to_string(log.chunk1_at) +
                     " to the end of the file (chunk 1 on) are damaged or cut short, and the end record may be "
                     "among them; last intact chunk 0 ends at byte " + std::to_string(log.chunk1_at)));
  for (const auto& i : d.issues) CHECK(i.message.find("did not close") == std::string::npos);
  // Every chunk damaged: the bytes from the first chunk on.
  TwoChunkLog both = twoChunkLog();
  both.bytes[log.chunk1_at - 5] ^= 0x01;
  both.bytes[both.bytes.size() - 5] ^= 0x01;
  const kc::LogData none = kc::readLog(both.bytes);
  CHECK(hasIssue(none, ReadIssue::Severity::kWarning,
                 "log has no intact end record: the bytes from byte " + std::to_string(sizeof(kc::FileHeader)) +
                     " to the end of the file (chunk 0 on)"));
  CHECK(hasIssue(none, ReadIssue::Severity::kWarning, "; no intact chunk"));
}

TEST_CASE("wrong magic and unsupported major version") {
  TwoChunkLog log = twoChunkLog();
  std::vector<uint8_t> b = log.bytes;
  b[0] = 'X';  // three bytes of the magic: another file (one or two: a damaged log, test above)
  b[1] = 'Y';
  b[2] = 'Z';
  kc::LogData d = kc::readLog(b);
  REQUIRE(d.issues.size() == 1);
  CHECK(d.issues[0].severity == ReadIssue::Severity::kError);
  CHECK(d.issues[0].offset == 0);
  CHECK(d.issues[0].message.starts_with("not a kcount log: byte 0 holds 58 59 5a 55 4e 54 4c 47 "));
  CHECK(d.not_a_log);
  CHECK(d.launches.empty());

  // What byte 0 holds: hex, and as text when printable.
  const std::string text = "#!/bin/sh\necho hello, this is not a log\n";
  d = kc::readLog(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  CHECK(d.issues.size() == 1);
  CHECK(d.not_a_log);
  CHECK(d.issues[0].message ==
        "not a kcount log: byte 0 holds 23 21 2f 62 69 6e 2f 73 68 0a 65 63 68 6f 20 68 (\"#!/bin/sh\\necho h\") (40 "
        "bytes in all); a kcount log starts with \"KCOUNTLG\"");

  // An empty file: no header at all.
  d = kc::readLog(std::span<const uint8_t>());
  REQUIRE(d.issues.size() == 1);
  CHECK(d.not_a_log);
  CHECK(d.damaged());
  CHECK(d.issues[0].message.starts_with("not a kcount log: empty file (0 bytes)"));

  b = log.bytes;
  const uint16_t major = 2, minor = 3;
  std::memcpy(b.data() + 8, &major, 2);
  std::memcpy(b.data() + 10, &minor, 2);
  d = kc::readLog(b);
  REQUIRE(d.issues.size() == 1);
  CHECK(d.issues[0].message == "unsupported version 2.3 (this reader supports 1.x)");
  CHECK(d.damaged());
  CHECK_FALSE(d.not_a_log);  // a kcount log, of another version
  CHECK(d.launches.empty());
}

TEST_CASE("lying length fields are refused without allocating") {
  SUBCASE("chunk payload larger than kMaxChunkPayload") {
    TwoChunkLog log = twoChunkLog();
    const uint32_t huge = 0xFFFFFFF0u;
    std::memcpy(log.bytes.data() + sizeof(kc::FileHeader) + 4, &huge, 4);
    const kc::LogData d = kc::readLog(log.bytes);
    CHECK(d.damaged());
    CHECK(hasIssue(d, ReadIssue::Severity::kError, "announces 4294967280 payload bytes"));
    CHECK(d.kernels.size() == 2);  // chunk 1 found again by resynchronizing
    CHECK(d.launches.empty());
  }
  SUBCASE("record body longer than the chunk") {
    std::vector<uint8_t> p;
    kc::LaunchBody l = launch(1, 0);
    appendRecord(p, kc::RecordType::kLaunch, &l, sizeof(l));
    appendRecord(p, kc::RecordType::kLaunch, &l, sizeof(l), 0x7FFFFFFFu);
    const kc::LogData d = kc::readLog(rawLog(p, 2));
    CHECK(d.damaged());
    CHECK(hasIssue(d, ReadIssue::Severity::kError, "announces 2147483647 body bytes"));
    CHECK(d.launches.size() == 1);
    CHECK(d.chunks_skipped == 1);
    CHECK(d.chunks_read == 0);
  }
  SUBCASE("metadata key longer than its body") {
    std::vector<uint8_t> p(4 + 3);
    const uint32_t key_bytes = 1000;
    std::memcpy(p.data(), &key_bytes, 4);
    std::vector<uint8_t> payload;
    appendRecord(payload, kc::RecordType::kMetadata, p.data(), static_cast<uint32_t>(p.size()));
    const kc::LogData d = kc::readLog(rawLog(payload, 1));
    CHECK(d.damaged());
    CHECK(d.metadata.empty());
  }
  SUBCASE("string longer than kMaxStringBytes is cut") {
    std::vector<uint8_t> body(4 + kc::kMaxStringBytes + 500, 'a');
    const uint32_t id = 7;
    std::memcpy(body.data(), &id, 4);
    std::vector<uint8_t> payload;
    appendRecord(payload, kc::RecordType::kString, body.data(), static_cast<uint32_t>(body.size()));
    const kc::LogData d = kc::readLog(rawLog(payload, 1));
    REQUIRE(d.strings.size() == 8);
    CHECK(d.strings[7].size() == kc::kMaxStringBytes);
  }
  SUBCASE("string and scope ids past the cap are errors, not allocations") {
    std::vector<uint8_t> payload;
    std::vector<uint8_t> sbody(8, 'x');
    const uint32_t big = 0xFFFFFFF0u;
    std::memcpy(sbody.data(), &big, 4);
    appendRecord(payload, kc::RecordType::kString, sbody.data(), 8);
    kc::ScopeBody sc{big, 0, 1, 0};
    appendRecord(payload, kc::RecordType::kScope, &sc, sizeof(sc));
    kc::LaunchBody l = launch(3, 0);
    appendRecord(payload, kc::RecordType::kLaunch, &l, sizeof(l));
    const kc::LogData d = kc::readLog(rawLog(payload, 3));
    CHECK(d.strings.size() == 1);
    CHECK(d.scopes.size() == 1);
    CHECK(hasIssue(d, ReadIssue::Severity::kError, "string id 4294967280"));
    CHECK(hasIssue(d, ReadIssue::Severity::kError, "scope id 4294967280"));
    CHECK(d.launches.size() == 1);  // the records after them are still read
  }
}

TEST_CASE("record bodies: short is an error, long keeps the known prefix, unknown types are skipped") {
  std::vector<uint8_t> payload;
  // A launch body from a newer writer: 8 more bytes than this reader knows.
  std::vector<uint8_t> longer(sizeof(kc::LaunchBody) + 8, 0xEE);
  kc::LaunchBody l = launch(5, 0);
  l.api_id = kc::kNoString;  // no String records in this log: an api_id past them would be an error
  std::memcpy(longer.data(), &l, sizeof(l));
  appendRecord(payload, kc::RecordType::kLaunch, longer.data(), static_cast<uint32_t>(longer.size()));
  const uint64_t unknown_body = 123;
  appendRecord(payload, static_cast<kc::RecordType>(99), &unknown_body, sizeof(unknown_body));
  appendRecord(payload, kc::RecordType::kEnd, nullptr, 0);
  kc::LogData d = kc::readLog(rawLog(payload, 3));
  // The unknown record is named once, as a warning: the log is not damaged.
  REQUIRE(d.issues.size() == 1);
  CHECK(hasIssue(d, ReadIssue::Severity::kWarning,
                 "1 record of a type this reader does not know skipped (the first, type 99, at byte 104 in chunk 0)"));
  CHECK_FALSE(d.damaged());
  REQUIRE(d.launches.size() == 1);
  CHECK(d.launches[0].correlation_id == 5);
  CHECK(d.launches[0].exit_ns == 507);
  CHECK(d.complete);
  // The same records in a log of a later minor version: both warnings say so.
  std::vector<uint8_t> newer = rawLog(payload, 3);
  const uint16_t minor = kc::kLogMinor + 1;
  std::memcpy(newer.data() + 10, &minor, 2);
  d = kc::readLog(newer);
  CHECK(hasIssue(d, ReadIssue::Severity::kWarning,
                 "format version 1." + std::to_string(minor) + " is newer than this reader's 1." +
                     std::to_string(kc::kLogMinor)));
  CHECK(hasIssue(d, ReadIssue::Severity::kWarning,
                 "type 99, at byte 104 in chunk 0): the log's format 1." + std::to_string(minor) + " is newer"));
  CHECK(d.issues.size() == 2);
  CHECK_FALSE(d.damaged());
  CHECK(d.launches.size() == 1);

  payload.clear();
  appendRecord(payload, kc::RecordType::kLaunch, &l, sizeof(l));
  appendRecord(payload, kc::RecordType::kKernel, &l, 40);  // kernel body needs 96 bytes
  appendRecord(payload, kc::RecordType::kLaunch, &l, sizeof(l));
  d = kc::readLog(rawLog(payload, 3));
  CHECK(d.damaged());
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "has a body of 40 bytes, needs 96"));
  CHECK(d.launches.size() == 1);  // records before the bad one are kept, the rest of the chunk is not
  CHECK(d.kernels.empty());
  CHECK(d.chunks_skipped == 1);
}

TEST_CASE("RangeCallbacks records (1.4): read back; a short or impossible one is an error and skipped alone") {
  std::vector<uint8_t> payload;
  const char name[] = "step";
  const kc::StringBody str{1};
  std::vector<uint8_t> string_body(sizeof(str) + 4);
  std::memcpy(string_body.data(), &str, sizeof(str));
  std::memcpy(string_body.data() + sizeof(str), name, 4);
  appendRecord(payload, kc::RecordType::kString, string_body.data(), static_cast<uint32_t>(string_body.size()));
  const kc::ScopeBody scope{1, 0, 1, 0};
  appendRecord(payload, kc::RecordType::kScope, &scope, sizeof(scope));
  const kc::RangeCallbacksBody good{1, 0, 1000, 16, 1600};
  appendRecord(payload, kc::RecordType::kRangeCallbacks, &good, sizeof(good));
  appendRecord(payload, kc::RecordType::kRangeCallbacks, &good, 20);  // cut: 20 of 32 bytes
  const kc::RangeCallbacksBody impossible{1, 0, 10, 11, 1100};         // more timed than callbacks
  appendRecord(payload, kc::RecordType::kRangeCallbacks, &impossible, sizeof(impossible));
  const kc::RangeCallbacksBody again{1, 0, 24, 1, 90};  // the same scope again (joined parts): summed
  appendRecord(payload, kc::RecordType::kRangeCallbacks, &again, sizeof(again));
  appendRecord(payload, kc::RecordType::kEnd, nullptr, 0);
  const kc::LogData d = kc::readLog(rawLog(payload, 7));
  CHECK(d.damaged());
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "range callbacks record in chunk 0 at byte "));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "has a body of 20 bytes, needs 32; skipped"));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "is damaged (scope 1, 10 callbacks, 11 timed); skipped"));
  CHECK(d.issues.size() == 2);
  // The records around the bad ones are read: the chunk is not given up.
  CHECK(d.complete);
  CHECK(d.chunks_skipped == 0);
  REQUIRE(d.range_callbacks.size() == 2);
  CHECK(d.range_callbacks[0].callbacks == 1000);
  CHECK(d.range_callbacks[1].callbacks == 24);
  CHECK(d.scopePath(d.range_callbacks[0].scope_id) == "step");

  // Through LogWriter, plain and packed, in the final chunk: read back as written, no issue.
  for (const auto encoding : {kc::LogEncoding::kPlain, kc::LogEncoding::kCompact}) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink, encoding);
    w.writeString(1, "step");
    w.writeScope({1, 0, 1, 0});
    w.writeRange({50, 500, 1, 7, 7, 0});
    w.writeRangeCallbacks(good);
    w.writeEnd();
    w.flush();
    const kc::LogData r = kc::readLog(sink.bytes);
    CHECK(r.issues.empty());
    CHECK(r.minor == kc::kLogMinor);
    REQUIRE(r.range_callbacks.size() == 1);
    CHECK(r.range_callbacks[0].timed_ns == 1600);
  }
}

TEST_CASE("Stats: the 72-byte body of earlier logs and the body with the not_written_* fields") {
  kc::StatsBody st{};
  st.ranges = 100;
  st.bytes_dropped = 4000;
  st.not_written_launches = 7;
  st.not_written_mem_calls = 2;
  st.not_written_kernels = 5;
  st.not_written_ranges = 40;
  st.not_written_other = 3;
  std::vector<uint8_t> payload;
  appendRecord(payload, kc::RecordType::kStats, &st, kc::kStatsBodyBytesV10);  // as 1.0-1.1 wrote it
  appendRecord(payload, kc::RecordType::kEnd, nullptr, 0);
  kc::LogData d = kc::readLog(rawLog(payload, 2));
  CHECK(d.issues.empty());
  CHECK(d.has_stats);
  CHECK_FALSE(d.has_not_written_stats);
  CHECK(d.stats.ranges == 100);
  CHECK(d.stats.bytes_dropped == 4000);
  CHECK(d.stats.not_written_ranges == 0);

  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  d = kc::readLog(sink.bytes);
  CHECK(d.issues.empty());
  CHECK(d.has_not_written_stats);
  CHECK(d.stats.not_written_launches == 7);
  CHECK(d.stats.not_written_mem_calls == 2);
  CHECK(d.stats.not_written_kernels == 5);
  CHECK(d.stats.not_written_ranges == 40);
  CHECK(d.stats.not_written_other == 3);
}

TEST_CASE("the writer counts the records that reached the sink by kind, memcpy/memset calls apart") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  kc::LaunchBody mem = launch(2, 0);
  mem.flags = kc::kLaunchMemOp;
  w.writeLaunch(launch(1, 0));
  w.writeLaunch(mem);
  CHECK(w.writtenRecords().launches == 0);  // still in the chunk
  w.flush();
  CHECK(w.writtenRecords().launches == 2);
  CHECK(w.writtenRecords().mem_calls == 1);
  CHECK(w.droppedRecords().total() == 0);
}

TEST_CASE("scopePath survives bad string ids, bad parents and cycles") {
  kc::LogData d;
  d.strings = {"", "a", "b"};
  d.scopes.resize(7);
  d.scopes[1] = {1, 0, 999, 0};  // name id out of range
  d.scopes[2] = {2, 3, 1, 0};    // 2 -> 3 -> 2: a cycle
  d.scopes[3] = {3, 2, 2, 0};
  d.scopes[4] = {4, 4, 1, 0};    // its own parent
  d.scopes[5] = {5, 12345, 2, 0};  // parent out of range
  d.scopes[6] = {6, 1, 2, 0};
  CHECK(d.scopePath(1) == "<bad string id 999>");
  CHECK(d.scopePath(6) == "<bad string id 999>/b");
  CHECK(d.scopePath(2) == "<broken parent>/b/a");
  CHECK(d.scopePath(4) == "<broken parent>/a");
  CHECK(d.scopePath(5) == "<broken parent>/b");
  CHECK(d.scopePath(100) == "<bad scope id 100>");

  // A chain deeper than the cap ends too: a valid chain, not a broken parent; its innermost 256 names.
  kc::LogData deep;
  deep.strings = {"", "x"};
  deep.scopes.resize(1000);
  for (uint32_t i = 1; i < 1000; ++i) deep.scopes[i] = {i, i - 1, 1, 0};
  const std::string p = deep.scopePath(999);
  std::string innermost = "x";
  for (int i = 1; i < 256; ++i) innermost += "/x";
  CHECK(p == "<outer ranges past 256 levels>/" + innermost);
  CHECK(deep.scopePath(256) == innermost);  // 256 deep: whole
}

TEST_CASE("a missing file is an error at offset 0") {
  const kc::LogData d = kc::readLogFile("/nonexistent/dir/kcount-x-1.kcount");
  CHECK(d.damaged());
  REQUIRE(d.issues.size() == 1);
  CHECK(d.issues[0].offset == 0);
  CHECK(d.issues[0].message.starts_with("cannot open /nonexistent/dir/kcount-x-1.kcount"));
}

TEST_CASE("references to string or scope ids past every definition are errors, one per id") {
  std::vector<uint8_t> payload;
  const std::string sbody = std::string("\x01\x00\x00\x00", 4) + "step";
  appendRecord(payload, kc::RecordType::kString, sbody.data(), static_cast<uint32_t>(sbody.size()));
  kc::ScopeBody sc{1, 0, 1, 0};
  appendRecord(payload, kc::RecordType::kScope, &sc, sizeof(sc));
  for (uint64_t c = 1; c <= 3; ++c) {
    kc::LaunchBody l = launch(c, c == 3 ? 9 : 1);  // scope 9: never defined
    l.api_id = 1;
    appendRecord(payload, kc::RecordType::kLaunch, &l, sizeof(l));
    kc::KernelBody k = kernel(c, 40);  // string 40: never defined
    appendRecord(payload, kc::RecordType::kKernel, &k, sizeof(k));
  }
  appendRecord(payload, kc::RecordType::kEnd, nullptr, 0);
  const kc::LogData d = kc::readLog(rawLog(payload, 9));
  CHECK(d.damaged());
  CHECK(d.kernels.size() == 3);  // the records are kept
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "string id 40 out of range (2 strings defined): 3 records refer to it, the first is kernel record 0"));
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "scope id 9 out of range (2 scopes defined): 1 record refers to it, the first is launch record 2"));
  // The list counts in words that agree with the number (was "1 scope ids (9), used by 1 records").
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "undefined ids (their definitions were lost; found after reading): 1 string id (40), used by 3 "
                 "records, show as <bad string id N>; 1 scope id (9), used by 1 record, show as <bad scope id N>"));
  CHECK(d.issues.size() == 3);  // one per id, and the list of every undefined id
  // Each per-id message names the place of the first record that used the id (the issue's offset).
  for (const auto& i : d.issues)
    if (i.offset != ReadIssue::kNoOffset)
      CHECK(i.message.ends_with(" at byte " + std::to_string(i.offset) + " in chunk 0"));
  CHECK(d.str(40) == "<bad string id 40>");
}

TEST_CASE("string and scope ids are capped at kMaxIds before any allocation") {
  // A string record with id 2^20 (the first id the library never hands out): no table of that size.
  std::vector<uint8_t> payload;
  const std::string sbody = std::string("\x00\x00\x10\x00", 4) + "x";  // id 1048576
  appendRecord(payload, kc::RecordType::kString, sbody.data(), static_cast<uint32_t>(sbody.size()));
  const std::vector<uint8_t> bytes = rawLog(payload, 1);
  const kc::LogData d = kc::readLog(bytes);
  CHECK(d.strings.size() == 1);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "string id 1048576 at byte 40 is out of range (ids are below 1048576)"));
}

TEST_CASE("sparse ids: a file defining a few high ids (a rotated part) reads without issue") {
  // A part of a rotated run defines only the ids its records use: here 3 strings and 2 scopes whose ids
  // are far above the number of definitions the file holds (and above what its bytes could hold densely).
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeMetadata("pid", "1");
  w.writeString(700001, "step 699999");
  w.writeString(900000, "inner");
  w.writeString(5, "cudaLaunchKernel");
  w.writeScope({400000, kc::kRootScope, 700001, kc::kNoString});
  w.writeScope({400001, 400000, 900000, kc::kNoString});
  w.writeRange({100, 200, 400001, 1, 1, 0});
  w.writeRange({50, 300, 400000, 1, 1, 0});
  kc::LaunchBody l = launch(7, 400001);
  l.api_id = 5;
  w.writeLaunch(l);
  w.writeEnd();
  w.flush();
  REQUIRE(sink.bytes.size() < 1000);
  const kc::LogData d = kc::readLog(sink.bytes);
  for (const auto& i : d.issues) INFO(i.message);
  CHECK(d.issues.empty());
  CHECK(d.complete);
  CHECK(d.scopePath(400001) == "step 699999/inner");
  CHECK(d.str(5) == "cudaLaunchKernel");
  CHECK(d.scopeDefined(400000));
  CHECK_FALSE(d.scopeDefined(399999));  // an id no record of this file uses: not defined here, no issue
  CHECK(d.range_records == 2);
  CHECK(d.launch_records == 1);
}

// ---- Format 1.2: capture windows (Segment records) and rotated files.

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "collector/analysis.h"
#include "collector/file_sink.h"

TEST_CASE("segments: written, read back, and select their own records") {
  kc::MemorySink sink;
  kc::LogWriter w(&sink);
  w.writeString(1, "step");
  w.writeString(2, "k");
  w.writeString(3, "ctl");
  w.writeString(4, "duration");
  w.writeScope({1, 0, 1, 0});
  // Each window's records, its Segment record, then the end of the chunk, as the library writes them.
  for (uint64_t c : {10, 11, 12}) {
    w.writeLaunch(launch(c, 1));
    w.writeKernel(kernel(c, 2));
  }
  w.writeKernel(kernel(13, 2));  // outside the window's span, but written in it: its unmatched kernel
  w.writeRange({1000, 1250, 1, 1, 1, 0});
  w.writeSegment({900, 1300, 10, 12, 0, 3, 3, 0});
  w.flush();
  for (uint64_t c : {30, 31}) {
    w.writeLaunch(launch(c, 1));
    w.writeKernel(kernel(c, 2));
  }
  w.writeRange({3000, 3150, 1, 1, 1, kc::kRangeBeganOutsideWindow});
  w.writeSegment({2900, 3200, 30, 31, 1, 3, 4, kc::kSegmentActivityDiscarded});
  w.flush();
  w.writeEnd();
  w.flush();
  const kc::LogData d = kc::readLog(sink.bytes);
  REQUIRE(d.intact());
  CHECK(d.minor == kc::kLogMinor);
  REQUIRE(d.segments.size() == 2);
  CHECK(d.segments[1].index == 1);
  CHECK(d.str(d.segments[1].end_reason_id) == "duration");
  CHECK(d.segments[1].flags == kc::kSegmentActivityDiscarded);
  const kc::LogData first = kc::selectSegment(d, 0);
  CHECK(first.launches.size() == 3);
  CHECK(first.kernels.size() == 4);
  CHECK(first.ranges.size() == 1);
  const auto totals = kc::segmentTotals(d);
  REQUIRE(totals.size() == 2);
  CHECK(totals[0].kernels == 4);
  CHECK(totals[0].unmatched_kernels == 1);
  CHECK(totals[0].launches == 3);
  CHECK(totals[0].ranges == 1);
  CHECK(totals[0].gpu_ns == 4 * 55);
  CHECK(totals[1].kernels == 2);
  CHECK(totals[1].launches == 2);
  CHECK(totals[1].reason == "ctl");
  CHECK(totals[1].end_reason == "duration");
  CHECK(kc::summarize(first).kernels == 4);
  CHECK(kc::summarize(first).unmatched_kernels == 1);

  // A segment naming a string that was never defined is reported like any bad reference.
  kc::MemorySink bad;
  kc::LogWriter wb(&bad);
  wb.writeSegment({1, 2, 0, 0, 0, 77, 0, 0});
  wb.writeEnd();
  wb.flush();
  const kc::LogData db = kc::readLog(bad.bytes);
  CHECK(hasIssue(db, ReadIssue::Severity::kError, "string id 77 out of range"));
  CHECK(kc::segmentTotals(db).size() == 1);

  // A segment record cut short stops its chunk with an error, like every known record type.
  std::vector<uint8_t> cut = sink.bytes;
  kc::MemorySink one;
  kc::LogWriter w1(&one, kc::LogEncoding::kPlain);  // the plain layout is edited byte by byte below
  w1.writeSegment({900, 1300, 10, 12, 0, 0, 0, 0});
  w1.flush();
  std::vector<uint8_t> b = one.bytes;
  const size_t rec = sizeof(kc::FileHeader) + sizeof(kc::ChunkHeader);
  uint32_t short_body = 40;
  std::memcpy(b.data() + rec + 4, &short_body, 4);
  kc::ChunkHeader ch;
  std::memcpy(&ch, b.data() + sizeof(kc::FileHeader), sizeof(ch));
  ch.payload_bytes = 8 + 40;
  b.resize(rec + 48);
  ch.checksum = XXH3_64bits(b.data() + rec, 48);
  std::memcpy(b.data() + sizeof(kc::FileHeader), &ch, sizeof(ch));
  const kc::LogData ds = kc::readLog(b);
  CHECK(hasIssue(ds, ReadIssue::Severity::kError, "segment record in chunk 0"));
  CHECK(ds.segments.empty());
}

namespace {
struct PreambleCtx {
  std::vector<std::pair<uint32_t, std::string>> strings;
  int calls = 0;
};
void preamble(kc::LogWriter& w, void* p) {
  auto* c = static_cast<PreambleCtx*>(p);
  ++c->calls;
  w.writeMetadata("pid", "7");
  for (const auto& [id, s] : c->strings) w.writeString(id, s);
}
}  // namespace

TEST_CASE("rotation: each file starts with a file header and the definitions its records use") {
  kc::MemorySink sink;
  sink.max_bytes = 4096;
  sink.max_files = 3;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);  // chunk sizes below are those of plain chunks
  PreambleCtx ctx;
  w.setPreamble(&preamble, &ctx);
  w.writeMetadata("pid", "7");
  w.writeString(1, "gemm");
  ctx.strings.emplace_back(1, "gemm");
  uint64_t written = 0;
  for (uint64_t c = 1; c <= 200; ++c) {
    w.writeKernel(kernel(c, 1));
    ++written;
    if (c % 10 == 0) w.flush();  // chunks of about 1 KiB
  }
  w.flush();
  REQUIRE(sink.files.size() == 2);  // third file is `bytes`
  CHECK(w.rotations() == 2);
  CHECK(ctx.calls == 2);
  uint64_t read = 0;
  std::vector<std::vector<uint8_t>> files = sink.files;
  files.push_back(sink.bytes);
  for (const auto& f : files) {
    CHECK(f.size() <= 4096);
    const kc::LogData d = kc::readLog(f);
    CHECK_FALSE(d.damaged());
    CHECK(d.meta("pid") == "7");
    for (const auto& k : d.kernels) CHECK(d.str(k.name_id) == "gemm");
    read += d.kernels.size();
  }
  CHECK(read < written);              // the third file filled up: the rest was refused
  CHECK(w.droppedBytes() > 0);        // and counted
  CHECK(read + w.droppedRecords().kernels == written);
  CHECK(kc::readLog(files[0]).kernels.front().correlation_id == 1);
}

TEST_CASE("rotation: definitions that do not fit in a part are reported as such, and counted") {
  kc::MemorySink sink;
  sink.max_bytes = 4096;
  sink.max_files = 3;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  PreambleCtx ctx;
  for (uint32_t id = 1; id <= 200; ++id) ctx.strings.emplace_back(id, "kernel_name_" + std::to_string(id));
  w.setPreamble(&preamble, &ctx);
  w.writeMetadata("pid", "7");
  for (uint64_t c = 1; c <= 400; ++c) {
    w.writeKernel(kernel(c, 1));
    if (c % 10 == 0) w.flush();
  }
  w.flush();
  CHECK(ctx.calls == 1);               // the second part could not hold its definitions: no third part
  REQUIRE(sink.refusals.size() == 1);  // one report, naming the definitions and what to change
  CHECK(sink.refusals[0].find("the records every part starts with (201 records") != std::string::npos);
  CHECK(sink.refusals[0].find("KCOUNT_MAX_BYTES") != std::string::npos);
  CHECK(w.droppedRecords().other == 201);
  CHECK(w.droppedRecords().kernels > 0);
}

TEST_CASE("output pattern: %h and %r are one file name part each") {
  CHECK(kc::expandOutputPattern("/x/k-%h-%r-%p.kcount", 12, "node1", "3") == "/x/k-node1-3-12.kcount");
  CHECK(kc::expandOutputPattern("/x/k-%r.kcount", 1, "h", "") == "/x/k-norank.kcount");
  CHECK(kc::expandOutputPattern("/x/k-%r.kcount", 1, "h", "../../etc/x") == "/x/k-.._.._etc_x.kcount");
  CHECK(kc::expandOutputPattern("/x/%r/k.kcount", 1, "h", "..") == "/x/__/k.kcount");
  CHECK(kc::expandOutputPattern("/x/%h/k.kcount", 1, ".", "0") == "/x/_/k.kcount");
  CHECK(kc::expandOutputPattern("/x/%r/k.kcount", 1, "h", "1.5") == "/x/1.5/k.kcount");
  CHECK(kc::expandOutputPattern("/x/100%%-%q.kcount", 1, "h", "0") == "/x/100%-%q.kcount");
}

TEST_CASE("the log path is made absolute against the working directory") {
  CHECK(kc::absoluteLogPath("./kcount-h-1.kcount", "/w") == "/w/kcount-h-1.kcount");
  CHECK(kc::absoluteLogPath("d/a.kcount", "/w/") == "/w/d/a.kcount");
  CHECK(kc::absoluteLogPath(".//./a.kcount", "/w") == "/w/a.kcount");
  CHECK(kc::absoluteLogPath("../a.kcount", "/w") == "/w/../a.kcount");
  CHECK(kc::absoluteLogPath("a.kcount", "/") == "/a.kcount");
  CHECK(kc::absoluteLogPath("/x/a.kcount", "/w") == "/x/a.kcount");
  CHECK(kc::absoluteLogPath("a.kcount", "") == "a.kcount");  // getcwd() failed
}

TEST_CASE("rotation on disk: next names, never an existing file") {
  CHECK(kc::rotatedPath("/x/kcount-h-1.kcount", 1) == "/x/kcount-h-1.1.kcount");
  CHECK(kc::rotatedPath("/x/log", 2) == "/x/log.2");
  char dir[] = "/tmp/kcount-rotation-test.XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string base = std::string(dir) + "/r.kcount";
  { std::ofstream(std::string(dir) + "/r.1.kcount") << "keep"; }
  std::vector<std::string> opened;
  {
    kc::FileSink sink(base, 0600, 3000, nullptr, 3, [&](const std::string& p) { opened.push_back(p); });
    kc::LogWriter w(&sink, kc::LogEncoding::kPlain);  // chunk sizes below are those of plain chunks
    PreambleCtx ctx;
    ctx.strings.emplace_back(1, "gemm");
    w.setPreamble(&preamble, &ctx);
    w.writeString(1, "gemm");
    for (uint64_t c = 1; c <= 100; ++c) {
      w.writeKernel(kernel(c, 1));
      if (c % 10 == 0) w.flush();
    }
    w.flush();
    CHECK(sink.files() == opened);
  }
  REQUIRE(opened.size() == 3);
  CHECK(opened[0] == base);
  CHECK(opened[1] == std::string(dir) + "/r.1-1.kcount");  // r.1.kcount existed: a duplicate name, still *.kcount
  CHECK(opened[2] == std::string(dir) + "/r.2.kcount");
  std::ifstream keep(std::string(dir) + "/r.1.kcount");
  CHECK(std::string((std::istreambuf_iterator<char>(keep)), std::istreambuf_iterator<char>()) == "keep");
  for (const auto& p : opened) {
    CHECK(std::filesystem::file_size(p) <= 3000);
    const kc::LogData d = kc::readLogFile(p);
    CHECK_FALSE(d.damaged());
    CHECK_FALSE(d.kernels.empty());
  }
  std::filesystem::remove_all(dir);
}

// ---- Size cap: chunks sealed to fit, rotation until the last file is full, drops counted exactly.

namespace {
struct CapRun {
  std::vector<std::vector<uint8_t>> files;
  kc::RecordCounts dropped;
  kc::RecordCounts written;
  std::vector<std::string> refusals;
  uint64_t ranges_pushed = 0;
};
void capPreamble(kc::LogWriter& w, void*) {
  w.writeMetadata("host", "h");
  w.writeMetadata("pid", "7");
  w.writeMetadata("start_ns", "100");
  w.writeMetadata(kc::kMetaRotatedFile, std::to_string(w.rotations()));
  w.writeString(1, "step");
  w.writeScope(kc::ScopeBody{1, 0, 1, 0});
}
/// A run as the library writes it: metadata, definitions, `ranges` ranges flushed every `flush_every`
/// (0: only at the end, one chunk far larger than the cap), Stats and End in the final chunk.
CapRun capRun(size_t cap, uint32_t max_files, uint64_t ranges, uint64_t flush_every,
              kc::LogEncoding enc = kc::LogEncoding::kCompact) {
  kc::MemorySink sink;
  sink.max_bytes = cap;
  sink.max_files = max_files;
  kc::LogWriter w(&sink, enc);
  w.setPreamble(&capPreamble, nullptr);
  w.writeMetadata("host", "h");
  w.writeMetadata("pid", "7");
  w.writeMetadata("start_ns", "100");
  w.writeString(1, "step");
  w.writeScope(kc::ScopeBody{1, 0, 1, 0});
  CapRun run;
  uint64_t x = 88172645463325252ull, t = 1000;  // xorshift64: times that compress like real ones, not to nothing
  for (uint64_t i = 0; i < ranges; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    kc::RangeBody r{};
    t += 50 + (x & 0xfff);
    r.begin_ns = t;
    r.end_ns = r.begin_ns + 40 + ((x >> 20) & 0x3ff);
    r.scope_id = 1;
    r.thread_id = r.end_thread_id = 42;
    w.writeRange(r);
    ++run.ranges_pushed;
    if (flush_every != 0 && (i + 1) % flush_every == 0) w.flush();
  }
  w.flush();
  kc::StatsBody st{};
  st.ranges = ranges;
  st.bytes_dropped = w.droppedBytes();  // as the library's Stats record says
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  run.files = sink.files;
  run.files.push_back(sink.bytes);
  run.dropped = w.droppedRecords();
  run.written = w.writtenRecords();
  run.refusals = sink.refusals;
  return run;
}
}  // namespace

TEST_CASE("size cap: with any cap from the minimum, files fill up to the last one and drops are counted exactly") {
  for (size_t cap : {size_t{4096}, size_t{65536}}) {
    for (uint64_t flush_every : {uint64_t{0}, uint64_t{5000}}) {  // one huge chunk, or periodic chunks
      for (auto enc : {kc::LogEncoding::kCompact, kc::LogEncoding::kPlain}) {
        CAPTURE(cap);
        CAPTURE(flush_every);
        CAPTURE(static_cast<int>(enc));
        const CapRun run = capRun(cap, 3, 400000, flush_every, enc);
        REQUIRE(run.files.size() == 3);
        uint64_t read = 0;
        for (size_t i = 0; i < run.files.size(); ++i) {
          CAPTURE(i);
          const auto& f = run.files[i];
          CHECK(f.size() <= cap);
          CHECK(f.size() + 2 * kc::LogWriter::kTailReserve >= cap);  // filled, not cut short
          const kc::LogData d = kc::readLog(f);
          CHECK(d.intact());
          CHECK(d.rotationPart() == i);
          if (i + 1 < run.files.size()) {
            CHECK(d.isContinuedPart());
            CHECK(d.continuedInPart() == i + 1);
            CHECK(d.issues.empty());  // no "no end record" warning for a part
          } else {
            CHECK(d.complete);  // the reserve holds Stats and End
            CHECK(d.has_stats);
          }
          read += d.range_records;
        }
        CHECK(run.dropped.ranges > 0);
        CHECK(read + run.dropped.ranges == run.ranges_pushed);
        CHECK(run.written.ranges == read);  // what the files hold, as the closing line reports it
        REQUIRE(run.refusals.size() == 1);  // one report, at the first chunk kept out
        CHECK(run.refusals[0].find(" ranges") != std::string::npos);
      }
    }
  }
}

// The closing records of a capped log: a String (the segment's end reason, interned at exit), the Segment
// record naming it, metadata, Stats and End. Appended one by one under the cap check, the String could be
// flushed alone into a chunk kept out at the cap while the Segment went into the final chunk the reserve
// holds: a record without its definition (seen as "string id N out of range", a damaged log). With
// beginFinalChunk() they go out together, whatever the cap.
TEST_CASE("size cap: the closing records go out in one final chunk, never split from their definitions") {
  size_t fitted = 0, capped = 0;
  for (size_t cap = 700; cap <= 2600; ++cap) {
    CAPTURE(cap);
    kc::MemorySink sink;
    sink.max_bytes = cap;
    sink.max_files = 1;
    kc::LogWriter w(&sink, kc::LogEncoding::kCompact);
    w.writeMetadata("host", "h");
    kc::test::writeDistinctNames(w, 2, 40, "name_", 8);
    w.beginFinalChunk();
    w.writeString(40, "exit");
    kc::SegmentBody seg{};
    seg.reason_id = 2;
    seg.end_reason_id = 40;
    seg.stop_ns = 5;
    w.writeString(2, "name_again");  // a definition written again before its use replaces the first
    w.writeSegment(seg);
    w.writeMetadata("records_not_written", "some");
    w.writeStats(kc::StatsBody{});
    w.writeEnd();
    w.flush();
    const kc::LogData d = kc::readLog(sink.bytes);
    CHECK(d.intact());
    CHECK(d.complete);
    REQUIRE(d.segments.size() == 1);  // the final chunk fits in the reserve at every cap
    CHECK(d.stringDefined(d.segments[0].end_reason_id));
    CHECK(d.str(d.segments[0].end_reason_id) == "exit");
    CHECK(d.str(d.segments[0].reason_id) == "name_again");
    (w.droppedRecords().total() > 0 ? capped : fitted) += 1;
  }
  CHECK(capped > 0);  // caps where earlier chunks were kept out...
  CHECK(fitted > 0);  // ...and caps where everything fit
}

// Many distinct names under a small cap: the chunks that defined them are kept out, the end reason is
// interned last (id 3003) and written in the final chunk, far past what the few kept bytes could define.
// Ids are the run's (sparse in a file), so the id is read either way. The Stats' kept-out bytes explain
// the final chunk's sequence jump (the kept-out chunks took their numbers): no warning then.
TEST_CASE("size cap: a late definition with a high id is read, whether or not the Stats say bytes were kept out") {
  for (const bool dropped : {true, false}) {
    CAPTURE(dropped);
    const kc::test::LateNameLog log = kc::test::lateNameLog(/*segment=*/true, /*stats_count_dropped=*/dropped);
    REQUIRE(log.dropped.total() > 0);
    const kc::LogData d = kc::readLog(log.bytes);
    CHECK(d.complete);
    REQUIRE(d.segments.size() == 1);
    CHECK(d.str(d.segments[0].end_reason_id) == "exit");
    for (const auto& i : d.issues) CHECK_MESSAGE(i.message.find("string id 3003") == std::string::npos, i.message);
    if (dropped) {
      CHECK(d.intact());
      for (const auto& i : d.issues) CHECK_MESSAGE(i.severity != kc::ReadIssue::Severity::kWarning, i.message);
    }
  }
}

// A chunk cut out of a log, or one repeated in it, verifies like any other: only the chunks' sequence
// numbers tell. Cut: its records are missing though the Stats record says nothing was dropped (an error;
// without Stats, a warning). Repeated: its records would count twice (an error, the copy is skipped).
// A sequence number alone out of line (it is outside the checksum: a damaged header) is a warning only.
// A summary-mode log's snapshots are cumulative and the analysis takes the last: with its chunks moved, the
// last is the one written last (before, the one last in the file: an earlier snapshot's smaller totals).
TEST_CASE("chunks moved in a summary-mode log: the snapshot written last is the last one") {
  kc::MemorySink sink;
  {
    kc::LogWriter w(&sink);
    w.writeMetadata("mode", "summary");
    w.flush();
    for (uint32_t i = 0; i < 2; ++i) {
      kc::SnapshotBeginBody b{};
      b.time_ns = 1000 * (i + 1);
      b.sequence = i;
      b.launches = b.kernels = 10 * (i + 1);
      w.writeSnapshotBegin(b);
      w.writeSnapshotEnd({i, 0});
      w.flush();  // each snapshot in a chunk of its own: chunks 1 and 2
    }
    w.writeEnd();
    w.flush();
  }
  const std::vector<size_t> at = kc::test::chunkOffsets(sink.bytes);
  REQUIRE(at.size() == 4);
  std::vector<uint8_t> moved(sink.bytes.begin(), sink.bytes.begin() + static_cast<long>(at[1]));
  moved.insert(moved.end(), sink.bytes.begin() + static_cast<long>(at[2]), sink.bytes.begin() + static_cast<long>(at[3]));
  moved.insert(moved.end(), sink.bytes.begin() + static_cast<long>(at[1]), sink.bytes.begin() + static_cast<long>(at[2]));
  moved.insert(moved.end(), sink.bytes.begin() + static_cast<long>(at[3]), sink.bytes.end());
  const kc::LogData d = kc::readLog(moved);
  CHECK(d.intact());
  CHECK(d.chunks_out_of_order == 1);  // chunks 1 and 2 swapped: moving one back restores the order
  REQUIRE(d.snapshots.size() == 2);
  CHECK(d.snapshots.back().begin.sequence == 1);
  CHECK(d.snapshots.back().begin.launches == 20);
}

// Chunks moved are decoded in write order (their sequence numbers): a snapshot written across two chunks is
// whole whichever comes first in the file, and capture windows are listed as they were written (before,
// records went in file order: the snapshot was dropped as incomplete, segment 1 was listed before segment 0).
TEST_CASE("chunks moved: records are decoded in write order (a snapshot across chunks, capture windows)") {
  kc::MemorySink sink;
  {
    kc::LogWriter w(&sink);
    w.writeMetadata("mode", "summary");
    w.flush();  // chunk 0
    kc::SnapshotBeginBody b{};
    b.time_ns = 1000;
    b.sequence = 0;
    b.scope_rows = 2;
    b.launches = 7;
    w.writeSnapshotBegin(b);
    w.writeSnapshotScope(kc::SnapshotScopeBody{0, 0, 1, 1, 3});
    w.flush();  // chunk 1: the snapshot's begin and first row
    w.writeSnapshotScope(kc::SnapshotScopeBody{0, 0, 1, 1, 4});
    w.writeSnapshotEnd({0, 2});
    w.writeSegment({10, 20, 0, 0, 0, 0, 0, 0});
    w.flush();  // chunk 2: the rest of it, and window 0
    w.writeSegment({30, 40, 0, 0, 1, 0, 0, 0});
    w.flush();  // chunk 3: window 1
    w.writeEnd();
    w.flush();
  }
  const std::vector<size_t> at = kc::test::chunkOffsets(sink.bytes);
  REQUIRE(at.size() == 5);
  auto piece = [&](size_t k) {
    const size_t to = k + 1 < at.size() ? at[k + 1] : sink.bytes.size();
    return std::vector<uint8_t>(sink.bytes.begin() + static_cast<long>(at[k]), sink.bytes.begin() + static_cast<long>(to));
  };
  for (const auto& order : {std::vector<size_t>{0, 2, 1, 3, 4}, std::vector<size_t>{0, 3, 2, 1, 4},
                            std::vector<size_t>{0, 4, 3, 2, 1}}) {
    CAPTURE(order);
    std::vector<uint8_t> moved(sink.bytes.begin(), sink.bytes.begin() + static_cast<long>(at[0]));
    for (size_t k : order) {
      const auto p = piece(k);
      moved.insert(moved.end(), p.begin(), p.end());
    }
    const kc::LogData d = kc::readLog(moved);
    CHECK(d.intact());
    CHECK(d.complete);
    CHECK(d.chunks_out_of_order > 0);
    CHECK(d.incomplete_snapshots == 0);
    REQUIRE(d.snapshots.size() == 1);
    CHECK(d.snapshots[0].scopes.size() == 2);
    CHECK(d.snapshots[0].begin.launches == 7);
    REQUIRE(d.segments.size() == 2);
    CHECK(d.segments[0].index == 0);
    CHECK(d.segments[1].index == 1);
  }
}

TEST_CASE("chunk sequence numbers: a chunk cut out or repeated is an error, not a complete log") {
  auto write = [](bool closed) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink, kc::LogEncoding::kCompact);
    w.writeMetadata("host", "h");
    w.writeString(2, "step");
    w.writeString(3, "cudaLaunchKernel");  // kc::test::launch()'s api_id
    w.writeScope(kc::ScopeBody{2, 0, 2, 0});
    for (uint64_t c = 1; c <= 40; ++c) {
      w.writeLaunch(kc::test::launch(c, 2));
      if (c % 10 == 0) w.flush();  // chunk 0 holds the definitions and 10 launches; chunks 1-3 10 each
    }
    if (closed) {
      kc::StatsBody st{};
      st.launches = 40;
      w.writeStats(st);
      w.writeEnd();
      w.flush();
    }
    return sink.bytes;
  };
  const std::vector<uint8_t> whole = write(true);
  const kc::LogData ok = kc::readLog(whole);
  REQUIRE(ok.intact());
  REQUIRE(ok.launches.size() == 40);
  const std::vector<size_t> at = kc::test::chunkOffsets(whole);
  REQUIRE(at.size() == 5);  // 4 chunks of launches, then Stats and End

  SUBCASE("a chunk cut out of a closed log: error, the rest read") {
    std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<long>(at[2]));
    cut.insert(cut.end(), whole.begin() + static_cast<long>(at[3]), whole.end());
    const kc::LogData d = kc::readLog(cut);
    CHECK(!d.intact());
    CHECK(d.complete);
    CHECK(d.launches.size() == 30);
    REQUIRE(!d.issues.empty());
    CHECK(d.issues[0].severity == kc::ReadIssue::Severity::kError);
    CHECK(d.issues[0].offset == at[2]);
    CHECK(d.issues[0].message.find("1 chunk missing: chunk 2 at byte " +
                                   std::to_string(at[2])) == 0);
    CHECK(d.issues[0].message.find("stats record says no bytes were dropped") != std::string::npos);
  }
  SUBCASE("the chunk before the final one cut: no chunk after it confirms the jump, the Stats counts do") {
    std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<long>(at[3]));
    cut.insert(cut.end(), whole.begin() + static_cast<long>(at[4]), whole.end());
    const kc::LogData d = kc::readLog(cut);
    CHECK(!d.intact());
    CHECK(d.launches.size() == 30);
    REQUIRE(!d.issues.empty());
    CHECK(d.issues[0].message.find("1 chunk missing: chunk 3 at byte ") == 0);
    CHECK(d.issues[0].message.find("carries sequence number 4 where 3 was expected (number 3 is not in the file)") !=
          std::string::npos);
  }
  SUBCASE("a chunk repeated: error, its copy not counted") {
    std::vector<uint8_t> twice(whole.begin(), whole.begin() + static_cast<long>(at[2]));
    twice.insert(twice.end(), whole.begin() + static_cast<long>(at[1]), whole.end());  // chunk 1 again
    const kc::LogData d = kc::readLog(twice);
    CHECK(!d.intact());
    CHECK(d.complete);
    CHECK(d.launches.size() == 40);
    REQUIRE(d.issues.size() == 1);
    CHECK(d.issues[0].message.find("chunk 2 at byte " + std::to_string(at[2]) +
                                   " repeats an earlier chunk (same bytes and sequence number 1;") == 0);
  }
  SUBCASE("one chunk's sequence number damaged: a warning, every record read") {
    for (size_t k = 0; k < at.size(); ++k) {
      CAPTURE(k);
      std::vector<uint8_t> flipped = whole;
      flipped[at[k] + 16] ^= 0x40;  // the sequence field (docs/format.md: offset 16 in both chunk headers)
      const kc::LogData d = kc::readLog(flipped);
      CHECK(d.intact());
      CHECK(d.complete);
      CHECK(d.launches.size() == 40);
      REQUIRE(d.issues.size() == 1);
      CHECK(d.issues[0].severity == kc::ReadIssue::Severity::kWarning);
      CHECK(d.issues[0].message.find("chunk " + std::to_string(k) + " at byte " + std::to_string(at[k]) +
                                     " carries sequence number ") == 0);
      // A chunk follows whose number is the one expected after it (all but the last): the header is damaged,
      // nothing is missing, and the warning says so rather than "no chunk after it tells which".
      const bool followed = k + 1 < at.size();
      const bool says_damaged =
          d.issues[0].message.find("a damaged chunk header, since the chunk after it carries the number expected") !=
          std::string::npos;
      CHECK(says_damaged == followed);
    }
  }
  SUBCASE("two chunks swapped: every record read, the warning says out of write order, nothing missing") {
    std::vector<uint8_t> swapped(whole.begin(), whole.begin() + static_cast<long>(at[1]));
    swapped.insert(swapped.end(), whole.begin() + static_cast<long>(at[2]), whole.begin() + static_cast<long>(at[3]));
    swapped.insert(swapped.end(), whole.begin() + static_cast<long>(at[1]), whole.begin() + static_cast<long>(at[2]));
    swapped.insert(swapped.end(), whole.begin() + static_cast<long>(at[3]), whole.end());
    const kc::LogData d = kc::readLog(swapped);
    CHECK(d.intact());
    CHECK(d.complete);
    CHECK(d.launches.size() == 40);
    CHECK(d.chunks_out_of_order == 1);  // two chunks swapped: moving one back restores the order
    REQUIRE(d.issues.size() == 1);
    CHECK(d.issues[0].severity == kc::ReadIssue::Severity::kWarning);
    CHECK(d.issues[0].message.find("chunks out of write order: chunk 1 at byte " + std::to_string(at[1]) +
                                   " carries sequence number 2 where 1 was expected") == 0);
    CHECK(d.issues[0].message.find("every number from 0 to 4 is in the file once") != std::string::npos);
  }
  // Pieces of `whole` in the given order of its chunks (indexes into `at`; at[5] is the end of the file).
  auto chunksInOrder = [&](const std::vector<size_t>& order) {
    std::vector<size_t> bounds = at;
    bounds.push_back(whole.size());
    std::vector<uint8_t> out(whole.begin(), whole.begin() + static_cast<long>(at[0]));
    for (size_t k : order)
      out.insert(out.end(), whole.begin() + static_cast<long>(bounds[k]), whole.begin() + static_cast<long>(bounds[k + 1]));
    return out;
  };
  SUBCASE("the End chunk moved before other chunks: the chunks after it are read, out of write order") {
    for (const auto& order : {std::vector<size_t>{0, 4, 1, 2, 3}, std::vector<size_t>{0, 1, 2, 4, 3},
                              std::vector<size_t>{4, 0, 1, 2, 3}}) {
      CAPTURE(order[1]);
      const kc::LogData d = kc::readLog(chunksInOrder(order));
      CHECK(d.intact());
      CHECK(d.complete);
      CHECK(!d.dataAfterEnd());
      CHECK(d.launches.size() == 40);
      CHECK(d.chunks_read == 5);
      CHECK(d.chunks_skipped == 0);
      CHECK(d.chunks_out_of_order > 0);
      REQUIRE(d.issues.size() == 1);
      CHECK(d.issues[0].message.find("chunks out of write order") == 0);
    }
  }
  SUBCASE("after the End chunk: a repeated chunk, or a chunk of no missing number, is not read") {
    const kc::LogData again = kc::readLog(chunksInOrder({0, 1, 2, 3, 4, 3}));  // chunk 3 twice
    CHECK(again.dataAfterEnd());
    CHECK(again.launches.size() == 40);
    CHECK(again.chunks_out_of_order == 0);
    std::vector<uint8_t> twice = whole;  // a second log after the End chunk: its header is not a chunk
    twice.insert(twice.end(), whole.begin(), whole.end());
    const kc::LogData two = kc::readLog(twice);
    CHECK(two.after_end_is_log);
    CHECK(two.launches.size() == 40);
  }
  SUBCASE("every order of the chunks: out of write order, every record read, nothing missing") {
    // Before, a jump confirmed by the next chunk was called chunks missing while the chunk read, even where
    // the numbers jumped over came later in the file (1,2,0 of a 3-chunk log: an error and DAMAGED).
    std::vector<size_t> order{0, 1, 2, 3, 4};
    size_t orders = 0;
    while (std::next_permutation(order.begin(), order.end())) {
      CAPTURE(order);
      const kc::LogData d = kc::readLog(chunksInOrder(order));
      ++orders;
      CHECK(d.intact());
      CHECK(d.complete);
      CHECK(!d.dataAfterEnd());
      CHECK(d.launches.size() == 40);
      CHECK(d.chunks_read == 5);
      // Chunks moved: the fewest that, moved back, restore the order (5 less the longest increasing run).
      std::vector<size_t> run(order.size(), 1);
      size_t longest = 0;
      for (size_t i = 0; i < order.size(); ++i) {
        for (size_t j = 0; j < i; ++j)
          if (order[j] < order[i]) run[i] = std::max(run[i], run[j] + 1);
        longest = std::max(longest, run[i]);
      }
      const uint64_t moved = order.size() - longest;
      CHECK(d.chunks_out_of_order == moved);
      REQUIRE(d.issues.size() == 1);
      CHECK(d.issues[0].message.find("chunks out of write order") == 0);
      CHECK(d.issues[0].message.find(moved == 1 ? "; 1 chunk was moved (the fewest that, moved back, restore the "
                                                  "write order: number "
                                                : "; " + std::to_string(moved) + " chunks were moved (the fewest that, "
                                                  "moved back, restore the write order: numbers ") != std::string::npos);
    }
    CHECK(orders == 119);
  }
  SUBCASE("the End chunk moved, then other damage: the chunks after it are read, the damage named as itself") {
    // Before, the chunks after the End chunk were read only if they filled every gap to the end of the
    // file: any other damage left them unread and called them missing.
    const kc::LogData lost = kc::readLog(chunksInOrder({0, 1, 4, 3}));  // chunk 2 lost
    CHECK(!lost.dataAfterEnd());
    CHECK(lost.launches.size() == 30);
    CHECK(lost.chunks_read == 4);
    REQUIRE(lost.issues.size() == 1);
    CHECK(lost.issues[0].severity == kc::ReadIssue::Severity::kError);
    CHECK(lost.issues[0].message.find("1 chunk missing: number 2 is not in the file (its end record's chunk carries "
                                      "number 4, the last written); its chunks are also out of write order") == 0);
    const std::vector<uint8_t> moved = chunksInOrder({0, 4, 1, 2, 3});
    std::vector<uint8_t> zeros = moved;
    zeros.insert(zeros.end(), 4096, 0);
    const kc::LogData z = kc::readLog(zeros);
    CHECK(z.intact());
    CHECK(z.launches.size() == 40);
    CHECK(z.zero_tail_bytes == 4096);
    CHECK(z.chunks_out_of_order > 0);
    std::vector<uint8_t> trailing = moved;
    trailing.insert(trailing.end(), 100, 0x55);
    const kc::LogData t = kc::readLog(trailing);
    CHECK(t.intact());
    CHECK(t.launches.size() == 40);
    CHECK(t.after_end_offset == moved.size());
    CHECK(t.after_end_bytes == 100);
    CHECK(!t.after_end_is_log);
    std::vector<uint8_t> second = moved;
    second.insert(second.end(), whole.begin(), whole.end());
    const kc::LogData two = kc::readLog(second);
    CHECK(two.intact());
    CHECK(two.launches.size() == 40);
    CHECK(two.after_end_is_log);
    CHECK(two.after_end_offset == moved.size());
    const std::vector<uint8_t> cut(moved.begin(), moved.end() - 5);  // chunk 3, last in the file, cut short
    const kc::LogData c = kc::readLog(cut);
    CHECK(c.truncated);
    CHECK(c.launches.size() == 30);
    REQUIRE(!c.issues.empty());
    CHECK(c.issues[0].message.find("truncated at byte " + std::to_string(cut.size()) + " in chunk 4") == 0);
  }
  SUBCASE("junk where the intact chunks carry every number: junk bytes, no chunk skipped, numbering kept") {
    // Before, junk before chunk 0, junk between moved chunks and junk holding a chunk header were counted
    // as skipped chunks, which shifted the numbers of the chunks after them.
    auto junkAt = [&](const std::vector<uint8_t>& log, size_t at, const std::vector<uint8_t>& junk) {
      std::vector<uint8_t> out(log.begin(), log.begin() + static_cast<long>(at));
      out.insert(out.end(), junk.begin(), junk.end());
      out.insert(out.end(), log.begin() + static_cast<long>(at), log.end());
      return out;
    };
    kc::ChunkHeader fake{kc::kChunkMagic, 8, 0x1234, 1, 1};  // plausible length, checksum that fails
    std::vector<uint8_t> fake_bytes(sizeof(fake) + 8, 0x07);
    std::memcpy(fake_bytes.data(), &fake, sizeof(fake));
    const std::vector<uint8_t> swapped = chunksInOrder({0, 2, 1, 3, 4});
    const size_t swapped_at = at[1] + (at[3] - at[2]);  // between the moved chunks 2 and 1
    struct Case {
      const char* name;
      std::vector<uint8_t> bytes;
      size_t at, length;
      std::string between;
    };
    const std::vector<Case> cases{
        {"1 byte before chunk 0", junkAt(whole, at[0], {0x01}), at[0], 1, "the file header and chunk 0"},
        {"100 bytes before chunk 0", junkAt(whole, at[0], std::vector<uint8_t>(100, 0x01)), at[0], 100,
         "the file header and chunk 0"},
        {"between moved chunks", junkAt(swapped, swapped_at, std::vector<uint8_t>(40, 0x01)), swapped_at, 40,
         "chunk 1 and chunk 2"},
        {"a fake chunk header", junkAt(whole, at[2], fake_bytes), at[2], fake_bytes.size(), "chunk 1 and chunk 2"},
    };
    for (const Case& k : cases) {
      CAPTURE(k.name);
      const kc::LogData d = kc::readLog(k.bytes);
      CHECK(d.complete);
      CHECK(!d.intact());
      CHECK(d.launches.size() == 40);
      CHECK(d.chunks_read == 5);
      CHECK(d.chunks_skipped == 0);
      CHECK(d.junk_bytes == k.length);
      size_t errors = 0;
      for (const auto& i : d.issues) errors += i.severity == kc::ReadIssue::Severity::kError;
      CHECK(errors == 1);
      const auto junk = std::find_if(d.issues.begin(), d.issues.end(),
                                     [](const kc::ReadIssue& i) { return i.severity == kc::ReadIssue::Severity::kError; });
      REQUIRE(junk != d.issues.end());
      CHECK(junk->offset == k.at);
      CHECK(junk->message.find(kc::counted(k.length, "junk byte") + " (bytes " + std::to_string(k.at) + " to " +
                               std::to_string(k.at + k.length) + ") between " + k.between + ", skipped") !=
            std::string::npos);
    }
  }
  SUBCASE("junk bytes between two chunks: reported with their offset and length, no chunk skipped") {
    for (const size_t junk : {size_t{16}, size_t{4096}}) {
      CAPTURE(junk);
      std::vector<uint8_t> padded(whole.begin(), whole.begin() + static_cast<long>(at[2]));
      padded.insert(padded.end(), junk, 0);
      padded.insert(padded.end(), whole.begin() + static_cast<long>(at[2]), whole.end());
      const kc::LogData d = kc::readLog(padded);
      CHECK(d.complete);
      CHECK(d.launches.size() == 40);
      CHECK(d.chunks_read == 5);
      CHECK(d.chunks_skipped == 0);
      REQUIRE(d.issues.size() == 1);
      CHECK(d.issues[0].severity == kc::ReadIssue::Severity::kError);
      CHECK(d.issues[0].offset == at[2]);
      CHECK(d.issues[0].message.find(std::to_string(junk) + " junk bytes (bytes " + std::to_string(at[2]) + " to " +
                                     std::to_string(at[2] + junk) + ") between chunk 1 and chunk 2, skipped") !=
            std::string::npos);
    }
  }
  SUBCASE("the file header repeated between two chunks: junk, not a second log") {
    std::vector<uint8_t> padded(whole.begin(), whole.begin() + static_cast<long>(at[2]));
    padded.insert(padded.end(), whole.begin(), whole.begin() + sizeof(kc::FileHeader));
    padded.insert(padded.end(), whole.begin() + static_cast<long>(at[2]), whole.end());
    const kc::LogData d = kc::readLog(padded);
    CHECK(d.complete);
    CHECK(d.launches.size() == 40);
    CHECK(d.chunks_skipped == 0);
    REQUIRE(d.issues.size() == 1);
    CHECK(d.issues[0].message.find("16 junk bytes (bytes " + std::to_string(at[2]) + " to " +
                                   std::to_string(at[2] + 16) + ") between chunk 1 and chunk 2") == 0);
  }
  SUBCASE("a damaged number that repeats another: not called out of order") {
    std::vector<uint8_t> flipped = whole;
    flipped[at[1] + 16] = 2;  // chunk 1 says 2, as chunk 2 does (the sequence field, docs/format.md)
    const kc::LogData d = kc::readLog(flipped);
    CHECK(d.chunks_out_of_order == 0);
    REQUIRE(d.issues.size() == 1);
    CHECK(d.issues[0].message.find("out of write order") == std::string::npos);
  }
  SUBCASE("a chunk cut out of a log without Stats: a warning, as it cannot be told from one kept out at a cap") {
    const std::vector<uint8_t> open_log = write(false);
    const std::vector<size_t> o = kc::test::chunkOffsets(open_log);
    REQUIRE(o.size() == 4);
    std::vector<uint8_t> cut(open_log.begin(), open_log.begin() + static_cast<long>(o[1]));
    cut.insert(cut.end(), open_log.begin() + static_cast<long>(o[2]), open_log.end());
    const kc::LogData d = kc::readLog(cut);
    CHECK(d.intact());
    CHECK(d.launches.size() == 30);
    bool warned = false;
    for (const auto& i : d.issues)
      warned |= i.severity == kc::ReadIssue::Severity::kWarning &&
                i.message.find("1 chunk missing") == 0 && i.message.find("no stats record") != std::string::npos;
    CHECK(warned);
  }
}

TEST_CASE("size cap: a log that fits is one file with nothing dropped; without a cap nothing changes") {
  const CapRun fits = capRun(1 << 20, 3, 1000, 100);
  REQUIRE(fits.files.size() == 1);
  CHECK(fits.dropped.total() == 0);
  CHECK(fits.refusals.empty());
  CHECK(kc::readLog(fits.files[0]).range_records == 1000);
  const CapRun uncapped = capRun(0, 1, 20000, 0);
  REQUIRE(uncapped.files.size() == 1);
  CHECK(kc::readLog(uncapped.files[0]).range_records == 20000);
  CHECK(uncapped.dropped.total() == 0);
}

TEST_CASE("rotated parts joined: one run in part order; missing parts are errors; old logs without the marker") {
  const CapRun run = capRun(4096, 3, 100000, 2000);
  REQUIRE(run.files.size() == 3);
  std::vector<kc::LogData> parts;
  uint64_t ranges = 0;
  for (const auto& f : run.files) {
    parts.push_back(kc::readLog(f));
    ranges += parts.back().ranges.size();
    CHECK(kc::runIdentity(parts.back()) == "h|7|100");
  }
  // Read alone, parts 1 and 2 lack their earlier parts; part 0 does not; a joined log never does.
  CHECK_FALSE(parts[0].isLaterPartAlone());
  CHECK(parts[1].isLaterPartAlone());
  CHECK(parts[2].isLaterPartAlone());
  const std::vector<std::string> names{"r.kcount", "r.1.kcount", "r.2.kcount"};
  const kc::LogData all = kc::joinRotatedParts(parts, names);
  CHECK_FALSE(all.isLaterPartAlone());
  CHECK(all.intact());
  CHECK(all.complete);
  CHECK(all.parts == 3);
  CHECK(all.ranges.size() == ranges);
  CHECK(all.range_records == ranges);
  CHECK(all.meta(kc::kMetaContinuedIn).empty());
  CHECK(all.scopePath(1) == "step");

  // Parts missing from a join are named (warnings), not damage: the files given are intact.
  const kc::LogData gap = kc::joinRotatedParts({parts[0], parts[2]}, {names[0], names[2]});
  CHECK(gap.intact());
  CHECK(gap.joined_parts == std::vector<uint32_t>{0, 2});
  REQUIRE_FALSE(gap.issues.empty());
  CHECK(gap.issues[0].severity == kc::ReadIssue::Severity::kWarning);
  CHECK(gap.issues[0].message.find("part 1 not given") != std::string::npos);

  const kc::LogData head = kc::joinRotatedParts({parts[0], parts[1]}, {names[0], names[1]});
  CHECK(head.intact());
  CHECK(head.isContinuedPart());
  CHECK(head.continuedInPart() == 2);
  bool named = false;
  for (const auto& i : head.issues) named = named || i.message.find("continues in part 2, which was not given") != std::string::npos;
  CHECK(named);

  const kc::LogData no_first = kc::joinRotatedParts({parts[1], parts[2]}, {names[1], names[2]});
  CHECK(no_first.intact());
  CHECK(no_first.joined_parts == std::vector<uint32_t>{1, 2});

  // A middle part cut short (inside its last chunk, then at a chunk boundary): part 2 follows, so the run
  // went on; the join names part 1 as cut short (an error), never as a crash of the run.
  const std::vector<uint8_t>& one = run.files[1];
  const kc::LogData cut = kc::readLog(std::span(one.data(), one.size() - 10));
  REQUIRE(cut.truncated);
  REQUIRE(cut.last_intact_end > sizeof(kc::FileHeader));
  const kc::LogData at_chunk = kc::readLog(std::span(one.data(), cut.last_intact_end));
  REQUIRE_FALSE(at_chunk.truncated);
  REQUIRE_FALSE(at_chunk.isContinuedPart());
  for (const kc::LogData* middle : {&cut, &at_chunk}) {
    const kc::LogData j = kc::joinRotatedParts({parts[0], *middle, parts[2]}, names);
    CHECK(j.damaged());
    bool named = false, crash = false;
    for (const auto& i : j.issues) {
      named = named || (i.severity == ReadIssue::Severity::kError &&
                        i.message.starts_with("part 1 (r.1.kcount): rotated part 1 is cut short: it has no end record "
                                              "and was not closed for rotation (no continued_in_file key), yet part 2 "
                                              "of the same run (r.2.kcount) follows it"));
      crash = crash || i.message.find("crash, kill") != std::string::npos;
    }
    CHECK(named);
    CHECK_FALSE(crash);
  }

  // A run written before the marker existed: no continued_in_file, no End record in parts 0 and 1. It still
  // joins; parts 0 and 1 get a warning that says both readings.
  for (size_t i : {0, 1})
    parts[i].metadata.erase(std::remove_if(parts[i].metadata.begin(), parts[i].metadata.end(),
                                           [](const auto& kv) { return kv.first == kc::kMetaContinuedIn; }),
                            parts[i].metadata.end());
  CHECK_FALSE(parts[0].isContinuedPart());
  const kc::LogData old = kc::joinRotatedParts(parts, names);
  CHECK(old.intact());
  CHECK(old.complete);
  CHECK(old.ranges.size() == ranges);
  size_t unmarked = 0;
  for (const auto& i : old.issues)
    unmarked += i.message.find("cut short at a chunk boundary (records at its end lost), or written by a kcount "
                               "that did not mark its parts yet") != std::string::npos;
  CHECK(unmarked == 2);
}

TEST_CASE("duplicate names keep the .kcount extension and never look like a rotated part") {
  CHECK(kc::duplicatePath("/x/same.kcount", 1) == "/x/same-1.kcount");
  CHECK(kc::duplicatePath("/x/same.kcount", 12) == "/x/same-12.kcount");
  CHECK(kc::duplicatePath("/x/log", 2) == "/x/log-2");
  CHECK(kc::duplicatePath("/x.kcount/log", 2) == "/x.kcount/log-2");
  CHECK(kc::duplicatePath("/x/.kcount", 1) == "/x/.kcount-1");
  // A rotated part's name ends in ".N.kcount", a duplicate's in "-N.kcount".
  CHECK(kc::rotatedPath("/x/same.kcount", 1) != kc::duplicatePath("/x/same.kcount", 1));
  CHECK(kc::rotatedPath(kc::duplicatePath("/x/a.kcount", 1), 1) == "/x/a-1.1.kcount");
  char dir[] = "/tmp/kcount-dup-test.XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string base = std::string(dir) + "/same.kcount";
  { std::ofstream(base) << "keep"; }
  {
    kc::FileSink sink(base, 0600, 0, nullptr);
    CHECK(sink.write("abc", 3));
    CHECK(sink.path() == std::string(dir) + "/same-1.kcount");
  }
  std::filesystem::remove_all(dir);
}

namespace {
/// A plain log of `chunks` chunks (one launch and one kernel each, the End record in the last), and the
/// offset of every chunk.
struct ManyChunkLog {
  std::vector<uint8_t> bytes;
  std::vector<size_t> at;
};
ManyChunkLog manyChunkLog(int chunks) {
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  ManyChunkLog log;
  for (int i = 0; i < chunks; ++i) {
    log.at.push_back(sink.bytes.size());
    if (i == 0) {
      w.writeString(1, "step");
      w.writeString(2, "gemm_kernel");
      w.writeScope({1, 0, 1, 0});
    }
    w.writeLaunch(launch(i + 1, 1));
    w.writeKernel(kernel(i + 1, 2));
    if (i + 1 == chunks) w.writeEnd();
    w.flush();
  }
  log.bytes = sink.bytes;
  return log;
}
int errorsWith(const kc::LogData& d, const std::string& text) {
  int n = 0;
  for (const auto& i : d.issues) n += i.severity == ReadIssue::Severity::kError && i.message.find(text) != std::string::npos;
  return n;
}
}  // namespace

TEST_CASE("damaged chunks in a row: one error each, true chunk numbers, read + skipped = chunks") {
  ManyChunkLog log = manyChunkLog(8);
  for (int c : {2, 3, 4, 6}) log.bytes[log.at[c] + sizeof(kc::ChunkHeader) + 5] ^= 0xff;
  const kc::LogData d = kc::readLog(log.bytes);
  for (int c : {2, 3, 4, 6})
    CHECK(hasIssue(d, ReadIssue::Severity::kError,
                   "checksum mismatch in chunk " + std::to_string(c) + " at byte " + std::to_string(log.at[c])));
  CHECK(errorsWith(d, "checksum mismatch") == 4);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "reading resumes at byte " + std::to_string(log.at[5])));
  CHECK(d.chunks_read == 4);
  CHECK(d.chunks_skipped == 4);
  CHECK(d.last_intact_chunk == 7);
  CHECK(d.launch_records == 4);
  CHECK(d.complete);
}

TEST_CASE("a bad chunk header: the damaged chunks inside the skipped bytes are named and counted") {
  ManyChunkLog log = manyChunkLog(6);
  log.bytes[log.at[1]] ^= 0xff;                                // chunk 1: bad magic
  log.bytes[log.at[2] + sizeof(kc::ChunkHeader) + 5] ^= 0xff;  // chunk 2: bad checksum, header intact
  const kc::LogData d = kc::readLog(log.bytes);
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "bad chunk magic at byte " + std::to_string(log.at[1]) + " in chunk 1; skipped " +
                     std::to_string(log.at[3] - log.at[1]) + " bytes"));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "damaged chunk 2 at byte " + std::to_string(log.at[2])));
  CHECK(d.chunks_read + d.chunks_skipped == 6);
  CHECK(d.last_intact_chunk == 5);
}

TEST_CASE("resync over many fake chunk headers that each claim 16 MiB takes time linear in the file") {
  // 10,000 headers of a plain chunk (magic, 16 MiB payload, a checksum that does not verify), one after
  // another, then 17 MiB of zeros: every header's payload fits in the file. Checksumming each candidate's
  // claimed payload took 10,000 x 16 MiB of hashing (over 10 s); a record walk rejects each at its first
  // record (the next fake header announces 16 MiB of body), so only the first is hashed.
  std::vector<uint8_t> bytes = rawLog({}, 0);
  bytes.resize(sizeof(kc::FileHeader));
  constexpr uint32_t kClaimed = 16u << 20;
  for (uint32_t i = 0; i < 10000; ++i) {
    const kc::ChunkHeader h{kc::kChunkMagic, kClaimed, 1, i, 5};
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(h));
    std::memcpy(bytes.data() + at, &h, sizeof(h));
  }
  bytes.resize(bytes.size() + (size_t{17} << 20), 0);
  const auto start = std::chrono::steady_clock::now();
  const kc::LogData d = kc::readLog(bytes);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(d.chunks_read == 0);
  CHECK(seconds < 2.0);
}

TEST_CASE("definitions lost with the first chunk: names show as bad ids, one error lists them, the tree holds") {
  // Chunk 0 defines strings 1-3 and scopes 1-2; chunk 1 defines string 4 and scope 3 (parent 2, name 4).
  kc::MemorySink sink;
  kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
  w.writeString(1, "warmup");
  w.writeString(2, "step");
  w.writeString(3, "gemm_kernel");
  w.writeScope({1, 0, 1, 0});
  w.writeScope({2, 1, 2, 0});
  w.flush();
  const size_t chunk1 = sink.bytes.size();
  w.writeString(4, "gate");
  w.writeScope({3, 2, 4, 0});
  w.writeLaunch(launch(1, 3));
  w.writeKernel(kernel(1, 3));
  w.writeLaunch(launch(2, 1));
  w.writeKernel(kernel(2, 3));
  w.writeEnd();
  w.flush();
  std::vector<uint8_t> b = sink.bytes;
  b[sizeof(kc::FileHeader) + sizeof(kc::ChunkHeader) + 3] ^= 0xff;  // chunk 0 lost
  const kc::LogData d = kc::readLog(b);
  CHECK(d.str(3) == "<bad string id 3>");  // a gap below the highest defined id, not ""
  CHECK(d.str(4) == "gate");
  CHECK(d.scopePath(1) == "<bad scope id 1>");
  CHECK(d.scopePath(3) == "(lost range 2)/gate");
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "string id 3 is not defined"));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "scope id 1 is not defined"));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "1 string id (3), used by 4 records"));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "2 scope ids (1-2)"));
  // Each per-id error is located at the first record that used the id, in chunk 1; the list has no offset.
  for (const auto& i : d.issues) {
    if (i.message.starts_with("string id 3 ") || i.message.starts_with("scope id 1 ")) {
      CHECK(i.chunk == 1);
      CHECK(i.offset > chunk1);
      CHECK(i.offset < b.size());
    }
    if (i.message.starts_with("undefined ids")) {
      CHECK(i.offset == ReadIssue::kNoOffset);
    }
  }
  const kc::Summary s = kc::summarize(d);
  CHECK(s.unresolved.launches == 1);  // the launch of lost scope 1
  CHECK(s.inclusive[3].launches == 1);  // gate keeps its launch, grouped under (lost range 2)
  CHECK(s.unresolved.launches + s.inclusive[3].launches == 2);
}

TEST_CASE("a chunk header whose record count disagrees with its verified payload is damage") {
  std::vector<uint8_t> payload;
  kc::LaunchBody l = launch(1, 0);
  l.api_id = kc::kNoString;
  appendRecord(payload, kc::RecordType::kLaunch, &l, sizeof(l));
  appendRecord(payload, kc::RecordType::kEnd, nullptr, 0);
  const kc::LogData ok = kc::readLog(rawLog(payload, 2));
  CHECK(ok.intact());
  const kc::LogData d = kc::readLog(rawLog(payload, 7));
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "chunk 0 header announces 7 records, its payload (checksum verified) holds 2"));
  CHECK_FALSE(d.intact());
  CHECK(d.launch_records == 1);  // nothing of the payload is lost
}

TEST_CASE("chunks whose headers were destroyed are counted from the next intact chunk's sequence number") {
  ManyChunkLog log = manyChunkLog(6);
  log.bytes[log.at[1]] ^= 0xff;  // chunks 1 and 2: bad magic, nothing left to find them by
  log.bytes[log.at[2]] ^= 0xff;
  const kc::LogData d = kc::readLog(log.bytes);
  CHECK(hasIssue(d, ReadIssue::Severity::kError, "bad chunk magic at byte " + std::to_string(log.at[1]) + " in chunk 1"));
  CHECK(hasIssue(d, ReadIssue::Severity::kError,
                 "1 more chunk in bytes " + std::to_string(log.at[1]) + " to " + std::to_string(log.at[3]) +
                     " lost its header too"));
  CHECK(d.chunks_read == 4);
  CHECK(d.chunks_skipped == 2);
  CHECK(d.last_intact_chunk == 5);
}

TEST_CASE("LogData::str: the view of a bad string id stays valid after other bad ids are asked for") {
  // kcount export held a scope's name (a bad id) while it asked for the domain and the path (more bad
  // ids); the name's view pointed into one per-thread string, which the later calls overwrote or freed
  // (ASan: heap-use-after-free; the name column printed another id's text or garbage).
  kc::LogData d;
  const std::string_view nine = d.str(9);
  const std::string_view seven = d.str(7);
  for (uint32_t id = 1000; id < 1100; ++id) CHECK(d.str(id) == "<bad string id " + std::to_string(id) + ">");
  CHECK(nine == "<bad string id 9>");
  CHECK(seven == "<bad string id 7>");
  CHECK(d.str(9).data() == nine.data());  // the same text each time
}

TEST_CASE("a file magic damaged in one or two bytes: an error, and every chunk still read; three: not a log") {
  const TwoChunkLog log = twoChunkLog();
  const kc::LogData whole = kc::readLog(log.bytes);
  for (const std::vector<size_t>& flips : {std::vector<size_t>{3}, std::vector<size_t>{0, 7}}) {
    std::vector<uint8_t> bytes = log.bytes;
    for (size_t i : flips) bytes[i] ^= 0x20;
    const kc::LogData d = kc::readLog(bytes);
    CHECK_FALSE(d.not_a_log);
    CHECK(d.damaged());
    CHECK(hasIssue(d, ReadIssue::Severity::kError, "damaged file header: byte 0 holds"));
    CHECK(d.chunks_read == whole.chunks_read);
    CHECK(d.kernels.size() == whole.kernels.size());
    CHECK(d.launches.size() == whole.launches.size());
  }
  std::vector<uint8_t> bytes = log.bytes;
  bytes[0] = bytes[1] = bytes[2] = 0;
  const kc::LogData d = kc::readLog(bytes);
  CHECK(d.not_a_log);
  CHECK(d.chunks_read == 0);
}

namespace {
/// Definitions of a run, as the library's tables hold them: string id -> text, scope id -> ScopeBody.
struct MapDefinitions final : kc::DefinitionSource {
  std::map<uint32_t, std::string> strings;
  std::map<uint32_t, kc::ScopeBody> scopes;
  bool stringText(uint32_t id, std::string* text) override {
    auto it = strings.find(id);
    if (it == strings.end()) return false;
    *text = it->second;
    return true;
  }
  bool scope(uint32_t id, kc::ScopeBody* s) override {
    auto it = scopes.find(id);
    if (it == scopes.end()) return false;
    *s = it->second;
    return true;
  }
};
}  // namespace

TEST_CASE("definitions on demand: each rotated part holds the definitions its records use, reads alone, parts join") {
  // 4000 steps with a name each ("step N", scope N + 10 under the top-level "run", scope 2), each with a
  // child "inner" (string 4): the definitions of the whole run would fill several 8 KiB parts by themselves.
  constexpr uint32_t kSteps = 4000;
  MapDefinitions defs;
  defs.strings = {{3, "run"}, {4, "inner"}, {5, "cudaLaunchKernel"}};
  defs.scopes[2] = {2, kc::kRootScope, 3, kc::kNoString};
  for (uint32_t i = 0; i < kSteps; ++i) {
    defs.strings[100 + i] = "step " + std::to_string(i) + std::string(24, 'x');
    defs.scopes[10 + 2 * i] = {10 + 2 * i, 2, 100 + i, kc::kNoString};
    defs.scopes[11 + 2 * i] = {11 + 2 * i, 10 + 2 * i, 4, kc::kNoString};
  }
  kc::MemorySink sink;
  sink.max_bytes = 8192;
  sink.max_files = 1000;
  kc::LogWriter w(&sink);
  w.setDefinitions(&defs);
  const auto identity = [](kc::LogWriter& pw) {
    pw.writeMetadata("host", "h");
    pw.writeMetadata("pid", "7");
    pw.writeMetadata("start_ns", "1");
  };
  w.setPreamble(
      [](kc::LogWriter& pw, void* ctx) {
        (*static_cast<decltype(identity)*>(ctx))(pw);
        pw.writeMetadata(kc::kMetaRotatedFile, std::to_string(pw.rotations()));
      },
      const_cast<void*>(static_cast<const void*>(&identity)));
  identity(w);
  for (uint32_t i = 0; i < kSteps; ++i) {
    kc::LaunchBody l = launch(i + 1, 11 + 2 * i);
    l.api_id = 5;
    w.writeLaunch(l);
    w.writeRange({100 * i + 10, 100 * i + 20, 11 + 2 * i, 1, 1, 0});
    w.writeRange({100 * i, 100 * i + 50, 10 + 2 * i, 1, 1, 0});
    if (w.chunkFull() || i % 64 == 63) w.flush();  // the library flushes about once a second
  }
  w.writeEnd();
  w.flush();
  std::vector<std::vector<uint8_t>> files = sink.files;
  files.push_back(sink.bytes);
  REQUIRE(files.size() >= 4);
  CHECK(w.droppedBytes() == 0);
  std::vector<kc::LogData> parts;
  std::vector<std::string> names;
  uint64_t ranges = 0;
  for (size_t k = 0; k < files.size(); ++k) {
    INFO("part " << k);
    CHECK(files[k].size() <= sink.max_bytes);
    kc::LogData d = kc::readLog(files[k]);
    for (const auto& i : d.issues) CHECK_MESSAGE(i.severity != ReadIssue::Severity::kError, i.message);
    CHECK(d.range_records > 0);
    CHECK(d.rotationPart() == k);
    // Only the definitions of its own records: far fewer strings than the run's.
    const size_t defined = static_cast<size_t>(
        std::count_if(d.strings.begin() + 1, d.strings.end(), [&, id = 0u](const std::string&) mutable {
          return d.stringDefined(++id);
        }));
    CHECK(defined < kSteps / 2);
    // Every range of the part has its full path.
    for (size_t id = 10 + 2 * (kSteps - 1) + 1; id-- > 10;)
      if (d.scopeDefined(static_cast<uint32_t>(id)) && id % 2 == 1) {
        CHECK(d.scopePath(static_cast<uint32_t>(id)) == "run/" + defs.strings[100 + (id - 11) / 2] + "/inner");
        break;
      }
    ranges += d.range_records;
    parts.push_back(kc::readLog(files[k]));
    names.push_back(k == 0 ? "r.kcount" : "r." + std::to_string(k) + ".kcount");
  }
  CHECK(ranges == 2 * kSteps);
  const kc::LogData joined = kc::joinRotatedParts(std::move(parts), names);
  for (const auto& i : joined.issues) CHECK_MESSAGE(i.severity != ReadIssue::Severity::kError, i.message);
  CHECK(joined.complete);
  CHECK(joined.range_records == 2 * kSteps);
  CHECK(joined.launch_records == kSteps);
  CHECK(joined.scopePath(11 + 2 * 1234) == "run/step 1234" + std::string(24, 'x') + "/inner");
}

TEST_CASE("a damaged header_bytes field is named at byte 12 and the chunks are read from byte 16, nothing lost") {
  const TwoChunkLog good = twoChunkLog();
  const kc::LogData intact = kc::readLog(good.bytes);
  REQUIRE(intact.issues.empty());
  const uint32_t size = static_cast<uint32_t>(good.bytes.size());
  // The whole file, a chunk boundary (chunk 0 would be skipped), inside chunk 0, too small, past the end.
  for (uint32_t v : {size, static_cast<uint32_t>(good.chunk1_at), 24u, 40u, 5u, size + 1, 0xFFFFFFFFu}) {
    INFO(v);
    std::vector<uint8_t> bytes = good.bytes;
    std::memcpy(bytes.data() + 12, &v, sizeof(v));
    const kc::LogData d = kc::readLog(bytes);
    REQUIRE(d.issues.size() == 1);
    CHECK(d.issues[0].offset == 12);
    CHECK(d.issues[0].chunk == -1);
    CHECK(d.issues[0].message.starts_with("damaged file header: its header_bytes field (byte 12) announces " +
                                          std::to_string(v) + " header bytes"));
    CHECK(d.issues[0].message.ends_with("; reading chunks from byte 16"));
    CHECK(d.chunks_read == 2);
    CHECK(d.complete);
    CHECK(d.launches.size() == intact.launches.size());
    CHECK(d.kernels.size() == intact.kernels.size());
    CHECK(d.ranges.size() == intact.ranges.size());
  }
}

TEST_CASE("a longer file header (header_bytes past 16, an intact chunk there) is read without an issue") {
  const TwoChunkLog good = twoChunkLog();
  std::vector<uint8_t> bytes(good.bytes.begin(), good.bytes.begin() + sizeof(kc::FileHeader));
  bytes.resize(bytes.size() + 8, 0xAB);  // 8 header bytes a later 1.x writer might add
  bytes.insert(bytes.end(), good.bytes.begin() + sizeof(kc::FileHeader), good.bytes.end());
  const uint32_t header = sizeof(kc::FileHeader) + 8;
  std::memcpy(bytes.data() + 12, &header, sizeof(header));
  const kc::LogData d = kc::readLog(bytes);
  CHECK(d.issues.empty());
  CHECK(d.chunks_read == 2);
  CHECK(d.launches.size() == 2);
}

TEST_CASE("a cycle of scope parent ids is an error at the scope's record; a tree without one has none") {
  auto logWith = [](std::initializer_list<kc::ScopeBody> scopes) {
    kc::MemorySink sink;
    kc::LogWriter w(&sink, kc::LogEncoding::kPlain);
    w.writeString(1, "a");
    w.writeString(2, "b");
    w.writeString(3, "c");
    for (const kc::ScopeBody& s : scopes) w.writeScope(s);
    w.writeEnd();
    w.flush();
    return kc::readLog(sink.bytes);
  };
  const kc::LogData ok = logWith({{1, 0, 1, 0}, {2, 1, 2, 0}, {3, 2, 3, 0}});
  CHECK(ok.issues.empty());
  // 1 -> 3 -> 2 -> 1: one cycle, named once, whichever scope the walk starts at.
  const kc::LogData cyc = logWith({{1, 3, 1, 0}, {2, 1, 2, 0}, {3, 2, 3, 0}});
  REQUIRE(cyc.issues.size() == 1);
  CHECK(cyc.damaged());
  CHECK(cyc.issues[0].chunk == 0);
  CHECK(cyc.issues[0].offset != kc::ReadIssue::kNoOffset);
  CHECK(cyc.issues[0].message.starts_with(
      "damaged scope table: scope 1 is its own ancestor through its parent ids (1 (a) -> 3 (c) -> 2 (b) -> 1)"));
  CHECK(cyc.scopePath(2).starts_with("<broken parent>/"));
  // A scope that is its own parent; a scope under a lost parent is no cycle (reported as a lost definition).
  const kc::LogData self = logWith({{1, 0, 1, 0}, {2, 2, 2, 0}, {3, 9, 3, 0}});
  size_t cycles = 0;
  for (const auto& i : self.issues) cycles += i.message.find("its own ancestor") != std::string::npos ? 1 : 0;
  CHECK(cycles == 1);
  CHECK(hasIssue(self, ReadIssue::Severity::kError, "scope 2 is its own ancestor through its parent ids (2 (b) -> 2)"));
}
