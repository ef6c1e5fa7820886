#include "tools/ctl.h"

#include <dirent.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "collector/counted.h"
#include "collector/control_folder.h"
#include "collector/parse.h"
#include "collector/shown_value.h"
#include "tools/text.h"

namespace kc {
namespace {

using nlohmann::json;

bool processExists(int pid, unsigned* uid) {
  struct stat st {};
  if (::stat(("/proc/" + std::to_string(pid)).c_str(), &st) != 0) return false;
  if (uid != nullptr) *uid = st.st_uid;
  return true;
}

std::string envOf(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!in) return {};
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 0;
  while (at < all.size()) {
    const size_t end = all.find('\0', at);
    const std::string kv = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (kv.compare(0, key.size() + 1, key + "=") == 0) return kv.substr(key.size() + 1);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return {};
}

std::string fmtNs(uint64_t ns) {
  if (ns < 1000000) return fmt::format("{} µs", ns / 1000);
  if (ns < 1000000000ull) return fmt::format("{:.1f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

struct Answer {
  int code = kCtlOk;
  json reply;
  std::string error;
};

// Connects to `path`, sends one request line, reads one reply line.
// Sends `request` to the socket at `path` and reads the one-line answer, waiting at most `timeout_s`;
// `limit_s`, the command's whole --timeout, is what a missing answer's message names (its part of it was
// `timeout_s`).
Answer ask(const std::string& path, const std::string& request, double timeout_s, double limit_s) {
  Answer a;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    a.code = kCtlFailed;
    a.error = std::string("socket(): ") + std::strerror(errno);
    return a;
  }
  timeval tv{static_cast<time_t>(timeout_s), static_cast<suseconds_t>(std::fmod(timeout_s, 1.0) * 1e6)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EACCES || err == EPERM) {
      a.code = kCtlPermission;
      a.error = "permission refused (" + shownPath(path) + ": " + std::strerror(err) + ")";
    } else if (err == ECONNREFUSED || err == ENOENT) {
      a.code = kCtlNotKcount;
      a.error = "stale control socket " + shownPath(path) + " (nobody listens)";
    } else {
      a.code = kCtlFailed;
      a.error = "cannot connect to " + shownPath(path) + ": " + std::strerror(err);
    }
    return a;
  }
  const std::string line = request + "\n";
  if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) {
    // The process may have refused us (another user) and closed: its answer is still readable.
  }
  std::string in;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buf, static_cast<size_t>(n));
    if (in.find('\n') != std::string::npos) break;
  }
  ::close(fd);
  if (in.empty()) {
    a.code = kCtlFailed;
    a.error = "no answer from " + shownPath(path) + " within " + fmt::format("{}", limit_s) + " s";
    return a;
  }
  try {
    a.reply = json::parse(in.substr(0, in.find('\n')));
  } catch (const std::exception&) {
    a.code = kCtlFailed;
    a.error = "unreadable answer from " + shownPath(path);
    return a;
  }
  if (!a.reply.value("ok", false)) {
    a.error = a.reply.value("error", std::string("refused"));
    a.code = a.error.rfind("permission refused", 0) == 0 ? kCtlPermission : kCtlRefusedCommand;
  }
  return a;
}

