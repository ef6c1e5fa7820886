// `kcount exporter`: the live per-range tallies of the user's kcount processes as Prometheus metrics
// (tools/exporter.h; docs/production.md).
#include <memory>

#include <CLI/CLI.hpp>

#include "tools/command.h"
#include "tools/exporter.h"

namespace kc {

Command exporterSubcommand(CLI::App& app) {
  auto opt = std::make_shared<ExporterOptions>();
  CLI::App* cmd = addExporterCommand(app, *opt);
  return {cmd, {}, nullptr, nullptr, [opt] { return runExporter(*opt); }};
}

}  // namespace kc
