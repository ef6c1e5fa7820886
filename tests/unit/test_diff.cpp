// kcount diff: the order of the verdicts (the most repeated range first, the whole run last), whole-run
// totals of runs that did different work, the kernels section's GPU times and order, verdict lines
// bounded in length, and sides pooling logs of different programs.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "collector/log_writer.h"
#include "tools/diff.h"
#include "tools/kernel_decode.h"
#include "tools/loaded_log.h"
#include "tests/support/loaded_log.h"

namespace {

/// Writes a log as a script would: ranges pushed and popped on one thread, kernels launched in the
/// innermost open range, each `ns` long; the host clock advances 1 µs per call.
class LogBuilder {
 public:
  LogBuilder() : w_(&sink_) {}

  LogBuilder& meta(const std::string& key, const std::string& value) {
    w_.writeMetadata(key, value);
    return *this;
  }
  LogBuilder& push(const std::string& name) {
    const uint32_t parent = stack_.empty() ? kc::kRootScope : stack_.back().first;
    auto key = std::make_pair(parent, name);
    auto it = scopes_.find(key);
    if (it == scopes_.end()) {
      const auto id = static_cast<uint32_t>(scopes_.size()) + 1;
      it = scopes_.emplace(key, id).first;
      w_.writeScope(kc::ScopeBody{id, parent, str(name), kc::kNoString});
    }
    stack_.emplace_back(it->second, tick());
    return *this;
  }
  LogBuilder& pop() {
    kc::RangeBody r{};
    r.begin_ns = stack_.back().second;
    r.end_ns = tick();
    r.scope_id = stack_.back().first;
    r.thread_id = 7;
    r.end_thread_id = 7;
    w_.writeRange(r);
    stack_.pop_back();
    return *this;
  }
  LogBuilder& kernel(const std::string& name, uint64_t ns = 100) {
    const uint64_t corr = ++corr_, t = tick();
    kc::LaunchBody l{};
    l.correlation_id = corr;
    l.enter_ns = t;
    l.exit_ns = t + 10;
    l.scope_id = stack_.empty() ? kc::kRootScope : stack_.back().first;
    l.thread_id = 7;
    l.api_id = str("cuLaunchKernelEx");
    l.cbid = 652;
    l.domain = static_cast<uint8_t>(kc::ApiDomain::kDriver);
    w_.writeLaunch(l);
    kc::KernelBody k{};
    k.correlation_id = corr;
    k.start_ns = t + 20;
    k.end_ns = t + 20 + ns;
    k.name_id = str(name);
    k.grid[0] = k.grid[1] = k.grid[2] = 1;
    k.block[0] = k.block[1] = k.block[2] = 1;
    w_.writeKernel(k);
    if (w_.chunkFull()) w_.flush();
    return *this;
  }
  /// `n` instances of range `name`, each launching `kernels` (names, `ns` each).
  LogBuilder& repeat(const std::string& name, int n, const std::vector<std::string>& kernels, uint64_t ns = 100) {
    for (int i = 0; i < n; ++i) {
      push(name);
      for (const auto& k : kernels) kernel(k, ns);
      pop();
    }
    return *this;
  }
  kc::LoadedLog done(const std::string& path) {
    w_.writeEnd();
    w_.flush();
    return kc::test::loaded(sink_.bytes, path);
  }

 private:
  uint32_t str(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) return it->second;
    const auto id = static_cast<uint32_t>(strings_.size()) + 1;
    strings_.emplace(s, id);
    w_.writeString(id, s);
    return id;
  }
  uint64_t tick() { return now_ += 1000; }

  kc::MemorySink sink_;
  kc::LogWriter w_;
  std::map<std::string, uint32_t> strings_;
  std::map<std::pair<uint32_t, std::string>, uint32_t> scopes_;
  std::vector<std::pair<uint32_t, uint64_t>> stack_;
  uint64_t corr_ = 0, now_ = 1'000'000'000;
};

const std::string kGemm = "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN";
const std::string kGelu = "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl>(int, int)";

