#!/usr/bin/env python3
"""Lists inside one CSV cell split exactly, and JSON writes a path's bytes one way:

1. `kcount kernels --format csv`'s `ranges` and `summary --format csv`'s `top_kernels` hold JSON text (an
   object {path: count}; an array of {"name", "count"} ending in {"more": N}): a C++ kernel name or a range
   path holding ", " reads back whole.
2. A range whose name holds a byte that is no UTF-8: JSON writes it U+FFFD, in summary's "path", in the
   keys of kernels' "ranges" and in diff's paths alike; CSV writes it "\\xHH".

Usage: test_csv_lists.py BUILD_DIR KC_MAKE_LOG (KCOUNT=PATH runs another kcount, e.g. an older one)
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


def main():
    make_log = sys.argv[2]
    if os.environ.get("KCOUNT"):
        checks.KCOUNT = os.environ["KCOUNT"]
    with tempfile.TemporaryDirectory() as work:
        log = os.path.join(work, "lists.kcount")
        script = (b"push st\xe9p\npush x, y\nkernel 1000 void f<int, float>(int)\nkernel 500 K\nkernel 400 K\n"
                  b"kernel 300 g<a, b>\npop\npop\n")
        subprocess.run([make_log, log], input=script, check=True)
        rows = list(csv.DictReader(io.StringIO(kcount("summary", "--format", "csv", "--top", "2", log).out)))
        row = next((r for r in rows if r["path"].endswith("x, y")), {})
        try:
            top = json.loads(row.get("top_kernels", ""))
        except ValueError:
            top = None
        check("summary CSV top_kernels: JSON text, names with ', ' whole, the rest counted",
              top == [{"name": "K", "count": 2}, {"name": "f<int, float>", "count": 1}, {"more": 1}]
              or top == [{"name": "K", "count": 2}, {"name": "g<a, b>", "count": 1}, {"more": 1}], row)
        rows = list(csv.DictReader(io.StringIO(kcount("kernels", "--format", "csv", log).out)))
        try:
            ranges = json.loads(rows[0]["ranges"]) if rows else None
        except ValueError:
            ranges = None
        check("kernels CSV ranges: JSON text, a path with ', ' whole, bytes as CSV writes them",
              ranges == {"st\\xe9p/x, y": 1}, rows[0]["ranges"] if rows else rows)
        doc = json.loads(kcount("kernels", "--format", "json", log).out)
        keys = sorted({k for kern in doc["kernels"] for k in kern["ranges"]})
        summary = json.loads(kcount("summary", "--format", "json", log).out)
        paths = [r["path"] for r in summary["logs"][0]["ranges"]]
        check("JSON: a byte that is no UTF-8 is U+FFFD in kernels' ranges keys, as in summary's paths",
              keys == ["st\ufffdp/x, y"] and "st\ufffdp/x, y" in paths, (keys, paths))
        plain = os.path.join(work, "plain.kcount")
        subprocess.run([make_log, plain], input=b"push step\nkernel 1000 K\npop\n", check=True)
        r = kcount("diff", "--format", "json", log, plain)
        doc = json.loads(r.out) if r.rc == 0 else {}
        paths = [x["path"] for x in doc.get("ranges", [])]
        work_only = (doc.get("overall", {}).get("work_differs") or {}).get("only_a")
        check("diff JSON: the same rule for its paths (ranges, work_differs)",
              "st\ufffdp/x, y" in paths and work_only == ["st\ufffdp"], (paths, work_only))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
