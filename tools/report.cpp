#include "tools/report.h"

#include <charconv>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <utf8.h>  // utfcpp (Debian libutfcpp-dev)

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <map>
#include <ostream>
#include <unordered_map>
#include <unordered_set>

#include <sys/stat.h>

#include "collector/aggregator.h"
#include "collector/file_sink.h"
#include "collector/parse.h"
#include "collector/shown_value.h"
#include "tools/kernel_decode.h"
#include "tools/kernel_names.h"
#include "tools/multi_log.h"
#include "tools/self_cost.h"
#include "tools/table_width.h"

namespace kc {
namespace {

using nlohmann::json;

/// Longest command line the table's header shows whole (characters); longer ones are shortened.
constexpr size_t kMaxCommandShown = 400;

/// Plain-text table: columns padded to their widest cell, numbers right-aligned. Cells of the columns
/// marked in `elide` are shortened to kMaxNameColumn display columns (elideDistinct). With `max_width`,
/// the table is fitted to it (fitColumns()): the `elide` and `fit` columns narrowed, then columns dropped
/// by their `drop` rank, a line above the table naming those dropped.
struct Table {
  std::vector<std::string> head;
  std::vector<bool> right;
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> elide;    // column indexes
  std::vector<NameColumn> fit;  // other name columns that may be narrowed, their names whole
  std::vector<unsigned> drop;   // per column: 0 kept, else dropped to fit max_width, the highest first
  size_t max_width = 0;         // display columns; 0: no limit

  /// Sets the drop rank of the column headed `heading` (when there is one).
  void dropRank(const std::string& heading, unsigned rank) {
    const auto at = std::find(head.begin(), head.end(), heading);
    if (at == head.end()) return;
    drop.resize(head.size(), 0);
    drop[static_cast<size_t>(at - head.begin())] = rank;
  }

  /// Drop ranks from a list of headings, the first dropped first (headings not in the table skipped).
  void dropOrder(const std::vector<std::string>& first_dropped_first) {
    unsigned rank = static_cast<unsigned>(first_dropped_first.size());
    for (const auto& h : first_dropped_first) dropRank(h, rank--);
  }

  void print(std::ostream& out) {
    fitTo(shortenNames(), out);
    std::vector<size_t> w(head.size(), 0);
    for (size_t i = 0; i < head.size(); ++i) w[i] = displayWidth(head[i]);
    for (const auto& r : rows)
      for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], displayWidth(r[i]));
    auto line = [&](const std::vector<std::string>& r) {
      std::string s;
      for (size_t i = 0; i < r.size() && i < w.size(); ++i) {
        const std::string pad(w[i] - displayWidth(r[i]), ' ');
        const bool last = i + 1 == r.size();
        s += right[i] ? pad + r[i] : (last ? r[i] : r[i] + pad);
        if (!last) s += "  ";
      }
      // An empty last cell (a row without verdict under --wide) leaves no trailing blanks.
      s.erase(s.find_last_not_of(' ') + 1);
      out << s << '\n';
    };
    line(head);
    // The rule spans the columns up to the last one's heading (the last column is free text).
    size_t total = 0;
    for (size_t i = 0; i + 1 < w.size(); ++i) total += w[i] + 2;
    if (!head.empty()) total += displayWidth(head.back());
    out << std::string(total, '-') << '\n';
    for (const auto& r : rows) line(r);
  }

  /// Shortens the `elide` columns to kMaxNameColumn display columns (elideDistinct(), together so that
  /// different names stay different); returns them, their names whole, with `fit`: the columns fitTo() may
  /// narrow.
  std::vector<NameColumn> shortenNames() {
    std::vector<NameColumn> narrow = fit;
    for (size_t c : elide) {
      NameColumn col;
      col.index = c;
      for (const auto& r : rows) col.names.push_back(c < r.size() ? r[c] : std::string());
      const std::vector<std::string> shown = elideDistinct(col.names);
      for (size_t i = 0; i < rows.size(); ++i)
        if (c < rows[i].size()) rows[i][c] = shown[i];
      narrow.push_back(std::move(col));
    }
    return narrow;
  }

  /// Fits the table to max_width (fitColumns()): the columns `narrow` narrowed, then columns dropped, named
  /// on a line of `out` (the table follows it). Nothing when max_width is 0 or the table fits.
  void fitTo(const std::vector<NameColumn>& narrow, std::ostream& out) {
    if (max_width == 0) return;
    std::vector<std::vector<std::string>> all{head};
    all.insert(all.end(), rows.begin(), rows.end());
    const DroppedColumns dropped = fitColumns(all, 1, narrow, 0, max_width, drop);
    if (!dropped.empty()) {
      std::vector<bool> kept_right;
      for (size_t c = 0; c < right.size(); ++c)
        if (std::find(dropped.columns.begin(), dropped.columns.end(), c) == dropped.columns.end())
          kept_right.push_back(right[c]);
      right = std::move(kept_right);
      out << droppedColumnsLine(dropped, max_width) << '\n';
    }
    head = all.front();
    rows.assign(all.begin() + 1, all.end());
  }
};

const char* severityName(ReadIssue::Severity s) {
  return s == ReadIssue::Severity::kError ? "error" : "warning";
}

/// A COUNTS object of `summary --format json`; `graph_spans` (a KCOUNT_GPU_TIME=graphs log): with the
/// graph launches' GPU spans, graph_gpu_launches and graph_gpu_ns.
json countsJson(const RangeStats& r, bool graph_spans) {
  json j{{"launches", r.launches},
              {"graph_launches", r.graph_launches},
              {"captured_launches", r.captured_launches},
              {"kernels", r.kernels},
              {"gpu_ns", r.gpu_ns},
              {"launch_api_ns", r.launch_api_ns},
              {"memcpy", {{"count", r.memcpy_count}, {"bytes", r.memcpy_bytes}, {"gpu_ns", r.memcpy_ns}}},
              {"memset", {{"count", r.memset_count}, {"bytes", r.memset_bytes}, {"gpu_ns", r.memset_ns}}}};
  if (graph_spans) {
    j["graph_gpu_launches"] = r.graph_gpu_launches;
    j["graph_gpu_ns"] = r.graph_gpu_ns;
  }
  return j;
}

/// by_kernel sorted by count (descending), then by name.
std::vector<std::pair<std::string, KernelTally>> sortedKernels(const LogData& log, const RangeStats& r) {
  std::vector<std::pair<std::string, KernelTally>> v;
  v.reserve(r.by_kernel.size());
  for (const auto& [id, t] : r.by_kernel) v.emplace_back(std::string(log.str(id)), t);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.count != b.second.count ? a.second.count > b.second.count : a.first < b.first;
  });
  return v;
}

/// A kernel name as an output shows it. Text (tables, sentences): displayKernelName() (the short name cut at
/// kMaxShortName characters unless `full`) escaped by displayText(). Machine-readable (CSV, JSON): the full
/// demangled name, or the short name uncut (shortKernelNameUncut()), bytes as recorded.
/// `s` (valid UTF-8) as a JSON string: quoted, with '"', '\\' and control characters escaped.
std::string jsonString(const std::string& s) { return nlohmann::json(s).dump(); }

std::string kernelNameFor(std::string_view name, bool full, bool text) {
  if (text) return displayText(displayKernelName(name, full));
  return full ? demangleKernelName(name) : shortKernelNameUncut(name);
}

/// "k ×3, other ×2, +1 more": the `top` kernels of `r` by count; names by kernelNameFor(`full`, `text`).
/// In text, different kernels whose cut names are equal (cuBLAS names that differ past kMaxShortName
/// characters) are told apart (tellKernelsApart(), at kMaxShortName characters).
std::string topKernels(const LogData& log, const RangeStats& r, int top, bool full, bool text) {
  if (top <= 0) return {};
  const auto v = sortedKernels(log, r);
  const size_t n = std::min(v.size(), static_cast<size_t>(top));
  std::vector<std::string> shown, names;
  for (size_t i = 0; i < n; ++i) {
    shown.push_back(kernelNameFor(v[i].first, full, text));
    names.push_back(v[i].first);
  }
  if (text && !full) tellKernelsApart(shown, names, kMaxShortName);
  std::string s;
  if (!text) {
    // CSV: JSON text, so that names holding ", " (C++ templates) split exactly; names as CSV writes them.
    for (size_t i = 0; i < n; ++i)
      s += fmt::format("{}{{\"name\":{},\"count\":{}}}", i == 0 ? "" : ",", jsonString(escapeInvalidUtf8(shown[i])),
                       v[i].second.count);
    if (v.size() > n) s += fmt::format("{}{{\"more\":{}}}", n == 0 ? "" : ",", v.size() - n);
    return "[" + s + "]";
  }
  for (size_t i = 0; i < n; ++i) s += (i == 0 ? "" : ", ") + fmt::format("{} ×{}", shown[i], v[i].second.count);
  if (v.size() > n) s += fmt::format(", +{} more", v.size() - n);
  return s;
}

std::string perInstance(uint64_t kernels, uint64_t instances) {
  if (instances == 0) return "-";
  return fmt::format("{:.1f}", static_cast<double>(kernels) / static_cast<double>(instances));
}

}  // namespace


