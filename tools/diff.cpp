#include "tools/diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "tools/diff_answer.h"
#include "tools/diff_nesting.h"
#include "tools/export.h"
#include "tools/json_writer.h"
#include "tools/kernel_decode.h"
#include "tools/kernel_names.h"
#include "tools/log_state.h"
#include "tools/name_elision.h"
#include "tools/range_names.h"
#include "tools/range_tree.h"
#include "tools/table_width.h"
#include "tools/text.h"
#include "tools/text_table.h"
#include "collector/analysis.h"
#include "collector/counted.h"

namespace kc {

std::optional<int64_t> sumChange(uint64_t a, uint64_t b) noexcept {
  if (a == kSaturated || b == kSaturated) return std::nullopt;
  constexpr uint64_t kMost = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (b >= a) return b - a <= kMost ? std::optional<int64_t>(static_cast<int64_t>(b - a)) : std::nullopt;
  return a - b <= kMost ? std::optional<int64_t>(-static_cast<int64_t>(a - b)) : std::nullopt;
}

namespace {

using nlohmann::json;

void addStats(DiffUnit& u, const LogData& d, const RangeStats& r, uint64_t instances, uint64_t cpu_ns,
              std::unordered_map<uint32_t, DecodedKernel>& cache) {
  // Sums over a side's logs are held at kSaturated, as each log's own (collector/saturating.h).
  u.present = true;
  satAdd(u.instances, instances);
  satAdd(u.cpu_ns, cpu_ns);
  satAdd(u.launches, r.launches);
  satAdd(u.kernels, r.kernels);
  satAdd(u.gpu_ns, r.gpu_ns);
  satAdd(u.launch_api_ns, r.launch_api_ns);
  satAdd(u.mem_ops, r.memcpy_count);
  satAdd(u.mem_ops, r.memset_count);
  satAdd(u.mem_gpu_ns, r.memcpy_ns);
  satAdd(u.mem_gpu_ns, r.memset_ns);
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
    satAdd(k.count, t.count);
    satAdd(k.gpu_ns, t.gpu_ns);
  }
}

std::string signedCount(int64_t v) { return v > 0 ? fmt::format("+{}", v) : fmt::format("{}", v); }

/// The text table's change of a count, a to b: "+3", "-1", "0"; kUnknownChange where sumChange() gives none.
std::string countChange(uint64_t a, uint64_t b) {
  const auto d = sumChange(a, b);
  return d ? signedCount(*d) : std::string(kUnknownChange);
}

/// percentChange(a, b), or kUnknownChange where sumChange() gives none.
std::string percentOrUnknown(uint64_t a, uint64_t b) {
  return sumChange(a, b) ? percentChange(a, b) : std::string(kUnknownChange);
}

/// "+1.20 ms (+12%)", "-300 ns (-4%)"; no change is "0 ns (0%)" (no sign, as signedCount() writes 0);
/// kUnknownChange where sumChange() gives none (a sum held at 2^64 - 1, or a change past 2^63 - 1 ns).
std::string durationChange(uint64_t a, uint64_t b) {
  const auto d = sumChange(a, b);
  if (!d) return std::string(kUnknownChange);
  const std::string pct = " (" + percentChange(a, b) + ")";
  if (*d == 0) return formatDuration(0) + pct;
  if (*d > 0) return "+" + formatDuration(b - a) + pct;
  return "-" + formatDuration(a - b) + pct;
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

/// `ids` of side `u`, largest GPU time first, then most kernels, then identity: the kernels that cost
/// the most are the ones a bounded list names.
std::vector<std::string> byCost(const DiffUnit& u, const std::set<std::string>& ids) {
  std::vector<std::string> out(ids.begin(), ids.end());
  std::stable_sort(out.begin(), out.end(), [&](const std::string& x, const std::string& y) {
    const DiffKernel& kx = u.by_identity.at(x);
    const DiffKernel& ky = u.by_identity.at(y);
    if (kx.gpu_ns != ky.gpu_ns) return kx.gpu_ns > ky.gpu_ns;
    return kx.count > ky.count;
  });
  return out;
}

/// Most characters of a kernel's fused-ops text ("[_unsafe_view, gelu, mul]") in a verdict line.
constexpr size_t kMaxOpsText = 40;
/// Narrowest a name is shortened to when even one name per list does not fit a verdict line.
constexpr size_t kMinListedName = 16;

/// The kernels of each list (identities on their side, byCost() order) as a verdict line names them:
/// short names shortened to `name_width` characters, distinct across all the lists (elideDistinct),
/// a shortened Triton kernel's name followed by its fused ops in brackets (at most kMaxOpsText characters,
/// nor `name_width`).
std::vector<std::vector<std::string>> kernelItems(
    const std::vector<std::pair<const DiffUnit*, std::vector<std::string>>>& lists, size_t name_width) {
  std::vector<std::string> names;
  for (const auto& [u, ids] : lists)
    for (const auto& id : ids) names.push_back(u->by_identity.at(id).short_name);
  const std::vector<std::string> shown = elideDistinct(names, name_width);
  std::vector<std::vector<std::string>> out;
  size_t i = 0;
  for (const auto& [u, ids] : lists) {
    out.emplace_back();
    for (const auto& id : ids) {
      std::string s = shown[i++];
      const DiffKernel& k = u->by_identity.at(id);
      // Inductor writes the fused ops into the name: listed apart only when the name shown is shortened.
      if (!k.ops.empty() && s != k.short_full) {
        std::string ops;
        for (const auto& o : k.ops) ops += (ops.empty() ? "" : ", ") + o;
        s += " [" + elideMiddle(ops, std::min(kMaxOpsText, name_width)) + "]";
      }
      out.back().push_back(std::move(s));
    }
  }
  return out;
}

/// Each list joined with `sep`, as many items as fit together in `budget` characters (at most
/// kMaxNamesListed per list, added one per list in turn), the rest counted: "x, y and 7 more". Every
/// non-empty list names at least one item, shortened (elideMiddle, not below kMinListedName characters)
/// when even that does not fit.
struct Fitted {
  std::vector<std::string> texts;  // one per list
  size_t named = 0;                // items named in all the texts
};
Fitted fitLists(std::vector<std::vector<std::string>> lists, size_t budget, const std::string& sep) {
  std::vector<size_t> n(lists.size(), 0);
  auto text = [&](size_t i) {
    std::string s;
    for (size_t k = 0; k < n[i]; ++k) s += (k == 0 ? "" : sep) + lists[i][k];
    if (n[i] < lists[i].size()) s += fmt::format(" and {} more", lists[i].size() - n[i]);
    return s;
  };
  auto total = [&] {
    size_t t = 0;
    for (size_t i = 0; i < lists.size(); ++i) t += displayWidth(text(i));
    return t;
  };
  for (size_t i = 0; i < lists.size(); ++i) n[i] = lists[i].empty() ? 0 : 1;
  if (total() > budget) {  // even one item each is too long: shorten the first items to a share each
    size_t nonempty = 0;
    for (const auto& l : lists) nonempty += !l.empty();
    for (size_t i = 0; i < lists.size(); ++i) {
      if (lists[i].empty()) continue;
      const size_t more = displayWidth(text(i)) - displayWidth(lists[i][0]);  // " and N more"
      const size_t share = budget / nonempty;
      lists[i][0] = elideMiddle(lists[i][0], std::max(kMinListedName, share > more ? share - more : 0));
    }
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < lists.size(); ++i) {
      if (n[i] >= std::min(lists[i].size(), kMaxNamesListed)) continue;
      ++n[i];
      if (total() <= budget)
        grew = true;
      else
        --n[i];
    }
  }
  Fitted out;
  for (size_t i = 0; i < lists.size(); ++i) {
    out.texts.push_back(text(i));
    out.named += n[i];
  }
  return out;
}

/// `head`, then for each non-empty list its label and its items (fitLists()), then `tail`: a verdict line
/// of at most kMaxVerdictLine characters where head and tail leave room for the lists. Also returns how
/// many items it names.
std::pair<std::string, size_t> withLists(const std::string& head,
                                         const std::vector<std::pair<std::string, std::vector<std::string>>>& parts,
                                         const std::string& tail, const std::string& sep = ", ") {
  size_t fixed = displayWidth(head) + displayWidth(tail);
  std::vector<std::vector<std::string>> lists;
  for (const auto& [label, items] : parts)
    if (!items.empty()) {
      fixed += displayWidth(label);
      lists.push_back(items);
    }
  const Fitted fit = fitLists(lists, kMaxVerdictLine > fixed ? kMaxVerdictLine - fixed : 0, sep);
  std::string s = head;
  size_t i = 0;
  for (const auto& [label, items] : parts)
    if (!items.empty()) s += label + fit.texts[i++];
  return {s + tail, fit.named};
}

/// Name widths a verdict line tries for its kernels, widest first: a name shortened to 40 characters
/// keeps the tail that tells ATen kernels apart (`…<8, MulFunctor>`), so naming one more kernel that way
/// says more than one name at full width.
constexpr size_t kKernelNameWidths[] = {kMaxNameColumn, 48, 40};

/// A verdict line naming kernels: `head`, each list of kernels (label, side, identities in byCost() order)
/// and `tail`, with the name width of kKernelNameWidths that names the most of them (the widest of equals).
std::string kernelLine(const std::string& head,
                       const std::vector<std::tuple<std::string, const DiffUnit*, std::vector<std::string>>>& parts,
                       const std::string& tail) {
  std::vector<std::pair<const DiffUnit*, std::vector<std::string>>> lists;
  for (const auto& [label, u, ids] : parts) lists.emplace_back(u, ids);
  std::pair<std::string, size_t> best{"", 0};
  for (size_t w : kKernelNameWidths) {
    const auto items = kernelItems(lists, w);
    std::vector<std::pair<std::string, std::vector<std::string>>> labelled;
    for (size_t i = 0; i < parts.size(); ++i) labelled.emplace_back(std::get<0>(parts[i]), items[i]);
    auto line = withLists(head, labelled, tail);
    if (best.first.empty() || line.second > best.second) best = std::move(line);
  }
  return best.first;
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

/// A unit's CPU time (the wall time of its instances) is measured only where it has instances: not for
/// "(overall)", "(no range)", the unknown range or a range with no instance (summary's rule: null in JSON,
/// '-' in the table, empty in CSV), never 0.
bool cpuMeasured(const DiffUnit& u) { return u.present && u.instances > 0; }

json unitJson(const DiffUnit& u) {
  if (!u.present) return nullptr;
  return json{{"instances", u.instances}, {"cpu_ns", cpuMeasured(u) ? json(u.cpu_ns) : json(nullptr)},
              {"launches", u.launches},
              {"kernels", u.kernels},     {"gpu_ns", u.gpu_time ? json(u.gpu_ns) : json(nullptr)},
              {"launch_api_ns", u.launch_api_ns},
              {"kernel_identities", u.by_identity.size()},
              {"mem_ops", u.mem_ops_recorded ? json(u.mem_ops) : json(nullptr)},
              {"mem_gpu_ns", u.mem_ops_recorded ? json(u.mem_gpu_ns) : json(nullptr)}};
}

json changeJson(const DiffUnit& a, const DiffUnit& b) {
  if (!a.present || !b.present) return nullptr;
  auto d = [](uint64_t x, uint64_t y) {  // null where sumChange() gives none
    const auto c = sumChange(x, y);
    return c ? json(*c) : json(nullptr);
  };
  const bool mem = a.mem_ops_recorded && b.mem_ops_recorded;
  return json{{"launches", d(a.launches, b.launches)},
              {"kernels", d(a.kernels, b.kernels)},
              {"gpu_ns", a.gpu_time && b.gpu_time ? d(a.gpu_ns, b.gpu_ns) : json(nullptr)},
              {"cpu_ns", cpuMeasured(a) && cpuMeasured(b) ? d(a.cpu_ns, b.cpu_ns) : json(nullptr)},
              {"launch_api_ns", d(a.launch_api_ns, b.launch_api_ns)},
              {"mem_ops", mem ? d(a.mem_ops, b.mem_ops) : json(nullptr)},
              {"mem_gpu_ns", mem ? d(a.mem_gpu_ns, b.mem_gpu_ns) : json(nullptr)}};
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

/// One kernel identity of the whole run on both sides (the diff's kernels section, a CSV kernel row).
struct KernelRow {
  const char* in;          // "same", "only A", "only B"
  const std::string* id;   // the identity (a key of DiffUnit::by_identity)
  const DiffKernel* ka;    // null: not in A
  const DiffKernel* kb;    // null: not in B
};

/// The kernel identities of the whole run (same, only in A, only in B), largest GPU time first (the larger
/// of A's and B's, on the sides that recorded GPU time; then the larger count). Points into `k`, `a`, `b`.
std::vector<KernelRow> kernelRows(const KernelMatch& k, const DiffSide& a, const DiffSide& b) {
  const DiffUnit& oa = a.units.at(kOverall);
  const DiffUnit& ob = b.units.at(kOverall);
  std::vector<KernelRow> rows;
  for (const auto& id : k.same) rows.push_back({"same", &id, &oa.by_identity.at(id), &ob.by_identity.at(id)});
  for (const auto& id : k.only_a) rows.push_back({"only A", &id, &oa.by_identity.at(id), nullptr});
  for (const auto& id : k.only_b) rows.push_back({"only B", &id, nullptr, &ob.by_identity.at(id)});
  auto cost = [&](const KernelRow& r) {
    uint64_t g = 0;
    if (r.ka && a.gpu_time) g = std::max(g, r.ka->gpu_ns);
    if (r.kb && b.gpu_time) g = std::max(g, r.kb->gpu_ns);
    return g;
  };
  auto most = [](const KernelRow& r) { return std::max(r.ka ? r.ka->count : 0, r.kb ? r.kb->count : 0); };
  std::stable_sort(rows.begin(), rows.end(), [&](const KernelRow& x, const KernelRow& y) {
    if (cost(x) != cost(y)) return cost(x) > cost(y);
    return most(x) > most(y);
  });
  return rows;
}

/// The kernels section of the text: one row per kernel identity of the whole run in kernelRows()' order,
/// with the count and GPU time on each side and the GPU time's change (a side without the kernel counts
/// 0 ns). Names as in the kernels table: shortened in the middle to kMaxNameColumn display columns,
/// distinct (tellKernelsApart, elideDistinct), and further to fit `max_width` columns when they can
/// (fitTable(); 0: no limit).
/// With `full_names`, each kernel is named by its full demangled name (escaped), neither shortened nor
/// narrowed.
///
/// With `shown` (the default layout: rows of kernelRows() by index, in order), only those rows are printed,
/// their names shortened as among every row; the heading says how many.
void printKernels(std::ostream& out, const KernelMatch& k, const DiffSide& a, const DiffSide& b, size_t max_width,
                  bool full_names, const std::vector<size_t>* shown = nullptr) {
  const std::vector<KernelRow> rows = kernelRows(k, a, b);
  const std::string which =
      shown && shown->size() < rows.size()
          ? fmt::format(", the {} with the largest change of {}", shown->size(), rows.size())
          : std::string();
  out << fmt::format("kernels (whole run, matched by decoded identity, largest GPU time first{}): {} same, {} only in "
                     "A, {} only in B\n",
                     which, k.same.size(), k.only_a.size(), k.only_b.size());
  if (rows.empty()) return;
  // Kernel names as the kernels table shows them: the short name whole (shortKernelNameUncut), escaped
  // (displayText), different kernels whose short names are equal by their demangled names
  // (tellKernelsApart), all shortened in the middle together to the name column's width, so that names that
  // differ near their end stay different; JSON keeps them whole.
  std::vector<std::string> names, recorded;
  for (const auto& r : rows) {
    const DiffKernel* k = r.ka ? r.ka : r.kb;
    names.push_back(displayText(full_names ? displayKernelName(k->name, true) : k->short_full));
    recorded.push_back(k->name);
  }
  NameColumn kernel_names;  // whole, for fitTable() to narrow to max_width
  kernel_names.index = 2;
  if (!full_names) {
    tellKernelsApart(names, recorded, std::numeric_limits<size_t>::max());
    kernel_names.names = names;
    names = elideDistinct(names);
  }
  Table t;
  t.head = {"", "category", "kernel", "count A", "B", "GPU A", "B", "change"};
  t.right = {false, false, false, true, true, true, true, true};  // "", category, kernel: left-aligned
  t.indent = 2;
  t.rule = Table::Rule::kNone;
  const bool gpu = a.gpu_time && b.gpu_time;
  if (shown) {  // the rows shown, their names as shortened among all rows
    std::vector<std::string> some, whole;
    for (size_t i : *shown) {
      some.push_back(names[i]);
      if (!full_names) whole.push_back(kernel_names.names[i]);
    }
    names = std::move(some);
    if (!full_names) kernel_names.names = std::move(whole);
  }
  const size_t n_rows = shown ? shown->size() : rows.size();
  for (size_t j = 0; j < n_rows; ++j) {
    const size_t i = j;
    const KernelRow& r = rows[shown ? (*shown)[j] : j];
    auto count = [](const DiffKernel* x) { return x ? std::to_string(x->count) : std::string("-"); };
    auto time = [](const DiffKernel* x, bool recorded) {
      return x && recorded ? formatDuration(x->gpu_ns) : std::string("-");
    };
    const uint64_t ga = r.ka ? r.ka->gpu_ns : 0, gb = r.kb ? r.kb->gpu_ns : 0;
    t.rows.push_back({r.in, (r.ka ? r.ka : r.kb)->category, names[i], count(r.ka), count(r.kb), time(r.ka, a.gpu_time),
                     time(r.kb, b.gpu_time),
                     gpu ? durationChange(ga, gb) : std::string("-")});
  }
  // Kept at any width: same/only, the kernel, GPU time's change (docs/usage.md, "Fitting --width").
  if (!full_names) {
    t.max_width = max_width;
    t.fit.push_back(std::move(kernel_names));
    t.drop = {0, 3, 0, 2, 2, 1, 1, 0};
    t.labels = {"", "", "", "count A/B", "count A/B", "GPU A/B", "GPU A/B", ""};
  }
  t.print(out);
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
        const auto domain = rangeDomain(d, id);
        const std::string name = d.scopeLost(id) ? lostRangeName(d.logScopeId(id))
                                 : domain       ? *domain + ": " + std::string(d.str(name_id))
                                                : std::string(d.str(name_id));
        if (domain) side.domains.try_emplace(path, *domain);
        // Top-level ranges hang under kOverall.
        const uint32_t parent_id = d.scopes[id].parent_id;
        const std::string parent = parent_id == kRootScope ? std::string(kOverall) : displayPath(d, parent_id);
        children[parent].insert(name);
        side.names.try_emplace(path, name);
        side.parents.try_emplace(path, parent);
      }
    }
  }
  for (const auto& l : logs) side.gpu_time = side.gpu_time && gpuTimeRecorded(l.data);
  for (const auto& l : logs) side.graph_spans = side.graph_spans || graphGpuTimeRecorded(l.data);
  for (const auto& l : logs) side.mem_ops_recorded = side.mem_ops_recorded && memOpsRecorded(l.data);
  for (const auto& l : logs) side.launch_timing_sample = std::max(side.launch_timing_sample, launchTimingSample(l.data));
  for (auto& [path, u] : side.units) {
    u.gpu_time = side.gpu_time;
    u.graph_spans = side.graph_spans;
    u.mem_ops_recorded = side.mem_ops_recorded;
    auto c = children.find(path);
    if (c != children.end()) u.children.assign(c->second.begin(), c->second.end());
  }
  return side;
}

