// `kcount diff`: two runs compared per range and overall, kernels matched by decoded identity
// (tools/diff.h); -a/-b sum several logs per side.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include <sys/stat.h>

#include <fmt/format.h>

#include "collector/shown_value.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tools/diff.h"
#include "tools/given_logs.h"
#include "tools/multi_log.h"

namespace kc {
namespace {

/// The options of `kcount diff` as parsed, and its run.
struct DiffCommand {
  CLI::App* diff = nullptr;
  std::vector<std::string> paths;
  std::vector<std::string> diff_a, diff_b;
  std::string format = "table";
  bool full_names = false;
  bool all = false;        // --all
  std::string range;       // --range PATH
  bool salvage = false;
  long long width = -1;  // --width; -1: not given (the terminal's width, tableWidth())

  void declare(CLI::App& app) {
    diff = app.add_subcommand("diff", "compare two runs per range and overall; kernels matched by decoded identity");
    diff->add_option("logs", paths, "two logs, A then B (or -a/-b for several logs per side)");
    diff->add_option("-a,--a", diff_a, "logs of side A (ranks of one job, or runs)");
    diff->add_option("-b,--b", diff_b, "logs of side B");
    diff->add_option("--format", format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
    diff->add_flag("--full-names", full_names,
                   "show full demangled kernel names and range paths unshortened in the table (verdict lines stay "
                   "bounded)");
    auto* all_flag = diff->add_flag("--all", all,
                                    "print every range, nesting line, kernel and verdict (default: the verdicts "
                                    "first, then the largest changes)");
    diff->add_option("--range", range, "print that range's verdict and the table of its subtree (its path as "
                                       "the range column shows it)")
        ->excludes(all_flag);
    diff->add_flag("--salvage", salvage, "compare the intact part of damaged logs (exit 0 if any)");
    addWidthOption(diff, width);
  }

  /// diff's arity before its paths: `kcount diff a b c` is a usage error (2), not three missing files.
  int checkUsage() {
    if (!((diff_a.empty() && diff_b.empty() && paths.size() == 2) ||
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

    return 0;
  }

  int execute() {
    if (diff_a.empty() && diff_b.empty() && paths.size() == 2) {
      diff_a = {paths[0]};
      diff_b = {paths[1]};
    }  // any other combination was refused before the paths were checked
    // One streaming pass per log: the diff needs the summaries, scopes and names, not the records.
    auto a = loadAll(diff_a, JoinOptions{}, /*streaming=*/true), b = loadAll(diff_b, JoinOptions{}, /*streaming=*/true);
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
    if (format != "table" && (all || !range.empty()))
      std::cerr << "kcount: diff: " << (all ? "--all" : "--range") << " chooses what the table format shows: no "
                << "effect with --format " << format << " (it holds every range, kernel and verdict)\n";
    if (format == "json")
      kc::writeDiffJson(std::cout, a, b, states_a, states_b);
    else if (format == "csv")
      kc::writeDiffCsv(std::cout, a, b, states_a, states_b);
    else
      try {
        printFitted(full_names ? 0 : tableWidth(width), [&](std::ostream& out) {
          kc::printDiff(out, a, b, states_a, states_b, tableWidth(width), full_names,
                        kc::DiffLayout{.all = all, .range = range});
        });
      } catch (const std::invalid_argument& e) {  // --range names no range of A or B
        std::cerr << "kcount: diff: " << e.what() << '\n';
        return 2;
      }
    return rc;
  }
};

}  // namespace

Command diffSubcommand(CLI::App& app) {
  auto c = std::make_shared<DiffCommand>();
  c->declare(app);
  return {c->diff, {&c->paths, &c->diff_a, &c->diff_b}, nullptr, [c] { return c->checkUsage(); }, [c] { return c->execute(); }};
}

}  // namespace kc
