"""Finding and running the `kcount` command-line tool, whose `--format json` output the package reads.

The tool is, in this order: the `tool` argument of a call; the KCOUNT_TOOL environment variable; `kcount`
on PATH; `bin/kcount` of the tree this package was copied into (`PREFIX/share/kcount/python/kcount` of an
install or of a build tree: `PREFIX/bin/kcount`).
"""
import json
import os
import shutil
import subprocess

__all__ = ["KcountError", "find_tool", "run_json"]


class KcountError(Exception):
    """The tool refused or failed: `message` is what it wrote on stderr, `returncode` its exit status
    (2: a damaged log, a file that is no log, a path it cannot read; see docs/usage.md), `command` the
    command line run. `returncode` is None when no tool was run (none found, or not executable)."""

    def __init__(self, message, returncode=None, command=None):
        super().__init__(message)
        self.message = message
        self.returncode = returncode
        self.command = list(command) if command else []

    def __str__(self):
        if self.returncode is None:
            return self.message
        return "kcount exited with status %d: %s" % (self.returncode, self.message)


def _bundled_tool():
    """PREFIX/bin/kcount when this package is PREFIX/share/kcount/python/kcount, else None."""
    here = os.path.dirname(os.path.abspath(__file__))
    python_dir = os.path.dirname(here)
    share_kcount = os.path.dirname(python_dir)
    if os.path.basename(python_dir) != "python" or os.path.basename(share_kcount) != "kcount":
        return None
    candidate = os.path.join(os.path.dirname(os.path.dirname(share_kcount)), "bin", "kcount")
    return candidate if os.path.isfile(candidate) and os.access(candidate, os.X_OK) else None


def find_tool(tool=None):
    """The path of the kcount tool to run (see the module docstring for the order). Raises KcountError
    (returncode None) when none is found."""
    if tool:
        return str(tool)
    env = os.environ.get("KCOUNT_TOOL", "")
    if env:
        return env
    on_path = shutil.which("kcount")
    if on_path:
        return on_path
    bundled = _bundled_tool()
    if bundled:
        return bundled
    raise KcountError("cannot find the kcount tool: pass tool=PATH, set KCOUNT_TOOL, or put kcount on PATH")


def run(args, tool=None):
    """Runs `kcount ARGS...`; returns (stdout, stderr lines). Raises KcountError when it exits non-zero
    or cannot be started. Blocks until the tool exits; thread-safe (no shared state)."""
    command = [find_tool(tool)] + [str(a) for a in args]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise KcountError("cannot run %s: %s" % (command[0], e.strerror or e), None, command) from None
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        raise KcountError(stderr.strip(), done.returncode, command)
    return done.stdout, [line for line in stderr.splitlines() if line.strip()]


def run_json(args, tool=None):
    """Runs `kcount ARGS... --format json`; returns (the parsed JSON, stderr lines). Raises KcountError
    as `run` does, and when stdout is not JSON."""
    out, warnings = run(list(args) + ["--format", "json"], tool)
    try:
        return json.loads(out.decode("utf-8")), warnings
    except ValueError as e:
        raise KcountError("kcount printed no JSON (%s): %r" % (e, out[:200]), 0, None) from None
