#!/usr/bin/env python3
"""kcount's reading commands on logs a user may hand them: a file holding a log twice, a damaged packed
log read with --salvage, --series on a trace log and on a summary-mode log without snapshot, out-of-range
numeric options, kernels with many ranges or several logs, range names that look like paths.

Usage: test_reading_cli.py BUILD_DIR   (needs BUILD_DIR/bin/kcount and BUILD_DIR/bin/kc_make_log)
"""
import csv
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

BUILD = sys.argv[1]
KCOUNT = os.path.join(BUILD, "bin", "kcount")
MAKE_LOG = os.path.join(BUILD, "bin", "kc_make_log")
TMP = tempfile.mkdtemp(prefix="kc-reading-cli-")


def make_log(name, script):
    path = os.path.join(TMP, name)
    subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
    return path


def small_script():
    return "push outer\nkernel 100 gemm_kernel\npush inner\nkernel 50 relu_kernel\npop\npop\n"


def test_concatenated():
    a = make_log("a.kcount", small_script())
    size = os.path.getsize(a)
    b = os.path.join(TMP, "b.kcount")
    with open(b, "wb") as f:
        f.write(open(a, "rb").read() * 2)
    rc, out, _ = kcount("check", b)
    check("check: concatenated log is not OK", rc == 1 and "\nOK\n" not in out, f"rc={rc}\n{out}")
    check("check: names the byte where the second log starts",
          f"NOT ONE LOG: {size} bytes follow the end record, from byte {size}" in out, out)
    rc, out, err = kcount("summary", "--format", "json", b)
    j = json.loads(out)["logs"][0]
    rc1, out1, _ = kcount("summary", "--format", "json", a)
    j1 = json.loads(out1)["logs"][0]
    check("summary: concatenated log is not counted twice",
          rc == 0 and j["totals"]["launches"] == j1["totals"]["launches"] == 2, f"rc={rc} {j['totals']}")
    check("summary: warns on stderr about the bytes after the end record",
          f"from byte {size}" in err and "second log" in err, err)


def test_salvage_packed():
    random.seed(7)
    lines = ["push outer"]
    for _ in range(60000):
        lines += ["push step", f"kernel {random.randint(1, 10**6)} gemm_kernel", "push inner",
                  f"kernel {random.randint(1, 10**6)} relu_kernel", "pop", "pop"]
    lines.append("pop")
    log = make_log("big.kcount", "\n".join(lines) + "\n")
    data = bytearray(open(log, "rb").read())
    rc, out, _ = kcount("check", log)
    check("packed log of several chunks", rc == 0 and "packed" in out and "1 chunk read" not in out, out[:300])
    for i in range(100, 108):  # inside chunk 0, which defines the strings and scopes
        data[i] ^= 0xFF
    bad = os.path.join(TMP, "damaged.kcount")
    open(bad, "wb").write(bytes(data))
    rc, out, err = kcount("summary", "--salvage", bad)
    check("salvage: exit 0 with a report", rc == 0 and "== " in out, f"rc={rc} {err}")
    check("salvage: a damaged log never says 'log complete'", "log complete" not in out and "log DAMAGED" in out, out)
    rows = [l for l in out.splitlines() if l.startswith("(no range)")]
    check("salvage: (no range) has no instances", bool(rows) and rows[0].split()[2] == "0", str(rows))
    check("salvage: unknown-range records have their own row",
          any(l.startswith("(unknown range: definition lost to damage)") for l in out.splitlines()), out)
    check("salvage: no verdict for (no range) or the unknown range",
          "(no range): GPU-bound" not in out and "(unknown range: definition lost to damage): GPU-bound" not in out, out)
    rc, out, _ = kcount("summary", "--salvage", "--metric", "launches", bad, log)
    across = out[out.index("== across"):] if "== across" in out else ""
    rows = {l.split("  ")[0]: l.split() for l in across.splitlines()[3:]}
    check("salvage across logs: unknown range apart from (no range)",
          rows.get("(no range)", [""] * 3)[2] == "0" and "(unknown range: definition lost to damage)" in rows, across)
    rc, out, _ = kcount("diff", "--salvage", bad, log)
    row = [l for l in out.splitlines() if l.startswith("(no range)")]
    check("salvage diff: (no range) has no launches, unknown range apart",
          rc == 0 and row and row[0].split()[4] == "0" and "\n(unknown range: definition lost to damage)" in out, out[:800])


