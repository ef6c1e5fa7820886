#!/usr/bin/env python3
"""What the `kcount summary` table shows, the machine-readable outputs carry, on the logs recorded on an
NVIDIA H200 (examples/logs/, tests/data/) and on logs written by kc_make_log:

- `summary --format csv` has a field for every quantity of a table row: GEMM and other GPU time, memory
  operations and their GPU time (excl_* with `--view innermost`, incl_* with `--view inclusive`), and its
  `cpu_ns` is empty exactly where the table's `CPU time` is '-' (not measured), never 0; the original
  columns keep their names and places; memcpy and memset apart, as JSON has them, in the last columns;
- the library's reserved scope 1, "(string table full)", defined in every log it writes, is a row or a
  scope of `summary --format json|csv` and of `export --format json|csv|sqlite` only where the table
  shows it (none of the shipped logs filled its tables).

Usage: test_table_parity.py BUILD_DIR [KC_MAKE_LOG]
"""
import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount_out

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = [os.path.join(ROOT, "examples", "logs", n) for n in
        ("geglu-eager.kcount", "geglu-compiled.kcount", "linear-eager.kcount", "sweep-eager.kcount")] + \
       [os.path.join(ROOT, "tests", "data", n) for n in ("graphs.kcount", "launches.kcount", "sigkill.kcount")]
RESERVED = "(string table full)"
OLD_COLUMNS = ("log,path,depth,instances,cpu_ns,excl_launches,excl_graph_launches,excl_kernels,excl_gpu_ns,"
               "excl_launch_api_ns,incl_launches,incl_graph_launches,incl_kernels,incl_gpu_ns,incl_launch_api_ns,"
               "kernels_per_instance,top_kernels").split(",")
UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def table_rows(text):
    """The summary table's rows as dicts by column heading (cells split at 2+ spaces)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("range "))
    head = re.split(r"\s{2,}", lines[start].strip())
    rows = []
    for l in lines[start + 2:]:  # heading, rule
        if not l.strip() or l.startswith(("*:", "!:", "verdicts", "totals", "launches:")):
            break
        cells = re.split(r"\s{2,}", l.strip())
        if len(cells) != len(head):
            break
        rows.append(dict(zip(head, cells)))
    return head, rows


def ns(text):
    num, unit = text.split()
    return float(num) * UNITS[unit]


def near(shown, value):
    """The table shows 3 significant digits."""
    return abs(ns(shown) - int(value)) <= max(1, 0.006 * int(value))


def compare(name, view, prefix, table_text, csv_rows):
    """One table row per CSV range row, in the same order: their shared quantities agree."""
    head, rows = table_rows(table_text)
    ranges = [r for r in csv_rows if r["path"] != "(overall)"]
    check(f"{name} ({view}): one table row per CSV range row", len(rows) == len(ranges), (len(rows), len(ranges)))
    mem = "mem ops" in head
    bad = []
    for t, c in zip(rows, ranges):
        if (t["CPU time"] == "-") != (c["cpu_ns"] == ""):
            bad.append(("CPU time", t["range"], t["CPU time"], c["cpu_ns"]))
        elif t["CPU time"] != "-" and not near(t["CPU time"], c["cpu_ns"]):
            bad.append(("CPU time", t["range"], t["CPU time"], c["cpu_ns"]))
        for col, key in (("GEMM GPU", "gemm_gpu_ns"), ("other GPU", "other_gpu_ns"), ("GPU time", "gpu_ns")):
            if not near(t[col], c[prefix + key]):
                bad.append((col, t["range"], t[col], c[prefix + key]))
        if mem:
            if int(t["mem ops"]) != int(c[prefix + "mem_ops"]) or not near(t["mem GPU"], c[prefix + "mem_gpu_ns"]):
                bad.append(("mem", t["range"], t["mem ops"], t["mem GPU"], c[prefix + "mem_ops"], c[prefix + "mem_gpu_ns"]))
        elif c[prefix + "mem_ops"] != "0":
            bad.append(("mem ops without the table's column", t["range"], c[prefix + "mem_ops"]))
        if view == "inclusive":
            kpl, want = t["kernels/launch"], c["kernels_per_launch"]
            if (kpl == "-") != (want == "") or (want and abs(float(kpl) - float(want)) > 0.0051):
                bad.append(("kernels/launch", t["range"], kpl, want))
    check(f"{name} ({view}): CSV {prefix}* fields equal the table's GEMM, other, GPU, CPU, mem columns", not bad, bad)
    return mem


def test_shipped(work):
    mem_seen = False
    for log in LOGS:
        name = os.path.basename(log)
        text = kcount_out("summary", "--format", "csv", log)
        header = text.splitlines()[0].split(",")
        check(f"{name}: summary csv: the original columns keep their places", header[:len(OLD_COLUMNS)] == OLD_COLUMNS,
              header)
        rows = list(csv.DictReader(io.StringIO(text)))
        check(f"{name}: summary csv: every row has every field",
              all(len(r) == len(header) and None not in r for r in rows))
        no_range = next(r for r in rows if r["path"] == "(no range)")
        check(f"{name}: summary csv: (no range) has no CPU time (empty, the table's '-'), not 0",
              no_range["cpu_ns"] == "" and no_range["instances"] == "0", no_range["cpu_ns"])
        over = rows[-1]
        check(f"{name}: summary csv: (overall) splits the whole GPU time into GEMM and other",
              over["path"] == "(overall)" and over["excl_gemm_gpu_ns"] == "" and over["incl_gemm_gpu_ns"] != ""
              and int(over["incl_gemm_gpu_ns"]) + int(over["incl_other_gpu_ns"]) == int(over["incl_gpu_ns"]), over)
        mem_seen |= compare(name, "inclusive", "incl_", kcount_out("summary", "--all", "--view", "inclusive", log), rows)
        compare(name, "innermost", "excl_", kcount_out("summary", "--all", "--view", "innermost", log), rows)

        for view in ("inclusive", "innermost"):
            wide = kcount_out("summary", "--all", "--wide", "--view", view, log)
            trailing = [l for l in wide.splitlines() if l.endswith(" ")]
            check(f"{name}: summary --wide --view {view}: no line ends in blanks", not trailing, trailing[:2])
        # The reserved scope: nowhere unless the table shows it.
        shown = RESERVED in kcount_out("summary", "--all", log)
        check(f"{name}: the table has no '{RESERVED}' row (the log's tables never filled)", not shown)
        js = json.loads(kcount_out("summary", "--format", "json", log))["logs"][0]
        check(f"{name}: summary json agrees", all(RESERVED not in r["path"] for r in js["ranges"]) == (not shown))
        js_no_range = next(r for r in js["ranges"] if r["path"] == "(no range)")
        check(f"{name}: summary json: (no range) has no CPU time (null, the table's '-'), not 0",
              js_no_range["cpu_ns"] is None and js_no_range["instances"] == 0, js_no_range["cpu_ns"])
        check(f"{name}: summary json: cpu_ns is null exactly where there is no instance",
              all((r["cpu_ns"] is None) == (r["instances"] == 0) for r in js["ranges"]))
        check(f"{name}: summary csv agrees", all(RESERVED not in r["path"] for r in rows) == (not shown))
        out = os.path.join(work, name + ".json")
        kcount_out("export", log, "--format", "json", "-o", out)
        with open(out, encoding="utf-8") as f:
            doc = json.load(f)
        paths = {s["path"] for s in doc["scopes"]}
        check(f"{name}: export json: scope '{RESERVED}' listed only as the table shows it",
              (RESERVED in paths) == shown and "(no range)" in paths, sorted(paths)[:5])
        used = {r["path"] for r in js["ranges"] if not r["placeholder"]} - {"(no range)"}
        check(f"{name}: export json: every range of the summary is a scope", used <= paths, used - paths)
        scopes_csv = kcount_out("export", log, "--format", "csv", "--table", "scopes", "-o", "-")
        check(f"{name}: export csv: no '{RESERVED}' scope", RESERVED not in scopes_csv)
        out = os.path.join(work, name + ".sqlite")
        kcount_out("export", log, "--format", "sqlite", "-o", out)
        db = sqlite3.connect(out)
        n = db.execute("SELECT count(*) FROM scopes WHERE path = ?", (RESERVED,)).fetchone()[0]
        strings = db.execute("SELECT count(*) FROM strings WHERE value = ?", (RESERVED,)).fetchone()[0]
        db.close()
        check(f"{name}: export sqlite: no '{RESERVED}' scope or string", n == 0 and strings == 0, (n, strings))
    check("a shipped log has memory operations (the mem columns were compared)", mem_seen)


def test_made(work):
    """Memory operations in a range, KCOUNT_GPU_TIME=0 (GPU fields and memory operations not measured)."""
    def make(name, script):
        path = os.path.join(work, name)
        subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
        return path

    log = make("copies.kcount", "push warmup\nmemcpy 7000 4096\nmemcpy 5000 4096\nkernel 1000 "
                                "ampere_sgemm_128x64_nn\nkernel 300 vectorized_elementwise_kernel\npop\n"
                                "push step\nkernel 200 vectorized_elementwise_kernel\npop\n")
    rows = {r["path"]: r for r in csv.DictReader(io.StringIO(kcount_out("summary", "--format", "csv", log)))}
    w = rows["warmup"]
    check("made log: warmup's two copies (12 µs) are in excl_/incl_mem_ops and *_mem_gpu_ns",
          (w["excl_mem_ops"], w["excl_mem_gpu_ns"], w["incl_mem_ops"], w["incl_mem_gpu_ns"]) == ("2", "12000", "2", "12000"), w)
    check("made log: warmup's GEMM (1 µs) and other (300 ns) kernel time",
          (w["excl_gemm_gpu_ns"], w["excl_other_gpu_ns"], w["excl_gpu_ns"]) == ("1000", "300", "1300"), w)
    check("made log: a range with an instance has its CPU time",
          w["cpu_ns"] != "" and int(w["cpu_ns"]) > 0 and w["kernels_per_launch"] == "1.000", w)
    over = rows["(overall)"]
    check("made log: (overall) carries every memory operation in incl_*, excl_* empty",
          (over["incl_mem_ops"], over["incl_mem_gpu_ns"], over["excl_mem_ops"]) == ("2", "12000", ""), over)
    compare("copies.kcount", "inclusive", "incl_", kcount_out("summary", "--all", "--view", "inclusive", log),
            list(csv.DictReader(io.StringIO(kcount_out("summary", "--format", "csv", log)))))

    check("made log: warmup's copies apart in excl_/incl_memcpy_* (count, bytes, GPU ns), no memset",
          tuple(w.get(f"{v}_{op}_{q}") for v in ("excl", "incl") for op in ("memcpy", "memset")
                for q in ("ops", "bytes", "gpu_ns")) == ("2", "8192", "12000", "0", "0", "0") * 2, w)
    check("made log: (overall) has the copies in incl_memcpy_*, its excl_memcpy_* and excl_memset_* empty",
          (over.get("incl_memcpy_ops"), over.get("incl_memcpy_bytes"), over.get("excl_memcpy_ops"),
           over.get("excl_memset_gpu_ns")) == ("2", "8192", "", ""), over)

    off = make("gpu-off.kcount", "meta gpu_time off\npush step\nkernel 0 ampere_sgemm_128x64_nn\npop\n")
    rows = list(csv.DictReader(io.StringIO(kcount_out("summary", "--format", "csv", off))))
    step = next(r for r in rows if r["path"] == "step")
    fields = [k for k in step if k.endswith(("gpu_ns", "mem_ops")) or "memcpy" in k or "memset" in k]
    check("KCOUNT_GPU_TIME=0: every GPU-time and memory-operation field is empty (not measured), counts kept",
          len(fields) == 24 and all(step[k] == "" for k in fields) and step["incl_kernels"] == "1",
          {k: step[k] for k in fields})


def test_memcpy_memset_apart():
    """`summary --format csv` carries memcpy and memset apart, as JSON's "memcpy" and "memset" objects, in
    columns after the others; every row has the header's fields (tests/data/launches.kcount: range memops
    ran 3 copies of 12288 bytes and a memset)."""
    log = os.path.join(ROOT, "tests", "data", "launches.kcount")
    text = kcount_out("summary", "--format", "csv", log)
    lines = list(csv.reader(io.StringIO(text)))
    check("summary csv: the memcpy/memset columns after domain, then the graph spans', the old ones in place; "
          "every row as wide",
          lines[0][26:] == ["domain"] + [f"{v}_{op}_{q}" for v in ("excl", "incl") for op in ("memcpy", "memset")
                                         for q in ("ops", "bytes", "gpu_ns")]
          + [f"{v}_graph_gpu_{q}" for v in ("excl", "incl") for q in ("launches", "ns")]
          and all(len(l) == len(lines[0]) for l in lines), lines[0])
    rows = {r["path"]: r for r in csv.DictReader(io.StringIO(text))}
    j = json.loads(kcount_out("summary", "--format", "json", log))["logs"][0]
    bad = []
    for r in j["ranges"]:
        row = rows.get(r["path"]) if "\\" not in r["path"] else None
        if row is None:
            continue
        for v, key in (("excl", "exclusive"), ("incl", "inclusive")):
            for op in ("memcpy", "memset"):
                want = tuple(str(r[key][op][q]) for q in ("count", "bytes", "gpu_ns"))
                got = tuple(row.get(f"{v}_{op}_{q}") for q in ("ops", "bytes", "gpu_ns"))
                if got != want:
                    bad.append((r["path"], v, op, got, want))
    check("summary csv: each range's memcpy and memset fields are the JSON's", not bad and "memops" in rows, bad[:4])
    m = rows.get("memops", {})
    check("summary csv: memops' 3 copies of 12288 bytes and its memset, apart",
          (m.get("excl_memcpy_ops"), m.get("excl_memcpy_bytes"), m.get("excl_memset_ops"), m.get("excl_mem_ops"))
          == ("3", "12288", "1", "4"), m)


def main():
    with tempfile.TemporaryDirectory() as work:
        test_shipped(work)
        test_made(work)
    test_memcpy_memset_apart()
    return exit_status()


if __name__ == "__main__":
    build = os.path.abspath(sys.argv[1])
    KCOUNT = os.path.join(build, "bin", "kcount")
    MAKE_LOG = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(build, "bin", "kc_make_log")
    sys.exit(main())
