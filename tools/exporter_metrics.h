// The Prometheus text exposition format (version 0.0.4) as `kcount exporter` writes it, and the rule that
// keeps its counters from going backwards. https://prometheus.io/docs/instrumenting/exposition_formats/
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kc {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

/// Metric families in the order they were declared, each with its HELP and TYPE lines and its samples.
/// Not thread-safe.
class MetricsText {
 public:
  /// Declares a family: `type` "counter" or "gauge". Declaring one twice keeps the first.
  void family(const std::string& name, const std::string& type, const std::string& help);
  /// A sample of the declared family `name` (a counter's name ends in "_total").
  void sample(const std::string& name, const MetricLabels& labels, double value);
  /// The exposition text: each family's HELP and TYPE then its samples; families without samples too.
  std::string text() const;

 private:
  struct Family {
    std::string name, type, help;
    std::vector<std::string> lines;
  };
  std::vector<Family> families_;
};

/// A label value escaped for the text format: backslash, double quote and line feed as \\, \" and \n.
std::string escapeLabelValue(const std::string& v);

/// Counters that never go backwards. A series (its name and labels) keeps what it served last: a lower
/// value read for the same run (an older snapshot read again: the newest part of a rotated log not
/// complete yet, a damaged tail) serves the last value again; a new run under the same labels (the pid
/// reused by a new process) starts from the last value served (an offset), so sums and rates stay right.
/// Not thread-safe.
class CounterKeeper {
 public:
  /// The value to serve for `series` whose log reads `raw` now, `run` identifying the process run.
  uint64_t serve(const std::string& series, const std::string& run, uint64_t raw);
  /// Forgets series not served since the last sweep().
  void sweep();

 private:
  struct State {
    std::string run;
    uint64_t offset = 0, last_raw = 0;
    bool used = true;
  };
  std::map<std::string, State> states_;
};

}  // namespace kc
