// One kcount subcommand: its CLI11 options, declared by its own file (tools/cmd_NAME.cpp), and how it
// runs. tools/kcount.cpp builds the command line from tools/commands.def and dispatches to the one given.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kc {

/// A subcommand, as its add function (`Command NAMESubcommand(CLI::App& app)`, listed in tools/commands.def)
/// returns it after adding `app`'s subcommand and its options, whose values the functions below read.
/// Used from the main thread only.
struct Command {
  CLI::App* app = nullptr;  ///< the subcommand (owned by the top-level CLI::App)
  /// Lists of log paths the command reads: each path is looked up after parsing, before run(), and a
  /// missing one is a usage error (exit 2) named as such, so that --help wins over a bad path.
  std::vector<const std::vector<std::string>*> log_paths;
  /// Called with the whole command line before parsing when this command is argv[1]; may shorten argc
  /// (`kcount run ... -- COMMAND`: what follows "--" is kept by the command, unparsed). Optional.
  std::function<void(int& argc, char** argv)> before_parse;
  /// A usage check after parsing and before the log paths are looked up: an exit status, 0 to go on.
  /// Optional.
  std::function<int()> check_usage;
  /// Runs the parsed command; returns its exit status. An exception is reported as "kcount: WHAT" (exit 2).
  std::function<int()> run;
};

/// Widest `--width` accepted (display columns).
inline constexpr long long kMaxWidth = 100000;
/// --help of summary's, kernels', check's and diff's --width.
inline constexpr const char* kWidthHelp =
    "display columns every line of the text output fits: names shortened, then whole columns left out (the "
    "least important first, named above the table; numbers are never cut), other long lines wrapped; 0: no "
    "limit, every column; at least 60 otherwise. Default: the terminal's width when output is a terminal, else "
    "no limit (output to a file or pipe is never fitted unless --width is given)";

/// Adds `--width` (kWidthHelp; 0 or kMinWidth to kMaxWidth) to `cmd`, into `width`.
void addWidthOption(CLI::App* cmd, long long& width);

/// Runs `print` on standard output; with `width` > 0, every line it prints longer than `width` display
/// columns wrapped with a hanging indent (wrapText(): the tables fit already, so this reaches the other
/// lines: headers, notes, footers).
void printFitted(size_t width, const std::function<void(std::ostream&)>& print);

/// Display columns the text tables fit: --width when given (`given` >= 0; 0: no limit), else
/// kc::terminalWidth() (0, no limit, when standard output is not a terminal).
size_t tableWidth(long long given);

/// Says on stderr that `cmd`'s --width, when given, does nothing with a `format` other than table (CSV and
/// JSON keep names whole) nor with --full-names (nothing is shortened), and that --full-names does nothing
/// where names are always whole (JSON; diff's CSV). Notes only: the command goes on (exit status unchanged).
void noteWidthUnused(const CLI::App* cmd, const std::string& format);

}  // namespace kc