uint64_t snapshotsSkipped(const LogData& d) {
  const std::string text = d.meta(kMetaSnapshotsSkipped);
  uint64_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

bool noSnapshotNumbers(const LoadedLog& l) { return l.data.summary_mode && l.summary.snapshot < 0; }

namespace {

/// A summary-mode log whose stats record counts no launch, kernel or range record tallied and that began no
/// snapshot: it recorded nothing, so no snapshot was due (not a missing one). False without a stats record
/// (it cannot tell). noSnapshotText() and noTotalsText() (check's OK vs NO TOTALS) must agree on this.
bool recordedNothing(const LogData& d) {
  return d.has_stats && d.stats.launches + d.stats.kernels + d.stats.ranges == 0 && d.incomplete_snapshots == 0;
}

}  // namespace

KeptOut keptOut(const LogData& d) {
  // The library's metadata text names the cap when the first chunk kept out did not fit under it
  // ("..., at KCOUNT_MAX_BYTES" or "..., from part N on, at KCOUNT_MAX_BYTES").
  if (d.meta("records_not_written").find("KCOUNT_MAX_BYTES") != std::string::npos) return KeptOut::kAtCap;
  const NotWritten n = notWritten(d);
  if (n.known) return n.launches + n.kernels + n.ranges + n.other > 0 ? KeptOut::kNotWritten : KeptOut::kNone;
  if (!d.has_stats) return KeptOut::kUnknown;
  return d.stats.bytes_dropped > 0 ? KeptOut::kNotWritten : KeptOut::kNone;
}

namespace {
/// For a log whose final snapshot is partly in the file, the End record after it: "cut at the size cap
/// (KCOUNT_MAX_BYTES) after R of its M rows" (or why else it was cut); "" for any other log.
std::string finalSnapshotCutText(const LogData& d, KeptOut k) {
  const LogData::CutSnapshot& c = d.snapshot_cut_at_end;
  if (!c.open_at_end || !c.final) return {};
  const std::string after = fmt::format("after {} of its {} rows", c.rows_read, c.rows);
  switch (k) {
    case KeptOut::kAtCap: return "cut at the size cap (KCOUNT_MAX_BYTES) " + after;
    case KeptOut::kNotWritten: return "cut " + after + ": the rest was not written (disk full or unwritable file)";
    default: return "cut " + after + ", though the log was closed after it";
  }
}
}  // namespace

std::string finalSnapshotMissingText(const LogData& d) {
  const KeptOut k = keptOut(d);
  if (d.intact())
    if (const std::string cut = finalSnapshotCutText(d, k); !cut.empty()) return "the final snapshot was " + cut;
  if (!d.intact())
    return std::string("the final snapshot is not in the log's intact part (damaged bytes were skipped") +
           (k == KeptOut::kAtCap ? "; records were also kept out at its size cap, KCOUNT_MAX_BYTES)" : ")");
  switch (k) {
    case KeptOut::kAtCap:
      return "the final snapshot is not in the log, kept out at its size cap (KCOUNT_MAX_BYTES)";
    case KeptOut::kNotWritten:
      return "the final snapshot is not in the log: records were not written (disk full or unwritable file)";
    case KeptOut::kNone:
      return "the log was closed without its final snapshot, though it counts no record kept out of it";
    case KeptOut::kUnknown:
      break;
  }
  return "the log was closed without its final snapshot (it has no stats record to say why)";
}

std::string noSnapshotText(const LogData& d) {
  const std::string period = snapshotPeriodText(d);
  const bool cut = d.incomplete_snapshots > 0;
  std::string why;
  if (!d.complete && !d.intact())  // cut short or damaged: the reader's errors say where, a kill is not known
    why = "; the log has no intact end record: it is damaged or cut short before any complete snapshot (see the "
          "errors)";
  else if (!d.complete)
    why = cut ? "; the log has no end record: it ends inside a snapshot (the process was killed while writing it)"
              : "; the log has no end record: the process was killed before its first snapshot (or is still running)";
  else if (recordedNothing(d))
    why = "; nothing was recorded, so none was due";
  else
    why = "; " + finalSnapshotMissingText(d);
  return fmt::format("{}, so no numbers (a summary-mode log holds them only in its snapshots, written {}from the "
                     "start of recording and at exit){}",
                     cut          ? fmt::format("no complete snapshot ({} incomplete)", d.incomplete_snapshots)
                     : d.complete ? std::string("no snapshot")
                                  : std::string("no snapshot written yet"),
                     period.empty() ? "every KCOUNT_INTERVAL " : period + " ", why);
}

std::string noTotalsWarning(const LoadedLog& l) {
  if (!noSnapshotNumbers(l)) return {};
  const LogLosses loss = logLosses(l);
  return "no totals: summary mode: " + noSnapshotText(l.data) + (loss.any() ? "; LOSSY: " + loss.text() : "");
}

std::string noKernelsWarning(const LoadedLog& l, std::string_view range) {
  if (noSnapshotNumbers(l)) return {};  // no numbers at all: noTotalsWarning() says so
  const Summary& s = l.summary;
  if (!s.unmatched_by_kernel.empty()) return {};
  for (const RangeStats& r : s.exclusive)
    if (!r.by_kernel.empty()) return {};
  const LogData& d = l.data;
  const uint64_t kernels = s.kernels + s.unmatched_kernels;
  if (!range.empty())
    return fmt::format("no kernels: none ran in range {} or the ranges nested in it ({} in the whole log)",
                       shownPath(range), counted(kernels, "kernel"));
  if (kernels > 0)  // counted by the totals, but in no row by name (summary mode: tallies dropped at the key cap)
    return fmt::format("no kernels: {} counted in the totals, none tallied by name (kcount summary shows the "
                       "tallies dropped)",
                       counted(kernels, "kernel"));
  uint64_t graph = 0;
  for (const RangeStats& r : s.exclusive) graph += r.graph_launches;
  if (s.launches == 0) {
    if (d.summary_mode)
      return "no kernels: no kernel launch was tallied (summary mode; kcount summary shows what the snapshot holds)";
    const uint64_t mem_calls = std::min(d.mem_call_records, d.launch_records);
    if (d.range_records == 0 && mem_calls == 0)
      return "no kernels: nothing was recorded (no kernel launch, range or memcpy/memset call)";
    std::string held = d.range_records > 0 ? counted(d.range_records, "range record") : std::string();
    if (mem_calls > 0) held += (held.empty() ? "" : " and ") + counted(mem_calls, "memcpy/memset call");
    return "no kernels: no kernel launch was recorded (the log holds " + held + ")";
  }
  const std::string launches = counted(s.launches, "launch", "launches");
  const char* them = s.launches == 1 ? "it" : "them";
  if (!gpuTimeRecorded(d) && graph == s.launches)
    return fmt::format("no kernels: {} recorded, none a direct launch: the kernels of graph launches are not known "
                       "with KCOUNT_GPU_TIME=0 (kernels are counted at direct launch calls)",
                       launches);
  if (s.captured_launches == s.launches)
    return fmt::format("no kernels: {} recorded, all during stream capture (recorded into a graph, not run)", launches);
  if (d.stats.dropped_activity_records + d.stats.activity_buffers_refused > 0) {
    std::string lost;
    if (d.stats.dropped_activity_records > 0) lost = counted(d.stats.dropped_activity_records, "activity record") + " dropped";
    if (d.stats.activity_buffers_refused > 0)
      lost += (lost.empty() ? "" : ", ") + counted(d.stats.activity_buffers_refused, "activity buffer") + " refused";
    return fmt::format("no kernels: {} recorded, but their kernel activity records were lost while recording ({})",
                       launches, lost);
  }
  if (!d.complete)
    return fmt::format("no kernels: {} recorded, but no kernel record: the log has no end record (kernels CUPTI had "
                       "not delivered when the process ended were not written)",
                       launches);
  return fmt::format("no kernels: {} recorded, but no kernel record came for {}", launches, them);
}

namespace {

/// "summary mode: N snapshots every I, totals from snapshot S at +T (final)" for a summary-mode log, else "";
/// then "; N events not tallied in their row ..." and "; N launches evicted from the correlation window", each
/// only when not zero.
/// A summary-mode log without any snapshot (none begun) says so (noSnapshotText).
std::string snapshotLine(const LoadedLog& l) {
  const LogData& d = l.data;
  if (!d.summary_mode) return {};
  if (d.snapshots.empty() && d.incomplete_snapshots == 0) return "summary mode: " + noSnapshotText(d) + "\n";
  const std::string period = snapshotPeriodText(d);
  std::string s = "summary mode: " + counted(d.snapshots.size(), "complete snapshot");
  if (!period.empty()) s += " " + period;
  if (d.incomplete_snapshots > 0) s += fmt::format(", {} incomplete", d.incomplete_snapshots);
  if (const uint64_t skipped = snapshotsSkipped(d); skipped > 0)
    s += " (" + snapshotsSkippedText(skipped) + ")";
  if (l.summary.snapshot < 0)
    return s + "; no complete snapshot: no totals" + (d.complete ? " (" + finalSnapshotMissingText(d) + ")" : "") + "\n";
  const SnapshotData& sd = d.snapshots[static_cast<size_t>(l.summary.snapshot)];
  const SnapshotBeginBody& b = sd.begin;
  uint64_t start = 0;
  const std::string start_text = d.meta("start_ns");
  std::from_chars(start_text.data(), start_text.data() + start_text.size(), start);
  s += fmt::format("; totals from snapshot {} at +{}{}", b.sequence,
                   formatDuration(b.time_ns > start ? b.time_ns - start : 0),
                   (b.flags & kSnapshotFinal) ? std::string(" (final)")
                   // A closed log whose last snapshot is not final lost the final one: the cause the log
                   // supports (damage, the size cap, a write refused); the run went on after these totals.
                   : d.complete ? " (not final: " + finalSnapshotMissingText(d) + "; the run went on after it)"
                                : std::string(" (not final: the log ends before the run did)"));
  if (!(b.flags & kSnapshotFinal))
    s += fmt::format(", {} in flight, {} waiting", counted(b.inflight_launches, "launch", "launches"),
                     counted(b.waiting_activity, "activity record"));
  // Each loss clause only when it happened (the JSON keeps both fields, zeros included).
  if (b.dropped_tallies > 0) s += "; " + untalliedEventsText(b.dropped_tallies, b.max_keys);
  if (b.evicted_launches > 0)
    s += fmt::format("{} {} evicted from the correlation window", b.dropped_tallies > 0 ? "," : ";",
                     counted(b.evicted_launches, "launch", "launches"));
  return s + "\n";
}

/// "rotated part K; parts 0..K-1 not given[, continued in part K+1 (not given|given)]; the numbers cover
/// this part only" for a later part of a rotated log read alone (LogData::isLaterPartAlone()); `missing`,
/// when known, the earlier parts not given (others were: "part 1 not given").
std::string partsText(const std::vector<uint32_t>& parts);

std::string laterPartText(const LogData& d, bool next_part_given = false, const std::vector<uint32_t>& missing = {}) {
  const uint32_t k = d.rotationPart();
  std::string s = fmt::format("rotated part {}; {} not given", k,
                              !missing.empty() ? partsText(missing)
                              : k == 1         ? std::string("part 0")
                                               : fmt::format("parts 0..{}", k - 1));
  if (d.isContinuedPart())
    s += fmt::format(", continued in part {} ({})", d.continuedInPart(), next_part_given ? "given" : "not given");
  else if (!d.complete) s += "; no end record";
  // Summary mode: snapshots are cumulative, so a part's last snapshot holds the run's numbers up to then.
  if (d.summary_mode) return s + "; the numbers are the run's up to this part's last snapshot (cumulative)";
  return s + "; the numbers cover this part only (give every part to read the run)";
}

/// "part 3", "parts 0..2", "parts 0..1, 3": part numbers (ascending, distinct) with runs shortened.
std::string partsText(const std::vector<uint32_t>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size();) {
    size_t j = i;
    while (j + 1 < parts.size() && parts[j + 1] == parts[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + (j == i ? std::to_string(parts[i]) : fmt::format("{}..{}", parts[i], parts[j]));
    i = j + 1;
  }
  return (parts.size() == 1 ? "part " : "parts ") + s;
}
}  // namespace

std::string partialRunText(const LogData& d) {
  if (d.parts <= 1 && d.rotationPart() > 0) return laterPartText(d);
  std::vector<uint32_t> given = d.joined_parts;
  if (given.empty()) given.push_back(0);  // one file, part 0 (or a log never rotated)
  std::vector<uint32_t> missing;
  for (uint32_t k = 0, at = 0; k < given.back(); ++k) {
    if (at < given.size() && given[at] == k) ++at;
    else missing.push_back(k);
  }
  const uint32_t next = d.isContinuedPart() ? d.continuedInPart() : 0;
  if (missing.empty() && next == 0) return {};
  std::string s = "rotated run";
  if (!missing.empty()) s += ": " + partsText(missing) + " not given";
  if (next > 0) s += fmt::format("{} continues in part {} (not given)", missing.empty() ? "" : ", and it", next);
  else if (!d.complete) s += "; no end record";
  return s + ": the numbers cover " + partsText(given) + " only (give every part to read the run)";
}

std::string statsShortfall(const LoadedLog& l, bool fewer_only = false);  // below, with check

namespace {

/// For a damaged trace-mode log whose Stats record was read (it is in the final chunk, with the End record):
/// how many records of each kind the library wrote and how many the intact chunks hold, "; missing with
/// the damage: 65 of 129 launch records, 65 of 129 kernel records (the Stats record's counts less those
/// read)"; "" when nothing is missing, or without those numbers (no Stats or End record read, a
/// summary-mode log, rotated parts: the run's records are not known, and nothing is said).
std::string damagedShortfall(const LoadedLog& l) {
  const LogData& d = l.data;
  if (d.intact() || !d.has_stats || !d.complete || !d.snapshots.empty() || d.meta("mode") == "summary" ||
      !l.files.empty() || d.rotationPart() != 0 || d.continuedInPart() != 0)
    return {};
  const StatsBody& st = d.stats;
  const LogData::FileRecords file = d.fileRecords();
  std::string out;
  auto add = [&](uint64_t taken, uint64_t kept_out, uint64_t read, const char* what) {
    const uint64_t written = taken >= kept_out ? taken - kept_out : 0;
    if (read >= written) return;
    out += fmt::format("{}{} of {}", out.empty() ? "" : ", ", written - read,
                       counted(written, std::string(what) + " record"));
  };
  add(st.launches, st.not_written_launches, file.launches, "launch");
  add(st.kernels, st.not_written_kernels, file.kernels, "kernel");
  add(st.ranges, st.not_written_ranges, file.ranges, "range");
  return out.empty() ? out : "; missing with the damage: " + out + " (the Stats record's counts less those read)";
}

/// The footer's one-line state of the log: complete (clean or lossy), incomplete, salvaged from damage, or
/// followed by bytes after its end record. A log that is not intact is never called complete; its line
/// points at the reader's errors, `errors_at` saying where they are ("listed below": the footer prints
/// them under this line).
std::string logStateOnly(const LoadedLog& l, std::string_view errors_at) {
  const LogData& d = l.data;
  const LogLosses loss = logLosses(l);
  const std::string lossy = loss.any() ? "; LOSSY: " + loss.text() : "";
  if (!d.intact())
    // Without End record the damage may have taken it: "no intact end record", not "no end record".
    return fmt::format("log DAMAGED: numbers are from the intact part only (salvaged; see the errors {}){}{}{}",
                       errors_at, d.complete ? "" : "; no intact end record", damagedShortfall(l), lossy);
  if (d.dataAfterEnd())
    return fmt::format("log complete up to byte {}; the {} after its end record {} not read{}{}",
                       d.after_end_offset, counted(d.after_end_bytes, "byte"), d.after_end_bytes == 1 ? "is" : "are",
                       d.after_end_is_log ? " (a second log starts there: files concatenated)" : "", lossy);
  const std::string parts = d.parts > 1 ? fmt::format(" ({} rotated files joined)", d.parts) : std::string();
  if (const std::string partial = partialRunText(d); !partial.empty()) return "log PARTIAL: " + partial + lossy;
  if (!d.complete) return "log INCOMPLETE (no end record)" + lossy;
  // No totals wins over LOSSY: there are no numbers above to undercount.
  if (const std::string why = noTotalsText(d, l.summary); !why.empty()) return "log complete but NO TOTALS: " + why + lossy;
  // Records gone without a trace in the chunks (check's RECORDS MISSING): the numbers above undercount.
  if (const std::string miss = statsShortfall(l, true); !miss.empty())
    return "log RECORDS MISSING: " + miss + " (records missing without a trace in the chunks, or a file put together "
           "from pieces); the numbers above undercount" + lossy;
  if (loss.any())
    return "log complete but LOSSY: " + loss.text() +
           (loss.totalsUndercount() ? "; the numbers above undercount" : "; the rows above undercount, the totals do not") +
           parts;
  return "log complete" + parts;
}

/// logStateOnly(), then how the process ended where it was by a signal (metadata kMetaEndSignal): ranges
/// open at that moment were closed there by the library, so their instances end at the signal.
std::string logStateLine(const LoadedLog& l, std::string_view errors_at = "listed below") {
  std::string line = logStateOnly(l, errors_at);
  if (const std::string sig = l.data.meta(kMetaEndSignal); !sig.empty())
    line += fmt::format("; the process ended by {}: ranges still open then end at the signal", sig);
  return line;
}

/// For a log that was not read whole (damaged, cut short, or without its End record) whose join left
/// launches without kernel or unmatched kernels: their other half may be in the part not read, so the
/// counts say nothing about the program. "" otherwise.
std::string joinCaveat(const LoadedLog& l) {
  const Summary& s = l.summary;
  if ((l.data.intact() && l.data.complete) || (s.launches_without_kernel == 0 && s.unmatched_kernels == 0)) return {};
  return fmt::format("join: the log was not read whole ({}): launches without kernel and unmatched kernels may "
                     "have their kernel or launch in the part not read, not missing from the run\n",
                     !l.data.intact() ? "damaged or cut short" : "no end record");
}

void printFooter(std::ostream& out, const LoadedLog& l, bool list_issues = true) {
  const Summary& s = l.summary;
  const StatsBody& st = l.data.stats;
  uint64_t graph = 0;
  for (const auto& r : s.exclusive) graph += r.graph_launches;
  if (noSnapshotNumbers(l))
    out << "totals: not known (no complete snapshot)\n";
  else
    out << fmt::format("totals: {} ({}{}), {}, {}, {}, GPU time {}\n", counted(s.launches, "launch", "launches"),
                       counted(graph, "graph launch", "graph launches"),
                       // Captured launches run nothing: said, so that kernels/launch below 1 is explained.
                       s.captured_launches == 0 ? std::string()
                                                : ", " + std::to_string(s.captured_launches) + " captured into graphs",
                       counted(s.kernels, "kernel"),
                       counted(s.unmatched_kernels, "unmatched kernel"),
                       counted(s.launches_without_kernel, "launch without kernel", "launches without kernel"),
                       !gpuTimeRecorded(l.data) ? std::string("not recorded") : formatDuration(s.kernel_gpu_ns));
  if (!noSnapshotNumbers(l)) out << joinCaveat(l);
  if (!gpuTimeRecorded(l.data))
    out << "GPU time: " << noKernelGpuTimeText(l.data) << ": kernels were counted at their launch calls, named from "
           "the launch; a graph launch's kernels were read from the graph when it was instantiated (a graph kcount "
           "could not read counts as a launch without kernel)\n";
  if (const std::string unknown = l.data.meta("graph_launch_unknown"); !unknown.empty())
    out << "graph launches without kernel: " << unknown << '\n';
  if (const std::string note = launchTimingNote(l.data); !note.empty()) out << note << '\n';
  out << snapshotLine(l);
  if (l.data.summary_mode && s.snapshot >= 0 && static_cast<size_t>(s.snapshot) < l.data.snapshots.size())
    if (const std::string t = droppedTalliesText(l.data.snapshots[static_cast<size_t>(s.snapshot)].begin); !t.empty())
      out << t << '\n';
  if (l.data.has_stats)
    out << fmt::format("dropped: {}, {}, {} refused, {}, {} not written; {} with no push\n",
                       counted(st.dropped_host_records, "host record"),
                       counted(st.dropped_activity_records, "activity record"),
                       counted(st.activity_buffers_refused, "activity buffer"),
                       counted(st.late_activity_records, "late activity record"), counted(st.bytes_dropped, "byte"),
                       counted(st.nvtx_pop_underflow, "NVTX pop"));
  else
    out << "dropped: unknown (the log has no stats record)\n";
  // Records kept out of the log at the size cap (KCOUNT_MAX_BYTES): the library's count, by kind.
  if (const std::string cut = l.data.meta("records_not_written"); !cut.empty()) out << "records " << cut << '\n';
  out << selfCostFooterLine(selfCostOf(l.data));
  if (windowsShown(l.data)) {
    const auto segs = windowTotals(l);
    auto duration = [](const SegmentBody& sg) {
      return formatDuration(sg.stop_ns > sg.start_ns ? sg.stop_ns - sg.start_ns : 0);
    };
    if (l.data.summary_mode) {
      // Snapshots tally the whole run: no number in them is per window (docs/usage.md, capture windows).
      out << fmt::format("capture windows: {}; summary mode: the numbers above are cumulative over all of them "
                         "(per-window numbers need KCOUNT_MODE=trace)\n",
                         segs.size());
      for (const auto& t : segs)
        out << fmt::format("  segment {}: {} -> {}, {}\n", t.segment.index, t.reason, t.end_reason, duration(t.segment));
    } else {
      out << fmt::format("capture windows: {} (kcount summary --segment N shows one)\n", segs.size());
      for (const auto& t : segs)
        out << fmt::format("  segment {}: {} -> {}, {}, {}, {}, {} unmatched, GPU time {}\n", t.segment.index,
                           t.reason, t.end_reason, duration(t.segment), counted(t.launches, "launch", "launches"),
                           counted(t.kernels, "kernel"), t.unmatched_kernels,
                           !gpuTimeRecorded(l.data) ? std::string("not recorded") : formatDuration(t.gpu_ns));
    }
  }
  out << logStateLine(l, list_issues ? "listed below" : "above") << '\n';
  if (list_issues)
    for (const auto& i : l.data.issues) out << fmt::format("{}: {}\n", severityName(i.severity), i.message);
}

/// Indentation levels a tree-view row is shifted by at most: the library tracks ranges nested up to 256
/// deep (inject/thread_state.h kMaxDepth), so only a crafted log nests deeper, and indenting each of its
/// rows by its depth would make the table's size grow with the square of the depth.
constexpr uint32_t kMaxIndentLevels = 256;

/// Indentation of a tree-view row at `depth` (1: a top-level range): two spaces per level below the top,
/// at most kMaxIndentLevels levels; a deeper row says its depth, "(depth D) ", after the indentation.
std::string treeIndent(uint32_t depth) {
  const uint32_t levels = depth > 0 ? depth - 1 : 0;
  if (levels <= kMaxIndentLevels) return std::string(2 * levels, ' ');
  return std::string(2 * kMaxIndentLevels, ' ') + fmt::format("(depth {}) ", depth);
}

/// The marks a range row of a text table carries, each explained by a note under the table: a
/// placeholder row (isPlaceholder: kPlaceholderMark, kPlaceholderNote), a range whose tally was dropped at
/// KCOUNT_MAX_KEYS (kTallyDroppedMark, tallyDroppedNote()), a range still open when the log closed
/// (kUnclosedMark, kUnclosedNote).
struct RowMarks {
  bool placeholder = false;
  bool tally_dropped = false;
  bool unclosed = false;
};

/// The marks of the range `id` (a defined range, not the root or the unknown-range row).
RowMarks rowMarks(const Summary& s, uint32_t id) {
  return RowMarks{isPlaceholder(s, id), tallyDropped(s, id), id < s.exclusive.size() && s.exclusive[id].unclosed > 0};
}

/// Label of a range row in text tables: `shown`, its escaped name (tree view) or path (flat views) as
/// shortened for the table (elideDistinct), followed by its marks.
std::string rangeLabel(std::string shown, const RowMarks& marks) {
  std::string label = std::move(shown);
  if (marks.placeholder) label += " " + std::string(kPlaceholderMark);
  if (marks.tally_dropped) label += " " + std::string(kTallyDroppedMark);
  if (marks.unclosed) label += " " + std::string(kUnclosedMark);
  return label;
}

/// Pseudo scope id of the row of records whose range is unknown (Summary::unresolved) in the loops over
/// shown scopes; never a real scope id (those are capped far below, docs/reader-guarantees.md).
constexpr uint32_t kUnresolvedRow = UINT32_MAX;

/// Path of a row as CSV and the verdict lines show it: the scope path, "(no range)" for the root, the
/// unknown-range label for kUnresolvedRow.
std::string rowPath(const LogData& d, uint32_t id) {
  if (id == kUnresolvedRow) return std::string(kUnresolvedLabel);
  return id == kRootScope ? d.scopePath(id) : displayPath(d, id);
}


/// Rows of a summary (table, CSV, JSON): the shown scopes, with the row of records of unknown range
/// (kUnresolvedRow) right after the root's. ex: exclusive numbers (the root's without the unresolved
/// records), in: inclusive numbers, own: instances and CPU time. The root row is "(no range)", what ran
/// outside every range, so its inclusive numbers are its exclusive ones; the whole process is the
/// separate "(overall)" row (CSV) or "overall" object (JSON), from Summary::inclusive[kRootScope].
struct SummaryRow {
  uint32_t id = 0;
  bool unresolved = false;
  const RangeStats* ex = nullptr;
  const RangeStats* in = nullptr;
  const RangeStats* own = nullptr;
};

/// `no_range` holds noRangeStats(s) and must outlive the rows.
std::vector<SummaryRow> summaryRows(const LogData& d, const Summary& s, RangeStats& no_range) {
  no_range = noRangeStats(s);
  std::vector<uint32_t> shown = shownScopes(d, s);
  if (hasUnresolved(s)) shown.insert(shown.begin() + 1, kUnresolvedRow);
  std::vector<SummaryRow> rows;
  rows.reserve(shown.size());
  for (uint32_t id : shown) {
    SummaryRow r{id, id == kUnresolvedRow};
    r.ex = r.unresolved ? &s.unresolved : id == kRootScope ? &no_range : &s.exclusive[id];
    r.in = r.unresolved ? &s.unresolved : id == kRootScope ? &no_range : &s.inclusive[id];
    r.own = r.unresolved || id == kRootScope ? r.ex : r.in;
    rows.push_back(r);
  }
  return rows;
}

/// Reorders `rows` (summaryRows() order) as `opt.sort` asks (SummaryOptions::sort).
void sortSummaryRows(std::vector<SummaryRow>& rows, const Summary& s, const SummaryOptions& opt) {
  if (!opt.sort || rows.empty()) return;
  const AcrossMetric metric = *opt.sort;
  auto key = [&](const SummaryRow& r) -> uint64_t {
    const bool incl = r.id != kRootScope && !r.unresolved && opt.view != SummaryView::kInnermost;
    const RangeStats& x = incl ? s.inclusive[r.id] : *r.ex;
    switch (metric) {
      case AcrossMetric::kGpuNs: return x.gpu_ns;
      case AcrossMetric::kKernels: return x.kernels;
      case AcrossMetric::kLaunches: return x.launches;
      case AcrossMetric::kCpuNs: return r.own->cpu_ns;
      case AcrossMetric::kLaunchApiNs: return x.launch_api_ns;
    }
    return 0;
  };
  auto larger = [&](const SummaryRow& a, const SummaryRow& b) { return key(a) > key(b); };
  // The rows that stay first: the root ("(no range)") and the unknown range's.
  size_t fixed = 0;
  while (fixed < rows.size() && (rows[fixed].id == kRootScope || rows[fixed].unresolved)) ++fixed;
  if (opt.view != SummaryView::kTree) {
    std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(fixed), rows.end(), larger);
    return;
  }
  // Tree: siblings by the key, each followed by its subtree (rows are depth first: a row's subtree is the
  // rows after it until one of its depth or less).
  const std::vector<uint32_t> parent = scopeParents(s);
  std::map<uint32_t, std::vector<size_t>> kids;  // parent id -> its shown children (indices into rows)
  for (size_t i = fixed; i < rows.size(); ++i) kids[rows[i].id < parent.size() ? parent[rows[i].id] : kRootScope].push_back(i);
  std::vector<SummaryRow> out(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(fixed));
  std::vector<uint8_t> placed(rows.size(), 0);
  auto place = [&](auto&& self, uint32_t id, size_t depth) -> void {
    auto it = kids.find(id);
    if (it == kids.end() || depth > rows.size()) return;
    std::vector<size_t> order = it->second;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return larger(rows[a], rows[b]); });
    for (size_t i : order) {
      if (placed[i]) continue;
      placed[i] = 1;
      out.push_back(rows[i]);
      self(self, rows[i].id, depth + 1);
    }
  };
  place(place, kRootScope, 0);
  // A row whose parent is not shown (not expected: shownScopes() shows every parent) keeps its place at the end.
  for (size_t i = fixed; i < rows.size(); ++i)
    if (!placed[i]) out.push_back(rows[i]);
  rows = std::move(out);
}

