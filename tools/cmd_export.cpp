// `kcount export`: logs as a Chrome trace, SQLite, CSV or JSON records (tools/export.h), narrowed to a
// capture window or a time window, with the size guard of the Chrome trace.
#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <charconv>
#include <fstream>
#include <filesystem>

#include <fmt/format.h>

#include "collector/counted.h"
#include "collector/parse.h"
#include "collector/shown_value.h"
#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tools/export.h"
#include "tools/given_logs.h"
#include "tools/loaded_log.h"
#include "tools/output_file.h"
#include "tools/text.h"

namespace kc {
namespace {

/// Rows of the CSV file `path` below its header: record ends ('\n' outside a quoted field, RFC 4180) less
/// one, a last record without its line end counted too; nullopt if it cannot be read.
std::optional<uint64_t> csvRows(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  uint64_t records = 0;
  bool quoted = false, open = false;  // inside a quoted field; a record begun and not ended
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize k = 0; k < in.gcount(); ++k) {
      const char c = buf[k];
      if (c == '"') quoted = !quoted;  // "" inside a quoted field toggles twice
      if (c == '\n' && !quoted) {
        ++records;
        open = false;
      } else {
        open = true;
      }
    }
    if (!in) break;
  }
  if (in.bad()) return std::nullopt;
  records += open ? 1 : 0;
  return records > 0 ? records - 1 : 0;
}

/// Default `export --max-mb`: the Chrome trace size above which export refuses without --force.
/// chrome://tracing and the Perfetto UI load a JSON trace into the browser's memory; traces of a few
/// hundred MB and more fail to open there (Perfetto's docs advise its trace processor for larger ones).
constexpr double kDefaultMaxTraceMb = 256;

/// Time zero of `--from/--to`: the log's start_ns metadata (when the library started), else its first
/// record.
uint64_t logStartNs(const kc::LogData& d) {
  const std::string text = d.meta("start_ns");
  uint64_t v = 0;
  if (!text.empty() && std::from_chars(text.data(), text.data() + text.size(), v).ec == std::errc() && v > 0)
    return v;
  return kc::recordTimeSpan(d).first;
}

/// "the log spans 0 to 12.3 s" (the longest of the logs), for the export size message.
std::string spanText(const std::vector<kc::LoadedLog>& logs) {
  uint64_t end = 0;
  for (const auto& l : logs) {
    const uint64_t start = logStartNs(l.data), last = kc::recordTimeSpan(l.data).second;
    end = std::max(end, last > start ? last - start : 0);
  }
  return "the log" + std::string(logs.size() > 1 ? "s span" : " spans") + " 0 to " + kc::formatDuration(end);
}

/// " --segment N (one of the log's 3 capture windows, 0 to 2)," or "" for logs without capture windows,
/// for the export size message.
std::string segmentsText(const std::vector<kc::LoadedLog>& logs) {
  size_t n = 0;
  for (const auto& l : logs) n = std::max(n, l.data.segments.size());
  if (n < 2) return "";
  return fmt::format(" --segment N (one of the {} capture windows, 0 to {}),", n, n - 1);
}

/// Why `kcount export --format FORMAT -o OUTPUT [--table TABLE]` cannot write, or "" if it can. One rule for
/// every format: -o names what is written (a file; a folder for csv) and an existing one of that kind is
/// replaced (csv: the table files of those names in the folder); an existing one of the other kind is
/// refused, never removed. "-" is standard output for the text formats (chrome, json; csv with --table,
/// one table), not for sqlite (a database is a file).
std::string exportOutputError(const std::string& format, const std::string& output, const std::string& table) {
  if (output == "-") {
    if (format == "sqlite")
      return "--format sqlite cannot write to standard output (-o -): a SQLite database is a file; name one "
             "with -o FILE";
    if (format == "csv" && table.empty()) {
      std::string names;
      for (const auto& t : kc::csvTableNames()) names += (names.empty() ? "" : ", ") + t;
      return "--format csv -o - writes one table to standard output: name it with --table (" + names + ")";
    }
    return {};
  }
  std::error_code ec;
  const auto st = std::filesystem::status(output, ec);
  if (format == "csv") {
    if (std::filesystem::exists(st) && !std::filesystem::is_directory(st))
      return "cannot write " + kc::shownPath(output) + ": it is a file, not a folder (--format csv writes one file per table "
             "into the folder -o names; --table NAME -o - writes one table to standard output)";
  } else if (std::filesystem::is_directory(st)) {
    return "cannot write " + kc::shownPath(output) + ": it is a folder (-o names the file to write)";
  }
  return {};
}

