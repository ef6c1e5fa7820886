// `kcount diff A B`: two runs (or two sets of logs) compared overall and per range (matched by path):
// launches, kernels, GPU time, CPU time with their change; kernels matched by decoded identity
// (tools/kernel_decode.h); verdict lines per compared unit. Pure functions of the loaded logs.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/report.h"

namespace kc {

/// One kernel identity within a compared unit: how many ran and for how long, summed over a side's logs.
struct DiffKernel {
  std::string name;      // first recorded name seen for this identity
  std::string category;  // categoryName() of the decoded name
  std::string library;
  std::vector<std::string> ops;  // Triton (Inductor) fused ops
  std::string short_name;  // shortKernelName(): cut at kMaxShortName characters, for text
  std::string short_full;  // shortKernelNameUncut(): JSON's "short" (machine-readable outputs are never cut)
  uint64_t count = 0;
  uint64_t gpu_ns = 0;
};

/// Numbers of one range path (inclusive; "(no range)" exclusive; "(overall)" the whole process) on one
/// side, summed over that side's logs.
struct DiffUnit {
  bool present = false;
  uint64_t instances = 0, cpu_ns = 0, launches = 0, kernels = 0, gpu_ns = 0, launch_api_ns = 0;
  std::map<std::string, DiffKernel> by_identity;
  std::vector<std::string> children;  // names of child ranges (sorted)
  bool gpu_time = true;  // false: a log of this side has no GPU times (gpuTimeRecorded()); gpu_ns is not known
};

/// A side of the diff: "(overall)" and every range path of its logs.
struct DiffSide {
  // Paths are keys as text tables show them (displayPath(): a '/' inside a name is "\/", so a range named
  // "a/b" and range b inside range a are two paths; the JSON's "path" and "unit" are these keys).
  std::vector<std::string> paths;        // in depth-first order of the first log that has them
  std::map<std::string, DiffUnit> units; // path -> numbers; "(overall)" included
  std::map<std::string, std::string> names;  // path -> the range's own name (raw), for verdict text
  std::map<std::string, std::string> shown;  // path -> path as text tables show it (the path itself)
  bool gpu_time = true;  // every log of this side recorded GPU times (gpuTimeRecorded())
  uint64_t launch_timing_sample = 1;  // largest launchTimingSample() of its logs: > 1, launch_api_ns are estimates
};

DiffSide diffSide(const std::vector<LoadedLog>& logs);

/// Verdict lines for one unit present on both sides (rules: docs/usage.md, "kcount diff"). `unit` names
/// it in the text ("step", or "the whole run").
std::vector<std::string> diffVerdicts(const DiffUnit& a, const DiffUnit& b, const std::string& unit);

/// {"a": [paths], "b": [paths], "overall": {...}, "ranges": [{"path", "in", "a": {...}|null, "b": ...,
///  "change": {...}|null, "children_a", "children_b", "nesting_differs"}], "kernels": {"same", "only_a",
///  "only_b"}, "verdicts": [{"unit", "lines": [...]}]}. Schema: docs/usage.md.
nlohmann::json diffJson(const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b);
void printDiff(std::ostream& out, const std::vector<LoadedLog>& a, const std::vector<LoadedLog>& b);

}  // namespace kc
