#!/usr/bin/env python3
"""`kcount summary A B` (docs/usage.md, "kcount summary"; reading-logs.md, "Several logs") and the option
parser's messages:

- the across-logs table puts each log's number side by side per range (the geglu pair: eager, compiled),
  then min, median, max and in logs; it does not add the logs up unless --sum is given, and a line under
  the table says how to get the sum; --sum adds the total column (eager + compiled); CSV and JSON are the
  same with and without --sum (JSON keeps its "total" per range);
- --sum with one log or with --format csv/json says on stderr that it has no effect;
- CLI11's usage errors read as kcount's own: `kcount summary: ... (kcount summary --help)`, exit 2.

Usage: test_across_logs.py BUILD_DIR
"""
import json
import os
import re
import sys

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = os.path.join(ROOT, "examples", "logs")
EAGER = os.path.join(LOGS, "geglu-eager.kcount")
COMPILED = os.path.join(LOGS, "geglu-compiled.kcount")


def across(out):
    """The across-logs part of a summary's output: its header line, columns and rows (cells split at 2+ spaces)."""
    part = out[out.find("== across"):] if "== across" in out else ""
    lines = part.splitlines()
    head = re.split(r"\s{2,}", lines[1].strip()) if len(lines) > 1 else []
    rows = {}
    for l in lines[3:]:
        cells = re.split(r"\s{2,}", l.strip())
        if len(cells) == len(head):
            rows[cells[0]] = dict(zip(head, cells))
    return part, head, rows


def across_table():
    r = kcount("summary", EAGER, COMPILED)
    part, head, rows = across(r.out)
    check("summary A B: the logs side by side, no total column",
          r.rc == 0 and head == ["range", "geglu-eager", "geglu-compiled", "min", "median", "max", "in logs"], head)
    step = rows.get("step", {})
    check("summary A B: step, eager and compiled GPU time side by side",
          step.get("geglu-eager") == "30.6 ms" and step.get("geglu-compiled") == "29.3 ms"
          and step.get("in logs") == "2/2", step)
    check("summary A B: a range of one log only: '-' for the other, in 1/2 logs",
          rows.get("step/mlp", {}).get("geglu-eager") == "-" and rows.get("step/gate", {}).get("geglu-compiled") == "-"
          and rows.get("step/mlp", {}).get("in logs") == "1/2", rows.get("step/mlp"))
    check("summary A B: no summed number anywhere (step's 59.9 ms)", "59.9 ms" not in part, part)
    check("summary A B: a line says the logs are not added up and how to get the sum",
          "\nnot added up: each log's GPU time in its own column; --sum adds a total column (the logs' sum per range)\n"
          in part, part)

    s = kcount("summary", "--sum", EAGER, COMPILED)
    part_s, head_s, rows_s = across(s.out)
    check("summary --sum A B: a total column after the logs' columns",
          s.rc == 0 and head_s == ["range", "geglu-eager", "geglu-compiled", "total", "min", "median", "max", "in logs"],
          head_s)
    check("summary --sum A B: step's total is eager + compiled (30.6 + 29.3 ms)",
          rows_s.get("step", {}).get("total") == "59.9 ms" and rows_s.get("step/mlp", {}).get("total") == "29.3 ms",
          rows_s.get("step"))
    check("summary --sum A B: no 'not added up' line", "not added up" not in part_s, part_s)
    check("summary --sum A B: each log's own table unchanged",
          s.out[:s.out.find("== across")] == r.out[:r.out.find("== across")])

    launches = across(kcount("summary", "--metric", "launches", EAGER, COMPILED).out)[0]
    check("summary --metric launches A B: the note names the metric",
          "\nnot added up: each log's launches in its own column; --sum adds" in launches, launches)

    for fmt in ("csv", "json"):
        plain = kcount("summary", "--format", fmt, EAGER, COMPILED)
        summed = kcount("summary", "--format", fmt, "--sum", EAGER, COMPILED)
        check(f"summary --format {fmt} --sum: output unchanged, a note on stderr",
              plain.rc == summed.rc == 0 and plain.out == summed.out and "--sum" in summed.err
              and "--sum" not in plain.err, summed.err)
    doc = json.loads(kcount("summary", "--format", "json", EAGER, COMPILED).out)
    step_j = next(x for x in doc["across_logs"]["ranges"] if x["path"] == "step")
    check("summary JSON A B: the total per range is still there",
          step_j["total"]["gpu_ns"] == sum(step_j["per_log"]["gpu_ns"]), step_j["total"])
    one = kcount("summary", "--sum", EAGER)
    check("summary --sum with one log: no across-logs table, a note on stderr",
          one.rc == 0 and "== across" not in one.out and "kcount: --sum adds a total column" in one.err, one.err)


def parser_messages():
    for args, want in ((["summary", "--foo", EAGER], "kcount summary: unknown option '--foo' (kcount summary --help)"),
                       (["summary", "--format"], "kcount summary: --format needs a value (kcount summary --help)"),
                       (["summary", "--format", "xml", EAGER],
                        "kcount summary: --format: 'xml' is not table, csv or json (kcount summary --help)"),
                       (["summary"], "kcount summary: no log file given (kcount summary --help)"),
                       (["summary", "--top", "-1", EAGER],
                        "kcount summary: --top: Value -1 is not a whole number from 0 to 10000 (kcount summary --help)"),
                       (["kernels", "--bar", "--baz", EAGER],
                        "kcount kernels: unknown options '--bar' and '--baz' (kcount kernels --help)"),
                       (["export", "--format"], "kcount export: --format needs a value (kcount export --help)"),
                       (["--foo"], "kcount: no command given (kcount --help)")):
        r = kcount(*args)
        check(f"kcount {' '.join(os.path.basename(a) for a in args)}: {want!r}, exit 2",
              r.rc == 2 and r.out == "" and r.err == want + "\n", (r.rc, r.err))
    r = kcount("summary", "--help")
    check("summary --help: exit 0, the help on stdout", r.rc == 0 and "--sum" in r.out and r.err == "", r.err)


def main():
    across_table()
    parser_messages()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