def test_series():
    src = os.path.dirname(os.path.abspath(__file__))
    summary_log = os.path.join(src, "..", "data", "fuzz-regressions", "summary-mode-two-snapshots.kcount")
    trace_log = make_log("trace.kcount", small_script())
    # A trace log has no snapshots: in every format one error line on stderr, nothing on stdout, exit 2; a
    # trace log cut by a kill (its state would be one more line) too.
    sigkill = os.path.join(src, "..", "data", "sigkill.kcount")
    for log in (trace_log, sigkill):
        for fmt in ("table", "csv", "json"):
            rc, out, err = kcount("summary", "--series", "--format", fmt, log)
            check(f"series --format {fmt} on trace log {os.path.basename(log)}: one error line, no output, exit 2",
                  rc == 2 and out == "" and err.count("\n") == 1
                  and err.startswith(f"kcount: {log}: error: --series needs a summary-mode log"), (rc, out, err))
    rc, out, err = kcount("summary", "--series", "--format", "csv", summary_log)
    lines = out.splitlines()
    check("series --format csv writes CSV",
          rc == 0 and lines[0].startswith("log,sequence,final,begin_ns,end_ns,offset_ns,path,") and len(lines) == 5
          and lines[1].count(",") == lines[0].count(","), out)
    # With a summary-mode log too: refused whole (no series of the other log alone, no JSON stub).
    for fmt in ("table", "csv", "json"):
        rc, out, err = kcount("summary", "--series", "--format", fmt, summary_log, trace_log)
        check(f"series --format {fmt} of a summary-mode and a trace log: nothing on stdout, the trace log named, "
              "exit 2", rc == 2 and out == "" and err.count("\n") == 1 and f"kcount: {trace_log}: error: " in err,
              (rc, out, err))
    # A summary-mode log (metadata mode=summary) with no snapshot: not taken for a trace log.
    empty = make_log("no-snapshot.kcount", "meta mode summary\nmeta interval_ns 3600000000000\n")
    rc, out, err = kcount("summary", "--series", empty)
    check("series on a summary-mode log without snapshot: says so, not 'not a summary-mode log'",
          rc == 0 and "no snapshot" in out and "not a summary-mode log" not in err, f"rc={rc} out={out!r} err={err!r}")
    rc, out, err = kcount("summary", "--series", "--format", "json", empty)
    j = json.loads(out)["logs"][0]
    check("series json on it: mode summary, no interval, the reason on stderr",
          rc == 0 and j["mode"] == "summary" and j["intervals"] == [] and "no snapshot" in err, f"rc={rc} {j} {err!r}")
    # Outputs without a footer name it on stderr once, as a warning of the one form (--series csv too).
    for args in (("summary", "--series", "--format", "csv"), ("summary", "--series", "--format", "json"),
                 ("summary", "--format", "csv"), ("summary", "--format", "json"), ("kernels",)):
        rc, out, err = kcount(*args, empty)
        lines = [x for x in err.splitlines() if "no snapshot" in x]
        check(f"{' '.join(args)} on it: one 'no totals' warning line",
              rc == 0 and len(lines) == 1 and lines[0].startswith(f"kcount: {empty}: warning: no totals: summary mode: "
                                                                  "no snapshot"), f"rc={rc} {err!r}")
    rc, out, err = kcount("summary", "--format", "json", empty)
    j = json.loads(out)["logs"][0]
    check("summary json on it: mode summary, snapshot null",
          rc == 0 and j["mode"] == "summary" and "snapshot" in j and j["snapshot"] is None, f"rc={rc} {j}")
    rc, out, err = kcount("summary", empty)
    check("summary on it: no zero rows, the summary mode line says there is no snapshot",
          rc == 0 and "(no range)" not in out and "summary mode: no snapshot" in out, out)
    # Across logs it has no totals (not zeros), and a warning names it.
    rc, out, err = kcount("summary", "--metric", "launches", trace_log, empty)
    across = out[out.index("== across"):] if "== across" in out else ""
    no_range = next((l.split("  ") for l in across.splitlines() if l.startswith("(no range)")), [])
    cells = [c.strip() for c in no_range if c.strip()]
    check("summary across logs: the summary-mode log without snapshot reads 'no totals', not 0",
          rc == 0 and cells[:3] == ["(no range)", "0", "no totals"] and cells[-1] == "1/2"
          and "\nno totals: no-snapshot (summary-mode log without a complete snapshot" in across, (cells, across))
    check("summary across logs: a warning names it",
          f"kcount: {empty}: warning: no totals: summary mode: no snapshot" in err, err)
    rc, out, err = kcount("summary", "--format", "json", trace_log, empty)
    a = json.loads(out)["across_logs"]
    nr = next(r for r in a["ranges"] if r["path"] == "(no range)")
    check("summary json across logs: null and totals_known false for it",
          rc == 0 and a["totals_known"] == [True, False] and nr["per_log"]["launches"] == [0, None]
          and nr["in_logs"] == 1, a)
    # check: closed with no snapshot. Its stats counting nothing: nothing was recorded, OK. Counting launches
    # and ranges: its final snapshot is missing, NO TOTALS (exit 1).
    rc, out, err = kcount("check", empty)
    check("check: a closed summary-mode log whose stats count nothing is OK", rc == 0 and out.endswith("\nOK\n"), out)
    lost = make_log("snapshot-missing.kcount", "meta mode summary\nmeta interval_ns 3600000000000\n" + small_script())
    rc, out, err = kcount("check", lost)
    check("check: a closed summary-mode log that recorded launches but has no snapshot: NO TOTALS, exit 1",
          rc == 1 and "\nNO TOTALS: a summary-mode log closed without a complete snapshot, though its stats record "
          "counts 2 launch records, 2 kernel records and 2 range records tallied" in out and "\nOK" not in out, out)
    # The outputs without a footer say on stderr that it holds no totals; exit 0, as summary's table.
    warn = f"kcount: {lost}: warning: no totals: summary mode: no snapshot, so no numbers"
    rc, out, err = kcount("summary", "--format", "csv", lost)
    check("summary csv of a log without totals: the header only, a warning, exit 0",
          rc == 0 and len(out.splitlines()) == 1 and out.startswith("log,path,") and warn in err, f"rc={rc} {out!r} {err!r}")
    rc, out, err = kcount("kernels", lost)
    check("kernels of a log without totals: a warning, exit 0", rc == 0 and warn in err, f"rc={rc} {err!r}")
    rc, out, err = kcount("kernels", "--format", "csv", lost)
    check("kernels csv of a log without totals: a warning, exit 0", rc == 0 and warn in err, f"rc={rc} {err!r}")
    rc, out, err = kcount("summary", "--format", "json", lost)
    j = json.loads(out)["logs"][0]
    check("summary json of a log without totals: totals, overall and ranges null, state 'no totals', a warning",
          rc == 0 and j["snapshot"] is None and j["totals"] is None and j["overall"] is None and j["ranges"] is None
          and j["state"] == "no totals" and warn in err, f"rc={rc} {j} {err!r}")
    rc, out, err = kcount("summary", lost)
    check("summary of a log without totals: state NO TOTALS, no 'numbers above', nothing on stderr",
          rc == 0 and "\nlog complete but NO TOTALS: " in out and "numbers above" not in out and err == "",
          f"rc={rc} {out!r} {err!r}")
    # diff and report would read it as zeros (a made-up drop to 0): refused, exit 2, the reason named.
    for args, what in ((("diff", trace_log, lost), "compare"), (("diff", lost, trace_log), "compare"),
                       (("report", "-o", os.path.join(os.path.dirname(lost), "r.html"), lost), "chart")):
        rc, out, err = kcount(*args)
        check(f"{args[0]} of a log without totals: refused (exit 2), not read as zeros",
              rc == 2 and out == "" and f"{lost}: error: no totals: summary mode: no snapshot" in err
              and f"not known, not zeros: nothing to {what}" in err, f"rc={rc} {out[:200]!r} {err!r}")
    # A series cut by a kill (no end record): it says so on stderr, and JSON carries the log's state.
    cut = os.path.join(src, "..", "data", "fuzz-regressions", "summary-mode-final-snapshot-cut.kcount")
    rc, out, err = kcount("summary", "--series", cut)
    check("series of an incomplete log: a warning on stderr", rc == 0 and "log INCOMPLETE" in err, f"rc={rc} {err!r}")
    rc, out, err = kcount("summary", "--series", "--format", "json", cut, summary_log)
    states = [l.get("state") for l in json.loads(out)["logs"]]
    check("series json: each log's state", rc == 0 and states == ["incomplete", "complete"], f"rc={rc} {states}")


