#!/usr/bin/env python3
"""The "(no range)" row means the same thing in every output: what ran outside every range.

On logs recorded on an NVIDIA H200 (examples/logs/, tests/data/), the launches, graph launches, kernels,
GPU time and launch-call time of "(no range)" are equal in:

- the `kcount summary` table (launches and kernels exactly, GPU and launch CPU time as the table rounds them),
- `summary --format json`: the row's "exclusive" and its "inclusive" numbers,
- `summary --format csv`: the row's excl_* and incl_* fields,
- `export --format csv`, `--format json` and `--format sqlite`: launches and kernels whose scopeId is 0.

The whole process is the JSON "overall" object and the CSV "(overall)" row, and equals the export's
launches and matched kernels of every range.

Usage: test_no_range_row.py BUILD_DIR
"""
import csv
import io
import json
import os
import re
import sqlite3
import sys
import tempfile

from checks import check, exit_status, kcount_out

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = [os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount"),
        os.path.join(ROOT, "examples", "logs", "linear-eager.kcount"),
        os.path.join(ROOT, "tests", "data", "graphs.kcount")]
KEYS = ("launches", "graph_launches", "kernels", "gpu_ns", "launch_api_ns")
UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def records(launches, kernels):
    """(no range) numbers and whole-process numbers from export rows (dicts with the CSV columns)."""
    def tally(ls, ks):
        return {"launches": len(ls), "graph_launches": sum(int(l["isGraphLaunch"]) for l in ls),
                "kernels": len(ks), "gpu_ns": sum(int(k["end"]) - int(k["start"]) for k in ks),
                "launch_api_ns": sum(int(l["end"]) - int(l["start"]) for l in ls)}
    root = tally([l for l in launches if str(l["scopeId"]) == "0"], [k for k in kernels if str(k["scopeId"]) == "0"])
    whole = tally(launches, [k for k in kernels if k["scopeId"] not in (None, "")])
    return root, whole


def table_row(text):
    """(launches, kernels, GPU time ns, launch CPU ns) of the "(no range)" row of the summary table."""
    lines = text.splitlines()
    head = next(l for l in lines if l.startswith("range "))
    cols = re.split(r"\s{2,}", head.strip())
    row = next(l for l in lines if l.startswith("(no range) "))
    cells = re.split(r"\s{2,}", row.strip())
    cell = dict(zip(cols, cells))
    def ns(s):
        num, unit = s.split()
        return float(num) * UNITS[unit]
    return int(cell["launches"]), int(cell["kernels"]), ns(cell["GPU time"]), ns(cell["launch CPU"])


def near(shown, ns):
    """The table shows 3 significant digits."""
    return abs(shown - ns) <= max(1, 0.006 * ns)


def main():
    with tempfile.TemporaryDirectory() as work:
        for log in LOGS:
            name = os.path.basename(log)
            s = json.loads(kcount_out("summary", "--format", "json", log))["logs"][0]
            root = s["ranges"][0]
            check(f"{name}: the first JSON row is (no range)", root["path"] == "(no range)")
            want = {k: root["exclusive"][k] for k in KEYS}
            check(f"{name}: (no range) holds launches and kernels", want["launches"] > 0 and want["kernels"] > 0, want)
            check(f"{name}: summary json: (no range) inclusive = exclusive",
                  {k: root["inclusive"][k] for k in KEYS} == want,
                  (root["inclusive"], want))
            check(f"{name}: summary json: memory operations and captured launches too",
                  root["inclusive"] == root["exclusive"])

            launches, kernels, gpu, api = table_row(kcount_out("summary", log))
            check(f"{name}: the table's (no range) row equals the JSON's",
                  (launches, kernels) == (want["launches"], want["kernels"]) and near(gpu, want["gpu_ns"])
                  and near(api, want["launch_api_ns"]),
                  ((launches, kernels, gpu, api), want))

            rows = list(csv.DictReader(io.StringIO(kcount_out("summary", "--format", "csv", log))))
            r = next(r for r in rows if r["path"] == "(no range)")
            check(f"{name}: summary csv: (no range) excl_* and incl_* equal the JSON's",
                  all(int(r["excl_" + k]) == want[k] and int(r["incl_" + k]) == want[k] for k in KEYS), r)
            over = [r for r in rows if r["path"] == "(overall)"]
            check(f"{name}: summary csv: the last row is (overall), the whole process, equal to JSON 'overall'",
                  len(over) == 1 and rows[-1] is over[0] and over[0]["depth"] == "" and over[0]["excl_kernels"] == ""
                  and all(int(over[0]["incl_" + k]) == s["overall"][k] for k in KEYS), over)
            check(f"{name}: JSON 'overall' counts every matched launch and kernel (totals)",
                  s["overall"]["kernels"] == s["totals"]["kernels"] and s["overall"]["launches"] == s["totals"]["launches"], (s["overall"], s["totals"]))

            out = os.path.join(work, name + "-csv")
            kcount_out("export", log, "--format", "csv", "-o", out)
            with open(os.path.join(out, "launches.csv"), newline="", encoding="utf-8") as f:
                ls = list(csv.DictReader(f))
            with open(os.path.join(out, "kernels.csv"), newline="", encoding="utf-8") as f:
                ks = list(csv.DictReader(f))
            got, whole = records(ls, ks)
            check(f"{name}: export csv: launches and kernels of scopeId 0 equal (no range)", got == want, (got, want))
            check(f"{name}: export csv: all rows equal 'overall'", all(whole[k] == s["overall"][k] for k in KEYS),
                  (whole, s["overall"]))

            out = os.path.join(work, name + ".json")
            kcount_out("export", log, "--format", "json", "-o", out)
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
            got, _ = records(doc["launches"], doc["kernels"])
            check(f"{name}: export json: launches and kernels of scopeId 0 equal (no range)", got == want, (got, want))
            paths = {sc["path"] for sc in doc["scopes"] if sc["scopeId"] == 0}
            check(f"{name}: export json: scope 0 is (no range)", paths == {"(no range)"}, paths)

            out = os.path.join(work, name + ".sqlite")
            kcount_out("export", log, "--format", "sqlite", "-o", out)
            db = sqlite3.connect(out)
            la = db.execute('SELECT count(*), coalesce(sum(isGraphLaunch), 0), coalesce(sum("end" - start), 0) '
                            'FROM launches WHERE scopeId = 0').fetchone()
            ka = db.execute('SELECT count(*), coalesce(sum("end" - start), 0) FROM kernels k JOIN scopes s '
                            'USING (processId, scopeId) WHERE s.path = \'(no range)\'').fetchone()
            db.close()
            got = {"launches": la[0], "graph_launches": la[1], "kernels": ka[0], "gpu_ns": ka[1], "launch_api_ns": la[2]}
            check(f"{name}: export sqlite: launches and kernels of (no range) equal the summary's",
                  got == want, (got, want))
    return exit_status()


if __name__ == "__main__":
    KCOUNT = os.path.join(os.path.abspath(sys.argv[1]), "bin", "kcount")
    sys.exit(main())