std::vector<std::string> logStates(const std::vector<LoadedLog>& logs) {
  std::vector<std::string> out;
  out.reserve(logs.size());
  for (const auto& l : logs) out.push_back(logState(l));
  return out;
}

namespace {
/// sideStates() of a side whose logs' states (logState()) are `log_states`.
std::vector<std::string> statesAmong(const std::vector<std::string>& log_states) {
  std::vector<bool> seen(std::size(kLogStates));
  for (const auto& state : log_states) {
    const auto it = std::find(std::begin(kLogStates), std::end(kLogStates), state);
    seen[static_cast<size_t>(it - std::begin(kLogStates))] = true;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i]) out.emplace_back(kLogStates[i]);
  return out;
}

/// sideState() from sideStates(): the first, furthest from complete; "complete" for no log. Points into
/// `states` or kLogStates.
std::string_view sideWord(const std::vector<std::string>& states) {
  return states.empty() ? kLogStates[std::size(kLogStates) - 1] : std::string_view(states.front());
}
std::string furthestState(const std::vector<std::string>& states) { return std::string(sideWord(states)); }
}  // namespace

std::vector<std::string> sideStates(const std::vector<LoadedLog>& logs) { return statesAmong(logStates(logs)); }

std::string sideState(const std::vector<LoadedLog>& logs) {
  // The state of the log furthest from complete (kLogStates lists logState()'s words in that order).
  return furthestState(sideStates(logs));
}

