// Grammars and their sources: docs/kernel-names.md. Each decode* function below handles one grammar and
// fills only the fields that grammar defines; tokens it cannot name go to DecodedKernel::raw unchanged.
#include "tools/kernel_decode.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include "tools/kernel_names.h"

namespace kc {
namespace {

using Tokens = std::vector<std::string>;

Tokens split(std::string_view s, char sep) {
  Tokens out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string join(const Tokens& t, size_t from, size_t to, std::string_view sep) {
  std::string out;
  for (size_t i = from; i < to && i < t.size(); ++i) {
    if (!out.empty()) out += sep;
    out += t[i];
  }
  return out;
}

bool allDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// "256x128" (n == 2) or "128x256x64" (n == 3): n positive decimal numbers joined by 'x'.
bool isDims(std::string_view s, size_t n) {
  Tokens parts = split(s, 'x');
  if (parts.size() != n) return false;
  return std::all_of(parts.begin(), parts.end(), [](const std::string& p) { return allDigits(p); });
}

bool isLayout(std::string_view s, size_t min_len, size_t max_len, bool upper) {
  if (s.size() < min_len || s.size() > max_len) return false;
  const char t = upper ? 'T' : 't', n = upper ? 'N' : 'n';
  return std::all_of(s.begin(), s.end(), [&](char c) { return c == t || c == n; });
}

/// "sm90" -> true (an architecture token as NVIDIA writes it in library kernel names).
bool isSmArch(std::string_view s) { return s.size() > 2 && s.starts_with("sm") && allDigits(s.substr(2)); }

/// cuBLASLt's documented epilogue names (cublasLtEpilogue_t: CUBLASLT_EPILOGUE_BIAS, _RELU, _GELU, _AUX,
/// _DRELU, _DGELU, _BGRADA, _BGRADB), lower-cased. A name token equal to one of them is an epilogue.
bool isEpilogueWord(std::string_view s) {
  static constexpr std::array<std::string_view, 9> kWords = {"bias",  "relu",   "gelu",   "aux",  "drelu",
                                                             "dgelu", "bgrada", "bgradb", "bgrad"};
  return std::find(kWords.begin(), kWords.end(), s) != kWords.end();
}

void addEpilogue(DecodedKernel& d, std::string_view word) {
  if (!d.epilogue.empty()) d.epilogue += ' ';
  d.epilogue += word;
}

/// The identifier that starts at `at` in s (letters, digits, '_').
std::string_view identifierAt(std::string_view s, size_t at) {
  size_t end = at;
  while (end < s.size() && (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) ++end;
  return s.substr(at, end - at);
}

// ---- Element types: one vocabulary for the dtype field (docs/kernel-names.md, "dtype vocabulary") -----------
// Each grammar writes types its own way: CUTLASS's DataTypeNames (cutlass_library/library.py: "f16", "bf16",
// "tf32", "f32", "f64", "e4m3", "e5m2", "s8", "u8", "s32", "s4"), NCCL's generate.py ("f16", "f32", "i8",
// "u8", "i32", "u32", "i64", "u64", "f8e4m3", "f8e5m2"), cuBLAS's C++ template arguments ("__half",
// "__nv_bfloat16", "float", "double", "__nv_fp8_e4m3") and PyTorch's mem-eff attention generator ("f16",
// "bf16", "f32"). The dtype field uses the words PyTorch engineers read in torch.float16 & co.; the
// written spelling is kept in raw["dtype as written"] whenever it differs.
struct DtypeSpelling {
  std::string_view written, word;
};
constexpr DtypeSpelling kDtypeSpellings[] = {
    {"fp16", "fp16"},       {"f16", "fp16"},           {"half", "fp16"},         {"__half", "fp16"},
    {"bf16", "bf16"},       {"__nv_bfloat16", "bf16"}, {"fp32", "fp32"},         {"f32", "fp32"},
    {"float", "fp32"},      {"tf32", "tf32"},          {"fp64", "fp64"},         {"f64", "fp64"},
    {"double", "fp64"},     {"e4m3", "fp8_e4m3"},      {"f8e4m3", "fp8_e4m3"},   {"__nv_fp8_e4m3", "fp8_e4m3"},
    {"e5m2", "fp8_e5m2"},   {"f8e5m2", "fp8_e5m2"},    {"__nv_fp8_e5m2", "fp8_e5m2"},
    {"s8", "int8"},         {"i8", "int8"},            {"int8_t", "int8"},       {"u8", "uint8"},
    {"uint8_t", "uint8"},   {"s32", "int32"},          {"i32", "int32"},         {"u32", "uint32"},
    {"i64", "int64"},       {"u64", "uint64"},         {"s4", "int4"},           {"u4", "uint4"},
};

/// The vocabulary word of a written element type, or "" if the spelling is not a known one.
std::string_view dtypeWord(std::string_view written) {
  for (const auto& s : kDtypeSpellings)
    if (s.written == written) return s.word;
  return {};
}

/// Sets d.dtype to `word` and keeps `written` in raw["dtype as written"] when the name spells it otherwise.
void setDtype(DecodedKernel& d, std::string_view word, std::string_view written) {
  d.dtype = std::string(word);
  if (!written.empty() && written != word) d.raw.emplace_back("dtype as written", written);
}

/// Sets the dtype from one written type (unknown spellings are shown as written).
void setWrittenDtype(DecodedKernel& d, std::string_view written) {
  const std::string_view w = dtypeWord(written);
  setDtype(d, w.empty() ? written : w, written);
}

/// Splits a run of concatenated type spellings ("bf16bf16", "tf32f32") into vocabulary words; empty if any
/// part is not a CUTLASS/xmma type spelling.
Tokens splitTypeRun(std::string_view run) {
  static constexpr std::array<std::string_view, 11> kParts = {"tf32", "bf16", "f16", "f32", "f64", "e4m3",
                                                             "e5m2", "s8", "u8", "s32", "i8"};
  Tokens out;
  while (!run.empty()) {
    auto p = std::find_if(kParts.begin(), kParts.end(), [&](std::string_view k) { return run.starts_with(k); });
    if (p == kParts.end()) return {};
    out.emplace_back(dtypeWord(*p));
    run.remove_prefix(p->size());
  }
  return out;
}

// ---- cuBLAS nvjet (observed grammar, not documented by NVIDIA) ------------------------------------------
// nvjet_[smNN_]<variant>_<MxN>_<AxB>_<CxD>_<flag>..._<LAYOUT>, e.g.
// nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT. Read: MxN -> tile, CxD -> cluster, LAYOUT -> layout,
// documented cuBLASLt epilogue words -> epilogue; AxB, h/v and the other flags are kept raw. The variant's
// outer letters give the element type where they agree: "tst" -> bf16, "hsh" -> f16 (observed in this
// repository's H200 logs: across examples/logs/sweep-*.kcount every tst kernel, 1,247, ran in a
// dtype=bf16 range and every hsh kernel, 1,040, in a dtype=fp16 range; no other variant occurs there). The
// variant token is not a type spelling, so no "dtype as written" is kept (the variant is in raw).
bool decodeNvjet(std::string_view name, DecodedKernel& d) {
  if (!name.starts_with("nvjet_")) return false;
  Tokens t = split(name, '_');
  d.grammar = "nvjet";
  d.library = "cuBLAS (nvjet)";
  d.category = KernelCategory::kGemm;
  size_t i = 1;
  if (i < t.size() && isSmArch(t[i])) d.arch = t[i++];
  size_t end = t.size();
  if (end > i && isLayout(t[end - 1], 2, 4, true)) d.layout = t[--end];
  if (i < end) {
    const std::string_view v = t[i++];
    d.raw.emplace_back("variant", v);
    if (v.size() == 3 && v.front() == v.back()) {
      if (v.front() == 't') d.dtype = "bf16";
      else if (v.front() == 'h') d.dtype = "fp16";
    }
  }
  if (i + 2 < end && isDims(t[i], 2) && isDims(t[i + 1], 2) && isDims(t[i + 2], 2)) {
    d.tile = t[i];
    d.raw.emplace_back("shape2", t[i + 1]);
    d.cluster = t[i + 2];
    i += 3;
  }
  std::string flags;
  for (; i < end; ++i) {
    if (t[i] == "h" || t[i] == "v") {
      d.raw.emplace_back("h/v", t[i]);
    } else if (isEpilogueWord(t[i])) {
      addEpilogue(d, t[i]);
    } else {
      flags += (flags.empty() ? "" : " ") + t[i];
    }
  }
  if (!flags.empty()) d.raw.emplace_back("flags", flags);
  return true;
}

// ---- CUTLASS 3.x (cutlass_library/gemm_operation.py, GemmOperation.procedural_name, arch >= 90) ----------
// cutlass3x_sm{arch}_{opclass}_{core}_{A}_{B}_{acc}_{C}_{D}_{M}x{N}x{K}_{cm}x{cn}x{ck}_{stages}_{abc}_align{n}
// {tile scheduler}{kernel schedule}{epilogue schedule}
bool decodeCutlass3x(std::string_view full, DecodedKernel& d) {
  const size_t at = full.find("cutlass3x_sm");
  if (at == std::string_view::npos) return false;
  Tokens t = split(identifierAt(full, at), '_');
  // Anchor: <MxNxK>_<cmxcnxck>_<stages>_<abc>_align<n>.
  size_t tile = 0;
  for (size_t i = 3; i + 4 < t.size(); ++i)
    if (isDims(t[i], 3) && isDims(t[i + 1], 3) && allDigits(t[i + 2]) && isLayout(t[i + 3], 3, 3, false) &&
        t[i + 4].starts_with("align")) {
      tile = i;
      break;
    }
  if (tile == 0 || !isSmArch(t[1])) return false;
  d.grammar = "cutlass3x";
  d.library = "CUTLASS 3.x";
  d.arch = t[1];
  d.raw.emplace_back("opclass", t[2]);
  // Core name then A, B, accumulator, C, D element types (the five tokens before the tile).
  const size_t types = tile >= 5 ? tile - 5 : 3;
  const std::string core = join(t, 3, types, "_");
  d.category = core.find("gemm") != std::string::npos ? KernelCategory::kGemm : KernelCategory::kOther;
  d.kind = core;
  if (tile >= 8) {
    // dtype: A's type (A/B where they differ) in the vocabulary; the five types as written stay in raw.
    auto word = [](const std::string& w) {
      const std::string_view v = dtypeWord(w);
      return std::string(v.empty() ? std::string_view(w) : v);
    };
    d.dtype = t[types] == t[types + 1] ? word(t[types]) : word(t[types]) + "/" + word(t[types + 1]);
    d.raw.emplace_back("types (A_B_acc_C_D)", join(t, types, tile, "_"));
  }
  d.tile = t[tile];
  d.cluster = t[tile + 1];
  d.stages = t[tile + 2];
  d.layout = t[tile + 3];
  d.raw.emplace_back("alignment", t[tile + 4].substr(5));
  const std::string schedule = join(t, tile + 5, t.size(), "_");
  if (!schedule.empty()) d.raw.emplace_back("schedule", schedule);
  return true;
}

// ---- CUTLASS 2.x (cutlass_library: "cutlass{p}_{op}_{ex}_{tb}_{l}_align{a}", tb = "MxN_KxStages") ----------
// The names cuBLAS ships also carry the architecture after "cutlass_": cutlass_80_tensorop_s16816gemm_...
bool decodeCutlass2x(std::string_view full, DecodedKernel& d) {
  size_t at = full.find("cutlass_");
  while (at != std::string_view::npos && at > 0 &&
         (std::isalnum(static_cast<unsigned char>(full[at - 1])) || full[at - 1] == '_'))
    at = full.find("cutlass_", at + 1);
  if (at == std::string_view::npos) return false;
  Tokens t = split(identifierAt(full, at), '_');
  size_t i = 1;
  std::string arch;
  if (i < t.size() && allDigits(t[i])) arch = "sm" + t[i++];
  if (i >= t.size()) return false;
  const std::string opclass = t[i++];
  size_t tile = 0;
  for (size_t j = i; j + 3 < t.size(); ++j)
    if (isDims(t[j], 2) && isDims(t[j + 1], 2) && isLayout(t[j + 2], 2, 2, false) && t[j + 3].starts_with("align")) {
      tile = j;
      break;
    }
  if (tile == 0) return false;
  d.grammar = "cutlass2x";
  d.library = "CUTLASS 2.x";
  d.arch = arch;
  d.raw.emplace_back("opclass", opclass);
  // Extended name: [C type_]<core>[_A type], core = <accumulator letter><instruction shape>gemm.
  size_t core = tile;
  for (size_t j = i; j < tile; ++j)
    if (t[j].ends_with("gemm")) core = j;
  d.category = core < tile ? KernelCategory::kGemm : KernelCategory::kOther;
  if (core < tile) {
    d.kind = t[core];
    std::string a_written;
    for (size_t j = core + 1; j < tile; ++j) {
      if (isEpilogueWord(t[j])) addEpilogue(d, t[j]);
      else if (a_written.empty()) a_written = t[j];
      else d.raw.emplace_back("token", t[j]);
    }
    if (core > i) d.raw.emplace_back("C type", join(t, i, core, "_"));
    // Element types (GemmOperation.core_name / extended_name): core = <accumulator letter><instruction
    // shape><intermediate type>gemm, the letter from ShortDataTypeNames (s fp32, h fp16, d fp64, i int32);
    // "_<A type>" follows the core only where A differs from the accumulator, so without it A is the
    // accumulator's type; the intermediate type (s1688tf32gemm, s1688bf16gemm) is the type the MMA runs in
    // where it differs from A and from the accumulator. A tensor-op kernel on fp32 operands runs TF32 MMAs
    // (CUTLASS converts fp32 to tf32: NVIDIA/cutlass issue #466, and #610: "1xTF32. FP32 in, converted to
    // one TF32 internally, accumulated in FP32, FP32 out"): cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4
    // is a TF32 GEMM (recorded on the H200 by examples/sweep.py, only in its dtype=tf32 ranges).
    // dtype = the MMA's input type; accumulator and A in raw.
    std::string_view c = t[core];
    c.remove_suffix(4);
    static constexpr std::array<std::pair<char, std::string_view>, 4> kAcc = {
        {{'s', "fp32"}, {'h', "fp16"}, {'d', "fp64"}, {'i', "int32"}}};
    const auto acc = c.empty() ? kAcc.end()
                               : std::find_if(kAcc.begin(), kAcc.end(), [&](const auto& p) { return p.first == c[0]; });
    if (acc != kAcc.end()) {
      c.remove_prefix(1);
      while (!c.empty() && c[0] >= '0' && c[0] <= '9') c.remove_prefix(1);
      const std::string_view intermediate = dtypeWord(c);
      const std::string_view a_word = a_written.empty() ? acc->second : dtypeWord(a_written);
      if (!a_word.empty() && (c.empty() || !intermediate.empty())) {
        d.raw.emplace_back("accumulator", acc->second);
        d.raw.emplace_back("A", a_word);
        if (!intermediate.empty()) d.dtype = std::string(intermediate);
        else if (opclass.find("tensorop") != std::string::npos && a_word == "fp32") d.dtype = "tf32";
        else setDtype(d, a_word, a_written);
      }
    }
    if (d.dtype.empty() && !a_written.empty()) setWrittenDtype(d, a_written);
  }
  Tokens ks = split(t[tile + 1], 'x');
  d.tile = t[tile] + "x" + ks[0];
  d.stages = ks[1];
  d.layout = t[tile + 2];
  d.raw.emplace_back("alignment", t[tile + 3].substr(5));
  return true;
}

// ---- cuBLAS sm90_xmma (labelled tokens: tilesize..., cgasize..., warpgroupsize...) -------------------------
bool decodeXmma(std::string_view name, DecodedKernel& d) {
  const size_t at = name.find("_xmma_");
  if (at == std::string_view::npos || !isSmArch(name.substr(0, at))) return false;
  Tokens t = split(identifierAt(name, 0), '_');
  d.grammar = "xmma";
  d.arch = t[0];
  // The library that shipped the kernel is its last token where the name has one (`..._cublas`,
  // `..._cudnn`: docs/kernel-names.md, any name carrying "cudnn" is cuDNN's); without it, "xmma".
  const std::string_view ident = identifierAt(name, 0);
  const auto suffix = [&](std::string_view s) { return name.ends_with(s) || ident.ends_with(s); };
  d.library = suffix("_cublas") ? "cuBLAS (xmma)" : suffix("_cudnn") ? "cuDNN (xmma)" : "xmma";
  std::string op = t.size() > 2 ? t[2] : "";
  d.kind = op;
  // GEMMs, and convolutions run as implicit GEMMs (fprop, dgrad, wgrad: forward, data and weight
  // gradients), which docs/kernel-names.md counts as GEMM for cuDNN.
  if (op == "gemm" || op == "fprop" || op == "dgrad" || op == "wgrad") d.category = KernelCategory::kGemm;
  // Element types: the tokens after the op up to the first layout token.
  size_t i = 3;
  Tokens types;
  for (; i < t.size() && !isLayout(t[i], 2, 2, false); ++i) types.push_back(t[i]);
  if (i < t.size()) {
    // The type groups, as written, in raw; dtype = the first type of the second group. NVIDIA does not
    // document these names (NVIDIA/TensorRT-LLM issue #1541: "confidential"); the reading is observed:
    // recorded on the H200 by examples/sweep.py, sm90_xmma_gemm_f32f32_tf32f32_f32_... ran only in its
    // dtype=tf32 ranges and sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_... (fp32 FMA) only in dtype=fp32
    // ones, while the first group (f32f32) is the same for both; the public bf16 name has bf16f32 there.
    const std::string written = join(types, 0, types.size(), "_");
    if (!written.empty()) d.raw.emplace_back("types", written);
    const Tokens second = types.size() >= 2 ? splitTypeRun(types[1]) : Tokens{};
    if (!second.empty()) d.dtype = second[0];
    d.layout = t[i++];
    if (i < t.size() && isLayout(t[i], 1, 1, false)) d.raw.emplace_back("layout suffix", t[i++]);
  } else {
    i = 3;
  }
  std::string rest;
  for (; i < t.size(); ++i) {
    const std::string& k = t[i];
    if (k.starts_with("tilesize") && isDims(k.substr(8), 3)) d.tile = k.substr(8);
    else if (k.starts_with("cgasize") && isDims(k.substr(7), 3)) d.cluster = k.substr(7);
    else if (k.starts_with("warpgroupsize")) d.raw.emplace_back("warpgroupsize", k.substr(13));
    else if (k.starts_with("stage") && allDigits(k.substr(5))) d.stages = k.substr(5);  // labelled: stage3
    else if (k.starts_with("warpsize") && isDims(k.substr(8), 3)) d.raw.emplace_back("warpsize", k.substr(8));
    else rest += (rest.empty() ? "" : "_") + k;
  }
  if (!rest.empty()) d.raw.emplace_back("flags", rest);
  return true;
}

// ---- cuBLAS names from before nvjet/xmma: <arch>_[C type_]<core>gemm[_A type]_<MxN>_..._[stages_KxS]_<ab> --
bool decodeCublasLegacy(std::string_view name, DecodedKernel& d) {
  static constexpr std::array<std::string_view, 5> kArchs = {"maxwell", "pascal", "volta", "turing", "ampere"};
  Tokens t = split(identifierAt(name, 0), '_');
  if (t.size() < 3 || std::find(kArchs.begin(), kArchs.end(), t[0]) == kArchs.end()) return false;
  size_t core = t.size();
  for (size_t i = 1; i < t.size(); ++i)
    if (t[i].ends_with("gemm") || t[i].ends_with("gemv")) {
      core = i;
      break;
    }
  if (core == t.size()) return false;
  d.grammar = "cublas-legacy";
  d.library = "cuBLAS";
  d.category = KernelCategory::kGemm;
  d.arch = t[0];
  d.kind = t[core];
  size_t i = core + 1;
  if (i < t.size() && !isDims(t[i], 2) && !isLayout(t[i], 2, 2, false)) setWrittenDtype(d, t[i++]);
  std::string k_tile;
  std::string rest;
  for (; i < t.size(); ++i) {
    if (d.tile.empty() && isDims(t[i], 2)) {
      d.tile = t[i];
    } else if (t[i] == "stages" && i + 1 < t.size() && isDims(t[i + 1], 2)) {
      Tokens ks = split(t[++i], 'x');
      k_tile = ks[0];
      d.stages = ks[1];
    } else if (i + 1 == t.size() && isLayout(t[i], 2, 2, false)) {
      d.layout = t[i];
    } else if (isEpilogueWord(t[i])) {
      addEpilogue(d, t[i]);
    } else {
      rest += (rest.empty() ? "" : " ") + t[i];
    }
  }
  if (!d.tile.empty() && !k_tile.empty()) d.tile += "x" + k_tile;
  if (!rest.empty()) d.raw.emplace_back("flags", rest);
  return true;
}

// ---- TorchInductor Triton kernels (torch/_inductor/codegen/triton.py, define_kernel) ---------------------
// "triton_" + category[:3] + "_" + fused name + "_" + counter; fused name = "fused_" + sorted op names
// joined with "_" (or "" without descriptive names). Categories (wrapper_benchmark.py): foreach,
// persistent_reduction, pointwise, reduction, split_scan, template, unknown.

/// Multi-word ATen operator names (overload packet names in aten/src/ATen/native/native_functions.yaml, and
/// higher-order operator names) that appear in Inductor kernel names. A piece with a "_" inside must be one
/// of these to be read as one operation.
constexpr std::string_view kAtenMultiWordOps[] = {
    "_unsafe_view", "_to_copy", "_softmax", "_log_softmax", "_softmax_backward_data",
    "_log_softmax_backward_data", "_safe_softmax", "log_softmax", "native_layer_norm",
    "native_layer_norm_backward", "native_group_norm", "native_group_norm_backward", "native_batch_norm",
    "native_batch_norm_backward", "_native_batch_norm_legit", "_native_batch_norm_legit_functional",
    "_native_batch_norm_legit_no_training", "layer_norm", "group_norm", "batch_norm", "rms_norm",
    "_fused_rms_norm", "_fused_rms_norm_backward", "native_dropout", "native_dropout_backward",
    "gelu_backward", "silu_backward", "threshold_backward", "sigmoid_backward", "tanh_backward",
    "hardtanh_backward", "leaky_relu", "leaky_relu_backward", "elu_backward", "hardswish_backward",
    "hardsigmoid_backward", "mish_backward", "softplus_backward", "log_sigmoid_forward",
    "log_sigmoid_backward", "embedding_dense_backward", "embedding_backward", "_unsafe_index",
    "_unsafe_index_put", "_unsafe_masked_index", "index_put", "index_select", "index_add", "index_copy",
    "index_fill", "index_reduce", "masked_fill", "masked_scatter", "masked_select", "scatter_add",
    "scatter_reduce", "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided",
    "as_strided_scatter", "new_zeros", "new_ones", "new_empty", "new_full", "new_empty_strided",
    "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like", "randint_like",
    "empty_strided", "scalar_tensor", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d",
    "reflection_pad3d", "replication_pad1d", "replication_pad2d", "replication_pad3d", "upsample_nearest1d",
    "upsample_nearest2d", "upsample_nearest3d", "upsample_bilinear2d", "upsample_bicubic2d",
    "_upsample_nearest_exact2d", "_upsample_bilinear2d_aa", "adaptive_avg_pool2d", "_adaptive_avg_pool2d",
    "_adaptive_avg_pool2d_backward", "avg_pool2d", "avg_pool2d_backward", "max_pool2d_with_indices",
    "max_pool2d_with_indices_backward", "clamp_min", "clamp_max", "bitwise_and", "bitwise_or",
    "bitwise_not", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "logical_and", "logical_or",
    "logical_not", "logical_xor", "floor_divide", "true_divide", "var_mean", "std_mean", "nll_loss_forward",
    "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "_foreach_add", "_foreach_addcdiv", "_foreach_addcmul", "_foreach_div", "_foreach_lerp",
    "_foreach_mul", "_foreach_neg", "_foreach_pow", "_foreach_sqrt", "_foreach_sub", "_foreach_copy",
    "_foreach_maximum", "_foreach_norm", "_foreach_zero", "_foreach_exp", "_foreach_sign",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "flex_attention", "flex_attention_backward", "_int_mm",
    "_scaled_mm", "convolution_backward", "_weight_norm_interface", "linalg_vector_norm", "_local_scalar_dense",
    "cumsum", "cumprod", "logcumsumexp", "_assert_async", "_assert_scalar", "_to_dtype",
    "split_with_sizes", "_reshape_alias", "unsafe_split", "_pdist_forward", "grid_sampler_2d",
    "_grouped_mm", "round_decimals"};

bool acceptedOp(std::string_view piece) {
  if (piece.empty()) return false;
  const size_t us = piece.find('_');
  if (us == std::string_view::npos) return true;                    // one word
  if (us == piece.size() - 1 && us > 0) return true;                // one word, in-place ("add_")
  return std::find(std::begin(kAtenMultiWordOps), std::end(kAtenMultiWordOps), piece) != std::end(kAtenMultiWordOps);
}

/// Counts (up to 2) the splits of s[from..] into accepted, strictly ascending pieces after `prev`.
void splitOps(std::string_view s, size_t from, std::string_view prev, std::vector<std::string>& cur,
              std::vector<std::string>& found, int& count) {
  if (count > 1) return;
  if (from == s.size()) {
    if (++count == 1) found = cur;
    return;
  }
  for (size_t end = from + 1; end <= s.size(); ++end) {
    if (end < s.size() && s[end] != '_') continue;
    const std::string_view piece = s.substr(from, end - from);
    if (!acceptedOp(piece) || (!prev.empty() && !(prev < piece))) continue;
    cur.emplace_back(piece);
    splitOps(s, end == s.size() ? end : end + 1, piece, cur, found, count);
    cur.pop_back();
    if (end + 1 == s.size()) break;  // a trailing "_" cannot start a piece
  }
}

bool decodeInductorTriton(std::string_view name, DecodedKernel& d) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kKinds = {{
      {"poi", "pointwise"}, {"red", "reduction"}, {"per", "persistent_reduction"}, {"tem", "template"},
      {"for", "foreach"},   {"spl", "split_scan"}, {"unk", "unknown"}}};
  if (!name.starts_with("triton_") || name.size() < 12 || name[10] != '_') return false;
  const std::string_view kind3 = name.substr(7, 3);
  auto k = std::find_if(kKinds.begin(), kKinds.end(), [&](const auto& p) { return p.first == kind3; });
  if (k == kKinds.end()) return false;
  std::string_view rest = name.substr(11);
  const size_t last = rest.rfind('_');
  if (last == std::string_view::npos || !allDigits(rest.substr(last + 1))) return false;
  std::string_view middle = rest.substr(0, last);
  d.grammar = "inductor-triton";
  d.library = "Triton (Inductor)";
  d.kind = std::string(k->second);
  d.raw.emplace_back("counter", std::string(rest.substr(last + 1)));
  d.identity = "triton_" + std::string(kind3) + "_" + std::string(middle);
  if (middle == "fused") {
    d.fused = "";
  } else if (middle.starts_with("fused_")) {
    d.fused = std::string(middle.substr(6));
    d.ops = splitInductorFusedOps(d.fused);
  } else if (!middle.empty()) {
    d.raw.emplace_back("name", std::string(middle));
  }
  auto has = [&](std::initializer_list<std::string_view> any) {
    return std::any_of(d.ops.begin(), d.ops.end(),
                       [&](const std::string& o) { return std::find(any.begin(), any.end(), o) != any.end(); });
  };
  if (kind3 == "poi" || kind3 == "for") d.category = KernelCategory::kPointwise;
  else if (kind3 == "red" || kind3 == "per" || kind3 == "spl") d.category = KernelCategory::kReduction;
  else d.category = KernelCategory::kOther;
  if ((kind3 == "red" || kind3 == "per") &&
      has({"native_layer_norm", "layer_norm", "native_group_norm", "group_norm", "native_batch_norm",
           "_native_batch_norm_legit", "_native_batch_norm_legit_functional",
           "_native_batch_norm_legit_no_training", "batch_norm", "rms_norm", "_fused_rms_norm"}))
    d.category = KernelCategory::kNormalization;
  // A norm that Inductor decomposed before naming the kernel: x * rsqrt(mean(x^2) + eps) (RMSNorm) or
  // (x - mean) * rsqrt(var + eps) (LayerNorm, from var_mean): a reduction with rsqrt and mean/var_mean.
  if ((kind3 == "red" || kind3 == "per") && has({"rsqrt"}) && has({"mean", "var_mean"}))
    d.category = KernelCategory::kNormalization;
  if (kind3 == "tem") {
    if (has({"mm", "addmm", "bmm", "baddbmm", "_int_mm", "_scaled_mm", "convolution", "_grouped_mm"}))
      d.category = KernelCategory::kGemm;
    else if (has({"flex_attention", "flex_attention_backward"}))
      d.category = KernelCategory::kAttention;
  }
  return true;
}

// ---- NCCL (src/device/generate.py: ncclDevKernel_<coll>[_<redop>_<type>]_<ALGO>_<PROTO>) ------------------
bool decodeNccl(std::string_view full, DecodedKernel& d) {
  size_t at = full.find("ncclDevKernel_");
  size_t skip = 14;
  if (at == std::string_view::npos) {
    at = full.find("ncclKernel_");
    skip = 11;
  }
  if (at == std::string_view::npos) return false;
  const std::string_view id = identifierAt(full, at);
  Tokens t = split(id.substr(skip), '_');
  d.grammar = "nccl";
  d.library = "NCCL";
  d.category = KernelCategory::kCommunication;
  if (t.empty() || t[0].empty()) return true;
  d.kind = t[0];
  static constexpr std::array<std::string_view, 9> kRedOps = {"Sum", "Prod", "Min", "Max", "MinMax",
                                                             "PreMulSum", "SumPostDiv", "Avg", "Nop"};
  static constexpr std::array<std::string_view, 4> kProtos = {"LL", "LL128", "SIMPLE", "Simple"};
  static constexpr std::array<std::string_view, 16> kTypes = {
      "i8", "u8", "i32", "u32", "i64", "u64", "f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2",
      "int8_t", "uint8_t", "half", "float"};
  auto in = [](const auto& set, std::string_view s) { return std::find(set.begin(), set.end(), s) != set.end(); };
  std::string algo, rest;
  for (size_t i = 1; i < t.size(); ++i) {
    const std::string& k = t[i];
    if (in(kRedOps, k)) d.raw.emplace_back("reduction op", k);
    else if (in(kTypes, k)) setWrittenDtype(d, k);
    else if (in(kProtos, k)) d.raw.emplace_back("protocol", k);
    else if (k == "RING" || k == "TREE" || k == "NVLS" || k == "PAT" || k == "COLLNET") algo = k;
    else if (!algo.empty() && (k == "DIRECT" || k == "CHAIN" || (k == "TREE" && algo == "NVLS"))) algo += "_" + k;
    else rest += (rest.empty() ? "" : " ") + k;
  }
  if (!algo.empty()) d.raw.emplace_back("algorithm", algo);
  if (!rest.empty()) d.raw.emplace_back("flags", rest);
  return true;
}

// ---- flash-attention (Dao-AILab/flash-attention csrc/flash_attn/src: flash_fwd_kernel<Kernel_traits, ...>,
// Flash_fwd_kernel_traits<kHeadDim, kBlockM, kBlockN, kNWarps, ..., elem_type>) ------------------------------
bool decodeFlash(std::string_view demangled, std::string_view short_name, DecodedKernel& d) {
  const bool fa2 = short_name.find("flash_fwd") != std::string_view::npos ||
                   short_name.find("flash_bwd") != std::string_view::npos;
  const bool fa3 = demangled.find("flash::FlashAttn") != std::string_view::npos;
  if (!fa2 && !fa3) return false;
  d.grammar = "flash-attention";
  d.library = demangled.find("pytorch_flash::") != std::string_view::npos ? "flash-attention (PyTorch)" : "flash-attention";
  d.category = KernelCategory::kAttention;
  const size_t lt = short_name.find('<');
  const std::string_view fn = short_name.substr(0, lt);
  const size_t colon = fn.rfind("::");
  d.kind = std::string(colon == std::string_view::npos ? fn : fn.substr(colon + 2));
  for (std::string_view traits : {"Flash_fwd_kernel_traits<", "Flash_bwd_kernel_traits<"}) {
    const size_t at = demangled.find(traits);
    if (at == std::string_view::npos) continue;
    Tokens args = split(demangled.substr(at + traits.size(), 40), ',');
    if (args.size() >= 4) {
      auto trim = [](std::string s) {
        s.erase(0, s.find_first_not_of(' '));
        return s;
      };
      const std::string hd = trim(args[0]), bm = trim(args[1]), bn = trim(args[2]);
      if (allDigits(hd) && allDigits(bm) && allDigits(bn)) {
        d.tile = bm + "x" + bn;
        d.raw.emplace_back("head dim", hd);
      }
    }
    if (demangled.find("cutlass::bfloat16_t", at) != std::string_view::npos) d.dtype = "bf16";
    else if (demangled.find("cutlass::half_t", at) != std::string_view::npos) d.dtype = "fp16";
    break;
  }
  return true;
}

// ---- ATen element types (the demangled template arguments; docs/kernel-names.md, "ATen") -------------------
// Element types as the Itanium demangler writes them in ATen kernels: c10's types, C++'s built-in types
// (int64_t is long on Linux, as torch.int64), complex types.
constexpr DtypeSpelling kAtenTypes[] = {
    {"c10::complex<c10::Half>", "complex32"},
    {"c10::complex<float>", "complex64"},
    {"c10::complex<double>", "complex128"},
    {"c10::BFloat16", "bf16"},
    {"c10::Half", "fp16"},
    {"c10::Float8_e4m3fnuz", "fp8_e4m3fnuz"},
    {"c10::Float8_e5m2fnuz", "fp8_e5m2fnuz"},
    {"c10::Float8_e4m3fn", "fp8_e4m3"},
    {"c10::Float8_e5m2", "fp8_e5m2"},
    {"unsigned long long", "uint64"},
    {"unsigned long", "uint64"},
    {"unsigned int", "uint32"},
    {"unsigned short", "uint16"},
    {"unsigned char", "uint8"},
    {"signed char", "int8"},
    {"long long", "int64"},
    {"long", "int64"},
    {"int", "int32"},
    {"short", "int16"},
    {"float", "fp32"},
    {"double", "fp64"},
    {"bool", "bool"},
};

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Index of the bracket closing the one that opens at s[open] ('(' or '<'; all bracket kinds nest), or
/// s.size() if unbalanced.
size_t closingBracket(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '<' || s[i] == '[' || s[i] == '{') ++depth;
    else if ((s[i] == ')' || s[i] == '>' || s[i] == ']' || s[i] == '}') && --depth == 0) return i;
  }
  return s.size();
}

/// The identifier of the function whose "(params)" (possibly after "<targs>") ends just before `end`
/// (s[end - 1] == ')'), e.g. "gpu_kernel_impl_nocast" for "...gpu_kernel_impl_nocast<F>(A&, F const&)".
std::string_view enclosingFunction(std::string_view s, size_t end) {
  auto openOf = [&](size_t close) -> size_t {  // matching opening bracket of s[close], or npos
    int depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
      if (s[i] == ')' || s[i] == '>' || s[i] == ']' || s[i] == '}') ++depth;
      else if ((s[i] == '(' || s[i] == '<' || s[i] == '[' || s[i] == '{') && --depth == 0) return i;
    }
    return std::string_view::npos;
  };
  if (end == 0 || s[end - 1] != ')') return {};
  size_t at = openOf(end - 1);
  if (at == std::string_view::npos) return {};
  if (at > 0 && s[at - 1] == '>') {
    at = openOf(at - 1);
    if (at == std::string_view::npos) return {};
  }
  size_t begin = at;
  while (begin > 0 && isIdentChar(s[begin - 1])) --begin;
  return s.substr(begin, at - begin);
}

