// Log file output: path patterns and a ByteSink that creates the file safely on first write.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/log_writer.h"

namespace kc {

/// First character of an Opened() call that is a note, not a path (a path never holds a NUL byte).
inline constexpr char kFileSinkNote = '\0';

/// Start of the run-report note (after kFileSinkNote) that carries a log path holding a newline, which
/// a line of its own would split: "logpath " then the path, each backslash doubled and each newline written
/// as a backslash and an n.
inline constexpr std::string_view kRunReportPathNote = "logpath ";

/// Start of the run-report note (after kFileSinkNote) that says a write to the log failed: "writefail "
/// then the process id, a space and the error's text (FileSink::Opened).
inline constexpr std::string_view kWriteFailedNote = "writefail ";

/// The KCOUNT_RUN_REPORT line (without its '\n') that reports the log file `path`: the path itself, or a
/// kRunReportPathNote note when it holds a newline. Pure; throws only std::bad_alloc.
inline std::string runReportPathLine(const std::string& path) {
  if (path.find('\n') == std::string::npos) return path;
  std::string line(1, kFileSinkNote);
  line += kRunReportPathNote;
  for (const char ch : path) line += ch == '\\' ? std::string("\\\\") : ch == '\n' ? std::string("\\n") : std::string(1, ch);
  return line;
}

/// The path a kRunReportPathNote note's text (after "logpath ") carries, its escapes undone. Pure; throws
/// only std::bad_alloc.
inline std::string runReportPathFromNote(std::string_view text) {
  std::string path;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      path += text[++i] == 'n' ? '\n' : text[i];
      continue;
    }
    path += text[i];
  }
  return path;
}

/// Name of rotated file number `index` (>= 1) of a log first created as `first`: "dir/x.kcount" ->
/// "dir/x.1.kcount"; a name not ending in ".kcount" gets ".1" appended.
std::string rotatedPath(const std::string& first, uint32_t index);

/// Name tried when `path` exists already (attempt >= 1): "dir/x.kcount" -> "dir/x-1.kcount"; a name
/// not ending in ".kcount" gets "-1" appended. Rotated parts end in ".N.kcount" and duplicates in
/// "-N.kcount", so a duplicate is never taken for a part of another log (nor the other way round), and
/// both match "*.kcount". A rotated part whose name exists gets a duplicate name of its own
/// ("x.1-1.kcount"); the reader joins parts by their metadata, not by their names.
std::string duplicatePath(const std::string& path, uint32_t attempt);

/// `path` made absolute against `cwd` (the process's working directory when the log is created): "./a.kcount"
/// in "/w" -> "/w/a.kcount", "d/a.kcount" -> "/w/d/a.kcount"; an absolute path, or an empty `cwd` (getcwd()
/// failed), is returned unchanged. A leading "./" is dropped; ".." is kept (no link is resolved). So that
/// the messages and kcount run name the file where it is, also when the program changed its directory
/// (`cd` in a launcher script, os.chdir()) before recording started. Thread-safe.
std::string absoluteLogPath(const std::string& path, const std::string& cwd);

/// Expands a KCOUNT_OUTPUT value into a file path. `pattern` may be a folder (existing, or ending in
/// '/'), then the file is `<folder>/kcount-%h-%p.kcount`; %p = pid, %h = host name, %r = rank
/// ("" -> "norank"), %% = '%'. An empty pattern means "./kcount-%h-%p.kcount". The host name and rank
/// come from the environment, not from the user who wrote the pattern, so they are put in as one file
/// name part: each '/' becomes '_', and a value of only dots ("..", ".") has its dots replaced by '_'
/// (RANK=../../etc cannot move the log out of the folder the pattern names). Thread-safe: it keeps no
/// state (it stat()s the pattern to see whether it names a folder).
std::string expandOutputPattern(const std::string& pattern, int pid, const std::string& host,
                                const std::string& rank);

