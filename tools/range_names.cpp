#include "tools/range_names.h"

#include <cctype>
#include <cstdlib>

#include <unordered_set>
#include <vector>

#include "tools/range_names_internal.h"
#include "tools/text.h"

namespace kc {

std::string rowPath(const LogData& d, uint32_t id) {
  if (id == kUnresolvedRow) return std::string(kUnresolvedLabel);
  return id == kRootScope ? d.scopePath(id) : displayPath(d, id);
}

std::optional<std::string> rangeDomain(const LogData& log, uint32_t scope_id) {
  if (scope_id == kRootScope || !log.scopeDefined(scope_id) || log.scopes[scope_id].domain_id == kNoString)
    return std::nullopt;
  return std::string(log.str(log.scopes[scope_id].domain_id));
}

std::string displayRangeName(const LogData& log, uint32_t scope_id) {
  std::string name = displayName(log.str(log.scopes[scope_id].name_id));
  if (const auto domain = rangeDomain(log, scope_id)) return displayName(*domain) + ": " + name;
  return name;
}

std::string rangeNameWithDomain(const LogData& log, uint32_t scope_id) {
  std::string name(log.str(log.scopes[scope_id].name_id));
  if (const auto domain = rangeDomain(log, scope_id)) return *domain + ": " + name;
  return name;
}

std::string scopePathWithDomains(const LogData& log, uint32_t scope_id) {
  std::vector<uint32_t> chain;
  bool domains = false;
  for (uint32_t s = scope_id; s != kRootScope; s = log.scopes[s].parent_id) {
    // A lost or bad parent, a cycle or an absurd depth: LogData::scopePath() says so.
    if (!log.scopeDefined(s) || s >= log.scopes.size() || chain.size() >= 256) return log.scopePath(scope_id);
    domains = domains || rangeDomain(log, s).has_value();
    chain.push_back(s);
  }
  if (!domains) return log.scopePath(scope_id);
  std::string path;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) path += (path.empty() ? "" : "/") + rangeNameWithDomain(log, *it);
  return path;
}

std::string displayPath(const LogData& log, uint32_t scope_id, bool domains) {
  if (log.scopeLost(scope_id)) return lostRangeName(log.logScopeId(scope_id));
  if (scope_id == kRootScope || !log.scopeDefined(scope_id)) return log.scopePath(scope_id);
  std::vector<uint32_t> chain;
  std::unordered_set<uint32_t> seen;
  std::string path;
  for (uint32_t id = scope_id; id != kRootScope; id = log.scopes[id].parent_id) {
    if (log.scopeLost(id)) {  // ranges recorded inside a range whose definition was lost: grouped under it
      path = lostRangeName(log.logScopeId(id));
      break;
    }
    // A bad parent, a cycle or an absurd depth: LogData::scopePath() says so.
    if (!log.scopeDefined(id) || !seen.insert(id).second || chain.size() >= 256) return log.scopePath(scope_id);
    chain.push_back(id);
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!path.empty()) path += '/';
    path += domains ? displayRangeName(log, *it) : displayName(log.str(log.scopes[*it].name_id));
  }
  return path;
}

std::string jsonPathKey(std::string_view shown) {
  std::string raw;
  raw.reserve(shown.size());
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (size_t i = 0; i < shown.size(); ++i) {
    if (shown[i] == '\\' && i + 1 < shown.size() && shown[i + 1] == '\\') {  // "\\": a backslash, kept
      raw += "\\\\";
      ++i;
    } else if (shown[i] == '\\' && i + 3 < shown.size() && shown[i + 1] == 'x' && hex(shown[i + 2]) &&
               hex(shown[i + 3]) && std::strtoul(std::string(shown.substr(i + 2, 2)).c_str(), nullptr, 16) >= 0x80) {
      raw += static_cast<char>(std::strtoul(std::string(shown.substr(i + 2, 2)).c_str(), nullptr, 16));
      i += 3;
    } else {
      raw += shown[i];
    }
  }
  return replaceInvalidUtf8(raw);
}

}  // namespace kc
