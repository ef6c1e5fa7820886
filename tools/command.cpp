// What the subcommands share when declaring their options (tools/command.h).
#include "tools/command.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

#include "tools/cli_checks.h"
#include "tools/table_width.h"

namespace kc {

void addWidthOption(CLI::App* cmd, long long& width) {
  cmd->add_option("--width", width, kWidthHelp)->check(widthNumber(static_cast<long long>(kMinWidth), kMaxWidth));
}

void printFitted(size_t width, const std::function<void(std::ostream&)>& print) {
  if (width == 0) {
    print(std::cout);
    return;
  }
  std::ostringstream text;
  print(text);
  std::cout << wrapText(text.str(), width);
}

size_t tableWidth(long long given) { return given >= 0 ? static_cast<size_t>(given) : kc::terminalWidth(); }

void noteWidthUnused(const CLI::App* cmd, const std::string& format) {
  if (format != "table" && cmd->get_option("--width")->count() > 0)
    std::cerr << "kcount: --width fits the lines of the table format: no effect with --format " << format << "\n";
  // --full-names shows names whole: there is nothing left to fit.
  else if (cmd->get_option("--width")->count() > 0 && cmd->get_option("--full-names")->count() > 0)
    std::cerr << "kcount: --width fits names to the line by shortening them: no effect with --full-names (names "
                 "are shown whole)\n";
  // --full-names names kernels (and ranges) whole in the table, and in the CSV of summary (its top-kernels
  // column) and kernels (its kernel column); JSON always gives names whole, diff's CSV too.
  const bool csv_uses = cmd->get_name() != "diff";
  if (cmd->get_option("--full-names")->count() > 0 && (format == "json" || (format == "csv" && !csv_uses)))
    std::cerr << "kcount: --full-names shows whole names in the table format" << (csv_uses ? " and CSV" : "")
              << ": no effect with --format " << format << " (its names are whole)\n";
}

}  // namespace kc
