#include "collector/file_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kc {

namespace {
/// A host name or rank as one part of a file name (see expandOutputPattern).
std::string asNamePart(std::string value) {
  for (char& c : value)
    if (c == '/') c = '_';
  if (!value.empty() && value.find_first_not_of('.') == std::string::npos) value.assign(value.size(), '_');
  return value;
}
}  // namespace

std::string expandOutputPattern(const std::string& pattern_in, int pid, const std::string& host,
                                const std::string& rank) {
  std::string pattern = pattern_in.empty() ? std::string("./kcount-%h-%p.kcount") : pattern_in;
  struct stat st {};
  if (pattern.back() == '/' || (::stat(pattern.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    if (pattern.back() != '/') pattern += '/';
    pattern += "kcount-%h-%p.kcount";
  }
  std::string out;
  out.reserve(pattern.size() + 32);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    switch (pattern[++i]) {
      case 'p': out += std::to_string(pid); break;
      case 'h': out += asNamePart(host); break;
      case 'r': out += rank.empty() ? std::string("norank") : asNamePart(rank); break;
      case '%': out += '%'; break;
      default: out += '%'; out += pattern[i]; break;
    }
  }
  return out;
}

std::string absoluteLogPath(const std::string& path, const std::string& cwd) {
  if (path.empty() || path[0] == '/' || cwd.empty() || cwd[0] != '/') return path;
  std::string_view rest(path);
  while (rest.starts_with("./")) {
    rest.remove_prefix(2);
    while (rest.starts_with('/')) rest.remove_prefix(1);
  }
  return cwd + (cwd.back() == '/' ? "" : "/") + std::string(rest);
}

std::string rotatedPath(const std::string& first, uint32_t index) {
  const std::string ext = ".kcount";
  if (first.size() > ext.size() && first.compare(first.size() - ext.size(), ext.size(), ext) == 0)
    return first.substr(0, first.size() - ext.size()) + "." + std::to_string(index) + ext;
  return first + "." + std::to_string(index);
}

std::string duplicatePath(const std::string& path, uint32_t attempt) {
  const std::string ext = ".kcount";
  const size_t slash = path.rfind('/');
  const size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  if (path.size() > name_at + ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0)
    return path.substr(0, path.size() - ext.size()) + "-" + std::to_string(attempt) + ext;
  return path + "-" + std::to_string(attempt);
}

FileSink::FileSink(std::string path, unsigned mode, uint64_t max_bytes, Warn warn, uint32_t max_files, Opened opened)
    : path_(std::move(path)),
      max_files_(max_files == 0 ? 1 : max_files),
      opened_(std::move(opened)),
      mode_(mode),
      max_bytes_(max_bytes),
      warn_(std::move(warn)) {}

uint64_t FileSink::roomLeft() const {
  if (max_bytes_ == 0) return kUnlimited;
  return written_ >= max_bytes_ ? 0 : max_bytes_ - written_;
}

bool FileSink::canRotate() const {
  return max_bytes_ != 0 && !failed_ && !stream_ && fd_ >= 0 && written_ > 0 && index_ + 1 < max_files_;
}

std::string FileSink::whichFile() const {
  // Parts are numbered from 0, as the file names (r.kcount, r.1.kcount, ...) and the tools number them.
  if (max_files_ <= 1) return "";
  const std::string allowed =
      "KCOUNT_MAX_FILES=" + std::to_string(max_files_) + " allows parts 0.." + std::to_string(max_files_ - 1);
  return index_ + 1 == max_files_ ? " (part " + std::to_string(index_) + ", its last: " + allowed + ")"
                                  : " (part " + std::to_string(index_) + "; " + allowed + ")";
}

void FileSink::refused(const std::string& what) {
  if (refused_ || !warn_) return;
  refused_ = true;
  warn_("log " + (actual_path_.empty() ? path_ : actual_path_) + whichFile() + " is full at KCOUNT_MAX_BYTES=" +
        std::to_string(max_bytes_) + " bytes: a chunk of " + what +
        " does not fit; it and further records are counted as dropped (the log is closed with its Stats and "
        "End records; the counts are in the closing line)");
}

void FileSink::noteOpened() {
  struct stat st {};
  if (fd_ >= 0 && ::fstat(fd_, &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
}

bool FileSink::ownsFd() const {
  struct stat st {};
  return fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

bool FileSink::fileDeleted() const {
  struct stat st {};
  return fd_ >= 0 && !stream_ && ::fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_ &&
         S_ISREG(st.st_mode) && st.st_nlink == 0;
}

bool FileSink::rotate() {
  if (failed_ || stream_ || index_ + 1 >= max_files_) return false;
  if (fd_ >= 0 && ownsFd()) ::close(fd_);
  fd_ = -1;
  ++index_;
  path_ = rotatedPath(first_path_.empty() ? path_ : first_path_, index_);
  written_ = 0;
  return true;
}

FileSink::~FileSink() { close(); }

void FileSink::close() {
  if (fd_ >= 0 && ownsFd()) ::close(fd_);
  fd_ = -1;
  failed_ = true;
}

// Creates `base`, or the first free duplicatePath() of it. A name taken by a symbolic link stops the
// search: -1 with errno ELOOP and *link set to that name (the caller refuses the log).
static int createExclusive(const std::string& base, unsigned mode, std::string* chosen, std::string* link) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string p = attempt == 0 ? base : duplicatePath(base, static_cast<uint32_t>(attempt));
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) {
      *chosen = p;
      return fd;
    }
    if (errno != EEXIST) return -1;
    if (struct stat st {}; ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      *link = p;
      errno = ELOOP;
      return -1;
    }
  }
  errno = EEXIST;
  return -1;
}

// Creates the missing folders of `path` (mode 0700), like mkdir -p; errors are left to open(). Returns
// the folders it created, outermost first.
static std::vector<std::string> makeParents(const std::string& path) {
  std::vector<std::string> made;
  for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1)) {
    std::string dir = path.substr(0, at);
    if (::mkdir(dir.c_str(), 0700) == 0) made.push_back(std::move(dir));
  }
  return made;
}