/// Element types written in an ATen kernel's demangled name, in reading order, as (word, written). Read: the
/// name up to its own parameter list, including lambdas' parameter types ("{lambda(c10::BFloat16)#1}");
/// not read: the parameter lists of enclosing functions ("GeluCUDAKernelImpl(at::TensorIteratorBase&,
/// ...)"), literal casts ("(unsigned char)1"), pointer and reference types ("char*": data pointers),
/// lambdas taking a pointer (index computations), and the index lambdas ATen's loop helpers define
/// (gpu_kernel_impl*, gpu_index_kernel, launch_*: "{lambda(int)#1}" takes an element index).
std::vector<std::pair<std::string_view, std::string_view>> atenElementTypes(std::string_view demangled) {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  // The kernel's own parameter list: the first '(' at depth 0 that is not "(anonymous namespace)".
  size_t end = demangled.size();
  {
    int depth = 0;
    for (size_t i = 0; i < demangled.size(); ++i) {
      const char c = demangled[i];
      if (depth == 0 && c == '(' && !demangled.substr(i).starts_with("(anonymous namespace)")) {
        end = i;
        break;
      }
      if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
      else if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    }
  }
  const std::string_view s = demangled.substr(0, end);
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '(') {
      const size_t close = std::min(closingBracket(s, i), s.size() - 1);
      const bool lambda = i >= 7 && s.substr(i - 7, 7) == "{lambda";
      bool read = lambda;
      if (lambda) {
        const std::string_view params = s.substr(i + 1, close - i - 1);
        const std::string_view fn = i >= 9 && s.substr(i - 9, 2) == "::" ? enclosingFunction(s, i - 9) : std::string_view{};
        if (params.find('*') != std::string_view::npos || fn.starts_with("gpu_kernel") ||
            fn.starts_with("gpu_index_kernel") || fn.starts_with("launch_"))
          read = false;
      }
      if (!read) {
        i = close + 1;
        continue;
      }
      ++i;
      continue;
    }
    if (!isIdentChar(s[i]) || (i > 0 && (isIdentChar(s[i - 1]) || s[i - 1] == ':'))) {
      ++i;
      continue;
    }
    const DtypeSpelling* hit = nullptr;
    for (const auto& t : kAtenTypes) {
      const size_t n = t.written.size();
      if (s.substr(i, n) == t.written && (i + n == s.size() || !isIdentChar(s[i + n]))) {
        hit = &t;
        break;
      }
    }
    if (!hit) {
      while (i < s.size() && isIdentChar(s[i])) ++i;
      continue;
    }
    size_t after = i + hit->written.size();
    size_t j = after;
    while (j < s.size() && s[j] == ' ') ++j;
    if (s.substr(j).starts_with("const")) j += 5;
    while (j < s.size() && s[j] == ' ') ++j;
    if (j >= s.size() || (s[j] != '*' && s[j] != '&')) out.emplace_back(hit->word, hit->written);
    i = after;
  }
  return out;
}

