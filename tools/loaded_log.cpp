#include "tools/loaded_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "collector/counted.h"
#include "collector/file_sink.h"
#include "collector/run_files.h"
#include "collector/stream_summary.h"
#include "tools/loaded_log_internal.h"
#include "tools/text.h"

namespace kc {

std::vector<std::string> implausibleWarningLines(const Summary& s, std::string& what) {
  std::vector<std::string> out;
  auto add = [&](const std::string& w) { what += (what.empty() ? "" : ", ") + w; };
  if (const uint64_t n = s.kernels_end_all_ones; n > 0) {
    out.push_back(fmt::format("{} at 2^64 - 1 ns (18446744073709551615: all bits set, no time a clock gives; "
                              "damaged or crafted); {} GPU time is counted up to it",
                              counted(n, "kernel record ends", "kernel records end"), plural(n, "its", "their")));
    add(counted(n, "kernel ending at 2^64 - 1", "kernels ending at 2^64 - 1"));
  }
  if (kernelLongerThanLog(s)) {
    const uint64_t log_ns = s.times_last_ns - s.times_first_ns;
    out.push_back(fmt::format("the longest kernel record (correlation id {}) lasts {} ({} ns), longer than a day "
                              "and than the {} ({} ns) from the log's first to its last time (launch calls, ranges, "
                              "kernel starts, capture windows): a kernel runs within the process that recorded it, so "
                              "its times are damaged or crafted; the GPU times that include it are wrong",
                              s.longest_kernel_id, formatDuration(s.longest_kernel_ns), s.longest_kernel_ns,
                              formatDuration(log_ns), log_ns));
    add("a kernel longer than the log");
  }
  if (const uint64_t n = s.launches_many_kernels; n > 0) {
    out.push_back(fmt::format("{} (not a graph or multi-device launch) {} more than one kernel record joined ({} "
                              "past the first; the most, {}, on correlation id {}): a direct launch runs one kernel, "
                              "so the others carry its id by damage or crafting; they are counted in its range",
                              counted(n, "direct launch", "direct launches"), plural(n, "has", "have"),
                              counted(s.extra_kernels, "kernel record"), s.most_kernels_one_launch, s.most_kernels_id));
    add(counted(n, "direct launch with several kernels", "direct launches with several kernels"));
  }
  return out;
}

bool isImplausibleIssue(const LoadedLog& l, const ReadIssue& i) {
  return i.severity == ReadIssue::Severity::kWarning && i.chunk == -1 && i.offset == ReadIssue::kNoOffset &&
         std::find(l.implausible_issues.begin(), l.implausible_issues.end(), i.message) != l.implausible_issues.end();
}

void noteLaterPartOnDisk(const std::string& path, LogData& d) {
  if (d.complete || d.continuedInPart() > 0 || d.not_a_log) return;
  const uint32_t k = d.rotationPart();
  // The names the library gives: NAME.kcount is part 0, NAME.K.kcount part K (collector/file_sink.h).
  std::string first = path;
  if (k > 0) {
    const std::string tail = "." + std::to_string(k) + ".kcount";
    if (path.size() <= tail.size() || path.compare(path.size() - tail.size(), tail.size(), tail) != 0) return;
    first = path.substr(0, path.size() - tail.size()) + ".kcount";
  }
  const std::string next = rotatedPath(first, k + 1);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(next, ec)) return;
  const LogData head = readLogHead(next);
  const std::string id = runIdentity(d);
  if (id.empty() || runIdentity(head) != id || head.rotationPart() != k + 1) return;
  // A part beside it closed for rotation (its continued_in_file key, read from its first 2 MiB: parts are
  // at most KCOUNT_MAX_BYTES) shows that the writer marks its parts, so this one lost its end.
  bool marks = head.isContinuedPart();
  if (!marks && k > 0) {
    const LogData before = readLogHead(k == 1 ? first : rotatedPath(first, k - 1));
    marks = runIdentity(before) == id && before.rotationPart() == k - 1 && before.isContinuedPart();
  }
  markCutShortPart(d, next, k + 1, marks);
}

void noteSaturatedSums(LoadedLog& l) {
  auto& issues = l.data.issues;
  issues.erase(std::remove_if(issues.begin(), issues.end(),
                              [](const ReadIssue& i) { return i.message.rfind(kSaturatedIssue, 0) == 0; }),
               issues.end());
  const uint64_t n = saturatedSums(l.summary);
  if (n == 0) return;
  ReadIssue i;
  i.severity = ReadIssue::Severity::kWarning;
  i.offset = ReadIssue::kNoOffset;  // found in the summary: no place in the file (JSON "offset": null)
  i.message = fmt::format("{}: {} of the summary's totals (GPU or host ns, bytes or counts) passed 2^64 - 1 and are "
                          "shown as 18446744073709551615, the true values being larger (records with implausible "
                          "times: a corrupt or synthetic log)",
                          kSaturatedIssue, n);
  issues.push_back(std::move(i));
}