def test_option_bounds():
    log = make_log("bounds.kcount", small_script())
    for args in (["--top", "-1"], ["--top", "100000"], ["--segment", "-1"], ["--top", "2x"]):
        rc, out, err = kcount("summary", *args, log)
        check(f"summary {' '.join(args)}: short usage error",
              rc == 2 and "is not a whole number from" in err and len(err) < 200 and "0000000000000" not in err,
              f"rc={rc} {err!r}")
    rc, out, err = kcount("summary", "--top", "0", log)
    check("summary --top 0 is accepted", rc == 0, err)
    for args in (["--count", "0"], ["--skip", "-1"], ["--timeout", "0"], ["--timeout", "1e400"], ["--count", "x"]):
        rc, out, err = kcount("ctl", "1", "status", *args)
        check(f"ctl {' '.join(args)}: short usage error",
              rc == 2 and "is not a " in err and len(err) < 200 and "0000000000000000" not in err, f"rc={rc} {err!r}")


def test_kernels():
    src = os.path.dirname(os.path.abspath(__file__))
    sweep = os.path.join(src, "..", "..", "examples", "logs", "sweep-eager.kcount")
    rc, out, err = kcount("kernels", sweep)
    longest = max(len(l) for l in out.splitlines())
    check("kernels: ranges column is bounded", rc == 0 and longest < 1000 and "more" in out, f"longest line {longest}")
    rc, out, _ = kcount("kernels", "--format", "json", sweep)
    ranges = max(len(k["ranges"]) for k in json.loads(out)["kernels"])
    check("kernels --format json lists every range", rc == 0 and ranges > 100, f"most ranges {ranges}")
    a = make_log("k-a.kcount", "meta pid 101\n" + small_script())
    b = make_log("k-b.kcount", "meta pid 202\n" + small_script())
    rc, out, _ = kcount("kernels", a, b)
    rows = [l for l in out.splitlines() if "gemm_kernel" in l]
    check("kernels with two logs: one row per log, labelled by file name",
          rc == 0 and out.startswith("log ") and len(rows) == 2 and rows[0].startswith("k-a ")
          and rows[1].startswith("k-b "), out)


