// kcount command line: summary, kernels, check, run, export, report. See docs/usage.md.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "collector/parse.h"
#include "collector/shown_value.h"
#include "tools/cli_checks.h"
#include "tools/ctl.h"
#include "tools/exporter.h"
#include "tools/export.h"
#include "tools/html_report.h"
#include "tools/diff.h"
#include "tools/multi_log.h"
#include "tools/report.h"
#include "tools/run.h"
#include "tools/series.h"
#include "tools/table_width.h"

namespace {

kc::JoinOptions g_join;  // set by --graph-view
/// Most kernels `summary --top` lists per range (a range has at most this many names worth reading).
constexpr int kMaxTop = 10000;
constexpr long long kMaxOccurrences = 1000000000000LL;  // ctl --count/--skip: 10^12 range occurrences
/// Default `export --max-mb`: the Chrome trace size above which export refuses without --force.
/// chrome://tracing and the Perfetto UI load a JSON trace into the browser's memory; traces of a few
/// hundred MB and more fail to open there (Perfetto's docs advise its trace processor for larger ones).
constexpr double kDefaultMaxTraceMb = 256;
/// Widest `--width` accepted (display columns).
constexpr long long kMaxWidth = 100000;
/// --help of summary's, kernels' and diff's --width.
constexpr const char* kWidthHelp =
    "display columns the tables fit by shortening their range and kernel names, never the numbers (0: no limit; "
    "default: the terminal's width when output is a terminal, else no limit)";

/// Display columns the text tables fit: --width when given (`given` >= 0; 0: no limit), else
/// kc::terminalWidth() (0, no limit, when standard output is not a terminal).
size_t tableWidth(long long given) { return given >= 0 ? static_cast<size_t>(given) : kc::terminalWidth(); }

/// Says on stderr that `cmd`'s --width, when given, does nothing with a `format` other than table (CSV and
/// JSON keep names whole) nor with --full-names (nothing is shortened), and that --full-names does nothing
/// where names are always whole (JSON; diff's CSV). Notes only: the command goes on (exit status unchanged).
void noteWidthUnused(const CLI::App* cmd, const std::string& format) {
  if (format != "table" && cmd->get_option("--width")->count() > 0)
    std::cerr << "kcount: --width fits the lines of the table format: no effect with --format " << format << "\n";
  // --full-names shows names whole: there is nothing left to fit.
  else if (cmd->get_option("--width")->count() > 0 && cmd->get_option("--full-names")->count() > 0)
    std::cerr << "kcount: --width fits names to the line by shortening them: no effect with --full-names (names "
                 "are shown whole)\n";
  // --full-names names kernels (and ranges) whole in the table, and in the CSV of summary (its top-kernels
  // column) and kernels (its kernel column); JSON always gives names whole, diff's CSV too.
  const bool csv_uses = cmd->get_name() != "diff";
  if (cmd->get_option("--full-names")->count() > 0 && (format == "json" || (format == "csv" && !csv_uses)))
    std::cerr << "kcount: --full-names shows whole names in the table format" << (csv_uses ? " and CSV" : "")
              << ": no effect with --format " << format << " (its names are whole)\n";
}

/// Which per-window totals (Segment records) a streamed log needs: none (diff), those the summary table
/// shows (kcount::windowsShown), or all (JSON lists every window).
enum class Windows { kNone, kShown, kAll };

/// Every log read into memory (records kept), or with `streaming` summarized in one pass (no records kept:
/// enough for summary tables and JSON; memory independent of the number of records). The files of one
/// rotated log, in any order, are one log. Per-window totals take one more streaming pass over a log with
/// capture windows, only when `windows` asks for them.
/// `paths` without repeats (kc::findDuplicates): a file given a second time (same device and inode,
/// whatever its name: "r.kcount" and "./r.kcount", or a hard link) or a copy of a recording given before
/// (same host, pid, start_ns and rotated part, same size): each repeat is named on stderr and read once,
/// so its numbers are not counted twice. Copies of different sizes (one cut, damaged or copied while
/// recording) are named and both kept, so the damage of either is still reported. Paths that cannot be
/// stat'ed are kept (the reader names the error).
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

/// Why `path` cannot be read as a log, in words, or "" for a regular file this process may read, which
/// the reader reads (an empty one is "not a kcount log: empty file (0 bytes)"). `cannot_read` tells the
/// two kinds apart: true for a path that is missing or may not be read ("cannot read it: " + strerror:
/// "No such file or directory", "Permission denied"), false for one that is no log file whoever reads it
/// ("a folder, not a log file"; "not a regular file (...)" for /dev/null and other devices, FIFOs,
/// sockets: a FIFO's open would block; "a /proc or /sys file (...)", whose size reads as 0 whatever it holds). Never opens the file (the reader opens it, once): read permission
/// is asked of the system with this process's effective ids (faccessat AT_EACCESS).
std::string notALogFile(const std::string& path, bool* cannot_read = nullptr) {
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

/// "kcount: LOG: warning: no totals: summary mode: ..." on stderr (kc::noTotalsWarning, its losses included)
/// when `l` is a summary-mode log without a complete snapshot, so without numbers; the one place that line
/// is written. Returns whether it was written.
bool warnNoTotals(const kc::LoadedLog& l) {
  const std::string why = kc::noTotalsWarning(l);
  if (why.empty()) return false;
  std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: " << why << '\n';
  return true;
}

/// One warning line on stderr per log that is not complete and clean (lossy, incomplete, damaged and
/// salvaged, or a rotated part read alone): the summary footer's state line (kc::logStateWarning), for
/// the commands that print no footer (kernels, export, report, diff), after the reader's warnings
/// (printIntactIssues), as the footer lists them under its state line: a log cut by a kill gets both its
/// "no end record" warning and "log INCOMPLETE". A log with data after its end record was named by
/// selectLogs. With `no_totals`, a summary-mode log without a complete snapshot is named as holding no
/// totals (kc::noTotalsWarning, its losses included) instead. `states`: each log's kc::logState() when the
/// caller holds them (computed here otherwise).
void warnStates(const std::vector<kc::LoadedLog>& logs, bool no_totals = false,
                const std::vector<std::string>* states = nullptr) {
  for (size_t k = 0; k < logs.size(); ++k) {
    const kc::LoadedLog& l = logs[k];
    if (no_totals && warnNoTotals(l)) continue;
    const std::string state = states != nullptr ? (*states)[k] : kc::logState(l);
    if (state == "complete" || state == "data after end") continue;
    std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: " << kc::logStateWarning(l) << '\n';
  }
}

/// Why --segment N finds nothing in `log`: "no segment N (the log has K capture windows)", and for a log
/// without any window (recorded from start to exit, KCOUNT_START=on) that the whole log is the recording.
std::string noSegmentText(const kc::LogData& log, long long n) {
  std::string s = fmt::format("no segment {} (the log has {})", n, kc::counted(log.segments.size(), "capture window"));
  if (log.segments.empty())
    s += ": it was recorded from start to exit (KCOUNT_START=on), so the whole log is the recording; "
         "segments are the windows of a run started paused (kcount ctl, KCOUNT_CAPTURE_RANGE): leave out --segment";
  return s;
}

std::vector<kc::LoadedLog> loadAll(const std::vector<std::string>& given, bool streaming = false,
                                   Windows windows = Windows::kNone) {
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
    kc::LoadedLog l = streaming ? kc::streamParts(g, g_join) : kc::loadParts(g, g_join);
    // A summary-mode log has no records to count by window (kc::windowTotals): no second pass.
    if (streaming && !l.data.summary_mode &&
        (windows == Windows::kAll || (windows == Windows::kShown && kc::windowsShown(l.data))))
      kc::addWindowTotals(l, g_join);
    logs.push_back(std::move(l));
  }
  return logs;
}

/// Time zero of `--from/--to`: the log's start_ns metadata (when the library started), else its first
/// record.
uint64_t logStartNs(const kc::LogData& d) {
  const std::string text = d.meta("start_ns");
  uint64_t v = 0;
  if (!text.empty() && std::from_chars(text.data(), text.data() + text.size(), v).ec == std::errc() && v > 0)
    return v;
  return kc::recordTimeSpan(d).first;
}

/// "the log spans 0 to 12.3 s" (the longest of the logs), for the export size message.
std::string spanText(const std::vector<kc::LoadedLog>& logs) {
  uint64_t end = 0;
  for (const auto& l : logs) {
    const uint64_t start = logStartNs(l.data), last = kc::recordTimeSpan(l.data).second;
    end = std::max(end, last > start ? last - start : 0);
  }
  return "the log" + std::string(logs.size() > 1 ? "s span" : " spans") + " 0 to " + kc::formatDuration(end);
}

/// " --segment N (one of the log's 3 capture windows, 0 to 2)," or "" for logs without capture windows,
/// for the export size message.
std::string segmentsText(const std::vector<kc::LoadedLog>& logs) {
  size_t n = 0;
  for (const auto& l : logs) n = std::max(n, l.data.segments.size());
  if (n < 2) return "";
  return fmt::format(" --segment N (one of the {} capture windows, 0 to {}),", n, n - 1);
}

/// `path` opened for writing (truncated), or std::runtime_error "cannot write PATH: REASON" (the
/// system's reason, or "it is a folder").
std::ofstream openOutput(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error("cannot write " + kc::shownPath(path) + ": it is a folder (-o names the file to write)");
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error("cannot write " + kc::shownPath(path) + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
  return out;
}

/// Why `kcount export --format FORMAT -o OUTPUT [--table TABLE]` cannot write, or "" if it can. One rule for
/// every format: -o names what is written (a file; a folder for csv) and an existing one of that kind is
/// replaced (csv: the table files of those names in the folder); an existing one of the other kind is
/// refused, never removed. "-" is standard output for the text formats (chrome, json; csv with --table,
/// one table), not for sqlite (a database is a file).
std::string exportOutputError(const std::string& format, const std::string& output, const std::string& table) {
  if (output == "-") {
    if (format == "sqlite")
      return "--format sqlite cannot write to standard output (-o -): a SQLite database is a file; name one "
             "with -o FILE";
    if (format == "csv" && table.empty()) {
      std::string names;
      for (const auto& t : kc::csvTableNames()) names += (names.empty() ? "" : ", ") + t;
      return "--format csv -o - writes one table to standard output: name it with --table (" + names + ")";
    }
    return {};
  }
  std::error_code ec;
  const auto st = std::filesystem::status(output, ec);
  if (format == "csv") {
    if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
      return "cannot write " + kc::shownPath(output) + ": it is a file, not a folder (--format csv writes one file per table "
             "into the folder -o names; --table NAME -o - writes one table to standard output)";
  } else if (std::filesystem::is_directory(st)) {
    return "cannot write " + kc::shownPath(output) + ": it is a folder (-o names the file to write)";
  }
  return {};
}

/// Why the file `path`, which an output would replace, must not be written: it is one of the logs given
/// (the same file, also through another name or a link), or another kcount log (it starts with kLogMagic,
/// "KCOUNTLG": a part of a rotated run not given, another run); "" otherwise (also when it does not exist).
std::string replacesALog(const std::string& path, const std::vector<std::string>& logs) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  for (const auto& p : logs)
    if (std::filesystem::equivalent(path, p, ec) && !ec)
      return kc::shownPath(path) + " is the log " + kc::shownPath(p) + " (writing there would replace it); name another output";
  char head[sizeof(kc::kLogMagic)] = {};
  std::ifstream in(path, std::ios::binary);
  if (in.read(head, sizeof(head)) && std::memcmp(head, kc::kLogMagic, sizeof(head)) == 0)
    return kc::shownPath(path) + " is a kcount log (writing there would replace it); name another output";
  return {};
}

/// Why -o OUTPUT must not be written: a file it would replace is a kcount log (replacesALog(); for
/// --format csv, the table files in the folder OUTPUT: every table's, or `table`'s alone); "" otherwise
/// ("-" never is).
std::string outputIsALog(const std::string& output, const std::vector<std::string>& logs, const std::string& format,
                         const std::string& table) {
  if (output == "-") return {};
  if (format != "csv") {
    const std::string why = replacesALog(output, logs);
    return why.empty() ? why : "-o " + why;
  }
  for (const auto& t : kc::csvTableNames()) {
    if (!table.empty() && t != table) continue;
    if (std::string why = replacesALog((std::filesystem::path(output) / (t + ".csv")).string(), logs); !why.empty())
      return "-o " + kc::shownPath(output) + ": " + why;
  }
  return {};
}

/// Why the last operation on `stream` failed, after `finish` (a flush or close) ran on it: the errno that
/// call set, or, for a stream that had failed before it (a write past the buffer, whose errno a later call
/// did not change: a failed stream makes no more system calls), the errno as it was then; 0 if unknown.
template <typename Stream, typename Finish>
int finishStream(Stream& stream, Finish&& finish) {
  const bool failed_before = !stream;
  const int before = errno;
  errno = 0;
  finish(stream);
  return errno != 0 ? errno : failed_before ? before : 0;
}

/// Closes `out`, written to `path`; std::runtime_error "cannot write PATH: REASON" if a write failed.
void closeOutput(std::ofstream& out, const std::string& path) {
  const int e = finishStream(out, [](std::ofstream& o) { o.close(); });
  if (!out) throw std::runtime_error("cannot write " + kc::shownPath(path) + (e != 0 ? std::string(": ") + std::strerror(e) : ""));
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

/// Warns when diff's two sides hold the same files (every difference is zero), when one side holds a file of
/// the other among files of its own (each difference is those files' numbers: a side sums its logs), or
/// when they share some files (their numbers cancel out); and, for logs that share no file, when they are
/// copies of one recording (same host, pid, start_ns and rotated part numbers: the diff compares a run with
/// itself) or parts of one rotated run (same host, pid and start_ns, other part numbers): a diff compares
/// two runs, so the result would only show how the parts differ.
/// `states_a[i]` is kc::logState() of a[i], `states_b` of b's (the caller holds them).
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

/// diff and report compare or chart numbers: a summary-mode log that holds no totals (no complete snapshot,
/// kc::noTotalsWarning) would be read as zeros (a made-up drop to 0), so it is refused: one error line per
/// such log on stderr, naming why it has none. Returns 2 when a log was refused, else 0.
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

/// The reader's issues of `l`, one line each on stderr: "kcount: PATH: error: MESSAGE" (or "warning:"); each
/// message names its own place in the file (kc::ReadIssue::message).
void printIssues(const kc::LoadedLog& l) {
  for (const auto& i : l.data.issues)
    std::cerr << "kcount: " << kc::shownPath(l.path) << ": "
              << (i.severity == kc::ReadIssue::Severity::kError ? "error: " : "warning: ") << i.message << "\n";
}

/// Whether `i` is the reader's warning of bytes after `l`'s End record ("N bytes follow the end record, from
/// byte B[: a second log starts there ...]; only the log before them ... is read"), which selectLogs() prints.
bool isAfterEndIssue(const kc::LoadedLog& l, const kc::ReadIssue& i) {
  return l.data.dataAfterEnd() && i.severity == kc::ReadIssue::Severity::kWarning &&
         i.offset == l.data.after_end_offset &&
         i.message.starts_with(kc::counted(l.data.after_end_bytes, "byte") + " follow");
}

/// The reader's issues of the logs that selectLogs() kept intact, on stderr (printIssues()): the damaged ones'
/// were printed there, and so was the warning of bytes after the End record (isAfterEndIssue()). For the
/// outputs that carry no issues of their own (kernels, diff, export, report, summary --format csv; the
/// summary table's footer and its JSON's "issues" list them).
void printIntactIssues(const std::vector<kc::LoadedLog>& logs) {
  for (const auto& l : logs) {
    if (!l.data.intact()) continue;
    for (const auto& i : l.data.issues)
      if (!isAfterEndIssue(l, i))
        std::cerr << "kcount: " << kc::shownPath(l.path) << ": "
                  << (i.severity == kc::ReadIssue::Severity::kError ? "error: " : "warning: ") << i.message << "\n";
  }
}

/// Logs summary/kernels may report, and their exit status (docs/reader-guarantees.md). A log that is
/// not intact (an error, or a cut tail) makes the status 2 and is left out, unless `salvage`: then it is
/// reported from what was read intact, and only a log with nothing intact (no chunk read) gives 2.
/// Issues go to stderr; an intact log's warnings (no End record) are in the report itself. With
/// `issues_in_output` (the summary table, whose footer lists them), a salvaged log's issues are not also
/// printed on stderr.
int selectLogs(std::vector<kc::LoadedLog>& logs, bool salvage, bool issues_in_output = false) {
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

}  // namespace

int kcountMain(int argc, char** argv) {
  CLI::App app{"kcount: kernel launches, GPU kernels and their time per NVTX range"};
  app.set_version_flag("--version", std::string(KCOUNT_VERSION));
  app.require_subcommand(1);

  std::vector<std::string> paths;
  std::string format = "table";
  std::string view = "tree";
  int top = 3;
  bool full_names = false;
  bool salvage = false;

  auto* summary = app.add_subcommand("summary", "per-range table of launches, kernels and time");
  summary->add_option("logs", paths, "log files")->required();
  summary->add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  summary->add_option("--view", view, "tree (inclusive, indented), inclusive (flat paths) or innermost (launches, kernels and GPU time "
                  "exclusive: made while the range was innermost; CPU time stays the range's wall time, its "
                  "children's included)")
      ->check(CLI::IsMember({"tree", "inclusive", "innermost"}));
  summary->add_option("--top", top, "kernels listed per range (0: none)")->check(kc::wholeNumber(0, kMaxTop));
  summary->add_flag("--full-names", full_names,
                    "show full demangled kernel names, and range names and paths unshortened");
  bool wide = false;
  summary->add_flag("--wide", wide, "verdict and top kernels as columns of the table (one long line per range)");
  // --metric and --sort choose among the same numbers (parseAcrossMetric() reads both); --sort also has "run".
  std::vector<std::string> metric_words;
  for (kc::AcrossMetric m : kc::kAcrossMetrics) metric_words.emplace_back(kc::acrossMetricName(m));
  std::vector<std::string> sort_words{"run"};
  sort_words.insert(sort_words.end(), metric_words.begin(), metric_words.end());
  std::string metric = "gpu";
  summary->add_option("--metric", metric, "with several logs: the number compared across logs")
      ->check(CLI::IsMember(metric_words));
  std::string sort = "run";
  summary->add_option("--sort", sort,
                      "row order of the table and CSV: run (depth first, as the ranges were first seen) or the "
                      "larger first by gpu, kernels, launches, cpu or launch-cpu (among siblings in the tree view, "
                      "among all rows in the flat views)")
      ->check(CLI::IsMember(sort_words));
  std::string graph_view = "launch";
  summary->add_option("--graph-view", graph_view,
                      "where CUDA graph kernels are credited: launch (range around the graph launch) or capture "
                      "(range open when the kernel was captured)")
      ->check(CLI::IsMember({"launch", "capture"}))
      ->each([](const std::string& v) {
        g_join.graph_view = v == "capture" ? kc::GraphView::kCapturePath : kc::GraphView::kLaunch;
      });
  summary->add_flag("--salvage", salvage, "summarize the intact part of a damaged log (exit 0 if any)");
  long long segment = -1;
  summary->add_option("--segment", segment, "only capture window N (its Segment record's index; format 1.2)")
      ->check(kc::wholeNumber(0, UINT32_MAX));
  bool series = false;
  summary->add_flag("--series", series,
                    "summary-mode logs: per range, the change between consecutive snapshots (--format table, csv or json)");

  long long width = -1;  // --width; -1: not given (the terminal's width, tableWidth())
  summary->add_option("--width", width, kWidthHelp)->check(kc::wholeNumber(0, kMaxWidth));

  auto* kernels = app.add_subcommand("kernels", "per kernel name: count, GPU time, grid/block, ranges");
  kernels->add_option("logs", paths, "log files")->required();
  kernels->add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  kernels->add_flag("--full-names", full_names, "show full demangled kernel names");
  kernels->add_flag("--salvage", salvage, "list the kernels of the intact part of a damaged log (exit 0 if any)");
  std::string kernels_range;
  kernels->add_option("--range", kernels_range,
                      "only the kernels of this range and the ranges nested in it, by its path as summary shows it "
                      "(e.g. step/mlp; with its NVTX domains: step/mylib: gemm): counts and averages over that "
                      "range, not the whole run");
  std::string kernels_sort = "gpu";
  kernels->add_option("--sort", kernels_sort,
                      "row order: gpu (GPU total time, largest first; the default), count (kernels), avg (GPU time "
                      "per kernel) or name (A to Z); csv and json follow it")
      ->check(CLI::IsMember({"gpu", "count", "avg", "name"}));
  kernels->add_option("--width", width, kWidthHelp)->check(kc::wholeNumber(0, kMaxWidth));

  std::vector<std::string> diff_a, diff_b;
  auto* diff = app.add_subcommand("diff", "compare two runs per range and overall; kernels matched by decoded identity");
  diff->add_option("logs", paths, "two logs, A then B (or -a/-b for several logs per side)");
  diff->add_option("-a,--a", diff_a, "logs of side A (ranks of one job, or runs)");
  diff->add_option("-b,--b", diff_b, "logs of side B");
  diff->add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  diff->add_flag("--full-names", full_names,
                 "show full demangled kernel names and range paths unshortened in the table (verdict lines stay "
                 "bounded)");
  diff->add_flag("--salvage", salvage, "compare the intact part of damaged logs (exit 0 if any)");
  diff->add_option("--width", width, kWidthHelp)->check(kc::wholeNumber(0, kMaxWidth));

  auto* check = app.add_subcommand("check", "validate logs: exit 0 clean, 1 incomplete, lossy (records dropped) or without totals, 2 damaged");
  check->add_option("logs", paths, "log files")->required();
  check->add_flag("--salvage", salvage, "also print the summary of the intact part (exit status unchanged)");

  std::string output;
  auto* exp = app.add_subcommand("export", "logs as a Chrome trace (Perfetto), SQLite, CSV or JSON records");
  exp->add_option("logs", paths, "log files")->required();
  exp->add_option("--format", format, "chrome (trace JSON), sqlite, csv (a folder of files) or json")
      ->required()->check(CLI::IsMember({"chrome", "sqlite", "csv", "json"}));
  exp->add_option("-o,--output", output,
                  "output file (a folder for csv), replaced if it exists; - for standard output (chrome, json; csv "
                  "with --table)")
      ->required();
  std::string csv_table;
  exp->add_option("--table", csv_table,
                  "csv: only this table's file; with -o -, that table to standard output")
      ->check(CLI::IsMember(kc::csvTableNames()));
  exp->add_flag("--salvage", salvage, "export the intact part of a damaged log (exit 0 if any)");
  long long exp_segment = -1;
  exp->add_option("--segment", exp_segment, "only capture window N (its Segment record's index; format 1.2)")
      ->check(kc::wholeNumber(0, UINT32_MAX));
  std::string from_text, to_text;
  auto durationCheck = CLI::Validator(
      [](std::string& in) -> std::string {
        if (kc::parseDurationNs(in)) return std::string();
        if (kc::tooLargeDuration(in))
          return "Value " + in + " is " + std::string(kc::kDurationTooLarge);
        return "Value " + in + " is not a duration (2.5s, 300ms, 40us, 1200ns; a plain number is seconds)";
      },
      "TIME");
  exp->add_option("--from", from_text,
                  "only records that overlap the window from this time after the log's start (2.5s, 300ms, 40us, "
                  "1200ns; a plain number is seconds)")
      ->check(durationCheck);
  exp->add_option("--to", to_text, "end of that window, after the log's start (default: the end of the log)")
      ->check(durationCheck);
  double max_mb = kDefaultMaxTraceMb;
  exp->add_option("--max-mb", max_mb,
                  "chrome: refuse a trace estimated above this many MB (default 256; viewers of JSON traces fail "
                  "above a few hundred MB)")
      ->check(kc::positiveDecimal(1e9));
  bool force = false;
  exp->add_flag("--force", force, "chrome: write the trace whatever its estimated size");

  auto* html = app.add_subcommand("report", "one self-contained HTML page: range tree chart, kernels, A vs B for two logs");
  html->add_option("logs", paths, "log files (two: side by side)")->required();
  html->add_option("-o,--output", output, "HTML file to write, replaced if it exists; - for standard output")
      ->required();
  html->add_flag("--salvage", salvage, "report the intact part of damaged logs (exit 0 if any)");

  kc::RunOptions run_opt;
  auto* run = app.add_subcommand("run", "run a command with libkcount.so injected");
  run->add_option("--output", run_opt.output, "log path pattern (%h host, %p pid, %r rank) or directory");
  run->add_option("--inject", run_opt.inject, "preload (LD_PRELOAD) or cuda (CUDA_INJECTION64_PATH)")
      ->check(CLI::IsMember({"preload", "cuda"}));
  run->add_option("--lib", run_opt.lib, "path of libkcount.so");
  run->add_flag("--torch-modules", run_opt.torch_modules,
                "PyTorch: one NVTX range per nn.Module call, named by its qualified name (docs/torch-modules.md)");
  run->add_flag("--torch-backward", run_opt.torch_backward,
                "PyTorch: also one range per module backward (implies --torch-modules)");
  run->add_flag("--torch-ops", run_opt.torch_ops, "PyTorch: one NVTX range per aten op (PyTorch's emit_nvtx)");
  // Everything from the first argument that is not one of run's options on (or after "--") is the
  // command, passed on unchanged in order: CLI11's prefix command puts it into run->remaining().
  run->prefix_command();
  run->footer("COMMAND [ARGS...]: the program to run, e.g. kcount run -- python3 train.py --steps 20");
  run->add_flag("--paused", run_opt.paused, "start with recording paused (KCOUNT_START=paused): kcount ctl starts it");

  kc::CtlOptions ctl_opt;
  auto* ctl = app.add_subcommand("ctl", "control a running process: start, stop, status, flush");
  ctl->add_option("args", ctl_opt.args, "PID COMMAND, or COMMAND with --all");  // counted by runCtl (its usage line)
  ctl->add_flag("--all", ctl_opt.all, "every process of yours with a control socket (root: everyone's)");
  ctl->add_option("--duration", ctl_opt.duration, "start: stop by itself after this long (10s, 500ms, 2m)");
  ctl->add_option("--range", ctl_opt.range, "start: record occurrences of this NVTX range only");
  ctl->add_option("--count", ctl_opt.count, "with --range: occurrences recorded (default 1)")
      ->check(kc::wholeNumber(1, kMaxOccurrences));
  ctl->add_option("--skip", ctl_opt.skip, "with --range: occurrences passed over first (default 0)")
      ->check(kc::wholeNumber(0, kMaxOccurrences));
  ctl->add_option("--format", ctl_opt.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  ctl->add_option("--timeout", ctl_opt.timeout_s, "seconds to wait for the answer (default 30)")
      ->check(kc::positiveDecimal(86400));

  kc::ExporterOptions exporter_opt;  // kcount exporter (tools/exporter.cpp)
  auto* exporter = kc::addExporterCommand(app, exporter_opt);

  // `kcount help [COMMAND]` is answered before parsing (below); the subcommand lists it with the others.
  std::string help_command;
  auto* help = app.add_subcommand("help", "this help, or one command's: kcount help COMMAND");
  help->add_option("command", help_command, "the command whose help is printed");
  app.name("kcount");
  // The command names, "summary, kernels, ...", as `kcount --help` lists them: the one list every message
  // naming the commands uses.
  std::string command_names;
  for (const CLI::App* s : app.get_subcommands({}))
    command_names += (command_names.empty() ? "" : ", ") + s->get_name();

  if (argc < 2) {
    // No command: the usage and the commands there are (a usage error, exit 2).
    std::cerr << "kcount: no command given\n" << app.help();
    return 2;
  }

  // `kcount run [OPTIONS] -- COMMAND ARGS`: everything after run's "--" is the command, unchanged; CLI11
  // sees only what comes before it. Without "--", run's prefix command takes everything from the first
  // argument that is not one of run's options (run->remaining()).
  std::vector<std::string> after_dashes;
  bool had_dashes = false;
  if (argc > 1 && std::string_view(argv[1]) == "run") {
    for (int i = 2; i < argc; ++i) {
      const std::string_view a(argv[i]);
      if (a == "--") {
        had_dashes = true;
        after_dashes.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
      }
      if (!a.starts_with("-")) break;  // the command starts here (no "--")
      if (a == "--output" || a == "--inject" || a == "--lib") ++i;  // the option's value
    }
  }
  // `kcount help [COMMAND]`: what `kcount [COMMAND] --help` prints (exit 0; an unknown COMMAND: exit 2).
  // The command a mistyped one most likely meant: the only command it abbreviates ("su": summary), else
  // the nearest within 2 edits (collector/parse.h nameDistance); "" if none.
  const auto closestCommand = [&app](std::string_view given) {
    std::string closest;
    size_t closest_d = 3;
    size_t prefix_of = 0;
    std::string prefixed;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name().starts_with(given)) {
        ++prefix_of;
        prefixed = sub->get_name();
      }
      if (const size_t d = kc::nameDistance(given, sub->get_name(), 2); d < closest_d) {
        closest_d = d;
        closest = sub->get_name();
      }
    }
    return prefix_of == 1 ? prefixed : closest;
  };
  if (argc > 1 && std::string_view(argv[1]) == "help" &&
      (argc == 2 || std::string_view(argv[2]) == "--help" || std::string_view(argv[2]) == "-h" ||
       argv[2][0] != '-')) {
    if (argc > 2 && argv[2][0] == '-') argc = 2;  // kcount help --help: the overall help
    if (argc > 3) {
      std::cerr << "kcount help: unexpected argument '" << argv[3] << "' (kcount help [COMMAND]: one command)\n";
      return 2;
    }
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : app.get_subcommands({}))
      if (argc > 2 && s->get_name() == argv[2]) sub = s;
    if (argc > 2 && sub == nullptr) {
      const std::string closest = closestCommand(argv[2]);
      std::cerr << "kcount help: unknown command '" << argv[2] << "'"
                << (closest.empty() ? std::string() : " (did you mean '" + closest + "'?)") << " (commands: "
                << command_names << ")\n";
      return 2;
    }
    std::cout << (sub != nullptr ? sub->help("kcount") : app.help());
    return 0;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // An unknown command: named, with the commands there are (CLI11 says only "A subcommand is required").
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      const std::string closest = closestCommand(argv[1]);
      std::cerr << "kcount: unknown command '" << argv[1] << "'"
                << (closest.empty() ? std::string() : " (did you mean '" + closest + "'?)") << " (commands: "
                << command_names << "; kcount --help says more)\n";
      return 2;
    }
    // --help and --version exit 0; every usage error exits 2, as documented (CLI11's own codes vary).
    if (app.exit(e) == 0) return 0;
    // A file whose name starts with '-' is read as an option (its letters as short flags): say how to
    // name it.
    for (int i = 2; i < argc; ++i) {
      const std::string a(argv[i]);
      if (a == "--") break;
      std::error_code ec;
      if (a.size() > 1 && a[0] == '-' && std::filesystem::exists(a, ec))
        std::cerr << "kcount: \"" << a << "\" is a file, but a name starting with '-' is read as an option: put "
                  << "file names after \"--\" (kcount " << argv[1] << " [OPTIONS] -- \"" << a
                  << "\") or write it as \"./" << a << "\"\n";
    }
    return 2;
  }

  // diff's arity before its paths: `kcount diff a b c` is a usage error, not three missing files.
  if (*diff && !((diff_a.empty() && diff_b.empty() && paths.size() == 2) ||
                 (paths.empty() && !diff_a.empty() && !diff_b.empty()))) {
    // What was given, each side by its count, so that `diff -a A B` (-a takes every log after it) reads as
    // what it is: "-a with 2 logs, no -b".
    const auto logs = [](size_t n) { return fmt::format("{} log{}", n, n == 1 ? "" : "s"); };
    std::string given;
    if (diff_a.empty() && diff_b.empty()) given = logs(paths.size());
    else {
      if (!paths.empty()) given = logs(paths.size()) + " without -a/-b, ";
      given += diff_a.empty() ? "no -a" : "-a with " + logs(diff_a.size());
      given += diff_b.empty() ? ", no -b" : ", -b with " + logs(diff_b.size());
    }
    std::cerr << "kcount: diff takes two logs (A B), or -a LOG... -b LOG... (given: " << given << ")"
              << (!diff_a.empty() && diff_b.empty() && diff_a.size() > 1
                      ? "; -a takes every log after it up to the next option: kcount diff -a A... -b B..."
                      : "")
              << "\n";
    return 2;
  }

  // Log paths are checked here, after parsing, not by the parser: `--help` then wins over a bad path, and
  // the message names the path the way the rest of kcount does.
  if (*summary || *kernels || *diff || *exp || *html) {
    int missing = 0;
    for (const std::vector<std::string>* list : {&paths, &diff_a, &diff_b})
      for (const std::string& p : *list) {
        std::error_code ec;
        if (std::filesystem::exists(p, ec)) continue;
        ++missing;
        // exists() is false for a path it could not look up too (a name too long, a folder not searchable,
        // a loop of links): the reason is said then, not "no such file".
        if (ec && ec != std::errc::no_such_file_or_directory) {
          std::cerr << "kcount: " << kc::shownPath(p) << ": cannot look it up: " << ec.message() << '\n';
          continue;
        }
        const bool format_word = p == "csv" || p == "json" || p == "sqlite" || p == "chrome" || p == "table";
        std::cerr << "kcount: " << kc::shownPath(p) << ": no such file"
                  << (format_word ? " (a format is an option: --format " + p + ")"
                      : p == "-" ? " (logs are read from files, not from standard input: save it to a file first; "
                                   "./- names a file called -)"
                                 : "")
                  << '\n';
      }
    if (missing > 0) return 2;
  }

  try {
    if (*summary) {
      kc::SummaryOptions opt;
      opt.view = view == "inclusive" ? kc::SummaryView::kInclusive
                 : view == "innermost" ? kc::SummaryView::kInnermost
                                       : kc::SummaryView::kTree;
      opt.top_kernels = top;
      opt.full_names = full_names;
      opt.wide = wide;
      opt.width = tableWidth(width);
      noteWidthUnused(summary, format);
      opt.sort = kc::parseAcrossMetric(sort);  // "run": none, the run order
      // One streaming pass per log, unless the records are needed (--segment selects records by window).
      auto logs = loadAll(paths, /*streaming=*/segment < 0, format == "json" ? Windows::kAll : Windows::kShown);
      const int rc = selectLogs(logs, salvage, /*issues_in_output=*/format == "table" && !series);
      if (logs.empty()) return rc;
      // Part of a rotated run: said on stderr too (the footer says it; a JSON or CSV reader, or the
      // total across logs, would not show it).
      // (--series names every log that is not complete, this state with the rest: warnStates below.)
      if (!series)
        for (const auto& l : logs)
          if (kc::logState(l) == "rotated part")
            std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: " << kc::logStateWarning(l) << '\n';
      if (segment >= 0) {
        for (auto& l : logs) {
          if (l.data.summary_mode) {
            // Snapshots are cumulative tallies of the whole run: nothing in them is per capture window.
            std::cerr << "kcount: " << kc::shownPath(l.path)
                      << ": --segment: a summary-mode log (KCOUNT_MODE=summary) has no records to select by "
                         "capture window, only snapshots cumulative over all its windows ("
                      << kc::counted(l.data.segments.size(), "capture window")
                      << ", listed under kcount summary's table without per-window numbers); kcount summary "
                         "--series shows the change between snapshots; per-window numbers need "
                         "KCOUNT_MODE=trace\n";
            return 2;
          }
          const kc::SegmentBody* found = nullptr;
          for (const auto& sg : l.data.segments)
            if (sg.index == static_cast<uint64_t>(segment)) found = &sg;
          if (found == nullptr) {
            std::cerr << "kcount: " << kc::shownPath(l.path) << ": " << noSegmentText(l.data, segment) << "\n";
            return 2;
          }
          l.data = kc::selectSegment(l.data, static_cast<size_t>(found - l.data.segments.data()));
          l.summary = kc::summarize(l.data, g_join);
          kc::noteSaturatedSums(l);
          kc::noteRepeatedIds(l);
          kc::noteImplausible(l);
          l.segments.reset();  // the selected window's totals, from its records
        }
      }
      for (const auto& l : logs)
        if (l.data.summary_mode && g_join.graph_view == kc::GraphView::kCapturePath)
          std::cerr << "kcount: " << kc::shownPath(l.path)
                    << ": summary-mode log: kernels are credited to the range around the launch (--graph-view "
                       "capture needs a trace-mode log)\n";
      if (series) {
        // A trace-mode log has no snapshots, so no series: refused, one error line each, and nothing on
        // stdout (not a series of the other logs alone, nor a JSON entry without intervals, that a script
        // would take for the whole answer).
        bool any_trace = false;
        for (const auto& l : logs)
          if (!l.data.summary_mode) {
            any_trace = true;
            std::cerr << "kcount: " << kc::shownPath(l.path)
                      << ": error: --series needs a summary-mode log (KCOUNT_MODE=summary): this is a trace-mode "
                         "log, which has no snapshots (kcount summary without --series reads it)\n";
          }
        if (any_trace) return 2;
        // The series is the same for every view and layout: the table's options have no effect on it.
        for (const char* o : {"--metric", "--view", "--top", "--wide", "--sort"})
          if (summary->get_option(o)->count() > 0)
            std::cerr << "kcount: " << o << " shapes the summary table: no effect with --series (per range, the "
                         "change of its inclusive numbers between snapshots)\n";
        // A log cut by a kill, lossy, damaged or a rotated part alone: one line each (the series stops at
        // its last complete snapshot). Its reader issues were not printed. A summary-mode log without a
        // complete snapshot has no series: named as holding no totals, unless its table says so itself.
        warnStates(logs, /*no_totals=*/format != "table");
        if (format == "json") {
          kc::writeSeriesJson(std::cout, logs);
        } else {
          bool first = true;
          for (const auto& l : logs) {
            if (format == "csv") {
              kc::printSeriesCsv(std::cout, l, first);
            } else {
              if (!first) std::cout << '\n';
              kc::printSeries(std::cout, l, opt.width);
            }
            first = false;
          }
        }
        return rc;
      }
      // A summary-mode log without a complete snapshot has no numbers (null in JSON, no row in CSV, "no
      // totals" across logs): named on stderr, as a log that is not whole is, unless its table's footer
      // (one log, table format) says so. The exit status stays that of the log's state (0 if not damaged).
      // CSV and JSON have no footer: a log that is not complete and clean (lossy, cut by a kill, damaged and
      // salvaged) is named on stderr with the footer's state line, so a script reading them is told that
      // the numbers undercount (JSON also carries "state").
      // CSV carries no issues (the JSON lists them in "issues"): the reader's warnings go to stderr, as
      // kernels --format csv prints them; the state line stays (a log cut by a kill: both its reader warning
      // and "log INCOMPLETE").
      if (format == "csv") printIntactIssues(logs);
      if (format != "table")
        warnStates(logs, /*no_totals=*/true);
      else if (logs.size() > 1)
        for (const auto& l : logs) warnNoTotals(l);
      if (summary->get_option("--metric")->count() > 0 && (format != "table" || logs.size() < 2))
        std::cerr << "kcount: --metric chooses the number of the across-logs table, printed for several logs "
                     "in the table format: no effect here\n";
      // --wide shapes the table only; --top the table and the CSV's top-kernels column (JSON lists them all).
      if (format != "table" && summary->get_option("--wide")->count() > 0)
        std::cerr << "kcount: --wide lays out the table format's verdict and top-kernel lines: no effect with "
                     "--format "
                  << format << "\n";
      // --view chooses the table's layout and numbers; the CSV has exclusive and inclusive columns (the view
      // only chooses the order --sort gives its rows), the JSON both numbers of every range.
      if (summary->get_option("--view")->count() > 0 &&
          (format == "json" || (format == "csv" && summary->get_option("--sort")->count() == 0)))
        std::cerr << "kcount: --view lays out the table format (tree, inclusive or innermost numbers): no effect "
                     "with --format "
                  << format
                  << (format == "csv" ? " (its rows carry excl_ and incl_ columns; with --sort, the view chooses "
                                        "the order)\n"
                                      : " (every range carries its exclusive and inclusive numbers)\n");
      if (format == "json" && summary->get_option("--sort")->count() > 0)
        std::cerr << "kcount: --sort orders the rows of the table and CSV: no effect with --format json (its "
                     "ranges are depth first)\n";
      if (format == "json" && summary->get_option("--top")->count() > 0)
        std::cerr << "kcount: --top limits the kernels of the table and CSV: no effect with --format json (its "
                     "ranges list every kernel)\n";
      if (format == "json") {
        kc::writeSummaryJson(std::cout, logs);
      } else {
        bool first = true;
        for (const auto& l : logs) {
          if (format == "csv") {
            kc::printSummaryCsv(std::cout, l, first, opt);
          } else {
            if (!first) std::cout << '\n';
            kc::printSummaryTable(std::cout, l, opt);
          }
          first = false;
        }
        if (format == "table" && logs.size() > 1) {
          std::cout << '\n';
          kc::printAcrossLogs(std::cout, logs, kc::parseAcrossMetric(metric).value_or(kc::AcrossMetric::kGpuNs),
                              opt.width);
        }
      }
      return rc;
    }
    if (*diff) {
      if (diff_a.empty() && diff_b.empty() && paths.size() == 2) {
        diff_a = {paths[0]};
        diff_b = {paths[1]};
      }  // any other combination was refused before the paths were checked
      // One streaming pass per log: the diff needs the summaries, scopes and names, not the records.
      auto a = loadAll(diff_a, /*streaming=*/true), b = loadAll(diff_b, /*streaming=*/true);
      // Damaged logs: reported on stderr; compared only with --salvage (a partial run would look like a
      // plausible but wrong comparison).
      const int rc = std::max(selectLogs(a, salvage), selectLogs(b, salvage));
      if (a.empty() || b.empty()) return rc != 0 ? rc : 2;
      if (std::max(refuseLogsWithoutTotals(a, "diff"), refuseLogsWithoutTotals(b, "diff")) != 0) return 2;
      printIntactIssues(a);
      printIntactIssues(b);
      // Each log's state, computed once: for the warnings and the diff's state lines, JSON and CSV fields.
      const std::vector<std::string> states_a = kc::logStates(a), states_b = kc::logStates(b);
      warnStates(a, false, &states_a);
      warnStates(b, false, &states_b);
      warnSameRun(a, b, states_a, states_b);
      // Logs of one side are summed as one run: logs of different programs pooled there are named once.
      for (const auto& [logs, side] : {std::pair{&a, "A"}, std::pair{&b, "B"}})
        if (const std::string w = kc::mixedCommandLines(*logs, side); !w.empty())
          std::cerr << "kcount: diff: warning: " << w << '\n';
      noteWidthUnused(diff, format);
      if (format == "json")
        kc::writeDiffJson(std::cout, a, b, states_a, states_b);
      else if (format == "csv")
        kc::writeDiffCsv(std::cout, a, b, states_a, states_b);
      else
        kc::printDiff(std::cout, a, b, states_a, states_b, tableWidth(width), full_names);
      return rc;
    }
    if (*kernels) {
      auto logs = loadAll(paths, /*streaming=*/true);  // tallies per (range, name) and first shapes
      int rc = selectLogs(logs, salvage);
      if (logs.empty()) return rc;
      if (kernels->get_option("--range")->count() > 0 && kernels_range.empty()) {
        std::cerr << "kcount kernels: --range needs a range path as kcount summary shows it (e.g. step/mlp); "
                     "leave it out for the whole run\n";
        return 2;
      }
      std::vector<bool> without_range(logs.size(), false);  // logs named below as not having --range's range
      if (!kernels_range.empty()) {
        size_t found = 0;
        for (size_t i = 0; i < logs.size(); ++i) {
          // A path without domains names the range of any one domain ("step/gemm" for step/mylib: gemm);
          // when ranges of that path are in several domains, the user says which.
          const std::vector<std::string> named = kc::rangePathsNamed(logs[i], kernels_range);
          if (named.size() > 1) {
            std::string which;
            for (const auto& p : named) which += (which.empty() ? "" : ", ") + kc::shownPath(p);
            std::cerr << "kcount: " << kc::shownPath(logs[i].path) << ": ranges " << kc::shownPath(kernels_range)
                      << " are in several NVTX domains: " << which
                      << " (give one of these paths, as kcount summary's table shows it)\n";
            without_range[i] = true;
            continue;
          }
          if (named.empty() || kc::keepKernelsOfRange(logs[i], named.front()) == 0) {
            // A range's own name given for its path ("gate" for "step/gate"): the paths that end with it.
            std::string hint;
            for (const auto& p : kc::rangePathsEndingWith(logs[i], kernels_range, 4))
              hint += (hint.empty() ? "" : ", ") + kc::shownPath(p);
            std::cerr << "kcount: " << kc::shownPath(logs[i].path) << ": no range " << kc::shownPath(kernels_range)
                      << (hint.empty()
                              ? std::string(" (the paths are those of kcount summary --full-names, e.g. step/mlp") +
                                    (kernels_range.find("\u2026") != std::string::npos
                                         ? "; '\u2026' marks where a table shortened a long name: give the whole name"
                                         : "") +
                                    ")"
                                       : " (give its whole path, as kcount summary's table shows it: " + hint + ")")
                      << (logs.size() > 1 ? "; the log is left out" : "") << '\n';
            without_range[i] = true;
          } else {
            ++found;
          }
        }
        if (found == 0) return 2;
        // A log without the range is left out: its rows would be whole-run counts among the range's.
        for (size_t i = logs.size(); i-- > 0;)
          if (without_range[i]) logs.erase(logs.begin() + static_cast<long>(i));
        std::erase(without_range, true);
      }
      const kc::KernelSort sort = kc::parseKernelSort(kernels_sort).value_or(kc::KernelSort::kGpuTotal);
      noteWidthUnused(kernels, format);
      if (format == "json")
        kc::writeKernelsJson(std::cout, logs, sort);
      else if (format == "csv")
        kc::printKernelsCsv(std::cout, logs, full_names, sort);
      else
        kc::printKernelsTable(std::cout, logs, full_names, sort, tableWidth(width));
      printIntactIssues(logs);
      warnStates(logs, /*no_totals=*/true);
      // A log that lists no kernel is named with the reason it gives, as a log without totals is; the exit
      // status stays that of the log's state (docs/usage.md).
      for (size_t i = 0; i < logs.size(); ++i)
        if (const std::string why = kc::noKernelsWarning(logs[i], kernels_range); !why.empty() && !without_range[i])
          std::cerr << "kcount: " << kc::shownPath(logs[i].path) << ": warning: " << why << '\n';
      return rc;
    }
    if (*check) {
      int rc = 0;
      // Each file is opened once: read whole first (records not kept), then which parts of each file's
      // rotated run are among the files given and which files repeat an earlier one (the same file, or a
      // copy of one recording) come from what was read; each file is still checked.
      std::vector<std::string> why_not(paths.size()), logs_given;
      std::vector<bool> cannot_read(paths.size(), false);
      std::vector<kc::LoadedLog> read;
      for (size_t i = 0; i < paths.size(); ++i) {
        bool unreadable = false;
        why_not[i] = notALogFile(paths[i], &unreadable);
        cannot_read[i] = unreadable;
        if (!why_not[i].empty()) continue;
        logs_given.push_back(paths[i]);
        read.push_back(kc::streamLog(paths[i], g_join));
      }
      {
        std::vector<kc::LogData*> ptrs;
        for (auto& l : read) ptrs.push_back(&l.data);
        kc::adoptUnnamedParts(logs_given, ptrs);  // a part without metadata: numbered by its name
      }
      std::vector<const kc::LogData*> data;
      for (const auto& l : read) data.push_back(&l.data);
      const std::vector<kc::PartsGiven> given = kc::partsGiven(data);
      const std::vector<kc::Duplicate> dups = kc::findDuplicates(logs_given, data);
      size_t next_given = 0;
      for (size_t i = 0; i < paths.size(); ++i) {
        const std::string& p = paths[i];
        if (!why_not[i].empty()) {
          std::cout << "== " << kc::displayText(p) << '\n'
                    << (cannot_read[i] ? "CANNOT READ: " : "NOT A LOG FILE: ") << why_not[i] << '\n';
          rc = 2;
          continue;
        }
        const size_t at = next_given++;  // p's position in logs_given
        kc::LoadedLog& l = read[at];
        std::ostringstream report;
        rc = std::max(rc, kc::printCheck(report, l, given[at]));
        std::string text = report.str();
        for (const auto& d : dups)
          if (d.index == at) {
            // Named right under the "== PATH" line: a summary of both would count the recording twice.
            const size_t eol = text.find('\n');
            text.insert(eol + 1, "COPY: " + kc::duplicateText(logs_given, d) +
                                     (d.differs() ? ": summary and the other commands read both, so the "
                                                    "recording counts twice; give one of them\n"
                                                  : ": summary, kernels, diff, export and report read it once\n"));
          }
        std::cout << text;
        if (salvage && l.data.chunks_read > 0) {
          if (kc::windowsShown(l.data)) kc::addWindowTotals(l, g_join);
          std::cout << "intact part:\n";
          kc::SummaryOptions opt;
          opt.list_issues = false;  // listed above, in the check's report
          kc::printSummaryTable(std::cout, l, opt);
        }
      }
      return rc;
    }
    if (*exp) {
      // --table picks one table of the CSV export: another format writes every table, as it would without it.
      if (format != "csv" && !csv_table.empty()) {
        std::cerr << "kcount: --table picks one table of --format csv: no effect with --format " << format << "\n";
        csv_table.clear();
      }
      // What -o names is checked before any log is read (usage errors, exit 2).
      std::string why = exportOutputError(format, output, csv_table);
      if (why.empty()) why = outputIsALog(output, paths, format, csv_table);
      if (!why.empty()) {
        std::cerr << "kcount: export: " << why << '\n';
        return 2;
      }
      auto logs = loadAll(paths);
      const int rc = selectLogs(logs, salvage);
      if (logs.empty()) return rc;
      printIntactIssues(logs);
      warnStates(logs);
      for (const auto& l : logs)
        if (l.data.summary_mode)
          throw std::runtime_error(kc::shownPath(l.path) + " is a summary-mode log (KCOUNT_MODE=summary): it holds per-range "
                                   "tallies, not individual launches, kernels or ranges, so there is nothing to "
                                   "export record by record; use kcount summary or kernels (--format json|csv), "
                                   "or record with KCOUNT_MODE=trace");
      // Narrowing: one capture window and/or a time window, for every format.
      const bool window = !from_text.empty() || !to_text.empty();
      for (auto& l : logs) {
        if (exp_segment >= 0) {
          const kc::SegmentBody* found = nullptr;
          for (const auto& sg : l.data.segments)
            if (sg.index == static_cast<uint64_t>(exp_segment)) found = &sg;
          if (found == nullptr) {
            std::cerr << "kcount: " << kc::shownPath(l.path) << ": " << noSegmentText(l.data, exp_segment) << "\n";
            return 2;
          }
          l.data = kc::selectSegment(l.data, static_cast<size_t>(found - l.data.segments.data()));
        }
        if (window) {
          const uint64_t start = logStartNs(l.data);
          const uint64_t from = from_text.empty() ? 0 : *kc::parseDurationNs(from_text);
          const uint64_t to = to_text.empty() ? UINT64_MAX - start : *kc::parseDurationNs(to_text);
          if (to < from) {
            std::cerr << "kcount: export: --to " << to_text << " is before --from " << from_text << '\n';
            return 2;
          }
          l.data = kc::selectTimeWindow(l.data, start + from, to > UINT64_MAX - start ? UINT64_MAX : start + to);
        }
        if ((window || exp_segment >= 0) && l.data.launches.empty() && l.data.kernels.empty() &&
            l.data.ranges.empty() && l.data.mem_ops.empty())
          std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: no record in the selected window; the output holds only "
                    << "the log's definitions\n";
      }
      // --max-mb and --force judge the Chrome trace's size; the other formats are written whatever their size.
      for (const char* o : {"--max-mb", "--force"})
        if (format != "chrome" && exp->get_option(o)->count() > 0)
          std::cerr << "kcount: " << o << " is for --format chrome (the size of the trace a browser opens): no "
                       "effect with --format "
                    << format << "\n";
      if (format == "chrome" && !force) {
        const kc::ChromeTraceEstimate est = kc::estimateChromeTrace(logs);
        const double mb = static_cast<double>(est.bytes) / 1e6;
        if (mb > max_mb) {
          std::cerr << fmt::format(
              "kcount: export: the Chrome trace would be about {:.1f} MB ({}), above --max-mb {:g}: "
              "chrome://tracing and the Perfetto UI fail to open JSON traces of a few hundred MB. Nothing was "
              "written. Narrow it with --from/--to TIME (time after the log's start; {}),{} or export "
              "--format sqlite for SQL queries; --force writes it anyway\n",
              mb, kc::counted(est.events, "event"), max_mb, spanText(logs), segmentsText(logs));
          return 2;
        }
      }
      if (format == "sqlite") {
        kc::writeSqlite(output, logs);
      } else if (format == "csv") {
        if (output == "-") kc::writeCsvTable(std::cout, csv_table, logs);
        else kc::writeCsv(output, logs, csv_table);
      } else if (output == "-") {
        if (format == "chrome") kc::writeChromeTrace(std::cout, logs);
        else kc::writeJsonRecords(std::cout, logs);
      } else {
        std::ofstream out = openOutput(output);
        if (format == "chrome") kc::writeChromeTrace(out, logs);
        else kc::writeJsonRecords(out, logs);
        closeOutput(out, output);
      }
      return rc;
    }
    if (*html) {
      if (const std::string why = outputIsALog(output, paths, "html", ""); !why.empty()) {
        std::cerr << "kcount: report: " << why << '\n';
        return 2;
      }
      auto logs = loadAll(paths);
      const int rc = selectLogs(logs, salvage);
      if (logs.empty()) return rc;
      if (refuseLogsWithoutTotals(logs, "report") != 0) return 2;
      printIntactIssues(logs);
      warnStates(logs);
      if (output == "-") {
        kc::writeHtmlReport(std::cout, logs);
        return rc;
      }
      std::ofstream out = openOutput(output);
      kc::writeHtmlReport(out, logs);
      closeOutput(out, output);
      return rc;
    }
    if (*exporter) return kc::runExporter(exporter_opt);
    if (*ctl) {
      ctl_opt.range_given = ctl->count("--range") > 0;
      return kc::runCtl(ctl_opt);
    }
    if (*run) {
      const std::vector<std::string> rest = run->remaining();
      if ((had_dashes && !rest.empty()) || (!had_dashes && !rest.empty() && rest.front().starts_with("-"))) {
        std::cerr << "kcount run: unknown option " << rest.front() << " (see kcount run --help)\n";
        return 2;
      }
      run_opt.command = had_dashes ? after_dashes : rest;
      if (run_opt.command.empty()) {
        std::cerr << "kcount run: no command given (kcount run [OPTIONS] -- COMMAND [ARGS...])\n";
        return 2;
      }
      return kc::runCommand(run_opt);
    }
  } catch (const std::exception& e) {
    std::cerr << "kcount: " << e.what() << '\n';
    return 2;
  }
  return 0;
}

int main(int argc, char** argv) {
  const int rc = kcountMain(argc, argv);
  // A table or JSON that could not be written (a full disk, a closed pipe, /dev/full) is an error, not
  // a silent success.
  const int e = finishStream(std::cout, [](std::ostream& o) { o.flush(); });
  // A reader that closed the pipe early (`kcount summary LOG | head`) is not an error.
  if (!std::cout && e != EPIPE) {
    std::cerr << "kcount: cannot write to standard output" << (e != 0 ? std::string(": ") + std::strerror(e) : "")
              << '\n';
    return rc != 0 ? rc : 2;
  }
  return rc;
}