/// The options of `kcount export` as parsed, and its run.
struct ExportCommand {
  CLI::App* exp = nullptr;
  std::vector<std::string> paths;
  std::string format = "table";
  std::string output;
  std::string csv_table;
  bool salvage = false;
  long long exp_segment = -1;
  std::string from_text, to_text;
  double max_mb = kDefaultMaxTraceMb;
  bool force = false;

  void declare(CLI::App& app) {
    exp = app.add_subcommand("export", "logs as a Chrome trace (Perfetto), SQLite, CSV or JSON records");
    exp->add_option("logs", paths, "log files")->required();
    exp->add_option("--format", format, "chrome (trace JSON), sqlite, csv (a folder of files) or json")
        ->required()->check(CLI::IsMember({"chrome", "sqlite", "csv", "json"}));
    exp->add_option("-o,--output", output,
                    "output file (a folder for csv), replaced if it exists; - for standard output (chrome, json; csv "
                    "with --table)")
        ->required();
    exp->add_option("--table", csv_table,
                    "csv: only this table's file; with -o -, that table to standard output")
        ->check(CLI::IsMember(kc::csvTableNames()));
    exp->add_flag("--salvage", salvage, "export the intact part of a damaged log (exit 0 if any)");
    exp->add_option("--segment", exp_segment, "only capture window N (its Segment record's index; format 1.2)")
        ->check(kc::wholeNumber(0, UINT32_MAX));
    auto durationCheck = CLI::Validator(
        [](std::string& in) -> std::string {
          if (kc::parseDurationNs(in)) return std::string();
          if (kc::tooLargeDuration(in))
            return "Value " + in + " is " + std::string(kc::kDurationTooLarge);
          return "Value " + in + " is not a duration (2.5s, 300ms, 40us, 1200ns; a plain number is seconds)";
        },
        "TIME");
    exp->add_option("--from", from_text,
                    "only records that overlap the window from this time after the log's start (2.5s, 300ms, 40us, "
                    "1200ns; a plain number is seconds)")
        ->check(durationCheck);
    exp->add_option("--to", to_text, "end of that window, after the log's start (default: the end of the log)")
        ->check(durationCheck);
    exp->add_option("--max-mb", max_mb,
                    "chrome: refuse a trace estimated above this many MB (default 256; viewers of JSON traces fail "
                    "above a few hundred MB)")
        ->check(kc::positiveDecimal(1e9));
    exp->add_flag("--force", force, "chrome: write the trace whatever its estimated size");
  }