json layersJson(const RangeLayers& y, const RangeStats& r) {
  return json{{"gemm_gpu_ns", y.gemm_gpu_ns},
              {"other_gpu_ns", y.other_gpu_ns},
              {"kernels_per_launch", r.launches ? json(y.kernels_per_launch) : json(nullptr)},
              {"verdict", y.verdict.empty() ? json(nullptr) : json(y.verdict)}};
}

}  // namespace

// A launch call this long on average is not the launch rate (see layerVerdict).
constexpr uint64_t kSlowLaunchCallNs = 100'000;
// CPU time outside launch calls per launch from which a CPU-bound range is said to spend it on something
// other than issuing work (see layerVerdict).
constexpr uint64_t kSlowHostPerLaunchNs = 1'000'000;

namespace {

/// What the GPU work of a verdict holds, for the words after "of GPU work": "" for kernels alone (or
/// nothing), else " (kernels and memory copies)", " (memsets)", " (kernels, memory copies and memsets)".
std::string gpuWorkWhat(uint64_t kernels, uint64_t memcpy_count, uint64_t memset_count) {
  if (memcpy_count == 0 && memset_count == 0) return {};
  std::vector<std::string_view> parts;
  if (kernels != 0) parts.push_back("kernels");
  if (memcpy_count != 0) parts.push_back("memory copies");
  if (memset_count != 0) parts.push_back("memsets");
  std::string out = " (";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out + ")";
}

}  // namespace

VerdictInputs verdictInputs(const RangeStats& r, uint64_t instances, uint64_t cpu_ns, uint64_t launch_timing_sample,
                            GraphView graph_view) {
  VerdictInputs v;
  v.instances = instances;
  v.cpu_ns = cpu_ns;
  v.launch_api_ns = r.launch_api_ns;
  v.launches = r.launches;
  v.kernels = r.kernels;
  v.kernel_gpu_ns = r.gpu_ns;
  v.memcpy_count = r.memcpy_count;
  v.memset_count = r.memset_count;
  v.mem_gpu_ns = r.memcpy_ns;
  satAdd(v.mem_gpu_ns, r.memset_ns);
  v.launch_timing_sample = launch_timing_sample;
  v.capture_view = graph_view == GraphView::kCapturePath;
  v.graph_launches = r.graph_launches;
  v.captured_launches = r.captured_launches;
  return v;
}

std::string layerVerdict(const VerdictInputs& v) {
  const uint64_t instances = v.instances, cpu_ns = v.cpu_ns, launches = v.launches,
                 launch_timing_sample = v.launch_timing_sample;
  uint64_t launch_api_ns = v.launch_api_ns;
  // GPU work: kernels and memory operations (memcpy/memset) alike.
  uint64_t gpu_ns = v.kernel_gpu_ns;
  satAdd(gpu_ns, v.mem_gpu_ns);
  const uint64_t mem_ops = v.memcpy_count + v.memset_count;
  // Memory operations are named where they matter: without kernels, or at 1% of the GPU work and more
  // (cuBLAS workspace memsets of a few µs beside ms of GEMMs are not worth a word on every line).
  const bool name_mem = v.kernels == 0 || v.mem_gpu_ns >= gpu_ns / 100;
  const std::string what = name_mem ? gpuWorkWhat(v.kernels, v.memcpy_count, v.memset_count) : std::string();
  if (instances == 0) return {};
  const bool sampled = launch_timing_sample > 1;
  if (sampled) launch_api_ns = std::min(launch_api_ns, cpu_ns);  // an estimate can overshoot; the calls cannot
  // Per instance, rounded as every per-instance time of the tool's text (formatMeanDuration).
  const std::string c = formatMeanDuration(cpu_ns, instances), l = formatMeanDuration(launch_api_ns, instances),
                    g = formatMeanDuration(gpu_ns, instances);
  const std::string per = instances > 1 ? " per instance" : "";
  if (launches == 0 && v.kernels == 0 && mem_ops == 0) return fmt::format("no GPU work: {} in the range{}", c, per);
  // --graph-view capture: a graph launch's kernels are credited to the range they were captured in, so a
  // range with graph launches holds their launch CPU without their GPU time, and one that captured kernels
  // holds their replays' GPU time without the CPU time that launched them. Weighing one against the other
  // would compare different calls: what the view shows is said instead, without a bound verdict.
  if (v.capture_view && (v.graph_launches != 0 || v.captured_launches != 0)) {
    const std::string estimated = sampled ? fmt::format(" (estimated from 1 in {} calls)", launch_timing_sample) : "";
    if (v.captured_launches == 0)
      return fmt::format(
          "graph launches: their kernels are credited to the ranges they were captured in (--graph-view capture, "
          "no bound verdict): {} of launch calls{} in {} of range time{}{}",
          l, estimated, c, v.kernels + mem_ops != 0 ? fmt::format(", {} of GPU work{} credited to it", g, what) : "",
          per);
    return fmt::format(
        "captured kernels: their replays' GPU work is credited here (--graph-view capture, no bound verdict): {} of "
        "GPU work{}, {} in the range, {} in launch calls{}{}",
        g, what, c, l, estimated, per);
  }
  if (gpu_ns >= cpu_ns) return fmt::format("GPU-bound: {} of GPU work{} in {} of range time{}", g, what, c, per);
  // memcpy/memset API calls are not launch calls (launches and l hold kernel and graph launches only).
  const std::string calls_what = what.empty() ? "" : what.substr(2, what.size() - 3) + "; ";
  if (sampled && launches != 0 && launches < kMinTimedLaunchesForVerdict * launch_timing_sample)
    return fmt::format("CPU-bound: {} in the range for {} of GPU work ({}launch CPU not estimated: {}, 1 in {} timed){}",
                       c, g, calls_what,
                       launches == 1 ? std::string("1 launch") : fmt::format("{} launches", launches),
                       launch_timing_sample, per);
  const std::string estimated = sampled ? fmt::format("estimated from 1 in {} calls", launch_timing_sample) : "";
  // Launch-bound only where the launch calls are at least half of the range's CPU time: a range that spends
  // most of its time elsewhere (Python, the framework, first-call setup) is CPU-bound even when its launch
  // calls outlast its kernels, and fewer launches would not make it much faster.
  if (launches != 0 && launch_api_ns >= gpu_ns && launch_api_ns >= cpu_ns - std::min(cpu_ns, launch_api_ns)) {
    // Launch calls of 100 µs and more on average (a launch takes a few µs: FIELD-NOTES, 4.3-4.8 µs on the
    // H200) are first-call work inside the call (loading the kernel's module, lazy initialization), which
    // fewer launches or CUDA graphs would not remove: said, with the mean per call.
    const uint64_t per_call = launches != 0 ? launch_api_ns / launches : 0;
    const std::string slow = per_call >= kSlowLaunchCallNs
                                 ? fmt::format(" ({} per launch call: first-call setup such as loading the kernel's "
                                               "module, not the launch rate)",
                                               formatMeanDuration(launch_api_ns, launches))
                                 : std::string();
    return fmt::format("launch-bound: {} of launch calls{}{} for {} of GPU work{}{}", l,
                       sampled ? " (" + estimated + ")" : std::string(), slow, g, what, per);
  }
  // Issuing a kernel from PyTorch eager costs some 10-50 µs of CPU (dispatch and launch); a millisecond and
  // more outside launch calls per launch is other work: said, because fewer launches or CUDA graphs would
  // not remove it. A range that ran once is most likely first-call work (compilation, autotuning, library
  // or plan setup); in a repeated one it may be that (in its first instances: a step inside a warm-up) or
  // host work or waits between its launches, which the tallies cannot tell apart.
  std::string outside;
  if (launches != 0 && cpu_ns > launch_api_ns) {
    const uint64_t host = cpu_ns - launch_api_ns;
    if (host / launches >= kSlowHostPerLaunchNs)
      outside = fmt::format(
          "; {} per launch outside launch calls: {}", formatMeanDuration(host, launches),
          instances == 1 ? "ran once, most likely first-call work (compilation, autotuning, library or plan "
                           "setup), not launch overhead"
                         : "first-call work, host work or waits, not launch overhead");
  }
  const std::string calls = launches == 0 ? std::string("no kernel launch calls")
                                          : fmt::format("{} in launch calls{}", l, sampled ? ", " + estimated : std::string());
  return fmt::format("CPU-bound: {} in the range for {} of GPU work ({}{}){}{}", c, g, calls_what, calls, per, outside);
}

RangeLayers rangeLayers(const LogData& log, const RangeStats& r, uint64_t instances, uint64_t cpu_ns,
                        GraphView graph_view) {
  RangeLayers y;
  for (const auto& [name_id, t] : r.by_kernel)
    if (decodeKernelName(log.str(name_id)).category == KernelCategory::kGemm) y.gemm_gpu_ns += t.gpu_ns;
  y.other_gpu_ns = r.gpu_ns > y.gemm_gpu_ns ? r.gpu_ns - y.gemm_gpu_ns : 0;
  y.kernels_per_launch = r.launches ? static_cast<double>(r.kernels) / static_cast<double>(r.launches) : 0.0;
  // Without GPU times (KCOUNT_GPU_TIME=0) there is nothing to weigh CPU time against: no verdict.
  if (gpuTimeRecorded(log))
    y.verdict = layerVerdict(verdictInputs(r, instances, cpu_ns, launchTimingSample(log), graph_view));
  return y;
}

std::string innermostVerdict(const LogData& log, const RangeStats& ex, const RangeStats& in, uint64_t instances,
                             uint64_t cpu_ns, GraphView graph_view) {
  const bool child_work = in.launches != ex.launches || in.kernels != ex.kernels ||
                          in.memcpy_count != ex.memcpy_count || in.memset_count != ex.memset_count;
  if (!gpuTimeRecorded(log)) return {};  // as rangeLayers(): nothing to weigh CPU time against
  const uint64_t n = launchTimingSample(log);
  if (!child_work) return layerVerdict(verdictInputs(ex, instances, cpu_ns, n, graph_view));
  const std::string v = layerVerdict(verdictInputs(in, instances, cpu_ns, n, graph_view));
  return v.empty() ? v : std::string(kWithChildRanges) + v;
}

std::string elideMiddle(std::string_view s, size_t max_width) {
  if (max_width < 5) max_width = 5;
  if (displayWidth(s) <= max_width) return std::string(s);
  const size_t keep = max_width - 1;  // columns kept around the "…"
  const size_t head = (keep + 1) / 2, tail = keep - head;
  return std::string(s.substr(0, headBytes(s, head))) + "…" + std::string(s.substr(tailStart(s, tail)));
}

bool memOpsRecorded(const LogData& d) { return gpuTimeRecorded(d) && !(d.major == 1 && d.minor == 0); }

std::string noKernelGpuTimeText(const LogData& d) {
  return graphGpuTimeRecorded(d) ? "graph launches' GPU spans only (KCOUNT_GPU_TIME=graphs)"
                                 : "not recorded (KCOUNT_GPU_TIME=0)";
}

uint64_t launchTimingSample(const LogData& d) {
  const std::optional<uint64_t> n = parseUnsigned(d.meta("launch_timing_sample"));
  return n && *n >= 2 && *n <= 1024 ? *n : 1;
}

std::string launchTimingNote(const LogData& d) {
  const uint64_t n = launchTimingSample(d);
  if (n == 1) return {};
  return fmt::format("launch CPU: estimated (KCOUNT_LAUNCH_TIMING={0}): one launch call in {0} was timed, at random, "
                     "and counts {0} times; rough for ranges with few launches",
                     n);
}