/// The dtype of an ATen kernel: the first element type its name writes (atenElementTypes()), passing over
/// float where a 16- or 8-bit floating type is written too (ATen computes Half, BFloat16 and the Float8
/// types in float: at::opmath_type, aten/src/ATen/OpMathType.h; so float there is the compute type, kept in
/// raw as "compute type"). Empty when the name writes no element type.
void setAtenDtype(std::string_view demangled, DecodedKernel& d) {
  const auto types = atenElementTypes(demangled);
  auto low = [](std::string_view w) { return w == "bf16" || w == "fp16" || w.starts_with("fp8"); };
  const bool reduced = std::any_of(types.begin(), types.end(), [&](const auto& t) { return low(t.first); });
  for (const auto& [word, written] : types) {
    if (reduced && word == "fp32") continue;
    setDtype(d, word, written);
    if (reduced && std::any_of(types.begin(), types.end(), [](const auto& t) { return t.first == "fp32"; }))
      d.raw.emplace_back("compute type", "fp32");
    return;
  }
}

// ---- ATen (at::native::<kernel><...>, functor from the demangled template arguments) -----------------------
bool decodeAten(std::string_view short_name, std::string_view demangled, DecodedKernel& d) {
  if (!short_name.starts_with("at::native::") && !short_name.starts_with("at::cuda::")) return false;
  d.grammar = "aten";
  d.library = "ATen";
  const size_t lt = short_name.find('<');
  const std::string_view fn = short_name.substr(0, lt);
  const size_t colon = fn.rfind("::");
  d.kind = std::string(colon == std::string_view::npos ? fn : fn.substr(colon + 2));
  if (lt != std::string_view::npos && short_name.ends_with(">")) {
    // Top-level template arguments of the short name; the functor is the last one that names a functor
    // or an Impl (the lambda's enclosing function).
    std::string_view args = short_name.substr(lt + 1, short_name.size() - lt - 2);
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= args.size(); ++i) {
      if (i < args.size() && (args[i] == '<' || args[i] == '(')) ++depth;
      if (i < args.size() && (args[i] == '>' || args[i] == ')')) --depth;
      if (i == args.size() || (depth == 0 && args[i] == ',')) {
        std::string_view a = args.substr(start, i - start);
        while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
        if (a.find("Functor") != std::string_view::npos || a.ends_with("Impl") || a.ends_with("Op") ||
            a.ends_with("Ops"))
          d.functor = std::string(a);
        start = i + 1;
      }
    }
  }
  // Copies and casts (aten/src/ATen/native/cuda/Copy.cu): the elementwise kernel's lambda sits in
  // direct_copy_kernel_cuda, bfloat16_copy_kernel_cuda, float16_copy_kernel_cuda, ...
  bool copy_lambda = false;
  for (size_t at = demangled.find("copy_kernel_cuda"); at != std::string_view::npos;
       at = demangled.find("copy_kernel_cuda", at + 1)) {
    size_t begin = at;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(demangled[begin - 1])) || demangled[begin - 1] == '_'))
      --begin;
    const std::string_view fn = identifierAt(demangled, begin);
    if (fn.ends_with("copy_kernel_cuda")) {
      if (d.functor.empty()) d.functor = std::string(fn);
      copy_lambda = true;
      break;
    }
  }
  setAtenDtype(demangled, d);
  const std::string& k = d.kind;
  auto contains = [&](std::string_view s) { return k.find(s) != std::string::npos; };
  if (d.functor == "FillFunctor" || copy_lambda || contains("copy") || contains("Copy") || contains("fill"))
    d.category = KernelCategory::kCopyMemset;
  else if (contains("norm") || contains("Norm") || contains("Moments") || contains("GammaBeta"))
    d.category = KernelCategory::kNormalization;
  else if (contains("softmax") || contains("SoftMax") || contains("reduce") || contains("scan"))
    d.category = KernelCategory::kReduction;
  else if (contains("elementwise"))
    d.category = KernelCategory::kPointwise;
  else
    d.category = KernelCategory::kOther;
  return true;
}

