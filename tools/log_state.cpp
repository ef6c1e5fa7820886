#include "tools/log_state.h"

#include <charconv>
#include <cstdio>

#include <fmt/format.h>

#include <algorithm>

#include "collector/aggregator.h"
#include "collector/counted.h"
#include "collector/parse.h"
#include "tools/log_state_internal.h"
#include "tools/text.h"

namespace kc {

const char* severityName(ReadIssue::Severity s) {
  return s == ReadIssue::Severity::kError ? "error" : "warning";
}

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

namespace {

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

std::string laterPartText(const LogData& d, bool next_part_given, const std::vector<uint32_t>& missing) {
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

std::string statsShortfall(const LoadedLog& l, bool fewer_only = false);  // below

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

}  // namespace

std::string logStateLine(const LoadedLog& l, std::string_view errors_at) {
  std::string line = logStateOnly(l, errors_at);
  if (const std::string sig = l.data.meta(kMetaEndSignal); !sig.empty())
    line += fmt::format("; the process ended by {}: ranges still open then end at the signal", sig);
  return line;
}

std::string joinCaveat(const LoadedLog& l) {
  const Summary& s = l.summary;
  if ((l.data.intact() && l.data.complete) || (s.launches_without_kernel == 0 && s.unmatched_kernels == 0)) return {};
  return fmt::format("join: the log was not read whole ({}): launches without kernel and unmatched kernels may "
                     "have their kernel or launch in the part not read, not missing from the run\n",
                     !l.data.intact() ? "damaged or cut short" : "no end record");
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

std::string unsupportedVersionText(const LogData& d) {
  return fmt::format("format {}.{} is not one this kcount reads ({}.x): read it with the kcount that wrote it, or "
                     "a later one",
                     d.major, d.minor, kLogMajor);
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

}  // namespace

StatsComparison statsShortfalls(const LoadedLog& l) {
  if (!l.data.intact()) return {};
  return compareWithStats(l).value_or(StatsComparison{});
}

/// A trace-mode log read whole (End record, one file, nothing damaged): its Stats record counts the launch, kernel and range
/// records the library wrote, less those kept out (not_written_*); the file must hold that many. A
/// difference means records went missing without a trace in the chunks (chunks removed and the rest
/// renumbered, a file put together from pieces). "" when they agree or the check does not apply
/// (summary mode tallies records instead of writing them; rotated parts share one run's Stats). With
/// `fewer_only`, only kinds of which the file holds fewer records than the Stats count are named (the
/// footer's RECORDS MISSING state; more records than counted is a Stats record that undercounts).
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

}  // namespace kc
