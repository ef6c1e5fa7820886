#!/usr/bin/env python3
"""One kernel name launched with several grids or blocks (Inductor reuses a Triton kernel across graphs),
through the kcount command, on logs made by kc_make_log.

  table  `kcount kernels` shows the first record's grid and block, and "(1 of N)" after one of N different
         ones (16 and more: "(1 of 16+)"), with a line under the table saying so; one shape: no mark.
  csv    the columns of before keep their names, places and values (grid_x..block_z: the first record's);
         distinct_grids and distinct_blocks end each row.
  json   "grid"/"block" as before, "distinct_grids"/"distinct_blocks" beside them (per log too).
  merge  two logs: the union of their grids.
  html   `kcount report`: the kernels table's grid / block cell in Chromium reads "... (1 of 3) / ...", the
         grids in its tooltip.
Summary-mode logs (grid and block not known: '-', empty, null) are checked in unit/test_summary_mode.cpp.
Usage: test_kernel_shapes.py BUILD_DIR KC_MAKE_LOG
"""
import csv
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, exit_status

build, make_log = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
kcount = os.path.join(build, "bin", "kcount")
TRITON = "triton_poi_fused_gelu_mul_0"


def kc(*args):
    return subprocess.run([kcount, *args], capture_output=True, text=True)


def make(path, lines):
    subprocess.run([make_log, path], input="\n".join(lines) + "\n", text=True, check=True)
    return path


def row(table, name):
    """Cells of the table row whose first cell is `name` (cells apart by two blanks or more)."""
    for line in table.splitlines():
        cells = re.split(r" {2,}", line.strip())
        if cells and cells[0] == name:
            return cells
    return []


with tempfile.TemporaryDirectory() as work:
    lines = ["push step"]
    for grid in (2048, 1024, 2048, 512, 2048):  # 3 grids, one block
        lines += [f"grid {grid} 1 1", f"kernel 100 {TRITON}"]
    lines += ["grid 1 1 1"] + ["kernel 50 gemm"] * 3  # one grid, one block
    for i in range(1, 21):  # 20 grids and 20 blocks: counted up to 16
        lines += [f"grid {i} 1 1", f"block {i} 1 1", "kernel 10 many"]
    lines += ["pop"]
    one = make(os.path.join(work, "one.kcount"), lines)

    r = kc("kernels", one)
    t = r.stdout
    check("table: the Triton kernel's grid is the first record's, one of 3", r.returncode == 0 and
          row(t, TRITON)[4:6] == ["2048x1x1 (1 of 3)", "128x1x1"], t)
    check("table: 20 grids and blocks read (1 of 16+)", row(t, "many")[4:6] == ["1x1x1 (1 of 16+)"] * 2, t)
    check("table: one shape, no mark", row(t, "gemm")[4:6] == ["1x1x1", "128x1x1"], t)
    check("table: a line under it explains the mark", "grid, block 'AxBxC (1 of N)': the first record's, of N "
          "different ones" in t, t)

    r = kc("kernels", "--format", "csv", one)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    head = r.stdout.splitlines()[0] if r.stdout else ""
    check("csv: the columns of before in their places, the counts last",
          head == "log,kernel,name,count,gpu_ns,grid_x,grid_y,grid_z,block_x,block_y,block_z,ranges,category,"
          "library,tile,cluster,stages,dtype,layout,epilogue,fused_ops,distinct_grids,distinct_blocks", head)
    by = {x["name"]: x for x in rows}
    check("csv: grid_x the first record's, distinct_grids 3, distinct_blocks 1", TRITON in by and
          (by[TRITON]["grid_x"], by[TRITON].get("distinct_grids"), by[TRITON].get("distinct_blocks")) == ("2048", "3", "1"), rows)
    check("csv: 16 for 16 or more", "many" in by and (by["many"].get("distinct_grids"), by["many"].get("distinct_blocks")) ==
          ("16", "16"), rows)

    r = kc("kernels", "--format", "json", one)
    ks = {k["name"]: k for k in json.loads(r.stdout)["kernels"]} if r.returncode == 0 else {}
    check("json: grid as before, distinct_grids and distinct_blocks beside it", TRITON in ks and
          ks[TRITON]["grid"] == [2048, 1, 1] and ks[TRITON].get("distinct_grids") == 3 and
          ks[TRITON].get("distinct_blocks") == 1 and ks["gemm"].get("distinct_grids") == 1 and
          ks["many"].get("distinct_grids") == 16, ks.get(TRITON))

    other = make(os.path.join(work, "other.kcount"), ["push step", "grid 4096 1 1", f"kernel 100 {TRITON}",
                                                        "grid 2048 1 1", f"kernel 100 {TRITON}", "pop"])
    r = kc("kernels", "--format", "json", one, other)
    ks = {k["name"]: k for k in json.loads(r.stdout)["kernels"]} if r.returncode == 0 else {}
    per = [p.get("distinct_grids") for p in ks.get(TRITON, {}).get("per_log", [])]
    check("merge: two logs, 4 grids in all (3 and 2, one shared), per log each its own",
          ks.get(TRITON, {}).get("distinct_grids") == 4 and per == [3, 2], ks.get(TRITON))
    r = kc("kernels", one, other)
    check("merge: the table's row of each log marks its own", "2048x1x1 (1 of 3)" in r.stdout and
          "4096x1x1 (1 of 2)" in r.stdout, r.stdout)

    exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
    check("chromium is installed (scripts/install_deps.sh)", exe is not None)
    if exe:
        page = os.path.join(work, "r.html")
        r = kc("report", one, "-o", page)
        profile = tempfile.mkdtemp(dir=work)
        dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                              "--disable-component-update", "--disable-sync", "--no-first-run",
                              "--user-data-dir=" + profile, "--dump-dom", "file://" + page],
                             capture_output=True, text=True, timeout=120).stdout
        cells = [(html.unescape(title or ""), html.unescape(text))
                 for _, title, text in re.findall(r'<td([^>]*?title="([^"]*)")?[^>]*>([^<]*)</td>', dom)]
        texts = [c[1] for c in cells]
        check("html: the grid / block cell reads 2048×1×1 (1 of 3) / 128×1×1", "2048×1×1 (1 of 3) / 128×1×1" in texts,
              [t for t in texts if "×" in t])
        check("html: 20 shapes read (1 of 16+)", "1×1×1 (1 of 16+) / 1×1×1 (1 of 16+)" in texts,
              [t for t in texts if "×" in t])
        tips = [c[0] for c in cells if c[1].startswith("2048×1×1 (1 of 3)")]
        check("html: the tooltip lists the grids", tips and "2048×1×1, 1024×1×1, 512×1×1" in tips[0], tips)

sys.exit(exit_status())