namespace {
// Bytes `a` and `b` have in common at the start and at the end, in whole UTF-8 characters (a common run that
// ends inside a character does not count that character). The end run does not reach into the start run.
size_t commonPrefixBytes(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t pre = 0;
  while (pre < n && a[pre] == b[pre]) ++pre;
  // (pre == a.size(): `a` is a prefix of `b` and ends at a character boundary; a[pre] is past its end.)
  while (pre > 0 && pre < a.size() && (static_cast<unsigned char>(a[pre]) & 0xC0) == 0x80) --pre;
  return pre;
}
size_t commonSuffixBytes(std::string_view a, std::string_view b, size_t pre) {
  const size_t n = std::min(a.size(), b.size());
  size_t suf = 0;
  while (suf < n - std::min(pre, n) && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  while (suf > 0 && (static_cast<unsigned char>(a[a.size() - suf]) & 0xC0) == 0x80) --suf;
  return suf;
}
// Most characters of a word kept beside the character where two names differ (widthTelling()).
constexpr size_t kMaxWordShown = 24;
bool wordByte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
// The smallest elideMiddle() width at which `a`, with `pre` bytes in common with another name at the start
// and `suf` at the end, shortens to a text that shows where they differ, with the rest of the word (letters
// and digits, at most kMaxWordShown more) that the first different character starts or ends:
// "…uniform_and_transform" against "…normal_and_transform", not "…m_and_transform" against
// "…l_and_transform". With p characters in common at the start and q at the end: a head of p + 1
// characters or more (width 2p + 2 or more), or a tail of q + 1 or more (width 2q + 3 or more).
size_t widthTelling(std::string_view a, size_t pre, size_t suf) {
  const size_t p = displayWidth(a.substr(0, pre)), q = displayWidth(a.substr(a.size() - suf));
  size_t head_end = pre;  // the head reaches to the end of the word the difference starts
  while (head_end < a.size() && wordByte(a[head_end]) && head_end - pre < kMaxWordShown) ++head_end;
  size_t tail_start = a.size() - suf;  // the tail reaches back to the start of the word the difference ends
  while (tail_start > pre && wordByte(a[tail_start - 1]) && a.size() - suf - tail_start < kMaxWordShown) --tail_start;
  const size_t head = std::max(p + 1, displayWidth(a.substr(0, head_end)));
  const size_t tail = std::max(q + 1, displayWidth(a.substr(tail_start)));
  return std::min(2 * head, 2 * tail + 1);
}
size_t widthTelling(std::string_view a, std::string_view b) {
  const size_t pre = commonPrefixBytes(a, b);
  return widthTelling(a, pre, commonSuffixBytes(a, b, pre));
}

// For each of the different names `names[idx[k]]` of one clash group, a width at which it shows a character
// where it differs from every other name of the group: the longest start it shares with any of them is
// shared with a neighbour in sorted order, the longest end with a neighbour in the order of reversed
// names, so the group costs a sort, not a comparison of every pair (a chain of nested ranges makes every
// path a clash of every other). The width is at least what any single other name needs (the longest
// start and end need not come from the same name): never too narrow to tell them apart.
std::vector<size_t> widthsTellingGroup(const std::vector<std::string>& names, const std::vector<size_t>& idx) {
  std::vector<size_t> by_name(idx), by_end(idx);
  std::sort(by_name.begin(), by_name.end(), [&](size_t x, size_t y) { return names[x] < names[y]; });
  auto endLess = [&](size_t x, size_t y) {
    return std::lexicographical_compare(names[x].rbegin(), names[x].rend(), names[y].rbegin(), names[y].rend());
  };
  std::sort(by_end.begin(), by_end.end(), endLess);
  std::unordered_map<size_t, size_t> pre, suf;  // index -> longest common start / end with another name
  // The nearest name before and after position k that differs from names[order[k]] (equal names sit together).
  auto longest = [&](const std::vector<size_t>& order, auto common, std::unordered_map<size_t, size_t>& into) {
    for (size_t k = 0; k < order.size(); ++k) {
      const std::string& me = names[order[k]];
      size_t best = 0;
      for (size_t j = k; j-- > 0;)
        if (names[order[j]] != me) {
          best = std::max(best, common(me, names[order[j]]));
          break;
        }
      for (size_t j = k + 1; j < order.size(); ++j)
        if (names[order[j]] != me) {
          best = std::max(best, common(me, names[order[j]]));
          break;
        }
      into[order[k]] = best;
    }
  };
  longest(by_name, [](std::string_view a, std::string_view b) { return commonPrefixBytes(a, b); }, pre);
  longest(by_end, [](std::string_view a, std::string_view b) { return commonSuffixBytes(a, b, 0); }, suf);
  std::vector<size_t> out;
  for (size_t i : idx) {
    const std::string& a = names[i];
    // The end run may not reach into the start run (elideMiddle's head and tail do not overlap).
    const size_t p = pre[i], q = std::min(suf[i], a.size() - std::min(p, a.size()));
    // A name with no different name in the group (it clashes with a name shown whole): 2, no word to show.
    const bool other = names[by_name.front()] != a || names[by_name.back()] != a;
    out.push_back(other ? widthTelling(a, p, q) : 2);
  }
  return out;
}
}  // namespace

std::vector<std::string> elideDistinct(const std::vector<std::string>& names, size_t max_width) {
  if (max_width < 5) max_width = 5;
  std::vector<size_t> width(names.size(), max_width);
  std::vector<std::string> out(names.size());
  for (size_t i = 0; i < names.size(); ++i) out[i] = elideMiddle(names[i], max_width);
  for (;;) {
    // Shortened text -> the indexes of the names shortened to it; the names shown in full.
    std::unordered_map<std::string, std::vector<size_t>> by_text;
    std::unordered_set<std::string_view> whole;
    for (size_t i = 0; i < names.size(); ++i) {
      if (out[i] != names[i]) by_text[out[i]].push_back(i);  // a name shown in full needs no more width
      else whole.insert(names[i]);
    }
    bool widened = false;
    for (const auto& [text, idx] : by_text) {
      bool clash = whole.count(text) > 0;  // a shortened name that reads as another name shown in full
      for (size_t i : idx) clash = clash || names[i] != names[idx.front()];
      if (!clash) continue;
      // Straight to the width at which its head or tail reaches a difference from each name it clashes
      // with (one character at a time took as many rounds as the names' common middle is long).
      const std::vector<size_t> telling = widthsTellingGroup(names, idx);
      for (size_t k = 0; k < idx.size(); ++k) {
        const size_t i = idx[k];
        // (A name with no different name in the group gets 2 from widthsTellingGroup: no more than +1.)
        size_t need = std::max(width[i] + 1, telling[k]);
        if (whole.count(text) > 0) need = std::max(need, widthTelling(names[i], text));
        width[i] = need;
        out[i] = elideMiddle(names[i], width[i]);
        widened = true;
      }
    }
    if (!widened) break;
  }
  // A column is as wide as its widest text: a name shortened less to tell it apart widens it, and the
  // others need not be cut shorter than that (a 66-character name cut at 60 beside a 100-wide one).
  size_t widest = max_width;
  for (size_t i = 0; i < names.size(); ++i)
    if (out[i] != names[i]) widest = std::max(widest, width[i]);
  if (widest > max_width)
    for (size_t i = 0; i < names.size(); ++i)
      if (out[i] != names[i] && width[i] < widest) out[i] = elideMiddle(names[i], widest);
  return out;
}

void tellKernelsApart(std::vector<std::string>& shown, const std::vector<std::string>& names, size_t max_width) {
  std::map<std::string, std::vector<size_t>> by_shown;
  for (size_t i = 0; i < shown.size(); ++i) by_shown[shown[i]].push_back(i);
  for (const auto& entry : by_shown) {
    const std::vector<size_t>& group = entry.second;  // named: clang 14 cannot capture a structured binding
    const std::string& first = names[group.front()];
    if (std::all_of(group.begin(), group.end(), [&](size_t i) { return names[i] == first; })) continue;
    std::vector<std::string> demangled;
    for (size_t i : group) demangled.push_back(displayText(demangleKernelName(names[i])));
    const std::vector<std::string> distinct = elideDistinct(demangled, max_width);
    for (size_t k = 0; k < group.size(); ++k) shown[group[k]] = distinct[k];
  }
}

std::string LogLosses::text() const {
  if (counters.empty()) return {};
  std::string parts, s;
  for (const auto& c : counters) {
    if (c.json_key == "dropped_tallies") continue;  // said apart, below
    if (!parts.empty()) parts += ", ";
    parts += fmt::format("{}: {}{}", c.name, c.count, c.cause.empty() ? "" : " (" + c.cause + ")");
  }
  if (!parts.empty()) {
    if (records > 0) s = fmt::format("{} dropped while recording ({})", counted(records, "record"), parts);
    else if (bytes > 0) s = fmt::format("{} not written while recording ({})", counted(bytes, "byte"), parts);
    else s = fmt::format("lost while recording: {}", parts);
  }
  // Events past the key cap are not lost: they count in the totals, in no row (or not by kernel name).
  if (untallied > 0) s += (s.empty() ? "" : "; ") + untalliedEventsText(untallied, max_keys);
  return s;
}

NotWritten notWritten(const LogData& d) {
  NotWritten n;
  if (d.has_not_written_stats) {
    const StatsBody& st = d.stats;
    n.launches = st.not_written_launches;
    n.mem_calls = std::min(st.not_written_mem_calls, st.not_written_launches);
    n.kernels = st.not_written_kernels;
    n.ranges = st.not_written_ranges;
    n.other = st.not_written_other;
    n.known = true;
    return n;
  }
  // Logs written before the Stats fields: the library's text, "not written: L launches, K kernels, R
  // ranges, O other records[, from part N on, at KCOUNT_MAX_BYTES]".
  const std::string text = d.meta("records_not_written");
  unsigned long long l = 0, k = 0, r = 0, o = 0;
  if (!text.empty() && std::sscanf(text.c_str(), "not written: %llu launches, %llu kernels, %llu ranges, %llu other",
                                   &l, &k, &r, &o) == 4) {
    n.launches = l;
    n.kernels = k;
    n.ranges = r;
    n.other = o;
    n.known = true;
  }
  return n;
}

LogLosses logLosses(const LoadedLog& l) {
  LogLosses out;
  const StatsBody& st = l.data.stats;
  // buffers refused: their records are in CUPTI's count; events: tallied in the totals, not in their row
  enum Unit { kRecords, kBytes, kBuffers, kEvents };
  auto add = [&](const char* name, const char* key, uint64_t n, const char* cause, Unit unit) {
    if (n == 0) return;
    out.counters.push_back({name, key, n, cause});
    if (unit == kRecords) out.records += n;
    else if (unit == kBytes) out.bytes += n;
    else if (unit == kEvents) out.untallied += n;
  };
  // The library counts here both records past the host buffer cap and NVTX pushes past its range stack's
  // depth (ThreadState::kMaxDepth, 256): the Stats record does not tell them apart.
  add("host records", "dropped_host_records", st.dropped_host_records,
      "KCOUNT_MAX_HOST_MB, or NVTX ranges nested deeper than 256", kRecords);
  add("activity records", "dropped_activity_records", st.dropped_activity_records, "dropped by CUPTI", kRecords);
  add("activity buffers refused", "activity_buffers_refused", st.activity_buffers_refused, "KCOUNT_MAX_ACTIVITY_MB",
      kBuffers);
  add("late activity records", "late_activity_records", st.late_activity_records, "delivered after the log closed",
      kRecords);
  add("bytes not written", "bytes_dropped", st.bytes_dropped, "disk full, unwritable, or KCOUNT_MAX_BYTES", kBytes);
  // The records in those bytes, by kind (Stats fields, or the metadata text of earlier 1.2 logs).
  if (const NotWritten n = notWritten(l.data); n.known) {
    const char* in_bytes = "in the bytes not written";
    add("launches not written", "not_written_launches", n.launches - n.mem_calls, in_bytes, kRecords);
    add("memcpy/memset calls not written", "not_written_mem_calls", n.mem_calls, in_bytes, kRecords);
    add("kernels not written", "not_written_kernels", n.kernels, in_bytes, kRecords);
    add("ranges not written", "not_written_ranges", n.ranges, in_bytes, kRecords);
    add("other records not written", "not_written_other", n.other, "metadata, strings, scopes, snapshots, ...",
        kRecords);
  }
  if (l.summary.snapshot >= 0 && static_cast<size_t>(l.summary.snapshot) < l.data.snapshots.size()) {
    const SnapshotBeginBody& b = l.data.snapshots[static_cast<size_t>(l.summary.snapshot)].begin;
    const std::string cap = b.max_keys > 0 ? "KCOUNT_MAX_KEYS=" + std::to_string(b.max_keys) : "KCOUNT_MAX_KEYS";
    out.max_keys = b.max_keys;
    add("events not tallied in their row", "dropped_tallies", b.dropped_tallies, cap.c_str(), kEvents);
    add("launches evicted from the correlation window", "evicted_launches", b.evicted_launches, "", kRecords);
  }
  return out;
}

std::string logState(const LoadedLog& l) {
  const LogData& d = l.data;
  auto say = [](size_t i) { return std::string(kLogStates[i]); };  // tested in kLogStates' order
  if (!d.intact()) return say(0);
  if (d.dataAfterEnd()) return say(1);
  if (!partialRunText(d).empty()) return say(2);
  if (!d.complete) return say(3);
  if (!noTotalsText(d, l.summary).empty()) return say(4);
  if (!statsShortfall(l, true).empty()) return say(5);
  return say(logLosses(l).any() ? 6 : 7);
}

std::string logStateWarning(const LoadedLog& l, std::string_view errors_at) {
  if (logState(l) == "complete") return {};
  std::string s = logStateLine(l, errors_at);
  if (s.starts_with("log PARTIAL: ")) s.erase(0, 13);  // the warning names what is missing
  // The footer's wording refers to the table above it; a warning stands alone.
  for (const auto& [above, plain] : {std::pair<std::string, std::string>{"the numbers above undercount", "its numbers undercount"},
                                     {"the rows above undercount", "its rows undercount"}})
    if (const size_t at = s.find(above); at != std::string::npos) s.replace(at, above.size(), plain);
  return s;
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

LoadedLog loadLog(const std::string& path, const JoinOptions& join) {
  LoadedLog l;
  l.path = path;
  l.data = readLogFile(path);
  compactScopes(l.data);
  noteLaterPartOnDisk(path, l.data);
  l.summary = summarize(l.data, join);
  noteSaturatedSums(l);
  noteRepeatedIds(l);
  noteImplausible(l);
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
  noteSaturatedSums(l);
  noteRepeatedIds(l);
  noteImplausible(l);
  return l;
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


std::string unsupportedVersionText(const LogData& d) {
  return fmt::format("format {}.{} is not one this kcount reads ({}.x): read it with the kcount that wrote it, or "
                     "a later one",
                     d.major, d.minor, kLogMajor);
}


std::optional<std::string> rangeDomain(const LogData& log, uint32_t scope_id) {
  if (scope_id == kRootScope || !log.scopeDefined(scope_id) || log.scopes[scope_id].domain_id == kNoString)
    return std::nullopt;
  return std::string(log.str(log.scopes[scope_id].domain_id));
}

std::string displayRangeName(const LogData& log, uint32_t scope_id) {
  std::string name = displayName(log.str(log.scopes[scope_id].name_id));
  if (const auto domain = rangeDomain(log, scope_id)) return displayName(*domain) + ": " + name;
  return name;
}

std::string rangeNameWithDomain(const LogData& log, uint32_t scope_id) {
  std::string name(log.str(log.scopes[scope_id].name_id));
  if (const auto domain = rangeDomain(log, scope_id)) return *domain + ": " + name;
  return name;
}

std::string scopePathWithDomains(const LogData& log, uint32_t scope_id) {
  std::vector<uint32_t> chain;
  bool domains = false;
  for (uint32_t s = scope_id; s != kRootScope; s = log.scopes[s].parent_id) {
    // A lost or bad parent, a cycle or an absurd depth: LogData::scopePath() says so.
    if (!log.scopeDefined(s) || s >= log.scopes.size() || chain.size() >= 256) return log.scopePath(scope_id);
    domains = domains || rangeDomain(log, s).has_value();
    chain.push_back(s);
  }
  if (!domains) return log.scopePath(scope_id);
  std::string path;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) path += (path.empty() ? "" : "/") + rangeNameWithDomain(log, *it);
  return path;
}

std::string displayPath(const LogData& log, uint32_t scope_id, bool domains) {
  if (log.scopeLost(scope_id)) return lostRangeName(log.logScopeId(scope_id));
  if (scope_id == kRootScope || !log.scopeDefined(scope_id)) return log.scopePath(scope_id);
  std::vector<uint32_t> chain;
  std::unordered_set<uint32_t> seen;
  std::string path;
  for (uint32_t id = scope_id; id != kRootScope; id = log.scopes[id].parent_id) {
    if (log.scopeLost(id)) {  // ranges recorded inside a range whose definition was lost: grouped under it
      path = lostRangeName(log.logScopeId(id));
      break;
    }
    // A bad parent, a cycle or an absurd depth: LogData::scopePath() says so.
    if (!log.scopeDefined(id) || !seen.insert(id).second || chain.size() >= 256) return log.scopePath(scope_id);
    chain.push_back(id);
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!path.empty()) path += '/';
    path += domains ? displayRangeName(log, *it) : displayName(log.str(log.scopes[*it].name_id));
  }
  return path;
}

std::vector<uint32_t> scopeParents(const Summary& s) {
  std::vector<uint32_t> parent(s.inclusive.size(), kRootScope);
  for (size_t p = 0; p < s.children.size(); ++p)
    for (uint32_t c : s.children[p])
      if (c < parent.size()) parent[c] = static_cast<uint32_t>(p);
  return parent;
}

std::vector<uint32_t> scopeDepths(const Summary& s) {
  std::vector<uint32_t> depth(s.children.size(), 0);
  for (uint32_t id : s.children_order)
    if (id < s.children.size())
      for (uint32_t c : s.children[id])
        if (c < depth.size()) depth[c] = depth[id] + 1;
  return depth;
}

namespace {
bool hasNumbers(const RangeStats& r) { return r.instances > 0 || r.launches > 0 || r.kernels > 0; }
}  // namespace

std::vector<uint32_t> shownScopes(const LogData&, const Summary& s) {
  const size_t n = s.inclusive.size();
  std::vector<uint8_t> show(n, 0);
  const std::vector<uint32_t> parent = scopeParents(s);
  for (size_t id = 0; id < n; ++id) show[id] = id == kRootScope || hasNumbers(s.inclusive[id]);
  // The parents of a shown range are shown too (a placeholder row when they have no numbers of their
  // own, e.g. a range open across a whole capture window), so the tree never indents under nothing.
  // The repaired tree has no cycle: each walk ends at the root or at a range already shown.
  for (size_t id = 1; id < n; ++id)
    if (show[id])
      for (uint32_t p = parent[id]; p != kRootScope && !show[p]; p = parent[p]) show[p] = 1;
  std::vector<uint32_t> out;
  for (uint32_t id : s.children_order)
    if (id < n && show[id]) out.push_back(id);
  return out;
}

bool isPlaceholder(const Summary& s, uint32_t id) {
  return id != kRootScope && id < s.inclusive.size() && !hasNumbers(s.inclusive[id]) && !tallyDropped(s, id);
}

bool tallyDropped(const Summary& s, uint32_t id) { return id < s.tally_dropped.size() && s.tally_dropped[id] != 0; }

std::string tallyDroppedNote(const LoadedLog& l) {
  uint64_t max_keys = 0;
  if (l.summary.snapshot >= 0 && static_cast<size_t>(l.summary.snapshot) < l.data.snapshots.size())
    max_keys = l.data.snapshots[static_cast<size_t>(l.summary.snapshot)].begin.max_keys;
  return fmt::format("{}: no numbers: the range's tally was dropped at KCOUNT_MAX_KEYS{} (its instances, launches and "
                     "kernels count in the totals only; see 'tallies dropped' below)",
                     kTallyDroppedMark, max_keys > 0 ? "=" + std::to_string(max_keys) : std::string());
}

/// Sets every GPU-time member of `j` (keys gpu_ns, gemm_gpu_ns, other_gpu_ns, at any depth) to null: the
/// JSON of a log recorded with KCOUNT_GPU_TIME=0, whose GPU times are 0 because they were not measured.
static void nullGpuTimes(json& j) {
  if (j.is_array()) {
    for (auto& e : j) nullGpuTimes(e);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "gpu_ns" || it.key() == "gemm_gpu_ns" || it.key() == "other_gpu_ns") it.value() = nullptr;
      else if (!(it.key() == "ranges" && it.value().is_object())) nullGpuTimes(it.value());  // not a path -> count map
    }
  }
}