void printText(int pid, const std::string& cmd, const Answer& a) {
  const json& st = a.reply.contains("status") ? a.reply["status"] : json::object();
  std::string line = fmt::format("pid {}: ", pid);
  if (a.code != kCtlOk) {
    std::cerr << line << cmd << ": " << a.error << '\n';
    if (st.empty()) return;
  }
  if (st.empty()) {
    std::cout << line << cmd << " done\n";
    return;
  }
  const std::string mode = st.value("mode", std::string("?"));
  line += mode;
  if (mode == "dormant") line += " (no CUDA or NVTX call yet)";
  if (st.value("window_open", false)) {
    line += fmt::format(" (window {}: {}, {} so far", st.value("window", 0u), st.value("window_reason", std::string()),
                        fmtNs(st.value("window_elapsed_ns", uint64_t{0})));
    if (st.contains("window_left_ns") && st["window_left_ns"].is_number())
      line += fmt::format(", {} left", fmtNs(st["window_left_ns"].get<uint64_t>()));
    line += ")";
  } else if (st.contains("capture_range")) {
    const json& c = st["capture_range"];
    line += fmt::format(" (capture range {} armed: occurrences {}-{}, {} seen)", c.value("range", std::string()),
                        c.value("skip", 0ull) + 1, c.value("skip", 0ull) + c.value("count", 0ull), c.value("seen", 0ull));
  }
  line += fmt::format("; {} closed", counted(st.value("windows_closed", 0u), "window"));
  std::cout << line << '\n';
  if (cmd == "status" || cmd == "stop" || cmd == "flush") {
    const json& r = st["records"];
    const json& d = st["drops"];
    // Memcpy/memset calls apart from launches, as `kcount summary` and `kcount check` show them.
    const uint64_t mem_calls = r.value("mem_calls", 0ull);
    std::cout << fmt::format("  records: {}, {}, {}; dropped: {}, {}, {} refused, {}; {} outside windows\n",
                             launchesText(r.value("launches", 0ull), mem_calls),
                             counted(r.value("kernels", 0ull), "kernel"), counted(r.value("ranges", 0ull), "range"),
                             counted(d.value("host_records", 0ull), "host record"),
                             counted(d.value("activity_records", 0ull), "activity record"),
                             counted(d.value("activity_buffers_refused", 0ull), "activity buffer"),
                             counted(d.value("bytes", 0ull), "byte"),
                             counted(st.value("activity_outside_windows", 0ull), "activity record"));
    const std::string log = st.value("log", std::string());
    std::cout << fmt::format("  log: {} ({} written{})\n", log.empty() ? "(not created yet)" : log,
                             counted(st.value("bytes_written", 0ull), "byte"),
                             st.contains("log_files") && st["log_files"].size() > 1
                                 ? fmt::format(", {} files", st["log_files"].size())
                                 : std::string());
    if (st.contains("cupti")) std::cout << fmt::format("  CUPTI: {}\n", st.value("cupti", std::string()));
    if (st.contains("record_mode")) {
      const uint64_t sample = st.value("launch_timing_sample", 1ull);
      std::cout << fmt::format("  record mode: {}{}\n", st.value("record_mode", std::string()),
                               sample > 1 ? fmt::format(", one launch call in {} timed (KCOUNT_LAUNCH_TIMING)", sample)
                                          : std::string());
    }
    if (st.value("refused_connections", 0ull) > 0)
      std::cout << fmt::format("  refused connections from other users: {}\n", st.value("refused_connections", 0ull));
  }
}

// The program name of `pid` (/proc/PID/comm), "?" if unreadable.
std::string commOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name.empty() ? "?" : name;
}

std::string socketFor(int pid, unsigned uid) {
  for (const auto& dir : controlDirsFor(pid, uid)) {
    const std::string p = dir + "/" + std::to_string(pid) + ".sock";
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return p;
    if (errno == EACCES) return p;  // a folder we may not enter: connect() says "permission refused"
  }
  return {};
}

// The arguments of `pid` (/proc/PID/cmdline), empty if unreadable.
std::vector<std::string> argsOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(in, a, '\0');) args.push_back(a);
  return args;
}

// True if `pid` runs `kcount run` (a program named kcount with "run" before any "--").
bool isKcountRun(int pid) {
  const std::vector<std::string> args = argsOf(pid);
  if (args.empty() || args[0].substr(args[0].rfind('/') + 1) != "kcount") return false;
  for (size_t i = 1; i < args.size() && args[i] != "--"; ++i)
    if (args[i] == "run") return true;
  return false;
}

