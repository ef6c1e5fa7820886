#include "tools/run.h"

#include <elf.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
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
#include <istream>
#include <iterator>
#include <sstream>
#include <string>

#include "collector/counted.h"
#include "collector/control_folder.h"
#include "collector/file_sink.h"
#include "collector/log_reader.h"
#include "collector/shown_value.h"
#include "tools/text.h"

namespace fs = std::filesystem;

namespace kc {
namespace {
// "REASON (pid A, B)" for each distinct reason, in order, joined by "; " (defined below).
std::string byReason(const std::vector<std::pair<int, std::string>>& notes);

volatile sig_atomic_t g_child = 0;

/// Signals `kcount run` passes on to the command. Only those sent by a process (kill(1), a job
/// scheduler, systemd: si_code <= 0) are forwarded; a terminal's Ctrl-C, Ctrl-\ or hangup reaches the
/// command's process group by itself, and forwarding it again would deliver it twice (a second
/// KeyboardInterrupt in Python's cleanup).
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

void forwardSignal(int sig, siginfo_t* info, void*) {
  if (g_child > 0 && (info == nullptr || info->si_code <= 0)) kill(static_cast<pid_t>(g_child), sig);
}

}  // namespace

std::string notSharedObject(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("cannot be read: ") + std::strerror(errno);
  Elf64_Ehdr h{};
  in.read(reinterpret_cast<char*>(&h), sizeof(h));
  const auto got = static_cast<size_t>(in.gcount());
  if (got < EI_NIDENT || std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0)
    return got == 0 ? "not an ELF shared object (an empty file)"
                    : "not an ELF shared object (it does not start with the ELF magic 7f 45 4c 46)";
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || got < sizeof(h))
    return "not a 64-bit ELF file (this kcount loads 64-bit libraries only)";
  if (h.e_type != ET_DYN) return "an ELF file, but not a shared object (e_type " + std::to_string(h.e_type) + ", not ET_DYN)";
  // A position-independent program is ET_DYN too; it asks for a program interpreter (PT_INTERP), which
  // a shared library does not, and the loader refuses to preload it.
  for (uint16_t i = 0; i < h.e_phnum && h.e_phentsize == sizeof(Elf64_Phdr); ++i) {
    Elf64_Phdr ph{};
    in.clear();
    in.seekg(static_cast<std::streamoff>(h.e_phoff + uint64_t{i} * sizeof(ph)));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof(ph))) break;
    if (ph.p_type == PT_INTERP)
      return "a program (a position-independent executable: it has a PT_INTERP header), not a shared library";
  }
  return {};
}

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

namespace {
/// True if `st` is /dev/null itself (the same device and inode), through any name.
bool isDevNull(const struct stat& st) {
  struct stat null_st {};
  return ::stat("/dev/null", &null_st) == 0 && st.st_dev == null_st.st_dev && st.st_ino == null_st.st_ino;
}
}  // namespace

std::string outputIsTerminalOrStdout(const std::string& path) {
  if (path.empty()) return "";
  if (path == "/dev/tty") return "the terminal";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) return "";
  if (isDevNull(st)) return "";  // a deliberate "write nothing"
  // The file kcount's stdout or stderr goes to (/dev/stdout, /dev/fd/2, or the same file by name).
  for (int fd : {1, 2}) {
    struct stat fd_st {};
    if (::fstat(fd, &fd_st) == 0 && fd_st.st_dev == st.st_dev && fd_st.st_ino == st.st_ino)
      return fd == 1 ? "kcount's standard output" : "kcount's standard error";
  }
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISCHR(st.st_mode) && ::isatty(STDIN_FILENO) && [&] {
        struct stat in_st {};
        return ::fstat(STDIN_FILENO, &in_st) == 0 && in_st.st_rdev == st.st_rdev;
      }())
    return "the terminal";
  return "";
}

void removeStaleRunReports(const std::string& folder) noexcept {
  std::error_code ec;
  const uid_t me = ::geteuid();
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // kcount-run.PID.XXXXXX: PID all digits, then mkstemp's six characters.
    if (!name.starts_with("kcount-run.")) continue;
    const std::string_view rest = std::string_view(name).substr(sizeof("kcount-run.") - 1);
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string_view::npos || rest.size() - dot - 1 != 6 ||
        rest.substr(0, dot).find_first_not_of("0123456789") != std::string_view::npos || dot > 9)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(std::string(rest.substr(0, dot))));
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != me) continue;
    if (pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH) continue;  // its run may still be going
    ::unlink(it->path().c_str());
  }
}

