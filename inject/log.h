// The library's own messages: one line each on stderr, prefixed "[kcount]". The logger is created once
// and never destroyed, so messages from exit handlers are safe (FIELD-NOTES: the exit-order trap).
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace kc::inject {

/// Sets the level from KCOUNT_LOG_LEVEL's value (off|error|warn|info|debug). Call once, early.
void initLog(const std::string& level) noexcept;
/// The logger; never null after initLog. Thread-safe (spdlog's mt sink).
spdlog::logger& log() noexcept;

}  // namespace kc::inject

#define KC_LOG(level, ...)                                        \
  do {                                                            \
    try {                                                         \
      ::kc::inject::log().level(__VA_ARGS__);                     \
    } catch (...) {                                               \
    }                                                             \
  } while (0)
