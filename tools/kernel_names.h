// Kernel names as people read them: demangling and a short form for tables.
// Pure functions, thread-safe, no CUDA headers.
#pragma once

#include <string>
#include <string_view>

namespace kc {

/// Longest short name shown; longer ones are cut and end with "…".
inline constexpr size_t kMaxShortName = 100;

/// Demangled name for an Itanium-mangled name (starting with "_Z"); anything else, or a name the
/// demangler rejects, comes back unchanged.
std::string demangleKernelName(std::string_view name);

/// Short readable name: qualified function name with its top-level template arguments, each argument
/// reduced to its last identifier (nested template lists become "<…>"); return type and parameter
/// list dropped. For ATen kernels the functor is shown (GeluCUDAKernelImpl, MulFunctor) and the
/// plumbing arguments (std::array, offset calculators, load/store policies) are dropped. A name recorded
/// already demangled (isDemangledFunctionName()) gets the same short form as its mangled spelling. Other
/// names that are not mangled (nvjet_…, triton_…) stay as they are, cut at kMaxShortName characters like
/// every short name. When the demangled name cannot be parsed, it is cut at kMaxShortName characters,
/// never guessed at.
std::string shortKernelName(std::string_view name);

/// True for a kernel name recorded in demangled form: not mangled ("_Z..."), ending with the parameter
/// list the demangler writes ("void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)"), with
/// balanced brackets. Plain names (nvjet_..., triton_...) are not.
bool isDemangledFunctionName(std::string_view name);

/// shortKernelName() without the cut at kMaxShortName characters (for decoding, not for tables).
std::string shortKernelNameUncut(std::string_view name);

/// The name a table shows: the full demangled name when full is true, else shortKernelName().
std::string displayKernelName(std::string_view name, bool full);

/// Cuts s to at most max_chars characters (UTF-8 code points), ending with "…" when cut.
std::string ellipsize(std::string_view s, size_t max_chars);

/// Columns `s` takes in a terminal table: its UTF-8 code points (continuation bytes 10xxxxxx not counted;
/// "µs" is 2 bytes, 1 column). Every character is taken as one column (no wide East Asian characters in
/// the tables' own text). Thread-safe.
size_t displayWidth(std::string_view s);

}  // namespace kc