namespace {

/// Checks `kcount run`'s options and sets the environment the command inherits: the injection library
/// (LD_PRELOAD, or CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH), KCOUNT_OUTPUT, the PyTorch helper and
/// paused start. Returns 0, or 2 after saying on stderr why the command cannot be run so.
int setUpInjection(const RunOptions& opt) {
  if (opt.command.empty()) {
    std::fprintf(stderr, "kcount run: no command given (usage: kcount run [options] -- CMD ARGS...)\n");
    return 2;
  }
  if (opt.inject != "preload" && opt.inject != "cuda") {
    std::fprintf(stderr, "kcount run: --inject must be 'preload' or 'cuda', not '%s'\n", opt.inject.c_str());
    return 2;
  }
  // The log path (--output, else KCOUNT_OUTPUT) must not be the terminal or kcount's own output.
  const char* env_out = std::getenv("KCOUNT_OUTPUT");
  const std::string out_path = !opt.output.empty() ? opt.output : env_out ? env_out : "";
  if (const std::string why = outputIsTerminalOrStdout(out_path); !why.empty()) {
    std::fprintf(stderr,
                 "kcount run: the log path %s is %s: the binary log would be mixed with the program's own output; "
                 "give a file or a directory (--output run.kcount, --output logs/)\n",
                 out_path.c_str(), why.c_str());
    return 2;
  }
  const std::string lib = findInjectionLibrary(opt.lib);
  if (lib.empty()) {
    if (!opt.lib.empty()) {
      // Not a regular file: say what it is (a folder given for the library's path is a common slip).
      struct stat st {};
      const bool exists = ::stat(opt.lib.c_str(), &st) == 0;
      std::fprintf(stderr, "kcount run: --lib %s: %s\n", opt.lib.c_str(),
                   !exists                  ? (std::string("cannot use it: ") + std::strerror(errno)).c_str()
                   : S_ISDIR(st.st_mode)    ? "a folder, not the library (give the path of libkcount.so itself)"
                                            : "not a regular file (give the path of libkcount.so)");
    }
    else
      std::fprintf(stderr,
                   "kcount run: cannot find libkcount.so (looked in ../lib/ and beside the kcount binary); "
                   "pass --lib PATH (in a source build the library is the target kcount_inject: `bash "
                   "scripts/build.sh` builds it with the tool; the main job without a GPU builds the tool only)\n");
    return 2;
  }
  if (const std::string why = notSharedObject(lib); !why.empty()) {
    // The loader would refuse it in the child ("cannot be preloaded" or a CUDA injection error), and
    // the run would end with no log, for a reason that is not the program's.
    std::fprintf(stderr, "kcount run: --lib %s: %s; give the path of libkcount.so\n",
                 (opt.lib.empty() ? lib : opt.lib).c_str(), why.c_str());
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
  // --output is relative to where kcount run was started, not to where the command is when it starts
  // recording (a launcher that cd's first would put the log elsewhere).
  if (!opt.output.empty()) {
    std::error_code ec;
    const std::filesystem::path cwd = std::filesystem::current_path(ec);
    setenv("KCOUNT_OUTPUT", absoluteLogPath(opt.output, ec ? std::string() : cwd.string()).c_str(), 1);
  }
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
  if (opt.paused) {
    setenv("KCOUNT_START", "paused", 1);
    // Paused, the command can only be started through its control socket: have one also in a process
    // that emits NVTX ranges without initializing CUDA (unless KCOUNT_CONTROL says otherwise).
    setenv("KCOUNT_CONTROL", "on", 0);
  }
  return 0;
}

/// Says on stderr how a command started paused (--paused) can be started: `kcount ctl PID start`, or why no
/// `kcount ctl` can reach it (control socket off, or a control folder kcount refuses).
void notePausedStart(const char* command, pid_t pid, bool control_off) {
  if (control_off)
    std::fprintf(stderr, "kcount: %s started paused with its control socket off (KCOUNT_CONTROL=off): only "
                         "KCOUNT_CAPTURE_RANGE can start recording\n", command);
  else {
    // The folder its control socket goes in, by the library's rule: one that exists and is refused (a
    // link, another user's, open to others) gets no socket, and no `kcount ctl` can reach the process.
    const auto env = [](const char* k) { const char* v = std::getenv(k); return std::string(v != nullptr ? v : ""); };
    const std::string dir = controlFolder(env("KCOUNT_CONTROL_DIR"), env("XDG_RUNTIME_DIR"), ::geteuid());
    struct stat st {};
    // One lstat(): a folder that does not exist yet is made by the library, mode 0700 (not refused).
    const std::string refused = ::lstat(dir.c_str(), &st) == 0 ? refusedFolderReason(st, ::geteuid()) : std::string();
    if (!refused.empty())
      std::fprintf(stderr, "kcount: %s started paused, but kcount refuses its control folder %s (%s): no `kcount "
                           "ctl` can reach it; only KCOUNT_CAPTURE_RANGE can start recording (or set KCOUNT_CONTROL_DIR "
                           "to a folder of your own, mode 0700)\n",
                   command, shownPath(dir).c_str(), refused.c_str());
    else
      std::fprintf(stderr, "kcount: %s started paused: start recording with `kcount ctl %d start`\n", command,
                   static_cast<int>(pid));
  }
}

/// Says on stderr that the command could not be run (execvp failed with `exec_errno`), also to an outer
/// `kcount run` (`outer_report`), and returns the shell's status for it: 127 not found, 126 not runnable.
int commandNotRun(int exec_errno, const char* command, const std::string& outer_report) {
  // As a shell says it: 127 for a command not found, 126 for one found but not runnable.
  // execvp() says EACCES for a folder given as the command (a path with a '/'): said as a shell says it.
  struct stat st {};
  const bool folder = exec_errno == EACCES && std::strchr(command, '/') != nullptr && ::stat(command, &st) == 0 &&
                      S_ISDIR(st.st_mode);
  const std::string what = exec_errno == ENOENT ? std::string(command) + ": command not found"
                           : folder             ? "cannot run " + std::string(command) + ": Is a directory"
                                                : "cannot run " + std::string(command) + ": " + std::strerror(exec_errno);
  std::fprintf(stderr, "kcount run: %s\n", what.c_str());
  if (!outer_report.empty()) {
    // Inside another `kcount run`: it says this too, rather than a guess about a program that never ran.
    std::string note(1, kFileSinkNote);
    note += "notrun " + std::to_string(getpid()) + " " + what + "\n";
    std::replace(note.begin() + 1, note.end() - 1, '\n', ' ');
    const int fd = ::open(outer_report.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
      [[maybe_unused]] ssize_t n = ::write(fd, note.data(), note.size());
      ::close(fd);
    }
  }
  return exec_errno == ENOENT ? 127 : 126;
}

/// After the command ended with `status`: each log it wrote (rep.logs), failed writes, a PyTorch helper
/// that did not start, or why no log was written; on stderr. `report_fd` < 0: the report file `report`
/// could not be made (`report_errno`).
void reportLogs(const RunOptions& opt, const RunReport& rep, int status, int report_fd, const std::string& report,
                int report_errno, const char* control) {
  for (const auto& f : rep.logs) {
    // KCOUNT_OUTPUT=/dev/null (a deliberate "write nothing"): named, and said to be discarded.
    // A log whose file is gone was deleted while the command ran (the library wrote to a file without name).
    struct stat st {};
    const bool exists = ::stat(f.c_str(), &st) == 0;
    const bool discarded = exists && isDevNull(st);
    std::fprintf(stderr, "kcount: log: %s%s\n", shownPath(f).c_str(),
                 discarded ? " (discarded: /dev/null keeps nothing)"
                 : !exists ? " (not on disk: deleted while the command ran)"
                           : "");
    // A command killed by a signal the library does not handle (SIGKILL, SIGQUIT, SIGUSR1, ...) leaves its log
    // without End record: said here, not only when the log is read.
    if (WIFSIGNALED(status))
      if (const std::string why = incompleteLogNote(f, WTERMSIG(status)); !why.empty())
        std::fprintf(stderr, "kcount: %s\n", why.c_str());
  }
  // A write that failed (full disk, file size limit): the library said so on stderr when it happened, maybe
  // long before; said again here, beside the log lines, with what it means for the logs.
  if (!rep.write_failures.empty())
    std::fprintf(stderr, "kcount: writing a log failed: %s: the records from then on were not written (the log "
                         "reads as incomplete, or lossy if its end record still fitted; kcount check tells)\n",
                 byReason(rep.write_failures).c_str());
  if (report_fd >= 0 && (opt.torch_modules || opt.torch_backward || opt.torch_ops) && rep.torch_helper_pids.empty())
    std::fprintf(stderr,
                 "kcount: --torch-modules/--torch-ops: no Python process of the command started kcount's helper "
                 "(the command is not Python, or it replaced PYTHONPATH or ran python -S/-I): no module or op ranges\n");
  if (report_fd < 0)
    std::fprintf(stderr, "kcount: cannot create a report file in %s (%s): the logs written are not listed\n",
                 report.substr(0, report.rfind('/')).c_str(), std::strerror(report_errno));
  else if (rep.logs.empty()) {
    RunEnd end;
    end.inject = opt.inject;
    end.lib = opt.lib;
    end.paused = opt.paused || (std::getenv("KCOUNT_START") != nullptr && std::string(std::getenv("KCOUNT_START")) == "paused");
    end.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    end.control = control != nullptr ? control : "";
    std::fprintf(stderr, "kcount: %s\n", noLogReason(rep, end).c_str());
  }
}

}  // namespace

int runCommand(const RunOptions& opt) {
  if (const int rc = setUpInjection(opt); rc != 0) return rc;
  const char* env_output = std::getenv("KCOUNT_OUTPUT");
  const std::string output = env_output ? env_output : "";
  // Inside another `kcount run` (its command runs kcount run): this run's report is passed on to it.
  const char* env_outer = std::getenv("KCOUNT_RUN_REPORT");
  const std::string outer_report = env_outer ? env_outer : "";

  // Each process that writes a log appends its path to this file (KCOUNT_RUN_REPORT): the run's own
  // logs, whatever their names ("-1" names of taken names, rotated files, the $TMPDIR fallback), also for concurrent runs.
  // Its name carries kcount's pid, so that a later run can remove the file of a run that was killed
  // before it could (removeStaleRunReports).
  const std::string report_dir =
      std::getenv("TMPDIR") && *std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp");
  removeStaleRunReports(report_dir);
  std::string report = report_dir + "/kcount-run." + std::to_string(getpid()) + ".XXXXXX";
  const int report_fd = mkstemp(report.data());
  const int report_errno = errno;
  if (report_fd >= 0) {
    ::close(report_fd);
    setenv("KCOUNT_RUN_REPORT", report.c_str(), 1);
  }

  std::vector<char*> argv;
  for (const auto& a : opt.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  // The child reports a failed execvp() through this pipe (closed on a successful exec), so that a
  // command that cannot be run is told apart from one that ran and wrote no log.
  int exec_pipe[2] = {-1, -1};
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) exec_pipe[0] = exec_pipe[1] = -1;

  // The forwarded signals wait (blocked) from before their handlers are installed until the command's pid
  // is known: one that came in between would otherwise find no pid to pass it to and be lost (seen under
  // load: a command sent SIGUSR1 right after it started never got it; a SIGTERM that came between the
  // handler's installation and the block let `sleep 2` run to its end). Before the block, a signal still
  // has kcount's starting disposition (it ends kcount run, and no command has started). The command
  // unblocks them before exec, after its dispositions are back to what kcount found.
  sigset_t forwarded, previous_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwardedSignals) sigaddset(&forwarded, sig);
  pthread_sigmask(SIG_BLOCK, &forwarded, &previous_mask);

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
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
    std::fprintf(stderr, "kcount run: fork failed: %s\n", std::strerror(errno));
    return 2;
  }
  if (pid == 0) {
    for (size_t i = 0; i < kSignals; ++i) sigaction(kForwardedSignals[i], &old[i], nullptr);
    pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
    // If kcount run dies without forwarding anything (SIGKILL, OOM killer), the command gets SIGTERM
    // (the library's handler still finishes the log). A parent that died before prctl() took effect
    // is seen by getppid().
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(128 + SIGTERM);
    execvp(argv[0], argv.data());
    const int err = errno;
    if (exec_pipe[1] >= 0) [[maybe_unused]] ssize_t n = ::write(exec_pipe[1], &err, sizeof(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  g_child = pid;
  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);  // a signal that came meanwhile is passed on now
  int exec_errno = 0;
  if (exec_pipe[1] >= 0) {
    ::close(exec_pipe[1]);
    ssize_t n;
    while ((n = ::read(exec_pipe[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof(exec_errno))) exec_errno = 0;
    ::close(exec_pipe[0]);
  }
  const char* control = std::getenv("KCOUNT_CONTROL");
  const bool control_off = control != nullptr && (std::string(control) == "off" || std::string(control) == "0");
  if (opt.paused && exec_errno == 0) notePausedStart(argv[0], pid, control_off);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "kcount run: waitpid failed: %s\n", std::strerror(errno));
      return 2;
    }
  }
  g_child = 0;
  RunReport rep;
  if (report_fd >= 0) {
    std::ifstream in(report, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream lines(text);
    rep = readRunReport(lines);
    ::unlink(report.c_str());
    if (!outer_report.empty() && !text.empty()) {
      // One O_APPEND write, as the library's own lines, so the outer run names these logs too.
      const int fd = ::open(outer_report.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
      if (fd >= 0) {
        [[maybe_unused]] ssize_t n = ::write(fd, text.data(), text.size());
        ::close(fd);
      }
    }
  }
  if (exec_errno != 0) return commandNotRun(exec_errno, argv[0], outer_report);
  const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
  reportLogs(opt, rep, status, report_fd, report, report_errno, control);
  return rc;
}

RunReport readRunReport(std::istream& in) {
  RunReport r;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] != kFileSinkNote) {
      if (std::find(r.logs.begin(), r.logs.end(), line) == r.logs.end()) r.logs.push_back(line);
      continue;
    }
    line.erase(0, 1);
    if (line.starts_with(kRunReportPathNote)) {  // a log path that holds a newline, escaped
      const std::string path = runReportPathFromNote(std::string_view(line).substr(kRunReportPathNote.size()));
      if (std::find(r.logs.begin(), r.logs.end(), path) == r.logs.end()) r.logs.push_back(path);
      continue;
    }
    int pid = 0;
    char how[16] = {};
    int text_at = 0;
    auto drop_exec = [&](int of) {
      std::erase_if(r.unloaded_execs, [&](const RunReport::Exec& e) { return e.pid == of; });
    };
    if (std::sscanf(line.c_str(), "loaded %d %15s", &pid, how) == 2) {
      (std::string(how) == "injection" ? r.injected_pids : r.preloaded_pids).push_back(pid);
      drop_exec(pid);  // the image an exec started loaded the library
    } else if (std::sscanf(line.c_str(), "exec %d %15s %n", &pid, how, &text_at) == 2 && text_at > 0) {
      drop_exec(pid);
      r.unloaded_execs.push_back({pid, std::string(how) == "cleared", line.substr(static_cast<size_t>(text_at))});
    } else if (std::sscanf(line.c_str(), "execfail %d", &pid) == 1) {
      drop_exec(pid);
    } else if (std::sscanf(line.c_str(), "notrun %d %n", &pid, &text_at) == 1 && text_at > 0) {
      r.not_run.emplace_back(pid, line.substr(static_cast<size_t>(text_at)));
    } else if (std::sscanf(line.c_str(), "disabled %d %n", &pid, &text_at) == 1 && text_at > 0) {
      r.disabled.emplace_back(pid, line.substr(static_cast<size_t>(text_at)));
    } else if (std::sscanf(line.c_str(), "writefail %d %n", &pid, &text_at) == 1 && text_at > 0) {
      r.write_failures.emplace_back(pid, line.substr(static_cast<size_t>(text_at)));  // FileSink::write
    } else if (std::sscanf(line.c_str(), "idle %d", &pid) == 1) {
      r.idle_pids.push_back(pid);  // inject/preload.cpp noteIdleProcess
    } else if (std::sscanf(line.c_str(), "torchhelper %d", &pid) == 1) {
      r.torch_helper_pids.push_back(pid);  // python/sitecustomize.py
    } else if (std::sscanf(line.c_str(), "unwritten %d %n", &pid, &text_at) == 1 && text_at > 0) {
      r.unwritten.emplace_back(pid, line.substr(static_cast<size_t>(text_at)));
    } else if (std::find(r.failures.begin(), r.failures.end(), line) == r.failures.end()) {
      r.failures.push_back(line);
    }
  }
  return r;
}

