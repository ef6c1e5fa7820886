#include "tools/exporter.h"

#include <iostream>

#include <CLI/CLI.hpp>

#include "tools/exporter_http.h"

namespace kc {

CLI::App* addExporterCommand(CLI::App& app, ExporterOptions& opt) {
  auto* cmd = app.add_subcommand("exporter", "serve the live per-range tallies of your kcount processes to Prometheus");
  cmd->add_option("logs", opt.logs, "summary-mode logs served besides the live processes (with --once: only these)");
  cmd->add_option("--listen", opt.listen, "HOST:PORT served (default 127.0.0.1:9464; port 0: any free port)");
  cmd->add_flag("--once", opt.once, "print the metrics of the logs given and exit");
  cmd->add_flag_callback("--no-discover", [&opt] { opt.discover = false; },
                         "serve only the logs given, not the live processes found");
  cmd->add_option("--max-depth", opt.max_depth, "deepest range path served; deeper ranges count in their ancestor (default 4)")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--max-series", opt.max_series, "range label sets served at most; more are summed as range=\"(other)\" (default 1000)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 24));
  cmd->add_option("--timeout", opt.timeout_s, "seconds a process's status answer is waited for (default 1)")
      ->check(CLI::Range(0.001, 60.0));
  cmd->add_option("--keep-exited", opt.keep_exited_s, "seconds a process that exited is still served, as down (default 300)")
      ->check(CLI::Range(0.0, 86400.0 * 365));
  return cmd;
}

int runExporter(const ExporterOptions& opt) {
  if (opt.once) {
    if (opt.logs.empty()) {
      std::cerr << "kcount exporter: --once needs the logs to print (kcount exporter --once LOG...)\n";
      return 2;
    }
    ExporterOptions logs_only = opt;
    logs_only.discover = false;
    Scraper scraper(logs_only);
    const std::string text = scraper.scrape();
    std::cout << text;
    // Why a log is served as down (kcount_up 0), once per log given: the metrics alone do not say.
    for (const std::string& why : scraper.downReasons()) std::cerr << "kcount exporter: " << why << "\n";
    return scraper.down() > 0 ? 1 : 0;
  }
  Scraper scraper(opt);
  return serveMetrics(opt.listen, [&scraper] { return scraper.scrape(); });
}

}  // namespace kc