std::string sideStateLine(const std::vector<LoadedLog>& logs, const std::string& side) {
  return sideStateLine(logs, logStates(logs), side);
}

std::string sideStateLine(const std::vector<LoadedLog>& logs, const std::vector<std::string>& log_states,
                          const std::string& side) {
  std::vector<std::string> states = statesAmong(log_states);
  if (states.empty() || states == std::vector<std::string>{"complete"}) return {};
  // Each log that is not complete, named with its state line, in the order of the states named (kLogStates).
  std::vector<std::pair<size_t, std::string>> named;  // (the state's index in kLogStates, its text)
  bool undercount = false, after_end = false, damaged_whole = false;
  for (size_t k = 0; k < logs.size(); ++k) {
    const LoadedLog& l = logs[k];
    const std::string& state = log_states[k];
    if (state == "complete") continue;
    const size_t rank = std::find(std::begin(kLogStates), std::end(kLogStates), state) - std::begin(kLogStates);
    named.emplace_back(rank, l.path + ": " + logStateWarning(l));
    undercount = undercount || numbersUndercount(l, state);
    after_end = after_end || state == "data after end";
    damaged_whole = damaged_whole || (state == "damaged" && !numbersUndercount(l, state));
  }
  std::stable_sort(named.begin(), named.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::string detail;
  for (const auto& [rank, text] : named) detail += (detail.empty() ? "" : "; ") + text;
  // Bytes after the end record are no part of the recording (a second log, or garbage): the numbers up to
  // the end record are whole; so are those of a log whose damage took no record (junk between chunks). Every
  // other state leaves records of the run out of the numbers, and one such log makes the side undercount.
  std::string consequence;
  if (undercount)
    consequence = fmt::format("{0}'s numbers undercount its run, so its changes (B - A) are not the runs' difference alone", side);
  else if (damaged_whole)
    consequence = fmt::format("{}'s numbers hold every record {}", side,
                              after_end ? "up to the end record (the damage took none)"
                                        : "its Stats record counts (the damage took none)");
  else if (after_end)
    consequence = fmt::format("{}'s numbers are those up to the end record", side);
  else
    consequence = fmt::format("{}'s numbers hold its whole run", side);  // events not tallied in their row only
  std::erase(states, "complete");  // named only beside a state that is not (its logs are not listed)
  std::string words;
  for (const auto& w : states) words += (words.empty() ? "" : " and ") + w;
  return fmt::format("state of {}: {} ({}); {}", side, words, detail, consequence);
}

std::vector<std::string> verdictOrder(const DiffSide& a, const DiffSide& b) {
  std::vector<std::string> ranges;
  for (const auto& p : a.paths) {
    if (p == kOverall || p == "(no range)" || p == kUnresolvedLabel) continue;
    auto ia = a.units.find(p), ib = b.units.find(p);
    if (ib == b.units.end() || !ib->second.present) continue;
    if (ia->second.kernels > 0 && ib->second.kernels > 0) ranges.push_back(p);
  }
  // Most repeated first (the fewer instances of A and B), ranges about as repeated as the most
  // (amongMostRepeated()) together in the logs' order, and the one of them with the most kernels (the
  // unit of work: a server's decode step, not its sampling) before the others.
  auto repeats = [&](const std::string& p) { return std::min(a.units.at(p).instances, b.units.at(p).instances); };
  uint64_t most = 0;
  for (const auto& p : ranges) most = std::max(most, repeats(p));
  auto banded = [&](const std::string& p) { return amongMostRepeated(repeats(p), most) ? most : repeats(p); };
  std::stable_sort(ranges.begin(), ranges.end(),
                   [&](const std::string& x, const std::string& y) { return banded(x) > banded(y); });
  auto kernels = [&](const std::string& p) { return std::max(a.units.at(p).kernels, b.units.at(p).kernels); };
  const auto band_end = std::find_if(ranges.begin(), ranges.end(), [&](const auto& p) { return banded(p) != most; });
  const auto steady = std::max_element(ranges.begin(), band_end,
                                       [&](const auto& x, const auto& y) { return kernels(x) < kernels(y); });
  if (steady != band_end) std::rotate(ranges.begin(), steady, steady + 1);
  ranges.push_back(kOverall);
  return ranges;
}

WorkDiff workDiff(const DiffSide& a, const DiffSide& b) {
  WorkDiff w;
  auto present = [](const DiffSide& side, const std::string& p) {
    auto it = side.units.find(p);
    return it != side.units.end() && it->second.present;
  };
  auto parentOf = [](const DiffSide& side, const std::string& p) {
    auto it = side.parents.find(p);
    return it != side.parents.end() ? it->second : std::string(kOverall);
  };
  for (const auto& p : a.paths) {
    if (p == kOverall || p == "(no range)" || p == kUnresolvedLabel) continue;
    if (!present(b, p)) {
      if (parentOf(a, p) == kOverall) w.only_a.push_back(p);
      continue;
    }
    const uint64_t na = a.units.at(p).instances, nb = b.units.at(p).instances;
    if (na == nb) continue;
    // Only the outermost range whose counts differ: 20 steps against 30 make every range inside a step
    // differ too, and naming them adds nothing.
    const std::string parent = parentOf(a, p);
    if (parent != kOverall && present(a, parent) && present(b, parent) &&
        a.units.at(parent).instances != b.units.at(parent).instances)
      continue;
    w.instances.push_back({p, na, nb});
  }
  for (const auto& p : b.paths) {
    if (p == kOverall || p == "(no range)" || p == kUnresolvedLabel) continue;
    if (!present(a, p) && parentOf(b, p) == kOverall) w.only_b.push_back(p);
  }
  return w;
}

std::string workDiffLine(const WorkDiff& w) {
  if (!w.any()) return {};
  // Range paths as the table shows them (shortened to kMaxNameColumn; the JSON "work_differs" has them whole).
  std::vector<std::string> inst, oa, ob;
  for (const auto& d : w.instances)
    inst.push_back(fmt::format("{} ({} in A, {} in B)", elideMiddle(d.path), d.a, d.b));
  for (const auto& p : w.only_a) oa.push_back(elideMiddle(p));
  for (const auto& p : w.only_b) ob.push_back(elideMiddle(p));
  std::string head = "whole-run totals not comparable: the runs did different work (";
  std::vector<std::pair<std::string, std::vector<std::string>>> parts;
  // The first label that is shown starts without "; ".
  bool first = true;
  for (auto* part : {&inst, &oa, &ob}) {
    if (part->empty()) continue;
    const std::string label = part == &inst ? "instances differ: " : part == &oa ? "top-level ranges only in A: "
                                                                                   : "top-level ranges only in B: ";
    parts.emplace_back((first ? "" : "; ") + label, *part);
    first = false;
  }
  return withLists(head, parts, "); compare per instance in the ranges' verdicts").first;
}

std::string mixedCommandLines(const std::vector<LoadedLog>& logs, const std::string& side) {
  // The program a command line runs: the line without the rank argument torch.distributed.launch adds to
  // each worker's (--local_rank=N, --local-rank=N, --local_rank N), which is the only difference between
  // the ranks of one job.
  auto program = [](const std::string& cmd) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < cmd.size()) {
      const size_t j = std::min(cmd.find(' ', i), cmd.size());
      words.push_back(cmd.substr(i, j - i));
      i = j + 1;
    }
    std::string out;
    for (size_t k = 0; k < words.size(); ++k) {
      const std::string& wd = words[k];
      if (wd == "--local_rank" || wd == "--local-rank") {
        if (k + 1 < words.size() && !words[k + 1].empty() &&
            std::all_of(words[k + 1].begin(), words[k + 1].end(), [](char c) { return c >= '0' && c <= '9'; }))
          ++k;
        continue;
      }
      if (wd.rfind("--local_rank=", 0) == 0 || wd.rfind("--local-rank=", 0) == 0) continue;
      out += (out.empty() ? "" : " ") + wd;
    }
    return out;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // program -> logs, in the order given
  std::map<std::string, std::string> shown;                              // program -> its first command line
  size_t with_command = 0;
  for (const auto& l : logs) {
    const std::string cmd = l.data.meta("command_line");
    if (cmd.empty()) continue;
    ++with_command;
    const std::string prog = program(cmd);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == prog; });
    if (it == groups.end()) {
      groups.push_back({prog, {}});
      it = groups.end() - 1;
      shown.emplace(prog, cmd);
    }
    it->second.push_back(l.path);
  }
  if (groups.size() < 2) return {};
  std::string s = fmt::format("the {} logs of {} come from {} different command lines, summed here as one run: ",
                              with_command, side, groups.size());
  size_t listed = 0;
  for (const auto& [prog, paths] : groups) {
    if (listed == kMaxNamesListed) {
      s += fmt::format("; and {} more", counted(groups.size() - listed, "command line"));
      break;
    }
    std::string logs_text;
    for (size_t k = 0; k < paths.size() && k < kMaxNamesListed; ++k) logs_text += (k == 0 ? "" : ", ") + paths[k];
    if (paths.size() > kMaxNamesListed) logs_text += fmt::format(" and {} more", paths.size() - kMaxNamesListed);
    s += fmt::format("{}`{}` ({})", listed == 0 ? "" : "; ", elideMiddle(displayText(shown.at(prog)), 100), logs_text);
    ++listed;
  }
  return s;
}