// ---- cuDNN (names that carry "cudnn") --------------------------------------------------------------------
bool decodeCudnn(std::string_view demangled, DecodedKernel& d) {
  if (demangled.find("cudnn") == std::string_view::npos) return false;
  d.grammar = "cudnn";
  d.library = "cuDNN";
  auto has = [&](std::string_view s) { return demangled.find(s) != std::string_view::npos; };
  if (has("sdpa") || has("flash") || has("fmha") || has("attention")) d.category = KernelCategory::kAttention;
  else if (has("bn_") || has("norm")) d.category = KernelCategory::kNormalization;
  else if (has("gemm") || has("fprop") || has("dgrad") || has("wgrad") || has("conv"))
    d.category = KernelCategory::kGemm;
  // Runtime-generated kernels: cudnn_generated_<tokens>, e.g. (recorded on the H200 by examples/sweep.py,
  // torch's scaled_dot_product_attention in the block configurations)
  // cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0.
  // NVIDIA documents no grammar for them. Read: smNN -> arch; the direction (fprop, bprop, dgrad, wgrad:
  // cuDNN's names for forward, backward, data- and weight-gradient passes) -> kind; cga<AxBxC> -> cluster
  // (CGA, cooperative grid array, is NVIDIA's name for a thread-block cluster: LLVM PR #72871, Triton's
  // multi-CTA tutorial); the first unlabelled AxBxC -> tile (a reading by position, as CUTLASS writes the
  // tile before other shapes; not documented); knob_N, the second AxBxC and the rest -> raw. The element
  // type token (f16) is kept raw and not read as dtype: the kernel above ran in dtype=bf16 ranges only, so
  // "f16" does not tell fp16 from bf16.
  const size_t at = demangled.find("cudnn_generated_");
  if (at == std::string_view::npos) return true;
  Tokens t = split(identifierAt(demangled, at + 16), '_');
  std::string flags;
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string& k = t[i];
    if (d.arch.empty() && isSmArch(k)) d.arch = k;
    else if (d.kind.empty() && (k == "fprop" || k == "bprop" || k == "dgrad" || k == "wgrad")) d.kind = k;
    else if (d.cluster.empty() && k.starts_with("cga") && isDims(k.substr(3), 3)) d.cluster = k.substr(3);
    else if (d.tile.empty() && isDims(k, 3)) d.tile = k;
    else if (isDims(k, 3)) d.raw.emplace_back("shape2", k);
    else if (k == "knob" && i + 1 < t.size() && allDigits(t[i + 1])) d.raw.emplace_back("knob", t[++i]);
    else if (!dtypeWord(k).empty()) d.raw.emplace_back("type", k);
    else flags += (flags.empty() ? "" : " ") + k;
  }
  if (!flags.empty()) d.raw.emplace_back("flags", flags);
  return true;
}

