#include "inject/log.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace kc::inject {

namespace {
spdlog::logger* g_logger = nullptr;  // immortal

spdlog::logger* make() {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto* l = new spdlog::logger("kcount", std::move(sink));
  l->set_pattern("[kcount] %^%l%$: %v");
  l->set_level(spdlog::level::info);
  return l;
}
}  // namespace

void initLog(const std::string& level) noexcept {
  try {
    if (g_logger == nullptr) g_logger = make();
    // spdlog maps unknown names to "off", which would hide errors too: keep info and say so.
    const auto parsed = spdlog::level::from_str(level);
    if (parsed == spdlog::level::off && level != "off") {
      g_logger->warn("KCOUNT_LOG_LEVEL={} is not one of off, error, warn, info, debug; using info", level);
      return;
    }
    g_logger->set_level(parsed);
  } catch (...) {
  }
}

spdlog::logger& log() noexcept {
  if (g_logger == nullptr) {
    try {
      g_logger = make();
    } catch (...) {
    }
  }
  return *g_logger;
}

}  // namespace kc::inject