namespace {

/// The mean of `total` over `n` instances as the totals line shows a count: "3", "2.50".
std::string meanCount(uint64_t total, uint64_t n) {
  return total % n == 0 ? std::to_string(total / n) : fmt::format("{:.2f}", double(total) / double(n));
}

/// The change of a per-instance mean, A's total `x` over `na` instances to B's `y` over `nb`
/// (meanPercentChange()).
std::string meanChange(uint64_t x, uint64_t na, uint64_t y, uint64_t nb) {
  return meanPercentChange(double(x) / double(na), double(y) / double(nb));
}

/// diffVerdicts()' totals line for a range repeated a different number of times in A and B: its totals
/// would compare the repeats, not the work, so each number is per instance. Both sides have instances.
std::string perInstanceTotals(const DiffUnit& a, const DiffUnit& b) {
  const uint64_t na = a.instances, nb = b.instances;
  auto count = [&](uint64_t x, uint64_t y) {
    return fmt::format("{} -> {} ({})", meanCount(x, na), meanCount(y, nb), meanChange(x, na, y, nb));
  };
  auto time = [&](uint64_t x, uint64_t y) {
    return fmt::format("{} -> {} ({})", formatMeanDuration(x, na), formatMeanDuration(y, nb), meanChange(x, na, y, nb));
  };
  std::string s = fmt::format("per instance ({} in A, {} in B): launches {}, kernels {}", na, nb,
                              count(a.launches, b.launches), count(a.kernels, b.kernels));
  if (a.gpu_time && b.gpu_time) s += ", GPU time " + time(a.gpu_ns, b.gpu_ns);
  if (a.mem_ops_recorded && b.mem_ops_recorded && (a.mem_ops != 0 || b.mem_ops != 0))
    s += ", memory ops " + count(a.mem_ops, b.mem_ops) + ", memory GPU time " + time(a.mem_gpu_ns, b.mem_gpu_ns);
  s += ", launch calls " + time(a.launch_api_ns, b.launch_api_ns);
  if (cpuMeasured(a) && cpuMeasured(b)) s += ", time in the range " + time(a.cpu_ns, b.cpu_ns);
  if (!a.gpu_time || !b.gpu_time)
    s += fmt::format("; GPU time not recorded in {}", !a.gpu_time && !b.gpu_time ? "A and B" : !a.gpu_time ? "A" : "B");
  return s;
}

}  // namespace

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
      const std::string common = equal > 0 ? namesEqual(equal, all.size()) : noneInCommon(ga.size(), gb.size());
      const std::string head = fmt::format("GEMM kernels changed: {}; {}", common, counts);
      lines.push_back(
          kernelLine(head, {{"; only in A: ", &a, byCost(a, oa)}, {"; only in B: ", &b, byCost(b, ob)}}, ""));
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
      lines.push_back(kernelLine(fmt::format("{}: {} in A became {} in B ({}", c, counted(oa.size(), "kernel"),
                                             counted(ob.size(), "fused Triton kernel"), runs),
                                 {{"; A: ", &a, byCost(a, oa)}, {"; B: ", &b, byCost(b, ob)}}, ")"));
    } else {
      const size_t equal = ca.size() - oa.size();
      const std::string head = fmt::format(
          "{}: {}", c, equal > 0 ? counted(equal, "distinct name") + " equal" : noneInCommon(ca.size(), cb.size()));
      lines.push_back(
          kernelLine(head, {{"; only in A: ", &a, byCost(a, oa)}, {"; only in B: ", &b, byCost(b, ob)}}, "; " + runs));
    }
  }
  // A range repeated a different number of times in A and B: per instance (its totals compare repeats).
  if (a.instances > 0 && b.instances > 0 && a.instances != b.instances) {
    lines.push_back(perInstanceTotals(a, b));
    return lines;
  }
  // GPU time compared only when both sides recorded it (KCOUNT_GPU_TIME=0 logs have none): the kernel
  // counts above and here are the comparison then.
  const std::string gpu =
      a.gpu_time && b.gpu_time
          ? fmt::format("GPU time {} -> {} ({})", formatDuration(a.gpu_ns), formatDuration(b.gpu_ns),
                        percentOrUnknown(a.gpu_ns, b.gpu_ns))
          : fmt::format("GPU time not recorded in {} ({}; compare kernel counts)",
                        !a.gpu_time && !b.gpu_time ? "A and B" : !a.gpu_time ? "A" : "B",
                        a.graph_spans || b.graph_spans ? "KCOUNT_GPU_TIME=0 or graphs" : "KCOUNT_GPU_TIME=0");
  // Memory operations (copies, memsets) are GPU work apart from the kernels' GPU time: named beside it
  // when their number changed or they take 1% of a side's GPU work (kernels and memory operations) or more,
  // as summary's verdicts name them, so a range whose GPU work is mostly copies does not read as kernels
  // alone, and a few µs of workspace memsets beside ms of GEMMs add no words to every line.
  auto weighs = [](const DiffUnit& u) { return u.mem_gpu_ns != 0 && u.mem_gpu_ns >= (u.gpu_ns + u.mem_gpu_ns) / 100; };
  std::string mem;
  if ((a.mem_ops != b.mem_ops || weighs(a) || weighs(b)) && a.mem_ops_recorded && b.mem_ops_recorded)
    mem = fmt::format(", memory ops {} -> {} ({}), memory GPU time {} -> {} ({})", a.mem_ops, b.mem_ops,
                      countChange(a.mem_ops, b.mem_ops), formatDuration(a.mem_gpu_ns),
                      formatDuration(b.mem_gpu_ns), percentOrUnknown(a.mem_gpu_ns, b.mem_gpu_ns));
  lines.push_back(fmt::format("launches {} -> {} ({}), kernels {} -> {} ({}), {}{}, launch calls {} -> {} ({})",
                              a.launches, b.launches, countChange(a.launches, b.launches),
                              a.kernels, b.kernels, countChange(a.kernels, b.kernels), gpu, mem,
                              formatDuration(a.launch_api_ns), formatDuration(b.launch_api_ns),
                              percentOrUnknown(a.launch_api_ns, b.launch_api_ns)));
  // The wall time in the range (host clock): a CPU-bound range can get slower while its launch calls and
  // GPU time shrink.
  if (cpuMeasured(a) && cpuMeasured(b))
    lines.back() += fmt::format(", time in the range {} -> {} ({})", formatDuration(a.cpu_ns), formatDuration(b.cpu_ns),
                                percentOrUnknown(a.cpu_ns, b.cpu_ns));
  return lines;
}

namespace {
/// The ranges of both sides in one depth-first order: A's order, each range only in B placed at the end of
/// its parent's subtree (step/mlp after step/gate ... step/down, not after every range of A).
std::vector<std::string> diffOrder(const DiffSide& a, const DiffSide& b) {
  auto parentOf = [&](const std::string& p) {
    for (const DiffSide* side : {&a, &b})
      if (auto it = side->parents.find(p); it != side->parents.end()) return it->second;
    return std::string(kOverall);
  };
  auto inside = [&](std::string p, const std::string& ancestor) {
    for (size_t depth = 0; depth < a.paths.size() + b.paths.size() && p != kOverall; ++depth) {
      p = parentOf(p);
      if (p == ancestor) return true;
    }
    return false;
  };
  std::vector<std::string> paths = a.paths;
  for (const auto& p : b.paths) {
    if (a.units.count(p)) continue;
    const std::string parent = parentOf(p);
    auto at = parent == kOverall ? paths.end() : std::find(paths.begin(), paths.end(), parent);
    if (at != paths.end()) {
      ++at;
      while (at != paths.end() && inside(*at, parent)) ++at;
    }
    paths.insert(at, p);
  }
  return paths;
}
}  // namespace