def test_kernels_sort():
    """kcount kernels: GPU total time first by default; --sort count|avg|name; csv and json in the same order."""
    src = os.path.dirname(os.path.abspath(__file__))
    log = os.path.join(src, "..", "..", "examples", "logs", "geglu-eager.kcount")
    keys = {"gpu": lambda k: (-k["gpu_ns"], -k["count"], k["name"]),
            "count": lambda k: (-k["count"], k["name"]),
            "avg": lambda k: (-k["gpu_ns"] / k["count"], -k["gpu_ns"], -k["count"], k["name"]),
            "name": lambda k: (k["short"], -k["gpu_ns"], -k["count"], k["name"])}
    for sort, key in keys.items():
        args = () if sort == "gpu" else ("--sort", sort)
        rc, out, _ = kcount("kernels", "--format", "json", *args, log)
        j = json.loads(out) if rc == 0 else {"kernels": []}
        got = [k["name"] for k in j["kernels"]]
        want = [k["name"] for k in sorted(j["kernels"], key=key)]
        check(f"kernels {' '.join(args) or '(default)'}: json rows by {sort}",
              rc == 0 and len(got) > 3 and got == want and j.get("sort") == sort, got)
        rc, out, _ = kcount("kernels", "--format", "csv", *args, log)
        csv_names = [r["name"] for r in csv.DictReader(io.StringIO(out))]
        check(f"kernels {' '.join(args) or '(default)'}: csv in the same order", rc == 0 and csv_names == got,
              csv_names)
        rc, out, _ = kcount("kernels", *args, log)
        rows = [l for l in out.splitlines()[2:] if l and not l.startswith("-:")]
        check(f"kernels {' '.join(args) or '(default)'}: one table row per kernel", rc == 0 and len(rows) == len(got),
              out)
    rc, out, _ = kcount("kernels", "--format", "json", log)
    gpu = [k["gpu_ns"] for k in json.loads(out)["kernels"]]
    check("kernels: the first row is where most GPU time went", gpu[0] == max(gpu), gpu)
    rc, out, err = kcount("kernels", "--sort", "time", log)
    check("kernels --sort time: usage error naming the choices", rc != 0 and "gpu" in err and "count" in err, err)


