#include "collector/control_folder.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace kc {

std::string controlFolder(const std::string& control_dir, const std::string& xdg_runtime_dir, uid_t uid) {
  if (!control_dir.empty()) return control_dir;
  if (!xdg_runtime_dir.empty() && xdg_runtime_dir[0] == '/') return xdg_runtime_dir + "/kcount";
  return "/tmp/kcount-" + std::to_string(uid);
}

std::string refusedFolderReason(const std::string& dir, uid_t uid) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return std::strerror(errno);
  return refusedFolderReason(st, uid);
}

std::string refusedFolderReason(const struct stat& st, uid_t uid) {
  if (!S_ISDIR(st.st_mode)) return "not a folder (or a symbolic link)";
  if (st.st_uid != uid) return "owned by uid " + std::to_string(st.st_uid);
  if ((st.st_mode & 077) != 0)
    return "open to group or others (mode " + std::to_string((st.st_mode >> 6) & 7) +
           std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) + ")";
  return {};
}

}  // namespace kc
