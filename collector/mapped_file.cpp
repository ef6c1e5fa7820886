#include "collector/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>

namespace kc {
/// Mappings that a SIGBUS may hit: a file that shrinks while it is mapped (another process truncates or
/// rewrites it) makes every access past its new end raise SIGBUS, which would kill the tool. The handler
/// maps zero pages over the rest of such a mapping (the access then reads zeros, which the reader takes
/// for damage) and notes where the first fault was. A few slots: the tools map one file at a time.
struct WatchedMapping {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<uintptr_t> first_fault{UINTPTR_MAX};
};

namespace {
/// Pages are released in steps of this many bytes (a multiple of the page size) to keep madvise calls rare.
constexpr size_t kReleaseStep = 4u << 20;

WatchedMapping g_watched[8];
struct sigaction g_previous_bus {};
std::atomic<bool> g_bus_handler{false};
uintptr_t g_page = 4096;  // the page size, read before the handler is installed (sysconf is not signal-safe)

void onBusError(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info != nullptr ? info->si_addr : nullptr);
  for (WatchedMapping& w : g_watched) {
    const uintptr_t b = w.begin.load(std::memory_order_acquire), e = w.end.load(std::memory_order_acquire);
    if (addr < b || addr >= e) continue;
    const uintptr_t from = addr / g_page * g_page;
    // Zeros from the faulting page to the end of the mapping: the file ends before it now.
    if (::mmap(reinterpret_cast<void*>(from), e - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
        MAP_FAILED)
      break;
    uintptr_t seen = w.first_fault.load(std::memory_order_relaxed);
    while (from - b < seen && !w.first_fault.compare_exchange_weak(seen, from - b)) {
    }
    return;  // the access is made again and reads zeros
  }
  // Not a watched mapping: what the process did before (by default, end with SIGBUS, also for a SIGBUS
  // sent by kill() or raise(), which no access would raise again).
  ::sigaction(SIGBUS, &g_previous_bus, nullptr);
  if ((g_previous_bus.sa_flags & SA_SIGINFO) != 0 && g_previous_bus.sa_sigaction != nullptr)
    g_previous_bus.sa_sigaction(sig, info, context);
  else if (g_previous_bus.sa_handler == SIG_DFL)
    ::raise(sig);
  else if (g_previous_bus.sa_handler != SIG_IGN && g_previous_bus.sa_handler != nullptr)
    g_previous_bus.sa_handler(sig);
}

void installBusHandler() {
  if (g_bus_handler.exchange(true)) return;
  g_page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  struct sigaction sa {};
  sa.sa_sigaction = onBusError;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGBUS, &sa, &g_previous_bus);
}

WatchedMapping* watch(const uint8_t* data, size_t size) {
  installBusHandler();
  for (WatchedMapping& w : g_watched) {
    uintptr_t none = 0;
    if (w.begin.load() == 0 && w.end.load() == 0 && w.begin.compare_exchange_strong(none, 1)) {
      w.first_fault.store(UINTPTR_MAX);
      w.end.store(reinterpret_cast<uintptr_t>(data) + size, std::memory_order_release);
      w.begin.store(reinterpret_cast<uintptr_t>(data), std::memory_order_release);
      return &w;
    }
  }
  return nullptr;  // more files mapped at once than slots: not watched
}
}  // namespace

MappedFile::~MappedFile() {
  if (watched_ != nullptr) {
    watched_->begin.store(0, std::memory_order_release);
    watched_->end.store(0, std::memory_order_release);
  }
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

uint64_t MappedFile::shrankAt() const {
  if (watched_ == nullptr) return UINT64_MAX;
  const uintptr_t at = watched_->first_fault.load(std::memory_order_acquire);
  return at == UINTPTR_MAX ? UINT64_MAX : static_cast<uint64_t>(at);
}

bool MappedFile::open(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      error = "cannot map " + path + ": " + std::strerror(errno);
      size_ = 0;
      ::close(fd);
      return false;
    }
    data_ = static_cast<const uint8_t*>(p);
    watched_ = watch(data_, size_);
    ::madvise(p, size_, MADV_SEQUENTIAL);
  }
  ::close(fd);  // the mapping stays valid
  return true;
}

void MappedFile::release(size_t offset) {
  if (data_ == nullptr || offset > size_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t end = offset / page * page;
  if (end < released_ + kReleaseStep && offset != size_) return;
  if (end > released_) {
    ::madvise(const_cast<uint8_t*>(data_) + released_, end - released_, MADV_DONTNEED);
    released_ = end;
  }
}

void MappedFile::drop(size_t from, size_t to) {
  if (data_ == nullptr || from >= to || to > size_) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t begin = (from + page - 1) / page * page, end = to / page * page;
  if (end > begin) ::madvise(const_cast<uint8_t*>(data_) + begin, end - begin, MADV_DONTNEED);
}

}  // namespace kc