namespace {
// "REASON (pid A, B)" for each distinct reason, in order, joined by "; " (at most 3 reasons).
std::string byReason(const std::vector<std::pair<int, std::string>>& notes) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& note : notes) {
    const int pid = note.first;
    const std::string& why = note.second;  // a plain reference: clang before 16 cannot capture a structured binding
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == why; });
    if (it == groups.end()) {
      groups.push_back({why, {pid}});
    } else if (std::find(it->second.begin(), it->second.end(), pid) == it->second.end()) {
      it->second.push_back(pid);
    }
  }
  std::string out;
  for (size_t i = 0; i < groups.size() && i < 3; ++i) {
    if (i > 0) out += "; ";
    out += groups[i].first + " (pid";
    for (size_t k = 0; k < groups[i].second.size(); ++k)
      out += (k == 0 ? " " : ", ") + std::to_string(groups[i].second[k]);
    out += ")";
  }
  if (groups.size() > 3) out += "; and " + std::to_string(groups.size() - 3) + " more";
  return out;
}
}  // namespace

std::string incompleteLogNote(const std::string& path, int signal) {
  ReadOptions ro;
  ro.keep_records = false;
  const LogData d = readLogFile(path, ro);
  if (d.not_a_log || d.complete || d.isContinuedPart()) return {};
  const std::string killed = "the command was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) +
                             ") before kcount could close it";
  if (d.chunks_read == 0)
    return "log incomplete: " + shownPath(path) + " has no end record and no intact chunk: " + killed + "; nothing in it can be read";
  if (d.summary_mode) {
    // No records: its numbers are those of the last complete snapshot written before the kill.
    const std::string period = snapshotPeriodText(d);
    const std::string every = period.empty() ? "every KCOUNT_INTERVAL" : period;
    const std::string head = "log incomplete: " + shownPath(path) + " has no end record" +
                             (d.intact() ? std::string() : " and its tail is cut") + ": " + killed +
                             "; a summary-mode log holds only the snapshots written before (" + every +
                             " from the start of recording)";
    if (d.snapshots.empty())
      return head + (d.incomplete_snapshots > 0 ? ", and none was written whole" : ", and none was written") +
             ", so it holds no numbers";
    return head + ": kcount summary" + (d.intact() ? "" : " --salvage") + " reads " +
           (d.snapshots.size() == 1 ? std::string("its one complete snapshot")
                                    : "the last of its " + counted(d.snapshots.size(), "complete snapshot")) +
           ", not the run up to the kill";
  }
  if (!d.intact())
    return "log incomplete: " + shownPath(path) + " has no end record and its tail is cut: " + killed +
           "; kcount summary --salvage reads the intact part (up to its last complete chunk)";
  return "log incomplete: " + shownPath(path) + " has no end record: " + killed +
         "; kcount summary reads it (the records up to its last chunk, written about once a second)";
}

