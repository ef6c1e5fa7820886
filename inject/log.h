// The library's own messages: one line each on stderr, prefixed "[kcount]". The logger is created once
// and never destroyed, so messages from exit handlers are safe (FIELD-NOTES: the exit-order trap).
// "stderr" is the one the process had when the library loaded (captureStderr), never whatever fd 2 is
// later: a program that closes fd 2 and opens a data file (which then becomes fd 2), or that dup2()s a
// log file onto it, gets none of kcount's lines in that file.
#pragma once

#include <spdlog/spdlog.h>

#include <string>

namespace kc::inject {

/// Keeps a close-on-exec duplicate of fd 2 (at a descriptor >= 512 when the limit allows) as the
/// destination of every message, with fd 2's device and inode; each write first checks that the duplicate
/// still refers to that file (if the program closed it, closefrom(3) say, fd 2 is used instead while fd 2
/// refers to that file; otherwise the message is dropped). If fd 2 is closed at the first call, messages are dropped for the life of
/// this process image. The first call decides; later calls do nothing. Called by the preload constructor
/// (at load; for a library dlopen()ed through CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH that is at
/// cuInit or the first NVTX call) and by the logger's creation. Thread-safe; no exception.
void captureStderr() noexcept;
/// True if `level` names a level of KCOUNT_LOG_LEVEL: off, error, warn, info, debug, and spdlog's names
/// trace, critical, warning, err. readConfig() reports any other value and keeps info. No exception.
bool isLogLevel(const std::string& level) noexcept;
/// Sets the level from KCOUNT_LOG_LEVEL's value (isLogLevel(); another value leaves info, which
/// readConfig() has already reported). Call once, early.
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
