#!/usr/bin/env python3
"""How often kcount touches the files it is given, counted with strace: `kcount check` opens each log once
(whether a path is a log file is decided without opening it), `kcount summary` opens one log once and each of
several at most twice (its first 2 MiB, read once for copies and rotated parts, and the log), and
`kcount run --paused` looks at the control folder once (one lstat()). Skipped (exit 77, SKIP) where strace is
missing or cannot trace (ptrace not permitted).

Usage: test_file_access.py BUILD_DIR   (needs BUILD_DIR/bin/kcount and BUILD_DIR/bin/kc_make_log)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount_path

BUILD = os.path.abspath(sys.argv[1])
MAKE_LOG = os.path.join(BUILD, "bin", "kc_make_log")
OPEN_CALLS = ("open", "openat", "openat2", "creat")
STAT_CALLS = ("stat", "lstat", "newfstatat", "fstatat64", "statx", "stat64", "lstat64")


def traced(args, follow=True, env=None):
    """The system calls on files of `args` run under strace: [(call, path)], and the exit status."""
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as out:
        p = subprocess.run(["strace", *(["-f"] if follow else []), "-qq", "-e", "trace=%file", "-o", out.name, *args],
                           capture_output=True, text=True, env=env)
        calls = []
        for line in out.read().splitlines():
            m = re.match(r'^(?:\d+\s+)?(\w+)\((?:AT_FDCWD, |\d+, )?"((?:[^"\\]|\\.)*)"', line)
            if m:
                calls.append((m.group(1), m.group(2)))
        return calls, p.returncode


# Exit status of a test that could not run here: ctest reports it as skipped (SKIP_RETURN_CODE).
SKIPPED = 77


def count(calls, names, path):
    return sum(1 for c, p in calls if c in names and p == path)


def main():
    if shutil.which("strace") is None:
        print("SKIP: strace is not installed (scripts/install_deps.sh installs it)")
        return SKIPPED
    probe = subprocess.run(["strace", "-o", os.devnull, "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: strace cannot trace here: {probe.stderr.strip()}")
        return SKIPPED
    kcount = kcount_path()
    work = tempfile.mkdtemp(prefix="kc-file-access-")
    try:
        logs = []
        for name in ("a", "b"):
            path = os.path.join(work, name + ".kcount")
            subprocess.run([MAKE_LOG, path], input="push step\nkernel 100 gemm\npop\n", text=True, check=True)
            logs.append(path)
        calls, rc = traced([kcount, "check", *logs])
        for log in logs:
            check(f"check of two logs: {os.path.basename(log)} opened once", rc == 0 and count(calls, OPEN_CALLS, log)
                  == 1, (rc, [c for c in calls if c[1] == log]))
        calls, rc = traced([kcount, "check", logs[0]])
        check("check of one log: opened once", rc == 0 and count(calls, OPEN_CALLS, logs[0]) == 1,
              (rc, [c for c in calls if c[1] == logs[0]]))
        calls, rc = traced([kcount, "summary", logs[0]])
        check("summary of one log: opened once", rc == 0 and count(calls, OPEN_CALLS, logs[0]) == 1,
              (rc, [c for c in calls if c[1] == logs[0]]))
        calls, rc = traced([kcount, "summary", *logs])
        for log in logs:
            check(f"summary of two logs: {os.path.basename(log)} opened at most twice (head, then the log)",
                  rc == 0 and 1 <= count(calls, OPEN_CALLS, log) <= 2, (rc, [c for c in calls if c[1] == log]))

        # kcount run --paused: its own process (not followed into the command, whose library makes the folder)
        # looks at the control folder once, whether it exists or not.
        for exists in (True, False):
            folder = os.path.join(work, "control-" + str(exists))
            if exists:
                os.mkdir(folder, 0o700)
            env = dict(os.environ, KCOUNT_CONTROL_DIR=folder, KCOUNT_OUTPUT=os.path.join(work, "run.kcount"))
            calls, rc = traced([kcount, "run", "--paused", "--", "true"], follow=False, env=env)
            check(f"run --paused, control folder {'there' if exists else 'not there'}: looked at once",
                  rc == 0 and count(calls, STAT_CALLS, folder) == 1, (rc, [c for c in calls if c[1] == folder]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
