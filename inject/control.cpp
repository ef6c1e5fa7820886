#include "inject/control.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "collector/clock.h"
#include "collector/control_folder.h"
#include "inject/log.h"
#include "inject/cupti_attach.h"
#include "inject/recording.h"
#include "inject/session.h"

namespace kc::inject {

namespace {

constexpr size_t kMaxRequestBytes = 4096;
constexpr int kReadTimeoutMs = 2000;

std::atomic<int> g_listen_fd{-1};
std::atomic<int> g_owner_pid{0};
char g_socket_path[sizeof(sockaddr_un::sun_path)] = {};  // written once before g_owner_pid is set
std::atomic<uint64_t> g_refusals{0};
std::once_flag g_start_once;
bool g_started = false;

using nlohmann::json;

json statusJson() {
  const SessionStatus st = Session::get().status();
  json j;
  j["pid"] = getpid();
  j["mode"] = st.mode;
  j["window_open"] = st.window_open;
  j["window"] = st.window_index;
  if (st.window_open) {
    j["window_reason"] = st.window_reason;
    j["window_elapsed_ns"] = st.now_ns - st.window_start_ns;
    j["window_left_ns"] = st.window_deadline_ns > st.now_ns ? json(st.window_deadline_ns - st.now_ns) : json(nullptr);
  }
  j["windows_closed"] = st.windows_closed;
  if (!st.trigger_range.empty())
    j["capture_range"] = {{"range", st.trigger_range}, {"skip", st.trigger_skip}, {"count", st.trigger_count},
                          {"seen", st.trigger_seen}};
  // launches: kernel launches only; mem_calls: memcpy/memset API calls (as `kcount summary` counts them).
  j["records"] = {{"launches", st.launches}, {"mem_calls", st.mem_calls}, {"kernels", st.kernels}, {"ranges", st.ranges}};
  j["drops"] = {{"host_records", st.dropped_host_records},
                {"activity_records", st.dropped_activity_records},
                {"activity_buffers_refused", st.activity_buffers_refused},
                {"bytes", st.bytes_dropped}};
  j["activity_outside_windows"] = st.activity_outside_windows;
  j["log"] = st.log_path;
  j["log_files"] = st.log_files;
  j["bytes_written"] = st.bytes_written;
  j["refused_connections"] = g_refusals.load();
  j["cupti"] = cuptiState();
  // What the process records: KCOUNT_MODE and, in summary mode, KCOUNT_LAUNCH_TIMING (1: every call timed).
  const Config& config = Session::get().config();
  j["record_mode"] = config.mode == RecordMode::kSummary ? "summary" : "trace";
  j["launch_timing_sample"] = config.launch_timing;
  return j;
}

std::string reply(bool ok, const std::string& error, bool with_status = true) {
  json j;
  j["ok"] = ok;
  if (!ok) j["error"] = error;
  if (with_status) j["status"] = statusJson();
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool writeAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// One line, at most kMaxRequestBytes, within kReadTimeoutMs.
bool readLine(int fd, std::string* line) {
  char buf[512];
  const uint64_t deadline = nowNs() + uint64_t{kReadTimeoutMs} * 1000000ull;
  while (line->size() < kMaxRequestBytes) {
    const uint64_t now = nowNs();
    if (now >= deadline) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>((deadline - now) / 1000000ull) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return !line->empty();
    line->append(buf, static_cast<size_t>(n));
    if (const size_t nl = line->find('\n'); nl != std::string::npos) {
      line->resize(nl);
      return true;
    }
  }
  return false;
}

void serveOne(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || (cred.uid != geteuid() && cred.uid != 0)) {
    // Another user: refused. The socket's folder is private, so this takes a root-created path or a
    // passed descriptor; said once, counted always.
    if (g_refusals.fetch_add(1) == 0)
      KC_LOG(warn, "control socket: refused a connection from uid {} (pid {}): only uid {} and root may control "
                   "this process (further refusals are counted in `kcount ctl status`)",
             cred.uid, cred.pid, geteuid());
    writeAll(fd, reply(false, "permission refused: uid " + std::to_string(cred.uid) +
                                  " may not control this process (owner uid " + std::to_string(geteuid()) + ")",
                       false) + "\n");
    return;
  }
  std::string line;
  if (!readLine(fd, &line)) {
    writeAll(fd, reply(false, "no request line within 2 s", false) + "\n");
    return;
  }
  writeAll(fd, handleControlRequest(line) + "\n");
}

void serve(int listen_fd) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the application's signals go to its own threads
  for (;;) {
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN) continue;
      if (errno == EBADF || errno == EINVAL || errno == ENOTSOCK) return;  // closed at exit
      timespec ts{0, 100000000};  // EMFILE and the like: wait, do not spin
      nanosleep(&ts, nullptr);
      continue;
    }
    try {
      serveOne(fd);
    } catch (...) {
    }
    ::close(fd);
  }
}

