// The HTTP side of `kcount exporter`: GET /metrics on one address, with cpp-httplib (Debian's
// libcpp-httplib-dev). Read-only: no other method or path does anything.
#pragma once

#include <functional>
#include <string>

namespace kc {

/// Serves `metrics()` at GET /metrics (Content-Type text/plain; version=0.0.4) and a one-line page at GET
/// /, on `listen` ("HOST:PORT", "[V6ADDR]:PORT"; PORT 0: a free port). Prints "kcount exporter: serving
/// http://HOST:PORT/metrics" on stderr once bound. `metrics` is called under one lock, one scrape at a
/// time. Returns when SIGINT or SIGTERM arrives (0), or at once when the address cannot be bound (1, with
/// the reason on stderr) or is not HOST:PORT (2).
int serveMetrics(const std::string& listen, const std::function<std::string()>& metrics);

/// Splits "HOST:PORT" or "[V6ADDR]:PORT"; false if it is neither or PORT is not 0..65535.
bool splitListen(const std::string& listen, std::string& host, int& port);

}  // namespace kc
