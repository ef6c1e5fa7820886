// kcount diff's answer-first helpers (tools/diff_answer.h) and ranges matched across nesting
// (tools/diff_nesting.h), on hand-made values.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tools/diff_answer.h"
#include "tools/diff_nesting.h"

namespace {

kc::DiffUnit unit(uint64_t instances, uint64_t kernels) {
  kc::DiffUnit u;
  u.present = true;
  u.instances = instances;
  u.kernels = u.launches = kernels;
  return u;
}

void addKernel(kc::DiffUnit& u, const std::string& id, const std::string& category, uint64_t count, uint64_t ns) {
  kc::DiffKernel& k = u.by_identity[id];
  k.name = k.short_name = k.short_full = id;
  k.category = category;
  k.count = count;
  k.gpu_ns = ns;
}

/// A side with range `step` (20 instances) whose children are `children` (name, kernels).
kc::DiffSide side(const std::vector<std::pair<std::string, uint64_t>>& children) {
  kc::DiffSide s;
  s.paths = {"(overall)", "step"};
  s.units["(overall)"] = unit(0, 0);
  s.units["step"] = unit(20, 0);
  s.names["step"] = "step";
  s.parents["step"] = "(overall)";
  for (const auto& [name, kernels] : children) {
    const std::string p = "step/" + name;
    s.paths.push_back(p);
    s.units[p] = unit(20, kernels);
    s.names[p] = name;
    s.parents[p] = "step";
  }
  return s;
}

}  // namespace

TEST_CASE("wrapLine: at spaces, a hanging indent, long words whole") {
  const auto lines = kc::wrapLine("aaa bbb ccc ddd", 9, "  ", 4);
  CHECK(lines == std::vector<std::string>{"  aaa bbb", "      ccc", "      ddd"});
  CHECK(kc::wrapLine("short", 0, "  ", 4) == std::vector<std::string>{"  short"});
  CHECK(kc::wrapLine("x averyveryverylongword y", 8, "", 2) ==
        std::vector<std::string>{"x", "  averyveryverylongword", "  y"});
}

TEST_CASE("largestChanges: GPU time first, then counts; original order kept") {
  std::vector<kc::RowChange> rows{{std::nullopt, 50}, {10, 0}, {30, 0}, {20, 1}};
  CHECK(kc::largestChanges(rows, 2) == std::vector<size_t>{2, 3});
  CHECK(kc::largestChanges(rows, 10) == std::vector<size_t>{0, 1, 2, 3});
}

TEST_CASE("underPath: a path and the paths under it") {
  CHECK(kc::underPath("step", "step"));
  CHECK(kc::underPath("step/mlp", "step"));
  CHECK_FALSE(kc::underPath("stepper", "step"));
  CHECK_FALSE(kc::underPath("warmup/step", "step"));
}

TEST_CASE("notShownLine: what is left out, or nothing") {
  CHECK(kc::notShownLine(2, 2, 5, 5, 3, 3).empty());
  CHECK(kc::notShownLine(2, 4, 10, 14, 8, 8).starts_with("not shown: 2 of 4 verdicts, 4 of 14 ranges (kcount diff --all"));
}

TEST_CASE("regroupings: children of one side only compared as one, per instance of the common range") {
  kc::DiffSide a = side({{"gate", 20}, {"up", 20}, {"act", 40}, {"down", 20}});
  kc::DiffSide b = side({{"mlp", 80}});
  addKernel(a.units["step/gate"], "gemm1", "GEMM", 20, 100);
  addKernel(a.units["step/act"], "void at::native::vectorized_elementwise_kernel<8, MulFunctor>", "pointwise", 20, 5);
  addKernel(b.units["step/mlp"], "triton_poi_fused_mul_0", "pointwise", 20, 4);
  addKernel(b.units["step/mlp"], "gemm1", "GEMM", 60, 300);
  const auto r = kc::regroupings(a, b);
  REQUIRE(r.size() == 1);
  CHECK(r[0].parent == "step");
  CHECK(r[0].names_a == std::vector<std::string>{"gate", "up", "act", "down"});
  CHECK(kc::regroupLine(r[0], "step") == "gate, up, act, down (5 kernels per step) in A ran as mlp (4 kernels per step) in B");
  CHECK(kc::regroupKernelsLines(r[0]) ==
        std::vector<std::string>{"A: 1 GEMM + MulFunctor", "B: 3 GEMM + triton_poi_fused_mul_0"});
  CHECK(kc::regroupings(a, a).empty());
}

TEST_CASE("compactKernelName: a functor argument, else the function's own name") {
  kc::DiffKernel k;
  k.short_full = "at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl>";
  CHECK(kc::compactKernelName(k) == "GeluCUDAKernelImpl");
  k.short_full = "at::native::vectorized_layer_norm_kernel<BFloat16, float, true>";
  CHECK(kc::compactKernelName(k) == "vectorized_layer_norm_kernel");
  k.short_full = "triton_poi_fused_gelu_mul_0";
  CHECK(kc::compactKernelName(k) == "triton_poi_fused_gelu_mul_0");
}