// cuBLAS helpers named by their namespace (cublasLt::splitKreduce_kernel, gemv kernels).
bool decodeCublasHelpers(std::string_view short_name, DecodedKernel& d) {
  if (short_name.starts_with("cublasLt::") || short_name.starts_with("cublas::")) {
    d.grammar = "cublas-namespace";
    d.library = "cuBLAS";
    d.category = short_name.find("splitK") != std::string_view::npos ||
                         short_name.find("gemv") != std::string_view::npos ||
                         short_name.find("gemm") != std::string_view::npos
                     ? KernelCategory::kGemm
                     : KernelCategory::kOther;
    return true;
  }
  return false;
}

/// Top-level template arguments of the template argument list that opens at s[lt] == '<'
/// ("<a, b<c, d>, e>" -> {"a", "b<c, d>", "e"}), each trimmed of spaces.
Tokens templateArgsAt(std::string_view s, size_t lt) {
  Tokens out;
  int depth = 0;
  size_t start = lt + 1;
  for (size_t i = lt; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') {
      ++depth;
    } else if ((c == '>' || c == ')') && --depth == 0) {
      out.emplace_back(s.substr(start, i - start));
      break;
    } else if (c == ',' && depth == 1) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  for (auto& a : out) {
    a.erase(0, a.find_first_not_of(' '));
    while (!a.empty() && a.back() == ' ') a.pop_back();
  }
  return out;
}