std::string text(const kc::LoadedLog& a, const kc::LoadedLog& b) {
  std::ostringstream out;
  kc::printDiff(out, {a}, {b});
  return out.str();
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// Display characters (UTF-8 characters) of `s`.
size_t chars(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::vector<std::string> verdictUnits(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& v : j["verdicts"]) out.push_back(v["unit"]);
  return out;
}

/// A training-loop shaped log: one warm-up holding 2 steps, then `steps` steps with one nested range
/// `mlp` each, then (optionally) one `eval` range.
kc::LoadedLog trainingLog(const std::string& path, int steps, bool eval = false, const std::string& inner = "mlp") {
  LogBuilder w;
  w.push("warmup").repeat("step", 2, {kGemm, kGelu}).pop();
  for (int i = 0; i < steps; ++i) {
    w.push("step").kernel(kGemm);
    w.push(inner).kernel(kGelu).pop();
    w.pop();
  }
  if (eval) w.repeat("eval", 1, {kGemm});
  return w.done(path);
}

}  // namespace

TEST_CASE("diff verdicts: the most repeated range first (the steady state), the whole run last") {
  const kc::LoadedLog a = trainingLog("a.kcount", 20), b = trainingLog("b.kcount", 20, false, "fused");
  const auto j = kc::diffJson({a}, {b});
  // step (20 in both) before warmup/step (2) and warmup (1); step/mlp is on side A only: no verdict.
  CHECK(verdictUnits(j) == std::vector<std::string>{"step", "warmup/step", "warmup", "(overall)"});
  CHECK(j["steady_state"] == "step");
  const std::string out = text(a, b);
  const size_t first = out.find("\nverdict for ");
  REQUIRE(first != std::string::npos);
  CHECK(out.substr(first).rfind("\nverdict for step (most repeated range: 20 instances in A, 20 in B):\n", 0) == 0);
  CHECK(out.find("\nverdict for warmup:\n") < out.find("\nverdict for the whole run:\n"));
  CHECK(out.find("\nverdict for ", out.find("\nverdict for the whole run:\n") + 1) == std::string::npos);

  // Ranges repeated as often as the one they are in keep their depth-first order (step before step/mlp).
  const auto same = kc::diffJson({a}, {a});
  CHECK(verdictUnits(same) == std::vector<std::string>{"step", "step/mlp", "warmup/step", "warmup", "(overall)"});
  CHECK(same["steady_state"] == "step");

  // No range repeats: no steady state, the ranges in tree order, then the whole run.
  const kc::LoadedLog once = LogBuilder().repeat("load", 1, {kGemm}).repeat("run", 1, {kGelu}).done("once.kcount");
  const auto j1 = kc::diffJson({once}, {once});
  CHECK(verdictUnits(j1) == std::vector<std::string>{"load", "run", "(overall)"});
  CHECK(j1["steady_state"].is_null());
  CHECK(text(once, once).find("most repeated range") == std::string::npos);
}

TEST_CASE("diff sweep-shaped runs: every configuration's step verdict before the warm-ups and setups") {
  auto sweep = [](const std::string& path, int warmup_steps) {
    LogBuilder w;
    for (const char* cfg : {"cfg t=1", "cfg t=128"}) {
      w.push(cfg);
      w.repeat("setup", 1, {kGelu});
      w.push("warmup").repeat("step", warmup_steps, {kGemm, kGelu}).pop();
      w.repeat("step", 3, {kGemm, kGelu});
      w.pop();
    }
    return w.done(path);
  };
  const auto j = kc::diffJson({sweep("e.kcount", 1)}, {sweep("c.kcount", 2)});
  CHECK(verdictUnits(j) == std::vector<std::string>{"cfg t=1/step", "cfg t=128/step", "cfg t=1", "cfg t=1/setup",
                                                    "cfg t=1/warmup", "cfg t=1/warmup/step", "cfg t=128",
                                                    "cfg t=128/setup", "cfg t=128/warmup", "cfg t=128/warmup/step",
                                                    "(overall)"});
  CHECK(j["steady_state"] == "cfg t=1/step");
}

