#include "tools/kernel_names.h"

#include <cxxabi.h>
#include <utf8proc.h>  // Debian libutf8proc-dev

#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>
#include "tools/text.h"


namespace kc {
namespace {

constexpr std::string_view kAnon = "(anonymous namespace)";
constexpr std::string_view kAnonToken = "{anon}";  // braces nest like the rest, so parsing stays simple

bool isOpen(char c) { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool isClose(char c) { return c == ')' || c == '>' || c == ']' || c == '}'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

/// True if brackets balance (any kind counts as one nesting level; the demangler's output nests well).
bool balanced(std::string_view s) {
  int depth = 0;
  for (char c : s) {
    if (isOpen(c)) ++depth;
    if (isClose(c) && --depth < 0) return false;
  }
  return depth == 0;
}

/// Splits s at `sep` occurring at nesting depth 0.
std::vector<std::string_view> splitTop(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (isOpen(c)) ++depth;
    else if (isClose(c)) --depth;
    else if (depth == 0 && s.compare(i, sep.size(), sep) == 0) {
      out.push_back(s.substr(start, i - start));
      i += sep.size() - 1;
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

/// Position of the first `c` at depth 0, or npos.
size_t findTop(std::string_view s, char c) {
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (depth == 0 && s[i] == c) return i;
    if (isOpen(s[i])) ++depth;
    else if (isClose(s[i])) --depth;
  }
  return std::string_view::npos;
}

/// Splits "ident<args>(params) const" into ident and the text inside the top-level <...>.
void splitTemplate(std::string_view comp, std::string_view& ident, std::string_view& targs) {
  const size_t paren = findTop(comp, '(');
  if (paren != std::string_view::npos) comp = comp.substr(0, paren);
  comp = trim(comp);
  const size_t lt = findTop(comp, '<');
  targs = {};
  if (lt != std::string_view::npos && comp.back() == '>') {
    targs = trim(comp.substr(lt + 1, comp.size() - lt - 2));
    comp = comp.substr(0, lt);
  }
  ident = trim(comp);
}

bool isWrapper(std::string_view ident) {
  // Generic ATen holders whose interesting part is the functor they wrap.
  for (std::string_view w : {"BinaryFunctor", "AUnaryFunctor", "BUnaryFunctor", "gpu_kernel_impl",
                             "gpu_kernel_impl_nocast", "gpu_kernel_with_scalars"})
    if (ident == w) return true;
  return false;
}

bool isPlumbing(std::string_view ident) {
  for (std::string_view w : {"array", "Array", "OffsetCalculator", "TrivialOffsetCalculator", "LoadWithoutCast",
                             "StoreWithoutCast", "LoadWithCast", "StoreWithCast"})
    if (ident == w) return true;
  return false;
}

/// One template argument reduced to what a reader needs; ident_out gets its identifier (for filtering).
std::string shortArg(std::string_view arg, std::string* ident_out = nullptr, int level = 0) {
  arg = trim(arg);
  if (arg.empty()) return {};
  // Numbers and literals ("8", "2ul", "(unsigned char)1", "true") stay as they are.
  if ((arg[0] >= '0' && arg[0] <= '9') || arg[0] == '-' || arg[0] == '(' || arg == "true" || arg == "false")
    return std::string(arg);
  std::string_view last;
  for (std::string_view comp : splitTop(arg, "::")) {
    comp = trim(comp);
    if (comp.empty() || comp.front() == '{' || comp.starts_with("operator")) continue;  // lambdas, call ops
    last = comp;
  }
  if (last.empty()) return "lambda";
  std::string_view ident, targs;
  splitTemplate(last, ident, targs);
  if (ident_out) *ident_out = std::string(ident);
  if (isWrapper(ident) && !targs.empty() && level < 8) {
    for (std::string_view inner : splitTop(targs, ",")) {
      std::string inner_ident;
      std::string s = shortArg(inner, &inner_ident, level + 1);
      if (inner_ident.find("Functor") != std::string::npos || inner_ident == "lambda" || s == "lambda") return s;
    }
    return std::string(ident);
  }
  if (ident.find("Functor") != std::string_view::npos || targs.empty()) return std::string(ident);
  return std::string(ident) + "<…>";
}

std::optional<std::string> shorten(std::string demangled) {
  for (size_t at = demangled.find(kAnon); at != std::string::npos; at = demangled.find(kAnon, at))
    demangled.replace(at, kAnon.size(), kAnonToken);
  std::string_view d = demangled;
  if (!balanced(d)) return std::nullopt;
  // Name part: up to the parameter list; then drop the return type (before the last top-level space).
  std::string_view name = d.substr(0, std::min(findTop(d, '('), d.size()));
  name = trim(name);
  {
    int depth = 0;
    size_t last_space = std::string_view::npos;
    for (size_t i = 0; i < name.size(); ++i) {
      if (isOpen(name[i])) ++depth;
      else if (isClose(name[i])) --depth;
      else if (depth == 0 && name[i] == ' ') last_space = i;
    }
    if (last_space != std::string_view::npos) name = name.substr(last_space + 1);
  }
  if (name.empty()) return std::nullopt;
  std::vector<std::string_view> comps = splitTop(name, "::");
  std::string out;
  for (size_t i = 0; i + 1 < comps.size(); ++i) {
    std::string_view ident, targs;
    splitTemplate(comps[i], ident, targs);
    if (ident.empty()) return std::nullopt;
    out += std::string(ident) == kAnonToken ? std::string(kAnon) : std::string(ident);
    if (!targs.empty()) out += "<…>";
    out += "::";
  }
  std::string_view ident, targs;
  splitTemplate(comps.back(), ident, targs);
  if (ident.empty()) return std::nullopt;
  out += ident;
  if (!targs.empty()) {
    const bool aten = name.starts_with("at::native::");
    std::string args;
    for (std::string_view a : splitTop(targs, ",")) {
      std::string arg_ident;
      std::string s = shortArg(a, &arg_ident);
      if (s.empty() || (aten && isPlumbing(arg_ident))) continue;
      if (!args.empty()) args += ", ";
      args += s;
    }
    out += "<" + args + ">";
  }
  return out;
}

}  // namespace

DisplayChar nextDisplayChar(std::string_view s, size_t at) {
  const auto byte = static_cast<unsigned char>(s[at]);
  if (byte >= 0x20 && byte < 0x7F) return {1, 1};  // printable ASCII: most of every table
  utf8proc_int32_t cp = 0;
  const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + at),
                                              static_cast<utf8proc_ssize_t>(s.size() - at), &cp);
  if (n <= 0) return {1, 1};  // not UTF-8: one U+FFFD REPLACEMENT CHARACTER, one column
  return {static_cast<size_t>(n), static_cast<size_t>(utf8proc_charwidth(cp))};
}

size_t displayWidth(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    const DisplayChar c = nextDisplayChar(s, i);
    n += c.width;
    i += c.bytes;
  }
  return n;
}

size_t headBytes(std::string_view s, size_t max_columns) {
  size_t i = 0, width = 0;
  while (i < s.size()) {
    const DisplayChar c = nextDisplayChar(s, i);
    if (width + c.width > max_columns) break;
    width += c.width;
    i += c.bytes;
  }
  return i;
}

namespace {
/// Byte offset where the character of `s` that ends at byte `end` (> 0) starts: the valid UTF-8 sequence
/// of up to 4 bytes that ends there, else the byte before `end` alone (as nextDisplayChar() reads it).
size_t charStartBefore(std::string_view s, size_t end) {
  if (static_cast<unsigned char>(s[end - 1]) < 0x80) return end - 1;  // ASCII
  for (size_t len = 2; len <= 4 && len <= end; ++len) {
    utf8proc_int32_t cp = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + end - len),
                                                static_cast<utf8proc_ssize_t>(len), &cp);
    if (n == static_cast<utf8proc_ssize_t>(len)) return end - len;
  }
  return end - 1;
}
}  // namespace

