// FileSink on paths that are not regular files (/dev/null, a fifo), and its cap warning; kcount run's
// report of the logs its command wrote and of why none was (tools/run.h).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "collector/file_sink.h"
#include "collector/shown_value.h"
#include "tools/run.h"

namespace {
struct Collected {
  std::vector<std::string> warnings, opened;
  kc::FileSink::Warn warn() {
    return [this](const std::string& m) { warnings.push_back(m); };
  }
  kc::FileSink::Opened onOpen() {
    return [this](const std::string& p) { opened.push_back(p); };
  }
};

std::string tempDir() {
  char dir[] = "/tmp/kcount-sink-test.XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  return dir;
}
}  // namespace

TEST_CASE("a write that fails part way (a full disk) cuts the file back to its last whole chunk") {
  // RLIMIT_FSIZE stands in for a full disk: the second 3,000-byte chunk is written 2,000 bytes, then the
  // write fails (EFBIG). In a child process, whose limit does not touch the test's.
  const std::string path = tempDir() + "/full.kcount";
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    struct rlimit limit {5000, 5000};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(10);
    std::signal(SIGXFSZ, SIG_IGN);
    Collected c;
    kc::FileSink sink(path, 0600, 0, c.warn());
    std::vector<char> chunk(3000, 'x');
    if (!sink.write(chunk.data(), chunk.size())) _exit(11);
    if (sink.write(chunk.data(), chunk.size())) _exit(12);
    if (c.warnings.size() != 1 || c.warnings[0].find("the file is cut back to its last whole chunk") == std::string::npos)
      _exit(13);
    _exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK(st.st_size == 3000);  // not 5,000: no half chunk at the end
}

TEST_CASE("a character device is written as it is: no .1 file beside it, no rotation") {
  Collected c;
  {
    kc::FileSink sink("/dev/null", 0600, 8192, c.warn(), 8, c.onOpen());
    std::vector<char> chunk(3000, 'x');
    CHECK(sink.write(chunk.data(), chunk.size()));
    CHECK_FALSE(sink.canRotate());
    CHECK_FALSE(sink.rotate());
    CHECK(sink.path() == "/dev/null");
    CHECK(sink.files() == std::vector<std::string>{"/dev/null"});
  }
  struct stat st {};
  CHECK(::stat("/dev/null.1", &st) != 0);
  CHECK(c.warnings.empty());
  CHECK(c.opened == std::vector<std::string>{"/dev/null"});
}

