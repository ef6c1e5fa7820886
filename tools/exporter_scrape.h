// One scrape of `kcount exporter`: the live processes found (tools/exporter_discovery.h) and the logs
// named on the command line, read (tools/exporter_tallies.h) and written as Prometheus metrics
// (tools/exporter_metrics.h). Metric names, labels and bounds: docs/production.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tools/exporter_discovery.h"
#include "tools/exporter_metrics.h"
#include "tools/exporter_tallies.h"

namespace kc {

struct ExporterOptions {
  std::string listen = "127.0.0.1:9464";  // HOST:PORT served (PORT 0: any free port, printed)
  std::vector<std::string> logs;          // logs served besides the live processes (--once: these only)
  bool once = false;                      // print the metrics of `logs` and exit
  bool discover = true;                   // find the user's live kcount processes (--no-discover: off)
  int max_depth = 4;                      // ranges deeper are counted in their ancestor at this depth
  size_t max_series = 1000;               // range label sets served at most; later ranges go to "(other)"
  double timeout_s = 1.0;                 // a process's status answer waited for at most
  double keep_exited_s = 300;             // a process gone is served (kcount_up 0) this long after
};

/// Keeps what must outlive one scrape: the counters' last values and offsets (CounterKeeper), the range
/// label sets admitted under --max-series, the logs read (TallyCache) and the processes seen, so that a
/// process that exited is still served, as down, with its final totals. Not thread-safe: the HTTP server
/// calls it under one lock.
class Scraper {
 public:
  explicit Scraper(const ExporterOptions& options);
  /// Looks at every process and log now and returns the exposition text. Never throws but std::bad_alloc.
  std::string scrape();
  /// Processes and logs served as down (kcount_up 0) by the last scrape().
  size_t down() const { return down_; }
  /// Why logs were served as down by the last scrape() (their read errors), one text each.
  const std::vector<std::string>& downReasons() const { return down_reasons_; }

 private:
  /// A process or a log being served.
  struct Source {
    bool live = false;                // found through its control socket
    int pid = 0;
    LiveProcess status;               // the last status (live sources)
    std::vector<std::string> parts;   // its log's files
    std::chrono::steady_clock::time_point last_seen{};
    bool gone = false;                // its socket is no longer there
  };
  void refreshSources();
  void writeSource(const Source& s, MetricsText& m);
  void writeRanges(const std::string& key, const LogTallies& t, const MetricLabels& labels, MetricsText& m);

  ExporterOptions opt_;
  std::string host_;  // this host's name, for processes whose log has no metadata yet
  CounterKeeper counters_;
  TallyCache cache_;
  std::map<std::string, Source> sources_;  // "pid:N" or "log:PATH"
  std::set<std::string> admitted_;         // source key + '\n' + range path, under --max-series
  size_t down_ = 0;
  std::vector<std::string> down_reasons_;
  uint64_t folded_ranges_ = 0;             // range paths served as "(other)" in the last scrape
  std::chrono::steady_clock::time_point last_sweep_;
};

}  // namespace kc
