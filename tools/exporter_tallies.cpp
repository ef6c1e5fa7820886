#include "tools/exporter_tallies.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <span>

#include <fmt/format.h>

#include "collector/file_sink.h"
#include "collector/log_format.h"
#include "collector/stream_summary.h"
#include "tools/range_tree.h"

namespace kc {
namespace {

/// Largest log file read (a summary-mode log grows by one snapshot per interval; this is months of them).
constexpr off_t kMaxLogBytes = off_t{4} << 30;
/// Deepest parent chain followed; the reader's scopePath() stops at the same depth.
constexpr int kMaxChain = 256;

FileStamp stampOf(const struct stat& st) {
  FileStamp s;
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.size = st.st_size;
  s.mtime = st.st_mtim;
  return s;
}

// The bytes of `path` if it is a regular file of ours (opened without following a link, checked on the
// open descriptor, so a file swapped in between is not read); else "" in `bytes` and the reason returned.
std::string readOwnFile(const std::string& path, std::vector<uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fmt::format("{}: {}", path, errno == ELOOP ? "a symbolic link (not followed)" : std::strerror(errno));
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != ::geteuid()) why = fmt::format("owned by uid {}, not by you (uid {}): not read", st.st_uid, ::geteuid());
  else if (st.st_size > kMaxLogBytes) why = fmt::format("{} bytes, over the {} bytes read at most", st.st_size, kMaxLogBytes);
  if (why.empty()) {
    bytes.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = std::strerror(errno);
        break;
      }
      if (n == 0) break;  // the file shrank (truncated while read): what was there
      done += static_cast<size_t>(n);
    }
    bytes.resize(done);
  }
  ::close(fd);
  return why.empty() ? why : path + ": " + why;
}

// Scope id of the ancestor of `id` at depth `max_depth` (1: a top-level range), or `id` itself when it is
// not deeper than that.
uint32_t foldedScope(const LogData& log, uint32_t id, int max_depth) {
  std::vector<uint32_t> chain;  // id, its parent, ..., a top-level range
  for (uint32_t at = id; at != kRootScope && at < log.scopes.size() && chain.size() < kMaxChain;) {
    chain.push_back(at);
    const uint32_t parent = log.scopes[at].parent_id;
    if (parent >= at) break;  // the writer numbers a parent before its children; anything else is damage
    at = parent;
  }
  if (static_cast<int>(chain.size()) <= max_depth) return id;
  return chain[chain.size() - static_cast<size_t>(max_depth)];
}

std::string baseName(const std::string& command_line) {
  const std::string first = command_line.substr(0, command_line.find(' '));
  return first.substr(first.rfind('/') + 1);
}

void fillMetadata(const LogData& log, LogTallies& t) {
  t.summary_mode = log.summary_mode;
  t.gpu_time = gpuTimeRecorded(log);
  t.graph_gpu_time = graphGpuTimeRecorded(log);
  t.complete = log.complete;
  t.host = log.meta("host");
  t.pid = log.meta("pid");
  t.rank = log.meta("rank");
  t.command = baseName(log.meta("command_line"));
  t.run = runIdentity(log);
  if (log.has_stats) t.dropped_records = log.stats.dropped_host_records + log.stats.dropped_activity_records;
}

// Fills `t` from a log read whole (one part) and summarized from its newest complete snapshot.
void fillFrom(const StreamedLog& sl, int max_depth, LogTallies& t) {
  const LogData& log = sl.data;
  const Summary& sum = sl.summary;
  const SnapshotData& snap = log.snapshots[static_cast<size_t>(sum.snapshot)];
  t.untallied_events = snap.begin.dropped_tallies;
  t.unmatched_kernels = sum.unmatched_kernels;
  t.snapshot_sequence = snap.begin.sequence;
  t.snapshot_final = (snap.begin.flags & kSnapshotFinal) != 0;
  std::map<uint32_t, RangeCounters> folded;
  uint64_t most = 0;
  for (uint32_t id = 0; id < sum.exclusive.size(); ++id) {
    const RangeStats& r = sum.exclusive[id];
    if (r.instances == 0 && r.launches == 0 && r.kernels == 0) continue;
    RangeCounters& c = folded[id == kRootScope ? id : foldedScope(log, id, max_depth)];
    c.kernels += r.kernels;
    c.launches += r.launches;
    c.instances += r.instances;
    c.gpu_ns += r.gpu_ns;
    c.launch_api_ns += r.launch_api_ns;
    c.graph_gpu_launches += r.graph_gpu_launches;
    c.graph_gpu_ns += r.graph_gpu_ns;
    if (id != kRootScope) most = std::max(most, r.instances);
  }
  // The most repeated range: of those about as repeated as the most (amongMostRepeated()), the one with the
  // most kernels (a server's decode step, not its sampling).
  uint32_t steady = kRootScope;
  for (uint32_t id = 1; id < sum.exclusive.size() && id < sum.inclusive.size(); ++id) {
    const uint64_t n = sum.exclusive[id].instances;
    if (n != 0 && amongMostRepeated(n, most) &&
        (steady == kRootScope || sum.inclusive[id].kernels > sum.inclusive[steady].kernels))
      steady = id;
  }
  if (steady != kRootScope) {
    t.most_repeated = log.scopePath(steady);
    t.kernels_per_instance = static_cast<double>(sum.inclusive[steady].kernels) /
                             static_cast<double>(sum.exclusive[steady].instances);
  }
  for (auto& [id, c] : folded) {
    // A folded range keeps its own instances: those of the ranges inside it are other ranges' instances.
    if (id != kRootScope && id < sum.exclusive.size()) c.instances = sum.exclusive[id].instances;
    c.path = log.scopePath(id);
    t.ranges.push_back(std::move(c));
  }
}

}  // namespace