namespace {

/// Calls f(json) with summary JSON's element of "ranges" for each row of `l` (summaryRows() order), with
/// null GPU times for a log without them; one element at a time.
template <typename F>
void forEachRangeJson(const LoadedLog& l, F&& f) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  const bool gpu_time = gpuTimeRecorded(d);
  const bool graph_spans = graphGpuTimeRecorded(d);
  const auto depth = scopeDepths(s);
  RangeStats no_range;
  for (const SummaryRow& row : summaryRows(d, s, no_range)) {
    const uint32_t id = row.id;
    const bool unresolved = row.unresolved;
    const RangeStats &ex = *row.ex, &in = *row.in, &own = *row.own;
    const bool lost = !unresolved && d.scopeLost(id);
    std::string path = unresolved ? std::string(kUnresolvedLabel) : lost ? lostRangeName(d.logScopeId(id)) : d.scopePath(id);
    std::string name = unresolved || lost || id == kRootScope ? path : std::string(d.str(d.scopes[id].name_id));
    json kernels = json::array();
    for (const auto& [kname, t] : sortedKernels(d, ex))
      kernels.push_back(json{{"name", kname}, {"short", shortKernelNameUncut(kname)}, {"count", t.count}, {"gpu_ns", t.gpu_ns}});
    // The root's inclusive numbers are its exclusive ones (summaryRows()). Records of an unknown range get
    // no verdict and no instances (their range's time is not known).
    const uint64_t instances = unresolved ? 0 : own.instances;
    json per_instance = nullptr;
    if (instances > 0) per_instance = static_cast<double>(in.kernels) / static_cast<double>(instances);
    const RangeLayers ly_in = rangeLayers(d, in, instances, own.cpu_ns, s.graph_view);
    RangeLayers ly_ex = rangeLayers(d, ex, instances, own.cpu_ns, s.graph_view);
    // The innermost verdict as `--view innermost` prints it (a parent's work may be in its children).
    ly_ex.verdict = innermostVerdict(d, ex, in, instances, own.cpu_ns, s.graph_view);
    json layers{{"inclusive", layersJson(ly_in, in)}, {"innermost", layersJson(ly_ex, ex)}};
    json flat = layersJson(ly_in, in);
    const auto domain = unresolved ? std::nullopt : rangeDomain(d, id);
    json r{{"path", path},
           {"name", name},
           // The NVTX domain the range was pushed in; null for the default domain. Ranges of one
           // path in two domains are two rows with the same path (scope_id tells them apart).
           {"domain", domain ? json(*domain) : json(nullptr)},
           {"scope_id", unresolved ? json(nullptr) : json(d.logScopeId(id))},
           // The tree without parsing paths (a name may hold '/': "a/b" at the top and b
           // inside a have the same path): null for the root, the unknown-range row and a
           // lost range (its Scope record, which named the parent, was lost).
           {"parent_scope_id", unresolved || lost || id == kRootScope || !d.scopeDefined(id)
                                   ? json(nullptr)
                                   : json(d.logScopeId(d.scopes[id].parent_id))},
           {"depth", unresolved ? 1 : depth[id]},
           {"unknown_range", unresolved},
           {"lost_range", lost},
           {"placeholder", !unresolved && isPlaceholder(s, id)},
           {"tally_dropped", !unresolved && tallyDropped(s, id)},
           {"instances", instances},
           // Of instances: still open when the log closed, their CPU time running to the close.
           {"unclosed_instances", unresolved ? 0 : ex.unclosed},
           // No instance (the "(no range)" row, a range never pushed in a window): no CPU
           // time, null as in kernels_per_instance (the table prints "-", CSV leaves it empty).
           {"cpu_ns", instances > 0 ? json(own.cpu_ns) : json(nullptr)},
           {"exclusive", countsJson(ex, graph_spans)},
           {"inclusive", countsJson(in, graph_spans)},
           {"kernels_per_instance", per_instance},
           {"kernels", kernels},
           {"gemm_gpu_ns", flat["gemm_gpu_ns"]},
           {"other_gpu_ns", flat["other_gpu_ns"]},
           {"kernels_per_launch", flat["kernels_per_launch"]},
           {"verdict", flat["verdict"]},
           {"layers", layers}};
    if (!gpu_time) nullGpuTimes(r);
    f(std::move(r));
  }
}

/// summaryJson() of `l` with "ranges" null: forEachRangeJson() gives its elements.
json summaryJsonWithoutRanges(const LoadedLog& l) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  json meta = json::object();
  for (const auto& [k, v] : d.metadata) meta[k] = v;
  json issues = json::array();
  for (const auto& i : d.issues)
    issues.push_back(json{{"severity", severityName(i.severity)},
                          {"offset", i.offset == ReadIssue::kNoOffset ? json(nullptr) : json(i.offset)},
                          {"chunk", i.chunk},
                          {"message", i.message}});
  uint64_t graph = 0;
  for (const auto& r : s.exclusive) graph += r.graph_launches;
  json totals{{"launches", s.launches},
              {"graph_launches", graph},
              {"kernels", s.kernels},
              {"unmatched_kernels", s.unmatched_kernels},
              {"launches_without_kernel", s.launches_without_kernel},
              {"captured_launches", s.captured_launches},
              {"mem_ops", s.mem_ops},
              {"unmatched_mem_ops", s.unmatched_mem_ops},
              {"gpu_ns", s.kernel_gpu_ns},
              {"dropped_host_records", d.stats.dropped_host_records},
              {"dropped_activity_records", d.stats.dropped_activity_records},
              {"activity_buffers_refused", d.stats.activity_buffers_refused},
              {"late_activity_records", d.stats.late_activity_records},
              {"nvtx_pop_underflow", d.stats.nvtx_pop_underflow},
              {"bytes_dropped", d.stats.bytes_dropped}};
  json segments = json::array();
  // A summary-mode log's snapshots are cumulative over every window: its per-window counts are not known.
  auto count = [&](uint64_t n) { return d.summary_mode ? json(nullptr) : json(n); };
  for (const auto& t : windowTotals(l))
    segments.push_back(json{{"index", t.segment.index},
                            {"reason", t.reason},
                            {"end_reason", t.end_reason},
                            {"start_ns", t.segment.start_ns},
                            {"stop_ns", t.segment.stop_ns},
                            {"duration_ns", t.segment.stop_ns > t.segment.start_ns ? t.segment.stop_ns - t.segment.start_ns : 0},
                            {"first_correlation_id", t.segment.first_correlation_id},
                            {"last_correlation_id", t.segment.last_correlation_id},
                            {"activity_discarded", (t.segment.flags & kSegmentActivityDiscarded) != 0},
                            {"launches", count(t.launches)},
                            {"kernels", count(t.kernels)},
                            {"unmatched_kernels", count(t.unmatched_kernels)},
                            {"gpu_ns", count(t.gpu_ns)},
                            {"ranges", count(t.ranges)},
                            {"mem_ops", count(t.mem_ops)}});
  // The whole process: every matched launch, kernel and memory operation, ranges or not.
  const bool graph_spans = graphGpuTimeRecorded(d);
  json overall = s.inclusive.empty() ? countsJson(RangeStats{}, graph_spans)
                                     : countsJson(s.inclusive[kRootScope], graph_spans);
  json out{{"path", l.path},   {"metadata", meta}, {"complete", d.complete}, {"intact", d.intact()}, {"issues", issues},
           {"totals", totals}, {"overall", overall}, {"ranges", nullptr}, {"segments", segments}};
  if (noSnapshotNumbers(l)) {
    // No complete snapshot: the numbers are not known (not zeros), as "no totals" across logs.
    out["totals"] = nullptr;
    out["overall"] = nullptr;
  }
  out["mode"] = d.summary_mode ? "summary" : "trace";
  out["gpu_time"] = gpuTimeRecorded(d);  // false: KCOUNT_GPU_TIME=0: every GPU time is null (not measured)
  if (graph_spans) out["graph_gpu_time"] = true;  // KCOUNT_GPU_TIME=graphs: COUNTS have graph_gpu_*
  if (!gpuTimeRecorded(d)) nullGpuTimes(out);
  // KCOUNT_LAUNCH_TIMING=N: launch_api_ns are estimates (one call in N timed, counted N times).
  out["launch_timing_sample"] = launchTimingSample(d);
  out["kcount_cost"] = selfCostJson(selfCostOf(d));  // null: a log written before the library counted it
  {
    const LogLosses loss = logLosses(l);
    json counters = json::object();
    for (const auto& c : loss.counters) counters[c.json_key] = c.count;
    out["state"] = logState(l);
    out["lossy"] = loss.any();
    out["drops"] = json{{"records", loss.records}, {"bytes", loss.bytes}, {"untallied_events", loss.untallied},
                        {"counters", counters}, {"text", loss.text()}};
  }
  if (d.summary_mode) {
    json snap = nullptr;
    if (s.snapshot >= 0) {
      const SnapshotBeginBody& b = d.snapshots[static_cast<size_t>(s.snapshot)].begin;
      snap = json{{"sequence", b.sequence},
                  {"time_ns", b.time_ns},
                  {"final", (b.flags & kSnapshotFinal) != 0},
                  {"inflight_launches", b.inflight_launches},
                  {"waiting_activity", b.waiting_activity},
                  {"dropped_tallies", b.dropped_tallies},
                  {"evicted_launches", b.evicted_launches}};
      // What dropped_tallies holds, by kind (null in a log of an earlier writer, which does not say).
      const bool known = b.max_keys > 0;
      auto detail = [&](uint64_t v) { return known ? json(v) : json(nullptr); };
      snap["max_keys"] = detail(b.max_keys);
      snap["dropped_ranges"] = detail(b.dropped_ranges);
      snap["dropped_range_instances"] = detail(b.dropped_range_instances);
      snap["dropped_launches"] = detail(b.dropped_launches);
      snap["dropped_kernels"] = detail(b.dropped_kernels);
      snap["dropped_mem_ops"] = detail(b.dropped_mem_ops);
      snap["unnamed_kernels"] = detail(b.unnamed_kernels);
    }
    out["snapshot"] = snap;
    out["snapshots"] = d.snapshots.size();
    out["incomplete_snapshots"] = d.incomplete_snapshots;
    out["snapshots_skipped"] = snapshotsSkipped(d);
  }
  return out;
}

}  // namespace

json summaryJson(const LoadedLog& l) {
  json out = summaryJsonWithoutRanges(l);
  if (!noSnapshotNumbers(l)) {  // no complete snapshot: "ranges" stays null
    json ranges = json::array();
    forEachRangeJson(l, [&](json r) { ranges.push_back(std::move(r)); });
    out["ranges"] = std::move(ranges);
  }
  return out;
}

json summaryJson(const std::vector<LoadedLog>& logs) {
  json arr = json::array();
  for (const auto& l : logs) arr.push_back(summaryJson(l));
  return json{{"logs", arr}};
}

void writeSummaryJson(std::ostream& out, const std::vector<LoadedLog>& logs) {
  JsonWriter w(out);
  json doc{{"logs", nullptr}};
  if (logs.size() > 1) doc["across_logs"] = nullptr;  // written by writeAcrossLogsJson()
  w.object(doc, {{"across_logs", [&] { writeAcrossLogsJson(w, logs); }},
                 {"logs", [&] {
                   w.beginArray();
                   for (const auto& l : logs) {
                     const json skeleton = summaryJsonWithoutRanges(l);
                     if (noSnapshotNumbers(l)) {
                       w.value(skeleton);
                       continue;
                     }
                     w.object(skeleton, {{"ranges", [&] {
                                            w.beginArray();
                                            forEachRangeJson(l, [&](const json& r) { w.value(r); });
                                            w.end();
                                          }}});
                   }
                   w.end();
                 }}});
  out << '\n';
}

namespace {
/// The lines above a summary table: "== PATH  host=H  pid=P  rank=R" and the command line, shortened in
/// the middle when long.
void printSummaryHeader(std::ostream& out, const LoadedLog& l) {
  const LogData& d = l.data;
  out << "== " << displayText(l.path);
  for (const char* key : {"host", "pid", "rank"}) {
    std::string v = d.meta(key);
    if (!v.empty()) out << "  " << key << "=" << v;
  }
  out << '\n';
  // A command line of many kilobytes (generated arguments) is shortened in the middle to kMaxCommandShown
  // characters, with its length; JSON keeps it whole (metadata command_line).
  if (const std::string cmd = d.meta("command_line"); !cmd.empty()) {
    const size_t chars = displayWidth(cmd);
    out << "   command: "
        << (chars > kMaxCommandShown ? elideMiddle(cmd, kMaxCommandShown) + fmt::format(" ({} characters)", chars) : cmd)
        << '\n';
  }
}
}  // namespace

/// The line under the summary table of a KCOUNT_GPU_TIME=graphs log: what `graph GPU` is, and how many of the
/// graph launches that ran had a span (a graph instantiated before kcount attached has none).
static std::string graphSpansNote(const Summary& s) {
  const RangeStats r = s.inclusive.empty() ? RangeStats{} : s.inclusive[kRootScope];
  return fmt::format("graph GPU: GPU span of each graph launch, first node's start to last node's end "
                     "(KCOUNT_GPU_TIME=graphs): {} of {} graph launches; other launches have no GPU time",
                     r.graph_gpu_launches, r.graph_launches);
}

