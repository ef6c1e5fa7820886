// Which log files form one run: the files a command is given are grouped into runs before they are read.
//
// What decides (all from each file's head, readLogHead(): its first 2 MiB, or the file read whole):
// - Run identity: the host, pid and start_ns metadata (runIdentity()). Files of one identity are one
//   recording; files without it (no metadata read) are never joined to another.
// - Rotated parts: a run rotated at KCOUNT_MAX_FILE_MB is written as parts 0, 1, 2, ... (metadata
//   rotated_file = K; a part closed for rotation says continued_in_file = K+1). Files of one identity with
//   distinct part numbers are one run, read in part order (groupRotatedParts(); joinRotatedParts() in
//   collector/log_reader.h joins their records); a part whose metadata is not in the file is numbered
//   by its name, NAME.K.kcount beside NAME.kcount (adoptUnnamedParts()).
// - Copies: the same file given twice (same device and inode, whatever the name), or two files of one
//   identity and part number (`cp` of a log), are one recording: read once when their sizes match, both
//   read (and named) when they differ (findDuplicates(), duplicateText()).
// - Parts given: which parts of a file's run are among the files given, so `kcount check` can tell a
//   whole run from a partial one (partsGiven()).
// - Segments (capture windows) are not files: they are records inside each file (LogData::segments).
// The tools read each group as one log (tools/given_logs.h loadAll()). GPU-free; every function is pure
// but for the files it reads or stats, and thread-safe for distinct arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/log_reader.h"

namespace kc {

/// Files of a rotated run that hold no metadata (their first chunk, which repeats it, was kept out at
/// KCOUNT_MAX_BYTES, or lost) cannot be told apart by identity. For each log in `logs` (read from
/// `paths[i]`) without identity and without a part number, named as the library names part K > 0 of a run
/// of which another log given holds the identity (`NAME.K.kcount` beside `NAME.kcount` or `NAME.J.kcount`),
/// adds that run's identity and rotated_file = K to its metadata, with a warning that says so: it is then
/// read as that part of the run (grouped, joined, and "given" where a part continues in it).
void adoptUnnamedParts(const std::vector<std::string>& paths, const std::vector<LogData*>& logs);

/// Log files given on a command line grouped into logs: files that are parts of one rotated log (same
/// runIdentity(), distinct part numbers) form one group, in part order, placed where its first file was
/// given; every other file is a group of its own. Reads the first 2 MiB of each file (readLogHead).
std::vector<std::vector<std::string>> groupRotatedParts(const std::vector<std::string>& paths);
/// The same from heads already read (`heads[i]`: readLogHead() of paths[i]): opens no file.
std::vector<std::vector<std::string>> groupRotatedParts(const std::vector<std::string>& paths,
                                                        const std::vector<LogData>& heads);
/// readLogHead() of each path, in order: read once, for groupRotatedParts() and findDuplicates().
std::vector<LogData> readLogHeads(const std::vector<std::string>& paths);

/// Which other parts of a file's rotated run (same runIdentity()) were given to the same command.
struct PartsGiven {
  bool earlier = false;  ///< a part K > 0 with every part 0..K-1 given
  bool next = false;     ///< a part closed for rotation (continued_in_file = N) with part N given
  std::vector<uint32_t> missing_earlier;  ///< a part K > 0: the parts 0..K-1 not given (ascending)
};

/// For each of the log files given to one command (same order): which parts of its run are among them
/// (PartsGiven). Reads the first 2 MiB of each file (readLogHead); a file without run identity gets {}.
std::vector<PartsGiven> partsGiven(const std::vector<std::string>& paths);
/// The same from the files' logs already read (`logs[i]`: the file read whole, or its head): opens no file.
/// A whole file also shows the continued_in_file key of a part longer than 2 MiB (written at its end).
std::vector<PartsGiven> partsGiven(const std::vector<const LogData*>& logs);

/// A file given again among the logs of one command: the same file (same device and inode, whatever
/// the name) or a copy of one recording (same runIdentity() and rotated part number: `cp` of a log).
/// Reading both would count the recording twice.
struct Duplicate {
  size_t index = 0;     ///< position of the repeat in the paths
  size_t original = 0;  ///< position of the first file of that recording
  bool same_file = false;
  uint32_t part = 0;                            ///< rotated part number of both
  uint64_t original_bytes = 0, bytes = 0;       ///< file sizes (a copy taken while recording is shorter)
  /// What the reading of each file (whole, or its head) found at its end: whether its End record was read,
  /// and where bytes after it begin (0: none) and whether they are a second log. Says how copies of
  /// different sizes differ (duplicateText()).
  struct End {
    bool whole = false;  ///< the file was read to its end (not a head of it)
    bool read = false;   ///< its End record was read
    uint64_t after_end_offset = 0;
    bool after_end_is_log = false;
  };
  End original_end, end;
  /// Copies of different sizes: not one file's bytes twice (one is cut, or was copied while recording),
  /// so each is read and its damage reported; the caller warns that the recording counts twice.
  bool differs() const { return !same_file && original_bytes != bytes; }
};

/// The repeats among `paths` (each at most once, naming the first file it repeats), in order. Stats and
/// reads the first 2 MiB of each regular file (readLogHead); files that cannot be stat'ed, that are not
/// kcount logs or that have no run identity (host, pid, start_ns metadata) are never repeats but of
/// themselves by inode.
std::vector<Duplicate> findDuplicates(const std::vector<std::string>& paths);
/// The same with each file's log already read (`logs[i]`: paths[i] read whole, or its head, as
/// readLogHead() reads it): stats each path, opens none.
std::vector<Duplicate> findDuplicates(const std::vector<std::string>& paths, const std::vector<LogData>& heads);
std::vector<Duplicate> findDuplicates(const std::vector<std::string>& paths, const std::vector<const LogData*>& logs);

/// "the same file as A (given twice)" or "A and B are copies of one recording (same host, pid and
/// start[, rotated part K])[ of different sizes (N and M bytes: ...)]" for a Duplicate of `paths`. The
/// sizes are explained by what was found: "B is A followed by K bytes after its end record: a second log
/// (the recording twice over)" (or "that are not a log"), where the larger file's End record ends where
/// the smaller file does; "one was copied before the recording ended, or was cut" where neither file's
/// End record was seen to follow its size, or "one has bytes after its end record" (both read whole);
/// "one was copied before the recording ended, was cut, or has bytes after its end record" while a file
/// was read in part (a head).
std::string duplicateText(const std::vector<std::string>& paths, const Duplicate& d);

}  // namespace kc