// ---- cuBLAS GEMV, small-N GEMM and split-K kernels (function names of cuBLAS's own kernels) ------------------
// cuBLAS launches these for matrix-vector and skinny products, e.g.
// gemv2T_kernel_val<int, int, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParams<...>>,
// internal::gemvx::kernel<...>, gemmSN_TN_kernel<...>, splitKreduce_kernel<...>, and for fp32 GEMMs with a
// long K (recorded on the H200, cuBLAS 13, TF32 off) sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>
// with scal_kernel<float, float, 1, true, 6, 5, 5, 3> (BLAS-1 scal: scales the output by beta first).
// Read: kind = the function, dtype = the distinct element types among the template arguments, as written,
// or for sgemm_/dgemm_ functions without type arguments the BLAS precision prefix (s = float,
// d = double). The numeric template arguments (block sizes) are not documented and are not shown.
bool decodeCublasKernels(std::string_view demangled, DecodedKernel& d) {
  static constexpr std::array<std::string_view, 12> kFunctions = {
      "gemv2T_kernel_val", "gemv2N_kernel", "gemvNSP_kernel", "internal::gemvx::kernel", "gemmk1_kernel",
      "gemmSN_TN_kernel", "gemmSN_NN_kernel", "gemmSN_NT_kernel", "splitKreduce_kernel", "sgemm_largek_lds64",
      "scal_kernel", "cublasLt::epilogue::impl::globalKernel"};
  // The function name starts the demangled name, or follows "void " / a return type and a space; cuBLAS 13
  // puts the split-K reduction in namespace cublasLt (recorded on the H200 by examples/sweep.py:
  // cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, ...>).
  std::string fn;
  size_t lt = std::string_view::npos;
  auto startsName = [&](size_t at) {
    if (at >= 10 && demangled.substr(at - 10, 10) == "cublasLt::") at -= 10;
    return at == 0 || demangled[at - 1] == ' ';
  };
  for (std::string_view f : kFunctions) {
    for (size_t at = demangled.find(f); at != std::string_view::npos; at = demangled.find(f, at + 1)) {
      const size_t after = at + f.size();
      if (startsName(at) && after < demangled.size() &&
          (demangled[after] == '<' || demangled[after] == '(')) {
        fn = std::string(f);
        lt = demangled[after] == '<' ? after : std::string_view::npos;
        break;
      }
    }
    if (!fn.empty()) break;
  }
  if (fn.empty()) return false;
  const Tokens args = lt == std::string_view::npos ? Tokens{} : templateArgsAt(demangled, lt);
  d.grammar = "cublas-kernel";
  d.library = "cuBLAS";
  d.category = KernelCategory::kGemm;
  d.kind = fn.starts_with("internal::") ? fn.substr(10) : fn;
  // The two helpers of a cuBLASLt matmul say what they are: the split-K reduction (cuBLASLt's documented
  // split-K algorithm, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sums the partial products of K slices) and the
  // epilogue kernel (its parameters include a cublasLtEpilogue_t, the documented epilogue enum; recorded on
  // the H200 by examples/sweep.py in fp32 Linear ranges, after the fp32 GEMM). Both belong to the GEMM.
  if (fn == "splitKreduce_kernel" || fn.starts_with("cublasLt::")) {
    d.raw.emplace_back("function", fn);
    d.kind = fn == "splitKreduce_kernel" ? "split-K reduction" : "epilogue";
  }
  static constexpr std::array<std::string_view, 8> kTypes = {
      "__nv_bfloat16", "__half", "float", "double", "float2", "double2", "__nv_fp8_e4m3", "__nv_fp8_e5m2"};
  Tokens types, written;
  for (const auto& a : args) {
    std::string_view t = a;
    if (std::find(kTypes.begin(), kTypes.end(), t) == kTypes.end()) continue;
    const std::string_view w = dtypeWord(t);
    const std::string word(w.empty() ? t : w);
    if (std::find(types.begin(), types.end(), word) == types.end()) {
      types.push_back(word);
      written.emplace_back(t);
    }
  }
  setDtype(d, join(types, 0, types.size(), "/"), join(written, 0, written.size(), "/"));
  if (d.dtype.empty() && (fn.starts_with("sgemm_") || fn.starts_with("dgemm_")))
    d.dtype = fn[0] == 's' ? "fp32" : "fp64";  // the BLAS precision prefix, not a type spelling
  if (fn == "scal_kernel") d.category = KernelCategory::kPointwise;
  return true;
}

