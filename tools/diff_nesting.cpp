#include "tools/diff_nesting.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "collector/counted.h"
#include "tools/name_elision.h"

namespace kc {
namespace {

std::string compactName(const std::string& s);

bool presentIn(const DiffSide& side, const std::string& p) {
  auto it = side.units.find(p);
  return it != side.units.end() && it->second.present;
}

/// Adds child `u`'s numbers to the group `sum` (kernels, launches, GPU time, identities).
void addChild(DiffUnit& sum, const DiffUnit& u) {
  sum.present = true;
  sum.launches += u.launches;
  sum.kernels += u.kernels;
  sum.gpu_ns += u.gpu_ns;
  sum.gpu_time = u.gpu_time;
  for (const auto& [id, k] : u.by_identity) {
    DiffKernel& s = sum.by_identity[id];
    if (s.name.empty()) {
      const uint64_t count = s.count, gpu = s.gpu_ns;
      s = k;
      s.count = count;
      s.gpu_ns = gpu;
    }
    s.count += k.count;
    s.gpu_ns += k.gpu_ns;
  }
}

/// "5", "2.50" or the total where the common range has no instances.
std::string perInstance(uint64_t n, uint64_t instances) {
  if (instances == 0) return std::to_string(n);
  if (n % instances == 0) return std::to_string(n / instances);
  return fmt::format("{:.2f}", double(n) / double(instances));
}

/// The identities of one side of a regrouping as regroupKernelsLines() lists them.
std::string kernelsText(const DiffUnit& u, uint64_t instances) {
  uint64_t gemm = 0;
  std::vector<const DiffKernel*> others;
  for (const auto& [id, k] : u.by_identity) {
    if (k.category == "GEMM")
      gemm += k.count;
    else
      others.push_back(&k);
  }
  std::stable_sort(others.begin(), others.end(), [](const DiffKernel* x, const DiffKernel* y) {
    if (x->gpu_ns != y->gpu_ns) return x->gpu_ns > y->gpu_ns;
    return x->count > y->count;
  });
  std::vector<std::string> parts;
  if (gemm > 0) parts.push_back(perInstance(gemm, instances) + " GEMM");
  for (const DiffKernel* k : others) {
    const std::string n = perInstance(k->count, instances);
    parts.push_back(n == "1" ? compactKernelName(*k) : n + "× " + compactKernelName(*k));
  }
  if (parts.empty()) return "no kernels";
  std::string s;
  for (size_t i = 0; i < parts.size() && i < kMaxRegroupKernels; ++i) s += (s.empty() ? "" : " + ") + parts[i];
  if (parts.size() > kMaxRegroupKernels) s += fmt::format(" and {} more", parts.size() - kMaxRegroupKernels);
  return s;
}

/// `s` without the template arguments at its outermost level ("f<a, b<c>>" -> "f").
std::string withoutTemplate(const std::string& s) {
  std::string out;
  int depth = 0;
  for (char c : s) {
    if (c == '<') ++depth;
    else if (c == '>') depth = std::max(0, depth - 1);
    else if (depth == 0) out += c;
  }
  return out;
}

/// The last component of a qualified name ("at::native::f" -> "f"), spaces trimmed.
std::string lastComponent(std::string s) {
  if (const size_t at = s.rfind("::"); at != std::string::npos) s = s.substr(at + 2);
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

/// A plain identifier that names something (a functor, a kernel): letters, digits and '_', not starting
/// with a digit, not a literal or a scalar type (`<BFloat16, float, true>` names no operation).
bool isIdentifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (const char* w : {"true", "false", "float", "double", "int", "long", "bool", "char", "short", "unsigned",
                        "Half", "BFloat16", "half", "float8_e4m3fn", "float8_e5m2", "int64_t", "int32_t"})
    if (s == w) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string compactKernelName(const DiffKernel& k) {
  return elideMiddle(compactName(k.short_full.empty() ? k.short_name : k.short_full), kMaxCompactName);
}

namespace {
std::string compactName(const std::string& s) {
  const size_t open = s.find('<');
  const std::string base = lastComponent(withoutTemplate(s));
  if (open == std::string::npos || s.back() != '>') return base.empty() ? s : base;
  // The last argument at the outermost template level.
  int depth = 0;
  size_t start = open + 1;
  for (size_t i = open; i + 1 < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>') --depth;
    else if (s[i] == ',' && depth == 1) start = i + 1;
  }
  const std::string arg = lastComponent(withoutTemplate(s.substr(start, s.size() - 1 - start)));
  if (isIdentifier(arg)) return arg;
  return base.empty() ? s : base;
}
}  // namespace

std::vector<Regrouping> regroupings(const DiffSide& a, const DiffSide& b) {
  // parent -> children (DiffSide keys) in each side's depth-first order
  auto childrenOf = [](const DiffSide& side) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& p : side.paths)
      if (auto it = side.parents.find(p); it != side.parents.end()) out[it->second].push_back(p);
    return out;
  };
  const auto ca = childrenOf(a), cb = childrenOf(b);
  std::vector<Regrouping> out;
  for (const auto& parent : a.paths) {
    // Top-level ranges of one side are different work (workDiff()), not the same work nested otherwise.
    if (parent == kOverall || !presentIn(a, parent) || !presentIn(b, parent)) continue;
    Regrouping r;
    r.parent = parent;
    for (const auto& [side, other, children, paths, names, sum] :
         {std::tuple{&a, &b, &ca, &r.paths_a, &r.names_a, &r.a}, std::tuple{&b, &a, &cb, &r.paths_b, &r.names_b, &r.b}}) {
      auto it = children->find(parent);
      if (it == children->end()) continue;
      for (const auto& p : it->second) {
        if (presentIn(*other, p) || !presentIn(*side, p)) continue;
        paths->push_back(p);
        auto n = side->names.find(p);
        names->push_back(n != side->names.end() ? n->second : p);
        addChild(*sum, side->units.at(p));
      }
    }
    if (r.paths_a.empty() && r.paths_b.empty()) continue;
    r.instances_a = a.units.at(parent).instances;
    r.instances_b = b.units.at(parent).instances;
    out.push_back(std::move(r));
  }
  return out;
}

std::string regroupLine(const Regrouping& r, const std::string& unit) {
  auto side = [&](const std::vector<std::string>& names, const DiffUnit& u, uint64_t instances) {
    if (names.empty()) return std::string("nothing");
    std::string s;
    for (size_t i = 0; i < names.size() && i < kMaxRegroupNames; ++i) s += (s.empty() ? "" : ", ") + names[i];
    if (names.size() > kMaxRegroupNames) s += fmt::format(" and {} more", names.size() - kMaxRegroupNames);
    const std::string per = instances > 0 ? " per " + elideMiddle(unit) : "";
    return fmt::format("{} ({} kernel{}{})", s, perInstance(u.kernels, instances),
                       perInstance(u.kernels, instances) == "1" ? "" : "s", per);
  };
  return fmt::format("{} in A ran as {} in B", side(r.names_a, r.a, r.instances_a),
                     side(r.names_b, r.b, r.instances_b));
}

std::vector<std::string> regroupKernelsLines(const Regrouping& r) {
  if (r.a.kernels == 0 && r.b.kernels == 0) return {};
  return {"A: " + kernelsText(r.a, r.instances_a), "B: " + kernelsText(r.b, r.instances_b)};
}

nlohmann::json regroupJson(const Regrouping& r) {
  return nlohmann::json{{"under", r.parent},          {"a", r.names_a},
                        {"b", r.names_b},             {"kernels_a", r.a.kernels},
                        {"kernels_b", r.b.kernels},   {"instances_a", r.instances_a},
                        {"instances_b", r.instances_b}};
}

}  // namespace kc
