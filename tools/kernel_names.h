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

/// A kernel name as an output shows it. Text (tables, sentences): displayKernelName() (the short name cut at
/// kMaxShortName characters unless `full`) escaped by displayText(). Machine-readable (CSV, JSON): the full
/// demangled name, or the short name uncut (shortKernelNameUncut()), bytes as recorded.
std::string kernelNameFor(std::string_view name, bool full, bool text);

/// Cuts `s` to at most `max_columns` display columns (displayWidth()), ending with "…" when cut; a wide
/// character is never split (the result may then be a column narrower).
std::string ellipsize(std::string_view s, size_t max_columns);

/// One character of UTF-8 text: its length in bytes and the terminal columns it takes.
struct DisplayChar {
  size_t bytes;
  size_t width;
};
/// The character of `s` starting at byte `at` (< s.size()): its columns by utf8proc_charwidth() (Unicode
/// 15 with Debian's utf8proc 2.8: 2 for wide East Asian characters, 0 for combining marks, 1 for most
/// others and for East Asian ambiguous ones such as "…", "×" and "µ"), the same in every locale. A byte
/// that does not start a valid UTF-8 sequence (invalid or cut short, or an encoded surrogate) is one
/// character of 1 byte and 1 column, as the U+FFFD REPLACEMENT CHARACTER that stands for it. Thread-safe.
DisplayChar nextDisplayChar(std::string_view s, size_t at);

/// Columns `s` takes in a terminal table: the sum of its characters' widths (nextDisplayChar()); "µs" is 2
/// bytes and 1 column, "前向" 6 bytes and 4 columns, "e" + U+0301 1 column. Thread-safe.
size_t displayWidth(std::string_view s);

/// Bytes of the longest start of `s` that takes at most `max_columns` display columns (the zero-width
/// characters that follow it included: a combining mark stays with its base).
size_t headBytes(std::string_view s, size_t max_columns);

/// Byte offset of the longest end of `s` that takes at most `max_columns` display columns, less any
/// zero-width characters at its start (a combining mark whose base is cut off); s.size() for none.
size_t tailStart(std::string_view s, size_t max_columns);

}  // namespace kc