void FileSink::refuseLink(const std::string& link) {
  char target[4096];
  const ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
  const std::string to = n > 0 ? " (to " + std::string(target, static_cast<size_t>(n)) + ")" : std::string();
  const std::string message =
      "the log path " + link + " is a symbolic link" + to +
      ": kcount never writes its log through a symbolic link at the file's name (in a shared folder such as "
      "/tmp, another user can put one there); no log is written (remove the link, or set KCOUNT_OUTPUT to "
      "another name)";
  if (link_refused_ && index_ == 0) {
    failed_ = true;
    link_refused_(message);
    return;
  }
  fail(message + "; records are counted as dropped");
}

void FileSink::fail(const std::string& message) {
  if (warn_) warn_(message);
  if (opened_) opened_(std::string(1, kFileSinkNote) + message);
  failed_ = true;
}

bool FileSink::openExisting(const struct stat& st) {
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    fail("log path " + path_ + " exists and is not a regular file, a folder, a character device or a fifo; no log is "
         "written and records are counted as dropped");
    return false;
  }
  // No O_CREAT: nothing is created. O_NONBLOCK: a fifo without a reader fails (ENXIO) instead of
  // blocking the process; blocking writes are restored below.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  struct stat got {};
  if (fd_ >= 0 && (::fstat(fd_, &got) != 0 || !(S_ISCHR(got.st_mode) || S_ISFIFO(got.st_mode)))) {
    ::close(fd_);  // replaced by something else since stat(): not ours to write
    fd_ = -1;
    errno = EINVAL;
  }
  if (fd_ < 0) {
    const int err = errno;
    fail("cannot open log " + path_ + " (" + (err == ENXIO ? std::string("a fifo with no reader") : std::strerror(err)) +
         "); records are counted as dropped");
    return false;
  }
  if (const int flags = ::fcntl(fd_, F_GETFL); flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  stream_ = true;
  return adopt(path_, true);
}

