// The control folder's rule (collector/control_folder.h): by path (lstat) and from an lstat() result the
// caller has, the same answer.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>

#include "collector/control_folder.h"

TEST_CASE("control folder: the rule from a path and from its lstat() result agree") {
  char dir[] = "/tmp/kc-control-folder-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string base = dir;
  const std::string own = base + "/own", open_one = base + "/open", file = base + "/file", link = base + "/link";
  REQUIRE(::mkdir(own.c_str(), 0700) == 0);
  REQUIRE(::mkdir(open_one.c_str(), 0700) == 0);
  REQUIRE(::chmod(open_one.c_str(), 0755) == 0);  // chmod: the umask does not change it
  { std::FILE* f = std::fopen(file.c_str(), "w"); REQUIRE(f != nullptr); std::fclose(f); }
  REQUIRE(::symlink(own.c_str(), link.c_str()) == 0);
  const uid_t me = ::geteuid();
  for (const auto& [path, why] : {std::pair<std::string, std::string>{own, ""},
                                  {open_one, "open to group or others (mode 755)"},
                                  {file, "not a folder (or a symbolic link)"},
                                  {link, "not a folder (or a symbolic link)"}}) {
    CAPTURE(path);
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(kc::refusedFolderReason(path, me) == why);
    CHECK(kc::refusedFolderReason(st, me) == why);
    // Another user's folder: refused for that, before its mode is looked at.
    CHECK(kc::refusedFolderReason(st, me + 1) == (S_ISDIR(st.st_mode) ? "owned by uid " + std::to_string(me) : why));
  }
  CHECK(kc::refusedFolderReason(base + "/none", me) == "No such file or directory");
  std::filesystem::remove_all(base);
}
