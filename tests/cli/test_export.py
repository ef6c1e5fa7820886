#!/usr/bin/env python3
"""`kcount export` on the logs recorded on an NVIDIA H200 (examples/logs/, tests/data/launches.kcount).

Every expected number comes from `kcount summary --format json` of the same log (a different code path:
collector/analysis.cpp), never from this file, except the one fact the README states about the GeGLU
eager log: 20 measured steps, one GEMM per step in step/gate.

Chrome trace: parses; one "X" kernel slice per kernel record, one "X" launch slice per launch, one "X"
range slice per push/pop range; one flow per matched kernel: every flow id has one start ("s") and one
finish ("f"), so a graph launch's kernels each get an arrow (a viewer draws one per id); a launch slice of
N kernels holds N starts; each "s" lies inside a launch slice of its thread and each "f" inside a kernel
slice of its stream (Perfetto binds them to the enclosing slice); the slices of every track nest (what
Perfetto requires of "X" events on one thread). tests/data/graphs.kcount (CUDA graph launches of several
kernels each) is checked for the Chrome trace. On every shipped log (examples/logs/sweep-*.kcount too):
every arrow has its own id, one "s" and one "f", and never points back in time ("s" no later than "f" or
the kernel's start).
SQLite: kernels per range path equal the summary's exclusive kernels; the Nsight-named views answer.
CSV and JSON records: row counts equal the log's record counts.

Usage: test_export.py BUILD_DIR
"""
import bisect
import collections
import csv
import json
import shutil
import os
import sqlite3
import stat
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount_out

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = [os.path.join(ROOT, "examples", "logs", n + ".kcount") for n in ("linear-eager", "geglu-eager", "geglu-compiled")]
LOGS.append(os.path.join(ROOT, "tests", "data", "launches.kcount"))
GRAPHS = os.path.join(ROOT, "tests", "data", "graphs.kcount")
SWEEPS = [os.path.join(ROOT, "examples", "logs", n + ".kcount") for n in ("sweep-eager", "sweep-compiled")]


def summary(log):
    return json.loads(kcount_out("summary", "--format", "json", log))["logs"][0]


def check_nesting(slices):
    """slices: list of (start_ns, end_ns); True if every pair is disjoint or nested."""
    stack = []
    for start, end in sorted(slices, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1] <= start:
            stack.pop()
        if stack and stack[-1] < end:
            return False
        stack.append(end)
    return True


