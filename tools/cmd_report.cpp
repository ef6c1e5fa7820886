// `kcount report`: one self-contained HTML page of the logs given (tools/report_html.h).
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include <fstream>

#include "tools/command.h"
#include "tools/given_logs.h"
#include "tools/report_html.h"
#include "tools/output_file.h"

namespace kc {
namespace {

/// The options of `kcount report` as parsed, and its run.
struct ReportCommand {
  CLI::App* html = nullptr;
  std::vector<std::string> paths;
  std::string output;
  bool salvage = false;

  void declare(CLI::App& app) {
    html = app.add_subcommand("report", "one self-contained HTML page: range tree chart, kernels, A vs B for two logs");
    html->add_option("logs", paths, "log files (two: side by side)")->required();
    html->add_option("-o,--output", output, "HTML file to write, replaced if it exists; - for standard output")
        ->required();
    html->add_flag("--salvage", salvage, "report the intact part of damaged logs (exit 0 if any)");
  }

  int execute() {
    if (const std::string why = outputIsALog(output, paths, "html", ""); !why.empty()) {
      std::cerr << "kcount: report: " << why << '\n';
      return 2;
    }
    auto logs = loadAll(paths, JoinOptions{});
    const int rc = selectLogs(logs, salvage);
    if (logs.empty()) return rc;
    if (refuseLogsWithoutTotals(logs, "report") != 0) return 2;
    printIntactIssues(logs);
    warnStates(logs);
    if (output == "-") {
      kc::writeHtmlReport(std::cout, logs);
      return rc;
    }
    std::ofstream out = openOutput(output);
    kc::writeHtmlReport(out, logs);
    closeOutput(out, output);
    return rc;
  }
};

}  // namespace

Command reportSubcommand(CLI::App& app) {
  auto c = std::make_shared<ReportCommand>();
  c->declare(app);
  return {c->html, {&c->paths}, nullptr, nullptr, [c] { return c->execute(); }};
}

}  // namespace kc