def test_kernels_range():
    """kcount kernels --range PATH: only that range's kernels (and its nested ranges'), averaged over it."""
    log = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "logs", "geglu-compiled.kcount")
    rc, out, _ = kcount("kernels", "--format", "json", log)
    whole = {k["name"]: k for k in json.loads(out)["kernels"]}
    fused = "triton_poi_fused__unsafe_view_gelu_mul_0"
    for path in ("step/mlp", "step"):
        rc, out, err = kcount("kernels", "--format", "json", "--range", path, log)
        ks = {k["name"]: k for k in json.loads(out)["kernels"]} if rc == 0 else {}
        rc2, summ, _ = kcount("summary", "--format", "json", log)
        mlp = [r for r in json.loads(summ)["logs"][0]["ranges"] if r["path"] == "step/mlp"][0]
        want = {k["name"]: (k["count"], k["gpu_ns"]) for k in mlp["kernels"]}
        check(f"kernels --range {path}: the kernels of step/mlp with its counts and GPU times",
              rc == 0 and {n: (k["count"], k["gpu_ns"]) for n, k in ks.items()} == want
              and set(k2 for k in ks.values() for k2 in k["ranges"]) == {"step/mlp"}, (rc, err, ks.keys()))
        check(f"kernels --range {path}: fewer runs of the fused kernel than the whole run (warm-up left out)",
              ks.get(fused, {}).get("count") == 20 and whole[fused]["count"] > 20, (ks.get(fused), whole[fused]["count"]))
    rc, out, err = kcount("kernels", "--range", "no/such", log)
    check("kernels --range with no such range: exit 2, named", rc == 2 and "no range no/such" in err, (rc, err))
    rc, out, err = kcount("kernels", "--range", "", log)
    check("kernels --range '': exit 2, not the whole run", rc == 2 and out == "" and "--range needs a range path" in err,
          (rc, out[:200], err))