def ns(us):
    """Timestamps are written as microseconds with 3 decimals: back to integer ns exactly."""
    whole, _, frac = str(us).partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def check_chrome(log, s, work):
    name = os.path.basename(log)
    out = os.path.join(work, name + ".trace.json")
    kcount_out("export", log, "--format", "chrome", "-o", out)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    totals = s["totals"]
    kernel_records = totals["kernels"] + totals["unmatched_kernels"]
    by = collections.defaultdict(list)
    for e in events:
        by[(e["ph"], e.get("cat"))].append(e)
    check(f"{name}: {kernel_records} kernel slices", len(by[("X", "kernel")]) == kernel_records)
    check(f"{name}: {totals['launches']} launch slices", len(by[("X", "cuda_api")]) == totals["launches"])
    mem_ops = totals.get("mem_ops", 0)
    check(f"{name}: {mem_ops} memory operation slices", len(by[("X", "memory")]) == mem_ops)
    mem_starts = {e["id"] for e in by[("s", "memory")]}
    mem_finishes = {e["id"] for e in by[("f", "memory")]}
    check(f"{name}: a memory flow from each memcpy/memset call to its GPU operation",
          mem_starts == mem_finishes and len(by[("f", "memory")]) == mem_ops - totals.get("unmatched_mem_ops", 0))
    instances = sum(r["instances"] for r in s["ranges"])
    check(f"{name}: {instances} range slices", len(by[("X", "nvtx")]) + len(by[("b", "nvtx")]) == instances)

    starts = collections.Counter(e["id"] for e in by[("s", "launch")])
    finishes = collections.Counter(e["id"] for e in by[("f", "launch")])
    check(f"{name}: one flow start per id", all(c == 1 for c in starts.values()))
    check(f"{name}: one flow finish per id", all(c == 1 for c in finishes.values()),
          [i for i, c in finishes.items() if c > 1][:3])
    check(f"{name}: every flow start has a finish and every finish a start", set(starts) == set(finishes))
    check(f"{name}: one flow per matched kernel",
          sum(finishes.values()) == totals["kernels"] and sum(starts.values()) == totals["kernels"],
          (sum(starts.values()), sum(finishes.values()), totals["kernels"]))

    tracks = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e.get("cat")))
    check(f"{name}: slices nest on every track", all(check_nesting([(a, b) for a, b, _ in v]) for v in tracks.values()))

    def inside(e, cat):
        t = ns(e["ts"])
        return any(c == cat and a <= t <= b for a, b, c in tracks[(e["pid"], e["tid"])])

    # The launch slice (innermost on its track) holding each flow start: it holds one per kernel it issued.
    launch_slices = {}
    for e in by[("X", "cuda_api")]:
        launch_slices.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
    held = collections.Counter()
    for e in by[("s", "launch")]:
        t = ns(e["ts"])
        around = [(b - a, id(x)) for a, b, x in launch_slices.get((e["pid"], e["tid"]), []) if a <= t <= b]
        if around:
            held[min(around)[1]] += 1
    kernels_of = {id(x): x["args"]["kernels"] for v in launch_slices.values() for _, _, x in v}
    launches_with_kernel = totals["launches"] - totals["launches_without_kernel"] - totals.get("captured_launches", 0)
    check(f"{name}: flow starts in {launches_with_kernel} launch slices, as many in each as it has kernels",
          len(held) == launches_with_kernel and all(kernels_of[i] == n for i, n in held.items()),
          (len(held), launches_with_kernel, [(kernels_of[i], n) for i, n in held.items() if kernels_of[i] != n][:3]))

    check(f"{name}: each flow start inside its launch slice", all(inside(e, "cuda_api") for e in by[("s", "launch")]))
    check(f"{name}: each flow finish inside its kernel slice, bound to the enclosing slice",
          all(inside(e, "kernel") and e.get("bp") == "e" for e in by[("f", "launch")]))
    names = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    check(f"{name}: a GPU 0 process", any(n.startswith("GPU 0") for _, n in names))


