#include "tools/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <unordered_map>

#include "tools/kernel_decode.h"
#include "tools/kernel_names.h"

namespace kc {
namespace {

using nlohmann::json;

constexpr const char* kOverall = "(overall)";

void addStats(DiffUnit& u, const LogData& d, const RangeStats& r, uint64_t instances, uint64_t cpu_ns,
              std::unordered_map<uint32_t, DecodedKernel>& cache) {
  u.present = true;
  u.instances += instances;
  u.cpu_ns += cpu_ns;
  u.launches += r.launches;
  u.kernels += r.kernels;
  u.gpu_ns += r.gpu_ns;
  u.launch_api_ns += r.launch_api_ns;
  for (const auto& [name_id, t] : r.by_kernel) {
    auto it = cache.find(name_id);
    if (it == cache.end()) it = cache.emplace(name_id, decodeKernelName(d.str(name_id))).first;
    const DecodedKernel& dk = it->second;
    DiffKernel& k = u.by_identity[dk.identity];
    if (k.name.empty()) {
      k.name = dk.name;
      k.category = std::string(categoryName(dk.category));
      k.library = dk.library;
      k.ops = dk.ops;
      k.short_name = shortKernelName(dk.name);
      k.short_full = dk.short_name;  // decodeKernelName(): shortKernelNameUncut()
    }
    k.count += t.count;
    k.gpu_ns += t.gpu_ns;
  }
}

std::string signedCount(int64_t v) { return v > 0 ? fmt::format("+{}", v) : fmt::format("{}", v); }

/// "+1.20 ms", "-300 ns"; no change is "0 ns" (no sign, as signedCount() writes 0).
std::string signedDuration(uint64_t a, uint64_t b) {
  if (b == a) return formatDuration(0);
  if (b > a) return "+" + formatDuration(b - a);
  return "-" + formatDuration(a - b);
}

/// Identities of one category on a side.
std::set<std::string> ofCategory(const DiffUnit& u, const std::string& category) {
  std::set<std::string> out;
  for (const auto& [id, k] : u.by_identity)
    if (k.category == category) out.insert(id);
  return out;
}

uint64_t countOf(const DiffUnit& u, const std::set<std::string>& ids) {
  uint64_t n = 0;
  for (const auto& id : ids) n += u.by_identity.at(id).count;
  return n;
}

std::string namesOf(const DiffUnit& u, const std::set<std::string>& ids) {
  std::string s;
  for (const auto& id : ids) {
    const DiffKernel& k = u.by_identity.at(id);
    s += (s.empty() ? "" : ", ") + k.short_name;
    if (!k.ops.empty()) {
      std::string ops;
      for (const auto& o : k.ops) ops += (ops.empty() ? "" : ", ") + o;
      s += " [" + ops + "]";
    }
  }
  return s;
}

/// "2 of 3 distinct names equal", "1 of 1 distinct name equal" (equal > 0).
std::string namesEqual(size_t equal, size_t all) {
  return fmt::format("{} of {} equal", equal, counted(all, "distinct name"));
}

/// When no kernel identity is on both sides: "no distinct name in common (2 in A, none in B)".
std::string noneInCommon(size_t in_a, size_t in_b) {
  auto n = [](size_t k) { return k == 0 ? std::string("none") : std::to_string(k); };
  return fmt::format("no distinct name in common ({} in A, {} in B)", n(in_a), n(in_b));
}

/// "per instance of step: 3 in A, 3 in B" or totals when a side has no instances.
std::string perUnit(const DiffUnit& a, const DiffUnit& b, uint64_t na, uint64_t nb, const std::string& full_unit) {
  const std::string unit = elideMiddle(full_unit);  // a sentence: a long range name shortened (JSON "unit" keeps it)
  if (a.instances > 0 && b.instances > 0 && na % a.instances == 0 && nb % b.instances == 0)
    return fmt::format("{} per {} in A, {} in B", na / a.instances, unit, nb / b.instances);
  if (a.instances > 0 && b.instances > 0)
    return fmt::format("{:.2f} per {} in A, {:.2f} in B", double(na) / double(a.instances), unit,
                       double(nb) / double(b.instances));
  return fmt::format("{} in A, {} in B", na, nb);
}

json unitJson(const DiffUnit& u) {
  if (!u.present) return nullptr;
  return json{{"instances", u.instances}, {"cpu_ns", u.cpu_ns},     {"launches", u.launches},
              {"kernels", u.kernels},     {"gpu_ns", u.gpu_time ? json(u.gpu_ns) : json(nullptr)},
              {"launch_api_ns", u.launch_api_ns},
              {"kernel_identities", u.by_identity.size()}};
}

json changeJson(const DiffUnit& a, const DiffUnit& b) {
  if (!a.present || !b.present) return nullptr;
  auto d = [](uint64_t x, uint64_t y) { return static_cast<int64_t>(y) - static_cast<int64_t>(x); };
  return json{{"launches", d(a.launches, b.launches)},
              {"kernels", d(a.kernels, b.kernels)},
              {"gpu_ns", a.gpu_time && b.gpu_time ? json(d(a.gpu_ns, b.gpu_ns)) : json(nullptr)},
              {"cpu_ns", d(a.cpu_ns, b.cpu_ns)},
              {"launch_api_ns", d(a.launch_api_ns, b.launch_api_ns)}};
}

struct KernelMatch {
  std::vector<std::string> same, only_a, only_b;
};

KernelMatch matchKernels(const DiffUnit& a, const DiffUnit& b) {
  KernelMatch m;
  for (const auto& [id, _] : a.by_identity) (b.by_identity.count(id) ? m.same : m.only_a).push_back(id);
  for (const auto& [id, _] : b.by_identity)
    if (!a.by_identity.count(id)) m.only_b.push_back(id);
  return m;
}

/// Units that get verdict lines: the whole run, then every range on both sides with kernels on both.
std::vector<std::string> verdictUnits(const DiffSide& a, const DiffSide& b) {
  std::vector<std::string> out{kOverall};
  for (const auto& p : a.paths) {
    if (p == kOverall || p == "(no range)" || p == kUnresolvedLabel) continue;
    auto ia = a.units.find(p), ib = b.units.find(p);
    if (ib == b.units.end() || !ib->second.present) continue;
    if (ia->second.kernels > 0 && ib->second.kernels > 0) out.push_back(p);
  }
  return out;
}

std::string unitName(const DiffSide& side, const std::string& path) {
  if (path == kOverall) return "the whole run";
  auto it = side.names.find(path);
  return it != side.names.end() ? it->second : path;
}

/// A path as the text table shows it (escaped names, docs/usage.md), from whichever side has it.
std::string shownPath(const DiffSide& a, const DiffSide& b, const std::string& path) {
  if (auto it = a.shown.find(path); it != a.shown.end()) return it->second;
  if (auto it = b.shown.find(path); it != b.shown.end()) return it->second;
  return path;
}

}  // namespace

DiffSide diffSide(const std::vector<LoadedLog>& logs) {
  DiffSide side;
  std::map<std::string, std::set<std::string>> children;
  for (const auto& l : logs) {
    const LogData& d = l.data;
    const Summary& s = l.summary;
    std::unordered_map<uint32_t, DecodedKernel> cache;
    if (side.units.find(kOverall) == side.units.end()) side.paths.push_back(kOverall);
    addStats(side.units[kOverall], d, s.inclusive[kRootScope], 0, 0, cache);
    // (no range): what ran outside every range; records of an unknown range (damage) are a unit of their own.
    const RangeStats no_range = noRangeStats(s);
    for (uint32_t id : shownScopes(d, s)) {
      // Keyed as text tables show the path (a '/' inside a name is "\/"): a range named "a/b" and range b
      // inside range a are different ranges. The JSON's "path" is this key too.
      const std::string path = displayPath(d, id);
      if (side.units.find(path) == side.units.end()) side.paths.push_back(path);
      const RangeStats& r = id == kRootScope ? no_range : s.inclusive[id];
      const RangeStats& own = id == kRootScope ? no_range : s.exclusive[id];
      addStats(side.units[path], d, r, own.instances, own.cpu_ns, cache);
      side.shown.try_emplace(path, path);
      if (id == kRootScope && hasUnresolved(s)) {
        const std::string unknown(kUnresolvedLabel);
        if (side.units.find(unknown) == side.units.end()) side.paths.push_back(unknown);
        addStats(side.units[unknown], d, s.unresolved, 0, 0, cache);
      }
      if (id != kRootScope) {
        const uint32_t name_id = d.scopes[id].name_id;
        const std::string name = d.scopeLost(id) ? lostRangeName(id) : std::string(d.str(name_id));
        // Top-level ranges hang under kOverall.
        const uint32_t parent_id = d.scopes[id].parent_id;
        const std::string parent = parent_id == kRootScope ? std::string(kOverall) : displayPath(d, parent_id);
        children[parent].insert(name);
        side.names.try_emplace(path, name);
      }
    }
  }
  for (const auto& l : logs) side.gpu_time = side.gpu_time && gpuTimeRecorded(l.data);
  for (const auto& l : logs) side.launch_timing_sample = std::max(side.launch_timing_sample, launchTimingSample(l.data));
  for (auto& [path, u] : side.units) {
    u.gpu_time = side.gpu_time;
    auto c = children.find(path);
    if (c != children.end()) u.children.assign(c->second.begin(), c->second.end());
  }
  return side;
}

std::vector<std::string> diffVerdicts(const DiffUnit& a, const DiffUnit& b, const std::string& unit) {
  std::vector<std::string> lines;
  // GEMM: distinct identities, and kernels per instance (or in total).
  const auto ga = ofCategory(a, "GEMM"), gb = ofCategory(b, "GEMM");
  if (!ga.empty() || !gb.empty()) {
    std::set<std::string> all(ga.begin(), ga.end());
    all.insert(gb.begin(), gb.end());
    size_t equal = 0;
    for (const auto& id : all) equal += ga.count(id) && gb.count(id);
    const uint64_t na = countOf(a, ga), nb = countOf(b, gb);
    const std::string counts = fmt::format("GEMM kernels {}", perUnit(a, b, na, nb, unit));
    if (ga == gb) {
      const bool same_counts = a.instances > 0 && b.instances > 0 ? na * b.instances == nb * a.instances : na == nb;
      lines.push_back(fmt::format("GEMM kernels {}: {}; {}", same_counts ? "identical" : "names identical, counts differ",
                                  namesEqual(equal, all.size()), counts));
    } else {
      std::set<std::string> oa, ob;
      for (const auto& id : ga)
        if (!gb.count(id)) oa.insert(id);
      for (const auto& id : gb)
        if (!ga.count(id)) ob.insert(id);
      std::string s = fmt::format("GEMM kernels changed: {}; {}",
                                  equal > 0 ? namesEqual(equal, all.size()) : noneInCommon(ga.size(), gb.size()), counts);
      if (!oa.empty()) s += "; only in A: " + namesOf(a, oa);
      if (!ob.empty()) s += "; only in B: " + namesOf(b, ob);
      lines.push_back(s);
    }
  }
  // Other categories: identical, or what left and what came. Pointwise kernels of A replaced only by
  // Triton (Inductor) kernels of B are stated as a fusion.
  std::set<std::string> categories;
  for (const auto* u : {&a, &b})
    for (const auto& [_, k] : u->by_identity)
      if (k.category != "GEMM") categories.insert(k.category);
  for (const auto& c : categories) {
    const auto ca = ofCategory(a, c), cb = ofCategory(b, c);
    std::set<std::string> oa, ob;
    for (const auto& id : ca)
      if (!cb.count(id)) oa.insert(id);
    for (const auto& id : cb)
      if (!ca.count(id)) ob.insert(id);
    if (oa.empty() && ob.empty()) {
      lines.push_back(fmt::format("{} kernels identical: {}; {}", c, namesEqual(ca.size(), ca.size()),
                                  perUnit(a, b, countOf(a, ca), countOf(b, cb), unit)));
      continue;
    }
    const bool fused = !oa.empty() && !ob.empty() && std::all_of(ob.begin(), ob.end(), [&](const std::string& id) {
      const DiffKernel& k = b.by_identity.at(id);
      return k.library == "Triton (Inductor)" && !k.ops.empty();
    });
    const std::string runs = fmt::format("kernels that differ run {}", perUnit(a, b, countOf(a, oa), countOf(b, ob), unit));
    if (fused && ob.size() < oa.size()) {
      lines.push_back(fmt::format("{}: {} in A became {} in B ({}; A: {}; B: {})", c, counted(oa.size(), "kernel"),
                                  counted(ob.size(), "fused Triton kernel"), runs, namesOf(a, oa), namesOf(b, ob)));
    } else {
      const size_t equal = ca.size() - oa.size();
      std::string s = fmt::format("{}: {}", c,
                                  equal > 0 ? counted(equal, "distinct name") + " equal" : noneInCommon(ca.size(), cb.size()));
      if (!oa.empty()) s += "; only in A: " + namesOf(a, oa);
      if (!ob.empty()) s += "; only in B: " + namesOf(b, ob);
      lines.push_back(s + "; " + runs);
    }
  }
  // GPU time compared only when both sides recorded it (KCOUNT_GPU_TIME=0 logs have none): the kernel
  // counts above and here are the comparison then.
  const std::string gpu =
      a.gpu_time && b.gpu_time
          ? fmt::format("GPU time {} -> {} ({})", formatDuration(a.gpu_ns), formatDuration(b.gpu_ns),
                        percentChange(a.gpu_ns, b.gpu_ns))
          : fmt::format("GPU time not recorded in {} (KCOUNT_GPU_TIME=0; compare kernel counts)",
                        !a.gpu_time && !b.gpu_time ? "A and B" : !a.gpu_time ? "A" : "B");
  lines.push_back(fmt::format("launches {} -> {} ({}), kernels {} -> {} ({}), {}, launch calls {} -> {} ({})",
                              a.launches, b.launches, signedCount(int64_t(b.launches) - int64_t(a.launches)),
                              a.kernels, b.kernels, signedCount(int64_t(b.kernels) - int64_t(a.kernels)), gpu,
                              formatDuration(a.launch_api_ns), formatDuration(b.launch_api_ns),
                              percentChange(a.launch_api_ns, b.launch_api_ns)));
  return lines;
}

json diffJson(const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb) {
  const DiffSide a = diffSide(la), b = diffSide(lb);
  json pa = json::array(), pb = json::array();
  for (const auto& l : la) pa.push_back(l.path);
  for (const auto& l : lb) pb.push_back(l.path);
  std::vector<std::string> paths = a.paths;
  for (const auto& p : b.paths)
    if (!a.units.count(p)) paths.push_back(p);
  static const DiffUnit kAbsent;
  json ranges = json::array();
  for (const auto& p : paths) {
    if (p == kOverall) continue;
    const DiffUnit& ua = a.units.count(p) ? a.units.at(p) : kAbsent;
    const DiffUnit& ub = b.units.count(p) ? b.units.at(p) : kAbsent;
    ranges.push_back(json{{"path", p},
                          {"in", ua.present && ub.present ? "both" : ua.present ? "a" : "b"},
                          {"a", unitJson(ua)},
                          {"b", unitJson(ub)},
                          {"change", changeJson(ua, ub)},
                          {"children_a", ua.children},
                          {"children_b", ub.children},
                          {"nesting_differs", ua.present && ub.present && ua.children != ub.children}});
  }
  const DiffUnit& oa = a.units.at(kOverall);
  const DiffUnit& ob = b.units.at(kOverall);
  const KernelMatch m = matchKernels(oa, ob);
  auto gpuOf = [](const DiffUnit& u, uint64_t ns) { return u.gpu_time ? json(ns) : json(nullptr); };
  auto kernelList = [&](const DiffUnit& u, const std::vector<std::string>& ids) {
    json arr = json::array();
    for (const auto& id : ids) {
      const DiffKernel& k = u.by_identity.at(id);
      arr.push_back(json{{"identity", id}, {"name", k.name}, {"short", k.short_full}, {"category", k.category},
                         {"count", k.count}, {"gpu_ns", gpuOf(u, k.gpu_ns)}});
    }
    return arr;
  };
  json same = json::array();
  for (const auto& id : m.same)
    same.push_back(json{{"identity", id},
                        {"short", oa.by_identity.at(id).short_full},
                        {"category", oa.by_identity.at(id).category},
                        {"count_a", oa.by_identity.at(id).count},
                        {"count_b", ob.by_identity.at(id).count},
                        {"gpu_ns_a", gpuOf(oa, oa.by_identity.at(id).gpu_ns)},
                        {"gpu_ns_b", gpuOf(ob, ob.by_identity.at(id).gpu_ns)}});
  json verdicts = json::array();
  for (const auto& p : verdictUnits(a, b))
    verdicts.push_back(json{{"unit", p}, {"lines", diffVerdicts(a.units.at(p), b.units.at(p), unitName(a, p))}});
  return json{{"a", pa},
              {"b", pb},
              {"gpu_time", json{{"a", a.gpu_time}, {"b", b.gpu_time}}},
              // > 1: that side's launch_api_ns are estimates (KCOUNT_LAUNCH_TIMING)
              {"launch_timing_sample", json{{"a", a.launch_timing_sample}, {"b", b.launch_timing_sample}}},
              {"overall", json{{"a", unitJson(oa)}, {"b", unitJson(ob)}, {"change", changeJson(oa, ob)}}},
              {"ranges", ranges},
              {"kernels", json{{"same", same}, {"only_a", kernelList(oa, m.only_a)}, {"only_b", kernelList(ob, m.only_b)}}},
              {"verdicts", verdicts}};
}

void printDiff(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb) {
  const json j = diffJson(la, lb);
  auto names = [](const json& arr) {
    std::string s;
    for (const auto& p : arr) s += (s.empty() ? "" : ", ") + p.get<std::string>();
    return s;
  };
  auto rangeNames = [](const json& arr) {
    std::string s;
    for (const auto& p : arr) s += (s.empty() ? "" : ", ") + displayName(p.get<std::string>());
    return s;
  };
  out << "A: " << names(j["a"]) << "\nB: " << names(j["b"]) << "\n\n";
  const DiffSide a = diffSide(la), b = diffSide(lb);
  struct Row {
    std::string path;
    const DiffUnit* ua;
    const DiffUnit* ub;
  };
  static const DiffUnit kAbsent;
  std::vector<Row> rows{{kOverall, &a.units.at(kOverall), &b.units.at(kOverall)}};
  for (const auto& r : j["ranges"]) {
    const std::string p = r["path"];
    rows.push_back({p, a.units.count(p) ? &a.units.at(p) : &kAbsent, b.units.count(p) ? &b.units.at(p) : &kAbsent});
  }
  // Long range paths are shortened in the text (the JSON keeps them whole), all together so that
  // different ranges stay distinguishable (elideDistinct).
  std::map<std::string, std::string> short_of;
  {
    std::vector<std::string> all;
    for (const auto& r : rows)
      if (r.path != kOverall) all.push_back(shownPath(a, b, r.path));
    for (const auto& r : j["ranges"]) all.push_back(shownPath(a, b, r["path"]));
    for (const auto& v : j["verdicts"])
      if (v["unit"] != kOverall) all.push_back(shownPath(a, b, v["unit"]));
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    const std::vector<std::string> shown = elideDistinct(all);
    for (size_t i = 0; i < all.size(); ++i) short_of[all[i]] = shown[i];
  }
  auto shortPath = [&](const std::string& path) {
    const std::string full = shownPath(a, b, path);
    const auto it = short_of.find(full);
    return it != short_of.end() ? it->second : elideMiddle(full);
  };
  // Text table: A, B and the change for launches, kernels, GPU time, CPU time, launch calls.
  std::vector<std::vector<std::string>> cells;
  cells.push_back({"range", "inst A", "inst B", "launches A", "B", "change", "kernels A", "B", "change", "GPU A", "B",
                   "change", "CPU A", "B", "change", "launch CPU A", "B", "change"});
  for (const auto& r : rows) {
    const DiffUnit& x = *r.ua;
    const DiffUnit& y = *r.ub;
    auto v = [](const DiffUnit& u, uint64_t n) { return u.present ? std::to_string(n) : std::string("-"); };
    auto t = [](const DiffUnit& u, uint64_t ns) { return u.present ? formatDuration(ns) : std::string("-"); };
    auto g = [](const DiffUnit& u, uint64_t ns) {  // GPU time: '-' also where the side did not record it
      return u.present && u.gpu_time ? formatDuration(ns) : std::string("-");
    };
    const bool both = x.present && y.present;
    auto dc = [&](uint64_t p, uint64_t q) { return both ? signedCount(int64_t(q) - int64_t(p)) : std::string("-"); };
    auto dt = [&](uint64_t p, uint64_t q) {
      return both ? signedDuration(p, q) + " (" + percentChange(p, q) + ")" : std::string("-");
    };
    const bool has_cpu = r.path != kOverall && r.path != "(no range)" && r.path != kUnresolvedLabel;
    // Long names are shortened in the table (the JSON keeps them whole).
    cells.push_back({r.path == kOverall ? r.path : shortPath(r.path), v(x, x.instances), v(y, y.instances), v(x, x.launches), v(y, y.launches),
                     dc(x.launches, y.launches), v(x, x.kernels), v(y, y.kernels), dc(x.kernels, y.kernels),
                     g(x, x.gpu_ns), g(y, y.gpu_ns), x.gpu_time && y.gpu_time ? dt(x.gpu_ns, y.gpu_ns) : "-", has_cpu ? t(x, x.cpu_ns) : "-",
                     has_cpu ? t(y, y.cpu_ns) : "-", has_cpu ? dt(x.cpu_ns, y.cpu_ns) : "-",
                     t(x, x.launch_api_ns), t(y, y.launch_api_ns), dt(x.launch_api_ns, y.launch_api_ns)});
  }
  std::vector<size_t> w(cells[0].size(), 0);
  for (const auto& row : cells)
    for (size_t i = 0; i < row.size(); ++i) {
      size_t n = 0;
      for (char c : row[i]) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      w[i] = std::max(w[i], n);
    }
  for (size_t r = 0; r < cells.size(); ++r) {
    std::string line;
    for (size_t i = 0; i < cells[r].size(); ++i) {
      size_t n = 0;
      for (char c : cells[r][i]) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      const std::string pad(w[i] - n, ' ');
      line += i == 0 ? cells[r][i] + pad : "  " + pad + cells[r][i];
    }
    out << line << '\n';
    if (r == 0) out << std::string(line.size(), '-') << '\n';
  }
  if (!a.gpu_time || !b.gpu_time)
    out << fmt::format("GPU time: not recorded in {} (KCOUNT_GPU_TIME=0: kernels counted at their launch calls); "
                       "no GPU-time change is given, the verdicts compare kernel counts\n",
                       !a.gpu_time && !b.gpu_time ? "A and B" : !a.gpu_time ? "A" : "B");
  if (a.launch_timing_sample > 1 || b.launch_timing_sample > 1) {
    auto side = [](const char* name, uint64_t n) {
      return n > 1 ? fmt::format("{} (1 in {} calls timed)", name, n) : std::string();
    };
    const std::string sa = side("A", a.launch_timing_sample), sb = side("B", b.launch_timing_sample);
    out << fmt::format("launch CPU: estimated in {} (KCOUNT_LAUNCH_TIMING); its changes are rough for ranges with "
                       "few launches\n",
                       sa.empty() ? sb : sb.empty() ? sa : sa + " and " + sb);
  }
  out << '\n';
  bool nesting = false;
  for (const auto& r : j["ranges"]) {
    if (r["in"] != "both") continue;
    if (r["nesting_differs"].get<bool>()) {
      out << fmt::format("nesting differs under {}: A has [{}], B has [{}]\n", shortPath(r["path"]),
                         rangeNames(r["children_a"]), rangeNames(r["children_b"]));
      nesting = true;
    }
  }
  for (const auto& r : j["ranges"])
    if (r["in"] != "both") {
      out << fmt::format("only in {}: {}\n", r["in"] == "a" ? "A" : "B", shortPath(r["path"]));
      nesting = true;
    }
  if (nesting) out << '\n';
  const auto& k = j["kernels"];
  out << fmt::format("kernels (whole run, matched by decoded identity): {} same, {} only in A, {} only in B\n",
                     k["same"].size(), k["only_a"].size(), k["only_b"].size());
  // Kernel names as text shows them: cut (shortKernelName) and escaped (displayText); JSON keeps them whole.
  auto shown = [&](const DiffSide& side, const json& e) {
    return displayText(side.units.at(kOverall).by_identity.at(e["identity"].get<std::string>()).short_name);
  };
  for (const auto& e : k["same"])
    out << fmt::format("  same    {:<13} {} (A ×{}, B ×{})\n", e["category"].get<std::string>(), shown(a, e),
                       e["count_a"].get<uint64_t>(), e["count_b"].get<uint64_t>());
  for (const auto& e : k["only_a"])
    out << fmt::format("  only A  {:<13} {} ×{}\n", e["category"].get<std::string>(), shown(a, e),
                       e["count"].get<uint64_t>());
  for (const auto& e : k["only_b"])
    out << fmt::format("  only B  {:<13} {} ×{}\n", e["category"].get<std::string>(), shown(b, e),
                       e["count"].get<uint64_t>());
  for (const auto& v : j["verdicts"]) {
    out << "\nverdict for "
        << (v["unit"] == kOverall ? std::string("the whole run") : shortPath(v["unit"]))
        << ":\n";
    // The lines name kernels and ranges as recorded: escaped here (JSON keeps them raw).
    for (const auto& line : v["lines"]) out << "  " << displayText(line.get<std::string>()) << '\n';
  }
}

}  // namespace kc
