#include "tools/exporter_scrape.h"

#include <unistd.h>

#include <fstream>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace kc {
namespace {

/// How often the counters and cached logs of sources no longer served are forgotten.
constexpr auto kSweepEvery = std::chrono::minutes(10);
constexpr char kOtherRanges[] = "(other)";

std::string thisHost() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string("?");
}

std::string commOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

void declareFamilies(MetricsText& m) {
  m.family("kcount_up", "gauge",
           "1 if the process answered and its log was read intact, 0 if it exited, refused, or its log is damaged "
           "or not a summary-mode log");
  m.family("kcount_recording", "gauge", "1 while a capture window is open (recording), 0 paused, dormant or ended");
  m.family("kcount_dropped_records_total", "counter", "Host and activity records the process dropped");
  m.family("kcount_untallied_events_total", "counter",
           "Events not tallied in their range row at KCOUNT_MAX_KEYS (still in the process totals)");
  m.family("kcount_unmatched_kernels_total", "counter",
           "GPU kernels whose launch was not recorded: in the process's kernels, in no range's");
  m.family("kcount_range_kernels_total", "counter", "GPU kernels launched while the range was innermost");
  m.family("kcount_range_launches_total", "counter", "Kernel launch calls made while the range was innermost");
  m.family("kcount_range_instances_total", "counter", "Instances of the range closed");
  m.family("kcount_range_gpu_seconds_total", "counter", "GPU time of the kernels launched while the range was innermost");
  m.family("kcount_range_graph_gpu_seconds_total", "counter",
           "GPU span of the graph launches made while the range was innermost (KCOUNT_GPU_TIME=graphs)");
  m.family("kcount_range_graph_gpu_launches_total", "counter",
           "Graph launches with a GPU span made while the range was innermost (KCOUNT_GPU_TIME=graphs)");
  m.family("kcount_range_launch_cpu_seconds_total", "counter",
           "CPU time inside the launch calls made while the range was innermost");
  m.family("kcount_range_kernels_per_instance", "gauge",
           "Kernels per instance of the process's most repeated range, the ranges inside it included");
  m.family("kcount_exporter_processes", "gauge", "Processes and logs served");
  m.family("kcount_exporter_ranges_folded", "gauge", "Range paths served as range=\"(other)\" at --max-series");
}

}  // namespace

Scraper::Scraper(const ExporterOptions& options)
    : opt_(options), host_(thisHost()), cache_(options.max_depth), last_sweep_(std::chrono::steady_clock::now()) {}

void Scraper::refreshSources() {
  const auto now = std::chrono::steady_clock::now();
  for (auto& [key, s] : sources_)
    if (s.live) s.gone = true;  // until found again below
  if (opt_.discover) {
    for (LiveProcess& p : findLiveProcesses(opt_.timeout_s)) {
      Source& s = sources_["pid:" + std::to_string(p.pid)];
      s.live = true;
      s.pid = p.pid;
      s.gone = false;
      s.last_seen = now;
      if (!p.log_files.empty()) s.parts = p.log_files;  // a process that exits mid-scrape keeps its log
      s.status = std::move(p);
    }
  }
  for (auto it = sources_.begin(); it != sources_.end();) {
    const bool expired = it->second.live && it->second.gone &&
                         now - it->second.last_seen > std::chrono::duration<double>(opt_.keep_exited_s);
    if (!expired) {
      ++it;
      continue;
    }
    const std::string prefix = it->first + '\n';  // its range label sets give room back under --max-series
    for (auto a = admitted_.lower_bound(prefix); a != admitted_.end() && a->compare(0, prefix.size(), prefix) == 0;)
      a = admitted_.erase(a);
    it = sources_.erase(it);
  }
  for (const std::string& log : opt_.logs) {
    Source& s = sources_["log:" + log];
    s.parts = logPartsOf(log);
    s.last_seen = now;
  }
}

