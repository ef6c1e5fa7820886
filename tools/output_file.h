// Files a command writes (export -o, report -o): opened, closed with their write errors said, and never
// one of the logs given or another kcount log.
#pragma once

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

namespace kc {

/// `path` opened for writing (truncated), or std::runtime_error "cannot write PATH: REASON" (the
/// system's reason, or "it is a folder").
std::ofstream openOutput(const std::string& path);

/// Why the file `path`, which an output would replace, must not be written: it is one of the logs given
/// (the same file, also through another name or a link), or another kcount log (it starts with kLogMagic,
/// "KCOUNTLG": a part of a rotated run not given, another run); "" otherwise (also when it does not exist).
std::string replacesALog(const std::string& path, const std::vector<std::string>& logs);

/// Why -o OUTPUT must not be written: a file it would replace is a kcount log (replacesALog(); for
/// --format csv, the table files in the folder OUTPUT: every table's, or `table`'s alone); "" otherwise
/// ("-" never is).
std::string outputIsALog(const std::string& output, const std::vector<std::string>& logs, const std::string& format,
                         const std::string& table);

/// Why the last operation on `stream` failed, after `finish` (a flush or close) ran on it: the errno that
/// call set, or, for a stream that had failed before it (a write past the buffer, whose errno a later call
/// did not change: a failed stream makes no more system calls), the errno as it was then; 0 if unknown.
template <typename Stream, typename Finish>
int finishStream(Stream& stream, Finish&& finish) {
  const bool failed_before = !stream;
  const int before = errno;
  errno = 0;
  finish(stream);
  return errno != 0 ? errno : failed_before ? before : 0;
}

/// Closes `out`, written to `path`; std::runtime_error "cannot write PATH: REASON" if a write failed.
void closeOutput(std::ofstream& out, const std::string& path);

}  // namespace kc
