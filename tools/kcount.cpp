// kcount command line: the global options, `kcount help` and the dispatch to the subcommand given. Each
// subcommand declares its own options and runs itself (tools/cmd_NAME.cpp); tools/commands.def lists them.
// See docs/usage.md.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "collector/parse.h"
#include "collector/shown_value.h"
#include "tools/command.h"
#include "tools/output_file.h"

namespace kc {
#define KC_COMMAND(name) Command name##Subcommand(CLI::App& app);
#include "tools/commands.def"
#undef KC_COMMAND
}  // namespace kc

namespace {

/// The subcommands' add functions, in the order `kcount --help` lists them.
using AddSubcommand = kc::Command (*)(CLI::App&);
constexpr AddSubcommand kSubcommands[] = {
#define KC_COMMAND(name) kc::name##Subcommand,
#include "tools/commands.def"
#undef KC_COMMAND
};

/// The command a mistyped one most likely meant: the only command it abbreviates ("su": summary), else
/// the nearest within 2 edits (collector/parse.h nameDistance); "" if none.
std::string closestCommand(const CLI::App& app, std::string_view given) {
  std::string closest;
  size_t closest_d = 3;
  size_t prefix_of = 0;
  std::string prefixed;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name().starts_with(given)) {
      ++prefix_of;
      prefixed = sub->get_name();
    }
    if (const size_t d = kc::nameDistance(given, sub->get_name(), 2); d < closest_d) {
      closest_d = d;
      closest = sub->get_name();
    }
  }
  return prefix_of == 1 ? prefixed : closest;
}

/// `kcount help [COMMAND]`: what `kcount [COMMAND] --help` prints (exit 0; an unknown COMMAND: exit 2).
/// `command_names`: "summary, kernels, ...".
int answerHelp(const CLI::App& app, int argc, char** argv, const std::string& command_names) {
  if (argc > 2 && argv[2][0] == '-') argc = 2;  // kcount help --help: the overall help
  if (argc > 3) {
    std::cerr << "kcount help: unexpected argument '" << argv[3] << "' (kcount help [COMMAND]: one command)\n";
    return 2;
  }
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands({}))
    if (argc > 2 && s->get_name() == argv[2]) sub = s;
  if (argc > 2 && sub == nullptr) {
    const std::string closest = closestCommand(app, argv[2]);
    std::cerr << "kcount help: unknown command '" << argv[2] << "'"
              << (closest.empty() ? std::string() : " (did you mean '" + closest + "'?)") << " (commands: "
              << command_names << ")\n";
    return 2;
  }
  std::cout << (sub != nullptr ? sub->help("kcount") : app.help());
  return 0;
}

/// Splits CLI11's list of arguments ("a b c") at spaces.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  for (size_t at = 0; at < s.size();) {
    const size_t end = std::min(s.find(' ', at), s.size());
    if (end > at) out.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

/// 'a', 'b' and 'c'.
std::string quotedList(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + ("'" + v[i] + "'");
  return out;
}

/// CLI11's message for a usage error in kcount's words: an unknown option or an unexpected argument named
/// as such, a missing value or a value not among the choices said plainly; any other message as CLI11 words
/// it, its first letter in lower case.
std::string usageMessage(const CLI::ParseError& e, int argc, char** argv) {
  const std::string what = e.what();
  auto starts = [&](std::string_view p) { return what.starts_with(p); };
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    // "The following argument(s) was/were not expected: A B"
    const size_t colon = what.find(": ");
    if (colon != std::string::npos) {
      // In command-line order (CLI11 lists them in either order, depending on where it found them).
      std::vector<std::string> given = words(what.substr(colon + 2));
      auto at = [&](const std::string& w) { return std::find(argv, argv + argc, w) - argv; };
      std::stable_sort(given.begin(), given.end(), [&](const auto& a, const auto& b) { return at(a) < at(b); });
      std::vector<std::string> options, others;
      for (std::string& w : given)
        (w.size() > 1 && w[0] == '-' ? options : others).push_back(std::move(w));
      std::string out;
      if (!options.empty()) out += (options.size() > 1 ? "unknown options " : "unknown option ") + quotedList(options);
      if (!others.empty())
        out += (out.empty() ? "" : "; ") + std::string(others.size() > 1 ? "unexpected arguments " : "unexpected argument ") +
               quotedList(others);
      if (!out.empty()) return out;
    }
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // "--format: 1 required TEXT missing"
    const size_t colon = what.find(": ");
    if (colon != std::string::npos && what.ends_with(" missing") && what.find(" required ", colon) != std::string::npos) {
      const std::string n = what.substr(colon + 2, what.find(' ', colon + 2) - colon - 2);
      return what.substr(0, colon) + " needs " + (n == "1" ? std::string("a value") : n + " values");
    }
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    // IsMember's "--format: xml not in {table,csv,json}"
    const size_t colon = what.find(": "), not_in = what.rfind(" not in {");
    if (colon != std::string::npos && not_in != std::string::npos && not_in > colon && what.ends_with("}")) {
      std::vector<std::string> choices;
      const std::string set = what.substr(not_in + 9, what.size() - not_in - 10);
      for (size_t at = 0; at <= set.size();) {
        const size_t end = std::min(set.find(',', at), set.size());
        choices.push_back(set.substr(at, end - at));
        at = end + 1;
      }
      std::string list;
      for (size_t i = 0; i < choices.size(); ++i)
        list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
      return what.substr(0, colon) + ": '" + what.substr(colon + 2, not_in - colon - 2) + "' is not " + list;
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && starts("logs is required")) return "no log file given";
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && starts("A subcommand")) return "no command given";
  std::string out = what;
  if (!out.empty() && out[0] >= 'A' && out[0] <= 'Z' && !(out.size() > 1 && out[1] >= 'A' && out[1] <= 'Z'))
    out[0] = static_cast<char>(out[0] - 'A' + 'a');
  return out;
}

