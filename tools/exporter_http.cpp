#include "tools/exporter_http.h"

#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "collector/parse.h"

namespace kc {
namespace {

std::atomic<int> g_stop_signal{0};

void onStopSignal(int sig) { g_stop_signal.store(sig); }

}  // namespace

bool splitListen(const std::string& listen, std::string& host, int& port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos) return false;  // an IPv6 address needs its brackets
  const std::optional<uint64_t> p = parseUnsigned(listen.substr(colon + 1));
  if (!p || *p > 65535 || host.empty()) return false;
  port = static_cast<int>(*p);
  return true;
}

int serveMetrics(const std::string& listen, const std::function<std::string()>& metrics) {
  std::string host;
  int port = 0;
  if (!splitListen(listen, host, port)) {
    std::cerr << "kcount exporter: --listen " << listen << ": not HOST:PORT (127.0.0.1:9464, [::1]:9464)\n";
    return 2;
  }
  httplib::Server server;
  // httplib's default sets SO_REUSEPORT, which lets a second exporter bind the same port and take every
  // other scrape: SO_REUSEADDR only, so that a port in use is refused.
  server.set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  std::mutex scrape_mutex;
  server.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    std::string body;
    {
      std::lock_guard<std::mutex> lock(scrape_mutex);
      body = metrics();
    }
    res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("kcount exporter: metrics at /metrics\n", "text/plain; charset=utf-8");
  });
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    std::cerr << "kcount exporter: cannot listen on " << listen << " (address in use, or not an address of this host)\n";
    return 1;
  }
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  std::cerr << "kcount exporter: serving http://" << shown << ":" << bound << "/metrics" << std::endl;
  ::signal(SIGPIPE, SIG_IGN);  // a scraper that hangs up mid-answer is not a reason to exit
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // The server's loop runs on its own thread; this one waits for the signal and stops it.
  std::atomic<bool> ended{false};
  std::thread loop([&server, &ended] {
    server.listen_after_bind();
    ended.store(true);
  });
  while (g_stop_signal.load() == 0 && !ended.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.stop();
  loop.join();
  if (g_stop_signal.load() == 0) {
    std::cerr << "kcount exporter: the server stopped by itself\n";
    return 1;
  }
  return 0;
}

}  // namespace kc
