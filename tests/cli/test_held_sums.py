#!/usr/bin/env python3
"""Sums held at 2^64 - 1 (a kernel ending at 2^64 - 1: a crafted or damaged log) read the same in every output:

1. `kcount diff`: a side's value is its exact sum in JSON and CSV alike (18446744073709551615 when held); a
   change with a held side, or one past 2^63 - 1 (which would wrap as a signed number), is not given: JSON
   null, an empty CSV field, "unknown" in the text (with a line saying why), never a wrapped number.
2. `kcount summary A B`: the across-logs table and JSON show a held sum as held (not "0 ns"), its total
   held, and the median of a held and a plain value as unknown.

Usage: test_held_sums.py BUILD_DIR KC_MAKE_LOG (KCOUNT=PATH runs another kcount, e.g. an older one)
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

import checks
from checks import check, exit_status, kcount

HELD = 18446744073709551615
MAKE_LOG = None


def make_log(path, script):
    subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
    return path


def diff_changes(work):
    # Two kernels ending at 2^64 - 1: the GPU sums pass 2^64 - 1 and are held there.
    held = make_log(os.path.join(work, "held.kcount"),
                    "push step\nkernel 1000 K\nkernel 18446744073709551615 BAD\nkernel 18446744073709551615 BAD\npop\n")
    # One: the sum is about 2^64 - 10^9 (not held), 2^64 - 10^9 - 3000 from a plain log's: past 2^63 - 1.
    one = make_log(os.path.join(work, "one.kcount"), "push step\nkernel 1000 K\nkernel 18446744073709551615 BAD\npop\n")
    plain = make_log(os.path.join(work, "plain.kcount"), "push step\nkernel 1000 K\nkernel 2000 BAD\npop\n")
    for a, b, what in ((held, plain, "held side"), (one, plain, "change past 2^63 - 1"), (plain, one, "change past 2^63 - 1, B larger")):
        r = kcount("diff", "--format", "json", a, b)
        doc = json.loads(r.out) if r.rc == 0 else {}
        overall = doc.get("overall", {})
        step = next((u for u in doc.get("ranges", []) if u.get("path") == "step"), {})
        check(f"diff JSON ({what}): the GPU change is null, not wrapped",
              overall.get("change", {}).get("gpu_ns", 0) is None and step.get("change", {}).get("gpu_ns", 0) is None,
              (overall.get("change"), step.get("change")))
        rows = list(csv.DictReader(io.StringIO(kcount("diff", "--format", "csv", a, b).out)))
        row = next((x for x in rows if x["path"] == "(overall)"), {})
        check(f"diff CSV ({what}): the sides as JSON has them, the change empty",
              row.get("gpu_ns_a") == str(overall.get("a", {}).get("gpu_ns"))
              and row.get("gpu_ns_b") == str(overall.get("b", {}).get("gpu_ns")) and row.get("gpu_ns_change") == "", row)
        bad = next((x for x in rows if x["kind"] == "kernel" and x["identity"] == "BAD"), {})
        check(f"diff CSV ({what}): the kernel's change empty", bad.get("gpu_ns_change") == "", bad)
        r = kcount("diff", a, b)
        line = next((l for l in r.out.splitlines() if l.startswith("(overall)")), "")
        check(f"diff text ({what}): the change reads unknown, with a line saying why",
              " unknown " in line and "18446744073 s (" not in line and "18446744074 s (" not in line
              and "\nunknown: a change where a side's sum is held at 2^64 - 1" in r.out,
              r.out[:1500])
    r = kcount("diff", "--format", "json", held, plain)
    doc = json.loads(r.out) if r.rc == 0 else {}
    check("diff JSON: a held sum is 18446744073709551615", doc.get("overall", {}).get("a", {}).get("gpu_ns") == HELD,
          doc.get("overall"))
    r = kcount("diff", "--format", "json", plain, plain)
    doc = json.loads(r.out) if r.rc == 0 else {}
    check("diff JSON: plain logs still get their change", doc.get("overall", {}).get("change", {}).get("gpu_ns") == 0,
          doc.get("overall"))
    return held, plain


def across_logs(held, plain):
    r = kcount("summary", held, plain)
    table = r.out[r.out.find("== across 2 logs"):]
    step = next((l for l in table.splitlines() if l.startswith("step")), "")
    check("summary A B: the across-logs row shows the held sum as held, the median unknown, no total",
          step.split() == ["step", "≥18446744074", "s", "3.00", "µs", "3.00", "µs", "unknown",
                           "≥18446744074", "s", "2/2"] and "\nunknown: a median of two values" in table, table)
    r = kcount("summary", "--sum", held, plain)
    table = r.out[r.out.find("== across 2 logs"):]
    step = next((l for l in table.splitlines() if l.startswith("step")), "")
    check("summary --sum A B: the across-logs row shows the held sum as held, its total held, the median unknown",
          step.split() == ["step", "≥18446744074", "s", "3.00", "µs", "≥18446744074", "s", "3.00", "µs", "unknown",
                           "≥18446744074", "s", "2/2"] and "\nunknown: a median of two values" in table, table)
    r = kcount("summary", "--format", "json", held, plain)
    doc = json.loads(r.out) if r.rc == 0 else {}
    rng = next((x for x in doc.get("across_logs", {}).get("ranges", []) if x["path"] == "step"), {})
    check("summary JSON across logs: per log, total and max held exactly, the median null",
          rng.get("per_log", {}).get("gpu_ns") == [HELD, 3000] and rng.get("total", {}).get("gpu_ns") == HELD
          and rng.get("spread", {}).get("gpu_ns") == {"min": 3000, "median": None, "max": HELD}, rng)
    other = make_log(os.path.join(os.path.dirname(plain), "other.kcount"), "push step\nkernel 1000 K\nkernel 3000 BAD\npop\n")
    r = kcount("summary", "--format", "json", plain, other)
    doc = json.loads(r.out) if r.rc == 0 else {}
    rng = next((x for x in doc.get("across_logs", {}).get("ranges", []) if x["path"] == "step"), {})
    check("summary JSON across logs: plain logs' spread as before (3000, 3500, 4000)",
          rng.get("spread", {}).get("gpu_ns") == {"min": 3000, "median": 3500, "max": 4000}, rng)


def main():
    global MAKE_LOG
    MAKE_LOG = sys.argv[2]
    if os.environ.get("KCOUNT"):
        checks.KCOUNT = os.environ["KCOUNT"]
    with tempfile.TemporaryDirectory() as work:
        held, plain = diff_changes(work)
        across_logs(held, plain)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