void Scraper::writeRanges(const std::string& key, const LogTallies& t, const MetricLabels& labels, MetricsText& m) {
  RangeCounters other{kOtherRanges};
  bool any_other = false;
  auto serve = [&](const RangeCounters& r) {
    MetricLabels l = labels;
    l.emplace_back("range", r.path);
    std::string series = key;
    for (const auto& [k, v] : l) series += '\n' + v;
    // Seconds from ns divided (not multiplied by 1e-9), so that 1200000 ns is served as 0.0012.
    auto counter = [&](const char* name, uint64_t raw, double per_unit) {
      m.sample(name, l, static_cast<double>(counters_.serve(series + '\n' + name, t.run, raw)) / per_unit);
    };
    counter("kcount_range_kernels_total", r.kernels, 1);
    counter("kcount_range_launches_total", r.launches, 1);
    counter("kcount_range_instances_total", r.instances, 1);
    // A log without GPU times (KCOUNT_GPU_TIME=0) serves none: not recorded is not 0 s.
    if (t.gpu_time) counter("kcount_range_gpu_seconds_total", r.gpu_ns, 1e9);
    if (t.graph_gpu_time) {
      counter("kcount_range_graph_gpu_seconds_total", r.graph_gpu_ns, 1e9);
      counter("kcount_range_graph_gpu_launches_total", r.graph_gpu_launches, 1);
    }
    counter("kcount_range_launch_cpu_seconds_total", r.launch_api_ns, 1e9);
  };
  for (const RangeCounters& r : t.ranges) {
    const std::string id = key + '\n' + r.path;
    if (admitted_.count(id) == 0 && admitted_.size() < opt_.max_series) admitted_.insert(id);
    if (admitted_.count(id) != 0) {
      serve(r);
      continue;
    }
    // Past the cap: added up under "(other)". Admission is kept, so "(other)" only ever gains ranges and
    // stays a counter that does not go backwards.
    ++folded_ranges_;
    any_other = true;
    other.kernels += r.kernels;
    other.launches += r.launches;
    other.instances += r.instances;
    other.gpu_ns += r.gpu_ns;
    other.launch_api_ns += r.launch_api_ns;
    other.graph_gpu_launches += r.graph_gpu_launches;
    other.graph_gpu_ns += r.graph_gpu_ns;
  }
  if (any_other) serve(other);
  if (!t.most_repeated.empty()) {
    MetricLabels l = labels;
    l.emplace_back("range", t.most_repeated);
    m.sample("kcount_range_kernels_per_instance", l, t.kernels_per_instance);
  }
}

void Scraper::writeSource(const Source& s, MetricsText& m) {
  static const LogTallies kNone;
  const std::string key = s.live ? "pid:" + std::to_string(s.pid) : "log:" + s.parts.front();
  // A trace-mode process's log holds records, not tallies: served with its state, without range series.
  const bool trace = s.live && s.status.record_mode == "trace";
  const LogTallies& t = s.parts.empty() || trace ? kNone : cache_.get(s.parts);
  const std::string pid = !t.pid.empty() ? t.pid : s.live ? std::to_string(s.pid) : std::string();
  const std::string command = !t.command.empty() ? t.command : s.live ? commOf(s.pid) : std::string();
  MetricLabels labels{{"host", t.host.empty() ? host_ : t.host}, {"pid", pid}, {"rank", t.rank}, {"command", command}};
  if (pid.empty()) labels.emplace_back("log", s.parts.front());  // a log not read: its name tells it apart
  bool up = t.error.empty();
  if (s.live) up = up && !s.gone && s.status.error.empty();
  m.sample("kcount_up", labels, up ? 1 : 0);
  if (!up) ++down_;
  if (!t.error.empty()) down_reasons_.push_back(t.error);
  if (s.live && !s.gone && s.status.error.empty()) m.sample("kcount_recording", labels, s.status.state == "recording");
  else if (t.complete || (s.live && s.gone)) m.sample("kcount_recording", labels, 0);
  const uint64_t dropped = std::max(s.live ? s.status.dropped_records : 0, t.dropped_records);
  m.sample("kcount_dropped_records_total", labels,
           static_cast<double>(counters_.serve(key + "\ndropped", t.run, dropped)));
  if (!t.has_tallies) return;
  m.sample("kcount_untallied_events_total", labels,
           static_cast<double>(counters_.serve(key + "\nuntallied", t.run, t.untallied_events)));
  m.sample("kcount_unmatched_kernels_total", labels,
           static_cast<double>(counters_.serve(key + "\nunmatched", t.run, t.unmatched_kernels)));
  writeRanges(key, t, labels, m);
}

std::string Scraper::scrape() {
  refreshSources();
  MetricsText m;
  declareFamilies(m);
  folded_ranges_ = 0;
  down_ = 0;
  down_reasons_.clear();
  // One run (host, pid, start) is served once: a live process and its log named on the command line, or
  // two copies of one log, are the same process. The one served: live first, then read intact, then the
  // newest snapshot.
  std::map<std::string, const Source*> best;
  auto rank = [this](const Source* s) {
    const LogTallies& t = cache_.get(s->parts);
    return std::make_tuple(s->live, t.error.empty(), t.has_tallies, t.snapshot_sequence);
  };
  for (const auto& [key, s] : sources_) {
    if (s.parts.empty() || (s.live && s.status.record_mode == "trace")) continue;
    const std::string run = cache_.get(s.parts).run;
    if (run.empty()) continue;
    auto [it, fresh] = best.try_emplace(run, &s);
    if (!fresh && rank(&s) > rank(it->second)) it->second = &s;
  }
  for (const auto& [key, s] : sources_) {
    const bool trace = s.live && s.status.record_mode == "trace";
    const std::string run = s.parts.empty() || trace ? std::string() : cache_.get(s.parts).run;
    if (!run.empty() && best[run] != &s) continue;
    writeSource(s, m);
  }
  m.sample("kcount_exporter_processes", {}, static_cast<double>(sources_.size()));
  m.sample("kcount_exporter_ranges_folded", {}, static_cast<double>(folded_ranges_));
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sweep_ > kSweepEvery) {
    counters_.sweep();
    cache_.sweep();
    last_sweep_ = now;
  }
  return m.text();
}

}  // namespace kc