def test_non_utf8_path():
    """A file name that is not UTF-8 (Latin-1 bytes) is shown escaped in the "== path" headers of summary and
    check, so the output stays valid UTF-8."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "logs", "linear-eager.kcount")
    with tempfile.TemporaryDirectory() as tmp:
        name = os.path.join(os.fsencode(tmp), b"lat\xe9in.kcount")
        shutil.copyfile(src, name)
        for cmd in ("summary", "check"):
            p = subprocess.run([KCOUNT, cmd, name], capture_output=True)
            first = p.stdout.split(b"\n")[0]
            try:
                p.stdout.decode("utf-8")
                valid = True
            except UnicodeDecodeError:
                valid = False
            check(f"{cmd} of a Latin-1 file name: valid UTF-8, the byte shown as \\xe9",
                  p.returncode == 0 and valid and first.startswith(b"== ") and b"lat\\xe9in.kcount" in first,
                  (p.returncode, first))


def test_path_too_long():
    """A path whose name is too long to look up is said to be so, not 'no such file'."""
    rc, out, err = kcount("summary", "/tmp/" + "a" * 300 + ".kcount")
    check("summary of a 300-character file name: exit 2, 'File name too long'",
          rc == 2 and "cannot look it up: File name too long" in err and "no such file" not in err, (rc, err[-120:]))


def test_options_without_effect():
    """Options that do nothing in the chosen format say so on stderr, the output unchanged."""
    log = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "logs", "linear-eager.kcount")
    for fmt in ("csv", "json"):
        rc, out, err = kcount("summary", "--format", fmt, "--wide", log)
        _, plain, _ = kcount("summary", "--format", fmt, log)
        check(f"summary --wide --format {fmt}: warned, output as without it",
              rc == 0 and out == plain and "--wide lays out the table format" in err, (rc, err))
    rc, out, err = kcount("summary", "--format", "json", "--top", "1", log)
    _, plain, _ = kcount("summary", "--format", "json", log)
    check("summary --top --format json: warned, output as without it",
          rc == 0 and out == plain and "--top limits the kernels of the table and CSV" in err, (rc, err))
    rc, out, err = kcount("summary", "--format", "csv", "--top", "1", log)
    check("summary --top --format csv: no warning (the CSV's top-kernels column follows it)", rc == 0 and err == "",
          (rc, err))
    rc, out, err = kcount("summary", "--metric", "kernels", log)
    check("summary --metric with one log: warned", rc == 0 and "--metric chooses the number of the across-logs table"
          in err, (rc, err))
    # --series: the same series whatever the table's options; each one given is named once.
    series_log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "fuzz-regressions",
                              "summary-mode-two-snapshots.kcount")
    for fmt in ("table", "csv", "json"):
        _, plain, _ = kcount("summary", "--series", "--format", fmt, series_log)
        for opt in (["--metric", "launches"], ["--view", "innermost"], ["--top", "1"], ["--wide"]):
            rc, out, err = kcount("summary", "--series", "--format", fmt, *opt, series_log)
            warned = [x for x in err.splitlines() if x.startswith(f"kcount: {opt[0]} shapes the summary table: no "
                                                                  "effect with --series")]
            check(f"summary --series --format {fmt} {' '.join(opt)}: warned once, output as without it",
                  rc == 0 and out == plain and len(warned) == 1, (rc, err))


def test_range_names():
    log = make_log("names.kcount", "push a/b\npush x\tz\nkernel 10 k\npop\npop\npush \nkernel 10 k\npop\n")
    rc, out, _ = kcount("summary", log)
    check("summary: '/' in a name escaped", rc == 0 and "\na\\/b " in out and "\n  x\\tz " in out, out)
    check("summary: an empty name shown as (empty name)", "\n(empty name) " in out, out)
    # SQLite export keeps the empty name as empty text (its strings table holds no NULL).
    db_path = os.path.join(TMP, "names.sqlite")
    rc, _, err = kcount("export", log, "--format", "sqlite", "-o", db_path)
    import sqlite3
    names = sorted(r[0] for r in sqlite3.connect(db_path).execute("SELECT value FROM strings")) if rc == 0 else None
    check("export sqlite: an empty range name is exported as ''", rc == 0 and names is not None and "" in names,
          (rc, err, names))
    rc, out, _ = kcount("summary", "--format", "csv", log)
    check("csv: escaped paths, no <scope N>", ",a\\/b/x\\tz," in out and "<scope" not in out, out)
    rc, out, _ = kcount("summary", "--format", "json", log)
    names = [r["name"] for r in json.loads(out)["logs"][0]["ranges"]]
    check("json: raw names", "a/b" in names and "x\tz" in names, str(names))
    other = make_log("names2.kcount", "meta pid 9\npush a/b\nkernel 10 k\npop\n")
    rc, out, _ = kcount("summary", log, other)
    across = out[out.index("== across"):] if "== across" in out else ""
    check("across logs: escaped paths", rc == 0 and "\na\\/b " in across and "\na\\/b/x\\tz " in across, across)
    da = make_log("diff-a.kcount", "push p\npush x/y\nkernel 10 k\npop\npop\n")
    db = make_log("diff-b.kcount", "push p\npush z\nkernel 10 k\npop\npop\n")
    rc, out, _ = kcount("diff", "--all", da, db)
    check("diff: a child named x/y is one range under p, escaped in text",
          rc == 0 and "nesting differs under p: A has [x\\/y], B has [z]" in out and "\np/x\\/y " in out, out)
    rc, out, _ = kcount("diff", "--format", "json", da, db)
    ranges = {r["path"]: r for r in json.loads(out)["ranges"]}
    check("diff json: raw names", ranges.get("p", {}).get("children_a") == ["x/y"], str(ranges.get("p")))


def verdict_lines(out):
    """{path: verdict line text after "path: "} from the lines under 'verdicts, top kernels'."""
    lines = out[out.index("verdicts, top kernels"):].splitlines()[1:] if "verdicts, top kernels" in out else []
    got = {}
    for l in lines:
        if not l.startswith("  "):
            break
        path, _, text = l[2:].partition(": ")
        got[path] = text
    return got


def test_verdicts():
    """The verdict lines of summary: memory operations are GPU work, an innermost parent's work is in its
    children, and --graph-view capture does not weigh graph launches against replays."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    launches = os.path.join(root, "tests", "data", "launches.kcount")
    rc, out, _ = kcount("summary", launches)
    memops = verdict_lines(out).get("memops", "")
    check("verdict: a range with 3 memcpy and 1 memset has GPU work",
          rc == 0 and memops.startswith("CPU-bound: 54.8 µs in the range for 5.34 µs of GPU work "
                                        "(memory copies and memsets; no kernel launch calls)"), memops)
    rc, out, _ = kcount("summary", "--format", "json", launches)
    r = [r for r in json.loads(out)["logs"][0]["ranges"] if r["path"] == "memops"][0]
    check("verdict json: the same for memops", r["verdict"] == memops and "no GPU work" not in r["verdict"], r["verdict"])

    geglu = os.path.join(root, "examples", "logs", "geglu-eager.kcount")
    rc, tree, _ = kcount("summary", geglu)
    rc2, inner, _ = kcount("summary", "--view", "innermost", geglu)
    t, i = verdict_lines(tree), verdict_lines(inner)
    check("innermost: a parent whose work is in its children is not 'no GPU work'",
          rc2 == 0 and not any("no GPU work" in i.get(p, "no GPU work") for p in ("step", "warmup", "warmup/step")), i)
    check("innermost: the parent's verdict is its inclusive one, said to count its child ranges",
          all(i.get(p) == "with its child ranges: " + t.get(p, "") for p in ("step", "warmup", "warmup/step")), (i, t))
    check("innermost: a leaf range's verdict is the tree view's", i.get("step/act") == t.get("step/act") != None, i)
    check("tree view: step's verdict unchanged (its children's memsets are under 1% of its GPU work: not named)",
          t.get("step") == "GPU-bound: 1.53 ms of GPU work in 207 µs of range time per instance", t.get("step"))
    rc, out, _ = kcount("summary", "--format", "json", geglu)
    step = [r for r in json.loads(out)["logs"][0]["ranges"] if r["path"] == "step"][0]
    check("json: layers.innermost.verdict of step as --view innermost prints it",
          step["layers"]["innermost"]["verdict"] == i.get("step") and step["verdict"] == t.get("step"), step["layers"])

    graphs = os.path.join(root, "tests", "data", "graphs.kcount")
    rc, out, _ = kcount("summary", "--graph-view", "capture", graphs)
    v = verdict_lines(out)
    check("capture view: graph launches are not launch-bound for 0 ns",
          rc == 0 and v.get("rep", "").startswith("graph launches: their kernels are credited to the ranges they were "
                                                   "captured in (--graph-view capture, no bound verdict): 1.11 ms of "
                                                   "launch calls in 1.45 ms of range time"), v.get("rep"))
    check("capture view: the capturing range is not CPU-bound against its replays",
          v.get("cap", "").startswith("captured kernels: their replays' GPU work is credited here (--graph-view "
                                      "capture, no bound verdict): 522 µs of GPU work, 1.19 ms in the range, 148 µs "
                                      "in launch calls"), v.get("cap"))
    check("capture view: a range without graphs keeps its verdict", v.get("warm", "").startswith("CPU-bound: 25.5 ms"),
          v.get("warm"))
    rc, out, _ = kcount("summary", graphs)
    v = verdict_lines(out)
    check("launch view: unchanged", v.get("rep") == "launch-bound: 1.11 ms of launch calls for 520 µs of GPU work; top: "
          "at::native::vectorized_elementwise_kernel<4, CUDAFunctorOnSelf_add> ×500"
          and v.get("cap", "").startswith("CPU-bound: 1.19 ms in the range for 1.60 µs of GPU work (148 µs in launch "
                                          "calls)"), v)