TEST_CASE("diff of runs that did different work: the whole-run verdict says its totals are not comparable") {
  const kc::LoadedLog a = trainingLog("a.kcount", 20), b = trainingLog("b.kcount", 30, /*eval=*/true);
  const auto j = kc::diffJson({a}, {b});
  const auto& work = j["overall"]["work_differs"];
  REQUIRE(work.is_object());
  // Only step: step/mlp differs because step does (20 against 30), which adds nothing.
  CHECK(work["instances"] == nlohmann::json::array({{{"path", "step"}, {"a", 20}, {"b", 30}}}));
  CHECK(work["only_a"] == nlohmann::json::array());
  CHECK(work["only_b"] == nlohmann::json::array({"eval"}));
  const auto& whole = j["verdicts"].back();
  REQUIRE(whole["unit"] == "(overall)");
  CHECK(whole["lines"][0] ==
        "whole-run totals not comparable: the runs did different work (instances differ: step (20 in A, 30 in B); "
        "top-level ranges only in B: eval); compare per instance in the ranges' verdicts");
  // The comparison of the steps themselves stays, per instance.
  const auto& step = j["verdicts"][0];
  REQUIRE(step["unit"] == "step");
  CHECK(step["lines"][0].get<std::string>().find("1 per step in A, 1 in B") != std::string::npos);
  const std::string out = text(a, b);
  CHECK(out.find("verdict for the whole run:\n  whole-run totals not comparable: the runs did different work") !=
        std::string::npos);

  // The same work (eager against compiled: other ranges inside the step) compares whole-run totals.
  const kc::LoadedLog c = trainingLog("c.kcount", 20, false, "fused");
  const auto same = kc::diffJson({a}, {c});
  CHECK(same["overall"]["work_differs"].is_null());
  CHECK(text(a, c).find("not comparable") == std::string::npos);
  // A top-level range of one side only is different work, on either side.
  const auto lacks = kc::diffJson({trainingLog("e.kcount", 20, true)}, {a});
  CHECK(lacks["overall"]["work_differs"]["only_a"] == nlohmann::json::array({"eval"}));
  CHECK(lacks["overall"]["work_differs"]["instances"] == nlohmann::json::array());
}

TEST_CASE("diff kernels section: GPU time per side and its change, largest GPU time first") {
  // aaa_small: many short kernels; zzz_big: one long one; a kernel of A only and one of B only.
  const kc::LoadedLog a = LogBuilder()
                              .repeat("step", 10, {"aaa_small_kernel"}, 100)
                              .repeat("step", 1, {"zzz_big_kernel"}, 5000)
                              .repeat("step", 1, {"mmm_gone_kernel"}, 3000)
                              .done("a.kcount");
  const kc::LoadedLog b = LogBuilder()
                              .repeat("step", 10, {"aaa_small_kernel"}, 100)
                              .repeat("step", 1, {"zzz_big_kernel"}, 6000)
                              .repeat("step", 1, {"bbb_new_kernel"}, 2000)
                              .done("b.kcount");
  const std::string out = text(a, b);
  const auto all = lines(out);
  auto rowOf = [&](const std::string& name) {
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].find(name) != std::string::npos && all[i].rfind("  ", 0) == 0 &&
          all[i].find("verdict") == std::string::npos && all[i].find(": ") == std::string::npos)
        return i;
    return all.size();
  };
  const size_t big = rowOf("zzz_big_kernel"), gone = rowOf("mmm_gone_kernel"), added = rowOf("bbb_new_kernel"),
               small = rowOf("aaa_small_kernel");
  REQUIRE(small < all.size());
  // 6.00 µs, 3.00 µs, 2.00 µs, 1.00 µs: by GPU time, not by name.
  CHECK(big < gone);
  CHECK(gone < added);
  CHECK(added < small);
  CHECK(all[big].find("5.00 µs") != std::string::npos);
  CHECK(all[big].find("6.00 µs") != std::string::npos);
  CHECK(all[big].find("+1.00 µs (+20%)") != std::string::npos);
  CHECK(all[gone].find("-3.00 µs (-100%)") != std::string::npos);
  CHECK(all[added].find("+2.00 µs (new)") != std::string::npos);
  CHECK(all[small].find("0 ns (0%)") != std::string::npos);
  // A heading names the columns.
  REQUIRE(big > 0);
  CHECK(all[big - 1].find("GPU A") != std::string::npos);
  CHECK(all[big - 1].find("count A") != std::string::npos);
  CHECK(all[big - 2].rfind("kernels (whole run, matched by decoded identity, largest GPU time first): 2 same, 1 only "
                           "in A, 1 only in B",
                           0) == 0);
}