TEST_CASE("a fifo with a reader is written; without one the log is refused at once, nothing created") {
  const std::string dir = tempDir();
  const std::string fifo = dir + "/log.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  {
    Collected c;
    kc::FileSink sink(fifo, 0600, 0, c.warn(), 8, c.onOpen());
    CHECK_FALSE(sink.write("abc", 3));  // no reader: not blocked
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0].find("a fifo with no reader") != std::string::npos);
    REQUIRE(c.opened.size() == 1);
    CHECK(c.opened[0][0] == kc::kFileSinkNote);  // the failure is reported, not a path
  }
  {
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader >= 0);
    Collected c;
    kc::FileSink sink(fifo, 0600, 0, c.warn(), 8, c.onOpen());
    CHECK(sink.write("abc", 3));
    char buf[8] = {};
    CHECK(::read(reader, buf, sizeof(buf)) == 3);
    CHECK(std::string(buf) == "abc");
    ::close(reader);
  }
  struct stat st {};
  CHECK(::stat((fifo + ".1").c_str(), &st) != 0);
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("a symbolic link at the log's name is never written through: refused with one message") {
  const std::string dir = tempDir();
  const std::string fifo = dir + "/other.fifo", target = dir + "/target.kcount";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // a reader: the fifo would take the log
  REQUIRE(reader >= 0);
  {
    const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  struct Case {
    const char* name;
    std::string to;
  };
  // To a device, to a fifo with a reader, to a regular file, and dangling (to a file that does not exist).
  for (const Case& k : {Case{"null", "/dev/null"}, Case{"fifo", fifo}, Case{"file", target},
                        Case{"dangling", dir + "/nothing.kcount"}}) {
    CAPTURE(k.name);
    const std::string link = dir + "/" + k.name + ".kcount";
    REQUIRE(::symlink(k.to.c_str(), link.c_str()) == 0);
    Collected c;
    {
      kc::FileSink sink(link, 0600, 0, c.warn(), 1, c.onOpen());
      CHECK_FALSE(sink.write("abc", 3));
      CHECK_FALSE(sink.write("abc", 3));  // still refused, no second message
      CHECK(sink.path().empty());
      CHECK(sink.files().empty());
    }
    REQUIRE(c.warnings.size() == 1);
    CHECK(c.warnings[0].find("the log path " + link + " is a symbolic link (to " + k.to + ")") != std::string::npos);
    REQUIRE(c.opened.size() == 1);
    CHECK(c.opened[0][0] == kc::kFileSinkNote);
    struct stat st {};
    CHECK(::stat((dir + "/" + k.name + "-1.kcount").c_str(), &st) != 0);  // no other name tried
    CHECK(::stat((dir + "/nothing.kcount").c_str(), &st) != 0);          // nothing created at the target
    ::unlink(link.c_str());
  }
  char buf[8];
  CHECK(::read(reader, buf, sizeof(buf)) <= 0);  // nothing reached the fifo
  struct stat st {};
  REQUIRE(::stat(target.c_str(), &st) == 0);
  CHECK(st.st_size == 0);  // nor the file
  ::close(reader);

  // With a handler (the library's: it disables itself), the handler gets the one message instead.
  const std::string link = dir + "/handled.kcount";
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  Collected c;
  std::vector<std::string> refused;
  {
    kc::FileSink sink(link, 0600, 0, c.warn(), 1, c.onOpen());
    sink.setLinkRefused([&refused](const std::string& m) { refused.push_back(m); });
    CHECK_FALSE(sink.write("abc", 3));
    CHECK_FALSE(sink.write("abc", 3));
  }
  CHECK(refused.size() == 1);
  CHECK(c.warnings.empty());
  CHECK(c.opened.empty());
  for (const std::string& f : {link, target, fifo}) ::unlink(f.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("a symbolic link at a duplicate or rotated name is refused too") {
  const std::string dir = tempDir();
  const std::string taken = dir + "/x.kcount", dup = dir + "/x-1.kcount", target = dir + "/t";
  {
    const int fd = ::open(taken.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
  }
  REQUIRE(::symlink(target.c_str(), dup.c_str()) == 0);
  Collected c;
  {
    kc::FileSink sink(taken, 0600, 0, c.warn(), 1, c.onOpen());
    CHECK_FALSE(sink.write("abc", 3));
  }
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("the log path " + dup + " is a symbolic link") != std::string::npos);
  struct stat st {};
  CHECK(::stat((dir + "/x-2.kcount").c_str(), &st) != 0);
  CHECK(::stat(target.c_str(), &st) != 0);

  const std::string rotated_link = dir + "/r.1.kcount";
  REQUIRE(::symlink(target.c_str(), rotated_link.c_str()) == 0);
  Collected r;
  std::vector<std::string> refused;
  {
    kc::FileSink sink(dir + "/r.kcount", 0600, 100, r.warn(), 3, r.onOpen());
    sink.setLinkRefused([&refused](const std::string& m) { refused.push_back(m); });  // first file only
    CHECK(sink.write("abc", 3));
    REQUIRE(sink.rotate());
    CHECK_FALSE(sink.write("abc", 3));
  }
  CHECK(refused.empty());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("the log path " + rotated_link + " is a symbolic link") != std::string::npos);
  CHECK(r.warnings[0].find("records are counted as dropped") != std::string::npos);
  CHECK(::stat(target.c_str(), &st) != 0);
  for (const std::string& f : {taken, dup, rotated_link, dir + "/r.kcount"}) ::unlink(f.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("missing folders of the log path are created (0700) and listed; existing ones are not") {
  const std::string dir = tempDir();
  {
    Collected c;
    kc::FileSink sink(dir + "/a/b/x.kcount", 0600, 0, c.warn(), 1, c.onOpen());
    CHECK(sink.createdFolders().empty());  // nothing before the first write
    CHECK(sink.write("abc", 3));
    CHECK(sink.createdFolders() == std::vector<std::string>{dir + "/a", dir + "/a/b"});
    CHECK(c.warnings.empty());
  }
  struct stat st {};
  REQUIRE(::stat((dir + "/a/b").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  {
    Collected c;
    kc::FileSink sink(dir + "/a/b/y.kcount", 0600, 0, c.warn(), 1, c.onOpen());
    CHECK(sink.write("abc", 3));
    CHECK(sink.createdFolders().empty());
  }
  for (const char* f : {"/a/b/x.kcount", "/a/b/y.kcount"}) ::unlink((dir + f).c_str());
  ::rmdir((dir + "/a/b").c_str());
  ::rmdir((dir + "/a").c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("the cap warning says which part of KCOUNT_MAX_FILES is full, numbered from 0 as the tools do") {
  const std::string dir = tempDir();
  Collected c;
  {
    kc::FileSink sink(dir + "/a.kcount", 0600, 100, c.warn(), 8, c.onOpen());
    std::vector<char> big(200, 'x');
    CHECK_FALSE(sink.write(big.data(), big.size()));  // passes the cap in the first file, no rotation
  }
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("KCOUNT_MAX_BYTES=100") != std::string::npos);
  CHECK(c.warnings[0].find("a.kcount (part 0; KCOUNT_MAX_FILES=8 allows parts 0..7)") != std::string::npos);
  CHECK(c.warnings[0].find("last") == std::string::npos);
  Collected r;
  {
    kc::FileSink sink(dir + "/b.kcount", 0600, 100, r.warn(), 2, r.onOpen());
    std::vector<char> part(60, 'x');
    CHECK(sink.write(part.data(), part.size()));
    REQUIRE(sink.canRotate());
    CHECK(sink.roomLeft() == 40);
    CHECK(sink.rotate());
    CHECK(sink.write(part.data(), part.size()));
    CHECK_FALSE(sink.write(part.data(), part.size()));
  }
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("b.1.kcount (part 1, its last: KCOUNT_MAX_FILES=2 allows parts 0..1)") != std::string::npos);
  for (const char* f : {"/a.kcount", "/b.kcount", "/b.1.kcount"}) ::unlink((dir + f).c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("a log path with a newline, tab or escape is shown quoted and escaped; a plain one as it is") {
  CHECK(kc::shownPath("/tmp/run 1/it's \"a\".kcount") == "/tmp/run 1/it's \"a\".kcount");  // one line as it is
  CHECK(kc::shownPath("/tmp/a\nb.kcount") == "\"/tmp/a\\nb.kcount\"");
  CHECK(kc::shownPath("/tmp/a\tb.kcount") == "\"/tmp/a\\tb.kcount\"");
  CHECK(kc::shownPath("/tmp/a\x1b[31mb.kcount") == "\"/tmp/a\\x1b[31mb.kcount\"");
  CHECK(kc::shownPath("\"quoted\".kcount") == "\"\\\"quoted\\\".kcount\"");  // not taken for a quoted path
}

TEST_CASE("kcount run's report: a log path holding a newline is one log, not two") {
  const std::string path = "/tmp/a\nb\\n.kcount";  // a newline, then a backslash and an n
  const std::string line = kc::runReportPathLine(path);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(kc::runReportPathLine("/tmp/a b.kcount") == "/tmp/a b.kcount");  // without a newline: the path itself
  std::istringstream in(line + "\n/tmp/plain.kcount\n" + line + "\n");
  const kc::RunReport r = kc::readRunReport(in);
  CHECK(r.logs == std::vector<std::string>{path, "/tmp/plain.kcount"});
  CHECK(r.failures.empty());
}

TEST_CASE("kcount run's report: paths, load notes and failures; the no-log line names the reason") {
  const std::string n(1, kc::kFileSinkNote);
  std::istringstream in("a.kcount\n" + n + "loaded 12 preload\na.kcount\n" + n + "loaded 13 injection\n" + n +
                        "cannot create log /x (Permission denied) nor /tmp/x (Permission denied); records are "
                        "counted as dropped\n");
  const kc::RunReport r = kc::readRunReport(in);
  CHECK(r.logs == std::vector<std::string>{"a.kcount"});
  CHECK(r.preloaded_pids == std::vector<int>{12});
  CHECK(r.injected_pids == std::vector<int>{13});
  REQUIRE(r.failures.size() == 1);

  kc::RunEnd end;
  CHECK(kc::noLogReason(r, end).find("could not be created: cannot create log /x") != std::string::npos);
  kc::RunReport none;
  CHECK(kc::noLogReason(none, end).find("not loaded") != std::string::npos);
  end.inject = "cuda";
  CHECK(kc::noLogReason(none, end).find("initialized CUDA or NVTX") != std::string::npos);
  kc::RunReport injected;
  injected.injected_pids = {77};
  const std::string exited = kc::noLogReason(injected, end);
  CHECK(exited.find("pid 77") != std::string::npos);
  CHECK(exited.find("_exit()") != std::string::npos);
  CHECK(exited.find("recorded no") == std::string::npos);
  end.signal = 9;
  CHECK(kc::noLogReason(injected, end).find("killed by signal 9") != std::string::npos);
  kc::RunReport preloaded;
  preloaded.preloaded_pids = {5};
  kc::RunEnd paused;
  paused.paused = true;
  CHECK(kc::noLogReason(preloaded, paused).find("never started") != std::string::npos);
  CHECK(kc::noLogReason(preloaded, kc::RunEnd{}).find("recorded no kernel launch") != std::string::npos);
  // Killed: where only preloading loaded the library, whether the command had anything to record is not
  // known (a shell that ran no CUDA), so no log is said to have been due; loaded by CUDA or NVTX, it was.
  kc::RunEnd killed;
  killed.signal = 15;
  CHECK(kc::noLogReason(preloaded, killed) ==
        "no log written: the command was killed by signal 15 (Terminated); it may have made no CUDA or NVTX call "
        "(nothing to record), or been killed before kcount's first write");
  CHECK(kc::noLogReason(injected, killed) ==
        "no log written: the command was killed by signal 15 (Terminated) before its log was written");
}

TEST_CASE("kcount run's report: the library's disabled and unwritten notes give the reason, grouped by pid") {
  const std::string n(1, kc::kFileSinkNote);
  std::istringstream in(n + "loaded 12 preload\n" + n + "unwritten 12 the capture range 'x' was never pushed\n" + n +
                        "unwritten 14 the capture range 'x' was never pushed\n" + n + "unwritten 15 other reason\n");
  const kc::RunReport r = kc::readRunReport(in);
  CHECK(r.failures.empty());
  REQUIRE(r.unwritten.size() == 3);
  CHECK(r.unwritten[0] == std::pair<int, std::string>{12, "the capture range 'x' was never pushed"});
  kc::RunEnd paused;
  paused.paused = true;  // the library's own reason wins over the guess from --paused
  CHECK(kc::noLogReason(r, paused) ==
        "no log written: the capture range 'x' was never pushed (pid 12, 14); other reason (pid 15)");

  std::istringstream off(n + "loaded 7 preload\n" + n + "disabled 7 KCOUNT_DISABLE=1 is set\n" + n +
                         "unwritten 8 nothing\n");
  const kc::RunReport d = kc::readRunReport(off);
  CHECK(kc::noLogReason(d, kc::RunEnd{}) == "no log written: kcount was disabled: KCOUNT_DISABLE=1 is set (pid 7)");
  kc::RunEnd killed;
  killed.signal = 9;
  CHECK(kc::noLogReason(r, killed).find("; the command was killed by signal 9") != std::string::npos);
}

TEST_CASE("kcount run's report: an exec whose new image did not load the library; a nested run's command not run") {
  const std::string n(1, kc::kFileSinkNote);
  // pid 20: env cleared LD_PRELOAD and exec()ed prog, which did not load the library. pid 21: an exec that
  // loaded it again. pid 22: an exec that failed (the image goes on).
  std::istringstream in(n + "loaded 20 preload\n" + n + "exec 20 cleared /bin/prog with space\n" + n +
                        "loaded 21 preload\n" + n + "exec 21 kept /bin/other\n" + n + "loaded 21 preload\n" + n +
                        "loaded 22 preload\n" + n + "exec 22 kept /bin/x\n" + n + "execfail 22\n");
  const kc::RunReport r = kc::readRunReport(in);
  CHECK(r.failures.empty());
  REQUIRE(r.unloaded_execs.size() == 1);
  CHECK(r.unloaded_execs[0].pid == 20);
  CHECK(r.unloaded_execs[0].cleared);
  CHECK(r.unloaded_execs[0].path == "/bin/prog with space");
  kc::RunEnd paused;
  paused.paused = true;  // not loaded explains more than the paused start
  CHECK(kc::noLogReason(r, paused) ==
        "no log written: libkcount.so was not loaded by /bin/prog with space (pid 20): it was started with "
        "LD_PRELOAD cleared");

  std::istringstream kept(n + "loaded 30 preload\n" + n + "exec 30 kept /bin/static\n");
  CHECK(kc::noLogReason(kc::readRunReport(kept), kc::RunEnd{}) ==
        "no log written: libkcount.so was not loaded by /bin/static (pid 30): a statically linked or set-user-ID program?");
  // Killed right after the exec: the new image never got as far as loading the library; no guess.
  kc::RunEnd killed_early;
  killed_early.signal = 15;
  std::istringstream kept2(n + "loaded 30 preload\n" + n + "exec 30 kept /bin/bash\n");
  CHECK(kc::noLogReason(kc::readRunReport(kept2), killed_early) ==
        "no log written: the command was killed by signal 15 (Terminated) before /bin/bash (pid 30) had loaded "
        "libkcount.so");

  std::istringstream nested(n + "loaded 40 preload\n" + n + "notrun 40 /nonexist: command not found\n");
  const kc::RunReport nr = kc::readRunReport(nested);
  CHECK(nr.failures.empty());
  CHECK(kc::noLogReason(nr, kc::RunEnd{}) ==
        "no log written: the command of a nested kcount run did not run: /nonexist: command not found (pid 40)");

  kc::RunReport preloaded;
  preloaded.preloaded_pids = {5};
  kc::RunEnd off;
  off.paused = true;
  off.control = "off";
  const std::string why = kc::noLogReason(preloaded, off);
  CHECK(why.find("KCOUNT_CONTROL=off") != std::string::npos);
  CHECK(why.find("kcount ctl") == std::string::npos);
}
