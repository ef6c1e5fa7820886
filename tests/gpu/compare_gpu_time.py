#!/usr/bin/env python3
"""Compares a trace-mode log with a KCOUNT_GPU_TIME=0 log of the same program (tests/gpu/check_gpu_time.sh).

    compare_gpu_time.py KCOUNT TRACE_LOG OFF_LOG           (both trace-mode logs, via kcount export sqlite)
    compare_gpu_time.py --summary KCOUNT OFF_LOG SUMMARY_LOG  (summary JSON totals and ranges equal)
    ... --expect PATH=N [PATH=N ...]   (also: both logs have exactly N kernels made innermost in range PATH)

Prints one line of details; exit 0 if every comparison holds, 1 otherwise (the differences on stderr).
Expected: per (range path, kernel name), the OFF log's kernel count equals the TRACE log's (graph launches'
kernels included: without activity they are read from the graph exec at instantiation), apart from kernels
the driver runs for a graph's memcpy/memset nodes (names memcpy*/memset*), which are not kernel nodes; the
launch counts per range are equal; every OFF kernel has start == end; metadata gpu_time=off in OFF only
(OFF_GPU_TIME=graphs in the environment: gpu_time=graphs, check_graph_gpu_time.sh).
With OFF_META=KEY=VALUE in the environment (check_launch_callbacks.sh: launch_callbacks=driver), the OFF log
also has that metadata and the TRACE log not; with launch_callbacks=driver every OFF launch is a driver API
call (apiDomain 'driver'): the runtime's launches were seen through the driver call inside them.
"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter


def export(kcount, log, tmp):
    db = os.path.join(tmp, os.path.basename(log) + ".sqlite")
    subprocess.run([kcount, "export", log, "--format", "sqlite", "-o", db], check=True,
                   stdout=subprocess.DEVNULL)
    return sqlite3.connect(db)


DRIVER_COPY = re.compile(r"mem(cpy|set)")  # the driver's own kernels for a graph's memcpy/memset nodes


def kernels_by_range_and_name(con, direct_only, copies=True):
    # Names are ids into each database's own strings table: compared as text.
    q = """SELECT s.path, n.value, l.isGraphLaunch FROM kernels k
           JOIN launches l ON l.processId = k.processId AND l.correlationId = k.correlationId
           JOIN scopes s ON s.processId = l.processId AND s.scopeId = l.scopeId
           JOIN strings n ON n.id = k.mangledName"""
    c = Counter()
    for path, name, graph in con.execute(q):
        if (direct_only and graph) or (not copies and graph and DRIVER_COPY.match(name)):
            continue
        c[(path, name)] += 1
    return c


def launches_by_range(con):
    return Counter({(p, g): n for p, g, n in con.execute(
        "SELECT s.path, l.isGraphLaunch, count(*) FROM launches l JOIN scopes s USING (processId, scopeId) GROUP BY 1, 2")})


def meta(con, key):
    r = con.execute("SELECT value FROM metadata WHERE name = ?", (key,)).fetchone()
    return r[0] if r else None


def compare_trace(kcount, trace_log, off_log):
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        t, o = export(kcount, trace_log, tmp), export(kcount, off_log, tmp)
        want, got = kernels_by_range_and_name(t, False, copies=False), kernels_by_range_and_name(o, False)
        for key in sorted(set(want) | set(got)):
            if want[key] != got[key]:
                problems.append(f"{key[0]} {key[1][:80]}: trace {want[key]}, gpu_time=0 {got[key]}")
        lt, lo = launches_by_range(t), launches_by_range(o)
        if lt != lo:
            problems.append(f"launches per (range, graph): trace {dict(lt)} vs {dict(lo)}")
        unmatched = o.execute("SELECT count(*) FROM kernels k LEFT JOIN launches l USING (processId, correlationId) "
                              "WHERE l.correlationId IS NULL").fetchone()[0]
        # Exported GPU fields of a gpu_time=off log are NULL (not recorded), never 0 (docs/export.md).
        timed = o.execute('SELECT count(*) FROM kernels WHERE start IS NOT NULL OR "end" IS NOT NULL '
                          'OR deviceId IS NOT NULL OR streamId IS NOT NULL OR gridX IS NOT NULL').fetchone()[0]
        graph_launch_kernels = o.execute("SELECT count(*) FROM kernels k JOIN launches l USING (processId, correlationId) "
                                         "WHERE l.isGraphLaunch").fetchone()[0]
        graph_launches = sum(n for (p, g), n in lo.items() if g)
        if unmatched or timed:
            problems.append(f"gpu_time=0 log: {unmatched} unmatched kernels, {timed} with GPU fields not NULL")
        if meta(o, "gpu_time") != os.environ.get("OFF_GPU_TIME", "off") or meta(t, "gpu_time") is not None:
            problems.append(f"metadata gpu_time: trace {meta(t, 'gpu_time')!r}, off {meta(o, 'gpu_time')!r}")
        problems += off_meta_problems(t, o)
        copies = sum(kernels_by_range_and_name(t, False).values()) - sum(want.values())
        detail = (f"{sum(got.values())} kernels = trace's ({len(got)} (range, name) pairs; {graph_launch_kernels} of "
                  f"them from {graph_launches} graph launches, read from the graph; {copies} driver copy kernels of "
                  f"graph memcpy/memset nodes not counted); launches {sum(lo.values())} = {sum(lt.values())}")
    return problems, detail


def off_meta_problems(t, o):
    """OFF_META (KEY=VALUE): metadata the OFF log must have and the TRACE log must not."""
    want = os.environ.get("OFF_META", "")
    if not want:
        return []
    key, value = want.split("=", 1)
    problems = []
    if meta(o, key) != value or meta(t, key) is not None:
        problems.append(f"metadata {key}: trace {meta(t, key)!r}, off {meta(o, key)!r} (want {value!r})")
    if want == "launch_callbacks=driver":
        domains = dict(o.execute("SELECT apiDomain, count(*) FROM launches GROUP BY 1").fetchall())
        if set(domains) != {"driver"}:
            problems.append(f"launch_callbacks=driver log: launches by API domain {domains}")
    return problems


def summary_json(kcount, log):
    out = subprocess.run([kcount, "summary", log, "--format", "json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["logs"][0]


def compare_summary(kcount, off_log, summary_log):
    a, b = summary_json(kcount, off_log), summary_json(kcount, summary_log)
    problems = []
    keys = ("launches", "graph_launches", "kernels", "unmatched_kernels", "launches_without_kernel", "gpu_ns")
    for k in keys:
        if a["totals"][k] != b["totals"][k]:
            problems.append(f"totals.{k}: trace {a['totals'][k]}, summary {b['totals'][k]}")
    ra = {r["path"]: (r["instances"], r["exclusive"]["kernels"]) for r in a["ranges"]}
    rb = {r["path"]: (r["instances"], r["exclusive"]["kernels"]) for r in b["ranges"]}
    if ra != rb:
        problems.append(f"ranges (instances, kernels): trace {ra} vs summary {rb}")
    if b.get("gpu_time") is not False or b.get("mode") != "summary" or b["totals"]["gpu_ns"] is not None:
        problems.append(f"summary log: gpu_time {b.get('gpu_time')!r}, mode {b.get('mode')!r}")
    t = b["totals"]
    return problems, (f"mode summary, gpu_time false; totals launches={t['launches']} kernels={t['kernels']} "
                      f"gpu_ns={t['gpu_ns']} = trace log's; {len(rb)} ranges equal")


def expected_counts(kcount, logs, expect):
    """Differences from fixed expected counts: {path: kernels} against each log's innermost kernels per path
    (summary JSON), so that two logs cannot agree on a wrong number."""
    problems = []
    for log in logs:
        got = {r["path"]: r["exclusive"]["kernels"] for r in summary_json(kcount, log)["ranges"]}
        for path, n in expect.items():
            if got.get(path) != n:
                problems.append(f"{os.path.basename(log)}: {path} has {got.get(path)} kernels, expected {n}")
    return problems


def main(argv):
    expect = {}
    if "--expect" in argv:
        at = argv.index("--expect")
        expect = {k: int(v) for k, v in (item.split("=") for item in argv[at + 1:])}
        argv = argv[:at]
    if argv and argv[0] == "--summary":
        problems, detail = compare_summary(*argv[1:4])
        logs = argv[2:4]
    else:
        problems, detail = compare_trace(*argv[0:3])
        logs = argv[1:3]
    if expect:
        problems += expected_counts(argv[1] if argv[0] == "--summary" else argv[0], logs, expect)
        detail += f"; fixed counts hold ({', '.join(f'{k}={v}' for k, v in expect.items())})"
    print(detail if not problems else f"{len(problems)} differences: " + "; ".join(problems)[:600])
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
