// `kcount report`: one self-contained HTML page (inline CSS and JS, no network access when opened) with
// the range tree as an icicle chart sized by GPU time, kernel count or launch count, a ranges table, a
// kernels table with the decoded name fields (tools/kernel_decode.h), and for two logs a side-by-side
// view (ranges matched by path, kernels by decoded identity). The page is tools/report_page.html,
// compiled into the tool; the data is embedded as JSON. Pure functions of their inputs.
#pragma once

#include <iosfwd>
#include <vector>

#include <nlohmann/json.hpp>
#include "tools/loaded_log.h"


namespace kc {

/// The data the page renders: {"generator": "kcount VERSION", "runs": [RUN...]}, one RUN per log, in
/// argument order:
///   {"label": file name without .kcount, with as many of its folders as tell logs of the same file
///             name apart ("run1/kcount-h-7"), " (pid P)" if that is not enough, "path", "host", "pid", "command", "gpu": name of GPU 0,
///    "complete": bool, "state": logState(), "state_line": logStateWarning() ("" if clean), "totals": {"launches", "kernels", "unmatched_kernels", "gpu_ns"},
///    "ranges": [{"id": scope id, "parent": parent scope id or null for the root, "name", "path" (a range
///                named "(no range)", and its path at the top level, as "\(no range)": the root's are "(no range)"),
///                "depth", "instances", "cpu_ns" (null for the root), "incl": COUNTS, "excl": COUNTS,
///                "verdict": the range's verdict line as `kcount summary` prints it (rangeLayers() of its
///                inclusive numbers), null where summary gives none (the root, a log without GPU time)}],  depth-first, root first;
///               only ranges with an instance, a launch or a kernel; the root's incl is the whole process,
///               its excl the "(no range)" launches
///    "kernels": [{"name": as recorded, "short": shortKernelNameUncut() (never cut), "demangled", "count", "gpu_ns", "grid": [x,y,z],
///                 "block": [x,y,z] (of the first record), "ranges": {path: count}, "decoded": decodedJson()}]}
/// For two logs, also "diff": {"verdicts": answerVerdictsJson(A, B)} (tools/diff.h): the verdicts `kcount
/// diff A B` prints first (most repeated ranges, at most kMaxAnswerVerdicts, then the whole run), each
/// {"unit", "heading", "lines", "regrouped"}; the page shows them before its tables.
/// COUNTS = {"launches", "kernels", "gpu_ns", "launch_api_ns"}. Times in ns. Kernels whose correlation id
/// matches no launch are listed with range "(unmatched)".
nlohmann::json htmlReportData(const std::vector<LoadedLog>& logs);

/// Writes the page with htmlReportData(logs) embedded. Every "<" in the embedded JSON is written as
/// \u003c, so no kernel or range name can end the script element.
void writeHtmlReport(std::ostream& out, const std::vector<LoadedLog>& logs);

}  // namespace kc