/// Writes to a file created on the first write() (missing folders are created, mode 0700, and listed by
/// createdFolders()) with O_CREAT|O_EXCL|O_NOFOLLOW and the given mode: never overwrites an existing file
/// (duplicatePath(): "x-1.kcount", "x-2.kcount", ... are tried instead) and never writes through a
/// symbolic link at the file's name: a name (the first, a duplicate, a rotated or a fallback one) that is
/// a symbolic link, to anything, refuses the log with one message (through setLinkRefused()'s handler for
/// the first file when one is set, else as a warning; records are then counted as dropped). Symbolic
/// links among the folders of the path are followed. If the folder is not writable, falls back once to
/// $TMPDIR or /tmp (same file name) and
/// reports it through `warn`. After a failed write (disk full) it refuses further writes; the LogWriter
/// counts the bytes as dropped. Not thread-safe (owned by the writer). `max_bytes` caps each file's size
/// (0: no cap). With `max_files` > 1 the LogWriter rotates: rotate() closes the file and the next write
/// creates `<base>.1.kcount`, `<base>.2.kcount`, ... (rotatedPath), with the same safety (never an
/// existing file, never a symbolic link). Once `max_files` files exist, or with max_files 1, the first
/// write that would pass the cap is refused with one warning, and so is every later one. The LogWriter
/// reads roomLeft() and seals chunks that fit, so that normally no write is refused here: it keeps a
/// chunk out itself and tells refused().
///
/// A path that already exists as a character device or a fifo (/dev/null, a named pipe; not a symbolic
/// link to one, such as /dev/stdout: refused as above) is opened for writing as it is: no "-1" name, no fallback
/// folder, no rotation (the size cap still applies). A fifo with no reader is not waited for: the log is
/// refused with a warning. Any other existing non-regular path (block device, socket) is refused with
/// one warning; nothing is created.
class FileSink final : public ByteSink {
 public:
  using Warn = std::function<void(const std::string&)>;
  /// Called with the path of each file when it is created. When the log cannot be created at all, called
  /// once with kFileSinkNote followed by the reason (the same text as the warning), so that a caller
  /// that reports paths (KCOUNT_RUN_REPORT, read by `kcount run`) can report the failure too. When a
  /// write fails (full disk, file size limit), called once with kFileSinkNote, kWriteFailedNote, the
  /// process id, a space and strerror's text ("writefail 1234 No space left on device").
  using Opened = std::function<void(const std::string&)>;
  FileSink(std::string path, unsigned mode, uint64_t max_bytes, Warn warn, uint32_t max_files = 1,
           Opened opened = nullptr);
  ~FileSink() override;
  bool write(const void* data, size_t bytes) override;
  uint64_t roomLeft() const override;
  bool canRotate() const override;
  bool rotate() override;
  /// Warns once: which file (its path and number of KCOUNT_MAX_FILES) is full and what was kept out.
  void refused(const std::string& what) override;
  /// Paths of every file created, in order.
  const std::vector<std::string>& files() const { return files_; }
  /// Folders of the path that did not exist and were created for the first file, outermost first.
  const std::vector<std::string>& createdFolders() const { return created_folders_; }
  /// Called instead of the warning when the first file's name is a symbolic link, with the message (the
  /// library disables itself with it). The sink has failed by then.
  void setLinkRefused(Warn fn) { link_refused_ = std::move(fn); }
  /// True when the file being written has no name left (its last link was removed while the log was
  /// written: nothing of it will be on disk once it is closed). False for a stream (device, fifo), before
  /// the first write, after close(), and when the descriptor is no longer the sink's (ownsFd()).
  bool fileDeleted() const;
  /// Path of the file actually created ("" before the first write or if none could be created).
  const std::string& path() const { return actual_path_; }
  /// fsyncs nothing; closes the descriptor. Further writes fail.
  void close();

 private:
  bool open();
  /// Opens an existing character device or fifo at path_ (see the class comment); false with the
  /// sink failed if it cannot be used.
  bool openExisting(const struct stat& st);
  /// Takes fd_, just opened on `path`, as the current file (`first`: the log's first file, which rotated
  /// names derive from): records it, notes its identity, calls opened_. Returns true.
  bool adopt(const std::string& path, bool first);
  /// " (part 2, its last: KCOUNT_MAX_FILES=3 allows parts 0..2)" or " (part 1; KCOUNT_MAX_FILES=3 allows
  /// parts 0..2)": parts numbered from 0, as the file names and the tools number them; "" without rotation.
  std::string whichFile() const;
  /// Warns, reports the failure through opened_, and fails the sink.
  void fail(const std::string& message);
  /// Refuses the log because `link` (a name it would create) is a symbolic link: fails the sink with one
  /// message naming the link and its target (link_refused_ for the first file if set, else fail()).
  void refuseLink(const std::string& link);
  Warn link_refused_;
  std::vector<std::string> created_folders_;
  bool stream_ = false;     // writing to a character device or fifo: no rotation
  std::string path_;
  std::string first_path_;  // the first file actually created: rotated names derive from it
  uint32_t max_files_;
  uint32_t index_ = 0;      // 0 for the first file, N for <base>.N.kcount
  std::vector<std::string> files_;
  Opened opened_;
  std::string actual_path_;
  unsigned mode_;
  uint64_t max_bytes_;
  uint64_t written_ = 0;
  Warn warn_;
  int fd_ = -1;
  bool failed_ = false;
  bool refused_ = false;  // refused() warned
  dev_t dev_ = 0;  // identity of the file fd_ was opened on (fstat), to notice a descriptor the program
  ino_t ino_ = 0;  // closed and reused for a file of its own (closefrom in daemons)
  /// Records the identity of the file just opened on fd_.
  void noteOpened();
  /// True if fd_ still refers to the file this sink opened. A descriptor the program closed (EBADF) or
  /// closed and reused is not ours any more: it is neither written nor closed.
  bool ownsFd() const;
};

}  // namespace kc
