#!/usr/bin/env python3
"""Logs recorded with KCOUNT_GPU_TIME=0 (metadata gpu_time = off: kernels counted at their launch calls,
start == end, device/stream/grid/block 0) in every output of the kcount tool: GPU time reads as not
recorded ('-' in text tables, null in JSON, an empty CSV field, a note line), never as 0 ns; `diff` gives
no GPU-time change when a side lacks GPU times; the Chrome trace has no GPU track; the HTML report's
chart defaults to kernel counts. Also: long range names shortened in the middle stay distinguishable
(examples/logs/sweep-eager.kcount); graph launches' kernels read from the graph in the example server's
count-only summary log recorded on an H100 (examples/logs/serve-count-only.kcount).

Logs are written by kc_make_log (tests/programs/make_log.cpp): the same script with and without
"meta gpu_time off". Usage: test_gpu_time_off.py BUILD_DIR KC_MAKE_LOG"""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from checks import check, failures, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "examples", "logs", "sweep-eager.kcount")
SERVE = os.path.join(ROOT, "examples", "logs", "serve-count-only.kcount")
KERNEL = "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN"


def make_log(path, ns, off):
    """20 steps, each with a gate range holding one launch of KERNEL, `ns` ns long."""
    lines = ["meta gpu_time off"] if off else []
    for _ in range(20):
        lines += ["push step", "push gate", f"kernel {ns} {KERNEL}", "pop", "pop"]
    subprocess.run([MAKE_LOG, path], input="\n".join(lines) + "\n", text=True, check=True)


def gpu_columns(table_text, head_line_prefix, names):
    """Cells of the columns `names` in the rows of a text table (split on 2+ spaces)."""
    lines = table_text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(head_line_prefix))
    head = re.split(r"\s{2,}", lines[start].strip())
    rows = []
    for l in lines[start + 2:]:
        if not l.strip() or l.startswith("-:") or ":" in l.split("  ")[0] and not l.startswith(" "):
            break
        rows.append(re.split(r"\s{2,}", l.strip()))
    return [[r[head.index(n)] for n in names] for r in rows if len(r) == len(head)]