namespace {

/// What diff JSON is made from: both sides, the range paths in order (diffOrder()), the kernels matched
/// by identity, the work that differs and the units that get verdicts (verdictOrder()).
struct DiffParts {
  DiffSide a, b;
  std::vector<std::string> paths;
  KernelMatch kernels;
  WorkDiff work;
  std::vector<std::string> order;
  std::vector<Regrouping> regroups;  // ranges nested differently under a common range (regroupings())
  std::vector<std::string> log_states_a, log_states_b;  // each log's logState(), in order (logStates())
  std::vector<std::string> states_a, states_b;          // sideStates() of each side; its first is sideState()
  bool undercount_a = false, undercount_b = false;  // a log of the side undercounts (numbersUndercount())
};

/// `la`'s logs' states are `sa` (logStates()), `lb`'s `sb`: each log's state is computed once per command.
DiffParts diffParts(const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb, std::vector<std::string> sa,
                    std::vector<std::string> sb) {
  DiffParts d;
  d.a = diffSide(la);
  d.b = diffSide(lb);
  d.paths = diffOrder(d.a, d.b);
  d.kernels = matchKernels(d.a.units.at(kOverall), d.b.units.at(kOverall));
  d.work = workDiff(d.a, d.b);
  d.order = verdictOrder(d.a, d.b);
  d.regroups = regroupings(d.a, d.b);
  d.log_states_a = std::move(sa);
  d.log_states_b = std::move(sb);
  d.states_a = statesAmong(d.log_states_a);
  d.states_b = statesAmong(d.log_states_b);
  for (size_t k = 0; k < la.size(); ++k) d.undercount_a = d.undercount_a || numbersUndercount(la[k], d.log_states_a[k]);
  for (size_t k = 0; k < lb.size(); ++k) d.undercount_b = d.undercount_b || numbersUndercount(lb[k], d.log_states_b[k]);
  return d;
}

/// Side `side`'s numbers of unit `p` (a range path or kOverall); an absent unit (present false) where the
/// side lacks it.
const DiffUnit& unitOf(const DiffSide& side, const std::string& p) {
  static const DiffUnit kAbsent;
  auto it = side.units.find(p);
  return it != side.units.end() ? it->second : kAbsent;
}

/// The NVTX domain of range `p`, from whichever side has it; null for the default domain (and "(no range)",
/// "(overall)").
const std::string* domainOf(const DiffParts& d, const std::string& p) {
  if (auto it = d.a.domains.find(p); it != d.a.domains.end()) return &it->second;
  if (auto it = d.b.domains.find(p); it != d.b.domains.end()) return &it->second;
  return nullptr;
}

/// Which sides have a unit (or a kernel identity): "both", "a" or "b" (JSON's and CSV's "in").
const char* sidesOf(bool in_a, bool in_b) { return in_a && in_b ? "both" : in_a ? "a" : "b"; }

/// The element of "ranges" for range path `p` (not kOverall).
json rangeJson(const DiffParts& d, const std::string& p) {
  const DiffUnit& ua = unitOf(d.a, p);
  const DiffUnit& ub = unitOf(d.b, p);
  const std::string* domain = domainOf(d, p);
  return json{{"path", jsonPathKey(p)},
              {"domain", domain ? json(*domain) : json(nullptr)},
              {"in", sidesOf(ua.present, ub.present)},
              {"a", unitJson(ua)},
              {"b", unitJson(ub)},
              {"change", changeJson(ua, ub)},
              {"children_a", ua.children},
              {"children_b", ub.children},
              {"nesting_differs", ua.present && ub.present && ua.children != ub.children}};
}

json gpuOf(const DiffUnit& u, uint64_t ns) { return u.gpu_time ? json(ns) : json(nullptr); }

/// The element of "kernels" "only_a" (u: A's whole run) or "only_b" for kernel identity `id`.
json kernelJson(const DiffUnit& u, const std::string& id) {
  const DiffKernel& k = u.by_identity.at(id);
  return json{{"identity", id}, {"name", k.name}, {"short", k.short_full}, {"category", k.category},
              {"count", k.count}, {"gpu_ns", gpuOf(u, k.gpu_ns)}};
}

/// The element of "kernels" "same" for kernel identity `id`.
json sameKernelJson(const DiffUnit& oa, const DiffUnit& ob, const std::string& id) {
  return json{{"identity", id},
              {"short", oa.by_identity.at(id).short_full},
              {"category", oa.by_identity.at(id).category},
              {"count_a", oa.by_identity.at(id).count},
              {"count_b", ob.by_identity.at(id).count},
              {"gpu_ns_a", gpuOf(oa, oa.by_identity.at(id).gpu_ns)},
              {"gpu_ns_b", gpuOf(ob, ob.by_identity.at(id).gpu_ns)}};
}

/// The verdict lines of unit `p` (a range path or kOverall), as recorded (not escaped).
std::vector<std::string> verdictLines(const DiffParts& d, const std::string& p) {
  std::vector<std::string> lines = diffVerdicts(d.a.units.at(p), d.b.units.at(p), unitName(d.a, p));
  if (p == kOverall && d.work.any()) lines.insert(lines.begin(), workDiffLine(d.work));
  return lines;
}

std::vector<const Regrouping*> regroupsOf(const DiffParts& d, const std::vector<Regrouping>& all,
                                          const std::string& p);

/// The lines a verdict of unit `p` opens with, one per regrouping of `regroups` and its kernels (the
/// second of each pair true for a kernels line); a regrouping under another range than `p` is prefixed
/// "under PATH: ", PATH as `path` shows it.
template <typename ShowPath>
std::vector<std::pair<std::string, bool>> regroupVerdictLines(const DiffParts& d,
                                                              const std::vector<const Regrouping*>& regroups,
                                                              const std::string& p, ShowPath&& path) {
  std::vector<std::pair<std::string, bool>> lines;
  for (const Regrouping* r : regroups) {
    std::string line = regroupLine(*r, r->parent == kOverall ? std::string("the whole run") : unitName(d.a, r->parent));
    if (r->parent != p) line = "under " + path(r->parent) + ": " + line;
    lines.emplace_back(std::move(line), false);
    for (auto& k : regroupKernelsLines(*r)) lines.emplace_back(std::move(k), true);
  }
  return lines;
}

/// The element of "verdicts" for unit `p`: its lines, and the ranges nested differently that its text
/// compares as one ("regrouped", regroupJson(); "under" the common range's path key).
json verdictJson(const DiffParts& d, const std::string& p) {
  json regrouped = json::array();
  const std::vector<const Regrouping*> regroups = regroupsOf(d, d.regroups, p);
  for (const Regrouping* r : regroups) {
    json e = regroupJson(*r);
    e["under"] = jsonPathKey(r->parent);
    regrouped.push_back(std::move(e));
  }
  // The lines as the text verdict has them: the regroupings first.
  std::vector<std::string> lines;
  for (auto& [line, kernels] : regroupVerdictLines(d, regroups, p, [](const std::string& x) { return jsonPathKey(x); }))
    lines.push_back(std::move(line));
  for (auto& line : verdictLines(d, p)) lines.push_back(std::move(line));
  return json{{"unit", jsonPathKey(p)}, {"lines", std::move(lines)}, {"regrouped", std::move(regrouped)}};
}

/// "steady_state": the range printed first when it repeats (the steady state a comparison is about), or
/// none.
std::optional<std::string> steadyState(const DiffParts& d) {
  if (d.order.front() != kOverall &&
      std::min(d.a.units.at(d.order.front()).instances, d.b.units.at(d.order.front()).instances) > 1)
    return d.order.front();
  return std::nullopt;
}

/// Diff JSON with null in place of its lists that grow with the logs: "ranges", "verdicts" and the
/// kernels' "same", "only_a" and "only_b" (rangeJson(), verdictJson(), sameKernelJson() and kernelJson()
/// give their elements).
json diffJsonWithoutLists(const DiffParts& d, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb) {
  json pa = json::array(), pb = json::array();
  for (const auto& l : la) pa.push_back(l.path);
  for (const auto& l : lb) pb.push_back(l.path);
  const DiffUnit& oa = d.a.units.at(kOverall);
  const DiffUnit& ob = d.b.units.at(kOverall);
  const auto steady_state = steadyState(d);
  const json steady = steady_state ? json(jsonPathKey(*steady_state)) : json(nullptr);
  json work_json = nullptr;
  if (d.work.any()) {
    json inst = json::array();
    for (const auto& w : d.work.instances) inst.push_back(json{{"path", jsonPathKey(w.path)}, {"a", w.a}, {"b", w.b}});
    auto paths = [](const std::vector<std::string>& v) {
      json out = json::array();
      for (const auto& p : v) out.push_back(jsonPathKey(p));
      return out;
    };
    work_json = json{{"instances", inst}, {"only_a", paths(d.work.only_a)}, {"only_b", paths(d.work.only_b)}};
  }
  return json{
      {"a", pa},
      {"b", pb},
      // logState()'s word for each side (sideState()): "complete", or why its numbers undercount
      {"state", json{{"a", furthestState(d.states_a)}, {"b", furthestState(d.states_b)}}},
      // every state among each side's logs (sideStates()), and whether a log's numbers undercount
      {"states", json{{"a", d.states_a}, {"b", d.states_b}}},
      {"undercounts", json{{"a", d.undercount_a}, {"b", d.undercount_b}}},
      {"gpu_time", json{{"a", d.a.gpu_time}, {"b", d.b.gpu_time}}},
      // > 1: that side's launch_api_ns are estimates (KCOUNT_LAUNCH_TIMING)
      {"launch_timing_sample", json{{"a", d.a.launch_timing_sample}, {"b", d.b.launch_timing_sample}}},
      {"overall",
       json{{"a", unitJson(oa)}, {"b", unitJson(ob)}, {"change", changeJson(oa, ob)}, {"work_differs", work_json}}},
      {"steady_state", steady},
      {"ranges", nullptr},
      {"kernels", json{{"same", nullptr}, {"only_a", nullptr}, {"only_b", nullptr}}},
      {"verdicts", nullptr}};
}

/// Calls f(key, element) for each element of diff JSON's lists, list by list: "ranges", "same",
/// "only_a", "only_b", "verdicts".
template <typename F>
void forEachListElement(const DiffParts& d, std::string_view list, F&& f) {
  const DiffUnit& oa = d.a.units.at(kOverall);
  const DiffUnit& ob = d.b.units.at(kOverall);
  if (list == "ranges") {
    for (const auto& p : d.paths)
      if (p != kOverall) f(rangeJson(d, p));
  } else if (list == "same") {
    for (const auto& id : d.kernels.same) f(sameKernelJson(oa, ob, id));
  } else if (list == "only_a") {
    for (const auto& id : d.kernels.only_a) f(kernelJson(oa, id));
  } else if (list == "only_b") {
    for (const auto& id : d.kernels.only_b) f(kernelJson(ob, id));
  } else if (list == "verdicts") {
    for (const auto& p : d.order) f(verdictJson(d, p));
  }
}

}  // namespace

