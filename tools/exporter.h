// `kcount exporter`: serves the live per-range tallies of the current user's kcount processes on this host
// (their summary-mode snapshots) as Prometheus metrics over HTTP; `--once LOG...` prints them for logs.
// A process of its own: nothing is served from inside a profiled program. Usage: docs/production.md.
#pragma once

#include "tools/exporter_scrape.h"

namespace CLI {
class App;
}

namespace kc {

/// Adds the `exporter` subcommand and its options, filling `opt`, to `app`; returns it (to test whether
/// it was given).
CLI::App* addExporterCommand(CLI::App& app, ExporterOptions& opt);

/// Runs `kcount exporter`: with `once`, prints the metrics of `logs` on stdout and returns 0 (1 when a
/// log is served as down: unreadable, not ours, damaged, not a summary-mode log); otherwise serves until
/// SIGINT/SIGTERM and returns 0, 1 when the address cannot be bound, 2 for a usage error.
int runExporter(const ExporterOptions& opt);

}  // namespace kc
