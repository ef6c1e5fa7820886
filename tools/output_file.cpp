// Files a command writes (tools/output_file.h).
#include "tools/output_file.h"

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "collector/log_format.h"
#include "collector/shown_value.h"
#include "tools/export.h"

namespace kc {

std::ofstream openOutput(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::runtime_error("cannot write " + kc::shownPath(path) + ": it is a folder (-o names the file to write)");
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw std::runtime_error("cannot write " + kc::shownPath(path) + (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
  return out;
}

std::string replacesALog(const std::string& path, const std::vector<std::string>& logs) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  for (const auto& p : logs)
    if (std::filesystem::equivalent(path, p, ec) && !ec)
      return kc::shownPath(path) + " is the log " + kc::shownPath(p) + " (writing there would replace it); name another output";
  char head[sizeof(kc::kLogMagic)] = {};
  std::ifstream in(path, std::ios::binary);
  if (in.read(head, sizeof(head)) && std::memcmp(head, kc::kLogMagic, sizeof(head)) == 0)
    return kc::shownPath(path) + " is a kcount log (writing there would replace it); name another output";
  return {};
}

std::string outputIsALog(const std::string& output, const std::vector<std::string>& logs, const std::string& format,
                         const std::string& table) {
  if (output == "-") return {};
  if (format != "csv") {
    const std::string why = replacesALog(output, logs);
    return why.empty() ? why : "-o " + why;
  }
  for (const auto& t : kc::csvTableNames()) {
    if (!table.empty() && t != table) continue;
    if (std::string why = replacesALog((std::filesystem::path(output) / (t + ".csv")).string(), logs); !why.empty())
      return "-o " + kc::shownPath(output) + ": " + why;
  }
  return {};
}

void closeOutput(std::ofstream& out, const std::string& path) {
  const int e = finishStream(out, [](std::ofstream& o) { o.close(); });
  if (!out) throw std::runtime_error("cannot write " + kc::shownPath(path) + (e != 0 ? std::string(": ") + std::strerror(e) : ""));
}

}  // namespace kc