void printSummaryTable(std::ostream& out, const LoadedLog& l, const SummaryOptions& opt) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  printSummaryHeader(out, l);
  if (noSnapshotNumbers(l)) {
    // A summary-mode log holds its numbers only in snapshots: a table from none would be rows of zeros.
    out << "no numbers: no complete snapshot in this summary-mode log (see the summary mode line below)\n";
    printFooter(out, l, opt.list_issues);
    return;
  }
  const bool tree = opt.view == SummaryView::kTree;
  // Memory operations get columns only in logs that have them (format 1.1 and later, with copies).
  const bool mem = !s.inclusive.empty() && (s.inclusive[kRootScope].memcpy_count + s.inclusive[kRootScope].memset_count) > 0;
  Table t;
  t.head = {"range", "instances", "launches", "kernels"};
  if (tree) t.head.push_back("self");
  for (const char* h : {"kernels/inst", "GPU time", "GEMM GPU", "other GPU", "CPU time", "launch CPU", "kernels/launch"})
    t.head.push_back(h);
  if (mem)
    for (const char* h : {"mem ops", "mem GPU"}) t.head.push_back(h);
  const bool graph_spans = graphGpuTimeRecorded(d);  // KCOUNT_GPU_TIME=graphs: the graph launches' GPU spans
  if (graph_spans) t.head.push_back("graph GPU");
  if (opt.wide) {
    t.head.push_back("verdict");
    t.head.push_back(tree ? "top kernels (self)" : "top kernels");
  }
  t.right.assign(t.head.size(), true);
  t.right.front() = false;
  if (opt.wide) {
    t.right.back() = false;
    t.right[t.head.size() - 2] = false;  // verdict
  }
  // Without --wide, each range's verdict and top kernels follow the table, one line each, so the table
  // itself stays narrow enough for a terminal.
  std::vector<std::string> notes;
  bool placeholders = false;  // a row marked kPlaceholderMark: explained under the table
  bool dropped_rows = false;  // a row marked kTallyDroppedMark: explained under the table
  bool lost_rows = false;     // a "(lost range P)" row: explained under the table (kLostRangeNote)
  bool unclosed_rows = false; // a row marked kUnclosedMark: explained under the table
  const auto depth = scopeDepths(s);
  RangeStats no_range;
  std::vector<SummaryRow> rows = summaryRows(d, s, no_range);
  // The ranges that matter (SummaryOptions::focus); the root and unknown-range rows always.
  const FocusedScopes focused = focusScopes(d, s, shownScopes(d, s), opt.focus);
  std::erase_if(rows, [&](const SummaryRow& r) { return !r.unresolved && r.id < focused.keep.size() && !focused.keep[r.id]; });
  sortSummaryRows(rows, s, opt);
  // Labels and verdict-line paths shortened together, so that different ranges stay distinguishable.
  std::vector<std::string> names, paths;
  for (const SummaryRow& sr : rows) {
    const bool real = sr.id != kRootScope && !sr.unresolved;
    names.push_back(!real                ? std::string()
                    : d.scopeLost(sr.id) ? lostRangeName(d.logScopeId(sr.id))
                    : tree               ? displayRangeName(d, sr.id)
                                         : displayPath(d, sr.id));
    paths.push_back(rowPath(d, sr.id));
  }
  // --full-names: whole, as kernel names are (a sweep's range names differ in the part elided); else the
  // labels may be narrowed further to fit opt.width (whole names, indents and marks kept).
  NameColumn labels;
  if (!opt.full_names) {
    labels.names = names;
    t.max_width = opt.width;
    names = elideDistinct(names);
    paths = elideDistinct(paths);
  }
  for (size_t row_i = 0; row_i < rows.size(); ++row_i) {
    const SummaryRow& sr = rows[row_i];
    const uint32_t id = sr.id;
    const bool unresolved = sr.unresolved;
    // The root row shows what ran outside every range: its exclusive numbers, in every view.
    const RangeStats& ex = *sr.ex;
    const bool incl = id != kRootScope && !unresolved && opt.view != SummaryView::kInnermost;
    const RangeStats& r = incl ? s.inclusive[id] : ex;
    std::string label;
    const RowMarks marks = id != kRootScope && !unresolved ? rowMarks(s, id) : RowMarks{};
    placeholders = placeholders || marks.placeholder;
    dropped_rows = dropped_rows || marks.tally_dropped;
    unclosed_rows = unclosed_rows || marks.unclosed;
    // A range whose definition was lost: its own instances, CPU time and kernels are not known (its
    // records are in the unknown-range row); its other numbers are those of the ranges under it.
    const bool lost = !unresolved && d.scopeLost(id);
    lost_rows = lost_rows || lost;
    if (id == kRootScope || unresolved)
      labels.prefix.push_back(rowPath(d, id));
    else if (tree)
      labels.prefix.push_back(treeIndent(depth[id]));
    else
      labels.prefix.emplace_back();
    labels.suffix.push_back(rangeLabel("", marks));
    label = labels.prefix.back() + names[row_i] + labels.suffix.back();
    // The unknown-range row holds records of ranges of several lost definitions: their instances and wall
    // times (nested in one another) do not add up to one range's, so they are not shown (as in JSON).
    const uint64_t instances = unresolved ? 0 : ex.instances;
    std::vector<std::string> row{label,
                                 lost || unresolved ? "-" : std::to_string(ex.instances),
                                 std::to_string(r.launches),
                                 std::to_string(r.kernels)};
    if (tree) row.push_back(lost ? "-" : std::to_string(ex.kernels));
    row.push_back(perInstance(r.kernels, instances));
    RangeLayers ly = rangeLayers(d, r, ex.instances, ex.cpu_ns, s.graph_view);
    const bool no_gpu = !gpuTimeRecorded(d);
    // Innermost rows hold a range's own numbers, but its wall time covers its child ranges: a parent whose
    // children issued work gets the verdict of its inclusive numbers, saying so (innermostVerdict()).
    if (!incl && id != kRootScope && !unresolved)
      ly.verdict = innermostVerdict(d, ex, s.inclusive[id], ex.instances, ex.cpu_ns, s.graph_view);
    if (unresolved) ly.verdict.clear();  // no verdict for records whose range is not known
    row.push_back(no_gpu ? "-" : formatDuration(r.gpu_ns));
    row.push_back(no_gpu ? "-" : formatDuration(ly.gemm_gpu_ns));
    row.push_back(no_gpu ? "-" : formatDuration(ly.other_gpu_ns));
    row.push_back(instances ? formatDuration(ex.cpu_ns) : "-");
    row.push_back(formatDuration(r.launch_api_ns));
    row.push_back(r.launches ? fmt::format("{:.2f}", ly.kernels_per_launch) : "-");
    if (mem) {
      row.push_back(std::to_string(r.memcpy_count + r.memset_count));
      row.push_back(formatDuration(r.memcpy_ns + r.memset_ns));
    }
    if (graph_spans) row.push_back(r.graph_gpu_launches ? formatDuration(r.graph_gpu_ns) : "-");
    const std::string verdict = ly.verdict.empty() ? "-" : ly.verdict;
    const std::string top = topKernels(d, opt.view == SummaryView::kInclusive ? r : ex, opt.top_kernels, opt.full_names, true);
    if (opt.wide) {
      row.push_back(verdict);
      row.push_back(top);
    } else if (!ly.verdict.empty() || !top.empty()) {
      std::string note = "  " + paths[row_i] + ": ";
      note += ly.verdict.empty() ? "" : ly.verdict;
      if (!top.empty()) note += (ly.verdict.empty() ? "" : "; ") + std::string("top: ") + top;
      notes.push_back(std::move(note));
    }
    t.rows.push_back(std::move(row));
  }
  if (!opt.full_names) t.fit.push_back(std::move(labels));
  // Kept at any width: the range, launches, kernels, GPU time (docs/usage.md, "Fitting --width"). In a log
  // without GPU times (KCOUNT_GPU_TIME=0) the GPU columns, all '-', go first and kernels per instance, the
  // answer such a log gives, goes last but for self and instances.
  const char* top = tree ? "top kernels (self)" : "top kernels";
  if (gpuTimeRecorded(l.data))
    t.dropOrder({top, "verdict", "kernels/inst", "kernels/launch", "mem GPU", "mem ops", "launch CPU", "CPU time",
                 "other GPU", "GEMM GPU", "self", "instances"});
  else
    t.dropOrder({"GEMM GPU", "other GPU", "GPU time", top, "verdict", "kernels/launch", "mem GPU", "mem ops",
                 "launch CPU", "CPU time", "kernels/inst", "self", "instances"});
  t.print(out);
  if (graph_spans) out << graphSpansNote(s) << '\n';
  if (placeholders) out << kPlaceholderNote << '\n';
  if (dropped_rows) out << tallyDroppedNote(l) << '\n';
  if (lost_rows) out << kLostRangeNote << '\n';
  if (unclosed_rows) out << kUnclosedNote << '\n';
  if (const std::string hidden = focusNote(focused, opt.focus); !hidden.empty()) out << hidden << '\n';
  if (!notes.empty()) {
    out << (tree || opt.view == SummaryView::kInnermost ? "verdicts, top kernels (self):\n" : "verdicts, top kernels:\n");
    for (const auto& n : notes) out << n << '\n';
  }
  printFooter(out, l, opt.list_issues);
}

namespace {
/// `summary --format csv`'s memcpy and memset fields of `r` (the JSON's "memcpy" and "memset" objects):
/// count, bytes, GPU ns of each, comma-separated; six empty fields where `mem` is false (memory operations
/// not recorded: memOpsRecorded()).
std::string memSplitFields(const RangeStats& r, bool mem) {
  if (!mem) return ",,,,,";
  return fmt::format("{},{},{},{},{},{}", r.memcpy_count, r.memcpy_bytes, r.memcpy_ns, r.memset_count, r.memset_bytes,
                     r.memset_ns);
}
}  // namespace

void printSummaryCsv(std::ostream& out, const LoadedLog& l, bool header, const SummaryOptions& opt) {
  // Columns only grow at the end (scripts read them by position too); docs/usage.md lists them.
  if (header)
    out << "log,path,depth,instances,cpu_ns,excl_launches,excl_graph_launches,excl_kernels,excl_gpu_ns,"
           "excl_launch_api_ns,incl_launches,incl_graph_launches,incl_kernels,incl_gpu_ns,incl_launch_api_ns,"
           "kernels_per_instance,top_kernels,excl_gemm_gpu_ns,excl_other_gpu_ns,excl_mem_ops,excl_mem_gpu_ns,"
           "incl_gemm_gpu_ns,incl_other_gpu_ns,incl_mem_ops,incl_mem_gpu_ns,kernels_per_launch,domain,"
           "excl_memcpy_ops,excl_memcpy_bytes,excl_memcpy_gpu_ns,excl_memset_ops,excl_memset_bytes,excl_memset_gpu_ns,"
           "incl_memcpy_ops,incl_memcpy_bytes,incl_memcpy_gpu_ns,incl_memset_ops,incl_memset_bytes,incl_memset_gpu_ns\n";
  if (noSnapshotNumbers(l)) return;  // no numbers, so no row (not rows of zeros); kcount warns on stderr
  const LogData& d = l.data;
  const Summary& s = l.summary;
  const auto depth = scopeDepths(s);
  RangeStats no_range;
  // Fields not measured are empty, never 0: KCOUNT_GPU_TIME=0 leaves every GPU time unknown and records
  // no memory operation (no activity records); a 1.0 log predates memory operation records.
  const bool gpu = gpuTimeRecorded(d);
  const bool mem = memOpsRecorded(d);
  auto gpuField = [&](uint64_t ns) { return gpu ? std::to_string(ns) : std::string(); };
  auto memFields = [&](const RangeStats& r) {
    uint64_t ns = r.memcpy_ns;
    satAdd(ns, r.memset_ns);
    return mem ? fmt::format("{},{}", r.memcpy_count + r.memset_count, ns) : std::string(",");
  };
  // GEMM and other GPU time, memory operations and their GPU time, as the table's columns of that name.
  auto layerFields = [&](const RangeStats& r) {
    const RangeLayers y = rangeLayers(d, r, 0, 0, s.graph_view);
    return fmt::format("{},{},{}", gpuField(y.gemm_gpu_ns), gpuField(y.other_gpu_ns), memFields(r));
  };
  auto perLaunch = [](const RangeStats& r) {
    return r.launches ? fmt::format("{:.3f}", double(r.kernels) / double(r.launches)) : std::string();
  };
  std::vector<SummaryRow> rows = summaryRows(d, s, no_range);
  sortSummaryRows(rows, s, opt);
  for (const SummaryRow& row : rows) {
    const uint32_t id = row.id;
    const bool unresolved = row.unresolved;
    const RangeStats &ex = *row.ex, &in = *row.in, &own = *row.own;
    // CPU time is the wall time of the range's instances: not measured for a row without any ((no range),
    // a placeholder, records of an unknown range), which the table shows as '-'.
    const auto domain = unresolved ? std::nullopt : rangeDomain(d, id);
    const uint64_t instances = unresolved ? 0 : own.instances;  // as in JSON: not one range's instances
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csvField(l.path),
                       csvField(rowPath(d, id)), unresolved ? 1 : depth[id], instances,
                       instances ? std::to_string(own.cpu_ns) : std::string(), ex.launches, ex.graph_launches,
                       ex.kernels, gpuField(ex.gpu_ns), ex.launch_api_ns, in.launches, in.graph_launches, in.kernels,
                       gpuField(in.gpu_ns), in.launch_api_ns,
                       instances ? fmt::format("{:.3f}", double(in.kernels) / double(instances)) : "",
                       csvField(topKernels(d, ex, opt.top_kernels, opt.full_names, false)), layerFields(ex),
                       layerFields(in), perLaunch(in), domain ? csvField(*domain) : std::string(),
                       memSplitFields(ex, mem), memSplitFields(in, mem));
  }
  // The whole process, named as such: every matched launch and kernel, ranges or not. Its depth, instances,
  // CPU time and exclusive fields are empty (it is no range), so sums of a column over a log's ranges stay
  // what the ranges hold.
  const RangeStats all = s.inclusive.empty() ? RangeStats{} : s.inclusive[kRootScope];
  out << fmt::format("{},{},,,,,,,,,{},{},{},{},{},,,,,,,{},{},,,,,,,,{}\n", csvField(l.path), kOverallRow,
                     all.launches, all.graph_launches, all.kernels, gpuField(all.gpu_ns), all.launch_api_ns,
                     layerFields(all), perLaunch(all), memSplitFields(all, mem));
}

namespace {

/// Ranges shown per kernel in the `kcount kernels` table (CSV and JSON list all).
constexpr size_t kTableRanges = 3;

struct KernelRow {
  std::string name;
  uint64_t count = 0;
  uint64_t gpu_ns = 0;
  // Launch configuration of the first kernel record of this name (of the first log that has one): the
  // table's grid and block. shape_known: a log with GPU times gave one (none in a log without kernel records).
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  bool shape_known = false;
  // The distinct grids and blocks of the name's kernel records in every log with GPU times (counted up to
  // DistinctDims::kMaxDistinctDims): more than one, and the table marks grid or block as one of several.
  DistinctDims grids, blocks;
  std::map<std::string, uint64_t> ranges;
};

/// Sorts rows by `sort` (KernelSort's ties included), so the order is total and the same on every run.
void sortKernelRows(std::vector<KernelRow>& rows, KernelSort sort) {
  auto tie = [](const KernelRow& a, const KernelRow& b) {  // GPU total, count (descending), recorded name
    if (a.gpu_ns != b.gpu_ns) return a.gpu_ns > b.gpu_ns;
    if (a.count != b.count) return a.count > b.count;
    return a.name < b.name;
  };
  switch (sort) {
    case KernelSort::kGpuTotal:
      std::sort(rows.begin(), rows.end(), tie);
      break;
    case KernelSort::kCount:  // count, then name: the order before --sort existed
      std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
        return a.count != b.count ? a.count > b.count : a.name < b.name;
      });
      break;
    case KernelSort::kGpuAvg:
      // a.gpu/a.count > b.gpu/b.count, compared exactly as a.gpu*b.count > b.gpu*a.count.
      std::sort(rows.begin(), rows.end(), [&](const KernelRow& a, const KernelRow& b) {
        const unsigned __int128 x = static_cast<unsigned __int128>(a.gpu_ns) * std::max<uint64_t>(b.count, 1);
        const unsigned __int128 y = static_cast<unsigned __int128>(b.gpu_ns) * std::max<uint64_t>(a.count, 1);
        return x != y ? x > y : tie(a, b);
      });
      break;
    case KernelSort::kName: {
      std::unordered_map<std::string, std::string> shown;  // recorded name -> short name, computed once
      for (const auto& r : rows) shown.emplace(r.name, shortKernelNameUncut(r.name));
      std::sort(rows.begin(), rows.end(), [&](const KernelRow& a, const KernelRow& b) {
        const std::string &x = shown.at(a.name), &y = shown.at(b.name);
        return x != y ? x < y : tie(a, b);
      });
      break;
    }
  }
}

/// Kernel rows of `logs` merged by name, in `sort`'s order (kernelSortName()). Range paths are raw
/// (scopePathWithDomains()), or with `display` escaped as text tables, CSV and JSON keys show them (a raw
/// path merges the root with a range named "(no range)", and "a/b" at the top with b inside a). From
/// each log's Summary (its tallies per range and kernel name, the join of summarize() or of the streaming
/// join, and the first shape per name), so a log read by streaming needs no kernel records in memory.
std::vector<KernelRow> collectKernels(const std::vector<const LoadedLog*>& logs, bool display, KernelSort sort) {
  std::unordered_map<std::string, KernelRow> rows;
  for (const LoadedLog* lp : logs) {
    const LoadedLog& l = *lp;
    const LogData& d = l.data;
    const bool gpu = gpuTimeRecorded(d);
    auto add = [&](uint32_t name_id, const KernelTally& t, const std::string& range) {
      std::string name(d.str(name_id));
      auto [it, fresh] = rows.try_emplace(name);
      KernelRow& r = it->second;
      if (fresh) r.name = name;
      // Not known yet: the first log with a shape gives it (a log without GPU times has none: its kernel
      // records' grid and block are 0).
      if (!r.shape_known && gpu) {
        if (auto sh = l.summary.kernel_shapes.find(name_id); sh != l.summary.kernel_shapes.end()) {
          std::copy(std::begin(sh->second.grid), std::end(sh->second.grid), r.grid);
          std::copy(std::begin(sh->second.block), std::end(sh->second.block), r.block);
          r.shape_known = true;
        }
      }
      r.count += t.count;
      r.gpu_ns += t.gpu_ns;
      r.ranges[range] += t.count;
    };
    for (const RangeStats& r : l.summary.exclusive)
      for (const auto& [name_id, t] : r.by_kernel) add(name_id, t, display ? rowPath(d, r.scope_id) : scopePathWithDomains(d, r.scope_id));
    for (const auto& [name_id, t] : l.summary.unmatched_by_kernel) add(name_id, t, std::string(kUnmatchedLabel));
    // The distinct grids and blocks: once per name of the log, for the rows it has (a log without GPU
    // times has no shapes: its records' grid and block are 0).
    if (gpu)
      for (const auto& [name_id, sh] : l.summary.kernel_shapes)
        if (auto it = rows.find(std::string(d.str(name_id))); it != rows.end()) {
          it->second.grids.merge(sh.grids);
          it->second.blocks.merge(sh.blocks);
        }
  }
  std::vector<KernelRow> out;
  out.reserve(rows.size());
  for (auto& [_, r] : rows) out.push_back(std::move(r));
  sortKernelRows(out, sort);
  return out;
}

std::vector<const LoadedLog*> pointers(const std::vector<LoadedLog>& logs) {
  std::vector<const LoadedLog*> v;
  for (const auto& l : logs) v.push_back(&l);
  return v;
}

/// The CSV's `ranges` of a kernel: {"step": 40, "step/up": 8}, JSON text of JSON's "ranges" object with the
/// paths as CSV writes them (escaped: a byte that is no UTF-8 is "\\xHH" text), by count (descending), so
/// that paths holding ", " split exactly.
std::string rangesCsv(const std::map<std::string, uint64_t>& ranges) {
  std::vector<std::pair<std::string, uint64_t>> v(ranges.begin(), ranges.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [path, n] : v) s += fmt::format("{}{}:{}", s.empty() ? "" : ",", jsonString(path), n);
  return "{" + s + "}";
}

/// "step ×40, step/up ×8, +3 more": ranges by count (descending), at most `limit` of them (0: all).
std::string rangesText(const std::map<std::string, uint64_t>& ranges, size_t limit) {
  std::vector<std::pair<std::string, uint64_t>> v(ranges.begin(), ranges.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const size_t n = limit > 0 ? std::min(limit, v.size()) : v.size();
  // The table's names are shortened (limit > 0), together so that different paths stay different; CSV
  // (limit 0) keeps them whole.
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back(v[i].first);
  if (limit > 0) names = elideDistinct(names);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i == 0 ? "" : ", ") + fmt::format("{} ×{}", names[i], v[i].second);
  if (v.size() > n) s += fmt::format(", +{} more", v.size() - n);
  return s;
}

/// One table or CSV row per (kernel, log): with one log, its kernels; with several, each kernel of the
/// merged order once per log that ran it, labelled by log (labelsOf()).
struct LogKernelRow {
  std::string log;  // label; "" with one log
  const LoadedLog* loaded = nullptr;
  KernelRow row;
};

std::vector<LogKernelRow> kernelRowsPerLog(const std::vector<LoadedLog>& logs, KernelSort sort) {
  std::vector<LogKernelRow> out;
  if (logs.size() == 1) {
    for (auto& r : collectKernels(pointers(logs), true, sort)) out.push_back({"", &logs[0], std::move(r)});
    return out;
  }
  const auto labels = labelsOf(logs);
  std::vector<std::unordered_map<std::string, KernelRow>> per(logs.size());
  for (size_t i = 0; i < logs.size(); ++i)
    for (auto& r : collectKernels({&logs[i]}, true, sort)) per[i].emplace(r.name, std::move(r));
  for (const auto& merged : collectKernels(pointers(logs), false, sort))
    for (size_t i = 0; i < logs.size(); ++i)
      if (auto it = per[i].find(merged.name); it != per[i].end()) out.push_back({labels[i], &logs[i], std::move(it->second)});
  return out;
}

}  // namespace