size_t tailStart(std::string_view s, size_t max_columns) {
  size_t start = s.size(), width = 0;
  while (start > 0) {
    const size_t before = charStartBefore(s, start);
    const size_t w = nextDisplayChar(s, before).width;
    if (width + w > max_columns) break;
    width += w;
    start = before;
  }
  while (start < s.size() && nextDisplayChar(s, start).width == 0)  // a combining mark without its base
    start += nextDisplayChar(s, start).bytes;
  return start;
}

std::string ellipsize(std::string_view s, size_t max_columns) {
  if (displayWidth(s) <= max_columns) return std::string(s);
  return std::string(s.substr(0, headBytes(s, max_columns > 0 ? max_columns - 1 : 0))) + "…";
}

std::string demangleKernelName(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(std::string(name).c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return std::string(name);
  return out.get();
}

bool isDemangledFunctionName(std::string_view name) {
  // The demangler writes a function's parameter list last: "...kernel<...>(int, ...)". A plain kernel name
  // (nvjet_..., triton_...) has no parentheses; balance keeps cut or odd names out.
  return !name.starts_with("_Z") && name.ends_with(")") && name.find('(') != std::string_view::npos &&
         balanced(name);
}

std::string shortKernelNameUncut(std::string_view name) {
  if (isDemangledFunctionName(name)) {  // recorded demangled: the same short form as its mangled name
    auto s = shorten(std::string(name));
    return s ? *s : std::string(name);
  }
  if (!name.starts_with("_Z")) return std::string(name);
  std::string demangled = demangleKernelName(name);
  if (demangled == name) return demangled;
  auto s = shorten(demangled);
  return s ? *s : demangled;
}

std::string shortKernelName(std::string_view name) { return ellipsize(shortKernelNameUncut(name), kMaxShortName); }

std::string displayKernelName(std::string_view name, bool full) {
  return full ? demangleKernelName(name) : shortKernelName(name);
}

std::string kernelNameFor(std::string_view name, bool full, bool text) {
  if (text) return displayText(displayKernelName(name, full));
  return full ? demangleKernelName(name) : shortKernelNameUncut(name);
}

}  // namespace kc
