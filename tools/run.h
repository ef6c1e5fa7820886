// `kcount run`: runs a command with libkcount.so injected and reports the logs it wrote.
#pragma once

#include <istream>
#include <string>
#include <utility>
#include <vector>

namespace kc {

struct RunOptions {
  std::string output;            // KCOUNT_OUTPUT for the child; empty: leave the library's default
  std::string inject = "preload";  // "preload" (LD_PRELOAD) or "cuda" (CUDA/NVTX injection variables)
  std::string lib;               // path of libkcount.so; empty: look beside the kcount binary
  bool torch_modules = false;    // --torch-modules: KCOUNT_TORCH_MODULES=1 and the Python helper on PYTHONPATH
  bool torch_backward = false;   // --torch-backward: KCOUNT_TORCH_BACKWARD=1 (implies modules)
  bool torch_ops = false;        // --torch-ops: KCOUNT_TORCH_OPS=1
  std::vector<std::string> command;
  bool paused = false;           // --paused: KCOUNT_START=paused for the child
};

/// Finds libkcount.so: explicit path, else <dir of kcount>/../lib/libkcount.so, else <dir>/libkcount.so.
/// Returns "" if none exists.
std::string findInjectionLibrary(const std::string& explicit_path);

/// Why the file at `path` cannot be injected as a library, from its ELF header: "cannot be read: ...",
/// "not an ELF shared object (...)", "not a 64-bit ELF file ...", "an ELF file, but not a shared object
/// (e_type N, not ET_DYN)", "a program (a position-independent executable ...)"; "" for a 64-bit ELF
/// shared object (type ET_DYN without a PT_INTERP program header). Reads the ELF and program headers.
std::string notSharedObject(const std::string& path);

/// Finds the Python helper folder (the one holding kcount's sitecustomize.py): <folder of `lib`>/../share/
/// kcount/python, else <folder of kcount>/../share/kcount/python. Returns "" if none exists.
std::string findTorchHelper(const std::string& lib);

/// Runs the command (fork + execvp, no shell), forwarding SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and
/// SIGUSR2 sent by other processes; the command gets SIGTERM if kcount run dies (PR_SET_PDEATHSIG).
/// Returns the exit code to use: the child's, or 128 + signal; 127 for a command not found and 126 for
/// one that cannot be executed (as a shell), with a message. Prints "kcount: log: PATH" to stderr for each
/// log written, or one "kcount: no log written: REASON" line (noLogReason).
int runCommand(const RunOptions& opt);

/// What the processes of a `kcount run` wrote to its KCOUNT_RUN_REPORT file. Each line is a log path
/// (collector/file_sink.h, through the session), or a note starting with kFileSinkNote (a NUL byte, which
/// no path holds): "loaded PID preload|injection" from the library's constructor (inject/preload.cpp),
/// "disabled PID REASON" when kcount turned itself off in a process (KCOUNT_DISABLE, a CUPTI failure),
/// "unwritten PID REASON" when a process's session ended with nothing to write (a capture range that
/// never came, a paused start nobody started; inject/session.cpp), or the reason a log could not be
/// created (FileSink). Also "exec PID kept|cleared PATH" before an exec from a preloaded process (kept:
/// the new environment's LD_PRELOAD still names the library), "execfail PID" when that exec failed, both
/// from inject/preload.cpp, and "notrun PID TEXT" from a nested `kcount run` (PID) whose command could not
/// be run (TEXT: "CMD: command not found"). A nested `kcount run` appends its own report's lines to the
/// outer one's.
struct RunReport {
  /// An exec after which the new image did not load the library (no "loaded" note from its pid).
  struct Exec {
    int pid = 0;
    bool cleared = false;  // the new environment's LD_PRELOAD did not name the library
    std::string path;      // the program, as given to exec
  };
  std::vector<std::string> logs;      // distinct paths, in order
  std::vector<std::string> failures;  // distinct reasons a log could not be created
  std::vector<int> preloaded_pids;    // processes that loaded the library through LD_PRELOAD
  std::vector<int> injected_pids;     // processes in which CUDA or NVTX loaded it (injection variables)
  std::vector<std::pair<int, std::string>> disabled;   // (pid, why kcount was turned off there)
  std::vector<std::pair<int, std::string>> unwritten;  // (pid, why its session wrote nothing)
  std::vector<Exec> unloaded_execs;                    // execs whose new image did not load the library
  std::vector<std::pair<int, std::string>> not_run;    // (pid of a nested kcount run, why its command did not run)
  std::vector<int> torch_helper_pids;  // Python processes that started the --torch-modules/--torch-ops helper
  std::vector<int> idle_pids;          // preloaded processes that ended without a CUDA or NVTX call
  std::vector<std::pair<int, std::string>> write_failures;  // (pid, strerror text) of a failed log write
};
RunReport readRunReport(std::istream& in);

/// Removes the run reports (`kcount-run.PID.XXXXXX`, regular files of this user) in `folder` whose
/// `kcount run` process PID no longer exists: those of runs killed before they could remove their own
/// (SIGKILL, the OOM killer). A report whose PID is alive (its run, or an unrelated process that reused
/// the PID) is kept. Called by runCommand() before it creates its own. Never throws; errors are ignored.
void removeStaleRunReports(const std::string& folder) noexcept;

/// How the command ended, for noLogReason().
struct RunEnd {
  std::string inject = "preload";  // RunOptions::inject
  bool paused = false;             // started with KCOUNT_START=paused
  std::string control;             // KCOUNT_CONTROL as the command got it ("" if unset)
  int signal = 0;                  // signal that ended the command, 0 if it exited
  std::string lib;                 // the library given with --lib ("" when kcount found its own)
};

/// The line `kcount run` prints when no log was written (without the "kcount: " prefix): the log could
/// not be created, a nested `kcount run` could not run its command, kcount was disabled, the library was
/// never loaded (at all, or by a program exec()ed without it), the processes' own reasons
/// (capture range never pushed, never started from paused, nothing recorded), the command stayed
/// paused, it was killed, it left through _exit() after CUDA/NVTX loaded the library, or it recorded
/// nothing.
std::string noLogReason(const RunReport& rep, const RunEnd& end);

/// The line `kcount run` prints after `kcount: log: PATH` when the command was killed by `signal` (one the
/// library does not handle: SIGKILL, SIGHUP, ...) and the log at `path` has no End record (without the
/// "kcount: " prefix): "log incomplete: PATH has no end record: the command was killed by signal 9
/// (Killed) before kcount could close it; kcount summary reads it ..." (`--salvage` when its tail is
/// cut). A summary-mode log says instead that only the snapshots written before the kill (every
/// KCOUNT_INTERVAL) can be read, or that none was written. "" for a complete log, a rotated part closed for rotation, or a file that is not a log. Reads the
/// whole file (records not kept).
std::string incompleteLogNote(const std::string& path, int signal);

/// Why a log path (KCOUNT_OUTPUT / `run --output`) must not be used: "kcount's standard output" or
/// "... error" when it names the same file as kcount's fd 1 or 2 (/dev/stdout, /dev/fd/1, a tty or pipe
/// kcount writes to), "the terminal" for /dev/tty or the terminal of stdin; "" otherwise (a file, a
/// directory, a path that does not exist yet, /dev/null). Reads file status only (stat, fstat).
std::string outputIsTerminalOrStdout(const std::string& path);

}  // namespace kc
