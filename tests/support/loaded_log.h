// A LoadedLog as the tools build one (read, then summarized), from a test's log bytes or decoded data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "collector/analysis.h"
#include "collector/log_reader.h"
#include "tools/loaded_log.h"

namespace kc::test {

/// `data` summarized (kc::summarize, default join options), named `path`.
inline LoadedLog loaded(LogData data, const std::string& path = "t.kcount") {
  LoadedLog l;
  l.path = path;
  l.data = std::move(data);
  l.summary = summarize(l.data);
  return l;
}

/// The log in `bytes` read (kc::readLog), its scope table compacted as the tools' loadLog() does
/// (compactScopes()), and summarized, named `path`.
inline LoadedLog loaded(const std::vector<uint8_t>& bytes, const std::string& path = "t.kcount") {
  LogData d = readLog(bytes);
  compactScopes(d);
  return loaded(std::move(d), path);
}

}  // namespace kc::test