// The processes below `pid`, nearest first (breadth-first over /proc/PID/task/TID/children), at most 256.
std::vector<int> descendants(int pid) {
  std::vector<int> out;
  std::vector<int> queue{pid};
  for (size_t at = 0; at < queue.size() && out.size() < 256; ++at) {
    const std::string tasks = "/proc/" + std::to_string(queue[at]) + "/task";
    DIR* dir = ::opendir(tasks.c_str());
    if (dir == nullptr) continue;
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream in(tasks + "/" + e->d_name + "/children");
      for (int child; in >> child;) {
        if (std::find(out.begin(), out.end(), child) != out.end()) continue;
        out.push_back(child);
        queue.push_back(child);
      }
    }
    ::closedir(dir);
  }
  return out;
}

// 1 if a libkcount*.so is mapped in `pid` (/proc/PID/maps), 0 if not, -1 if its maps cannot be read.
int kcountMapped(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return -1;
  bool any = false;
  for (std::string line; std::getline(in, line);) {
    any = true;
    const size_t slash = line.rfind('/');
    if (slash != std::string::npos && line.compare(slash + 1, 9, "libkcount") == 0 &&
        line.find(".so", slash) != std::string::npos)
      return 1;
  }
  return any ? 0 : -1;  // empty: a zombie, or maps not shown to us
}

// Why process `pid` (of uid `uid`) has no control socket, from what /proc tells of it: libkcount.so not
// mapped, KCOUNT_DISABLE, KCOUNT_CONTROL=off, a control folder the library refuses (it warned on the
// process's stderr: "no control socket: folder DIR: WHY"; inject/control.cpp), else the causes left for
// its KCOUNT_CONTROL. "not a kcount process" only when its maps show that libkcount.so is not loaded;
// when they cannot be read (another user's process, one that is not dumpable), the text says so and names
// every cause left. Text after "pid N: ".
std::string noSocketText(int pid, unsigned uid) {
  const int mapped = kcountMapped(pid);
  if (mapped == 0) return "not a kcount process (no control socket: libkcount.so is not loaded in it)";
  const std::string disable = envOf(pid, "KCOUNT_DISABLE");
  if (mapped == 1 && disableRequested(disable))
    return "no control socket: kcount is disabled in it (KCOUNT_DISABLE=" + shownSettingValue(disable) + ")";
  const std::string control = envOf(pid, "KCOUNT_CONTROL");
  if (mapped == 1 && (control == "off" || control == "0"))
    return "no control socket: it is off in that process (KCOUNT_CONTROL=off)";
  const std::string dir = controlFolder(envOf(pid, "KCOUNT_CONTROL_DIR"), envOf(pid, "XDG_RUNTIME_DIR"), uid);
  struct stat st {};
  const bool exists = ::lstat(dir.c_str(), &st) == 0;  // one lstat(): a folder that does not exist is not refused
  if (const std::string why = exists ? refusedFolderReason(st, uid) : std::string(); !why.empty())
    return fmt::format("no control socket: kcount refuses its control folder {} ({}){}, so it made no socket (the "
                       "process's stderr has the warning 'no control socket: folder {}: ...'); use a folder of "
                       "its user's own, mode 0700 (KCOUNT_CONTROL_DIR), and restart the process",
                       dir, why, mapped == 1 ? "" : " if libkcount.so is loaded in it", dir);
  if (mapped == -1)  // its maps are not readable: every cause stays possible
    return fmt::format("no control socket, and whether libkcount.so is loaded in it cannot be told (/proc/{}/maps "
                       "cannot be read): libkcount.so not loaded, kcount disabled (KCOUNT_DISABLE), "
                       "KCOUNT_CONTROL=off, or the process has not initialized CUDA",
                       pid);
  if (control == "on" || control == "1")
    return "no control socket, though libkcount.so is loaded with KCOUNT_CONTROL=on: a fork child (it has no "
           "socket of its own), a process that loaded the library through CUDA_INJECTION64_PATH or "
           "NVTX_INJECTION64_PATH and has made no CUDA or NVTX call yet, or its socket was removed";
  return "no control socket, though libkcount.so is loaded: it has not initialized CUDA yet (with KCOUNT_CONTROL=cuda, "
         "the default, the socket comes with CUDA; KCOUNT_CONTROL=on gives one from its start when preloaded), or "
         "it is a fork child (no socket of its own)";
}