/// A usage error from CLI11's parser, said and given its exit status: 0 for --help and --version, else 2.
/// Said as kcount's own messages are: "kcount summary: unknown option '--foo' (kcount summary --help)".
int usageError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv, const std::string& command_names) {
  // An unknown command: named, with the commands there are (CLI11 says only "A subcommand is required").
  if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
    const std::string closest = closestCommand(app, argv[1]);
    std::cerr << "kcount: unknown command '" << argv[1] << "'"
              << (closest.empty() ? std::string() : " (did you mean '" + closest + "'?)") << " (commands: "
              << command_names << "; kcount --help says more)\n";
    return 2;
  }
  // --help and --version exit 0; every usage error exits 2, as documented (CLI11's own codes vary).
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  // The command the error is in: the one parsed (CLI11 marks it before reading its options), else none.
  std::string who = "kcount";
  for (const CLI::App* sub : app.get_subcommands()) who += " " + sub->get_name();
  std::cerr << who << ": " << usageMessage(e, argc, argv) << " (" << who << " --help)\n";
  // A file whose name starts with '-' is read as an option (its letters as short flags): say how to
  // name it.
  for (int i = 2; i < argc; ++i) {
    const std::string a(argv[i]);
    if (a == "--") break;
    std::error_code ec;
    if (a.size() > 1 && a[0] == '-' && std::filesystem::exists(a, ec))
      std::cerr << "kcount: \"" << a << "\" is a file, but a name starting with '-' is read as an option: put "
                << "file names after \"--\" (kcount " << argv[1] << " [OPTIONS] -- \"" << a
                << "\") or write it as \"./" << a << "\"\n";
  }
  return 2;
}

/// Log paths are checked after parsing, not by the parser: `--help` then wins over a bad path, and the
/// message names the path the way the rest of kcount does. Says each path of `command` that does not exist
/// on stderr; returns how many.
int missingLogs(const kc::Command& command) {
  int missing = 0;
  for (const std::vector<std::string>* list : command.log_paths)
    for (const std::string& p : *list) {
      std::error_code ec;
      if (std::filesystem::exists(p, ec)) continue;
      ++missing;
      // exists() is false for a path it could not look up too (a name too long, a folder not searchable,
      // a loop of links): the reason is said then, not "no such file".
      if (ec && ec != std::errc::no_such_file_or_directory) {
        std::cerr << "kcount: " << kc::shownPath(p) << ": cannot look it up: " << ec.message() << '\n';
        continue;
      }
      const bool format_word = p == "csv" || p == "json" || p == "sqlite" || p == "chrome" || p == "table";
      std::cerr << "kcount: " << kc::shownPath(p) << ": no such file"
                << (format_word ? " (a format is an option: --format " + p + ")"
                    : p == "-" ? " (logs are read from files, not from standard input: save it to a file first; "
                                 "./- names a file called -)"
                               : "")
                << '\n';
    }
  return missing;
}

}  // namespace

int kcountMain(int argc, char** argv) {
  CLI::App app{"kcount: kernel launches, GPU kernels and their time per NVTX range"};
  app.set_version_flag("--version", std::string(KCOUNT_VERSION));
  app.require_subcommand(1);
  std::vector<kc::Command> commands;
  for (const AddSubcommand add : kSubcommands) commands.push_back(add(app));

  // `kcount help [COMMAND]` is answered before parsing (below); the subcommand lists it with the others.
  std::string help_command;
  auto* help = app.add_subcommand("help", "this help, or one command's: kcount help COMMAND");
  help->add_option("command", help_command, "the command whose help is printed");
  app.name("kcount");
  // The command names, "summary, kernels, ...", as `kcount --help` lists them: the one list every message
  // naming the commands uses.
  std::string command_names;
  for (const CLI::App* s : app.get_subcommands({}))
    command_names += (command_names.empty() ? "" : ", ") + s->get_name();

  if (argc < 2) {
    // No command: the usage and the commands there are (a usage error, exit 2).
    std::cerr << "kcount: no command given\n" << app.help();
    return 2;
  }
  for (const kc::Command& c : commands)
    if (c.before_parse && c.app->get_name() == argv[1]) c.before_parse(argc, argv);
  if (argc > 1 && std::string_view(argv[1]) == "help" &&
      (argc == 2 || std::string_view(argv[2]) == "--help" || std::string_view(argv[2]) == "-h" ||
       argv[2][0] != '-'))
    return answerHelp(app, argc, argv, command_names);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return usageError(app, e, argc, argv, command_names);
  }
  for (const kc::Command& c : commands) {
    if (!*c.app) continue;
    if (c.check_usage)
      if (const int rc = c.check_usage(); rc != 0) return rc;
    if (missingLogs(c) > 0) return 2;
    try {
      return c.run();
    } catch (const std::exception& e) {
      std::cerr << "kcount: " << e.what() << '\n';
      return 2;
    }
  }
  return 0;  // `kcount help` given with what CLI11 parses itself
}

int main(int argc, char** argv) {
  const int rc = kcountMain(argc, argv);
  // A table or JSON that could not be written (a full disk, a closed pipe, /dev/full) is an error, not
  // a silent success.
  const int e = kc::finishStream(std::cout, [](std::ostream& o) { o.flush(); });
  // A reader that closed the pipe early (`kcount summary LOG | head`) is not an error.
  if (!std::cout && e != EPIPE) {
    std::cerr << "kcount: cannot write to standard output" << (e != 0 ? std::string(": ") + std::strerror(e) : "")
              << '\n';
    return rc != 0 ? rc : 2;
  }
  return rc;
}
