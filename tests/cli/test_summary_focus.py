#!/usr/bin/env python3
"""`kcount summary` shows the part of the range tree that matters (docs/usage.md, "kcount summary"):

- a tree of at most 40 ranges is shown whole (geglu: every range of the CSV, no "not shown" line);
- a larger tree (the shipped sweep log, about 5,000 ranges) shows the most repeated range and its
  children, the 10 ranges of most GPU time and of most launches of their own, and their parents, with one
  line saying how many ranges are hidden and how to see them; the totals and the drops stay;
- --all shows every range (one table row per CSV row); --depth N only ranges at most N deep; --range PATH
  that range's subtree and its parents; a --range that names no range is a usage error (2);
- CSV and JSON carry every range whatever the options say.

Usage: test_summary_focus.py BUILD_DIR
"""
import csv
import io
import json
import os
import sys

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = os.path.join(ROOT, "examples", "logs")
GEGLU = os.path.join(LOGS, "geglu-eager.kcount")
SWEEP = os.path.join(LOGS, "sweep-eager.kcount")


def table_rows(out):
    """The range rows of a summary table (between the dashes line and the first line after the table)."""
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("---")) + 1
    rows = []
    for l in lines[start:]:
        if not l or not (l.startswith("(") or l[0] != " " and "  " in l or l.startswith("  ")) or ":" in l.split("  ")[0]:
            break
        rows.append(l)
    return rows


def csv_paths(log):
    return [r["path"] for r in csv.DictReader(io.StringIO(kcount("summary", "--format", "csv", log).stdout))]


def main():
    small = kcount("summary", GEGLU)
    check("geglu (12 ranges): every range shown, no 'not shown' line",
          small.rc == 0 and "not shown" not in small.out and len(table_rows(small.out)) == len(csv_paths(GEGLU)) - 1,
          (len(table_rows(small.out)), len(csv_paths(GEGLU))))

    full_paths = csv_paths(SWEEP)
    default = kcount("summary", SWEEP)
    lines = default.out.splitlines()
    hidden = [l for l in lines if " not shown (" in l]
    check("sweep: at most 120 lines by default", default.rc == 0 and len(lines) <= 120, len(lines))
    check("sweep: one line says how many ranges are hidden and names --all, --depth, --range",
          len(hidden) == 1 and all(o in hidden[0] for o in ("--all", "--depth N", "--range PATH")), hidden)
    shown_rows = table_rows(default.out)
    ranges = len(full_paths) - 2  # the CSV's "(overall)" and "(no range)" rows are no ranges
    check("sweep: the hidden count plus the rows shown is every range",
          hidden and hidden[0].startswith(f"{ranges - (len(shown_rows) - 1)} of {ranges} ranges"),
          (hidden, len(shown_rows), ranges))
    check("sweep: totals and drops stay", any(l.startswith("totals: ") for l in lines)
          and any(l.startswith("dropped: ") for l in lines), lines[-5:])
    # The range issuing the most GPU time of its own, and the most repeated one, are among the verdict lines.
    js = json.loads(kcount("summary", "--format", "json", SWEEP).out)["logs"][0]
    real = [r for r in js["ranges"] if r["path"] not in ("(no range)", "")]
    hot = max(real, key=lambda r: r["exclusive"]["gpu_ns"])
    whole = kcount("summary", "--full-names", SWEEP).out.splitlines()  # the same rows, paths unshortened
    steady = max(real, key=lambda r: (r["instances"], r["inclusive"]["gpu_ns"], r["inclusive"]["launches"]))
    for what, r in (("most GPU time of its own", hot), ("most repeated", steady)):
        check(f"sweep: the range of {what} ({r['path'][-40:]}) has its verdict line",
              any(l.startswith("  " + r["path"] + ": ") for l in whole), r["path"])
    check("sweep: JSON carries every range", len(js["ranges"]) == len(full_paths) - 1, (len(js["ranges"]), len(full_paths)))

    every = kcount("summary", "--all", SWEEP)
    check("--all: one table row per CSV range row, no 'not shown' line",
          every.rc == 0 and "not shown" not in every.out and len(table_rows(every.out)) == len(full_paths) - 1,
          (len(table_rows(every.out)), len(full_paths)))
    top = kcount("summary", "--depth", "1", SWEEP)
    top_rows = table_rows(top.out)
    check("--depth 1: the top-level ranges only (no indented row)",
          top.rc == 0 and len(top_rows) > 5 and not any(r.startswith("  ") for r in top_rows[1:]), top_rows[:5])
    path = "geglu dtype=fp32 t=16384 h=4096 i=11008/step"
    one = kcount("summary", "--range", path, SWEEP)
    one_rows = table_rows(one.out)
    check("--range PATH: that range, its parent and its 4 children",
          one.rc == 0 and len(one_rows) == 1 + 2 + 4 and [r.split()[0] for r in one_rows[3:]] == ["gate", "up", "act", "down"],
          one_rows)
    bad = kcount("summary", "--range", "no/such/range", SWEEP)
    check("--range of no range: exit 2, said on stderr", bad.rc == 2 and "no/such/range" in bad.err, (bad.rc, bad.err))
    csv_all = kcount("summary", "--format", "csv", "--depth", "1", SWEEP)
    check("--depth with CSV: every range, a note on stderr",
          len(list(csv.DictReader(io.StringIO(csv_all.out)))) == len(full_paths) and "--depth" in csv_all.err,
          csv_all.err)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
