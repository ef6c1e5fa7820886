#!/usr/bin/env python3
"""Every line of the text output fits --width N, on the shipped logs (examples/logs/*.kcount).

  fits      summary (tree, inclusive, --wide), kernels, check of every shipped log and diff of the pairs
            geglu-eager/geglu-compiled and sweep-eager/sweep-compiled at --width 80, 120 and 200: no line
            takes more than N display columns (a wide East Asian character counts 2, a combining mark 0).
  dropped   a table that lost columns says so on a line naming them and --width 0; the columns it keeps
            at any width are still there (summary: range, launches, kernels, GPU time; kernels: kernel,
            count, GPU total).
  numbers   a number shown at a width is one the table shows without a limit (cells are shown whole or
            not at all); rows keep different names (no two rows of a table share a name that differ at
            --width 0).
  usage     --width 1 to 59 is a usage error (exit 2) naming the bounds; --width 0 and no --width (output
            not a terminal) print the same, every column.
Usage: test_width_fit.py BUILD_DIR SOURCE_DIR
"""
import os
import re
import sys
import unicodedata

from checks import check, exit_status, kcount

logs_dir = os.path.join(os.path.abspath(sys.argv[2]), "examples", "logs")
LOGS = {name: os.path.join(logs_dir, name + ".kcount")
        for name in ("geglu-eager", "geglu-compiled", "sweep-eager", "sweep-compiled", "linear-eager")}
PAIRS = (("geglu-eager", "geglu-compiled"), ("sweep-eager", "sweep-compiled"))
WIDTHS = (80, 120, 200)


def width(text):
    """Display columns of `text`: 2 for wide and fullwidth characters, 0 for combining marks, else 1."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def commands():
    """(name, args) of every text command the test renders."""
    for name, path in LOGS.items():
        yield f"summary {name}", ["summary", path]
        yield f"summary --view inclusive {name}", ["summary", "--view", "inclusive", path]
        yield f"summary --wide {name}", ["summary", "--wide", path]
        yield f"kernels {name}", ["kernels", path]
        yield f"check {name}", ["check", path]
    for a, b in PAIRS:
        yield f"diff {a} {b}", ["diff", LOGS[a], LOGS[b]]


def tables(text):
    """The tables of `text`: each a list of lines, the heading line then the rows (a line of '-' under the
    heading marks a table; its rows run to the first blank line or a line without two spaces in a row)."""
    lines = text.split("\n")
    out = []
    for i in range(1, len(lines)):
        if lines[i] and set(lines[i]) == {"-"} and lines[i - 1].strip():
            rows = [lines[i - 1]]
            for line in lines[i + 1:]:
                if not line.strip() or "  " not in line.strip():
                    break
                rows.append(line)
            out.append(rows)
    return out


NUMBER = re.compile(r"[-+]?\d[\d.,]*(?: ?(?:ns|µs|us|ms|s|%|x))?(?: \(1 of \d+\+?\))?|-")


def number_cells(table):
    """The cells of a table's rows (heading left out) that are a number, a duration or '-' whole."""
    return {c for line in table[1:] for c in re.split(r" {2,}", line.strip())[1:] if NUMBER.fullmatch(c)}


for name, args in commands():
    full = kcount(*args, "--width", "0")
    unlimited_numbers = set().union(*[number_cells(t) for t in tables(full.out)])
    for n in WIDTHS:
        r = kcount(*args, "--width", str(n))
        long_lines = [f"{width(line)}: {line}" for line in r.out.split("\n") if width(line) > n]
        check(f"fits: kcount {name} --width {n}: every line at most {n} columns",
              r.rc == full.rc and r.out and not long_lines, f"rc {r.rc}\n" + "\n".join(long_lines[:10]))
        shown = set().union(*[number_cells(t) for t in tables(r.out)])
        check(f"numbers: kcount {name} --width {n}: every number in its tables is one shown without a limit",
              not (shown - unlimited_numbers), sorted(shown - unlimited_numbers)[:20])
        distinct = True
        for t_full, t_fit in zip(tables(full.out), tables(r.out)):
            first = lambda rows: [re.split(r" {2,}", row.strip())[0] for row in rows[1:]]
            if len(set(first(t_full))) == len(first(t_full)) and len(set(first(t_fit))) != len(first(t_fit)):
                distinct = False
        check(f"numbers: kcount {name} --width {n}: rows keep different names", distinct, r.out)

# dropped: what summary and kernels keep at 80 columns, and the line naming what they left out.
for log in ("geglu-eager", "sweep-eager"):
    r = kcount("summary", LOGS[log], "--width", "80")
    t = tables(r.out)
    head = t[0][0] if t else ""
    check(f"dropped: summary {log} --width 80: range, launches, kernels, GPU time kept",
          all(h in head for h in ("range", "launches", "kernels", "GPU time")), r.out)
    check(f"dropped: summary {log} --width 80: the columns left out named above the table, with --width 0",
          "columns left out" in r.out and "--width 0" in r.out and "CPU time" not in head, r.out)
r = kcount("kernels", LOGS["geglu-compiled"], "--width", "120")
head = (tables(r.out) or [[""]])[0][0]
check("dropped: kernels geglu-compiled --width 120: kernel, count, GPU total kept; the rest named",
      all(h in head for h in ("kernel", "count", "GPU total")) and "columns left out" in r.out, r.out)
# Columns left out leave room: the names take it (a table of shortened names is not left 40 columns
# narrower than the width).
r = kcount("kernels", LOGS["geglu-eager"], "--width", "100")
table = (tables(r.out) or [[]])[0]
check("names widen: kernels geglu-eager --width 100: names shortened only as far as needed (table 90-100 wide)",
      table and any("…" in x for x in table) and 90 <= max(width(x) for x in table) <= 100, r.out)
r = kcount("kernels", LOGS["geglu-compiled"], "--width", "0")
check("dropped: kernels --width 0: every column, no line naming columns left out",
      "epilogue" in r.out and "columns left out" not in r.out, r.out)

# usage: the narrowest width, and no limit.
for bad in ("1", "59"):
    for cmd in ("summary", "kernels", "check"):
        r = kcount(cmd, "--width", bad, LOGS["geglu-eager"])
        check(f"usage: kcount {cmd} --width {bad}: usage error naming the bounds",
              r.rc == 2 and "from 60 to" in r.err, f"rc {r.rc} {r.err}")
    r = kcount("diff", "--width", bad, LOGS["geglu-eager"], LOGS["geglu-compiled"])
    check(f"usage: kcount diff --width {bad}: usage error", r.rc == 2 and "from 60 to" in r.err, r.err)
r = kcount("summary", "--width", "60", LOGS["sweep-eager"])
check("usage: --width 60 is accepted and fits", r.rc == 0 and all(width(x) <= 60 for x in r.out.split("\n")), r.out)
for cmd in ("summary", "kernels", "check"):
    check(f"usage: kcount {cmd} not to a terminal: as --width 0 (no limit)",
          kcount(cmd, LOGS["sweep-eager"]).out == kcount(cmd, LOGS["sweep-eager"], "--width", "0").out)

sys.exit(exit_status())