json diffJson(const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb) {
  const DiffParts d = diffParts(la, lb, logStates(la), logStates(lb));
  json out = diffJsonWithoutLists(d, la, lb);
  auto fill = [&](json& list, std::string_view name) {
    list = json::array();
    forEachListElement(d, name, [&](json e) { list.push_back(std::move(e)); });
  };
  fill(out["ranges"], "ranges");
  for (const char* k : {"same", "only_a", "only_b"}) fill(out["kernels"][k], k);
  fill(out["verdicts"], "verdicts");
  return out;
}

void writeDiffJson(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb) {
  writeDiffJson(out, la, lb, logStates(la), logStates(lb));
}

void writeDiffJson(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb,
                   const std::vector<std::string>& states_a, const std::vector<std::string>& states_b) {
  const DiffParts d = diffParts(la, lb, states_a, states_b);
  const json doc = diffJsonWithoutLists(d, la, lb);
  JsonWriter w(out);
  auto list = [&](std::string_view name) {
    return [&w, &d, name] {
      w.beginArray();
      forEachListElement(d, name, [&](const json& e) { w.value(e); });
      w.end();
    };
  };
  w.object(doc, {{"ranges", list("ranges")},
                 {"kernels", [&] {
                    w.object(doc.at("kernels"),
                             {{"same", list("same")}, {"only_a", list("only_a")}, {"only_b", list("only_b")}});
                  }},
                 {"verdicts", list("verdicts")}});
  out << '\n';
}

namespace {

/// The columns of `kcount diff --format csv` (docs/usage.md); new columns only ever at the end.
constexpr std::string_view kDiffCsvColumns[] = {
    "kind", "path", "domain", "in", "instances_a", "instances_b",
    "launches_a", "launches_b", "launches_change",
    "kernels_a", "kernels_b", "kernels_change",
    "gpu_ns_a", "gpu_ns_b", "gpu_ns_change",
    "cpu_ns_a", "cpu_ns_b", "cpu_ns_change",
    "launch_api_ns_a", "launch_api_ns_b", "launch_api_ns_change",
    "mem_ops_a", "mem_ops_b", "mem_ops_change",
    "mem_gpu_ns_a", "mem_gpu_ns_b", "mem_gpu_ns_change",
    "identity", "kernel", "name", "category", "state_a", "state_b"};
constexpr size_t kDiffCsvRangeColumns = 27;  // the columns up to mem_gpu_ns_change; identity.. are kernels'
constexpr size_t kDiffCsvKernelColumns = 31;  // up to category; state_a and state_b are every row's

using Cells = std::vector<ExportCell>;

/// A count or ns as a cell: the number as JSON writes it (a sum held at 2^64 - 1 is 18446744073709551615).
ExportCell cell(uint64_t v) { return v; }

/// Appends A, B and B - A of one quantity: a side's value where `in_a` (`in_b`), the change where `change`
/// (empty fields otherwise: not measured, or no such range on that side).
void addSides(Cells& c, uint64_t a, uint64_t b, bool in_a, bool in_b, bool change) {
  c.push_back(in_a ? cell(a) : ExportCell{});
  c.push_back(in_b ? cell(b) : ExportCell{});
  const auto d = change ? sumChange(a, b) : std::nullopt;  // empty where JSON has null
  c.push_back(d ? ExportCell{*d} : ExportCell{});
}

/// The CSV row of unit `p` (kOverall or a range path): the text table's numbers, as JSON gives them (null:
/// an empty field), except that a range of one side only gets its changes with the other side counting 0,
/// as a kernel of one side only does (kernelCsvRow()): where the side with the range measured the value
/// and the other side records such values at all (GPU times, memory operations). Then each side's state.
/// Points into `d`.
Cells rangeCsvRow(const DiffParts& d, const std::string& p) {
  const DiffUnit& x = unitOf(d.a, p);
  const DiffUnit& y = unitOf(d.b, p);
  const std::string* domain = domainOf(d, p);
  const bool range = p != kOverall;  // (overall) has no instances
  const ExportCell none;
  Cells c{std::string_view("range"), std::string_view(p), domain ? ExportCell{std::string_view(*domain)} : none,
          std::string_view(sidesOf(x.present, y.present)), x.present && range ? cell(x.instances) : none,
          y.present && range ? cell(y.instances) : none};
  // A side gives a change its value where it has the range and measured it, 0 where it lacks the range
  // (and records such values: `records`).
  auto counts = [](const DiffUnit& u, bool measured, bool records) { return u.present ? measured : records; };
  auto change = [&](bool ma, bool ra, bool mb, bool rb) { return counts(x, ma, ra) && counts(y, mb, rb); };
  addSides(c, x.launches, y.launches, x.present, y.present, true);
  addSides(c, x.kernels, y.kernels, x.present, y.present, true);
  const bool ga = x.present && x.gpu_time, gb = y.present && y.gpu_time;
  addSides(c, x.gpu_ns, y.gpu_ns, ga, gb, change(ga, d.a.gpu_time, gb, d.b.gpu_time));
  addSides(c, x.cpu_ns, y.cpu_ns, cpuMeasured(x), cpuMeasured(y),
           change(cpuMeasured(x), true, cpuMeasured(y), true));
  addSides(c, x.launch_api_ns, y.launch_api_ns, x.present, y.present, true);
  const bool ma = x.present && x.mem_ops_recorded, mb = y.present && y.mem_ops_recorded;
  const bool mem_change = change(ma, d.a.mem_ops_recorded, mb, d.b.mem_ops_recorded);
  addSides(c, x.mem_ops, y.mem_ops, ma, mb, mem_change);
  addSides(c, x.mem_gpu_ns, y.mem_gpu_ns, ma, mb, mem_change);
  c.resize(kDiffCsvKernelColumns);
  c.push_back(sideWord(d.states_a));
  c.push_back(sideWord(d.states_b));
  return c;
}

/// The CSV row of one kernel identity of the whole run: its count (kernels_*) and GPU time on each side
/// and their changes, a side without it counting 0 as in the text's change column; then each side's state.
/// Points into `r` and `d`.
Cells kernelCsvRow(const KernelRow& r, const DiffParts& d) {
  const DiffSide &a = d.a, &b = d.b;
  const bool in_a = r.ka != nullptr, in_b = r.kb != nullptr;
  Cells c{std::string_view("kernel"), ExportCell{}, ExportCell{}, std::string_view(sidesOf(in_a, in_b))};
  c.resize(9);  // no instances, no launches: a kernel is no range
  const uint64_t na = r.ka ? r.ka->count : 0, nb = r.kb ? r.kb->count : 0;
  addSides(c, na, nb, in_a, in_b, true);
  const uint64_t ga = r.ka ? r.ka->gpu_ns : 0, gb = r.kb ? r.kb->gpu_ns : 0;
  addSides(c, ga, gb, in_a && a.gpu_time, in_b && b.gpu_time, a.gpu_time && b.gpu_time);
  c.resize(kDiffCsvRangeColumns);
  const DiffKernel& k = r.ka ? *r.ka : *r.kb;
  for (std::string_view v : {std::string_view(*r.id), std::string_view(k.short_full), std::string_view(k.name),
                             std::string_view(k.category), sideWord(d.states_a), sideWord(d.states_b)})
    c.push_back(v);
  return c;
}

}  // namespace

void writeDiffCsv(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb) {
  writeDiffCsv(out, la, lb, logStates(la), logStates(lb));
}

void writeDiffCsv(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb,
                  const std::vector<std::string>& states_a, const std::vector<std::string>& states_b) {
  const DiffParts d = diffParts(la, lb, states_a, states_b);
  writeCsvRow(out, Cells(std::begin(kDiffCsvColumns), std::end(kDiffCsvColumns)));
  writeCsvRow(out, rangeCsvRow(d, kOverall));
  for (const auto& p : d.paths)
    if (p != kOverall) writeCsvRow(out, rangeCsvRow(d, p));
  for (const KernelRow& r : kernelRows(d.kernels, d.a, d.b)) writeCsvRow(out, kernelCsvRow(r, d));
}

namespace {
/// The notes under diff's table: changes not known (sums held at 2^64 - 1), GPU time not recorded by a side,
/// launch CPU estimated from sampled calls.
void printDiffTableNotes(std::ostream& out, const std::vector<std::vector<std::string>>& rows, const DiffSide& a,
                         const DiffSide& b) {
  bool unknown = false;
  for (const auto& row : rows) unknown = unknown || std::find(row.begin(), row.end(), kUnknownChange) != row.end();
  if (unknown)
    out << "unknown: a change where a side's sum is held at 2^64 - 1 (its true value is larger) or that passes "
           "2^63 - 1 ns; only implausible records give one (see the warnings)\n";
  if (!a.gpu_time || !b.gpu_time)
    out << fmt::format("GPU time: not recorded in {} (KCOUNT_GPU_TIME=0: kernels counted at their launch calls or read "
                       "from their graph); "
                       "no GPU-time change is given, the verdicts compare kernel counts\n",
                       !a.gpu_time && !b.gpu_time ? "A and B" : !a.gpu_time ? "A" : "B");
  if (a.graph_spans || b.graph_spans)
    out << "graph GPU: the graph launches' GPU spans of " << (a.graph_spans && b.graph_spans ? "A and B" : a.graph_spans ? "A" : "B")
        << " (KCOUNT_GPU_TIME=graphs) are not compared here: `kcount summary` shows them per range (graph GPU)\n";
  if (a.launch_timing_sample > 1 || b.launch_timing_sample > 1) {
    auto side = [](const char* name, uint64_t n) {
      return n > 1 ? fmt::format("{} (1 in {} calls timed)", name, n) : std::string();
    };
    const std::string sa = side("A", a.launch_timing_sample), sb = side("B", b.launch_timing_sample);
    out << fmt::format("launch CPU: estimated in {} (KCOUNT_LAUNCH_TIMING); its changes are rough for ranges with "
                       "few launches\n",
                       sa.empty() ? sb : sb.empty() ? sa : sa + " and " + sb);
  }
}

}  // namespace