def main():
    global KCOUNT, MAKE_LOG
    KCOUNT = os.path.join(os.path.abspath(sys.argv[1]), "bin", "kcount")
    MAKE_LOG = sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        off = os.path.join(work, "off.kcount")
        on = os.path.join(work, "on.kcount")
        make_log(off, 0, True)
        make_log(on, 1530000, False)

        # ---- summary: text, CSV, JSON
        rc, out, err = kcount("summary", off)
        cells = gpu_columns(out, "range", ["GPU time", "GEMM GPU", "other GPU"])
        check("summary: GPU columns '-'", rc == 0 and cells and all(c == ["-", "-", "-"] for c in cells), out)
        check("summary: totals line says not recorded",
              "GPU time not recorded" in out and "GPU time 0 ns" not in out, out)
        check("summary: note line", "GPU time: not recorded (KCOUNT_GPU_TIME=0)" in out, out)
        rc, out, err = kcount("summary", off, "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(out)))
        check("summary csv: gpu_ns fields empty, kernels kept",
              rows and all(r["excl_gpu_ns"] == "" and r["incl_gpu_ns"] == "" for r in rows)
              and any(r["incl_kernels"] == "20" for r in rows), out)
        rc, out, err = kcount("summary", on, "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(out)))
        check("summary csv of a log with GPU times: gpu_ns kept",
              any(r["incl_gpu_ns"] == str(20 * 1530000) for r in rows), out)
        rc, out, err = kcount("summary", off, "--format", "json")
        j = json.loads(out)["logs"][0]
        check("summary json: gpu_time false, gpu_ns null", j["gpu_time"] is False and j["totals"]["gpu_ns"] is None
              and all(r["inclusive"]["gpu_ns"] is None for r in j["ranges"])
              and j["totals"]["kernels"] == 20, j["totals"])
        rc, out, err = kcount("summary", on, "--format", "json")
        j = json.loads(out)["logs"][0]
        check("summary json with GPU times: numbers",
              j["gpu_time"] is True and j["totals"]["gpu_ns"] == 20 * 1530000, j["totals"])

        # ---- summary A B: the across-logs table
        rc, out, err = kcount("summary", on, off)
        across = out[out.index("== across"):] if "== across" in out else ""
        off_cells = [re.split(r"\s{2,}", l)[2] for l in across.splitlines()[3:] if len(re.split(r"\s{2,}", l)) > 3]
        check("summary A B: across table shows '-' for the log without GPU times, and a note",
              rc == 0 and across and "not recorded in" in across and off_cells and set(off_cells) == {"-"}, across)
        check("summary A B: not added up by default, the note says so",
              "(KCOUNT_GPU_TIME=0): '-', left out of the spread" in across and "\nnot added up: " in across
              and " total " not in across.splitlines()[1], across)
        rc, out, err = kcount("summary", "--sum", on, off)
        across = out[out.index("== across"):] if "== across" in out else ""
        row = next((l for l in across.splitlines() if l.startswith("step ")), "")
        check("summary --sum A B: '-' cell, total of the recorded log",
              re.search(r"30\.6 ms\s+-\s+30\.6 ms", row) is not None
              and "(KCOUNT_GPU_TIME=0): '-', left out of total and spread" in across, across)
        rc, out, err = kcount("summary", on, off, "--format", "json")

        # ---- kernels: text, CSV, JSON
        rc, out, err = kcount("kernels", off)
        cells = gpu_columns(out, "kernel", ["GPU total", "GPU avg", "grid", "block"])
        check("kernels: GPU total/avg, grid, block '-'", rc == 0 and cells and all(c == ["-"] * 4 for c in cells), out)
        check("kernels: note, no 0 ns",
              "GPU time: not recorded in" in out and "0 ns" not in out and "0x0x0" not in out, out)
        rc, out, err = kcount("kernels", off, "--format", "csv")
        rows = list(csv.DictReader(io.StringIO(out)))
        check("kernels csv: gpu_ns, grid, block empty",
              len(rows) == 1 and rows[0]["count"] == "20" and rows[0]["gpu_ns"] == "" and rows[0]["grid_x"] == ""
              and rows[0]["block_z"] == "", out)
        rc, out, err = kcount("kernels", off, "--format", "json")
        j = json.loads(out)
        check("kernels json: gpu_time false, gpu_ns null",
              j["gpu_time"] is False and j["kernels"][0]["gpu_ns"] is None and j["kernels"][0]["count"] == 20, j)
        check("kernels json: grid and block null (the table's '-')",
              j["kernels"][0].get("grid", 0) is None and j["kernels"][0].get("block", 0) is None, j)
        rc, out, err = kcount("kernels", on, "--format", "json")
        j = json.loads(out)
        check("kernels json with GPU times: grid and block as the table's 1x1x1, 128x1x1",
              j["kernels"][0].get("grid") == [1, 1, 1] and j["kernels"][0].get("block") == [128, 1, 1], j)
        rc, out, err = kcount("kernels", on, off, "--format", "json")
        j = json.loads(out)
        per = {p["path"]: p for p in j["kernels"][0]["per_log"]}
        check("kernels json of two logs: per_log gpu_time, merged gpu_ns null",
              per[off]["gpu_ns"] is None and per[off]["gpu_time"] is False and per[on]["gpu_ns"] == 20 * 1530000
              and j["kernels"][0]["gpu_ns"] is None, j)
        rc, out, err = kcount("kernels", off, on, "--format", "json")
        j = json.loads(out)
        per = {p["path"]: p for p in j["kernels"][0]["per_log"]}
        check("kernels json of two logs, the one without GPU times first: grid and block of the log that has "
              "them, null in the other's per_log",
              j["kernels"][0].get("grid") == [1, 1, 1] and per[on].get("block") == [128, 1, 1]
              and per[off].get("grid", 0) is None and per[off].get("block", 0) is None, j)

        # ---- diff: no GPU-time change when a side lacks GPU times
        rc, out, err = kcount("diff", on, off)
        check("diff: no GPU-time change to 0 ns", rc == 0 and "-100%" not in out and "-> 0 ns" not in out, out)
        check("diff: verdicts and note say GPU time not recorded in B",
              "GPU time not recorded in B" in out and "GPU time: not recorded in B" in out, out)
        check("diff: verdicts compare kernel counts", "kernels 20 -> 20" in out, out)
        rc, out, err = kcount("diff", on, off, "--format", "json")
        j = json.loads(out)
        check("diff json: gpu_time per side, null GPU times",
              j["gpu_time"] == {"a": True, "b": False} and j["overall"]["b"]["gpu_ns"] is None
              and j["overall"]["a"]["gpu_ns"] == 20 * 1530000 and j["overall"]["change"]["gpu_ns"] is None
              and j["overall"]["change"]["kernels"] == 0, j["overall"])
        rc, out, err = kcount("diff", on, on)
        check("diff of two logs with GPU times: GPU-time change as before",
              rc == 0 and "not recorded" not in out and "GPU time 30.6 ms -> 30.6 ms" in out, out)

        # ---- export: chrome (no GPU track, instant events on the launching thread), csv, json
        trace = os.path.join(work, "off.json")
        rc, out, err = kcount("export", off, "--format", "chrome", "-o", trace)
        with open(trace) as f:
            t = json.load(f)
        events = t["traceEvents"] if isinstance(t, dict) else t
        names = [e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"]
        kern = [e for e in events if e.get("cat") == "kernel"]
        inst = [e for e in events if e.get("cat") == "kernel_launched"]
        launches = {(e["tid"], e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "cuda_api"}
        check("chrome: no GPU track, kernel slice or flow",
              rc == 0 and not kern and not any(n.startswith("GPU ") for n in names)
              and not any(e.get("ph") in ("s", "f") for e in events), names)
        check("chrome: 20 instant events inside their launch calls",
              len(inst) == 20 and all(e["ph"] == "i" and e["s"] == "t" and "not recorded" in e["args"]["gpu time"]
                                      and any(tid == e["tid"] and a <= e["ts"] <= b for tid, a, b in launches)
                                      for e in inst), inst[:2])
        trace_on = os.path.join(work, "on.json")
        kcount("export", on, "--format", "chrome", "-o", trace_on)
        with open(trace_on) as f:
            t = json.load(f)
        events = t["traceEvents"] if isinstance(t, dict) else t
        check("chrome with GPU times: 20 kernel slices", len([e for e in events if e.get("cat") == "kernel"]) == 20
              and not any(e.get("cat") == "kernel_launched" for e in events))
        folder = os.path.join(work, "off.csv")
        rc, out, err = kcount("export", off, "--format", "csv", "-o", folder)
        with open(os.path.join(folder, "kernels.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        check("export csv: kernels' start/end/stream/grid empty",
              rc == 0 and len(rows) == 20 and all(r["start"] == "" and r["end"] == "" and r["gridX"] == ""
                                                  and r["streamId"] == "" and r["shortName"] for r in rows), rows[:1])
        records = os.path.join(work, "off.records.json")
        rc, out, err = kcount("export", off, "--format", "json", "-o", records)
        with open(records) as f:
            r = json.load(f)
        k0 = r["kernels"][0]
        check("export json: kernels' GPU fields null",
              rc == 0 and k0["start"] is None and k0["deviceId"] is None and k0["blockX"] is None
              and k0["correlationId"] is not None, k0)

        # ---- HTML report: the run says gpu_time false; the page defaults to kernel counts with a note
        page_path = os.path.join(work, "off.html")
        rc, out, err = kcount("report", off, "-o", page_path)
        with open(page_path) as f:
            page = f.read()
        m = re.search(r'<script id="kcount-data" type="application/json">(.*?)</script>', page, re.S)
        data = json.loads(m.group(1)) if m else {"runs": [{}]}
        check("report: embedded run has gpu_time false", rc == 0 and data["runs"][0].get("gpu_time") is False)
        check("report: the page has its note for runs without GPU time", "kc-gpu-note" in page)
        # Rendered in headless Chromium (as tests/cli/test_html_report.py): one run, and A (on) vs B (off).
        exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
        check("chromium is installed (scripts/install_deps.sh installs it)", exe is not None)
        two_path = os.path.join(work, "two.html")
        kcount("report", on, off, "-o", two_path)
        for path, runs in ((page_path, 1), (two_path, 2)) if exe else ():
            profile = tempfile.mkdtemp(dir=work)
            dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                  "--disable-component-update", "--disable-sync", "--no-first-run",
                                  "--user-data-dir=" + profile, "--window-size=1400,900", "--dump-dom",
                                  "file://" + path], capture_output=True, text=True, timeout=120).stdout
            status = re.search(r'<div id="kc-status"([^>]*)>', dom)
            attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', status.group(1))) if status else {}
            check(f"report of {runs} run(s): rendered, chart width by kernel count",
                  attrs.get("state") == "ok" and attrs.get("metric") == "kernels", attrs)
            check(f"report of {runs} run(s): note and run header say GPU time not recorded",
                  'id="kc-gpu-note"' in dom and "GPU time not recorded in off" in dom and "time not recorded" in dom)
            check(f"report of {runs} run(s): the chart has a block for step/gate", 'data-path="step/gate"' in dom)

        # ---- long range names shortened so rows stay distinguishable (sweep-eager)
        rc, out, err = kcount("summary", "--all", SWEEP, "--view", "inclusive")
        lines = out.splitlines()
        rule = next(i for i, l in enumerate(lines) if l.startswith("---"))
        labels = []
        for l in lines[rule + 1:]:
            if not l.strip() or l.startswith("verdicts") or l.startswith("totals"):
                break
            labels.append(re.split(r"\s{2,}", l.strip())[0])
        check("sweep-eager: every range row label differs", len(labels) > 5 and len(set(labels)) == len(labels),
              [x for x in labels if labels.count(x) > 1])
        rc, out, err = kcount("summary", "--all", SWEEP)  # tree view: the top ranges are the five sweep blocks
        blocks = [re.split(r"\s{2,}", l)[0] for l in out.splitlines() if l.startswith("block ")]
        check("sweep-eager tree view: the five block rows differ", len(blocks) == 5 and len(set(blocks)) == 5, blocks)
        check("sweep-eager: the colliding names (attn=sdpa, attn=none) keep their differing part",
              any("attn=s" in x for x in blocks) and any("attn=n" in x for x in blocks), blocks)
        notes = [l.split(": ")[0] for l in lines if l.startswith("  ") and ": " in l]
        check("sweep-eager: verdict lines distinguishable", len(set(notes)) == len(notes),
              [x for x in notes if notes.count(x) > 1])
        rc, out, err = kcount("summary", "--all", SWEEP)
        lines = out.splitlines()
        notes = [l.split(": ")[0] for l in lines if l.startswith("  ") and ": " in l]
        check("sweep-eager tree view: verdict lines distinguishable", notes and len(set(notes)) == len(notes),
              [x for x in notes if notes.count(x) > 1])
        wide = [x for x in labels if len(x) > 60]
        # A colliding name is shortened no further than the word where it differs (attn=sdpa, attn=none)
        # reaches: a sweep block's own name (66 characters) is then shown whole.
        check("sweep-eager: only colliding names are wider",
              all("…" in x or re.fullmatch(r"block [^/]*attn=(sdpa|none)[^/]*", x) for x in wide)
              and len(wide) < len(labels), [x for x in wide if "…" not in x][:5])
    # ---- graph kernels without activity: examples/serve.py's decode step is one replay of a CUDA graph of
    # 239 kernel nodes (serve.py's startup line, cuGraphGetNodes), recorded with KCOUNT_MODE=summary
    # KCOUNT_GPU_TIME=0 from the start (so the graph was instantiated while kcount recorded).
    rc, out, err = kcount("summary", "--format", "json", SERVE)
    log = json.loads(out)["logs"][0] if rc == 0 else {}
    ranges = {r["path"]: r for r in log.get("ranges", [])}
    dec = ranges.get("request/decode", {})
    ex = dec.get("exclusive", {})
    check("serve-count-only: request/decode is 155 graph launches of 239 kernels each",
          (dec.get("instances"), ex.get("launches"), ex.get("graph_launches"), ex.get("kernels"),
           dec.get("kernels_per_instance")) == (155, 155, 155, 155 * 239, 239.0), (rc, err, dec and ex))
    nvjet = {k["name"]: k["count"] for k in dec.get("kernels", [])}.get("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT")
    check("serve-count-only: graph kernels named (20 of one GEMM kernel per decode step)", nvjet == 20 * 155, nvjet)
    check("serve-count-only: no launch without kernel, GPU time not recorded",
          log.get("totals", {}).get("launches_without_kernel") == 0 and log.get("gpu_time") is False,
          log.get("totals"))
    rc, out, err = kcount("summary", SERVE)
    check("serve-count-only: the totals line names the launches captured into the graph (they run nothing)",
          "(169 graph launches, 239 captured into graphs)" in out, [l for l in out.splitlines() if "totals" in l])
    check("serve-count-only: the note says graph kernels were read from the graph",
          "read from the graph" in out and "not known" not in out, out[-600:])
    rc, out, err = kcount("check", SERVE)
    check("serve-count-only: check says GPU time was not recorded and where the kernels come from",
          "GPU time: not recorded (KCOUNT_GPU_TIME=0): kernels counted at their launch calls, a graph launch's read "
          "from its graph\n" in out, out[-800:])
    rc, out, err = kcount("kernels", SERVE, "--width", "100")
    head = next((l for l in out.splitlines() if l.startswith("kernel ")), "")
    check("serve-count-only: kernels --width 100 leaves out the all-'-' GPU and grid/block columns first, keeps ranges",
          rc == 0 and "ranges" in head and "GPU total" not in head and "grid" not in head
          and "columns left out to fit 100 display columns: GPU total, GPU avg, block, grid" in out, (rc, out[:400]))

    if failures:
        print(f"{len(failures)} FAILED")
        sys.exit(1)
    print("all passed")


if __name__ == "__main__":
    main()