def check_flow_direction(log, work):
    """Every arrow of the Chrome trace has an id of its own, with one start ("s") and one finish ("f"); the
    start lies inside its launch (or memcpy/memset) call's slice, the finish inside its kernel's (memory
    operation's) slice, and the start is never after the finish nor after the kernel's start, so no arrow
    points back in time (Perfetto and chrome://tracing draw such arrows backwards or drop them). One arrow
    per kernel and memory operation joined to its call, as the SQLite tables join them, except those that
    ended before their call began (no GPU time recorded: start = end = 0)."""
    name = os.path.basename(log)
    out = os.path.join(work, name + ".flows.json")
    kcount_out("export", log, "--format", "chrome", "-o", out, "--force")
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    tracks = collections.defaultdict(list)
    starts, finishes = collections.defaultdict(list), collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            tracks[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["cat"]))
        elif e["ph"] == "s":
            starts[(e["cat"], e["id"])].append(e)
        elif e["ph"] == "f":
            finishes[(e["cat"], e["id"])].append(e)

    by_track = {}  # (pid, tid, cat) -> slices sorted by start, and their starts
    for (pid, tid), v in tracks.items():
        for a, b, c in sorted(v):
            by_track.setdefault((pid, tid, c), ([], []))
            by_track[(pid, tid, c)][0].append(a)
            by_track[(pid, tid, c)][1].append((a, b))

    def around(e, cats):
        """The slices of those categories on e's track that hold e's time (searched back from the last one
        starting at or before it, at most 64: slices of one category nest rarely and shallowly)."""
        t = ns(e["ts"])
        found = []
        for c in cats:
            starts_of, slices = by_track.get((e["pid"], e["tid"], c), ([], []))
            i = bisect.bisect_right(starts_of, t)
            found += [(a, b) for a, b in slices[max(0, i - 64):i] if a <= t <= b]
        return found

    ids = [e["id"] for v in starts.values() for e in v]
    check(f"{name}: flow ids unique across categories", len(ids) == len(set(ids)))
    check(f"{name}: one flow start and one finish per id",
          set(starts) == set(finishes) and all(len(v) == 1 for v in starts.values())
          and all(len(v) == 1 for v in finishes.values()),
          [k for k in set(starts) ^ set(finishes)][:3])
    backwards, outside_call, outside_work, after_work_start = [], [], [], []
    for key, (s,) in starts.items():
        if len(finishes.get(key, [])) != 1:
            continue
        f = finishes[key][0]
        if ns(s["ts"]) > ns(f["ts"]):
            backwards.append(key)
        if not around(s, ("cuda_api", "cuda_api_memory")):
            outside_call.append(key)
        target = around(f, ("kernel",) if key[0] == "launch" else ("memory",))
        if not target or f.get("bp") != "e":
            outside_work.append(key)
        elif ns(s["ts"]) > max(a for a, _ in target):
            after_work_start.append(key)
    check(f"{name}: no flow finishes before it starts ({len(starts)} flows)", not backwards, backwards[:3])
    check(f"{name}: each flow start inside its call's slice", not outside_call, outside_call[:3])
    check(f"{name}: each flow finish inside its kernel's or memory operation's slice, bound to it",
          not outside_work, outside_work[:3])
    check(f"{name}: each flow starts no later than its kernel or memory operation", not after_work_start,
          after_work_start[:3])

    db_path = os.path.join(work, name + ".flows.sqlite")
    kcount_out("export", log, "--format", "sqlite", "-o", db_path)
    db = sqlite3.connect(db_path)
    (kernels,) = db.execute('SELECT count(*) FROM kernels k JOIN launches l USING (processId, segment, correlationId) '
                            'WHERE k."end" >= l.start').fetchone()
    (mem_ops,) = db.execute('SELECT count(*) FROM memops WHERE callStart IS NOT NULL AND "end" >= callStart').fetchone()
    db.close()
    launch_flows = sum(1 for cat, _ in starts if cat == "launch")
    memory_flows = sum(1 for cat, _ in starts if cat == "memory")
    check(f"{name}: one launch flow per kernel joined to its launch ({kernels})", launch_flows == kernels,
          (launch_flows, kernels))
    check(f"{name}: one memory flow per memory operation joined to its call ({mem_ops})", memory_flows == mem_ops,
          (memory_flows, mem_ops))


def check_sqlite(log, s, work):
    name = os.path.basename(log)
    out = os.path.join(work, name + ".sqlite")
    kcount_out("export", log, "--format", "sqlite", "-o", out)
    db = sqlite3.connect(out)
    got = dict(db.execute("SELECT s.path, count(*) FROM kernels k JOIN scopes s "
                          "ON s.processId = k.processId AND s.scopeId = k.scopeId GROUP BY s.path"))
    want = {r["path"]: r["exclusive"]["kernels"] for r in s["ranges"] if r["exclusive"]["kernels"]}
    check(f"{name}: sqlite kernels per range equal the summary's ({len(want)} ranges)", got == want)
    gpu = dict(db.execute("SELECT s.path, sum(k.\"end\" - k.start) FROM kernels k JOIN scopes s "
                          "ON s.processId = k.processId AND s.scopeId = k.scopeId GROUP BY s.path"))
    check(f"{name}: sqlite GPU time per range equals the summary's",
          gpu == {r["path"]: r["exclusive"]["gpu_ns"] for r in s["ranges"] if r["exclusive"]["kernels"]})
    (n,) = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds n ON n.id = k.shortName").fetchone()
    check(f"{name}: Nsight-named kernel view", n == s["totals"]["kernels"] + s["totals"]["unmatched_kernels"])
    (n,) = db.execute("SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME) + "
                      "(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_DRIVER)").fetchone()
    check(f"{name}: Nsight-named runtime + driver views hold every launch", n == s["totals"]["launches"])
    (pid,) = db.execute("SELECT DISTINCT globalTid / 0x1000000 % 0x1000000 FROM NVTX_EVENTS").fetchone() or (None,)
    check(f"{name}: NVTX_EVENTS globalTid encodes the pid", str(pid) == s["metadata"]["pid"])
    if name == "geglu-eager.kcount":
        (gate,) = db.execute("SELECT count(*) FROM kernels k JOIN scopes s ON s.processId = k.processId "
                             "AND s.scopeId = k.scopeId WHERE s.path = 'step/gate'").fetchone()
        check(f"{name}: step/gate has 20 kernels in the 20 measured steps (got {gate})", gate == 20)
    db.close()


