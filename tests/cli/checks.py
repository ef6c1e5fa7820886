"""What the command-line tests in tests/cli/ share: PASS/FAIL lines, the failures so far, and running kcount.

A test imports it (ctest runs each test as a script, so the test's folder is first on sys.path), checks with
check(NAME, OK, DETAIL) and ends with sys.exit(exit_status()). kcount() runs BUILD_DIR/bin/kcount, BUILD_DIR
being the test's first argument (every test here takes it first), unless KCOUNT is set to another path.
"""
import os
import subprocess
import sys
from typing import NamedTuple

failures = []
KCOUNT = None  # the kcount to run; None: BUILD_DIR/bin/kcount, BUILD_DIR = sys.argv[1]
DETAIL_CHARS = 2000  # a failed check's detail is cut there


def check(name, ok, detail=""):
    """Prints "PASS NAME", or "FAIL NAME: DETAIL" and counts NAME as failed. Returns whether it passed."""
    ok = bool(ok)
    text = str(detail)
    if len(text) > DETAIL_CHARS:
        text = text[:DETAIL_CHARS] + "..."
    print(("PASS " if ok else "FAIL ") + name + ("" if ok or not text else ": " + text), flush=True)
    if not ok:
        failures.append(name)
    return ok


def exit_status():
    """Prints how many checks failed, naming them, and returns the test's exit status: 1 if any, else 0."""
    if failures:
        print(f"{len(failures)} failed: {', '.join(failures)}", flush=True)
        return 1
    print("all passed", flush=True)
    return 0


def kcount_path():
    """The kcount the tests run: KCOUNT, else BUILD_DIR/bin/kcount."""
    return KCOUNT if KCOUNT is not None else os.path.join(os.path.abspath(sys.argv[1]), "bin", "kcount")


class Result(NamedTuple):
    """How a kcount command ended: rc, out, err (unpacks as a tuple), also read as returncode, stdout and
    stderr, as subprocess.CompletedProcess's."""
    rc: int
    out: str
    err: str

    @property
    def returncode(self):
        return self.rc

    @property
    def stdout(self):
        return self.out

    @property
    def stderr(self):
        return self.err


def kcount(*args, env=None, cwd=None, input=None, timeout=300):
    """Runs kcount with `args`; its output as text (undecodable bytes replaced), whatever its exit status."""
    p = subprocess.run([kcount_path(), *args], capture_output=True, text=True, errors="replace", env=env, cwd=cwd,
                       input=input, timeout=timeout)
    return Result(p.returncode, p.stdout, p.stderr)


def kcount_out(*args):
    """kcount's standard output for `args`; RuntimeError, with its exit status and stderr, if it failed."""
    r = kcount(*args)
    if r.rc != 0:
        raise RuntimeError(f"kcount {' '.join(args)}: exit {r.rc}: {r.err}")
    return r.out