size_t keepKernelsOfRange(LoadedLog& log, std::string_view path) {
  size_t matched = 0;
  auto& ex = log.summary.exclusive;  // indexed by scope id
  for (size_t id = 0; id < ex.size(); ++id) {
    const bool known = id < log.data.scopes.size();
    const std::string p = known ? rowPath(log.data, static_cast<uint32_t>(id)) : std::string();
    const bool in = known && (p == path || (p.size() > path.size() && p.starts_with(path) && p[path.size()] == '/'));
    if (in) ++matched;
    else ex[id].by_kernel.clear();
  }
  log.summary.unmatched_by_kernel.clear();
  return matched;
}

std::vector<std::string> rangePathsNamed(const LoadedLog& log, std::string_view path) {
  std::vector<std::string> out;
  for (uint32_t id = 0; id < log.data.scopes.size(); ++id) {
    std::string p = rowPath(log.data, id);
    if (p == path) return {std::move(p)};
    if (id != kRootScope && log.data.scopeDefined(id) && displayPath(log.data, id, /*domains=*/false) == path)
      out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> rangePathsEndingWith(const LoadedLog& log, std::string_view path, size_t most) {
  std::vector<std::string> out;
  auto endsWith = [&](std::string_view p) {
    return p.size() > path.size() && p.ends_with(path) && p[p.size() - path.size() - 1] == '/';
  };
  for (uint32_t id = 0; id < log.data.scopes.size(); ++id) {
    if (id == kRootScope || !log.data.scopeDefined(id)) continue;
    std::string p = rowPath(log.data, id);
    // "gemm" names step/mylib: gemm too (its path without domains ends with it).
    if (endsWith(p) || endsWith(displayPath(log.data, id, /*domains=*/false))) out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > most) out.resize(most);
  return out;
}

std::string_view kernelSortName(KernelSort sort) {
  switch (sort) {
    case KernelSort::kGpuTotal: return "gpu";
    case KernelSort::kCount: return "count";
    case KernelSort::kGpuAvg: return "avg";
    case KernelSort::kName: return "name";
  }
  return "gpu";
}

std::optional<KernelSort> parseKernelSort(std::string_view word) {
  for (KernelSort k : {KernelSort::kGpuTotal, KernelSort::kCount, KernelSort::kGpuAvg, KernelSort::kName})
    if (kernelSortName(k) == word) return k;
  return std::nullopt;
}

std::string_view acrossMetricName(AcrossMetric metric) {
  switch (metric) {
    case AcrossMetric::kGpuNs: return "gpu";
    case AcrossMetric::kKernels: return "kernels";
    case AcrossMetric::kLaunches: return "launches";
    case AcrossMetric::kCpuNs: return "cpu";
    case AcrossMetric::kLaunchApiNs: return "launch-cpu";
  }
  return "gpu";
}

std::optional<AcrossMetric> parseAcrossMetric(std::string_view word) {
  for (AcrossMetric m : kAcrossMetrics)
    if (acrossMetricName(m) == word) return m;
  return std::nullopt;
}

std::string jsonPathKey(std::string_view shown) {
  std::string raw;
  raw.reserve(shown.size());
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (size_t i = 0; i < shown.size(); ++i) {
    if (shown[i] == '\\' && i + 1 < shown.size() && shown[i + 1] == '\\') {  // "\\": a backslash, kept
      raw += "\\\\";
      ++i;
    } else if (shown[i] == '\\' && i + 3 < shown.size() && shown[i + 1] == 'x' && hex(shown[i + 2]) &&
               hex(shown[i + 3]) && std::strtoul(std::string(shown.substr(i + 2, 2)).c_str(), nullptr, 16) >= 0x80) {
      raw += static_cast<char>(std::strtoul(std::string(shown.substr(i + 2, 2)).c_str(), nullptr, 16));
      i += 3;
    } else {
      raw += shown[i];
    }
  }
  return replaceInvalidUtf8(raw);
}

namespace {

/// Merged GPU times are known only if every log recorded them.
bool allGpuTimes(const std::vector<LoadedLog>& logs) {
  bool all_gpu = true;
  for (const auto& l : logs) all_gpu = all_gpu && gpuTimeRecorded(l.data);
  return all_gpu;
}

/// A kernel's grid or block dimensions as JSON, [x, y, z]; null where `known` is false (no kernel record
/// of that name gave them: KCOUNT_GPU_TIME=0, summary mode).
json dimsJson(const int32_t (&v)[3], bool known) { return known ? json::array({v[0], v[1], v[2]}) : json(nullptr); }

/// How many distinct grids (or blocks) a kernel ran with, as JSON: 1 to 16 (16: 16 or more, counting
/// stops there); null where `known` is false, as dimsJson().
json distinctJson(const DistinctDims& s, bool known) { return known ? json(s.size()) : json(nullptr); }

/// Calls f(json) with each element of kernelsJson()'s "kernels", in `sort`'s order, one at a time.
template <typename F>
void forEachKernelJson(const std::vector<LoadedLog>& logs, KernelSort sort, F&& f) {
  const auto labels = labelsOf(logs);
  std::vector<std::unordered_map<std::string, KernelRow>> per(logs.size());
  if (logs.size() > 1)
    for (size_t i = 0; i < logs.size(); ++i)
      for (auto& r : collectKernels({&logs[i]}, true, sort)) per[i].emplace(r.name, std::move(r));
  auto rangesJson = [](const KernelRow& r) {
    json ranges = json::object();
    for (const auto& [p, n] : r.ranges) ranges[jsonPathKey(p)] = n;
    return ranges;
  };
  const bool all_gpu = allGpuTimes(logs);
  for (const auto& r : collectKernels(pointers(logs), true, sort)) {
    json k{{"name", r.name},
           {"short", shortKernelNameUncut(r.name)},
           {"count", r.count},
           {"gpu_ns", all_gpu ? json(r.gpu_ns) : json(nullptr)},
           {"grid", dimsJson(r.grid, r.shape_known)},
           {"block", dimsJson(r.block, r.shape_known)},
           {"distinct_grids", distinctJson(r.grids, r.shape_known)},
           {"distinct_blocks", distinctJson(r.blocks, r.shape_known)},
           {"ranges", rangesJson(r)},
           {"decoded", decodedJson(decodeKernelName(r.name))}};
    if (logs.size() > 1) {
      json per_log = json::array();
      for (size_t i = 0; i < logs.size(); ++i)
        if (auto it = per[i].find(r.name); it != per[i].end())
          per_log.push_back(json{{"log", labels[i]},
                                 {"path", logs[i].path},
                                 {"count", it->second.count},
                                 {"gpu_time", gpuTimeRecorded(logs[i].data)},
                                 {"gpu_ns", gpuTimeRecorded(logs[i].data) ? json(it->second.gpu_ns) : json(nullptr)},
                                 {"grid", dimsJson(it->second.grid, it->second.shape_known)},
                                 {"block", dimsJson(it->second.block, it->second.shape_known)},
                                 {"distinct_grids", distinctJson(it->second.grids, it->second.shape_known)},
                                 {"distinct_blocks", distinctJson(it->second.blocks, it->second.shape_known)},
                                 {"ranges", rangesJson(it->second)}});
      k["per_log"] = per_log;
    }
    f(std::move(k));
  }
}

}  // namespace

json kernelsJson(const std::vector<LoadedLog>& logs, KernelSort sort) {
  json arr = json::array();
  forEachKernelJson(logs, sort, [&](json k) { arr.push_back(std::move(k)); });
  return json{{"gpu_time", allGpuTimes(logs)}, {"sort", kernelSortName(sort)}, {"kernels", arr}};
}

void writeKernelsJson(std::ostream& out, const std::vector<LoadedLog>& logs, KernelSort sort) {
  JsonWriter w(out);
  w.object(json{{"gpu_time", allGpuTimes(logs)}, {"sort", kernelSortName(sort)}, {"kernels", nullptr}},
           {{"kernels", [&] {
              w.beginArray();
              forEachKernelJson(logs, sort, [&](const json& k) { w.value(k); });
              w.end();
            }}});
  out << '\n';
}

namespace {
/// A grid or block in the kernels table: "2048x1x1", the first record's; "2048x1x1 (1 of 3)" when the
/// name's records ran with 3 different ones, "(1 of 16+)" from 16 on (counting stops there).
std::string dimsText(const int32_t (&v)[3], const DistinctDims& s) {
  std::string t = fmt::format("{}x{}x{}", v[0], v[1], v[2]);
  if (s.size() > 1) t += fmt::format(" (1 of {}{})", s.size(), s.full() ? "+" : "");
  return t;
}
}  // namespace

void printKernelsTable(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names, KernelSort sort,
                       size_t max_width) {
  const bool several = logs.size() > 1;
  Table t;
  t.head = {"kernel",   "count", "GPU total", "GPU avg", "grid",  "block",    "category",  "library",
            "tile",     "cluster", "stages",  "dtype",   "layout", "epilogue", "fused ops", "ranges"};
  t.right = {false, true, true, true, true, true, false, false, false, false, true, false, false, false, false, false};
  if (several) {
    t.head.insert(t.head.begin(), "log");
    t.right.insert(t.right.begin(), false);
  }
  // The kernel names and the ranges' list (cut at its end) fit max_width; --full-names: names whole.
  NameColumn ranges;
  ranges.index = t.head.size() - 1;
  ranges.widest = std::numeric_limits<size_t>::max();
  ranges.cut_end = true;
  if (!full_names) {
    t.elide = {several ? size_t(1) : size_t(0)};
    t.max_width = max_width;
  }
  auto dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  std::vector<std::string> no_gpu;  // labels (or paths) of logs without GPU times
  std::vector<std::string> no_shape;  // ... of logs with GPU times but without grid and block (summary mode)
  bool varies = false;  // a row's kernel ran with several grids or blocks
  const auto rows = kernelRowsPerLog(logs, sort);
  // Without --full-names: the short names uncut (the table shortens its name column in the middle, together,
  // so that different names stay different; a cut at kMaxShortName characters first would make cuBLAS names
  // that differ near their end equal), and different kernels whose short names are equal by their demangled
  // names.
  std::vector<std::string> shown, names;
  for (const LogKernelRow& k : rows) {
    const std::string& name = k.row.name;
    shown.push_back(full_names ? kernelNameFor(name, true, true) : displayText(shortKernelNameUncut(name)));
    names.push_back(name);
  }
  if (!full_names) tellKernelsApart(shown, names, std::numeric_limits<size_t>::max());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [label, l, r] = rows[i];
    const DecodedKernel d = decodeKernelName(r.name);
    std::string ops;
    for (const auto& o : d.ops) ops += (ops.empty() ? "" : " ") + o;
    if (ops.empty() && !d.fused.empty()) ops = "(" + d.fused + ")";  // not split: shown raw
    // KCOUNT_GPU_TIME=0: GPU time, grid and block were not recorded (written as 0): '-'. Summary mode:
    // grid and block are not known (tallies, no kernel records): '-'.
    const bool gpu = gpuTimeRecorded(l->data);
    const std::string who = label.empty() ? l->path : label;
    if (!gpu && std::find(no_gpu.begin(), no_gpu.end(), who) == no_gpu.end()) no_gpu.push_back(who);
    if (gpu && !r.shape_known && std::find(no_shape.begin(), no_shape.end(), who) == no_shape.end())
      no_shape.push_back(who);
    varies = varies || (r.shape_known && (r.grids.size() > 1 || r.blocks.size() > 1));
    std::vector<std::string> row{shown[i], std::to_string(r.count),
                                 gpu ? formatDuration(r.gpu_ns) : "-",
                                 gpu ? formatMeanDuration(r.gpu_ns, r.count) : "-",
                                 r.shape_known ? dimsText(r.grid, r.grids) : "-",
                                 r.shape_known ? dimsText(r.block, r.blocks) : "-",
                                 std::string(categoryName(d.category)), dash(d.library), dash(d.tile), dash(d.cluster),
                                 dash(d.stages), dash(d.dtype), dash(d.layout), dash(d.epilogue), dash(ops),
                                 rangesText(r.ranges, kTableRanges)};
    ranges.names.push_back(row.back());
    if (several) row.insert(row.begin(), label);
    t.rows.push_back(std::move(row));
  }
  if (!full_names) t.fit.push_back(std::move(ranges));
  // Kept at any width: the log, kernel, count, GPU total (docs/usage.md, "Fitting --width"). Columns that are
  // '-' in every row (GPU times of logs without them, grid and block of summary-mode logs) go first.
  const bool any_gpu =
      std::any_of(rows.begin(), rows.end(), [](const LogKernelRow& k) { return gpuTimeRecorded(k.loaded->data); });
  const bool any_shape = std::any_of(rows.begin(), rows.end(), [](const LogKernelRow& k) { return k.row.shape_known; });
  std::vector<std::string> order;
  if (!any_gpu) order.insert(order.end(), {"GPU total", "GPU avg"});
  if (!any_shape) order.insert(order.end(), {"block", "grid"});
  for (const char* h : {"epilogue", "layout", "stages", "cluster", "tile", "dtype", "fused ops", "library", "block",
                        "grid", "ranges", "GPU avg", "category"})
    if (std::find(order.begin(), order.end(), h) == order.end()) order.emplace_back(h);
  t.dropOrder(order);
  t.print(out);
  if (!t.rows.empty())
    out << "-: not in the kernel name (nothing is guessed; docs/kernel-names.md)\n";
  if (varies)
    out << "grid, block 'AxBxC (1 of N)': the first record's, of N different ones the kernel ran with (16+: 16 or "
           "more); --format csv/json: distinct_grids, distinct_blocks\n";
  for (const auto& who : no_gpu)
    out << "GPU time: not recorded in " << who
        << " (KCOUNT_GPU_TIME=0: kernels counted at their launch calls or read from their graph; GPU time, grid "
           "and block are '-')\n";
  for (const auto& who : no_shape)
    out << "grid, block: not recorded in " << who
        << " (KCOUNT_MODE=summary: kernels tallied by name, without their records; grid and block are '-')\n";
}

void printKernelsCsv(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names, KernelSort sort) {
  out << "log,kernel,name,count,gpu_ns,grid_x,grid_y,grid_z,block_x,block_y,block_z,ranges,category,library,tile,"
         "cluster,stages,dtype,layout,epilogue,fused_ops,distinct_grids,distinct_blocks\n";
  for (const auto& [_, l, r] : kernelRowsPerLog(logs, sort)) {
    const DecodedKernel d = decodeKernelName(r.name);
    std::string ops;
    for (const auto& o : d.ops) ops += (ops.empty() ? "" : " ") + o;
    // KCOUNT_GPU_TIME=0: gpu_ns, grid and block empty (not recorded), never 0; summary mode: grid and block.
    const bool gpu = gpuTimeRecorded(l->data);
    auto n = [&](auto v) { return gpu ? std::to_string(v) : std::string(); };
    const bool shape_known = r.shape_known;  // a local, not the structured binding: clang 14 cannot capture one
    auto dim = [shape_known](int32_t v) { return shape_known ? std::to_string(v) : std::string(); };
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csvField(l->path),
                       csvField(kernelNameFor(r.name, full_names, false)), csvField(r.name), r.count, n(r.gpu_ns),
                       dim(r.grid[0]), dim(r.grid[1]), dim(r.grid[2]), dim(r.block[0]), dim(r.block[1]),
                       dim(r.block[2]), csvField(rangesCsv(r.ranges)), categoryName(d.category), csvField(d.library),
                       d.tile, d.cluster, d.stages, csvField(d.dtype), d.layout, csvField(d.epilogue), csvField(ops),
                       dim(int32_t(r.grids.size())), dim(int32_t(r.blocks.size())));
  }
}







std::string noTotalsText(const LogData& d, const Summary& s) {
  if (!d.summary_mode || s.snapshot >= 0 || !d.complete) return {};
  const StatsBody& st = d.stats;
  if (!d.has_stats)
    return "a summary-mode log closed without a complete snapshot and without a stats record, so it cannot tell "
           "whether nothing was recorded or its final snapshot is missing: it holds no numbers";
  if (recordedNothing(d)) return {};
  const KeptOut k = keptOut(d);
  const std::string cut = d.intact() ? finalSnapshotCutText(d, k) : std::string();
  if (!cut.empty())
    return fmt::format("a summary-mode log closed without a complete snapshot, though its stats record counts {}, {} "
                       "and {} tallied: its final snapshot was {}, so it holds no numbers",
                       counted(st.launches, "launch record"), counted(st.kernels, "kernel record"),
                       counted(st.ranges, "range record"), cut);
  return fmt::format("a summary-mode log closed without a complete snapshot, though its stats record counts {}, {} "
                     "and {} tallied: its final snapshot is missing{}, so it holds no numbers",
                     counted(st.launches, "launch record"), counted(st.kernels, "kernel record"),
                     counted(st.ranges, "range record"),
                     k == KeptOut::kAtCap        ? " (kept out at the log's size cap, KCOUNT_MAX_BYTES)"
                     : k == KeptOut::kNotWritten ? " (not written: disk full or unwritable file)"
                                                 : "");
}