std::string noLogReason(const RunReport& rep, const RunEnd& end) {
  std::string why = "no log written: ";
  const std::string killed =
      end.signal != 0 ? std::string("the command was killed by signal ") + std::to_string(end.signal) + " (" +
                            strsignal(end.signal) + ")"
                      : std::string();
  if (!rep.not_run.empty())  // a nested kcount run said why already; no guess about the program
    return why + "the command of a nested kcount run did not run: " + byReason(rep.not_run);
  if (!rep.failures.empty()) {
    why += "the log could not be created: " + rep.failures.front();
    for (size_t i = 1; i < rep.failures.size(); ++i) why += "; " + rep.failures[i];
    return why;
  }
  if (!rep.disabled.empty()) return why + "kcount was disabled: " + byReason(rep.disabled);
  if (!rep.unwritten.empty()) return why + byReason(rep.unwritten) + (killed.empty() ? "" : "; " + killed);
  // A library given with --lib that no process reported loading: most likely not libkcount.so at all
  // (every libkcount.so notes its loading in the run report from its constructor).
  if (rep.injected_pids.empty() && rep.preloaded_pids.empty() && !end.lib.empty() && end.inject != "cuda")
    return why + "no process reported loading " + shownPath(end.lib) +
           " (given with --lib): is it libkcount.so? (else: a statically linked program, or one that clears "
           "LD_PRELOAD)" + (killed.empty() ? "" : "; " + killed);
  if (rep.injected_pids.empty() && rep.preloaded_pids.empty())
    return why + (end.inject == "cuda" ? "no process of the command initialized CUDA or NVTX, so libkcount.so was never loaded"
                                       : "libkcount.so was not loaded (a statically linked program, or one that "
                                         "clears LD_PRELOAD?)") +
           (killed.empty() ? "" : "; " + killed);
  if (!rep.unloaded_execs.empty()) {
    const RunReport::Exec& e = rep.unloaded_execs.front();
    std::string program = e.path + " (pid " + std::to_string(e.pid) + ")";
    if (rep.unloaded_execs.size() > 1) program += " and " + std::to_string(rep.unloaded_execs.size() - 1) + " more";
    const std::string text = "libkcount.so was not loaded by " + program;
    if (e.cleared) return why + text + ": it was started with LD_PRELOAD cleared" + (killed.empty() ? "" : "; " + killed);
    // Killed with LD_PRELOAD kept: most likely before the new image got as far as loading the library (a
    // signal right after the exec), not a program that cannot load it: no guess about the program then.
    if (!killed.empty()) return why + killed + " before " + program + " had loaded libkcount.so";
    return why + text + ": a statically linked or set-user-ID program?";
  }
  // Every process that loaded the library ended normally without a CUDA or NVTX call: nothing to record.
  if (!rep.preloaded_pids.empty() && rep.injected_pids.empty() &&
      std::ranges::all_of(rep.preloaded_pids, [&](int p) { return std::ranges::find(rep.idle_pids, p) != rep.idle_pids.end(); })) {
    std::string pids;
    for (size_t i = 0; i < rep.idle_pids.size() && i < 3; ++i) pids += (i == 0 ? "" : ", ") + std::to_string(rep.idle_pids[i]);
    if (rep.idle_pids.size() > 3) pids += fmt::format(" and {} more", rep.idle_pids.size() - 3);
    // Several processes (a shell, a pyenv shim's helpers, the program): say how many, so that a list of
    // pids for one Python program reads as its launchers, not as programs the user ran.
    const std::string processes =
        rep.idle_pids.size() == 1 ? " (pid " + pids + ")"
                                  : fmt::format(" in any of its {} processes (pids {})", rep.idle_pids.size(), pids);
    return why + "the command made no CUDA or NVTX call" + processes + ", so there was nothing to record" +
           (killed.empty() ? "" : "; " + killed);
  }
  if (end.paused && (end.control == "off" || end.control == "0"))
    return why + "the command started paused with its control socket off (KCOUNT_CONTROL=off), so nothing started "
                 "recording (use KCOUNT_CAPTURE_RANGE, or no --paused)" +
           (killed.empty() ? "" : "; " + killed);
  if (end.paused)
    return why + "the command started paused and recording was never started (`kcount ctl PID start`; with "
                 "--paused a process has a control socket from its start)" +
           (killed.empty() ? "" : "; " + killed);
  if (!killed.empty()) {
    // Loaded by CUDA or NVTX (--inject cuda, or a dlopen()), the library was recording: its log was due.
    if (!rep.injected_pids.empty()) return why + killed + " before its log was written";
    // A preloaded process tells nothing of its CUDA or NVTX calls until it exits: a killed one may have had
    // nothing to record (a shell, a launcher), or was killed before the library's first write.
    return why + killed + "; it may have made no CUDA or NVTX call (nothing to record), or been killed before "
                          "kcount's first write";
  }
  if (!rep.injected_pids.empty())
    return why + "libkcount.so was loaded by CUDA or NVTX (pid " + std::to_string(rep.injected_pids.front()) +
           "), but the process ended without running its exit handlers (_exit(), or killed by a signal) before "
           "its first write; a log is written at the first flush (about every second) and at exit";
  return why + "the program recorded no kernel launch, kernel or NVTX range, or it ended without running its exit "
               "handlers (_exit(), or killed by a signal) before its first write";
}

}  // namespace kc
