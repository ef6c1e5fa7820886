#include "tools/check_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "collector/counted.h"
#include "collector/log_format.h"
#include "tools/loaded_log_internal.h"
#include "tools/log_state.h"
#include "tools/log_state_internal.h"
#include "tools/self_cost.h"
#include "tools/text.h"

namespace kc {

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

}  // namespace

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
    // A summary-mode log holds tallies in snapshots, not one record per launch: its 0 launches is said so.
    out << fmt::format("records: {}, {}, {}, {}, {}{}\n", counted(defined(d.strings.size(), d.strings_missing), "string"),
                       counted(defined(d.scopes.size(), d.scopes_missing), "scope"),
                       launchesText(d.launch_records - mem_calls, mem_calls),
                       counted(d.kernel_records, "kernel"), counted(d.range_records, "range"),
                       d.summary_mode ? fmt::format(" (summary mode: tallies in {}, no record per launch, kernel or range)",
                                                    counted(d.snapshots.size(), "snapshot"))
                                      : std::string());
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
    out << selfCostCheckLine(selfCostOf(d)) << rangeCostCheckLines(d);
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
