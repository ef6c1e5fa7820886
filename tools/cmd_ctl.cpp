// `kcount ctl`: controls a running process through its control socket (tools/ctl.h).
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "tools/cli_checks.h"
#include "tools/command.h"
#include "tools/ctl.h"

namespace kc {
namespace {

constexpr long long kMaxOccurrences = 1000000000000LL;  // ctl --count/--skip: 10^12 range occurrences

/// The options of `kcount ctl` as parsed, and its run.
struct CtlCommand {
  CLI::App* ctl = nullptr;
  CtlOptions ctl_opt;

  void declare(CLI::App& app) {
    ctl = app.add_subcommand("ctl", "control a running process: start, stop, status, flush");
    ctl->add_option("args", ctl_opt.args, "PID COMMAND, or COMMAND with --all");  // counted by runCtl (its usage line)
    ctl->add_flag("--all", ctl_opt.all, "every process of yours with a control socket (root: everyone's)");
    ctl->add_option("--duration", ctl_opt.duration, "start: stop by itself after this long (10s, 500ms, 2m)");
    ctl->add_option("--range", ctl_opt.range, "start: record occurrences of this NVTX range only");
    ctl->add_option("--count", ctl_opt.count, "with --range: occurrences recorded (default 1)")
        ->check(kc::wholeNumber(1, kMaxOccurrences));
    ctl->add_option("--skip", ctl_opt.skip, "with --range: occurrences passed over first (default 0)")
        ->check(kc::wholeNumber(0, kMaxOccurrences));
    ctl->add_option("--format", ctl_opt.format, "text or json")->check(CLI::IsMember({"text", "json"}));
    ctl->add_option("--timeout", ctl_opt.timeout_s, "seconds to wait for the answer (default 30)")
        ->check(kc::positiveDecimal(86400));
  }

  int execute() {
    ctl_opt.range_given = ctl->count("--range") > 0;
    return kc::runCtl(ctl_opt);
  }
};

}  // namespace

Command ctlSubcommand(CLI::App& app) {
  auto c = std::make_shared<CtlCommand>();
  c->declare(app);
  return {c->ctl, {}, nullptr, nullptr, [c] { return c->execute(); }};
}

}  // namespace kc
