// `kcount diff A B`: two runs (or two sets of logs) compared overall and per range (matched by path):
// launches, kernels, GPU time, CPU time with their change; kernels matched by decoded identity
// (tools/kernel_decode.h); verdict lines per compared unit. Pure functions of the loaded logs.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/diff_answer.h"
#include "tools/loaded_log.h"

namespace kc {

/// The DiffSide key and table label of the whole run.
inline constexpr const char* kOverall = "(overall)";

/// The change B - A of a count or ns sum, as diff's JSON, CSV and text give it: std::nullopt (JSON null,
/// an empty CSV field, kUnknownChange in text) when either sum is held at 2^64 - 1 (kSaturated: its true
/// value is larger, so the change is not known) or when the change lies beyond ±(2^63 - 1) (292 years of
/// ns: only implausible records give one; it would wrap as a signed 64-bit number). Pure.
std::optional<int64_t> sumChange(uint64_t a, uint64_t b) noexcept;
/// The text's change where sumChange() gives none.
inline constexpr std::string_view kUnknownChange = "unknown";

/// One kernel identity within a compared unit: how many ran and for how long, summed over a side's logs.
struct DiffKernel {
  std::string name;      // first recorded name seen for this identity
  std::string category;  // categoryName() of the decoded name
  std::string library;
  std::vector<std::string> ops;  // Triton (Inductor) fused ops
  std::string short_name;  // shortKernelName(): cut at kMaxShortName characters, for text
  std::string short_full;  // shortKernelNameUncut(): JSON's "short" (machine-readable outputs are never cut)
  uint64_t count = 0;
  uint64_t gpu_ns = 0;
};

/// Numbers of one range path (inclusive; "(no range)" exclusive; "(overall)" the whole process) on one
/// side, summed over that side's logs.
struct DiffUnit {
  bool present = false;
  uint64_t instances = 0, cpu_ns = 0, launches = 0, kernels = 0, gpu_ns = 0, launch_api_ns = 0;
  /// Memory operations (memcpy + memset run on the GPU) and their GPU time, apart from the kernels' gpu_ns,
  /// as summary's "mem ops" and "mem GPU".
  uint64_t mem_ops = 0, mem_gpu_ns = 0;
  std::map<std::string, DiffKernel> by_identity;
  std::vector<std::string> children;  // names of child ranges (sorted)
  bool gpu_time = true;  // false: a log of this side has no GPU times (gpuTimeRecorded()); gpu_ns is not known
  bool graph_spans = false;  // a log of this side has graph launches' GPU spans (KCOUNT_GPU_TIME=graphs)
  bool mem_ops_recorded = true;  // false: a log of this side did not record memory operations (memOpsRecorded())
};

/// A side of the diff: "(overall)" and every range path of its logs.
struct DiffSide {
  // Paths are keys as text tables show them (displayPath(): a '/' inside a name is "\/", so a range named
  // "a/b" and range b inside range a are two paths; the JSON's "path" and "unit" are these keys).
  std::vector<std::string> paths;        // in depth-first order of the first log that has them
  std::map<std::string, DiffUnit> units; // path -> numbers; "(overall)" included
  // Keys hold each range's NVTX domain ("step/mylib: gemm", displayRangeName()): ranges of one path in two
  // domains are two units.
  std::map<std::string, std::string> names;  // path -> the range's own name (raw; "mylib: gemm"), for verdict text
  std::map<std::string, std::string> domains;  // path -> its range's NVTX domain; absent: the default domain
  std::map<std::string, std::string> shown;  // path -> path as text tables show it (the path itself)
  std::map<std::string, std::string> parents;  // path -> its parent's path; "(overall)" for a top-level range
  bool gpu_time = true;  // every log of this side recorded GPU times (gpuTimeRecorded())
  bool graph_spans = false;  // a log of this side has graph launches' GPU spans (KCOUNT_GPU_TIME=graphs), not compared
  bool mem_ops_recorded = true;  // every log of this side recorded memory operations (memOpsRecorded())
  uint64_t launch_timing_sample = 1;  // largest launchTimingSample() of its logs: > 1, launch_api_ns are estimates
};

DiffSide diffSide(const std::vector<LoadedLog>& logs);

/// Each log's logState(), in order. The functions below that take `states` (one per log of the side) use
/// them instead of computing each log's state again, so that a command computes them once.
std::vector<std::string> logStates(const std::vector<LoadedLog>& logs);

/// A side's state in the words of summary's JSON "state" (logState()): "complete" when every log of the side
/// is complete, else the state of the log that is furthest from complete, in the order logState() tests
/// them ("damaged", "data after end", "rotated part", "incomplete", "no totals", "records missing",
/// "complete, lossy"). Diff JSON's "state", CSV's state_a and state_b.
std::string sideState(const std::vector<LoadedLog>& logs);
/// Every state among a side's logs (logState()), each once, in kLogStates' order (furthest from complete
/// first, "complete" last): a lossy log beside one with data after its end gives {"data after end",
/// "complete, lossy"}. Diff JSON's "states".
std::vector<std::string> sideStates(const std::vector<LoadedLog>& logs);

/// The text's line under its header for a side that is not complete (sideState()), "" otherwise: "state of
/// B: records missing (LOG: log RECORDS MISSING: ...; its numbers undercount); B's numbers undercount its
/// run, so its changes (B - A) are not the runs' difference alone"; each state among its logs but
/// "complete" (sideStates()) joined by " and ", each log that is not complete named with its state line
/// (logStateWarning()), in the order of the states named. The consequence: the numbers undercount when any log's do
/// (numbersUndercount()), else they are those up to the end record (data after end), or hold every record (a damaged
/// log whose damage took none). `side` names the side ("A"). No trailing newline.
std::string sideStateLine(const std::vector<LoadedLog>& logs, const std::string& side);
/// The same with each log's state given (`log_states[i]`: logState() of logs[i]).
std::string sideStateLine(const std::vector<LoadedLog>& logs, const std::vector<std::string>& log_states,
                          const std::string& side);

/// Longest verdict line, in display characters (UTF-8 characters): kernel names beyond it are counted
/// ("and N more"), not listed. JSON's "kernels" lists every kernel whole.
inline constexpr size_t kMaxVerdictLine = 300;
/// Most kernel or range names one list of a verdict line names before "and N more".
inline constexpr size_t kMaxNamesListed = 3;

/// Verdict lines for one unit present on both sides (rules: docs/usage.md, "kcount diff"). `unit` names
/// it in the text ("step", or "the whole run"). Kernels named in a line are listed largest GPU time first,
/// each shortened to kMaxNameColumn characters; no line is longer than kMaxVerdictLine characters unless
/// the range name in it alone makes it so.
std::vector<std::string> diffVerdicts(const DiffUnit& a, const DiffUnit& b, const std::string& unit);

/// Where two runs did different work, so that their whole-run totals are not comparable: matched ranges
/// whose instance counts differ (only the outermost such range of a subtree: its parent's counts are equal
/// or it is top-level), and top-level ranges of one side only. Paths are DiffSide keys, in A's then B's
/// depth-first order.
struct WorkDiff {
  struct Instances {
    std::string path;
    uint64_t a = 0, b = 0;
  };
  std::vector<Instances> instances;
  std::vector<std::string> only_a, only_b;
  bool any() const { return !instances.empty() || !only_a.empty() || !only_b.empty(); }
};
WorkDiff workDiff(const DiffSide& a, const DiffSide& b);
/// The whole-run verdict's first line when workDiff() finds a difference ("whole-run totals not
/// comparable: the runs did different work (instances differ: step (20 in A, 30 in B); ...)"), at most
/// kMaxVerdictLine characters; "" when it finds none.
std::string workDiffLine(const WorkDiff& w);

/// Units that get verdict lines, in the order they are printed: ranges present on both sides with kernels
/// on both, most instances first (the fewer of A's and B's: the repeated steady-state range, `step`, before
/// warm-up and setup), depth-first order among equal counts; then the whole run ("(overall)").
std::vector<std::string> verdictOrder(const DiffSide& a, const DiffSide& b);

/// For a side of several logs: "" when at most one distinct program ran in them, else the warning that
/// they are pooled, naming each command line (metadata command_line, cut to 100 characters) with its logs
/// (at most kMaxNamesListed each): "the 3 logs of A come from 2 different command lines, summed here as
/// one run: `python3 a.py` (r0.kcount, r1.kcount); `python3 b.py` (x.kcount)". Command lines that differ
/// only in a rank argument of torch.distributed.launch (`--local_rank=N`, `--local-rank=N`,
/// `--local_rank N`) are one program; logs without command_line are left out of the comparison. `side`
/// names the side ("A"). No trailing newline.
std::string mixedCommandLines(const std::vector<LoadedLog>& logs, const std::string& side);

/// {"a": [paths], "b": [paths], "overall": {..., "work_differs"}, "steady_state", "ranges": [{"path", "in",
///  "a": {...}|null, "b": ..., "change": {...}|null, "children_a", "children_b", "nesting_differs"}],
///  "kernels": {"same", "only_a", "only_b"}, "verdicts": [{"unit", "lines": [...]}] in verdictOrder()}.
///  Schema: docs/usage.md. printDiff() writes the same as text: the kernels section one row per kernel,
///  largest GPU time first. Pure functions of the logs (thread-safe for distinct outputs).
nlohmann::json diffJson(const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b);
/// The verdicts the default text diff shows (its answer: the kMaxAnswerVerdicts most repeated ranges, then
/// the whole run), in its order: elements of diffJson()'s "verdicts" ({"unit", "lines", "regrouped"}) with
/// "heading", the text's heading line without its colon ("verdict for step (most repeated range: 20
/// instances in A, 20 in B)", "verdict for the whole run"; the path whole). Lines as recorded, not escaped.
nlohmann::json answerVerdictsJson(const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b);
/// Writes `kcount diff --format json`'s document, diffJson(a, b), to `out`, followed by a newline: the text
/// dumpJson() writes for it, written an element at a time (JsonWriter) for its lists that grow with the
/// logs ("ranges", "verdicts", the kernels' "same", "only_a", "only_b"), so that memory does not grow with
/// the text. Write errors are left in `out`'s state. Thread-safe for distinct outputs.
void writeDiffJson(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b);
/// The same with each log's state given (logStates() of `a` and of `b`).
void writeDiffJson(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b,
                   const std::vector<std::string>& states_a, const std::vector<std::string>& states_b);
/// Writes `kcount diff --format csv` to `out` (columns: docs/usage.md): a header, then one row per unit as
/// the text table has them ("(overall)" first, then the ranges in its order; `kind` "range"), then one row
/// per kernel identity of the whole run as the kernels section has them (largest GPU time first; `kind`
/// "kernel"). Counts, times in ns and changes (B - A) as JSON gives them, a null as an empty field; text
/// quoted by csvField() (writeCsvRow()). Write errors are left in `out`'s state. Thread-safe for distinct
/// outputs.
void writeDiffCsv(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b);
/// The same with each log's state given (logStates() of `a` and of `b`).
void writeDiffCsv(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b,
                  const std::vector<std::string>& states_a, const std::vector<std::string>& states_b);
/// The diff as text (docs/usage.md). Its range and kernel tables are narrowed (their range paths and
/// kernel names) so that their lines fit `max_width` display columns when they can (fitTable(); 0: no limit).
/// With `full_names` (--full-names) the range paths are whole and the kernels section names each kernel by
/// its full demangled name, neither shortened nor narrowed; verdict lines keep their bound (kMaxVerdictLine).
void printDiff(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b,
               size_t max_width = 0, bool full_names = false);
/// The same with each log's state given (logStates() of `a` and of `b`). These two print every section
/// (`kcount diff --all`).
void printDiff(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b,
               const std::vector<std::string>& states_a, const std::vector<std::string>& states_b, size_t max_width = 0,
               bool full_names = false);
/// The diff as text in `layout` (tools/diff_answer.h): by default the answer first (the verdicts of the most
/// repeated ranges and of the whole run, then the kLargestChanges ranges and kernels whose GPU time changed
/// most, then what is not shown); with layout.all every section (the range table, nesting, kernels, then
/// every verdict); with layout.range that range's verdict and the table of its subtree. Verdict lines are
/// wrapped at `max_width` (kVerdictWrap when 0) with a hanging indent; a range whose children differ between
/// A and B gets a line comparing them as one (tools/diff_nesting.h). Throws std::invalid_argument, before
/// writing anything, when layout.range is no range path of A or B. Thread-safe for distinct outputs.
void printDiff(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b,
               const std::vector<std::string>& states_a, const std::vector<std::string>& states_b, size_t max_width,
               bool full_names, const DiffLayout& layout);

}  // namespace kc
