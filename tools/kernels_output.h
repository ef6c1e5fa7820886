// `kcount kernels`'s outputs: one row per kernel name over one or several logs (text table, CSV, JSON), in
// a KernelSort order, and the --range path's choice of a range (keepKernelsOfRange(), rangePathsNamed()).
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/loaded_log.h"

namespace kc {

/// The stderr warning of `kcount kernels` for a log that lists no kernel (no kernel tally by name, so an
/// empty table), with the reason the log gives: "no kernels: no kernel launch was recorded (the log holds 4
/// range records)", "nothing was recorded (...)", "its N launches are graph launches, whose kernels are not
/// known with KCOUNT_GPU_TIME=0 ...", "... were made during stream capture ...", "... their kernel activity
/// records were dropped while recording ...", "... the log has no end record ...", "N kernels counted in the
/// totals, none tallied by name ...", a summary-mode log's "no kernel launch was tallied ..."; with `range`
/// (the --range path, kernels already kept to it by keepKernelsOfRange()) "none ran in range P ...". "" for
/// a log with kernels to list, and for one without numbers (noTotalsWarning() says that). No trailing newline.
std::string noKernelsWarning(const LoadedLog& l, std::string_view range = {});

/// Keeps in `log`'s summary only the kernels of range `path` and of the ranges nested in it, for
/// `kcount kernels --range PATH`: the per-kernel tallies (RangeStats::by_kernel) of every other range and
/// the unmatched kernels are cleared, so the kernels commands count, time and average a kernel over that
/// range alone (not over warm-up or other ranges). `path` is a range's path as the summary table and CSV
/// show it ("step/mlp"; a '/' inside a name is written "\/"). Returns how many ranges matched (0: no such
/// range in the log). Changes `log` in place; not thread-safe on it.
size_t keepKernelsOfRange(LoadedLog& log, std::string_view path);

/// The ranges of `log` that `path` names, as paths that keepKernelsOfRange() takes (the summary table's,
/// sorted, without repeats): `path` itself if a range has that path as the table shows it (with its NVTX
/// domains, "step/mylib: gemm"), else the paths of the ranges whose path without domains is `path` ("step/gemm"
/// for step/mylib: gemm). More than one: the ranges of that path are in different domains and `path` does
/// not say which; none: no range has that path. Pure; thread-safe on a log not being changed.
std::vector<std::string> rangePathsNamed(const LoadedLog& log, std::string_view path);

/// Range paths of `log` (as the summary table shows them) that end with "/" + `path`: what a user who gave
/// a range's own name ("gate") instead of its path ("step/gate") meant. Sorted, at most `most` of them.
/// Pure; thread-safe on a log not being changed.
std::vector<std::string> rangePathsEndingWith(const LoadedLog& log, std::string_view path, size_t most);

/// Order of `kcount kernels` rows (--sort). kGpuTotal: GPU total time, largest first (where GPU time goes;
/// the default). kCount: launches, most first. kGpuAvg: GPU time per launch, largest first. kName: the
/// short kernel name (shortKernelNameUncut()), A to Z by byte. Ties: for kCount the recorded name (the
/// order of kcount before --sort); otherwise GPU total, then count (descending), then the recorded name.
/// Logs without GPU times (KCOUNT_GPU_TIME=0) have 0 there, so kGpuTotal and kGpuAvg become count order.
enum class KernelSort { kGpuTotal, kCount, kGpuAvg, kName };

/// "gpu", "count", "avg", "name": the --sort words.
std::string_view kernelSortName(KernelSort sort);
/// The KernelSort of a --sort word; std::nullopt for any other text.
std::optional<KernelSort> parseKernelSort(std::string_view word);

/// Kernels merged by name over all logs: {"gpu_time", "sort": kernelSortName(sort),
/// "kernels":[{"name","short","count","gpu_ns","grid","block","ranges":{path:n}}]}, in `sort`'s order. Kernels
/// with no matching launch count under "(unmatched)". "grid" and "block": [x, y, z] of the name's first kernel
/// record (the table's), null where not recorded. Times in ns.
nlohmann::json kernelsJson(const std::vector<LoadedLog>& logs, KernelSort sort = KernelSort::kGpuTotal);
/// Writes `kcount kernels --format json`'s document, kernelsJson(logs, sort), to `out`, followed by a
/// newline: the text dumpJson() writes for it, written a kernel at a time (JsonWriter), so that memory
/// does not grow with the text. Write errors are left in `out`'s state. Thread-safe for distinct outputs
/// and logs not being changed.
void writeKernelsJson(std::ostream& out, const std::vector<LoadedLog>& logs, KernelSort sort = KernelSort::kGpuTotal);
/// The `kcount kernels` table and CSV: one row per kernel (per kernel and log with several logs; a
/// kernel's rows follow the merged order), in `sort`'s order. The table's kernel names and ranges list
/// are narrowed so that its lines fit `max_width` display columns when they can (fitTable(); 0: no
/// limit; not with `full_names`).
void printKernelsTable(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names,
                       KernelSort sort = KernelSort::kGpuTotal, size_t max_width = 0);
void printKernelsCsv(std::ostream& out, const std::vector<LoadedLog>& logs, bool full_names,
                     KernelSort sort = KernelSort::kGpuTotal);

}  // namespace kc