void removeStale(const std::string& path) {
  if (::unlink(path.c_str()) == 0) std::cerr << "kcount ctl: removed stale control socket " << shownPath(path) << '\n';
}

// Asks process `pid` (or, for a `kcount run` pid, its profiled process) and prints the answer. The
// whole exchange ends by `deadline` (default: --timeout from now). Returns a CtlExit code.
int oneTarget(int pid, const std::string& cmd, const std::string& request, const CtlOptions& opt,
              std::optional<std::chrono::steady_clock::time_point> deadline_given = std::nullopt) {
  // A process that could not be asked: the reason on stderr, and with --format json also one line
  // {"pid": N, "ok": false, "error": REASON, "exit": CODE} on stdout, so that a script reading the JSON
  // lines (one per process, --all) sees every process.
  const auto fail = [&](int code, const std::string& reason) {
    std::cerr << "kcount ctl: " << reason << '\n';
    if (opt.format == "json")
      std::cout << json{{"pid", pid}, {"ok", false}, {"error", reason}, {"exit", code}}.dump(
                       -1, ' ', false, json::error_handler_t::replace)
                << '\n';
    return code;
  };
  // One --timeout for the whole command, however many questions it asks (a status before a start, one
  // per candidate below a `kcount run`): each is given what is left of it.
  const auto deadline = deadline_given.value_or(
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(opt.timeout_s)));
  const auto left = [&deadline] {
    const double s = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    return std::max(s, 0.001);
  };
  unsigned uid = 0;
  if (!processExists(pid, &uid)) {
    for (const auto& dir : controlDirsFor(0, geteuid())) removeStale(dir + "/" + std::to_string(pid) + ".sock");
    return fail(kCtlNoProcess, fmt::format("no such process {}", pid));
  }
  if (uid != geteuid() && geteuid() != 0)
    return fail(kCtlPermission, fmt::format("pid {}: permission refused (the process belongs to uid {}, you are uid {})",
                                            pid, uid, geteuid()));
  const std::string path = socketFor(pid, uid);
  if (isKcountRun(pid)) {
    // `kcount run`'s own process is not profiled: its command (or a process that command started) is.
    // (Inside another `kcount run --paused` it is preloaded and has a socket of its own: passed over.)
    // With KCOUNT_CONTROL=on (--paused) every preloaded process has a socket from its start, a wrapper
    // too (a shell, a launcher): the nearest process whose session has started (it used CUDA or NVTX) is
    // the profiled one; if none has, the farthest, as a wrapper comes before what it runs.
    const std::vector<int> below = descendants(pid);
    int target = 0;
    for (const int child : below) {
      if (isKcountRun(child)) continue;  // a nested kcount run: its command is below it
      const std::string sock = socketFor(child, uid);
      if (sock.empty()) continue;
      const Answer a = ask(sock, R"({"cmd":"status"})", std::min(left(), 2.0), opt.timeout_s);
      const bool dormant = a.code != kCtlOk || !a.reply.contains("status") ||
                           a.reply["status"].value("mode", std::string()) == "dormant";
      target = child;
      if (!dormant) break;
    }
    if (target != 0) {
      std::cerr << fmt::format("kcount ctl: pid {} is kcount run; its profiled process is {}\n", pid, target);
      return oneTarget(target, cmd, request, opt, deadline);
    }
    if (below.empty()) return fail(kCtlNotKcount, fmt::format("pid {} is kcount run and its command is not running", pid));
    return fail(kCtlNotKcount, fmt::format("pid {} is kcount run; its profiled process is {}: {}", pid, below.front(),
                                           noSocketText(below.front(), uid)));
  }
  if (path.empty()) return fail(kCtlNotKcount, fmt::format("pid {}: {}", pid, noSocketText(pid, uid)));
  // A start that reaches a process before its first CUDA or NVTX call (a wrapper such as a shell, with
  // KCOUNT_CONTROL=on) records only what that process does itself; said after the answer.
  bool dormant = false;
  if (cmd == "start") {
    const Answer before = ask(path, R"({"cmd":"status"})", std::min(left(), 2.0), opt.timeout_s);
    dormant = before.code == kCtlOk && before.reply.contains("status") &&
              before.reply["status"].value("mode", std::string()) == "dormant";
  }
  const Answer a = ask(path, request, left(), opt.timeout_s);
  if (a.code == kCtlNotKcount) {
    removeStale(path);
    // The socket's process is gone (the pid was reused) or no longer serves it: what /proc shows now.
    return fail(a.code, fmt::format("pid {}: {}; {}", pid, a.error, noSocketText(pid, uid)));
  }
  if (a.code == kCtlPermission || a.code == kCtlFailed) return fail(a.code, fmt::format("pid {}: {}", pid, a.error));
  if (opt.format == "json") {
    json out = a.reply;
    out["pid"] = pid;
    std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
  } else {
    printText(pid, cmd, a);
  }
  if (dormant && a.code == kCtlOk)
    std::cerr << fmt::format("kcount ctl: process {} ({}) has made no CUDA or NVTX call yet: recording starts there "
                             "when it does; a program it starts later begins paused\n",
                             pid, commOf(pid));
  return a.code;
}

}  // namespace

