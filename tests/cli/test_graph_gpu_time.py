#!/usr/bin/env python3
"""A trace log recorded with KCOUNT_GPU_TIME=graphs (metadata gpu_time = graphs: kernels counted at their
launch calls, plus one GPU span per graph launch, a MemOp record of kind graph) in the outputs of the kcount
tool: the summary table's `graph GPU` column and its note, JSON's graph_gpu_launches/graph_gpu_ns per range,
kernel GPU times still not recorded, `check`'s GPU-time line, the SQLite export's memops kind 'graph' and
the Chrome trace's graph slices.

Usage: test_graph_gpu_time.py BUILD_DIR KC_MAKE_LOG"""
import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount, kcount_out

MAKE_LOG = sys.argv[2]


def main():
    tmp = tempfile.mkdtemp(prefix="kcount-graph-gpu-")
    log = os.path.join(tmp, "graphs.kcount")
    # 10 decode steps: one graph launch of 3 kernels whose GPU span is 50 us, then a sample kernel launched
    # directly (no GPU time); one graph launch outside every range.
    lines = ["meta gpu_time graphs"]
    for _ in range(10):
        lines += ["push decode", "graphrun 50000 3 _Z6layerv", "pop", "push sample", "kernel 0 _Z6samplev", "pop"]
    lines += ["graphrun 7000 3 _Z6layerv"]
    subprocess.run([MAKE_LOG, log], input="\n".join(lines) + "\n", text=True, check=True)

    table = kcount_out("summary", log, "--width", "200")
    head = next(l for l in table.splitlines() if l.startswith("range"))
    check("summary: a graph GPU column", "graph GPU" in head, table)
    decode = next((l for l in table.splitlines() if l.startswith("decode")), "")
    check("summary: decode's graph GPU is its 10 spans of 50 us", "500 µs" in decode, decode)
    sample = next((l for l in table.splitlines() if l.startswith("sample")), "")
    check("summary: sample has no graph GPU and no GPU time", sample.split()[-1] == "-" or " - " in sample, sample)
    check("summary: the note says what graph GPU is and how many launches had a span",
          "graph GPU: GPU span of each graph launch" in table and "11 of 11 graph launches" in table, table)
    verdicts = table.splitlines()
    decode_v = next((l for l in verdicts if l.strip().startswith("decode:")), "")
    check("summary: decode (graph launches only) gets a verdict from its graph spans",
          "-bound: " in decode_v and "(graph spans)" in decode_v and "50.0 µs" in decode_v, decode_v)
    sample_v = next((l for l in verdicts if l.strip().startswith("sample:")), "")
    check("summary: sample (a direct launch, no GPU time) gets no verdict", "-bound" not in sample_v, sample_v)

    j = json.loads(kcount_out("summary", log, "--format", "json"))
    lg = j["logs"][0]
    check("json: gpu_time false, graph_gpu_time true", lg["gpu_time"] is False and lg.get("graph_gpu_time") is True,
          {k: lg.get(k) for k in ("gpu_time", "graph_gpu_time")})
    rows = {r["path"]: r for r in lg["ranges"]}
    ex = rows["decode"]["exclusive"]
    check("json: decode exclusive graph_gpu_launches 10, graph_gpu_ns 500000, gpu_ns null",
          ex.get("graph_gpu_launches") == 10 and ex.get("graph_gpu_ns") == 500000 and ex["gpu_ns"] is None, ex)
    check("json: decode's 30 kernels counted at the launches", ex["kernels"] == 30, ex)
    check("json: overall graph_gpu_ns 507000", lg["overall"].get("graph_gpu_ns") == 507000, lg["overall"])
    check("json: no memcpy counted for the spans (memory operations not recorded: null)", ex["memcpy"]["count"] is None, ex["memcpy"])

    rows = list(csv.DictReader(io.StringIO(kcount_out("summary", log, "--format", "csv"))))
    dec = next((r for r in rows if r["path"] == "decode"), {})
    check("csv: decode's graph GPU fields, 10 spans of 500 us in all",
          dec.get("excl_graph_gpu_launches") == "10" and dec.get("excl_graph_gpu_ns") == "500000"
          and dec.get("incl_graph_gpu_ns") == "500000", dec)
    overall = next((r for r in rows if r["path"] == "(overall)"), {})
    check("csv: (overall) incl_graph_gpu_ns 507000, excl empty",
          overall.get("incl_graph_gpu_ns") == "507000" and overall.get("excl_graph_gpu_ns") == "", overall)

    # --series of the example server recorded with KCOUNT_GPU_TIME=graphs (summary mode, on the GPU).
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "logs",
                           "serve-graphs.kcount")
    series = kcount_out("summary", "--series", shipped, "--width", "200")
    check("series: a graph GPU column", "graph GPU" in series.splitlines()[1], series)
    srows = list(csv.DictReader(io.StringIO(kcount_out("summary", "--series", "--format", "csv", shipped))))
    sdec = [r for r in srows if r["path"] == "request/decode"]
    check("series csv: decode's 248 spans, 136169653 ns in all",
          sum(int(r["graph_gpu_launches"]) for r in sdec) == 248
          and sum(int(r["graph_gpu_ns"]) for r in sdec) == 136169653, sdec)

    out = kcount_out("check", log)
    check("check: the GPU-time line names graphs mode",
          "GPU time: graph launches' GPU spans only (KCOUNT_GPU_TIME=graphs)" in out, out)

    db = os.path.join(tmp, "graphs.sqlite")
    kcount_out("export", log, "--format", "sqlite", "-o", db)
    con = sqlite3.connect(db)
    spans = con.execute("SELECT kind, COUNT(*), SUM(end - start) FROM memops GROUP BY kind").fetchall()
    check("export sqlite: 11 memops of kind graph, 507 us", spans == [("graph", 11, 507000)], spans)

    trace = os.path.join(tmp, "graphs.json")
    kcount_out("export", log, "--format", "chrome", "-o", trace)
    with open(trace) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    graph = [e for e in events if e.get("cat") == "graph"]
    check("export chrome: 11 graph slices named graph", len(graph) == 11 and all(e["name"] == "graph" for e in graph),
          graph[:2])

    # A log without the setting has neither the column nor the keys.
    plain = os.path.join(tmp, "off.kcount")
    subprocess.run([MAKE_LOG, plain], input="meta gpu_time off\npush decode\ngraph\npop\n", text=True, check=True)
    check("summary of a KCOUNT_GPU_TIME=0 log: no graph GPU column", "graph GPU" not in kcount_out("summary", plain))
    pj = json.loads(kcount_out("summary", plain, "--format", "json"))["logs"][0]
    check("json of a KCOUNT_GPU_TIME=0 log: no graph keys",
          "graph_gpu_time" not in pj and "graph_gpu_ns" not in pj["overall"], pj["overall"])
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