bool FileStamp::operator==(const FileStamp& o) const {
  return dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
         mtime.tv_nsec == o.mtime.tv_nsec;
}

std::vector<std::string> logPartsOf(const std::string& first) {
  std::vector<std::string> parts{first};
  for (uint32_t k = 1; k < 100000; ++k) {
    const std::string p = rotatedPath(first, k);
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) break;
    parts.push_back(p);
  }
  return parts;
}

LogTallies readLogTallies(const std::vector<std::string>& parts, int max_depth) {
  LogTallies t;
  t.error = "no log file";
  for (size_t i = parts.size(); i-- > 0;) {
    std::vector<uint8_t> bytes;
    if (std::string why = readOwnFile(parts[i], bytes); !why.empty()) {
      t.error = why;
      // A newest part not there (yet, or any more): the part before it. Any other refusal serves the log as down.
      if (i + 1 == parts.size() && parts.size() > 1 && why.ends_with(std::strerror(ENOENT))) continue;
      return t;
    }
    StreamedLog sl;
    try {
      sl = summarizeLogBytes(std::span<const uint8_t>(bytes.data(), bytes.size()));
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      t.error = fmt::format("{}: {}", parts[i], e.what());
      return t;
    }
    if (sl.data.not_a_log || sl.data.unsupported_version) {
      t.error = parts[i] + ": " + (sl.data.issues.empty() ? std::string("not a kcount log") : sl.data.issues[0].message);
      return t;
    }
    fillMetadata(sl.data, t);  // a log served as down keeps its host, pid and command labels
    if (!sl.data.summary_mode) {
      t.error = parts[i] + ": not a summary-mode log (KCOUNT_MODE=summary): no snapshots to serve";
      return t;
    }
    t.error.clear();
    if (sl.summary.snapshot < 0 || static_cast<size_t>(sl.summary.snapshot) >= sl.data.snapshots.size()) {
      if (i > 0) continue;  // a part just begun: the part before holds the latest snapshot
      return t;  // no snapshot yet (one comes every KCOUNT_INTERVAL): nothing wrong, nothing to serve
    }
    fillFrom(sl, max_depth, t);
    t.has_tallies = true;
    // A cut tail is the chunk being written while the file was read (the reader reports it as an error
    // with LogData::truncated): not damage. Any other error is.
    for (const ReadIssue& issue : sl.data.issues)
      if (issue.severity == ReadIssue::Severity::kError &&
          !(sl.data.truncated && issue.message.starts_with("truncated at byte "))) {
        t.error = fmt::format("{}: damaged: {}", parts[i], issue.message);
        break;
      }
    return t;
  }
  return t;
}

const LogTallies& TallyCache::get(const std::vector<std::string>& parts) {
  std::vector<FileStamp> stamps;
  for (const auto& p : parts) {
    struct stat st {};
    stamps.push_back(::lstat(p.c_str(), &st) == 0 ? stampOf(st) : FileStamp{});
  }
  auto it = entries_.find(parts);
  if (it != entries_.end() && it->second.stamps == stamps) {
    it->second.used = true;
    return it->second.tallies;
  }
  Entry& e = entries_[parts];
  e.stamps = std::move(stamps);
  e.tallies = readLogTallies(parts, max_depth_);
  e.used = true;
  return e.tallies;
}

void TallyCache::sweep() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.used) {
      it = entries_.erase(it);
    } else {
      it->second.used = false;
      ++it;
    }
  }
}

}  // namespace kc
