#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "collector/mapped_file.h"

namespace {
// A temporary file of `bytes` bytes of 0x5A; removed by the caller.
std::string tempFile(size_t bytes) {
  char path[] = "/tmp/kc_mapped_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::vector<char> fill(bytes, 0x5A);
  REQUIRE(write(fd, fill.data(), fill.size()) == static_cast<ssize_t>(fill.size()));
  close(fd);
  return path;
}
}  // namespace

TEST_CASE("a mapped file that shrinks while it is read: zeros past its new end, the place noted, no SIGBUS") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const std::string path = tempFile(4 * page);
  kc::MappedFile f;
  std::string error;
  REQUIRE(f.open(path, error));
  CHECK(f.shrankAt() == UINT64_MAX);
  REQUIRE(truncate(path.c_str(), static_cast<off_t>(page + 100)) == 0);  // another process cuts the file
  const auto bytes = f.bytes();
  CHECK(bytes[page + 50] == 0x5A);       // still in the file
  CHECK(bytes[2 * page + 7] == 0);       // past its end: a SIGBUS without the handler
  CHECK(bytes[4 * page - 1] == 0);
  CHECK(f.shrankAt() == 2 * page);
  unlink(path.c_str());
}

TEST_CASE("a SIGBUS outside every mapped file still ends the process as before") {
  const std::string path = tempFile(16);
  {
    kc::MappedFile f;  // installs the handler
    std::string error;
    REQUIRE(f.open(path, error));
  }
  unlink(path.c_str());
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    raise(SIGBUS);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  // Killed by SIGBUS (its default action); under a sanitizer, whose handler was there first, its report
  // and abort (SIGABRT) or exit status instead. Never a normal exit: the signal is not swallowed.
  CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  if (WIFSIGNALED(status)) CHECK((WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT));
}
