// `kcount kernels`: per kernel name, its count, GPU time, grid and block and the ranges it ran in
// (docs/usage.md); --range keeps one range's kernels.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "collector/shown_value.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tools/given_logs.h"
#include "tools/kernels_output.h"

namespace kc {
namespace {

/// The options of `kcount kernels` as parsed, and its run.
struct KernelsCommand {
  CLI::App* kernels = nullptr;
  std::vector<std::string> paths;
  std::string format = "table";
  bool full_names = false;
  bool salvage = false;
  std::string kernels_range;
  std::string kernels_sort = "gpu";
  long long width = -1;  // --width; -1: not given (the terminal's width, tableWidth())

  void declare(CLI::App& app) {
    kernels = app.add_subcommand("kernels", "per kernel name: count, GPU time, grid/block, ranges");
    kernels->add_option("logs", paths, "log files")->required();
    kernels->add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
    kernels->add_flag("--full-names", full_names, "show full demangled kernel names");
    kernels->add_flag("--salvage", salvage, "list the kernels of the intact part of a damaged log (exit 0 if any)");
    kernels->add_option("--range", kernels_range,
                        "only the kernels of this range and the ranges nested in it, by its path as summary shows it "
                        "(e.g. step/mlp; with its NVTX domains: step/mylib: gemm): counts and averages over that "
                        "range, not the whole run");
    kernels->add_option("--sort", kernels_sort,
                        "row order: gpu (GPU total time, largest first; the default), count (kernels), avg (GPU time "
                        "per kernel) or name (A to Z); csv and json follow it")
        ->check(CLI::IsMember({"gpu", "count", "avg", "name"}));
    addWidthOption(kernels, width);
  }

  int execute() {
    auto logs = loadAll(paths, JoinOptions{}, /*streaming=*/true);  // tallies per (range, name) and first shapes
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
      printFitted(full_names ? 0 : tableWidth(width), [&](std::ostream& out) {
        kc::printKernelsTable(out, logs, full_names, sort, tableWidth(width));
      });
    printIntactIssues(logs);
    warnStates(logs, /*no_totals=*/true);
    // A log that lists no kernel is named with the reason it gives, as a log without totals is; the exit
    // status stays that of the log's state (docs/usage.md).
    for (size_t i = 0; i < logs.size(); ++i)
      if (const std::string why = kc::noKernelsWarning(logs[i], kernels_range); !why.empty() && !without_range[i])
        std::cerr << "kcount: " << kc::shownPath(logs[i].path) << ": warning: " << why << '\n';
    return rc;
  }
};

}  // namespace

Command kernelsSubcommand(CLI::App& app) {
  auto c = std::make_shared<KernelsCommand>();
  c->declare(app);
  return {c->kernels, {&c->paths}, nullptr, nullptr, [c] { return c->execute(); }};
}

}  // namespace kc
