// The logs given to a reading command (tools/given_logs.h).
#include "tools/given_logs.h"
#include "tools/log_state.h"
#include "tools/text.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include <fmt/format.h>

#include "collector/counted.h"
#include "collector/run_files.h"
#include "collector/shown_value.h"
#include "collector/stream_summary.h"

namespace kc {
namespace {

/// `paths` without repeats (findDuplicates), each repeat named on stderr (loadAll() says which).
/// `heads[i]` is readLogHead() of paths[i]; the heads of the files kept are appended to `kept_heads`.
std::vector<std::string> uniqueFiles(const std::vector<std::string>& paths, std::vector<kc::LogData>& heads,
                                     std::vector<kc::LogData>& kept_heads) {
  const std::vector<kc::Duplicate> dups = kc::findDuplicates(paths, heads);
  std::vector<std::string> out;
  for (size_t i = 0; i < paths.size(); ++i) {
    const auto d = std::find_if(dups.begin(), dups.end(), [&](const kc::Duplicate& x) { return x.index == i; });
    if (d == dups.end() || d->differs()) {
      // A copy of other bytes: one may be cut or damaged, so both are read (and their damage reported).
      if (d != dups.end())
        std::cerr << "kcount: " << kc::shownPath(paths[i]) << ": warning: " << kc::duplicateText(paths, *d)
                  << ": both are read, so the recording counts twice in totals across logs; give one of them\n";
      out.push_back(paths[i]);
      kept_heads.push_back(std::move(heads[i]));
      continue;
    }
    std::cerr << "kcount: " << kc::shownPath(paths[i]) << ": warning: " << kc::duplicateText(paths, *d) << ": read once ("
              << kc::shownPath(paths[d->original]) << ")\n";
  }
  return out;
}

/// Whether `i` is the reader's warning of bytes after `l`'s End record ("N bytes follow the end record, from
/// byte B[: a second log starts there ...]; only the log before them ... is read"), which selectLogs() prints.
bool isAfterEndIssue(const kc::LoadedLog& l, const kc::ReadIssue& i) {
  return l.data.dataAfterEnd() && i.severity == kc::ReadIssue::Severity::kWarning &&
         i.offset == l.data.after_end_offset &&
         i.message.starts_with(kc::counted(l.data.after_end_bytes, "byte") + " follow");
}

/// How two copies of one recording differ, read as they were: their states (kc::logState(), passed in as
/// `state_a` and `state_b`) and their whole-run counts (launches, kernels, memory operations, kernel GPU
/// time), "A complete, B records missing; kernels 1200 in A, 800 in B"; "" when they read alike. `lacks`
/// is set when one copy lacks records the other holds: the counts differ, or a state leaves records out
/// (kc::numbersUndercount()); bytes after one copy's End record (a state "data after end") take none.
std::string copiesDiffer(const kc::LoadedLog& a, const kc::LoadedLog& b, const std::string& state_a,
                         const std::string& state_b, bool& lacks) {
  std::string s;
  if (state_a != state_b) s = fmt::format("A {}, B {}", state_a, state_b);
  lacks = state_a != state_b && (kc::numbersUndercount(a, state_a) || kc::numbersUndercount(b, state_b));
  const kc::Summary &x = a.summary, &y = b.summary;
  auto differs = [&](const char* what, uint64_t p, uint64_t q) {
    if (p == q) return;
    s += fmt::format("{}{} {} in A, {} in B", s.empty() ? "" : "; ", what, p, q);
    lacks = true;
  };
  differs("launches", x.launches, y.launches);
  differs("kernels", x.kernels, y.kernels);
  differs("memory ops", x.mem_ops, y.mem_ops);
  differs("unmatched kernels", x.unmatched_kernels, y.unmatched_kernels);
  if (x.kernel_gpu_ns != y.kernel_gpu_ns) {
    s += fmt::format("{}kernel GPU time {} in A, {} in B", s.empty() ? "" : "; ", kc::formatDuration(x.kernel_gpu_ns),
                     kc::formatDuration(y.kernel_gpu_ns));
    lacks = true;
  }
  return s;
}

std::string joinedName(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += (out.empty() ? "" : " + ") + p;
  return out;
}

}  // namespace

std::string notALogFile(const std::string& path, bool* cannot_read) {
  if (cannot_read != nullptr) *cannot_read = true;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "cannot read it: " + std::string(std::strerror(errno));
  if (cannot_read != nullptr) *cannot_read = false;
  if (S_ISDIR(st.st_mode)) return "a folder, not a log file";
  if (!S_ISREG(st.st_mode)) return "not a regular file (a device, FIFO or socket), not a log file";
  // /proc and /sys files give their size as 0 whatever they hold: read as a log they would seem empty.
  if (struct statfs fs {}; st.st_size == 0 && ::statfs(path.c_str(), &fs) == 0 &&
                           (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC))
    return "a /proc or /sys file (the system gives its size as 0 bytes), not a log file";
  if (::faccessat(AT_FDCWD, path.c_str(), R_OK, AT_EACCESS) != 0) {
    if (cannot_read != nullptr) *cannot_read = true;
    return "cannot read it: " + std::string(std::strerror(errno));
  }
  return {};
}

bool warnNoTotals(const kc::LoadedLog& l) {
  const std::string why = kc::noTotalsWarning(l);
  if (why.empty()) return false;
  std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: " << why << '\n';
  return true;
}

void warnStates(const std::vector<kc::LoadedLog>& logs, bool no_totals,
                const std::vector<std::string>* states) {
  for (size_t k = 0; k < logs.size(); ++k) {
    const kc::LoadedLog& l = logs[k];
    if (no_totals && warnNoTotals(l)) continue;
    const std::string state = states != nullptr ? (*states)[k] : kc::logState(l);
    if (state == "complete" || state == "data after end") continue;
    std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: " << kc::logStateWarning(l) << '\n';
  }
}

std::string noSegmentText(const kc::LogData& log, long long n) {
  std::string s = fmt::format("no segment {} (the log has {})", n, kc::counted(log.segments.size(), "capture window"));
  if (log.segments.empty())
    s += ": it was recorded from start to exit (KCOUNT_START=on), so the whole log is the recording; "
         "segments are the windows of a run started paused (kcount ctl, KCOUNT_CAPTURE_RANGE): leave out --segment";
  return s;
}

std::vector<LoadedLog> loadAll(const std::vector<std::string>& given, const JoinOptions& join, bool streaming,
                               Windows windows) {
  std::vector<kc::LoadedLog> logs;
  // One log given: no copy to find, no parts to group, so its head is not read (the file is opened once).
  // Several: each head is read once, for both.
  std::vector<std::vector<std::string>> groups;
  if (given.size() == 1) {
    groups = {given};
  } else {
    std::vector<kc::LogData> heads = kc::readLogHeads(given), kept_heads;
    {
      std::vector<kc::LogData*> ptrs;
      for (auto& h : heads) ptrs.push_back(&h);
      kc::adoptUnnamedParts(given, ptrs);  // a part without metadata: numbered by its name
    }
    const std::vector<std::string> paths = uniqueFiles(given, heads, kept_heads);
    groups = kc::groupRotatedParts(paths, kept_heads);
  }
  logs.reserve(groups.size());
  for (const auto& g : groups) {
    if (g.size() == 1) {
      if (const std::string why = notALogFile(g.front()); !why.empty()) {
        // A device (/dev/null), FIFO or folder: no log to read, said as check says it.
        kc::LoadedLog l;
        l.path = g.front();
        l.data.not_a_log = true;
        l.data.issues.push_back({kc::ReadIssue::Severity::kError, kc::ReadIssue::kNoOffset, -1, why});  // no byte read
        logs.push_back(std::move(l));
        continue;
      }
    }
    kc::LoadedLog l = streaming ? kc::streamParts(g, join) : kc::loadParts(g, join);
    // A summary-mode log has no records to count by window (kc::windowTotals): no second pass.
    if (streaming && !l.data.summary_mode &&
        (windows == Windows::kAll || (windows == Windows::kShown && kc::windowsShown(l.data))))
      kc::addWindowTotals(l, join);
    logs.push_back(std::move(l));
  }
  return logs;
}

int refuseLogsWithoutTotals(const std::vector<kc::LoadedLog>& logs, const char* command) {
  int rc = 0;
  for (const auto& l : logs)
    if (const std::string why = kc::noTotalsWarning(l); !why.empty()) {
      std::cerr << "kcount: " << command << ": " << kc::shownPath(l.path) << ": error: " << why
                << " (its numbers are not known, not zeros: nothing to " << (std::string_view(command) == "diff" ? "compare" : "chart")
                << ")\n";
      rc = 2;
    }
  return rc;
}

void printIssues(const kc::LoadedLog& l) {
  for (const auto& i : l.data.issues)
    std::cerr << "kcount: " << kc::shownPath(l.path) << ": "
              << (i.severity == kc::ReadIssue::Severity::kError ? "error: " : "warning: ") << i.message << "\n";
}

void printIntactIssues(const std::vector<kc::LoadedLog>& logs) {
  for (const auto& l : logs) {
    if (!l.data.intact()) continue;
    for (const auto& i : l.data.issues)
      if (!isAfterEndIssue(l, i))
        std::cerr << "kcount: " << kc::shownPath(l.path) << ": "
                  << (i.severity == kc::ReadIssue::Severity::kError ? "error: " : "warning: ") << i.message << "\n";
  }
}

int selectLogs(std::vector<kc::LoadedLog>& logs, bool salvage, bool issues_in_output) {
  int rc = 0;
  std::vector<kc::LoadedLog> kept;
  for (auto& l : logs) {
    if (l.data.intact()) {
      // Reported from the log before the End record; the bytes after it are named on stderr, so a pipe sees
      // it, once, in the reader's words (whether they are a second log or not); printIntactIssues() skips it.
      for (const auto& i : l.data.issues)
        if (isAfterEndIssue(l, i))
          std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: " << i.message << '\n';
      kept.push_back(std::move(l));
      continue;
    }
    const bool salvaged = salvage && !l.data.not_a_log && !l.data.unsupported_version && l.data.chunks_read > 0;
    if (!(salvaged && issues_in_output)) printIssues(l);
    if (l.data.not_a_log) {
      // Nothing to salvage: --salvage is not suggested.
      if (salvage) std::cerr << "kcount: " << kc::shownPath(l.path) << ": nothing intact to report (not a kcount log)\n";
      rc = 2;
    } else if (l.data.unsupported_version) {
      std::cerr << "kcount: " << kc::shownPath(l.path) << ": log " << kc::unsupportedVersionText(l.data) << '\n';
      rc = 2;
    } else if (!salvage && l.data.chunks_read == 0) {
      std::cerr << "kcount: " << kc::shownPath(l.path) << ": damaged log with nothing intact (no chunk could be read)\n";
      rc = 2;
    } else if (!salvage) {
      std::cerr << "kcount: " << kc::shownPath(l.path) << ": damaged log; --salvage reports the intact part\n";
      rc = 2;
    } else if (l.data.chunks_read == 0) {
      std::cerr << "kcount: " << kc::shownPath(l.path) << ": nothing intact to report\n";
      rc = 2;
    } else {
      kept.push_back(std::move(l));
    }
  }
  // Without --salvage nothing is printed when a log is damaged: partial numbers must be asked for.
  if (rc != 0 && !salvage) kept.clear();
  logs = std::move(kept);
  return rc;
}

LoadedLog loadParts(const std::vector<std::string>& paths, const JoinOptions& join) {
  if (paths.size() == 1) return loadLog(paths.front(), join);
  std::vector<LogData> parts;
  for (const auto& p : paths) parts.push_back(readLogFile(p));
  LoadedLog l;
  l.path = joinedName(paths);
  l.files = paths;
  l.data = joinRotatedParts(std::move(parts), paths);
  compactScopes(l.data);
  l.summary = summarize(l.data, join);
  noteSummaryIssues(l);
  return l;
}

LoadedLog streamParts(const std::vector<std::string>& paths, const JoinOptions& join) {
  if (paths.size() == 1) return streamLog(paths.front(), join);
  StreamedLog s = summarizeLogFiles(paths, join);
  LoadedLog l;
  l.path = joinedName(paths);
  l.files = paths;
  l.data = std::move(s.data);
  l.summary = std::move(s.summary);
  noteSummaryIssues(l);
  return l;
}

void warnSameRun(const std::vector<kc::LoadedLog>& a, const std::vector<kc::LoadedLog>& b,
                 const std::vector<std::string>& states_a, const std::vector<std::string>& states_b) {
  auto filesOf = [](const kc::LoadedLog& l) { return l.files.empty() ? std::vector<std::string>{l.path} : l.files; };
  // The rotated part numbers of a log's files, from what was read (no file opened again).
  auto partsOf = [](const kc::LoadedLog& l) {
    return l.files.empty() ? std::vector<uint32_t>{l.data.rotationPart()} : l.data.joined_parts;
  };
  // A side's files by device and inode (the same file also through another name or a link), each with the
  // path it was given as; files that cannot be looked at are left out.
  using FileKey = std::pair<dev_t, ino_t>;
  auto keyOf = [](const std::string& path) -> std::optional<FileKey> {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return FileKey{st.st_dev, st.st_ino};
  };
  auto keysOf = [&](const kc::LoadedLog& l) {
    std::set<FileKey> keys;
    for (const auto& f : filesOf(l))
      if (const auto k = keyOf(f)) keys.insert(*k);
    return keys;
  };
  auto sideFiles = [&](const std::vector<kc::LoadedLog>& side) {
    std::map<FileKey, std::string> files;
    for (const auto& l : side)
      for (const auto& f : filesOf(l))
        if (const auto k = keyOf(f)) files.try_emplace(*k, f);
    return files;
  };
  const std::map<FileKey, std::string> fa = sideFiles(a), fb = sideFiles(b);
  std::vector<std::string> shared, only_a, only_b;  // paths as side A (shared, only_a) or B (only_b) gave them
  for (const auto& [k, p] : fa) (fb.count(k) ? shared : only_a).push_back(p);
  for (const auto& [k, p] : fb)
    if (!fa.count(k)) only_b.push_back(p);
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& p : v) s += (s.empty() ? "" : ", ") + kc::shownPath(p);
    return s;
  };
  auto logPaths = [&](const std::vector<kc::LoadedLog>& side) {
    std::vector<std::string> v;
    for (const auto& l : side) v.push_back(l.path);
    return joined(v);
  };
  auto files = [](size_t n, std::string_view what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); };
  if (!shared.empty()) {
    std::cerr << "kcount: diff: warning: ";
    if (only_a.empty() && only_b.empty()) {
      std::cerr << "A (" << logPaths(a) << ") and B (" << logPaths(b) << ") hold the same file"
                << (shared.size() == 1 ? "" : "s") << ": every difference is zero\n";
    } else if (only_a.empty() || only_b.empty()) {
      // One side is the other plus files of its own: B - A (or A - B) is those files' numbers.
      const bool b_more = only_a.empty();
      const char* big = b_more ? "B" : "A";
      const char* small = b_more ? "A" : "B";
      const std::vector<std::string>& extra = b_more ? only_b : only_a;
      std::cerr << big << " (" << logPaths(b_more ? b : a) << ") holds " << small << "'s "
                << (shared.size() == 1 ? "file" : "files") << " (" << joined(shared) << ") and "
                << files(extra.size(), "other file") << " ("
                << joined(extra) << "): a side sums its logs, so every change (B - A) is "
                << (b_more ? "" : "minus ") << (extra.size() == 1 ? "that file's" : "those files'")
                << " numbers, not a change between two runs\n";
    } else {
      std::cerr << "A (" << logPaths(a) << ") and B (" << logPaths(b) << ") both hold "
                << (shared.size() == 1 ? "the file " : "the files ") << joined(shared)
                << ": a side sums its logs, so " << (shared.size() == 1 ? "its" : "their")
                << " numbers cancel out of every change (B - A), which compares the other files alone\n";
    }
  }
  for (size_t ia = 0; ia < a.size(); ++ia)
    for (size_t ib = 0; ib < b.size(); ++ib) {
      const kc::LoadedLog &la = a[ia], &lb = b[ib];
      const std::set<FileKey> ka = keysOf(la), kb = keysOf(lb);
      if (std::any_of(ka.begin(), ka.end(), [&](const FileKey& k) { return kb.count(k) > 0; })) continue;  // said above
      const std::string id = kc::runIdentity(la.data);
      if (id.empty() || id != kc::runIdentity(lb.data)) continue;
      const std::vector<uint32_t> pa = partsOf(la), pb = partsOf(lb);
      const bool shared_part =
          std::any_of(pa.begin(), pa.end(), [&](uint32_t k) { return std::find(pb.begin(), pb.end(), k) != pb.end(); });
      bool lacks = false;
      const std::string how = shared_part ? copiesDiffer(la, lb, states_a[ia], states_b[ib], lacks) : std::string();
      if (shared_part && lacks)
        // One copy was cut, damaged or taken while recording: the differences are what it lacks.
        std::cerr << "kcount: diff: warning: A (" << kc::shownPath(la.path) << ") and B (" << kc::shownPath(lb.path)
                  << ") are copies of one recording (same host, pid and start) that differ (" << how
                  << "): the diff compares a run with a copy that lacks part of it, so every difference is what one "
                     "copy lacks, not a difference between runs\n";
      else if (shared_part && !how.empty())
        // Bytes after one copy's End record (not read): both hold every record of the run.
        std::cerr << "kcount: diff: warning: A (" << kc::shownPath(la.path) << ") and B (" << kc::shownPath(lb.path)
                  << ") are copies of one recording (same host, pid and start) that differ (" << how
                  << ") but hold the same records: the diff compares a run "
                     "with itself, so it shows no difference between runs\n";
      else if (shared_part)
        std::cerr << "kcount: diff: warning: A (" << kc::shownPath(la.path) << ") and B (" << kc::shownPath(lb.path)
                  << ") are copies of one recording (same host, pid and start): the diff compares a run with "
                     "itself, so it shows no difference between runs\n";
      else
        std::cerr << "kcount: diff: warning: A (" << kc::shownPath(la.path) << ") and B (" << kc::shownPath(lb.path)
                  << ") are parts of one rotated run (same host, pid and start_ns): the diff compares parts of "
                     "one run, not two runs (give all parts to summary to read the run)\n";
    }
}

}  // namespace kc
