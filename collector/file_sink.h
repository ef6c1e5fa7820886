// Log file output: path patterns and a ByteSink that creates the file safely on first write.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "collector/log_writer.h"

namespace kc {

/// Expands a KCOUNT_OUTPUT value into a file path. `pattern` may be a folder (existing, or ending in
/// '/'), then the file is `<folder>/kcount-%h-%p.kcount`; %p = pid, %h = host name, %r = rank
/// ("" -> "norank"), %% = '%'. An empty pattern means "./kcount-%h-%p.kcount".
std::string expandOutputPattern(const std::string& pattern, int pid, const std::string& host,
                                const std::string& rank);

/// Writes to a file created on the first write() (missing folders are created, mode 0700) with
/// O_CREAT|O_EXCL|O_NOFOLLOW and the given mode:
/// never follows a symbolic link and never overwrites an existing file (".1", ".2", ... are tried
/// instead). If the folder is not writable, falls back once to $TMPDIR or /tmp (same file name) and
/// reports it through `warn`. After a failed write (disk full) it refuses further writes; the LogWriter
/// counts the bytes as dropped. Not thread-safe (owned by the writer). `max_bytes` caps the file size:
/// the first write that would pass it is refused, with one warning, and so is every later one.
class FileSink final : public ByteSink {
 public:
  using Warn = std::function<void(const std::string&)>;
  FileSink(std::string path, unsigned mode, uint64_t max_bytes, Warn warn);
  ~FileSink() override;
  bool write(const void* data, size_t bytes) override;
  /// Path of the file actually created ("" before the first write or if none could be created).
  const std::string& path() const { return actual_path_; }
  /// fsyncs nothing; closes the descriptor. Further writes fail.
  void close();

 private:
  bool open();
  std::string path_;
  std::string actual_path_;
  unsigned mode_;
  uint64_t max_bytes_;
  uint64_t written_ = 0;
  Warn warn_;
  int fd_ = -1;
  bool failed_ = false;
};

}  // namespace kc