bool privateDir(const std::string& dir, std::string* why) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *why = std::string("cannot create it: ") + std::strerror(errno);
    return false;
  }
  *why = refusedFolderReason(dir, geteuid());  // the rule `kcount ctl` also applies to say why
  return why->empty();
}

bool startServer() {
  const std::string dir = controlDir();
  if (dir.empty()) return false;
  std::string why;
  if (!privateDir(dir, &why)) {
    KC_LOG(warn, "no control socket: folder {}: {}; `kcount ctl` cannot reach this process", dir, why);
    return false;
  }
  const std::string path = dir + "/" + std::to_string(getpid()) + ".sock";
  if (path.size() >= sizeof(g_socket_path)) {
    KC_LOG(warn, "no control socket: path {} is too long for a Unix socket", path);
    return false;
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    KC_LOG(warn, "no control socket: socket() failed: {}", std::strerror(errno));
    return false;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ::unlink(path.c_str());  // a stale socket of a dead process with the same pid (the folder is ours)
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::chmod(path.c_str(), 0600) != 0 ||
      ::listen(fd, 8) != 0) {
    KC_LOG(warn, "no control socket: cannot listen on {}: {}", path, std::strerror(errno));
    ::close(fd);
    ::unlink(path.c_str());
    return false;
  }
  std::memcpy(g_socket_path, path.c_str(), path.size() + 1);
  g_listen_fd.store(fd);
  g_owner_pid.store(getpid());
  std::thread(serve, fd).detach();
  KC_LOG(debug, "control socket {}", path);
  return true;
}

}  // namespace

std::string controlDir() {
  const char* x = std::getenv("XDG_RUNTIME_DIR");
  return controlFolder(Session::get().config().control_dir, x != nullptr ? x : "", geteuid());
}

bool startControlServer() noexcept {
  try {
    std::call_once(g_start_once, [] {
      g_started = startServer();
      // Paused with no capture range, the socket was the only way to start recording: say so, as the
      // configuration check does for KCOUNT_CONTROL=off.
      const Config& c = Session::get().config();
      if (!g_started && c.start_paused && c.capture_range.empty() && !Session::get().windowOpen())
        KC_LOG(warn, "KCOUNT_START=paused without a control socket (above): nothing can start recording in this "
                     "process (fix the control folder, or set KCOUNT_CAPTURE_RANGE)");
    });
  } catch (...) {
  }
  return g_started;
}

void removeControlSocket() noexcept {
  if (g_owner_pid.load() == getpid() && g_socket_path[0] != '\0') ::unlink(g_socket_path);
}

void controlAfterFork() noexcept {
  const int fd = g_listen_fd.exchange(-1);
  if (fd >= 0) ::close(fd);
}

bool ownsControlSocket() noexcept { return g_owner_pid.load() != 0 && g_owner_pid.load() == getpid(); }

std::string handleControlRequest(const std::string& request) noexcept {
  try {
    json req;
    try {
      req = json::parse(request);
    } catch (const std::exception&) {
      return reply(false, "bad request: not a JSON object", false);
    }
    if (!req.is_object() || !req.contains("cmd") || !req["cmd"].is_string())
      return reply(false, "bad request: no \"cmd\"", false);
    const std::string cmd = req["cmd"].get<std::string>();
    auto number = [&](const char* key) -> uint64_t {
      return req.contains(key) && req[key].is_number_unsigned() ? req[key].get<uint64_t>() : 0;
    };
    Session& s = Session::get();
    std::string error;
    if (cmd == "status") return reply(true, "");
    if (cmd == "flush") {
      s.flushNow();
      return reply(true, "");
    }
    if (cmd == "stop") {
      const bool ok = s.stopCapture("ctl", &error);
      if (ok) s.flushNow();
      return reply(ok, error);
    }
    if (cmd == "start") {
      const uint64_t duration = number("duration_ns");
      // A process that has a socket before its first CUDA or NVTX call (KCOUNT_CONTROL=on when
      // preloaded) is started here: the writer thread runs and the window opens now; CUPTI is attached
      // when CUDA initializes, NVTX ranges are recorded from the first.
      if (s.state() == SessionState::kDormant) startRecording();
      if (req.contains("range") && req["range"].is_string()) {
        const uint64_t count = req.contains("count") ? number("count") : 1;
        return reply(s.armRange(req["range"].get<std::string>(), number("skip"), count, duration, &error), error);
      }
      return reply(s.startCapture("ctl", duration, &error), error);
    }
    return reply(false, "unknown command '" + cmd + "' (start, stop, status, flush)", false);
  } catch (const std::exception& e) {
    return "{\"ok\":false,\"error\":\"internal error\"}";
  } catch (...) {
    return "{\"ok\":false,\"error\":\"internal error\"}";
  }
}

}  // namespace kc::inject
