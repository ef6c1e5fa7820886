#include "tools/run.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace kc {
namespace {

volatile sig_atomic_t g_child = 0;

void forwardSignal(int sig) {
  if (g_child > 0) kill(static_cast<pid_t>(g_child), sig);
}

}  // namespace

std::string findInjectionLibrary(const std::string& explicit_path) {
  std::error_code ec;
  if (!explicit_path.empty()) return fs::is_regular_file(explicit_path, ec) ? fs::absolute(explicit_path, ec).string() : "";
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path dir = exe.parent_path();
  for (const fs::path& p : {dir / ".." / "lib" / "libkcount.so", dir / "libkcount.so"})
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec).string();
  return "";
}


int runCommand(const RunOptions& opt) {
  if (opt.command.empty()) {
    std::fprintf(stderr, "kcount run: no command given (usage: kcount run [options] -- CMD ARGS...)\n");
    return 2;
  }
  if (opt.inject != "preload" && opt.inject != "cuda") {
    std::fprintf(stderr, "kcount run: --inject must be 'preload' or 'cuda', not '%s'\n", opt.inject.c_str());
    return 2;
  }
  const std::string lib = findInjectionLibrary(opt.lib);
  if (lib.empty()) {
    if (!opt.lib.empty())
      std::fprintf(stderr, "kcount run: --lib %s: no such file\n", opt.lib.c_str());
    else
      std::fprintf(stderr,
                   "kcount run: cannot find libkcount.so (looked in ../lib/ and beside the kcount binary); "
                   "pass --lib PATH\n");
    return 2;
  }
  if (opt.inject == "preload") {
    const char* old = std::getenv("LD_PRELOAD");
    const std::string value = old && *old ? lib + ":" + old : lib;
    setenv("LD_PRELOAD", value.c_str(), 1);
  } else {
    setenv("CUDA_INJECTION64_PATH", lib.c_str(), 1);
    setenv("NVTX_INJECTION64_PATH", lib.c_str(), 1);
  }
  if (!opt.output.empty()) setenv("KCOUNT_OUTPUT", opt.output.c_str(), 1);
  if (opt.paused) setenv("KCOUNT_START", "paused", 1);
  const char* env_output = std::getenv("KCOUNT_OUTPUT");
  const std::string output = env_output ? env_output : "";

  // Each process that writes a log appends its path to this file (KCOUNT_RUN_REPORT): the run's own
  // logs, whatever their names (".1" suffixes, the $TMPDIR fallback), also for concurrent runs.
  std::string report = (std::getenv("TMPDIR") && *std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
                       "/kcount-run.XXXXXX";
  const int report_fd = mkstemp(report.data());
  if (report_fd >= 0) {
    ::close(report_fd);
    setenv("KCOUNT_RUN_REPORT", report.c_str(), 1);
  }

  std::vector<char*> argv;
  for (const auto& a : opt.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  struct sigaction sa {};
  sa.sa_handler = forwardSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "kcount run: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (pid == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "kcount run: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  g_child = pid;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "kcount run: waitpid failed: %s\n", std::strerror(errno));
      return 2;
    }
  }
  g_child = 0;
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

  std::vector<std::string> found;
  if (report_fd >= 0) {
    std::ifstream in(report);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && std::find(found.begin(), found.end(), line) == found.end()) found.push_back(line);
    ::unlink(report.c_str());
  }
  for (const auto& f : found) std::fprintf(stderr, "kcount: log: %s\n", f.c_str());
  if (found.empty())
    std::fprintf(stderr, "kcount: no log written (the program recorded no kernel launch, kernel or NVTX range)\n");
  return rc;
}

}  // namespace kc