  int execute() {
    // --table picks one table of the CSV export: another format writes every table, as it would without it.
    if (format != "csv" && !csv_table.empty()) {
      std::cerr << "kcount: --table picks one table of --format csv: no effect with --format " << format << "\n";
      csv_table.clear();
    }
    // What -o names is checked before any log is read (usage errors, exit 2).
    std::string why = exportOutputError(format, output, csv_table);
    if (why.empty()) why = outputIsALog(output, paths, format, csv_table);
    if (!why.empty()) {
      std::cerr << "kcount: export: " << why << '\n';
      return 2;
    }
    auto logs = loadAll(paths, JoinOptions{});
    const int rc = selectLogs(logs, salvage);
    if (logs.empty()) return rc;
    printIntactIssues(logs);
    warnStates(logs);
    for (const auto& l : logs)
      if (l.data.summary_mode)
        throw std::runtime_error(kc::shownPath(l.path) + " is a summary-mode log (KCOUNT_MODE=summary): it holds per-range "
                                 "tallies, not individual launches, kernels or ranges, so there is nothing to "
                                 "export record by record; use kcount summary or kernels (--format json|csv), "
                                 "or record with KCOUNT_MODE=trace");
    // Narrowing: one capture window and/or a time window, for every format.
    const bool window = !from_text.empty() || !to_text.empty();
    for (auto& l : logs) {
      if (exp_segment >= 0) {
        const kc::SegmentBody* found = nullptr;
        for (const auto& sg : l.data.segments)
          if (sg.index == static_cast<uint64_t>(exp_segment)) found = &sg;
        if (found == nullptr) {
          std::cerr << "kcount: " << kc::shownPath(l.path) << ": " << noSegmentText(l.data, exp_segment) << "\n";
          return 2;
        }
        l.data = kc::selectSegment(l.data, static_cast<size_t>(found - l.data.segments.data()));
      }
      if (window) {
        const uint64_t start = logStartNs(l.data);
        const uint64_t from = from_text.empty() ? 0 : *kc::parseDurationNs(from_text);
        const uint64_t to = to_text.empty() ? UINT64_MAX - start : *kc::parseDurationNs(to_text);
        if (to < from) {
          std::cerr << "kcount: export: --to " << to_text << " is before --from " << from_text << '\n';
          return 2;
        }
        l.data = kc::selectTimeWindow(l.data, start + from, to > UINT64_MAX - start ? UINT64_MAX : start + to);
      }
      if ((window || exp_segment >= 0) && l.data.launches.empty() && l.data.kernels.empty() &&
          l.data.ranges.empty() && l.data.mem_ops.empty())
        std::cerr << "kcount: " << kc::shownPath(l.path) << ": warning: no record in the selected window; the output holds only "
                  << "the log's definitions\n";
    }
    // --max-mb and --force judge the Chrome trace's size; the other formats are written whatever their size.
    for (const char* o : {"--max-mb", "--force"})
      if (format != "chrome" && exp->get_option(o)->count() > 0)
        std::cerr << "kcount: " << o << " is for --format chrome (the size of the trace a browser opens): no "
                     "effect with --format "
                  << format << "\n";
    if (format == "chrome" && !force) {
      const kc::ChromeTraceEstimate est = kc::estimateChromeTrace(logs);
      const double mb = static_cast<double>(est.bytes) / 1e6;
      if (mb > max_mb) {
        std::cerr << fmt::format(
            "kcount: export: the Chrome trace would be about {:.1f} MB ({}), above --max-mb {:g}: "
            "chrome://tracing and the Perfetto UI fail to open JSON traces of a few hundred MB. Nothing was "
            "written. Narrow it with --from/--to TIME (time after the log's start; {}),{} or export "
            "--format sqlite for SQL queries; --force writes it anyway\n",
            mb, kc::counted(est.events, "event"), max_mb, spanText(logs), segmentsText(logs));
        return 2;
      }
    }
    writeOutput(logs);
    // What was written, one line per file (nothing for standard output): its size on disk.
    if (output != "-") {
      std::vector<std::string> files;
      if (format == "csv")
        for (const std::string& t : csv_table.empty() ? kc::csvTableNames() : std::vector<std::string>{csv_table})
          files.push_back((std::filesystem::path(output) / (t + ".csv")).string());
      else
        files.push_back(output);
      for (const std::string& f : files) {
        std::error_code ec;
        const auto bytes = std::filesystem::file_size(f, ec);
        const std::optional<uint64_t> rows = format == "csv" ? csvRows(f) : std::nullopt;
        std::cerr << "kcount export: wrote " << kc::shownPath(f) << " ("
                  << (rows ? kc::counted(*rows, "row") + ", " : std::string())
                  << (ec ? std::string("size unknown: ") + ec.message() : kc::counted(bytes, "byte")) << ", " << format
                  << ")\n";
      }
    }
    return rc;
  }

  /// Writes `logs` in the format asked to the output asked.
  void writeOutput(const std::vector<kc::LoadedLog>& logs) {
    if (format == "sqlite") {
      kc::writeSqlite(output, logs);
    } else if (format == "csv") {
      if (output == "-") kc::writeCsvTable(std::cout, csv_table, logs);
      else kc::writeCsv(output, logs, csv_table);
    } else if (output == "-") {
      if (format == "chrome") kc::writeChromeTrace(std::cout, logs);
      else kc::writeJsonRecords(std::cout, logs);
    } else {
      std::ofstream out = openOutput(output);
      if (format == "chrome") kc::writeChromeTrace(out, logs);
      else kc::writeJsonRecords(out, logs);
      closeOutput(out, output);
    }
  }
};

}  // namespace

Command exportSubcommand(CLI::App& app) {
  auto c = std::make_shared<ExportCommand>();
  c->declare(app);
  return {c->exp, {&c->paths}, nullptr, nullptr, [c] { return c->execute(); }};
}

}  // namespace kc