def test_long_damaged_tail():
    """A log whose process did not close it, followed by 1 GiB of zeros (a sparse file: a file system that
    kept the size of unwritten blocks after a crash): the zeros hold no chunk, so check and summary read
    the log as incomplete (not damaged) and name the zero bytes. The same tail with one last byte that is
    not zero is damage: check and summary --salvage read the intact part. Both stay small in memory, the
    scans over the tail dropping the pages they passed (docs/reader-guarantees.md: memory does not grow
    with the damaged part)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "logs", "geglu-eager.kcount")
    with open(src, "rb") as f:
        data = f.read()
    cut = os.path.join(TMP, "cut.kcount")
    with open(cut, "wb") as f:
        f.write(data[:-100])
    rc, out, err = kcount("check", cut)
    end = next((int(w.rstrip(".;")) for line in out.splitlines() if "last intact chunk" in line
                for w in [line.split("ends at byte ")[-1].split()[0]]), None)
    check("long tail: the cut log's last intact chunk is named", end is not None and end > 16, out[-300:])
    if end is None:
        return
    import resource
    size = 1 << 30
    tail = os.path.join(TMP, "zero-tail.kcount")
    for last_byte in (None, b"\x01"):
        with open(tail, "wb") as f:
            f.write(data[:end])
        os.truncate(tail, size)
        if last_byte is not None:
            with open(tail, "r+b") as f:
                f.seek(size - 1)
                f.write(last_byte)
        runs = (["check", tail], ["summary", tail]) if last_byte is None else (["check", tail], ["summary", "--salvage", tail])
        for args in runs:
            rc, out, err = kcount(*args)
            # The largest peak of any child so far: the others (small logs) stay far below the bound.
            peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
            if last_byte is None:
                said = f"the file ends in {size - end} zero bytes from byte {end}, where chunk"
                check(f"zero tail: {args[0]} reads an incomplete log, not a damaged one "
                      f"(exit {'1' if args[0] == 'check' else '0'})",
                      rc == (1 if args[0] == "check" else 0) and said in out + err
                      and "log has no end record: the process did not close it" in out + err
                      and ("INCOMPLETE (no end record)" in out if args[0] == "check" else True)
                      and "DAMAGED" not in out + err, (rc, (out + err)[-400:]))
            else:
                check(f"long damaged tail: {args[0]} reads the intact part (exit {'2' if args[0] == 'check' else '0'})",
                      rc == (2 if args[0] == "check" else 0) and f"bad chunk magic at byte {end}" in out + err,
                      (rc, (out + err)[-300:]))
            check(f"long tail ({'zeros' if last_byte is None else 'damaged'}): {args[0]} peak memory well under "
                  f"the 1 GiB tail", peak_mb < 200, f"{peak_mb:.0f} MB")
    os.remove(tail)


def test_long_command_line():
    """A command line of thousands of characters is shortened in the table's header, with its length; the
    JSON keeps it whole."""
    cmd = "train.py " + "--flag=" + "x" * 6000 + " --end"
    log = make_log("longcmd.kcount", f"meta command_line {cmd}\n" + small_script())
    rc, out, err = kcount("summary", log)
    line = next((l for l in out.splitlines() if l.startswith("   command: ")), "")
    check("long command line: shortened in the header, with its length",
          rc == 0 and line.startswith("   command: train.py --flag=xxx") and line.endswith(f" --end ({len(cmd)} characters)")
          and len(line) < 500, line[:120])
    rc, out, err = kcount("summary", "--format", "json", log)
    check("long command line: JSON keeps it whole",
          rc == 0 and json.loads(out)["logs"][0]["metadata"].get("command_line") == cmd)


def test_csv_json_name_unclean_logs():
    """summary --format csv/json have no footer: a log cut by a kill is named on stderr with the state line
    (the numbers undercount); a complete, clean log gets no line."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    killed = os.path.join(root, "tests", "data", "sigkill.kcount")
    clean = os.path.join(root, "examples", "logs", "geglu-eager.kcount")
    for fmt in ("csv", "json"):
        rc, out, err = kcount("summary", "--format", fmt, killed)
        # CSV carries no issues: the reader's warning is on stderr too (JSON lists it in "issues").
        lines = err.strip().splitlines()
        reader = [f"kcount: {killed}: warning: log has no end record: "] if fmt == "csv" else []
        want = reader + [f"kcount: {killed}: warning: log INCOMPLETE (no end record)"]
        check(f"summary --format {fmt} of a killed log: named on stderr",
              rc == 0 and len(lines) == len(want) and all(l.startswith(w) for l, w in zip(lines, want)), (rc, err))
        rc, out, err = kcount("summary", "--format", fmt, clean)
        check(f"summary --format {fmt} of a clean log: nothing on stderr", rc == 0 and err == "", (rc, err))


