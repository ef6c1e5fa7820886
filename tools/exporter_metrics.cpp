#include "tools/exporter_metrics.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kc {

std::string escapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

void MetricsText::family(const std::string& name, const std::string& type, const std::string& help) {
  for (const Family& f : families_)
    if (f.name == name) return;
  families_.push_back(Family{name, type, help, {}});
}

void MetricsText::sample(const std::string& name, const MetricLabels& labels, double value) {
  auto it = std::find_if(families_.begin(), families_.end(), [&](const Family& f) { return f.name == name; });
  if (it == families_.end()) return;
  std::string line = name;
  if (!labels.empty()) {
    line += '{';
    for (size_t i = 0; i < labels.size(); ++i)
      line += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first, escapeLabelValue(labels[i].second));
    line += '}';
  }
  // Whole numbers as integers (exact up to 2^53, as Prometheus keeps them), others in the shortest form.
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9007199254740992.0)
    line += fmt::format(" {}", static_cast<long long>(value));
  else
    line += fmt::format(" {}", value);
  it->lines.push_back(std::move(line));
}

std::string MetricsText::text() const {
  std::string out;
  for (const Family& f : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
    for (const std::string& l : f.lines) out += l + '\n';
  }
  return out;
}

uint64_t CounterKeeper::serve(const std::string& series, const std::string& run, uint64_t raw) {
  auto [it, fresh] = states_.try_emplace(series);
  State& s = it->second;
  s.used = true;
  if (fresh) {
    s.run = run;
  } else if (s.run != run) {
    s.offset += s.last_raw;  // a new run under the same labels goes on from what was served
    s.last_raw = 0;
    s.run = run;
  }
  s.last_raw = std::max(s.last_raw, raw);
  return s.offset + s.last_raw;
}

void CounterKeeper::sweep() {
  for (auto it = states_.begin(); it != states_.end();) {
    if (!it->second.used) {
      it = states_.erase(it);
    } else {
      it->second.used = false;
      ++it;
    }
  }
}

}  // namespace kc
