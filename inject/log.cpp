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
    g_logger->set_level(spdlog::level::from_str(level));
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