bool FileSink::adopt(const std::string& path, bool first) {
  actual_path_ = path;
  if (first) first_path_ = path;
  files_.push_back(path);
  noteOpened();
  if (opened_) opened_(path);
  return true;
}

bool FileSink::open() {
  if (index_ > 0) {
    // A rotated file: next to the first one, never an existing file, no fallback folder.
    std::string chosen, link;
    fd_ = createExclusive(path_, mode_, &chosen, &link);
    if (fd_ < 0 && !link.empty()) {
      refuseLink(link);
      return false;
    }
    if (fd_ < 0) {
      fail("cannot create log " + path_ + " (" + std::strerror(errno) + "); records are counted as dropped");
      return false;
    }
    return adopt(chosen, false);
  }
  // An existing device or fifo (/dev/null, a named pipe) is written as it is; O_EXCL below would
  // otherwise make a regular file beside it ("/dev/null.1").
  // lstat: a symbolic link at the name is refused, whatever it points to (a fifo or device included).
  if (struct stat st {}; ::lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (!S_ISLNK(st.st_mode)) return openExisting(st);
    refuseLink(path_);
    return false;
  }
  created_folders_ = makeParents(path_);
  std::string chosen, link;
  fd_ = createExclusive(path_, mode_, &chosen, &link);
  if (fd_ < 0 && !link.empty()) {
    refuseLink(link);
    return false;
  }
  if (fd_ < 0) {
    const int err = errno;
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    const size_t slash = path_.rfind('/');
    std::string fallback = dir + "/" + (slash == std::string::npos ? path_ : path_.substr(slash + 1));
    fd_ = createExclusive(fallback, mode_, &chosen, &link);
    if (fd_ < 0 && !link.empty()) {
      refuseLink(link);
      return false;
    }
    if (fd_ < 0) {
      fail("cannot create log " + path_ + " (" + std::strerror(err) + ") nor " + fallback + " (" +
           std::strerror(errno) + "); records are counted as dropped");
      return false;
    }
    if (warn_) warn_("cannot create log " + path_ + " (" + std::strerror(err) + "); writing " + chosen + " instead");
  }
  return adopt(chosen, true);
}

bool FileSink::write(const void* data, size_t bytes) {
  if (failed_) return false;
  if (fd_ < 0 && !open()) return false;
  if (max_bytes_ != 0 && written_ + bytes > max_bytes_) {
    // Stop at the cap: writing later, smaller chunks would leave holes the reader cannot see.
    if (warn_)
      warn_("log " + actual_path_ + whichFile() + " reached KCOUNT_MAX_BYTES=" + std::to_string(max_bytes_) +
            " bytes; further records are counted as dropped");
    failed_ = true;
    return false;
  }
  // Daemons close every descriptor (closefrom) and open their own files: the number kcount holds may now
  // be the program's. One fstat per chunk (about once a second) makes sure kcount never writes there.
  if (!ownsFd()) {
    if (warn_)
      warn_("the program closed kcount's log descriptor " + std::to_string(fd_) + " (" + actual_path_ +
            "); the log ends here and further records are counted as dropped (nothing is written to the "
            "program's files)");
    fd_ = -1;  // not closed: the number may belong to the program now
    failed_ = true;
    return false;
  }
  const auto* p = static_cast<const uint8_t*>(data);
  size_t left = bytes;
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      // A full disk (ENOSPC, EFBIG, EDQUOT) can leave part of this chunk written: cut the file back to its
      // last whole chunk, so the log reads as ended early (incomplete), not as a damaged tail.
      const bool cut = !stream_ && p != data && ::ftruncate(fd_, static_cast<off_t>(written_)) == 0;
      if (warn_)
        warn_("writing " + actual_path_ + " failed (" + std::strerror(err) + ")" +
              (cut ? "; the file is cut back to its last whole chunk" : "") +
              "; further records are counted as dropped");
      if (opened_) opened_(std::string(1, kFileSinkNote) + std::string(kWriteFailedNote) + std::to_string(::getpid()) + " " +
                           std::strerror(err));
      failed_ = true;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  written_ += bytes;
  return true;
}

}  // namespace kc
