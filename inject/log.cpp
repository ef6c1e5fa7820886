#include "inject/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <mutex>

#include <spdlog/sinks/base_sink.h>

namespace kc::inject {

namespace {
spdlog::logger* g_logger = nullptr;  // immortal

// The stderr the process had when the library loaded: a close-on-exec duplicate of fd 2 (-1 if fd 2 was
// closed then, or could not be duplicated) and its device and inode, checked before each write.
std::atomic<int> g_err_fd{-1};
dev_t g_err_dev = 0;
ino_t g_err_ino = 0;
std::atomic<bool> g_captured{false};
std::mutex g_capture_mutex;

// The lowest descriptor number the duplicate may take: high, so that a program that expects open() to
// return 3 (or counts its descriptors from there) is not affected.
constexpr int kHighFd = 512;

// True if `fd` is open on the file captured at load (same device and inode).
bool isCaptured(int fd) noexcept {
  struct stat st {};
  return fd >= 0 && ::fstat(fd, &st) == 0 && st.st_dev == g_err_dev && st.st_ino == g_err_ino;
}

// Writes `n` bytes to the stderr captured at load: to the duplicate while it still refers to that file;
// if the program closed the duplicate (closefrom(3), a loop over its descriptors) or reused its number,
// to fd 2 if fd 2 still refers to that file; else nowhere. No allocation; plain system calls.
void writeCaptured(const char* data, size_t n) noexcept {
  const int dup = g_err_fd.load(std::memory_order_acquire);
  if (dup < 0) return;  // fd 2 was closed at load
  const int saved_errno = errno;
  const int fd = isCaptured(dup) ? dup : isCaptured(STDERR_FILENO) ? STDERR_FILENO : -1;
  while (fd >= 0 && n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    data += w;
    n -= static_cast<size_t>(w);
  }
  errno = saved_errno;
}

// spdlog sink: each message formatted into a buffer and written with one write() to the captured stderr.
class CapturedStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    writeCaptured(buf.data(), buf.size());
  }
  void flush_() override {}
};

spdlog::logger* make() {
  captureStderr();
  auto sink = std::make_shared<CapturedStderrSink>();
  auto* l = new spdlog::logger("kcount", std::move(sink));
  l->set_pattern("[kcount] %^%l%$: %v");
  l->set_level(spdlog::level::info);
  return l;
}
}  // namespace

void captureStderr() noexcept {
  if (g_captured.load(std::memory_order_acquire)) return;
  try {
    std::lock_guard<std::mutex> lock(g_capture_mutex);
    if (g_captured.load(std::memory_order_relaxed)) return;
    struct stat st {};
    if (::fstat(STDERR_FILENO, &st) == 0) {
      int fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, kHighFd);
      if (fd < 0) fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);  // a descriptor limit below kHighFd
      if (fd >= 0) {
        g_err_dev = st.st_dev;
        g_err_ino = st.st_ino;
        g_err_fd.store(fd, std::memory_order_release);
      }
    }
    g_captured.store(true, std::memory_order_release);
  } catch (...) {
  }
}


bool isLogLevel(const std::string& level) noexcept {
  try {
    // spdlog maps unknown names to "off", which would hide errors too.
    return spdlog::level::from_str(level) != spdlog::level::off || level == "off";
  } catch (...) {
    return false;
  }
}

void initLog(const std::string& level) noexcept {
  try {
    if (g_logger == nullptr) g_logger = make();
    if (!isLogLevel(level)) return;  // info kept; readConfig() said so
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
