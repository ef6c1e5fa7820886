#!/usr/bin/env python3
"""Values the log does not hold print as not measured, paths that differ stay apart, unsigned times stay
unsigned, whatever the output:

1. `summary --metric cpu` across logs: the "(no range)" row has no instance, so no CPU time: `-` per log,
   in the total and the spread, `null` in JSON's `across_logs` (as the per-log table and JSON, and diff).
2. `kernels --format json`: the keys of "ranges" are the paths CSV writes (escaped), so the root, a range
   named "(no range)", a top-level range "a/b" and range b inside a are four keys, not two.
3. `export`: a time above 2^63 ns is written unsigned in JSON and CSV, and as INT64_MAX in SQLite (whose
   INTEGER is signed), never as a negative number.

Usage: test_unmeasured_and_escaped.py BUILD_DIR MAKE_LOG
"""
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount_out

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = [os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount"),
        os.path.join(ROOT, "examples", "logs", "geglu-compiled.kcount")]


def make_log(tool, path, script):
    subprocess.run([tool, path], input=script, text=True, check=True)


def across_cpu():
    text = kcount_out("summary", "--metric", "cpu", "--sum", *LOGS)
    across = text[text.index("== across "):]  # after each log's own table
    row = next((l for l in across.splitlines() if l.startswith("(no range) ")), "")
    cells = row.split()[2:]  # after "(no range)": 2 logs, total, min, median, max, in logs
    check("across logs, CPU time: (no range) is '-' per log, in the total and the spread",
          cells[:6] == ["-"] * 6, row)
    doc = json.loads(kcount_out("summary", "--metric", "cpu", "--format", "json", *LOGS))
    root = next(r for r in doc["across_logs"]["ranges"] if r["path"] == "(no range)")
    check("across logs JSON: (no range) cpu_ns null per log, total and spread null",
          root["per_log"]["cpu_ns"] == [None, None] and root["total"]["cpu_ns"] is None
          and root["spread"]["cpu_ns"] is None, root)
    step = next(r for r in doc["across_logs"]["ranges"] if r["path"] == "step")
    check("across logs JSON: a range with instances keeps its CPU time",
          all(isinstance(v, int) and v > 0 for v in step["per_log"]["cpu_ns"]), step["per_log"]["cpu_ns"])


def kernel_paths(tool, work):
    log = os.path.join(work, "coll.kcount")
    make_log(tool, log, "push a/b\nkernel 1000 K\npop\npush a\npush b\nkernel 2000 K\npop\npop\n"
                        "push (no range)\nkernel 5 K\npop\nkernel 7 K\n"
                        "push mylib: gemm\nkernel 11 K\npop\ndpush mylib gemm\nkernel 13 K\npop\n")
    doc = json.loads(kcount_out("kernels", "--format", "json", log))
    ranges = doc["kernels"][0]["ranges"]
    rows = list(csv.DictReader(io.StringIO(kcount_out("kernels", "--format", "csv", log))))
    csv_ranges = json.loads(rows[0]["ranges"])  # JSON text in the cell (paths may hold ", ")
    want = {"(no range)": 1, "\\(no range)": 1, "a\\/b": 1, "a/b": 1, "mylib\\: gemm": 1, "mylib: gemm": 1}
    check("kernels JSON: ranges of one raw path stay apart, keyed as CSV writes them", ranges == want, ranges)
    check("kernels JSON: the same paths and counts as CSV", ranges == csv_ranges, (ranges, csv_ranges))


def huge_times(tool, work):
    log = os.path.join(work, "h.kcount")
    make_log(tool, log, "kernel 9223372036854775807 huge\n")
    doc = json.loads(kcount_out("export", "--format", "json", "-o", "-", log))
    k = doc["kernels"][0]
    check("export JSON: a kernel ending past 2^63 ns has an unsigned end", k["end"] > 2**63 and k["start"] >= 0, k)
    rows = list(csv.DictReader(io.StringIO(kcount_out("export", "--format", "csv", "--table", "kernels",
                                                      "-o", "-", log))))
    check("export CSV: the same end, unsigned", int(rows[0]["end"]) == k["end"] > 2**63, rows[0]["end"])
    db = os.path.join(work, "h.sqlite")
    kcount_out("export", "--format", "sqlite", "-o", db, log)
    with sqlite3.connect(db) as c:
        end = c.execute("SELECT end FROM kernels").fetchone()[0]
        negative = c.execute("SELECT count(*) FROM kernels WHERE start < 0 OR end < 0").fetchone()[0]
    check("export SQLite: an end past INT64_MAX is stored as INT64_MAX, nothing negative",
          end == 2**63 - 1 and negative == 0, (end, negative))


def main():
    tool = sys.argv[2]
    across_cpu()
    with tempfile.TemporaryDirectory() as work:
        kernel_paths(tool, work)
        huge_times(tool, work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
