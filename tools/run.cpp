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

/// Signals `kcount run` passes on to the command. Only those sent by a process (kill(1), a job
/// scheduler, systemd: si_code <= 0) are forwarded; a terminal's Ctrl-C, Ctrl-\ or hangup reaches the
/// command's process group by itself, and forwarding it again would deliver it twice (a second
/// KeyboardInterrupt in Python's cleanup).
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void forwardSignal(int sig, siginfo_t* info, void*) {
  if (g_child > 0 && (info == nullptr || info->si_code <= 0)) kill(static_cast<pid_t>(g_child), sig);
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
std::string findTorchHelper(const std::string& lib) {
  std::error_code ec;
  std::vector<fs::path> candidates;
  if (!lib.empty()) candidates.push_back(fs::path(lib).parent_path() / ".." / "share" / "kcount" / "python");
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back(exe.parent_path() / ".." / "share" / "kcount" / "python");
  for (const fs::path& p : candidates)
    if (fs::is_regular_file(p / "sitecustomize.py", ec)) return fs::weakly_canonical(p, ec).string();
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
  if (opt.torch_modules || opt.torch_backward || opt.torch_ops) {
    const std::string helper = findTorchHelper(lib);
    if (helper.empty()) {
      std::fprintf(stderr, "kcount run: --torch-modules/--torch-ops: cannot find the Python helper "
                           "(share/kcount/python/sitecustomize.py beside the library or the kcount binary)\n");
      return 2;
    }
    const char* old = std::getenv("PYTHONPATH");
    const std::string value = old && *old ? helper + ":" + old : helper;
    setenv("PYTHONPATH", value.c_str(), 1);
    if (opt.torch_modules) setenv("KCOUNT_TORCH_MODULES", "1", 1);
    if (opt.torch_backward) setenv("KCOUNT_TORCH_BACKWARD", "1", 1);
    if (opt.torch_ops) setenv("KCOUNT_TORCH_OPS", "1", 1);
  }
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
  sa.sa_sigaction = forwardSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_SIGINFO;
  constexpr size_t kSignals = sizeof(kForwardedSignals) / sizeof(kForwardedSignals[0]);
  struct sigaction old[kSignals] = {};
  for (size_t i = 0; i < kSignals; ++i) {
    // A signal ignored when kcount started (nohup, a background job of a script) stays ignored, for
    // kcount and for the command, as it would be without kcount.
    sigaction(kForwardedSignals[i], nullptr, &old[i]);
    if (old[i].sa_handler != SIG_IGN) sigaction(kForwardedSignals[i], &sa, nullptr);
  }

  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "kcount run: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (pid == 0) {
    for (size_t i = 0; i < kSignals; ++i) sigaction(kForwardedSignals[i], &old[i], nullptr);
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
