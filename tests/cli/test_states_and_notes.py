#!/usr/bin/env python3
"""What the reading commands say about a log's state, and the notes for options a format ignores:

1. `kcount diff`: two copies of one recording, one with bytes after its End record, hold the same records:
   not "a copy that lacks part of it"; a side of a lossy log and a log with data after its end names both
   states and says that it undercounts (JSON "states", "undercounts"); junk bytes between two chunks that
   took no record (read with --salvage) do not make the side undercount.
2. `kcount summary` warns on stderr of a kernel ending at 2^64 - 1 (as check's IMPLAUSIBLE).
3. `kcount kernels`: a range named "(unmatched)" is not the unmatched-kernels entry.
4. `kcount report`: a range named "(no range)" is not the root row; the root's embedded "cpu_ns" is null,
   not 0.
5. Options the chosen format ignores get a note on stderr and exit 0 (export --table with --format json,
   --full-names with JSON, with diff's CSV or with --width).
6. `kcount kernels --range` with a path copied from a table that shortened it ('…') says what '…' means.

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


def implausible_end(work):
    log = make_log(os.path.join(work, "ones.kcount"), "push step\nkernel 1000 K\nkernel 18446744073709551615 BAD\npop\n")
    warn = ("warning: 1 kernel record ends at 2^64 - 1 ns (18446744073709551615: all bits set, no time a clock gives; "
            "damaged or crafted); its GPU time is counted up to it")
    r = kcount("check", log)
    check("check: a kernel ending at 2^64 - 1 is IMPLAUSIBLE, its warning printed once",
          r.rc == 1 and r.out.count(warn) == 1 and "\nIMPLAUSIBLE: 1 kernel ending at 2^64 - 1" in r.out, r.out[-800:])
    r = kcount("summary", log)
    check("summary: the same warning once, in the footer (exit 0)", r.rc == 0 and r.out.count(warn) == 1
          and warn not in r.err, r.out[-600:] + r.err)
    r = kcount("summary", "--format", "csv", log)
    check("summary --format csv: the warning once on stderr", r.rc == 0 and r.err.count(warn) == 1, r.err)
    r = kcount("summary", "--format", "json", log)
    doc = json.loads(r.out) if r.rc == 0 else {}
    issues = [i.get("message", "") for i in doc.get("logs", [{}])[0].get("issues", [])] if doc else []
    check("summary --format json: the warning in the log's issues", any(warn[len("warning: "):] in m for m in issues), issues)
    for cmd in (["kernels"], ["diff", LAUNCHES]):
        r = kcount(*cmd, log)
        check(f"{cmd[0]}: the warning once on stderr", r.rc == 0 and r.err.count(warn) == 1, r.err)


def unmatched_named(work):
    log = make_log(os.path.join(work, "unm.kcount"), "push (unmatched)\nkernel 1000 K\npop\nunmatched 500 K\n")
    r = kcount("kernels", "--format", "json", log)
    ranges = json.loads(r.out)["kernels"][0]["ranges"] if r.rc == 0 else {}
    check("kernels JSON: a range named (unmatched) is \\(unmatched), apart from the unmatched kernels",
          ranges == {"(unmatched)": 1, "\\(unmatched)": 1}, ranges)
    r = kcount("kernels", log)
    check("kernels table: (unmatched) ×1, \\(unmatched) ×1", "(unmatched) ×1, \\(unmatched) ×1" in r.out, r.out)


def report_no_range(work):
    log = make_log(os.path.join(work, "nr.kcount"), "push (no range)\nkernel 1000 K\npop\nkernel 500 J\n")
    page = os.path.join(work, "nr.html")
    r = kcount("report", log, "-o", page)
    data = {}
    if r.rc == 0:
        with open(page, encoding="utf-8") as f:
            m = re.search(r'<script id="kcount-data"[^>]*>(.*?)</script>', f.read(), re.S)
        data = json.loads(m.group(1)) if m else {}
    ranges = [(n["name"], n["path"], n["cpu_ns"]) for n in data.get("runs", [{}])[0].get("ranges", [])] if data else []
    check("report: a range named (no range) is \\(no range), apart from the root; the root's cpu_ns is null",
          ranges == [("(no range)", "(no range)", None), ("\\(no range)", "\\(no range)", 2000)], ranges)


def ignored_options(work):
    log = make_log(os.path.join(work, "opts.kcount"), "push step\nkernel 1000 K\npop\n")
    r = kcount("export", "--format", "json", "--table", "kernels", "-o", "-", log)
    check("export --format json --table: a note on stderr, exit 0, the JSON written",
          r.rc == 0 and "kcount: --table picks one table of --format csv: no effect with --format json" in r.err
          and '"kernels"' in r.out, (r.rc, r.err))
    for cmd in ("summary", "kernels", "diff"):
        args = [log, log] if cmd == "diff" else [log]
        r = kcount(cmd, "--full-names", "--width", "80", *args)
        check(f"{cmd} --full-names --width: a note on stderr, exit 0",
              r.rc == 0 and "--width fits names to the line by shortening them: no effect with --full-names" in r.err, r.err)
        r = kcount(cmd, "--full-names", "--format", "json", *args)
        check(f"{cmd} --full-names --format json: a note on stderr, exit 0",
              r.rc == 0 and "--full-names shows whole names in the table format" in r.err
              and "no effect with --format json" in r.err, r.err)
        r = kcount(cmd, "--full-names", "--format", "csv", *args)
        noted = "--full-names shows whole names" in r.err
        check(f"{cmd} --full-names --format csv: a note only where CSV ignores it (diff)",
              r.rc == 0 and noted == (cmd == "diff"), r.err)
        r = kcount(cmd, "--full-names", *args)
        check(f"{cmd} --full-names alone: no note", r.rc == 0 and "--full-names" not in r.err, r.err)


def shortened_range_path():
    r = kcount("kernels", EAGER, "--range", "step/ga\u2026e")
    check("kernels --range with '\u2026': exit 2, says the table shortened a name and to give it whole",
          r.rc == 2 and "marks where a table shortened a long name" in r.err and "--full-names" in r.err, r.err)
    r = kcount("kernels", EAGER, "--range", "step/nothere")
    check("kernels --range unknown without '\u2026': no word about shortening",
          r.rc == 2 and "shortened" not in r.err and "no range" in r.err, r.err)


def main():
    global MAKE_LOG
    MAKE_LOG = sys.argv[2]
    if os.environ.get("KCOUNT"):
        checks.KCOUNT = os.environ["KCOUNT"]
    with tempfile.TemporaryDirectory() as work:
        diff_states(work)
        implausible_end(work)
        unmatched_named(work)
        report_no_range(work)
        ignored_options(work)
        shortened_range_path()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
