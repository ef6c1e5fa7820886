#!/usr/bin/env python3
"""`kcount export` names what it wrote on stderr (docs/usage.md, "kcount export"): one line per file,
`kcount export: wrote FILE (N bytes, FORMAT)`, N the file's size (a CSV file's line also gives its rows
below the header: `(N rows, N bytes, csv)`); every table's file for --format csv (the
one --table names with it); nothing for -o - (standard output).

Usage: test_export_wrote.py BUILD_DIR
"""
import csv
import os
import sys
import tempfile

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")


def wrote_lines(err):
    return [l for l in err.splitlines() if l.startswith("kcount export: wrote ")]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, name in (("chrome", "trace.json"), ("json", "records.json"), ("sqlite", "log.sqlite")):
            out = os.path.join(tmp, name)
            r = kcount("export", "--format", fmt, "-o", out, LOG)
            size = os.path.getsize(out) if os.path.exists(out) else -1
            check(f"export --format {fmt}: one line naming the file, its size and format",
                  r.rc == 0 and wrote_lines(r.err) == [f"kcount export: wrote {out} ({size} bytes, {fmt})"], r.err)
        folder = os.path.join(tmp, "csv")
        r = kcount("export", "--format", "csv", "-o", folder, LOG)
        lines = wrote_lines(r.err)
        files = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
        def rows(f):  # data rows below the header, as a CSV reader counts them
            with open(os.path.join(folder, f), newline="") as fh:
                return sum(1 for _ in csv.reader(fh)) - 1
        check("export --format csv: one line per table's file, each with its rows and size",
              r.rc == 0 and len(lines) == len(files) == 7
              and all(f"kcount export: wrote {os.path.join(folder, f)} ({rows(f)} row{'' if rows(f) == 1 else 's'}, "
                      f"{os.path.getsize(os.path.join(folder, f))} bytes, csv)" in lines for f in files), (files, r.err))
        check("export --format csv: kernels.csv has rows (the log's kernels)", "kernels.csv" in files and rows("kernels.csv") > 0)
        one = os.path.join(tmp, "one")
        r = kcount("export", "--format", "csv", "--table", "kernels", "-o", one, LOG)
        check("export --format csv --table kernels: one line, kernels.csv",
              r.rc == 0 and len(wrote_lines(r.err)) == 1 and "kernels.csv (" in r.err, r.err)
        r = kcount("export", "--format", "json", "-o", "-", LOG)
        check("export -o -: no 'wrote' line", r.rc == 0 and r.out and not wrote_lines(r.err), r.err)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