TEST_CASE("diff verdict lines stay short when many kernel names differ") {
  // 40 distinct GEMM names in A, 40 others in B, and 30 pointwise kernels of A fused into 2 Triton kernels
  // of B; a range name of 200 characters.
  const std::string range(200, 'r');
  std::vector<std::string> ga, gb, pa;
  for (int i = 0; i < 40; ++i) {
    ga.push_back("nvjet_sm90_tst_" + std::to_string(64 + i) + "x128_64x4_1x2_h_bz_coopA_TNT");
    gb.push_back("nvjet_sm90_tst_" + std::to_string(256 + i) + "x128_64x4_1x2_h_bz_coopA_TNN");
  }
  for (int i = 0; i < 30; ++i)
    pa.push_back("void at::native::vectorized_elementwise_kernel<8, at::native::Functor" + std::to_string(i) +
                 "_with_a_rather_long_name_for_the_test>(int, int)");
  REQUIRE(kc::decodeKernelName(ga[0]).category == kc::KernelCategory::kGemm);
  std::vector<std::string> ka = ga, kb = gb;
  ka.insert(ka.end(), pa.begin(), pa.end());
  kb.push_back("triton_poi_fused__to_copy__unsafe_view_add_arange_bitwise_and_cat_cos_mul_neg_sin_0");
  kb.push_back("triton_poi_fused_gelu_mul_1");
  // Costliest first in the lists: the last GEMM of B runs longest.
  const kc::LoadedLog a = LogBuilder().repeat(range, 2, ka).repeat("step", 2, ka).done("a.kcount");
  LogBuilder wb;
  wb.repeat(range, 2, kb).repeat(range, 1, {gb.back()}, 100000);
  wb.repeat("step", 2, kb).repeat("step", 1, {gb.back()}, 100000);
  const kc::LoadedLog b = wb.done("b.kcount");
  const std::string out = text(a, b);
  // Verdict lines wrap at the width (120 columns here) with a hanging indent of 6 spaces: joined again.
  std::vector<std::string> joined;
  for (const auto& l : lines(out)) {
    if (l.rfind("      ", 0) == 0 && !joined.empty())
      joined.back() += " " + l.substr(l.find_first_not_of(' '));
    else
      joined.push_back(l);
  }
  bool in_verdicts = false, gemm_seen = false;
  for (const auto& l : joined) {
    if (l.rfind("verdict for ", 0) == 0) in_verdicts = true;
    if (!in_verdicts || l.empty()) continue;
    CHECK_MESSAGE(chars(l) <= kc::kMaxVerdictLine + 2, l);  // + the indent
    if (l.find("GEMM kernels changed") != std::string::npos) {
      gemm_seen = true;
      CHECK(l.find(" and 3") != std::string::npos);  // "... and 37 more" or so: counted, not listed
      CHECK(l.find(" more") != std::string::npos);
      // B's costliest GEMM is named first.
      CHECK_MESSAGE(l.find("only in B: nvjet_sm90_tst_295") != std::string::npos, l);
    }
  }
  CHECK(gemm_seen);
  const auto j = kc::diffJson({a}, {b});
  for (const auto& v : j["verdicts"])
    for (const auto& l : v["lines"]) CHECK_MESSAGE(chars(l.get<std::string>()) <= kc::kMaxVerdictLine, l);
  // JSON's kernels list keeps every name.
  CHECK(j["kernels"]["only_a"].size() == 70);
  CHECK(j["kernels"]["only_b"].size() == 42);
}

