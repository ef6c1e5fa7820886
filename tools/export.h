// `kcount export`: a log's records as a Chrome trace (for the Perfetto UI), a SQLite database, CSV files
// or JSON records (for pandas, DuckDB, Spark). Schema and examples: docs/export.md.
//
// Every function reads only the decoded logs it is given and writes only to its output; none keeps
// state, so calls on different outputs may run on different threads.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>
#include "tools/loaded_log.h"


namespace kc {

/// Chrome trace event JSON (the "JSON Object Format" of the Trace Event Format document, read by
/// ui.perfetto.dev and chrome://tracing). Per log: one process (pid from the log's metadata) whose
/// threads carry the NVTX ranges ("X" slices, push/pop ranges; "b"/"e" async slices for start/end
/// ranges) and the launch API calls ("X" slices named after the API, category "cuda_api"; memcpy/memset
/// calls: "cuda_api_memory"); one process per GPU ("GPU 0") whose threads are the streams, carrying the
/// kernels ("X" slices, short names, category "kernel") and memory operations (category "memory"); a
/// flow arrow ("s" inside the launch call's slice, "f" with "bp":"e" inside the kernel's, category and
/// name "launch") from each launch to each kernel it issued, and likewise (category "memory") from each
/// memory call or graph launch to each GPU memory operation joined to it: every arrow has an id of its own
/// (2^47 + the kernel's record index; 2^47 + 2^46 + the memory operation's; plus log index × 2^48 for
/// the second and later logs), and its "s" is never after its "f" nor after the kernel's start (an
/// operation that ended before its call began, without GPU time, gets no arrow). Timestamps are the log's
/// CLOCK_MONOTONIC nanoseconds written as microseconds with 3 decimals (exact). Slices that would overlap
/// without nesting on one thread or stream (kernels of one stream overlapping, ranges of different NVTX
/// domains closed out of order) go to an extra track of the same thread named "(overlap N)".
/// Memory: one small entry per record, for sorting. Writes nothing but `out`.
void writeChromeTrace(std::ostream& out, const std::vector<LoadedLog>& logs);

/// Size of the Chrome trace writeChromeTrace() would write for `logs`, estimated from the record counts
/// and the lengths of the names and range paths they carry (no JSON is built): O(records), memory
/// O(scopes + kernel names). Within about 10 % of the written size on the logs of tests/data and
/// examples/logs (tests/cli/test_export_narrowing.py checks a factor of 1.5 either way).
struct ChromeTraceEstimate {
  uint64_t events = 0;  // timed trace events (slices and flow arrows; metadata events not counted)
  uint64_t bytes = 0;   // bytes of JSON
};
ChromeTraceEstimate estimateChromeTrace(const std::vector<LoadedLog>& logs);

/// Writes the tables (processes, metadata, strings, scopes, ranges, launches, kernels, memops) to a new SQLite
/// database at `path`, replacing a regular file there only once the database is complete (built beside it
/// as PATH.kcount-building, then renamed; a failure leaves the old file as it was), plus views named as in Nsight Systems' SQLite export
/// (StringIds, CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
/// CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, NVTX_EVENTS). Names are ids into `strings`, shared by all logs. Throws std::runtime_error with
/// SQLite's message if the database cannot be written, or when `path` exists and is not a regular file.
void writeSqlite(const std::string& path, const std::vector<LoadedLog>& logs);

/// Writes one CSV file per table (processes.csv, metadata.csv, scopes.csv, ranges.csv, launches.csv,
/// kernels.csv, memops.csv) into the folder `dir`, created if missing. Names are written as text (no strings table);
/// ranges, launches and kernels also carry the range path. RFC 4180 quoting; an empty field is NULL.
/// With `only` (a name of csvTableNames()), that table's file alone. Files of these names already in the
/// folder are replaced; other files are left alone. Throws std::runtime_error "cannot write PATH: REASON"
/// if the folder cannot be created or a file cannot be written.
void writeCsv(const std::string& dir, const std::vector<LoadedLog>& logs, const std::string& only = {});

/// Writes one table of writeCsv(), `table` (a name of csvTableNames()), header and rows, to `out`
/// (`kcount export --format csv --table NAME -o -`); nothing for another name.
void writeCsvTable(std::ostream& out, const std::string& table, const std::vector<LoadedLog>& logs);

/// The tables writeCsv() writes, in order: processes, metadata, scopes, ranges, launches, kernels, memops.
std::vector<std::string> csvTableNames();

/// Writes {"processes": [...], "metadata": [...], "scopes": [...], "ranges": [...], "launches": [...],
/// "kernels": [...], "memops": [...]}: one JSON object per row, the same columns as the CSV files (null for NULL), for
/// `pandas.DataFrame(doc["kernels"])`.
void writeJsonRecords(std::ostream& out, const std::vector<LoadedLog>& logs);

// ---- The table model shared by the SQLite, CSV and JSON writers (exposed for tests and docs). ----

enum class ColumnKind {
  kInt,   // integer (SQLite INTEGER)
  kText,  // text stored as is
  kName,  // a name: an id into `strings` in SQLite, the text itself in CSV and JSON
};

struct ExportColumn {
  const char* name;
  ColumnKind kind;
  bool in_sqlite;  // false for convenience columns (range path) that SQLite users get by a join
};

struct ExportTable {
  const char* name;
  std::vector<ExportColumn> columns;
};

/// One cell: NULL, an integer, or text (valid only during the TableSink::row call). A time, id or size of
/// the log is unsigned (uint64_t): JSON and CSV write it as it is; SQLite, whose INTEGER is signed 64-bit,
/// stores one above INT64_MAX as INT64_MAX (docs/export.md).
using ExportCell = std::variant<std::monostate, int64_t, uint64_t, std::string_view>;

/// Writes one CSV row (RFC 4180) and its newline to `out`: an integer in decimal, text through csvField()
/// (quoted where needed, valid UTF-8), NULL as an empty field. The CSV tables of `export` and `kcount diff
/// --format csv` are written with it. Write errors are left in `out`'s state.
void writeCsvRow(std::ostream& out, const std::vector<ExportCell>& cells);

/// Receives the tables one after the other: begin, rows, end.
class TableSink {
 public:
  virtual ~TableSink() = default;
  virtual void beginTable(const ExportTable& table) = 0;
  /// cells.size() == table.columns.size(), in column order.
  virtual void row(const std::vector<ExportCell>& cells) = 0;
  virtual void endTable() = 0;
};

/// Emits processes, metadata, scopes, ranges, launches, kernels, memops for all logs (processId = the
/// log's index in `logs`) into `sink`. Kernels and memory operations are joined to their API call by
/// correlation id to get their range. Launches are kernel launches only (memcpy/memset calls, format
/// 1.1, are in memops), as in `kcount summary`.
void exportTables(const std::vector<LoadedLog>& logs, TableSink& sink);

/// Nsight Systems' serialized process id: (processId << 48) | (pid << 24). Thread ids: globalPid | tid,
/// so that globalTid / 0x1000000 % 0x1000000 is the pid and globalTid % 0x1000000 the thread id.
int64_t exportGlobalPid(uint32_t process_index, uint32_t pid);

}  // namespace kc