// ---- PyTorch memory-efficient attention (aten/src/ATen/native/transformers/cuda/mem_eff_attention,
// kernels/generate_kernels.py): fmha_cutlass{F,B}_<dtype>_<aligned|notaligned>_<M>x<N>[_k<K>][_dropout]
// [_rf]_sm<arch>, launched as a global function taking PyTorchMemEffAttention::AttentionKernel<...>::Params.
bool decodeMemEffAttention(std::string_view demangled, DecodedKernel& d) {
  const size_t at = demangled.find("fmha_cutlass");
  if (at == std::string_view::npos || (at > 0 && demangled[at - 1] != ' ')) return false;
  Tokens t = split(identifierAt(demangled, at), '_');
  if (t.size() < 4 || (t[1] != "cutlassF" && t[1] != "cutlassB")) return false;
  d.grammar = "mem-eff-attention";
  d.library = "memory-efficient attention (PyTorch)";
  d.category = KernelCategory::kAttention;
  d.kind = t[1] == "cutlassF" ? "forward" : "backward";
  setWrittenDtype(d, t[2]);
  std::string flags;
  for (size_t i = 3; i < t.size(); ++i) {
    if (d.tile.empty() && isDims(t[i], 2)) d.tile = t[i];
    else if (isSmArch(t[i])) d.arch = t[i];
    else flags += (flags.empty() ? "" : " ") + t[i];
  }
  if (!flags.empty()) d.raw.emplace_back("flags", flags);
  return true;
}

}  // namespace