namespace {
/// "warning: N <noun>s end before their <start> (<why>); counted with 0 ns of <clock> time\n", or "" when
/// `n` is 0: records whose end time precedes their start time (kernels: CUPTI gave no valid end; ranges:
/// damaged times), which the totals count as 0 ns long.
std::string endsBeforeStartWarning(uint64_t n, std::string_view noun, std::string_view start, std::string_view why,
                                   std::string_view clock) {
  if (n == 0) return {};
  return fmt::format("warning: {} {} before {} {} ({}); counted with 0 ns of {} time\n", counted(n, noun),
                     plural(n, "ends", "end"), plural(n, "its", "their"), start, why, clock);
}

/// The records of `s` whose times or counts no run gives (Summary::kernels_end_all_ones, a kernel longer than
/// the log's span, more than one kernel on a launch that runs one: Summary::launches_many_kernels): one
/// message each, without "warning: " and newline (noteImplausible() records them); none when there are
/// none. `what` gets the verdict's words for them ("1 kernel ending at 2^64 - 1, ...").
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

/// The lines of implausibleWarningLines(), each "warning: ...\n", for check's report.
std::string implausibleWarnings(const Summary& s, std::string& what) {
  std::string out;
  for (const std::string& line : implausibleWarningLines(s, what)) out += "warning: " + line + "\n";
  return out;
}

/// "N bytes follow the end record, from byte B": what a file holds after its log's End record
/// (LogData::after_end_bytes, after_end_offset), for the NOT ONE LOG and TRAILING BYTES verdicts.
std::string afterEndText(const LogData& d) {
  return fmt::format("{} {} the end record, from byte {}", counted(d.after_end_bytes, "byte"),
                     d.after_end_bytes == 1 ? "follows" : "follow", d.after_end_offset);
}

/// Whether `i` is one of the warnings noteImplausible() added to `l` (check prints them itself, before the
/// issues): a warning with no place in the file whose message is one it recorded (LoadedLog::implausible_issues).
bool isImplausibleIssue(const LoadedLog& l, const ReadIssue& i) {
  return i.severity == ReadIssue::Severity::kWarning && i.chunk == -1 && i.offset == ReadIssue::kNoOffset &&
         std::find(l.implausible_issues.begin(), l.implausible_issues.end(), i.message) != l.implausible_issues.end();
}

}  // namespace

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

/// A trace-mode log read whole (End record, one file, nothing damaged): its Stats record counts the launch, kernel and range
/// records the library wrote, less those kept out (not_written_*); the file must hold that many. A
/// difference means records went missing without a trace in the chunks (chunks removed and the rest
/// renumbered, a file put together from pieces). "" when they agree or the check does not apply
/// (summary mode tallies records instead of writing them; rotated parts share one run's Stats). With
/// `fewer_only`, only kinds of which the file holds fewer records than the Stats count are named (the
/// footer's RECORDS MISSING state; more records than counted is a Stats record that undercounts).
namespace {

/// What compareWithStats() finds, in the words of statsShortfall(): every kind whose count differs, and the
/// kinds of which the file holds fewer records than the Stats record counts.
struct StatsComparison {
  std::string differ, fewer;
};

/// statsShortfall()'s comparison for any log whose End record was read and no chunk skipped, intact or not
/// (junk bytes between two chunks leave every chunk read); nullopt where it does not apply.
std::optional<StatsComparison> compareWithStats(const LoadedLog& l) {
  const LogData& d = l.data;
  if (!d.has_stats || !d.complete || d.chunks_skipped > 0 || !d.snapshots.empty() || d.meta("mode") == "summary" || !l.files.empty() ||
      d.rotationPart() != 0 || d.continuedInPart() != 0)
    return std::nullopt;
  const StatsBody& st = d.stats;
  StatsComparison out;
  auto compare = [&](uint64_t taken, uint64_t kept_out, uint64_t read, const char* what) {
    const uint64_t written = taken >= kept_out ? taken - kept_out : 0;
    if (written == read) return;
    const std::string text =
        fmt::format("{} written by the library{}, {} in the file", counted(written, std::string(what) + " record"),
                    kept_out > 0 ? fmt::format(" ({} more kept out)", kept_out) : "", read);
    out.differ += (out.differ.empty() ? "" : "; ") + text;
    if (read < written) out.fewer += (out.fewer.empty() ? "" : "; ") + text;
  };
  // The whole file's records (a segment or time window of the log keeps them: LogData::fileRecords()).
  const LogData::FileRecords file = d.fileRecords();
  compare(st.launches, st.not_written_launches, file.launches, "launch");
  compare(st.kernels, st.not_written_kernels, file.kernels, "kernel");
  compare(st.ranges, st.not_written_ranges, file.ranges, "range");
  return out;
}

/// statsShortfall() of both kinds in one comparison ({} for a log that is not intact).
StatsComparison statsShortfalls(const LoadedLog& l) {
  if (!l.data.intact()) return {};
  return compareWithStats(l).value_or(StatsComparison{});
}

}  // namespace

std::string statsShortfall(const LoadedLog& l, bool fewer_only) {
  const StatsComparison c = statsShortfalls(l);
  return fewer_only ? c.fewer : c.differ;
}

bool everyRecordRead(const LoadedLog& l) {
  const std::optional<StatsComparison> c = compareWithStats(l);
  return c.has_value() && c->fewer.empty();
}

bool numbersUndercount(const LoadedLog& l, std::string_view state) {
  if (logLosses(l).totalsUndercount()) return true;
  if (state == "complete" || state == "complete, lossy" || state == "data after end") return false;
  return !(state == "damaged" && everyRecordRead(l));
}

namespace {
/// The lines of `kcount check` between the metadata and the reader's issues: the records read, the Stats
/// record, the join, the snapshots, and the warnings of reversed times and implausible records, whose
/// text `implausible` receives for the verdict.
void printCheckRecords(std::ostream& out, const LoadedLog& l, std::string& implausible) {
  const LogData& d = l.data;
  const Summary& s = l.summary;
  if (d.chunks_read == 0) {
    out << "records: none (no chunk could be read)\n";
  } else {
    // Launches as summary counts them (kernel and graph launches); memcpy/memset calls, launch records
    // too (kLaunchMemOp), are named apart when the log has any.
    const uint64_t mem_calls = std::min(d.mem_call_records, d.launch_records);
    // Definitions read, not the tables' sizes: a table reaches past gaps (ids whose definitions were lost or
    // kept out at the size cap; one late string with a high id), and id 0 is no record.
    const auto defined = [](size_t table, const std::vector<bool>& missing) {
      return static_cast<uint64_t>(table - 1 - std::count(missing.begin(), missing.end(), true));
    };
    out << fmt::format("records: {}, {}, {}, {}, {}\n", counted(defined(d.strings.size(), d.strings_missing), "string"),
                       counted(defined(d.scopes.size(), d.scopes_missing), "scope"),
                       launchesText(d.launch_records - mem_calls, mem_calls),
                       counted(d.kernel_records, "kernel"), counted(d.range_records, "range"));
    if (d.has_stats) {
      const StatsBody& st = d.stats;
      // The library's counts of records handed to its writer: launch records include memcpy/memset calls,
      // and records kept out at the size cap (KCOUNT_MAX_BYTES) are still counted here (said on the next line).
      out << fmt::format(
          "stats: {} (memcpy/memset calls included), {}, {} taken by the writer; dropped {}, {}, {} refused, {}, "
          "{}; {} with no push\n",
          counted(st.launches, "launch record"), counted(st.kernels, "kernel record"), counted(st.ranges, "range record"),
          counted(st.dropped_host_records, "host record"), counted(st.dropped_activity_records, "activity record"),
          counted(st.activity_buffers_refused, "activity buffer"), counted(st.late_activity_records, "late activity record"),
          counted(st.bytes_dropped, "byte"), counted(st.nvtx_pop_underflow, "NVTX pop"));
      if (const std::string cut = d.meta("records_not_written"); !cut.empty())
        out << "  of these, records " << cut << '\n';
    } else {
      out << "stats: none (the log has no stats record)\n";
    }
    out << selfCostCheckLine(selfCostOf(d));
    if (!gpuTimeRecorded(d))
      out << "GPU time: " << noKernelGpuTimeText(d) << ": kernels counted at their launch calls, a graph launch's "
             "read from its graph"
          << (d.meta("launch_callbacks") == "driver" ? "; driver launch callbacks only (KCOUNT_LAUNCH_CALLBACKS=driver)"
                                                      : "")
          << '\n';
    // A summary-mode log's join counts come from its snapshot: without one, they are not known.
    if (!noSnapshotNumbers(l))
      out << fmt::format("join: {}, {}\n", counted(s.unmatched_kernels, "unmatched kernel"),
                         counted(s.launches_without_kernel, "launch without kernel", "launches without kernel"))
          << joinCaveat(l);
    out << snapshotLine(l);
    out << endsBeforeStartWarning(s.kernels_end_before_start, "kernel record", "start",
                                  "CUPTI gave no valid end time", "GPU");
    out << endsBeforeStartWarning(s.ranges_end_before_begin, "range record", "begin", "damaged times", "CPU");
    out << endsBeforeStartWarning(s.launches_exit_before_enter, "launch record", "enter",
                                  "damaged times: the library takes both from one clock", "launch API");
    out << implausibleWarnings(s, implausible);
    if (s.join_window_evicted > 0)
      out << fmt::format("join window: {} longer than the streaming join holds them; "
                         "the join counts above are approximate\n",
                         s.join_window_evicted == 1 ? std::string("1 launch or kernel waited")
                                                    : fmt::format("{} launches or kernels waited", s.join_window_evicted));
  }
}

/// One state of `kcount check`'s verdict line: its kCheckStates entry (which orders the states), the line
/// it makes alone, and its "also" text after the first.
struct CheckState {
  std::string_view name;
  std::string alone, also;
};

/// The states of an undamaged log, in the order found (printCheck() orders them by kCheckStates): `fewer`
/// and `differ` from its comparison with the Stats record, `alone` a later part read without its earlier
/// ones, `next_missing` a part whose next part is not given. A log without totals raises `rc` to 1.
std::vector<CheckState> checkStates(const LoadedLog& l, const PartsGiven& given, const std::string& missing,
                                    const std::string& shortfall, const LogLosses& loss, const std::string& implausible,
                                    bool alone, bool next_missing, int& rc) {
  const LogData& d = l.data;
  const bool part = d.isContinuedPart();
  std::vector<CheckState> states;
  const std::string lossy_note = "also LOSSY: see DROPS";
  if (!missing.empty())
    states.push_back({"RECORDS MISSING",
                      "RECORDS MISSING: the file's records do not add up to its Stats record's counts (see above); "
                      "what it holds is read",
                      "also RECORDS MISSING (see above)"});
  else if (!shortfall.empty())
    states.push_back({"EXTRA RECORDS",
                      "EXTRA RECORDS: the file holds more records than the library counted in its Stats record (see "
                      "above); every record it holds is read",
                      "also EXTRA RECORDS: more records than the library counted (see above)"});
  if (d.chunks_out_of_order > 0) {
    const std::string what = counted(d.chunks_out_of_order, "chunk is", "chunks are") + " out of write order";
    states.push_back({"REORDERED", fmt::format("REORDERED: {} (see above); every record is read, in write order", what),
                      fmt::format("also REORDERED: {} (see above)", what)});
  }
  if (!implausible.empty())
    states.push_back({"IMPLAUSIBLE",
                      fmt::format("IMPLAUSIBLE: {} (see above): times or counts no run gives, from damage or "
                                  "crafting; the totals that include them are wrong",
                                  implausible),
                      fmt::format("also IMPLAUSIBLE: {} (see above)", implausible)});
  if (alone) {
    const std::string text = laterPartText(d, given.next, given.missing_earlier);
    states.push_back({"PARTIAL", "PARTIAL: " + text, "also PARTIAL: " + text});
  } else if (next_missing) {
    const std::string text = fmt::format(
        "rotated part {}, continued in part {} (not given){}: the run goes on in a part not given (give every part "
        "to read the run)",
        d.rotationPart(), d.continuedInPart(),
        d.rotationPart() == 1  ? std::string("; part 0 given too")
        : d.rotationPart() > 1 ? fmt::format("; parts 0..{} given too", d.rotationPart() - 1)
                               : std::string());
    states.push_back({"PARTIAL", "PARTIAL: " + text, "also PARTIAL: " + text});
  }
  if (d.dataAfterEnd() && d.after_end_is_log)
    states.push_back({"NOT ONE LOG",
                      "NOT ONE LOG: " + afterEndText(d) +
                          " (a second log starts there: files concatenated); only the first log is read",
                      "also NOT ONE LOG: " + afterEndText(d) + " (a second log starts there)"});
  else if (d.dataAfterEnd())
    states.push_back({"TRAILING BYTES",
                      "TRAILING BYTES: " + afterEndText(d) + ", not a log; the log before them is read whole",
                      "also TRAILING BYTES: " + afterEndText(d) + ", not a log"});
  if (!d.complete && !part)
    states.push_back({"INCOMPLETE", "INCOMPLETE (no end record)", "also INCOMPLETE (no end record)"});
  if (const std::string why = noTotalsText(d, l.summary); !why.empty()) {
    // Whole and undamaged, but the run's numbers are not in it.
    rc = std::max(rc, 1);
    states.push_back({"NO TOTALS", "NO TOTALS: " + why, "also NO TOTALS: " + why});
  }
  if (loss.any())
    states.push_back({"COMPLETE BUT LOSSY",
                      loss.totalsUndercount()
                          ? "COMPLETE BUT LOSSY (not damaged; records or bytes dropped while recording: see DROPS)"
                          : "COMPLETE BUT LOSSY (not damaged; events not tallied in their row at the key cap, still "
                            "in the totals: see DROPS)",
                      lossy_note});
  return states;
}
}  // namespace

int printCheck(std::ostream& out, const LoadedLog& l, PartsGiven given) {
  const LogData& d = l.data;
  std::string implausible;  // the implausible records, for the IMPLAUSIBLE verdict
  out << "== " << displayText(l.path) << '\n';
  if (d.not_a_log) {
    // No header: no version, records or join to report.
    for (const auto& i : d.issues) out << fmt::format("{}: {}\n", severityName(i.severity), i.message);
    out << "NOT A KCOUNT LOG\n";
    return 2;
  }
  if (d.unsupported_version) {
    out << fmt::format("format version {}.{}, {}\n", d.major, d.minor, counted(d.file_bytes, "byte"));
    for (const auto& i : d.issues) out << fmt::format("{}: {}\n", severityName(i.severity), i.message);
    out << "UNSUPPORTED: " << unsupportedVersionText(d) << '\n';
    return 2;
  }
  // No file header read (major 0: the file ends inside it, or could not be read): no version to name.
  const std::string version =
      d.major != 0 ? fmt::format("format version {}.{}", d.major, d.minor)
      : d.truncated && d.file_bytes < sizeof(FileHeader)
          ? fmt::format("file header cut short (a header is {} bytes): no format version", sizeof(FileHeader))
          : std::string("no file header read: no format version");
  out << fmt::format("{}, {}, {} read ({} packed), {} skipped\n", version, counted(d.file_bytes, "byte"),
                     counted(d.chunks_read, "chunk"), d.packed_chunks, counted(d.chunks_skipped, "chunk"));
  for (const auto& [k, v] : d.metadata) out << "  " << k << " = " << v << '\n';
  printCheckRecords(out, l, implausible);
  for (const auto& i : d.issues)
    if (!isImplausibleIssue(l, i))
      out << fmt::format("{}: {}\n", severityName(i.severity), i.message);  // printed above
  const StatsComparison stats = statsShortfalls(l);                         // one comparison with the Stats record
  const std::string& shortfall = stats.differ;                              // every kind whose count differs
  const std::string& missing = stats.fewer;                                 // the kinds of which the file holds fewer
  if (!shortfall.empty())
    out << "warning: the log's Stats record does not match its records: " << shortfall
        << (missing.empty() ? " (more records than the library counted: a file put together from pieces, or a "
                              "Stats record that undercounts)\n"
                            : " (records missing without a trace in the chunks, or a file put together from pieces)\n");
  const LogLosses loss = logLosses(l);
  if (loss.any()) out << "DROPS: " << loss.text() << '\n';
  int rc = 0;
  // A non-last file of a rotated log is complete as a part; the run is whole only with the part it
  // continues in, and with its earlier parts for a part above 0.
  const bool part = d.isContinuedPart();
  const bool alone = d.isLaterPartAlone() && !given.earlier;
  const bool next_missing = part && !given.next;
  if (!d.intact()) rc = 2;
  else if ((!d.complete && !part) || loss.any() || d.dataAfterEnd() || alone || next_missing || !shortfall.empty() ||
           d.chunks_out_of_order > 0 || !implausible.empty())
    rc = 1;
  // The verdict: every state that applies, none hiding another. The first in kCheckStates' order leads the line as
  // it would alone; each other follows it as "; also STATE: ..." (LOSSY: "; also LOSSY: see DROPS").
  if (rc == 2) {
    out << "DAMAGED\n";  // the reader's errors above say what is known; the rest follows from them
    return rc;
  }
  std::vector<CheckState> states = checkStates(l, given, missing, shortfall, loss, implausible, alone, next_missing, rc);
  if (states.empty()) {
    if (part)
      out << fmt::format("OK: rotated part {}, continued in part {} (given too; the log's End record is in its last part)\n",
                         d.rotationPart(), d.continuedInPart());
    else if (d.rotationPart() > 0)
      out << fmt::format("OK: rotated part {}, the last (parts 0..{} given too)\n", d.rotationPart(),
                         d.rotationPart() - 1);
    else
      out << "OK\n";
    return rc;
  }
  auto rank = [](const CheckState& x) {
    return std::find(std::begin(kCheckStates), std::end(kCheckStates), x.name) - std::begin(kCheckStates);
  };
  std::stable_sort(states.begin(), states.end(), [&](const CheckState& x, const CheckState& y) { return rank(x) < rank(y); });
  out << states.front().alone;
  for (size_t i = 1; i < states.size(); ++i) out << "; " << states[i].also;
  out << '\n';
  return rc;
}

}  // namespace kc