namespace {

/// The text's rows and shortened range paths, shared by its sections.
struct DiffText {
  struct Row {
    std::string path;
    const DiffUnit* ua;
    const DiffUnit* ub;
  };
  const DiffParts& d;
  bool full_names = false;
  std::vector<Row> rows;  // rows[0] is the whole run; the others are the ranges in diffOrder()
  std::map<std::string, std::string> short_of;  // a path as shown -> shortened among all paths

  DiffText(const DiffParts& parts, bool full) : d(parts), full_names(full) {
    static const DiffUnit kAbsent;
    const DiffSide &a = d.a, &b = d.b;
    rows.push_back({kOverall, &a.units.at(kOverall), &b.units.at(kOverall)});
    for (const auto& p : d.paths)
      if (p != kOverall)
        rows.push_back({p, a.units.count(p) ? &a.units.at(p) : &kAbsent, b.units.count(p) ? &b.units.at(p) : &kAbsent});
    // Long range paths are shortened in the text (the JSON keeps them whole), all together so that
    // different ranges stay distinguishable (elideDistinct), whichever rows a layout shows.
    std::vector<std::string> all;
    for (const auto& r : rows)
      if (r.path != kOverall) all.push_back(shownPath(a, b, r.path));
    for (const auto& p : d.order)
      if (p != kOverall) all.push_back(shownPath(a, b, p));
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    const std::vector<std::string> shown = elideDistinct(all);
    for (size_t i = 0; i < all.size(); ++i) short_of[all[i]] = shown[i];
  }

  std::string shortPath(const std::string& path) const {
    const std::string full = shownPath(d.a, d.b, path);
    if (full_names) return full;
    const auto it = short_of.find(full);
    return it != short_of.end() ? it->second : elideMiddle(full);
  }
};

/// The range table's cells of one row: A, B and the change for launches, kernels, GPU time, CPU time,
/// launch calls and, with `mem_columns`, memory operations and their GPU time.
std::vector<std::string> rangeCells(const DiffText& t, const DiffText::Row& r, bool mem_columns) {
  const DiffUnit& x = *r.ua;
  const DiffUnit& y = *r.ub;
  auto v = [](const DiffUnit& u, uint64_t n) { return u.present ? std::to_string(n) : std::string("-"); };
  auto tm = [](const DiffUnit& u, uint64_t ns) { return u.present ? formatDuration(ns) : std::string("-"); };
  auto g = [](const DiffUnit& u, uint64_t ns) {  // GPU time: '-' also where the side did not record it
    return u.present && u.gpu_time ? formatDuration(ns) : std::string("-");
  };
  const bool both = x.present && y.present;
  auto dc = [&](uint64_t p, uint64_t q) { return both ? countChange(p, q) : std::string("-"); };
  auto dt = [&](uint64_t p, uint64_t q) { return both ? durationChange(p, q) : std::string("-"); };
  // CPU time: '-' where it was not measured (cpuMeasured(): no instance), as in summary's table.
  auto c = [](const DiffUnit& u) { return cpuMeasured(u) ? formatDuration(u.cpu_ns) : std::string("-"); };
  const bool both_cpu = cpuMeasured(x) && cpuMeasured(y);
  // (overall) is the whole process, no range: no instances to count ('-', not 0).
  auto inst = [&](const DiffUnit& u) { return r.path == kOverall ? std::string("-") : v(u, u.instances); };
  std::vector<std::string> cells{
      r.path == kOverall ? r.path : t.shortPath(r.path), inst(x), inst(y), v(x, x.launches), v(y, y.launches),
      dc(x.launches, y.launches), v(x, x.kernels), v(y, y.kernels), dc(x.kernels, y.kernels),
      g(x, x.gpu_ns), g(y, y.gpu_ns), x.gpu_time && y.gpu_time ? dt(x.gpu_ns, y.gpu_ns) : "-", c(x),
      c(y), both_cpu ? dt(x.cpu_ns, y.cpu_ns) : "-",
      tm(x, x.launch_api_ns), tm(y, y.launch_api_ns), dt(x.launch_api_ns, y.launch_api_ns)};
  if (mem_columns) {
    // '-' where a side lacks the range or did not record memory operations (memOpsRecorded()).
    auto mv = [](const DiffUnit& u, uint64_t n) {
      return u.present && u.mem_ops_recorded ? std::to_string(n) : std::string("-");
    };
    auto mt = [](const DiffUnit& u, uint64_t ns) {
      return u.present && u.mem_ops_recorded ? formatDuration(ns) : std::string("-");
    };
    const bool mem = x.mem_ops_recorded && y.mem_ops_recorded;
    for (const std::string& cell :
         {mv(x, x.mem_ops), mv(y, y.mem_ops), mem ? dc(x.mem_ops, y.mem_ops) : std::string("-"), mt(x, x.mem_gpu_ns),
          mt(y, y.mem_gpu_ns), mem ? dt(x.mem_gpu_ns, y.mem_gpu_ns) : std::string("-")})
      cells.push_back(cell);
  }
  return cells;
}

/// The range table of rows `shown` (indices of t.rows, in order), fitted to `max_width`, and its notes.
void printRangeTable(std::ostream& out, const DiffText& t, const std::vector<size_t>& shown, size_t max_width) {
  const DiffSide &a = t.d.a, &b = t.d.b;
  // mem ops and mem GPU when either run has memory operations (as summary's table).
  const bool mem_columns = a.units.at(kOverall).mem_ops != 0 || b.units.at(kOverall).mem_ops != 0;
  Table table;
  table.head = {"range", "inst A", "inst B", "launches A", "B", "change", "kernels A", "B", "change", "GPU A", "B",
                "change", "CPU A", "B", "change", "launch CPU A", "B", "change"};
  if (mem_columns)
    for (const char* h : {"mem ops A", "B", "change", "mem GPU A", "B", "change"}) table.head.push_back(h);
  table.right.assign(table.head.size(), true);
  table.right.front() = false;
  table.rule = Table::Rule::kFull;
  // The range column narrowed to fit max_width: the paths whole, "(overall)" never cut.
  NameColumn paths;
  for (size_t i : shown) {
    const DiffText::Row& r = t.rows[i];
    table.rows.push_back(rangeCells(t, r, mem_columns));
    paths.prefix.push_back(r.path == kOverall ? r.path : std::string());
    paths.names.push_back(r.path == kOverall ? std::string() : shownPath(a, b, r.path));
  }
  // Kept at any width: the range and GPU time's A, B and change; the other columns dropped in the order of
  // their ranks, a change's three columns together (docs/usage.md, "Fitting --width").
  const std::vector<std::vector<std::string>> all_rows = table.rows;  // for the notes: every column's changes
  if (!t.full_names) {
    table.max_width = max_width;
    table.fit.push_back(std::move(paths));
    table.drop = {0, 7, 7, 5, 5, 5, 4, 4, 4, 0, 0, 0, 6, 6, 6, 8, 8, 8, 10, 10, 10, 9, 9, 9};
    table.labels = {"", "inst A/B", "inst A/B", "launches", "launches", "launches", "kernels", "kernels", "kernels",
                    "", "", "", "CPU", "CPU", "CPU", "launch CPU", "launch CPU", "launch CPU", "mem ops", "mem ops",
                    "mem ops", "mem GPU", "mem GPU", "mem GPU"};
  }
  table.print(out);
  printDiffTableNotes(out, all_rows, a, b);
}

/// Under --all: every range whose children differ and every path on one side only, then a blank line.
void printNestingLines(std::ostream& out, const DiffText& t) {
  auto rangeNames = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& p : v) s += (s.empty() ? "" : ", ") + displayName(p);
    return s;
  };
  bool nesting = false;
  for (size_t i = 1; i < t.rows.size(); ++i) {
    const DiffText::Row& r = t.rows[i];
    if (r.ua->present && r.ub->present && r.ua->children != r.ub->children) {
      out << fmt::format("nesting differs under {}: A has [{}], B has [{}]\n", t.shortPath(r.path),
                         rangeNames(r.ua->children), rangeNames(r.ub->children));
      nesting = true;
    }
  }
  for (size_t i = 1; i < t.rows.size(); ++i)
    if (!t.rows[i].ua->present || !t.rows[i].ub->present) {
      out << fmt::format("only in {}: {}\n", t.rows[i].ua->present ? "A" : "B", t.shortPath(t.rows[i].path));
      nesting = true;
    }
  if (nesting) out << '\n';
}

/// The regroupings a verdict of unit `p` names: those under `p`, and for the whole run those under a range
/// that gets no verdict of its own.
std::vector<const Regrouping*> regroupsOf(const DiffParts& d, const std::vector<Regrouping>& all,
                                          const std::string& p) {
  std::vector<const Regrouping*> out;
  for (const auto& r : all)
    if (r.parent == p ||
        (p == kOverall && std::find(d.order.begin(), d.order.end(), r.parent) == d.order.end()))
      out.push_back(&r);
  return out;
}