std::string_view categoryName(KernelCategory c) {
  switch (c) {
    case KernelCategory::kGemm: return "GEMM";
    case KernelCategory::kAttention: return "attention";
    case KernelCategory::kPointwise: return "pointwise";
    case KernelCategory::kReduction: return "reduction";
    case KernelCategory::kNormalization: return "normalization";
    case KernelCategory::kCopyMemset: return "copy/memset";
    case KernelCategory::kCommunication: return "communication";
    case KernelCategory::kOther: return "other";
  }
  return "other";
}

std::vector<std::string> splitInductorFusedOps(std::string_view fused) {
  std::vector<std::string> cur, found;
  int count = 0;
  if (fused.empty()) return {};
  splitOps(fused, 0, {}, cur, found, count);
  return count == 1 ? found : std::vector<std::string>{};
}

DecodedKernel decodeKernelName(std::string_view name) {
  DecodedKernel d;
  d.name = std::string(name);
  d.short_name = shortKernelNameUncut(name);
  const std::string demangled = demangleKernelName(name);
  d.identity = demangled;
  // Order matters only where grammars could overlap: names embedding another library's name (a CUTLASS
  // 2.x name inside cutlass::Kernel2<...>) are tried after the prefix grammars.
  if (decodeNvjet(name, d) || decodeInductorTriton(name, d) || decodeXmma(name, d) ||
      decodeCublasLegacy(name, d) || decodeCutlass3x(demangled, d) || decodeNccl(demangled, d) ||
      decodeFlash(demangled, d.short_name, d) || decodeCutlass2x(demangled, d) || decodeCudnn(demangled, d) ||
      decodeMemEffAttention(demangled, d) || decodeCublasKernels(demangled, d) || decodeAten(d.short_name, demangled, d) ||
      decodeCublasHelpers(d.short_name, d))
    return d;
  return d;  // no grammar matched: category "other", nothing else
}

nlohmann::json decodedJson(const DecodedKernel& d) {
  auto s = [](const std::string& v) -> nlohmann::json { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json raw = nlohmann::json::object();
  for (const auto& [k, v] : d.raw) raw[k] = v;
  return nlohmann::json{{"category", std::string(categoryName(d.category))},
                        {"library", s(d.library)},
                        {"grammar", s(d.grammar)},
                        {"arch", s(d.arch)},
                        {"tile", s(d.tile)},
                        {"cluster", s(d.cluster)},
                        {"stages", s(d.stages)},
                        {"dtype", s(d.dtype)},
                        {"layout", s(d.layout)},
                        {"epilogue", s(d.epilogue)},
                        {"kind", s(d.kind)},
                        {"ops", d.ops},
                        {"fused", d.grammar == "inductor-triton" ? nlohmann::json(d.fused) : nlohmann::json(nullptr)},
                        {"functor", s(d.functor)},
                        {"raw", raw},
                        {"identity", d.identity}};
}

}  // namespace kc