std::vector<std::string> controlDirsFor(int pid, unsigned uid) {
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (!d.empty() && std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  };
  if (const char* d = std::getenv("KCOUNT_CONTROL_DIR"); d != nullptr && *d != '\0') add(d);
  if (pid > 0) {
    add(envOf(pid, "KCOUNT_CONTROL_DIR"));
    if (const std::string x = envOf(pid, "XDG_RUNTIME_DIR"); !x.empty() && x[0] == '/') add(x + "/kcount");
  }
  if (uid == geteuid())
    if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x != nullptr && *x == '/') add(std::string(x) + "/kcount");
  add("/run/user/" + std::to_string(uid) + "/kcount");
  add("/tmp/kcount-" + std::to_string(uid));
  return dirs;
}

int runCtl(const CtlOptions& opt) {
  const size_t want = opt.all ? 1 : 2;
  if (opt.args.size() != want) {
    std::cerr << "kcount ctl: usage: kcount ctl PID|--all start|stop|status|flush [--duration 10s] "
                 "[--range NAME --count M --skip N]\n";
    return kCtlUsage;
  }
  const std::string cmd = opt.args.back();
  if (cmd != "start" && cmd != "stop" && cmd != "status" && cmd != "flush") {
    std::cerr << "kcount ctl: unknown command '" << cmd << "' (start, stop, status, flush)\n";
    return kCtlUsage;
  }
  json req{{"cmd", cmd}};
  if (!opt.duration.empty()) {
    const std::optional<uint64_t> ns = parseDurationNs(opt.duration);
    if (!ns || *ns == 0) {
      std::cerr << "kcount ctl: --duration " << opt.duration
                << (ns                                ? ": must be more than 0\n"
                    : kc::tooLargeDuration(opt.duration) ? ": " + std::string(kDurationTooLarge) + "\n"
                                                         : ": not a duration (a number with ns, us, ms, s, m or h, or a plain number of seconds: 10s, "
                         "500ms, 2)\n");
      return kCtlUsage;
    }
    req["duration_ns"] = *ns;
  }
  if (opt.range_given && opt.range.empty()) {
    // An empty NAME (an unset $VAR) would otherwise open a full capture window at once.
    std::cerr << "kcount ctl: --range needs a range name (it is empty)\n";
    return kCtlUsage;
  }
  if (!opt.range.empty()) {
    req["range"] = opt.range;
    req["count"] = opt.count > 0 ? static_cast<unsigned long long>(opt.count) : 1ull;
    req["skip"] = opt.skip > 0 ? static_cast<unsigned long long>(opt.skip) : 0ull;
  } else if (opt.count >= 0 || opt.skip >= 0) {
    std::cerr << "kcount ctl: --count and --skip need --range NAME\n";
    return kCtlUsage;
  }
  if ((!opt.duration.empty() || !opt.range.empty()) && cmd != "start") {
    std::cerr << "kcount ctl: --duration and --range go with start\n";
    return kCtlUsage;
  }
  const std::string request = req.dump();
  if (request.size() + 1 > kCtlMaxRequestBytes) {  // + 1: the newline
    const size_t name_bytes = req.contains("range") ? req["range"].dump().size() - 2 : 0;  // as sent (escaped)
    std::cerr << fmt::format(
        "kcount ctl: the request would be {} bytes, over the control socket's limit of {} bytes a request "
        "(its newline included); the --range name takes {} of them: use a name of at most {} bytes\n",
        request.size() + 1, kCtlMaxRequestBytes, name_bytes, kCtlMaxRequestBytes - 1 - (request.size() - name_bytes));
    return kCtlUsage;
  }
  if (!opt.all) {
    const std::string& text = opt.args[0];
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) {
      std::cerr << "kcount ctl: '" << text << "' is not a process id\n";
      return kCtlUsage;
    }
    // Process ids are below /proc/sys/kernel/pid_max (at most 2^22 on Linux); larger numbers, those past
    // UINT64_MAX included, name no process.
    uint64_t pid_max = 4194304;
    if (std::ifstream in("/proc/sys/kernel/pid_max"); in) {
      uint64_t v = 0;
      if (in >> v && v > 1) pid_max = v;
    }
    const std::optional<uint64_t> pid = kc::parseUnsigned(text);
    if (!pid || *pid == 0 || *pid >= pid_max) {
      std::cerr << fmt::format("kcount ctl: pid {} is out of range: process ids on this system go from 1 to {} "
                               "(/proc/sys/kernel/pid_max is {})\n",
                               text, pid_max - 1, pid_max);
      return kCtlUsage;
    }
    return oneTarget(static_cast<int>(*pid), cmd, request, opt);
  }
  // --all: every socket in this user's folders (root: every user's), stale ones removed.
  std::set<std::string> dirs;
  for (const auto& d : controlDirsFor(0, geteuid())) dirs.insert(d);
  if (geteuid() == 0) {
    for (const char* base : {"/tmp", "/run/user"}) {
      if (DIR* dir = ::opendir(base)) {
        while (const dirent* e = ::readdir(dir)) {
          const std::string n = e->d_name;
          if (std::string(base) == "/tmp" && n.rfind("kcount-", 0) == 0) dirs.insert("/tmp/" + n);
          if (std::string(base) == "/run/user" && n != "." && n != "..") dirs.insert("/run/user/" + n + "/kcount");
        }
        ::closedir(dir);
      }
    }
  }
  std::set<int> pids;
  for (const auto& d : dirs) {
    DIR* dir = ::opendir(d.c_str());
    if (dir == nullptr) continue;
    while (const dirent* e = ::readdir(dir)) {
      const std::string n = e->d_name;
      if (n.size() < 6 || n.compare(n.size() - 5, 5, ".sock") != 0) continue;
      char* end = nullptr;
      const long pid = std::strtol(n.c_str(), &end, 10);
      if (pid <= 0 || std::string(end) != ".sock") continue;
      if (!processExists(static_cast<int>(pid), nullptr)) {
        removeStale(d + "/" + n);
        continue;
      }
      pids.insert(static_cast<int>(pid));
    }
    ::closedir(dir);
  }
  if (pids.empty()) {
    std::cerr << "kcount ctl: no kcount process with a control socket found\n";
    return kCtlNotKcount;
  }
  int rc = kCtlOk;
  for (int pid : pids) rc = std::max(rc, oneTarget(pid, cmd, request, opt));
  return rc;
}

}  // namespace kc
