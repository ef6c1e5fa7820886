// Logs written under a size cap (KCOUNT_MAX_BYTES) into one file, as the library writes them: for the
// reader's tests and the tools' tests of what a cap keeps out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/log_format.h"
#include "collector/log_writer.h"

namespace kc::test {

/// Writes String records for ids [first, end): `prefix` and a pseudo-random number (names that do not
/// compress to nothing), flushing a chunk after every id divisible by `flush_every`, and at the end.
inline void writeDistinctNames(LogWriter& w, uint32_t first, uint32_t end, const std::string& prefix,
                               uint32_t flush_every) {
  uint64_t x = 88172645463325252ull;  // xorshift64
  for (uint32_t id = first; id < end; ++id) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    w.writeString(id, prefix + std::to_string(x));
    if (id % flush_every == 0) w.flush();
  }
  w.flush();
}

/// What lateNameLog() wrote.
struct LateNameLog {
  std::vector<uint8_t> bytes;  ///< the one file
  RecordCounts dropped;        ///< records kept out at the cap before the final chunk (LogWriter::droppedRecords)
};

/// A log capped at 4096 bytes in one file (KCOUNT_MAX_BYTES=4096, KCOUNT_MAX_FILES=1) whose many distinct
/// names did not fit: metadata host "h", String 2 "start" in the first chunk, then Strings 3 to 3002
/// (writeDistinctNames, chunks of 64 ids), most of whose chunks are kept out. The final chunk
/// (beginFinalChunk) holds a late String, 3003 "exit", with the id it has in the whole run's table (an end
/// reason interned at exit); with `segment`, a Segment record naming it (reason 2, end reason 3003); a
/// Stats record whose bytes_dropped are the bytes kept out if `stats_count_dropped` (as the library writes
/// it), else 0; and End.
inline LateNameLog lateNameLog(bool segment, bool stats_count_dropped = true) {
  MemorySink sink;
  sink.max_bytes = 4096;
  sink.max_files = 1;
  LogWriter w(&sink, LogEncoding::kCompact);
  w.writeMetadata("host", "h");
  w.writeString(2, "start");
  w.flush();
  writeDistinctNames(w, 3, 3003, "r", 64);
  const RecordCounts dropped = w.droppedRecords();
  w.beginFinalChunk();
  w.writeString(3003, "exit");
  if (segment) {
    SegmentBody seg{};
    seg.reason_id = 2;
    seg.end_reason_id = 3003;
    seg.stop_ns = 5;
    w.writeSegment(seg);
  }
  StatsBody st{};
  st.bytes_dropped = stats_count_dropped ? w.droppedBytes() : 0;
  w.writeStats(st);
  w.writeEnd();
  w.flush();
  return {sink.bytes, dropped};
}

}  // namespace kc::test
