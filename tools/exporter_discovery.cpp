#include "tools/exporter_discovery.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "collector/control_folder.h"
#include "tools/ctl.h"

namespace kc {
namespace {

using nlohmann::json;

// The pids of the sockets NNN.sock in `dir`.
std::vector<int> socketPids(const std::string& dir) {
  std::vector<int> pids;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return pids;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() < 6 || n.compare(n.size() - 5, 5, ".sock") != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(n.c_str(), &end, 10);
    if (pid > 0 && pid < (1L << 30) && std::string(end) == ".sock") pids.push_back(static_cast<int>(pid));
  }
  ::closedir(d);
  return pids;
}

// One request line to the socket at `path`, one answer line back within `timeout_s`; "" on any failure
// (`error` says which).
std::string askStatus(const std::string& path, double timeout_s, std::string& error) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket(): ") + std::strerror(errno);
    return {};
  }
  timeval tv{static_cast<time_t>(timeout_s), static_cast<suseconds_t>(std::fmod(timeout_s, 1.0) * 1e6)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  std::string in;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    error = "cannot connect to its control socket: " + std::string(std::strerror(errno));
  } else {
    const std::string line = "{\"cmd\":\"status\"}\n";
    if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
      error = "cannot send to its control socket: " + std::string(std::strerror(errno));
    char buf[4096];
    while (error.empty() && in.find('\n') == std::string::npos && in.size() < (1u << 20)) {
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
    if (error.empty() && in.find('\n') == std::string::npos) error = "no answer from its control socket";
  }
  ::close(fd);
  return error.empty() ? in.substr(0, in.find('\n')) : std::string();
}

// Fills `p` from a status answer; false (with p.error) if it is not one.
bool fromStatus(const std::string& line, LiveProcess& p) {
  try {
    const json reply = json::parse(line);
    if (!reply.value("ok", false) || !reply.contains("status") || !reply["status"].is_object()) {
      p.error = "refused: " + reply.value("error", std::string("no status"));
      return false;
    }
    const json& st = reply["status"];
    p.state = st.value("mode", std::string());
    p.record_mode = st.value("record_mode", std::string());
    if (st.contains("log_files") && st["log_files"].is_array())
      for (const json& f : st["log_files"])
        if (f.is_string() && !f.get<std::string>().empty()) p.log_files.push_back(f.get<std::string>());
    if (p.log_files.empty() && !st.value("log", std::string()).empty()) p.log_files.push_back(st["log"]);
    if (st.contains("drops") && st["drops"].is_object())
      p.dropped_records = st["drops"].value("host_records", uint64_t{0}) + st["drops"].value("activity_records", uint64_t{0});
    return true;
  } catch (const std::exception&) {
    p.error = "unreadable answer from its control socket";
    return false;
  }
}

}  // namespace

std::vector<LiveProcess> findLiveProcesses(double timeout_s) {
  const uid_t uid = ::geteuid();
  std::set<int> seen;
  std::vector<LiveProcess> out;
  for (const std::string& dir : controlDirsFor(0, uid)) {
    if (!refusedFolderReason(dir, uid).empty()) continue;  // missing, or not the user's own folder
    for (const int pid : socketPids(dir)) {
      if (seen.count(pid) != 0) continue;
      struct stat proc {};
      if (::stat(("/proc/" + std::to_string(pid)).c_str(), &proc) != 0 || proc.st_uid != uid) continue;
      const std::string path = dir + "/" + std::to_string(pid) + ".sock";
      struct stat sock {};
      if (::lstat(path.c_str(), &sock) != 0 || !S_ISSOCK(sock.st_mode) || sock.st_uid != uid) continue;
      seen.insert(pid);
      LiveProcess p;
      p.pid = pid;
      std::string error;
      const std::string line = askStatus(path, timeout_s, error);
      if (line.empty()) p.error = error;
      else fromStatus(line, p);
      out.push_back(std::move(p));
    }
  }
  std::sort(out.begin(), out.end(), [](const LiveProcess& a, const LiveProcess& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace kc
