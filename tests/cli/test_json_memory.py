#!/usr/bin/env python3
"""The JSON outputs' memory does not grow with their text: `kcount summary --format json` (one log and two),
`kcount diff --format json` and `kcount kernels --format json` write a range's (a kernel's) element at a time.

Two logs made by kc_make_log: SMALL and LARGE flat ranges (each range's own name, one launch of a kernel of
its own name in it: one JSON element per range and per kernel). Each command runs on both; its peak RSS
(the child's, os.wait4) may grow by at most the KiB per range given with it: 4, and 8 for diff, whose
analysis of two sides holds about 5 KiB per range of this log (each range's kernels decoded). Built whole
before it was written, a document took about 15 KiB per range (summary), 43 (summary of two logs), 15
(diff) and 7 (kernels), for about 2 KiB of text per range (summary). A child's peak counts this script's
own (vfork and fork carry it over), which is why the script keeps no output in memory.

Usage: test_json_memory.py BUILD_DIR KC_MAKE_LOG
"""
import os
import shutil
import subprocess
import sys
import tempfile

import checks
from checks import check, exit_status

SMALL, LARGE = 2_000, 12_000


def make_log(make_log, path, ranges):
    script = "".join(f"push range_{i}\nkernel 1000 void kernel_{i}<float>(float*, int)\npop\n" for i in range(ranges))
    subprocess.run([make_log, path], input=script.encode(), check=True)


def holds(path, text):
    """Whether the file `path` holds `text`, read 1 MiB at a time: this process stays small, since a child
    started with vfork (as subprocess does) counts the parent's peak RSS in its own."""
    tail = b""
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            if text in tail + chunk:
                return True
            tail = chunk[-len(text):]
    return False


def peak_kib(args, out_path):
    """Runs kcount with `args`, its stdout to `out_path`: (exit status, peak RSS in KiB, stderr)."""
    with open(out_path, "wb") as out:
        p = subprocess.Popen([checks.kcount_path(), *args], stdout=out, stderr=subprocess.PIPE)
        err = p.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, usage.ru_maxrss, err


def main():
    make_log_path = os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as work:
        logs = {}
        for name, n in (("small", SMALL), ("large", LARGE)):
            logs[name] = os.path.join(work, f"{name}.kcount")
            make_log(make_log_path, logs[name], n)
            # A second file of the same log: two logs for summary's across-logs part and for diff.
            shutil.copyfile(logs[name], os.path.join(work, f"{name}-b.kcount"))
        # label: (arguments for a log, KiB per range)
        commands = {
            "summary json": (lambda l: ["summary", "--format", "json", l], 4),
            "summary json, two logs": (lambda l: ["summary", "--format", "json", l, l[:-7] + "-b.kcount"], 4),
            "diff json": (lambda l: ["diff", "--format", "json", l, l[:-7] + "-b.kcount"], 8),
            "kernels json": (lambda l: ["kernels", "--format", "json", l], 4),
        }
        out = os.path.join(work, "out.json")
        for label, (args, kib_per_range) in commands.items():
            runs = {}
            for name in ("small", "large"):
                rc, kib, err = peak_kib(args(logs[name]), out)
                # The whole document was written: the last range's element is in it.
                last = f"range_{(SMALL if name == 'small' else LARGE) - 1}"
                whole = rc == 0 and holds(out, last.encode())
                runs[name] = (kib, whole, rc, err[-300:])
            limit = runs["small"][0] + kib_per_range * (LARGE - SMALL)
            check(f"{label}: peak RSS {runs['small'][0]} KiB for {SMALL} ranges, {runs['large'][0]} KiB for {LARGE} "
                  f"(limit {limit} KiB: +{kib_per_range} KiB per range)",
                  runs["small"][1] and runs["large"][1] and runs["large"][0] <= limit, runs)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