void noteRepeatedIds(LoadedLog& l) {
  auto& issues = l.data.issues;
  issues.erase(std::remove_if(issues.begin(), issues.end(),
                              [](const ReadIssue& i) {
                                return i.message.find(kEarlierWindowIdsIssue) != std::string::npos ||
                                       i.message.find(kRepeatedIdsIssue) != std::string::npos;
                              }),
               issues.end());
  const Summary& s = l.summary;
  if (const uint64_t n = s.launches_in_earlier_window_ids; n > 0) {
    ReadIssue i;
    i.severity = ReadIssue::Severity::kWarning;
    i.offset = ReadIssue::kNoOffset;  // found in the summary; the message names a place where there is one
    i.message = fmt::format("{} {} {} {}'s launches (ids numbered anew after a stop, as libkcount wrote them before it renumbered "
                            "them): kernels and memory operations were joined to the launches of their own window",
                            counted(n, "launch", "launches"), plural(n, "carries a", "carry"),
                            n == 1 ? "correlation id" : "correlation ids", kEarlierWindowIdsIssue);
    issues.push_back(std::move(i));
  }
  if (const uint64_t n = s.repeated_launch_ids; n > 0) {
    ReadIssue i;
    i.severity = ReadIssue::Severity::kWarning;
    i.offset = ReadIssue::kNoOffset;  // found in the summary; the message names a place where there is one
    const std::string place = s.first_repeated_offset == ReadIssue::kNoOffset
                                  ? std::string()
                                  : fmt::format(", lies in chunk {} at byte {}", s.first_repeated_chunk,
                                                s.first_repeated_offset);
    i.message = fmt::format("{} {} {} (the library writes each id once: a crafted or damaged log); the first, launch "
                            "record {} with correlation id {}{}; the first launch of an id keeps it, the {} joined "
                            "to nothing",
                            counted(n, "launch", "launches"), plural(n, "repeats", "repeat"), kRepeatedIdsIssue,
                            s.first_repeated_launch, s.first_repeated_id, place,
                            n == 1 ? "repeat is" : "repeats are");
    issues.push_back(std::move(i));
  }
}

void noteSummaryIssues(LoadedLog& l) {
  noteSaturatedSums(l);
  noteRepeatedIds(l);
  noteImplausible(l);
}

LoadedLog loadLog(const std::string& path, const JoinOptions& join) {
  LoadedLog l;
  l.path = path;
  l.data = readLogFile(path);
  compactScopes(l.data);
  noteLaterPartOnDisk(path, l.data);
  l.summary = summarize(l.data, join);
  noteSummaryIssues(l);
  return l;
}

LoadedLog streamLog(const std::string& path, const JoinOptions& join, bool segment_totals) {
  StreamedLog s = summarizeLogFile(path, join, kDefaultJoinWindow, segment_totals);
  LoadedLog l;
  l.path = path;
  l.data = std::move(s.data);
  noteLaterPartOnDisk(path, l.data);
  l.summary = std::move(s.summary);
  if (segment_totals) l.segments = std::move(s.segments);
  noteSummaryIssues(l);
  return l;
}

void noteImplausible(LoadedLog& l) {
  auto& issues = l.data.issues;
  issues.erase(
      std::remove_if(issues.begin(), issues.end(), [&](const ReadIssue& i) { return isImplausibleIssue(l, i); }),
      issues.end());
  std::string what;
  l.implausible_issues = implausibleWarningLines(l.summary, what);
  for (const std::string& line : l.implausible_issues) {
    ReadIssue i;
    i.severity = ReadIssue::Severity::kWarning;
    i.offset = ReadIssue::kNoOffset;  // found in the summary: no place in the file (JSON "offset": null)
    i.chunk = -1;
    i.message = line;
    issues.push_back(std::move(i));
  }
}

void addWindowTotals(LoadedLog& l, const JoinOptions& join) {
  l.segments = segmentTotalsOfFiles(l.files.empty() ? std::vector<std::string>{l.path} : l.files, l.data, join);
}

std::vector<SegmentTotals> windowTotals(const LoadedLog& l) {
  if (l.data.summary_mode) return emptySegmentTotals(l.data);  // no records: no per-window counts
  return l.segments ? *l.segments : segmentTotals(l.data);
}

bool windowsShown(const LogData& d) {
  if (d.segments.size() != 1) return d.segments.size() > 1;
  // One window: shown unless it spans the process, from the start to its end: an exit, or the signal the
  // library closed the log for (metadata kMetaEndSignal, the window's end reason too; the state line says it).
  const std::string_view end = d.str(d.segments[0].end_reason_id);
  const std::string signal = d.meta(kMetaEndSignal);
  return d.str(d.segments[0].reason_id) != "start" ||
         !(end == "exit" || end.empty() || (!signal.empty() && end == signal));
}

}  // namespace kc