def check_csv_json(log, s, work):
    name = os.path.basename(log)
    folder = os.path.join(work, name + ".csv")
    kcount_out("export", log, "--format", "csv", "-o", folder)
    out = os.path.join(work, name + ".records.json")
    kcount_out("export", log, "--format", "json", "-o", out)
    with open(out) as f:
        records = json.load(f)
    totals = s["totals"]
    instances = sum(r["instances"] for r in s["ranges"])
    want = {"kernels": totals["kernels"] + totals["unmatched_kernels"], "launches": totals["launches"],
            "ranges": instances, "processes": 1, "memops": totals.get("mem_ops", 0)}
    for table, n in want.items():
        with open(os.path.join(folder, table + ".csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        check(f"{name}: {table}.csv has {n} rows", len(rows) == n)
        check(f"{name}: JSON records {table} has {n} rows", len(records[table]) == n)
    with open(os.path.join(folder, "kernels.csv"), newline="") as f:
        per_path = collections.Counter(r["path"] for r in csv.DictReader(f))
    check(f"{name}: kernels.csv per range path",
          per_path == collections.Counter({r["path"]: r["exclusive"]["kernels"] for r in s["ranges"]
                                           if r["exclusive"]["kernels"]}))


def check_damaged_sqlite(work):
    """A salvaged log whose lost chunk held definitions: several undefined scope ids ("<bad scope id N>")
    in one row; every export format writes them whole (their texts were overwritten by the next one, so a
    database got garbage strings and failed on a UNIQUE constraint). A failed export keeps the file that
    was at its output; a fifo or device at the output is refused, not removed."""
    packed = os.path.join(ROOT, "tests", "data", "packed", "launches-first-records-compact.kcount")
    with open(packed, "rb") as f:
        data = f.read()
    damaged = os.path.join(work, "chunk1-dropped.kcount")
    with open(damaged, "wb") as f:
        f.write(data[:1275] + data[2155:])  # chunk 1 (bytes 1275-2154) left out: scope definitions lost
    db_path = os.path.join(work, "damaged.sqlite")
    p = subprocess.run([KCOUNT, "export", "--salvage", damaged, "--format", "sqlite", "-o", db_path],
                       capture_output=True, text=True)
    ok = p.returncode == 0 and os.path.exists(db_path)
    bad = []
    if ok:
        db = sqlite3.connect(db_path)
        bad = [v for (v,) in db.execute("SELECT value FROM strings WHERE value LIKE '<bad scope id %'")]
        garbage = [v for (v,) in db.execute("SELECT value FROM strings") if not v.isprintable()]
        ok = not garbage
    check(f"salvaged log with lost definitions: sqlite export (exit {p.returncode}), {len(bad)} bad-scope paths, "
          "no garbage strings", ok and len(bad) >= 10, p.stderr[-300:])
    out = os.path.join(work, "damaged.json")
    p = subprocess.run([KCOUNT, "export", "--salvage", damaged, "--format", "json", "-o", out], capture_output=True, text=True)
    with open(out) as f:
        paths = [r["path"] for r in json.load(f)["ranges"]]
    check("salvaged log: json ranges carry their <bad scope id N> paths whole",
          p.returncode == 0 and paths and all(x.isprintable() for x in paths) and any(x.startswith("<bad scope id") for x in paths))
    # A failure part way: the database cannot be built beside the output (a folder holds its name).
    keep = os.path.join(work, "keep.sqlite")
    with open(keep, "wb") as f:
        f.write(b"old contents")
    os.makedirs(keep + ".kcount-building/x")
    p = subprocess.run([KCOUNT, "export", LOGS[0], "--format", "sqlite", "-o", keep], capture_output=True, text=True)
    with open(keep, "rb") as f:
        kept = f.read() == b"old contents"
    check(f"a failed sqlite export keeps the file at its output (exit {p.returncode})", p.returncode != 0 and kept, p.stderr)
    # Not a regular file at the output (a fifo here; /dev/full or any device alike): refused, left in place
    # (it was removed and replaced by a database).
    fifo = os.path.join(work, "fifo")
    os.mkfifo(fifo)
    p = subprocess.run([KCOUNT, "export", LOGS[0], "--format", "sqlite", "-o", fifo], capture_output=True, text=True)
    check("sqlite export to a fifo is refused, the fifo left in place",
          p.returncode != 0 and "not a regular file" in p.stderr and stat.S_ISFIFO(os.lstat(fifo).st_mode), p.stderr)


def main():
    global KCOUNT
    KCOUNT = os.path.join(os.path.abspath(sys.argv[1]), "bin", "kcount")
    with tempfile.TemporaryDirectory() as work:
        for log in LOGS:
            s = summary(log)
            check_chrome(log, s, work)
            check_sqlite(log, s, work)
            check_csv_json(log, s, work)
        check_chrome(GRAPHS, summary(GRAPHS), work)
        for log in LOGS + [GRAPHS] + SWEEPS:
            check_flow_direction(log, work)
        # Several logs in one export: one process each, flow ids kept apart.
        out = os.path.join(work, "two.trace.json")
        kcount_out("export", LOGS[1], LOGS[2], "--format", "chrome", "-o", out)
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        starts = [e["id"] for e in events if e["ph"] == "s"]
        check("two logs: flow ids distinct", len(starts) == len(set(starts)))
        db_path = os.path.join(work, "two.sqlite")
        kcount_out("export", LOGS[1], LOGS[2], "--format", "sqlite", "-o", db_path)
        db = sqlite3.connect(db_path)
        rows = db.execute("SELECT p.processId, count(*) FROM kernels k JOIN processes p USING (processId) "
                          "GROUP BY p.processId ORDER BY 1").fetchall()
        check("two logs: kernels per process in one database",
              [n for _, n in rows] == [summary(LOGS[1])["totals"]["kernels"], summary(LOGS[2])["totals"]["kernels"]])
        (shared,) = db.execute("SELECT count(DISTINCT a.demangledName) FROM kernels a JOIN kernels b "
                               "ON a.demangledName = b.demangledName AND a.processId = 0 AND b.processId = 1").fetchone()
        check(f"two logs: kernel names shared through one strings table ({shared} names in both)", shared > 0)
        check_damaged_sqlite(work)
        check_output_is_not_a_log(work)
        check_slash_in_name(work)
        check_invalid_utf8(work)
    return exit_status()


def check_slash_in_name(work):
    """A range named "a/b" and a range "b" inside "a" are two ranges: their paths in the exports are those of
    the summary table ("a\\/b" and "a/b"), not both "a/b"."""
    log = os.path.join(work, "slash.kcount")
    make_log = os.path.join(os.path.dirname(KCOUNT), "kc_make_log")
    subprocess.run([make_log, log], input="push a/b\nkernel 10 k1\npop\npush a\npush b\nkernel 20 k2\npop\npop\n",
                   text=True, check=True)
    table = kcount_out("summary", "--view", "inclusive", log)
    db_path = os.path.join(work, "slash.sqlite")
    kcount_out("export", log, "--format", "sqlite", "-o", db_path)
    paths = {p for (p,) in sqlite3.connect(db_path).execute("SELECT path FROM scopes")}
    check(f"a range named a/b and b inside a: distinct export paths, as the table's ({sorted(paths)})",
          {"a\\/b", "a", "a/b"} <= paths and "\na\\/b " in table and "\na/b " in table)


def check_invalid_utf8(work):
    """Names that are not valid UTF-8 (an NVTX message or kernel name cut mid-character) reach SQLite as valid
    TEXT: names (the strings table) with each byte of an ill-formed sequence as \\xHH, as in the CSV outputs and the
    text tables, so that two names that differ only in their ill-formed bytes are two strings (they were one, both
    U+FFFD); paths as the summary table shows them. Python's sqlite3 reads every column (it failed on the raw
    bytes)."""
    log = os.path.join(work, "utf8.kcount")
    make_log = os.path.join(os.path.dirname(KCOUNT), "kc_make_log")
    script = b"push step\xe2\x82\npush caf\xc3\xa9\nkernel 10 gemm\xff\nkernel 20 gemm\xfe\npop\npop\n"
    subprocess.run([make_log, log], input=script, check=True)
    db_path = os.path.join(work, "utf8.sqlite")
    kcount_out("export", log, "--format", "sqlite", "-o", db_path)
    db = sqlite3.connect(db_path)
    try:
        paths = sorted(p for (p,) in db.execute("SELECT path FROM scopes"))
        names = sorted(n for (n,) in db.execute("SELECT value FROM strings"))
        (kernels,) = db.execute("SELECT count(*) FROM kernels").fetchone()
        # Paths are the summary table's (ill-formed bytes escaped as \xNN there); names are the strings.
        ok = ("step\\xe2\\x82/caf\u00e9" in paths and {"gemm\\xff", "gemm\\xfe", "step\\xe2\\x82"} <= set(names)
              and not any("\ufffd" in n for n in names) and kernels == 2)
        detail = f"paths {paths}, strings {names}, {kernels} kernels"
    except sqlite3.OperationalError as e:  # "Could not decode to UTF-8 column ..."
        ok, detail = False, str(e)
    check("names with ill-formed UTF-8: the sqlite export's TEXT decodes, ill-formed bytes read \\xHH", ok, detail)


def check_output_is_not_a_log(work):
    """-o naming one of the logs given (directly or through a link) is refused before anything is written:
    exit 2, one line, the log unchanged (it used to be replaced by the export or the report)."""
    log = os.path.join(work, "victim.kcount")
    shutil.copy(LOGS[0], log)
    link = os.path.join(work, "victim-link.kcount")
    os.symlink(log, link)
    with open(log, "rb") as f:
        before = f.read()
    for args in (["export", log, "--format", "json", "-o", log], ["export", log, "--format", "sqlite", "-o", link],
                 ["export", LOGS[1], log, "--format", "chrome", "-o", log], ["report", log, "-o", link]):
        p = subprocess.run([KCOUNT, *args], capture_output=True, text=True)
        with open(log, "rb") as f:
            same = f.read() == before
        check(f"{' '.join(a if a not in (log, link) else os.path.basename(a) for a in args[:1] + args[-2:])}: "
              f"refused (exit {p.returncode}), log unchanged: {same}",
              p.returncode == 2 and "would replace it" in p.stderr and same)
    # Another kcount log at -o (a rotated part not given, another run), or a log at a CSV table's file name
    # in the -o folder: refused too; a new file or folder is written.
    other = os.path.join(work, "other.kcount")
    shutil.copy(LOGS[0], other)
    folder = os.path.join(work, "csvdir")
    os.makedirs(folder, exist_ok=True)
    in_folder = os.path.join(folder, "kernels.csv")
    shutil.copy(LOGS[0], in_folder)
    for args, victim in ((["export", log, "--format", "json", "-o", other], other), (["report", log, "-o", other], other),
                         (["export", in_folder, "--format", "csv", "-o", folder], in_folder),
                         (["export", log, "--format", "csv", "--table", "kernels", "-o", folder], in_folder)):
        p = subprocess.run([KCOUNT, *args], capture_output=True, text=True)
        with open(victim, "rb") as f:
            same = f.read() == before
        check(f"{args[0]} {' '.join(args[-3:])}: a kcount log at the output refused (exit {p.returncode}), unchanged: {same}",
              p.returncode == 2 and "would replace it" in p.stderr and same)
    p = subprocess.run([KCOUNT, "export", log, "--format", "json", "-o", os.path.join(work, "new.json")],
                       capture_output=True, text=True)
    check(f"export to a new file still works (exit {p.returncode})", p.returncode == 0)


if __name__ == "__main__":
    sys.exit(main())
