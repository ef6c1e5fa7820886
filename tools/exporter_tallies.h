// What `kcount exporter` serves of one process, read from its summary-mode log: the per-range tallies of
// the newest complete snapshot (every number in a snapshot is cumulative since recording started,
// docs/format.md#snapshots-types-12-15-format-12), the process's labels from the log's metadata, and what
// it lost. Only files of the exporter's own user are read.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace kc {

/// One range path's numbers: those of launches made while it was the innermost range (exclusive), with
/// the ranges nested deeper than the depth cap added to their ancestor at the cap. ns as in the log.
struct RangeCounters {
  std::string path;  // LogData::scopePath(): names joined by '/', "(no range)" for the root
  uint64_t kernels = 0, launches = 0, instances = 0, gpu_ns = 0, launch_api_ns = 0;
  uint64_t graph_gpu_launches = 0, graph_gpu_ns = 0;  // KCOUNT_GPU_TIME=graphs: graph launches' GPU spans
};

/// What one log says of its process. Filled by readLogTallies(); `error` empty means the log was read and
/// holds a complete snapshot.
struct LogTallies {
  /// What is wrong: not ours, not a kcount log, no snapshot yet, damaged (the process is served as down);
  /// "" when the log was read intact (a cut tail, a chunk being written, is not damage).
  std::string error;
  bool has_tallies = false;       // a complete snapshot was read (a damaged log may still hold one)
  bool summary_mode = false;      // a KCOUNT_MODE=summary log
  bool gpu_time = true;           // false: recorded with KCOUNT_GPU_TIME=0 (metadata gpu_time=off), no GPU times
  bool graph_gpu_time = false;    // recorded with KCOUNT_GPU_TIME=graphs: graph launches' GPU spans only
  bool complete = false;          // the newest part read has an End record: the process closed the log
  std::string host, pid, rank, command, run;  // metadata; command: the program's base name; run: runIdentity()
  std::vector<RangeCounters> ranges;  // one per range path with any number, in scope id order
  /// The range with the most instances (not the root) and its kernels per instance, inclusive of the
  /// ranges inside it; `most_repeated` empty when no range has an instance.
  std::string most_repeated;
  double kernels_per_instance = 0;
  uint64_t dropped_records = 0;   // Stats record: host records + activity records dropped (0 until the end)
  uint64_t untallied_events = 0;  // the snapshot's dropped_tallies (KCOUNT_MAX_KEYS)
  uint64_t unmatched_kernels = 0;  // kernels whose correlation id matched no launch: in the totals, in no range
  uint32_t snapshot_sequence = 0;
  bool snapshot_final = false;
};

/// Where a log file stands on disk, to tell whether it changed since it was read.
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = -1;
  timespec mtime{};
  bool operator==(const FileStamp& o) const;
};

/// The files of the log first created as `first`: `first` and its rotated parts (rotatedPath(first, k),
/// k = 1, 2, ... while one exists), in part order. Only looks at names (lstat).
std::vector<std::string> logPartsOf(const std::string& first);

/// Reads the tallies of the log whose files are `parts` (one file, or the parts of a rotated log in part
/// order): the newest part that holds a complete snapshot (each part reads alone; parts after it that
/// hold none yet are skipped). A file is read only when it is a regular file, not a symbolic link, owned
/// by this process's effective uid; otherwise `error` says why and nothing of it is read. Ranges deeper
/// than `max_depth` (>= 1) are counted in their ancestor at that depth. Never throws but std::bad_alloc.
LogTallies readLogTallies(const std::vector<std::string>& parts, int max_depth);

/// readLogTallies() that reads again only when a file of the log changed (device, inode, size, mtime).
/// Not thread-safe: one caller at a time.
class TallyCache {
 public:
  explicit TallyCache(int max_depth) : max_depth_(max_depth) {}
  /// The tallies of the log of `parts`, read now or kept from the last call with the same files unchanged.
  const LogTallies& get(const std::vector<std::string>& parts);
  /// Forgets logs not asked for since the last sweep() (a process gone long ago).
  void sweep();

 private:
  struct Entry {
    std::vector<FileStamp> stamps;
    LogTallies tallies;
    bool used = true;
  };
  int max_depth_;
  std::map<std::vector<std::string>, Entry> entries_;
};

}  // namespace kc
