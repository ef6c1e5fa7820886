// Names and paths of ranges as the outputs show them: escaped for text tables and CSV (displayPath(),
// displayRangeName()), with their NVTX domains, and as JSON keys.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collector/log_reader.h"

namespace kc {

/// A path as the table and CSV show it (displayPath(): a '/' in a name "\/", bytes that are no UTF-8 "\xHH")
/// as JSON writes it (kernels' "ranges" keys, diff's paths): escaped the same but for those bytes, which are
/// U+FFFD as everywhere in JSON (replaceInvalidUtf8()), as summary JSON's "path" has them. Thread-safe.
std::string jsonPathKey(std::string_view shown);
/// Path of a scope for text tables and CSV: displayRangeName() of each range from the root down, joined by
/// '/' ("(empty name)" also for a scope without a name string; "step/mylib: gemm" for a range gemm of
/// domain mylib inside a range step of the default domain); "(no range)" for the root, as
/// LogData::scopePath() for ids out of range or a broken parent chain.
/// `domains` false: the names alone, without the domain prefixes of displayRangeName() (the path a user
/// may give to `kcount kernels --range` when no other domain holds a range of that path).
std::string displayPath(const LogData& log, uint32_t scope_id, bool domains = true);
/// Name of a range as text tables and CSV show it: displayName() of its name, and for a range pushed in a
/// named NVTX domain (nvtxDomainCreate, nvtxDomainRangePushEx) displayName() of the domain and ": " before
/// it ("mylib: gemm"), so that ranges of one name in two domains read apart, as Nsight Systems keeps
/// domains apart; a range of the default domain is its name alone. displayPath() joins these.
std::string displayRangeName(const LogData& log, uint32_t scope_id);
/// A range's name as recorded, with its NVTX domain and ": " first for a range of a named domain
/// ("mylib: gemm"): displayRangeName() unescaped, for JSON and the HTML page.
std::string rangeNameWithDomain(const LogData& log, uint32_t scope_id);
/// LogData::scopePath() with rangeNameWithDomain() for each range when one of the chain is in a named NVTX
/// domain ("step/mylib: gemm"), so that ranges of one path in two domains have different paths; the same
/// as scopePath() for ranges of the default domain only, the root and broken chains. Names are raw (a
/// '/' inside a name is not escaped): JSON keys (kernels' "ranges") and the HTML page's paths.
std::string scopePathWithDomains(const LogData& log, uint32_t scope_id);
/// The name of the NVTX domain a range was pushed in; nullopt for the default domain, the root and a scope
/// id that the log does not define. JSON's "domain" (null for nullopt).
std::optional<std::string> rangeDomain(const LogData& log, uint32_t scope_id);

}  // namespace kc