/// The heading of unit `p`'s verdict, without its colon: "verdict for the whole run", or "verdict for PATH"
/// (PATH: `shown`, the path as the output shows it), with "(most repeated range: N instances in A, M in B)"
/// after the steady-state range.
std::string verdictHeading(const DiffParts& d, const std::string& p, const std::string& shown) {
  std::string head = "verdict for " + (p == kOverall ? std::string("the whole run") : shown);
  if (p == steadyState(d)) {
    const DiffUnit& ua = d.a.units.at(p);
    const DiffUnit& ub = d.b.units.at(p);
    head += fmt::format(" (most repeated range: {} in A, {} in B)", counted(ua.instances, "instance"), ub.instances);
  }
  return head;
}

/// The verdict of unit `p`: its heading, the regroupings under it (regroupLine() and regroupKernelsLines()),
/// then its verdict lines, each wrapped at `max_width` (kVerdictWrap when 0) with a hanging indent.
void printVerdict(std::ostream& out, const DiffText& t, const std::string& p,
                  const std::vector<const Regrouping*>& regroups, size_t max_width) {
  const DiffParts& d = t.d;
  const std::string head = verdictHeading(d, p, p == kOverall ? std::string() : t.shortPath(p));
  for (const auto& l : wrapLine(head + ":", max_width, "", 6)) out << l << '\n';
  auto put = [&](const std::string& line, const std::string& indent) {
    // The lines name kernels and ranges as recorded: escaped here (JSON keeps them raw).
    for (const auto& l : wrapLine(displayText(line), max_width, indent, 4)) out << l << '\n';
  };
  for (const auto& [line, kernels] : regroupVerdictLines(d, regroups, p, [&](const std::string& x) { return t.shortPath(x); }))
    put(line, kernels ? "    " : "  ");
  for (const auto& line : verdictLines(d, p)) put(line, "  ");
}

/// The ranges whose verdicts the default layout shows: the first kMaxAnswerVerdicts of those repeated most
/// (the largest of the fewer instances of A and B, in verdictOrder()), then the whole run.
std::vector<std::string> answerVerdicts(const DiffParts& d) {
  auto repeats = [&](const std::string& p) {
    return p == kOverall ? uint64_t{0} : std::min(d.a.units.at(p).instances, d.b.units.at(p).instances);
  };
  uint64_t most = 0;
  for (const auto& p : d.order) most = std::max(most, repeats(p));
  std::vector<std::string> out;
  for (const auto& p : d.order)
    if (p != kOverall && amongMostRepeated(repeats(p), most) && out.size() < kMaxAnswerVerdicts) out.push_back(p);
  out.push_back(kOverall);
  return out;
}

/// Each range row's change (t.rows[1..]) as largestChanges() ranks it: GPU time where both sides record
/// it (a side without the range counting 0), else launches.
std::vector<RowChange> rangeChanges(const DiffText& t) {
  std::vector<RowChange> out;
  const bool gpu = t.d.a.gpu_time && t.d.b.gpu_time;
  auto diff = [](uint64_t x, uint64_t y) { return x > y ? x - y : y - x; };
  for (size_t i = 1; i < t.rows.size(); ++i) {
    const DiffUnit& x = *t.rows[i].ua;
    const DiffUnit& y = *t.rows[i].ub;
    RowChange c;
    if (gpu) c.gpu = diff(x.present ? x.gpu_ns : 0, y.present ? y.gpu_ns : 0);
    c.count = diff(x.present ? x.launches : 0, y.present ? y.launches : 0);
    c.both = x.present && y.present;
    out.push_back(c);
  }
  return out;
}

/// Each kernel row's change (kernelRows() order): GPU time where both sides record it, else the count.
std::vector<RowChange> kernelChanges(const DiffParts& d) {
  std::vector<RowChange> out;
  const bool gpu = d.a.gpu_time && d.b.gpu_time;
  auto diff = [](uint64_t x, uint64_t y) { return x > y ? x - y : y - x; };
  for (const KernelRow& r : kernelRows(d.kernels, d.a, d.b)) {
    RowChange c;
    if (gpu) c.gpu = diff(r.ka ? r.ka->gpu_ns : 0, r.kb ? r.kb->gpu_ns : 0);
    c.count = diff(r.ka ? r.ka->count : 0, r.kb ? r.kb->count : 0);
    out.push_back(c);
  }
  return out;
}

/// The default layout after the header: verdicts, the largest changes of ranges and of kernels, and what
/// is not shown.
void printAnswerFirst(std::ostream& out, const DiffText& t, const std::vector<Regrouping>& regroups,
                      size_t max_width) {
  const DiffParts& d = t.d;
  const std::vector<std::string> verdicts = answerVerdicts(d);
  for (const auto& p : verdicts) {
    printVerdict(out, t, p, regroupsOf(d, regroups, p), max_width);
    out << '\n';
  }
  std::vector<size_t> ranges{0};  // (overall), then the ranges with the largest changes
  for (size_t i : largestChanges(rangeChanges(t), kLargestChanges)) ranges.push_back(i + 1);
  out << fmt::format("largest changes: the {} of {} ranges whose {} changed most (ranges of both runs first), in table order\n", ranges.size() - 1,
                     t.rows.size() - 1, d.a.gpu_time && d.b.gpu_time ? "GPU time" : "launches");
  printRangeTable(out, t, ranges, max_width);
  out << '\n';
  const std::vector<RowChange> kc = kernelChanges(d);
  const std::vector<size_t> kernels = largestChanges(kc, kLargestChanges);
  // Whole-run kernel counts and times of runs that did different work differ by that work too.
  if (d.work.any())
    out << "(whole-run counts: the runs did different work, see the whole run's verdict; compare a range's "
           "kernels with --range PATH)\n";
  printKernels(out, d.kernels, d.a, d.b, max_width, t.full_names, &kernels);
  if (const std::string line = notShownLine(verdicts.size(), d.order.size(), ranges.size() - 1, t.rows.size() - 1,
                                            kernels.size(), kc.size());
      !line.empty())
    out << '\n' << line << '\n';
}

/// --range PATH: its verdict (or why it has none), then the range table of its subtree.
void printRangeSubtree(std::ostream& out, const DiffText& t, const std::vector<Regrouping>& regroups,
                       const std::string& root, size_t max_width) {
  const DiffParts& d = t.d;
  std::vector<size_t> rows{0};
  for (size_t i = 1; i < t.rows.size(); ++i)
    if (underPath(t.rows[i].path, root)) rows.push_back(i);
  if (rows.size() == 1) throw std::invalid_argument("no range " + root + " in A or B (the paths are the range "
                                                    "column of kcount diff --all)");
  if (std::find(d.order.begin(), d.order.end(), root) != d.order.end()) {
    std::vector<const Regrouping*> under;
    for (const auto& r : regroups)
      if (underPath(r.parent, root)) under.push_back(&r);
    printVerdict(out, t, root, under, max_width);
  } else {
    out << "no verdict for " << t.shortPath(root) << ": it is not on both sides, or ran no kernel on one of them\n";
  }
  out << '\n';
  printRangeTable(out, t, rows, max_width);
}

}  // namespace

void printDiff(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb,
               size_t max_width, bool full_names) {
  printDiff(out, la, lb, logStates(la), logStates(lb), max_width, full_names);
}

void printDiff(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb,
               const std::vector<std::string>& states_a, const std::vector<std::string>& states_b, size_t max_width,
               bool full_names) {
  printDiff(out, la, lb, states_a, states_b, max_width, full_names, DiffLayout{.all = true, .range = {}});
}

void printDiff(std::ostream& out, const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb,
               const std::vector<std::string>& states_a, const std::vector<std::string>& states_b, size_t max_width,
               bool full_names, const DiffLayout& layout) {
  const DiffParts d = diffParts(la, lb, states_a, states_b);
  const DiffText t(d, full_names);
  const std::vector<Regrouping>& regroups = d.regroups;
  if (!layout.range.empty() && layout.range != kOverall) {
    bool found = false;
    for (size_t i = 1; i < t.rows.size() && !found; ++i) found = underPath(t.rows[i].path, layout.range);
    if (!found)
      throw std::invalid_argument("no range " + layout.range + " in A or B (its path as the range column of "
                                  "kcount diff --all shows it)");
  }
  auto names = [](const std::vector<LoadedLog>& logs) {
    std::string s;
    for (const auto& l : logs) s += (s.empty() ? "" : ", ") + displayText(l.path);  // one line, as "== PATH"
    return s;
  };
  out << "A: " << names(la) << "\nB: " << names(lb) << '\n';
  // A side not read complete: said here, above its numbers (the warnings on stderr may not be seen).
  for (const auto& [logs, states, side] :
       {std::tuple{&la, &d.log_states_a, "A"}, std::tuple{&lb, &d.log_states_b, "B"}})
    if (const std::string line = sideStateLine(*logs, *states, side); !line.empty()) out << displayText(line) << '\n';
  out << '\n';
  if (!layout.range.empty() && layout.range != kOverall) return printRangeSubtree(out, t, regroups, layout.range, max_width);
  if (!layout.all) return printAnswerFirst(out, t, regroups, max_width);
  std::vector<size_t> all(t.rows.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  printRangeTable(out, t, all, max_width);
  out << '\n';
  printNestingLines(out, t);
  printKernels(out, d.kernels, d.a, d.b, max_width, full_names);
  for (const auto& p : d.order) {
    out << '\n';
    printVerdict(out, t, p, regroupsOf(d, regroups, p), max_width);
  }
}

json answerVerdictsJson(const std::vector<LoadedLog>& la, const std::vector<LoadedLog>& lb) {
  const DiffParts d = diffParts(la, lb, logStates(la), logStates(lb));
  json out = json::array();
  for (const auto& p : answerVerdicts(d)) {
    json v = verdictJson(d, p);
    v["heading"] = verdictHeading(d, p, p);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace kc
