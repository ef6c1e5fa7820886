#include "tools/run.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

std::string regexEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::strchr(".^$|()[]{}*+?\\", c)) out += '\\';
    out += c;
  }
  return out;
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  return buf;
}

/// Matches name against the small regular-expression dialect logNamePattern() writes: escaped literals,
/// "[0-9]+" and ".*". (std::regex is avoided: heavy, and noisy under GCC 12 sanitizer builds.)
bool matchPattern(std::string_view re, std::string_view name) {
  if (re.empty()) return name.empty();
  if (re.starts_with(".*")) {
    for (size_t i = 0; i <= name.size(); ++i)
      if (matchPattern(re.substr(2), name.substr(i))) return true;
    return false;
  }
  if (re.starts_with("[0-9]+")) {
    size_t n = 0;
    while (n < name.size() && name[n] >= '0' && name[n] <= '9') ++n;
    for (size_t i = n; i >= 1; --i)
      if (matchPattern(re.substr(6), name.substr(i))) return true;
    return false;
  }
  size_t len = 1;
  char c = re[0];
  if (c == '\\' && re.size() > 1) {
    c = re[1];
    len = 2;
  }
  return !name.empty() && name[0] == c && matchPattern(re.substr(len), name.substr(1));
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

void logNamePattern(const std::string& output, const std::string& host, std::string& dir, std::string& regex) {
  std::error_code ec;
  fs::path pattern = output.empty() ? fs::path("kcount-%h-%p.kcount") : fs::path(output);
  if (!output.empty() && fs::is_directory(output, ec)) pattern = fs::path(output) / "kcount-%h-%p.kcount";
  dir = pattern.has_parent_path() ? pattern.parent_path().string() : ".";
  const std::string name = pattern.filename().string();
  regex.clear();
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%' && i + 1 < name.size()) {
      const char c = name[++i];
      if (c == 'p') regex += "[0-9]+";
      else if (c == 'h') regex += regexEscape(host);
      else if (c == 'r') regex += ".*";
      else if (c == '%') regex += "%";
      else regex += ".*";  // an escape this tool does not know: match anything rather than miss the log
      continue;
    }
    regex += regexEscape(std::string(1, name[i]));
  }
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
  const char* env_output = std::getenv("KCOUNT_OUTPUT");
  const std::string output = env_output ? env_output : "";

  const auto start = fs::file_time_type::clock::now();
  // Whole seconds on some file systems: allow the log's mtime to round down to the start's second.
  const auto since = start - std::chrono::seconds(1);

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

  std::string dir, pattern;
  logNamePattern(output, hostName(), dir, pattern);
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (!it->is_regular_file(e2)) continue;
    if (!matchPattern(pattern, it->path().filename().string())) continue;
    const auto mtime = fs::last_write_time(it->path(), e2);
    if (e2 || mtime < since) continue;
    found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  for (const auto& f : found) std::fprintf(stderr, "kcount: log: %s\n", f.c_str());
  if (found.empty())
    std::fprintf(stderr, "kcount: no log written (the program recorded no kernel launch, kernel or NVTX range)\n");
  return rc;
}

}  // namespace kc
