// `kcount check`: validates logs, one report each (docs/usage.md): exit 0 clean, 1 incomplete, lossy or
// without totals, 2 damaged; --salvage adds the summary of the intact part.
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include <sstream>

#include "collector/shown_value.h"
#include "tools/check_output.h"
#include "tools/command.h"
#include "tools/given_logs.h"
#include "tools/loaded_log.h"
#include "tools/summary_output.h"
#include "tools/text.h"

namespace kc {
namespace {

/// The options of `kcount check` as parsed, and its run.
struct CheckCommand {
  CLI::App* check = nullptr;
  std::vector<std::string> paths;
  bool salvage = false;
  long long width = -1;  // --width; -1: not given (the terminal's width, tableWidth())

  void declare(CLI::App& app) {
    check = app.add_subcommand("check", "validate logs: exit 0 clean, 1 incomplete, lossy (records dropped) or without totals, 2 damaged");
    check->add_option("logs", paths, "log files")->required();
    check->add_flag("--salvage", salvage, "also print the summary of the intact part (exit status unchanged)");
    addWidthOption(check, width);
  }

  int execute() {
    int rc = 0;
    printFitted(tableWidth(width), [&](std::ostream& out) { rc = report(out); });
    return rc;
  }

  /// Prints each log's report on `out`; returns the exit status.
  int report(std::ostream& out) {
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
      read.push_back(kc::streamLog(paths[i], JoinOptions{}));
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
        out << "== " << kc::displayText(p) << '\n'
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
      out << text;
      if (salvage && l.data.chunks_read > 0) {
        if (kc::windowsShown(l.data)) kc::addWindowTotals(l, JoinOptions{});
        out << "intact part:\n";
        kc::SummaryOptions opt;
        opt.list_issues = false;  // listed above, in the check's report
        opt.width = tableWidth(width);
        kc::printSummaryTable(out, l, opt);
      }
    }
    return rc;
  }
};

}  // namespace

Command checkSubcommand(CLI::App& app) {
  auto c = std::make_shared<CheckCommand>();
  c->declare(app);
  return {c->check, {}, nullptr, nullptr, [c] { return c->execute(); }};
}

}  // namespace kc