TEST_CASE("diff of several logs per side: logs of different command lines are named once") {
  auto log = [](const std::string& path, const char* cmd) {
    LogBuilder w;
    if (cmd != nullptr) w.meta("command_line", cmd);
    return w.repeat("step", 1, {kGemm}).done(path);
  };
  const auto r0 = log("r0.kcount", "python3 train.py --steps 20");
  const auto r1 = log("r1.kcount", "python3 train.py --steps 20");
  const auto other = log("other.kcount", "python3 eval.py");
  const auto none = log("none.kcount", nullptr);
  CHECK(kc::mixedCommandLines({r0, r1}, "A").empty());
  CHECK(kc::mixedCommandLines({r0, none}, "A").empty());  // unknown is not different
  CHECK(kc::mixedCommandLines({r0}, "A").empty());
  CHECK(kc::mixedCommandLines({r0, r1, other}, "B") ==
        "the 3 logs of B come from 2 different command lines, summed here as one run: `python3 train.py --steps 20` "
        "(r0.kcount, r1.kcount); `python3 eval.py` (other.kcount)");
  // torch.distributed.launch gives each rank its own --local_rank: one program.
  const auto l0 = log("l0.kcount", "python3 -u train.py --local_rank=0 --steps 20");
  const auto l1 = log("l1.kcount", "python3 -u train.py --local_rank=1 --steps 20");
  const auto l2 = log("l2.kcount", "python3 -u train.py --local-rank=2 --steps 20");
  const auto l3 = log("l3.kcount", "python3 -u train.py --local_rank 3 --steps 20");
  CHECK(kc::mixedCommandLines({l0, l1, l2, l3}, "A").empty());
  const auto l4 = log("l4.kcount", "python3 -u train.py --local_rank=4 --steps 30");
  CHECK(kc::mixedCommandLines({l0, l1, l4}, "A").find("`python3 -u train.py --local_rank=4 --steps 30` (l4.kcount)") !=
        std::string::npos);
}

TEST_CASE("diff verdict lines: a Triton kernel's fused ops are listed when its name is shortened") {
  const std::string long_triton = "triton_poi_fused__to_copy__unsafe_view_add_arange_bitwise_and_cat_cos_mul_neg_sin_0";
  const kc::LoadedLog a = LogBuilder().repeat("step", 2, {kGemm}).done("a.kcount");
  const kc::LoadedLog b =
      LogBuilder().repeat("step", 2, {kGemm, long_triton, "triton_poi_fused_gelu_mul_1"}).done("b.kcount");
  const auto j = kc::diffJson({a}, {b});
  REQUIRE(j["verdicts"][0]["unit"] == "step");
  std::string line;
  for (const auto& l : j["verdicts"][0]["lines"])
    if (l.get<std::string>().starts_with("pointwise: ")) line = l;
  REQUIRE_MESSAGE(!line.empty(), j["verdicts"][0].dump());
  CHECK(line.find("triton_poi_fused_gelu_mul_1;") != std::string::npos);  // shown whole: no ops again
  CHECK(line.find("triton_poi_fused__to_copy__uns…") != std::string::npos);
  CHECK(line.find("_sin_0 [_to_copy, ") != std::string::npos);  // shortened: its ops follow
  CHECK(line.find(" sin]") != std::string::npos);
  CHECK(chars(line) <= kc::kMaxVerdictLine);
}

TEST_CASE("diff's change of two sums: none where a side is held at 2^64 - 1 or the change passes 2^63 - 1") {
  constexpr uint64_t kMax = UINT64_MAX, kI64 = static_cast<uint64_t>(INT64_MAX);
  CHECK(kc::sumChange(3000, 1000) == -2000);
  CHECK(kc::sumChange(1000, 3000) == 2000);
  CHECK(kc::sumChange(7, 7) == 0);
  CHECK(kc::sumChange(0, kI64) == INT64_MAX);
  CHECK(kc::sumChange(kI64, 0) == -INT64_MAX);
  CHECK_FALSE(kc::sumChange(0, kI64 + 1).has_value());     // would wrap to a negative number
  CHECK_FALSE(kc::sumChange(kI64 + 1, 0).has_value());
  CHECK_FALSE(kc::sumChange(kMax, 3000).has_value());      // held: the true value is larger
  CHECK_FALSE(kc::sumChange(3000, kMax).has_value());
  CHECK_FALSE(kc::sumChange(kMax, kMax).has_value());      // two held sums: not "no change"
  CHECK(kc::sumChange(kMax - 1, kMax - 2) == -1);          // large but not held: exact
}