def test_segment_state():
    """A capture window of a complete log reads as the log's state: the log's Stats count the whole run's
    records, the window holds a part of them (summary --segment said RECORDS MISSING, 0 in the file)."""
    log = make_log("windows.kcount", "push s\nkernel 10 k1\npop\nsegment\npush s\nkernel 20 k2\npop\nsegment\n")
    rc, out, _ = kcount("check", log)
    check("segment state: the two-window log checks OK", rc == 0 and out.rstrip().endswith("OK"), out)
    for seg in ("0", "1"):
        rc, out, err = kcount("summary", "--segment", seg, log)
        check(f"segment state: --segment {seg} says log complete",
              rc == 0 and "log complete" in out and "RECORDS MISSING" not in out + err, out + err)
        rc, out, err = kcount("summary", "--segment", seg, "--format", "json", log)
        state = json.loads(out)["logs"][0]["state"] if rc == 0 else None
        check(f"segment state: --segment {seg} JSON state complete", state == "complete", f"rc={rc} {state} {err}")


def test_killed_log_warnings_alike():
    """kernels, export, report and diff name a log cut by a kill with the same two lines as summary --format
    csv (and the table's footer): the reader's "log has no end record" warning, then "log INCOMPLETE"."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    killed = os.path.join(root, "tests", "data", "sigkill.kcount")
    clean = os.path.join(root, "examples", "logs", "geglu-eager.kcount")
    want = [f"kcount: {killed}: warning: log has no end record: ",
            f"kcount: {killed}: warning: log INCOMPLETE (no end record)"]
    for args in (["summary", "--format", "csv", killed], ["kernels", killed],
                 ["export", killed, "--format", "chrome", "-o", os.path.join(TMP, "killed.json")],
                 ["report", killed, "-o", os.path.join(TMP, "killed.html")], ["diff", killed, clean]):
        rc, out, err = kcount(*args)
        lines = [l for l in err.splitlines() if l.startswith(f"kcount: {killed}: ")]
        check(f"{args[0]} of a killed log: its reader warning, then its state line",
              rc == 0 and len(lines) == len(want) and all(l.startswith(w) for l, w in zip(lines, want)), (rc, err))


def main():
    for test in (test_concatenated, test_segment_state, test_salvage_packed, test_series, test_option_bounds, test_kernels,
                 test_kernels_sort, test_kernels_range, test_range_names, test_verdicts,
                 test_options_without_effect, test_non_utf8_path, test_path_too_long, test_long_damaged_tail,
                 test_long_command_line, test_csv_json_name_unclean_logs,
                 test_killed_log_warnings_alike):
        test()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
