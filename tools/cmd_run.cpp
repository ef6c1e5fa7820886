// `kcount run`: runs a command with libkcount.so injected (tools/run.h).
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include <string_view>

#include "tools/command.h"
#include "tools/run.h"

namespace kc {
namespace {

/// The options of `kcount run` as parsed, and its run.
struct RunCommand {
  CLI::App* run = nullptr;
  RunOptions run_opt;
  // `kcount run [OPTIONS] -- COMMAND ARGS`: everything after run's "--" is the command, unchanged; CLI11
  // sees only what comes before it. Without "--", run's prefix command takes everything from the first
  // argument that is not one of run's options (run->remaining()).
  std::vector<std::string> after_dashes;
  bool had_dashes = false;

  void declare(CLI::App& app) {
    run = app.add_subcommand("run", "run a command with libkcount.so injected");
    run->add_option("--output", run_opt.output, "log path pattern (%h host, %p pid, %r rank) or directory");
    run->add_option("--inject", run_opt.inject, "preload (LD_PRELOAD) or cuda (CUDA_INJECTION64_PATH)")
        ->check(CLI::IsMember({"preload", "cuda"}));
    run->add_option("--lib", run_opt.lib, "path of libkcount.so");
    run->add_flag("--torch-modules", run_opt.torch_modules,
                  "PyTorch: one NVTX range per nn.Module call, named by its qualified name (docs/torch-modules.md)");
    run->add_flag("--torch-backward", run_opt.torch_backward,
                  "PyTorch: also one range per module backward (implies --torch-modules)");
    run->add_flag("--torch-ops", run_opt.torch_ops, "PyTorch: one NVTX range per aten op (PyTorch's emit_nvtx)");
    // Everything from the first argument that is not one of run's options on (or after "--") is the
    // command, passed on unchanged in order: CLI11's prefix command puts it into run->remaining().
    run->prefix_command();
    run->footer("COMMAND [ARGS...]: the program to run, e.g. kcount run -- python3 train.py --steps 20");
    run->add_flag("--paused", run_opt.paused, "start with recording paused (KCOUNT_START=paused): kcount ctl starts it");
  }

  /// Keeps what follows "--" on the command line (`kcount run [OPTIONS] -- COMMAND ARGS`) as the command,
  /// out of CLI11's sight (argc is cut there).
  void takeCommand(int& argc, char** argv) {
    for (int i = 2; i < argc; ++i) {
      const std::string_view a(argv[i]);
      if (a == "--") {
        had_dashes = true;
        after_dashes.assign(argv + i + 1, argv + argc);
        argc = i;
        break;
      }
      if (!a.starts_with("-")) break;  // the command starts here (no "--")
      if (a == "--output" || a == "--inject" || a == "--lib") ++i;  // the option's value
    }
  }

  int execute() {
    const std::vector<std::string> rest = run->remaining();
    if ((had_dashes && !rest.empty()) || (!had_dashes && !rest.empty() && rest.front().starts_with("-"))) {
      std::cerr << "kcount run: unknown option " << rest.front() << " (see kcount run --help)\n";
      return 2;
    }
    run_opt.command = had_dashes ? after_dashes : rest;
    if (run_opt.command.empty()) {
      std::cerr << "kcount run: no command given (kcount run [OPTIONS] -- COMMAND [ARGS...])\n";
      return 2;
    }
    return kc::runCommand(run_opt);
  }
};

}  // namespace

Command runSubcommand(CLI::App& app) {
  auto c = std::make_shared<RunCommand>();
  c->declare(app);
  return {c->run, {}, [c](int& argc, char** argv) { c->takeCommand(argc, argv); }, nullptr, [c] { return c->execute(); }};
}

}  // namespace kc
