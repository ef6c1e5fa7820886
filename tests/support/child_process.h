// A program run as a child process with its peak memory measured, for the reader benchmark and the
// memory tests (bench/reader_bench.cpp, tests/programs/instance_memory.cpp).
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace kc::test {

/// How a child ended: `exit_status` is its exit code, or -1 if it could not be started or waited for or
/// was killed by a signal; `wall_s` its run time (s, fork to exit); `rss_kib` its peak RSS (KiB, wait4's
/// ru_maxrss: the child's own, not the parent's).
struct ChildRun {
  int exit_status = -1;
  double wall_s = 0;
  long rss_kib = 0;
};

/// Runs args[0] (a path: execv, no PATH search) with args[1..] and its stdout to the file `out` ("": the
/// parent's stdout, flushed first so that buffered lines are not printed twice). Blocks until it exits.
inline ChildRun runChild(const std::vector<std::string>& args, const std::string& out) {
  ChildRun r;
  std::fflush(stdout);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    if (!out.empty() && !std::freopen(out.c_str(), "w", stdout)) _exit(127);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid) return r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.rss_kib = ru.ru_maxrss;
  r.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace kc::test
