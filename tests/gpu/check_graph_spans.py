#!/usr/bin/env python3
"""KCOUNT_GPU_TIME=graphs on a real GPU: every graph launch has exactly one GPU span (tests/gpu/check_graph_gpu_time.sh).

    check_graph_spans.py KCOUNT TRACE_LOG GRAPHS_LOG [--expect PATH=N ...]

TRACE_LOG: the program recorded in trace mode with kernel activity; GRAPHS_LOG: the same program with
KCOUNT_MODE=trace KCOUNT_GPU_TIME=graphs. Both are exported to SQLite. Holds when:
- every graph launch of GRAPHS_LOG (isGraphLaunch, not captured; one per correlation id) has exactly one
  memops row of kind 'graph' with its correlation id, and no graph span joins anything else;
- per range, graph spans = graph launches (and = N for each --expect PATH=N);
- every span is longer than 0 ns, and the mean span per graph launch of each range lies within 0.9x to 10x
  of TRACE_LOG's mean sum of kernel GPU time per graph launch of that range (a span runs from the graph's
  first kernel start to its last kernel end: at least the kernels' time where they run one after another,
  plus the gaps between them).
Prints one line of details; exit 0 if all hold, 1 otherwise (the differences on stderr).
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict


def export(kcount, log, tmp):
    db = os.path.join(tmp, os.path.basename(log) + ".sqlite")
    subprocess.run([kcount, "export", log, "--format", "sqlite", "-o", db], check=True, stdout=subprocess.DEVNULL)
    return sqlite3.connect(db)


def graph_launches(con):
    """correlation id -> range path of each graph launch that ran (not captured)."""
    rows = con.execute("SELECT DISTINCT l.correlationId, s.path FROM launches l JOIN scopes s USING (processId, scopeId) "
                       "WHERE l.isGraphLaunch = 1 AND l.captured = 0")
    return {c: p for c, p in rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kcount")
    ap.add_argument("trace_log")
    ap.add_argument("graphs_log")
    ap.add_argument("--expect", nargs="*", default=[])
    a = ap.parse_args()
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        t = export(a.kcount, a.trace_log, tmp)
        g = export(a.kcount, a.graphs_log, tmp)
        meta = g.execute("SELECT value FROM metadata WHERE name = 'gpu_time'").fetchone()
        if meta is None or meta[0] != "graphs":
            problems.append(f"metadata gpu_time of the graphs log: {meta!r}, want 'graphs'")
        launches = graph_launches(g)
        spans = g.execute("SELECT m.correlationId, s.path, m.end - m.start FROM memops m "
                          "JOIN scopes s USING (processId, scopeId) WHERE m.kind = 'graph'").fetchall()
        per_corr = Counter(c for c, _, _ in spans)
        missing = [c for c in launches if per_corr[c] != 1]
        stray = [c for c in per_corr if c not in launches]
        if missing:
            problems.append(f"{len(missing)} of {len(launches)} graph launches without exactly one span (first {missing[:3]})")
        if stray:
            problems.append(f"{len(stray)} graph spans joined no graph launch (first {stray[:3]})")
        if any(ns <= 0 for _, _, ns in spans):
            problems.append("a graph span of 0 ns or less")
        launches_by_path = Counter(launches.values())
        spans_by_path = Counter(p for _, p, _ in spans)
        span_ns = defaultdict(int)
        for _, p, ns in spans:
            span_ns[p] += ns
        if launches_by_path != spans_by_path:
            problems.append(f"per range: graph launches {dict(launches_by_path)}, spans {dict(spans_by_path)}")
        for e in a.expect:
            path, n = e.rsplit("=", 1)
            if spans_by_path.get(path, 0) != int(n):
                problems.append(f"{path}: {spans_by_path.get(path, 0)} graph spans, want {n}")
        # Trace mode: kernel GPU time per graph launch, per range.
        t_launches = graph_launches(t)
        kernel_ns = defaultdict(int)
        for corr, ns in t.execute("SELECT correlationId, end - start FROM kernels"):
            if corr in t_launches:
                kernel_ns[t_launches[corr]] += ns
        t_by_path = Counter(t_launches.values())
        ratios = []
        for p, n in sorted(spans_by_path.items()):
            if t_by_path.get(p, 0) == 0 or kernel_ns[p] == 0:
                problems.append(f"{p}: no graph launch with kernels in the trace log")
                continue
            span_mean = span_ns[p] / n
            kern_mean = kernel_ns[p] / t_by_path[p]
            ratio = span_mean / kern_mean
            ratios.append(f"{p}: {n} spans, {span_mean / 1000:.1f} us/launch vs kernels {kern_mean / 1000:.1f} us ({ratio:.2f}x)")
            if not 0.9 <= ratio <= 10:
                problems.append(f"{p}: mean span {span_mean:.0f} ns against {kern_mean:.0f} ns of kernels ({ratio:.2f}x)")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(launches)} graph launches, {len(spans)} spans; " + "; ".join(ratios))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
