#!/usr/bin/env python3
"""Usability of the kcount tool on awkward input (docs/usage.md):

- `export`: the Chrome trace size guard (refuses above --max-mb, names the options that narrow it,
  writes nothing; --force writes), the estimate against the written size, --from/--to and --segment
  for every format;
- `summary --segment` on a summary-mode log: a clear error, exit 2;
- files that are not kcount logs (empty, random bytes, a script): `check` says so with what byte 0
  holds, exit 2, no join lines; `summary` does not suggest --salvage; a file name starting with '-';
- logs with records dropped while recording: "complete but LOSSY" in the table, JSON and check, and one
  warning line per lossy log from kernels, export, report (also in the page) and each side of diff;
- paths that are no log file (missing, a folder, /dev/null, a /proc file): one NOT A LOG FILE line, exit 2; gzip and
  zstd data named as such; export -o a folder says why it cannot write;
- a rotated part above 0 given alone (PARTIAL, exit 1, state "rotated part"); the same file given twice
  (read once); diff of two parts of one run (warned);
- a 5,000-character range name: tables stay narrow, JSON and CSV keep the name whole;
- the kernels table's '-' legend, the --view innermost help, `run --output /dev/stdout` refused;
- check's records line counts launches as summary does, memcpy/memset calls apart; a placeholder row is
  marked '*' and explained under the table, not in the row.

Logs are written by kc_make_log (tests/programs/make_log.cpp) or shipped (examples/logs, recorded on an
H200). Usage: test_ux.py BUILD_DIR [KC_MAKE_LOG]
"""
import csv
import io
import json
import os
import shutil
import pwd
import re
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "examples", "logs", "sweep-eager.kcount")


def make_log(path, script):
    subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)


def events(path):
    with open(path) as f:
        return json.load(f)["traceEvents"]


def test_export(work):
    out = os.path.join(work, "t.json")
    # Size guard: sweep-eager's trace is about 13 MB; a 5 MB limit refuses it and writes nothing.
    r = kcount("export", SWEEP, "--format", "chrome", "-o", out, "--max-mb", "5")
    check("export: trace above --max-mb refused (exit 2)", r.returncode == 2, r.returncode)
    check("export: nothing written when refused", not os.path.exists(out))
    for opt in ("--from/--to", "--force", "--format sqlite"):
        check(f"export: the refusal names {opt}", opt in r.stderr, r.stderr)
    m = re.search(r"about ([0-9.]+) MB \(([0-9]+) events?\)", r.stderr)
    check("export: the refusal gives the estimated size and events", m is not None, r.stderr)
    r = kcount("export", SWEEP, "--format", "chrome", "-o", out, "--max-mb", "5", "--force")
    check("export --force writes it", r.returncode == 0 and os.path.exists(out), r.stderr)
    if m and os.path.exists(out):
        size = os.path.getsize(out) / 1e6
        est = float(m.group(1))
        check(f"export: estimate {est} MB within 1.5x of the written {size:.1f} MB", size / 1.5 <= est <= size * 1.5)
        timed = [e for e in events(out) if e["ph"] != "M"]
        check(f"export: estimated events {m.group(2)} = written {len(timed)}", int(m.group(2)) == len(timed))
    # Default limit (256 MB): a 13 MB trace is written.
    r = kcount("export", SWEEP, "--format", "chrome", "-o", out)
    check("export: below the default limit, written", r.returncode == 0, r.stderr)
    full = events(out)
    full_kernels = [e for e in full if e.get("cat") == "kernel" and e["ph"] == "X"]

    # A time window: kernels overlapping [1 s, 1.5 s] after the log's start (start_ns metadata), and their launches.
    meta = json.loads(kcount("summary", "--format", "json", SWEEP).stdout)["logs"][0]["metadata"]
    start_us = int(meta["start_ns"]) / 1000.0
    lo, hi = start_us + 1e6, start_us + 1.5e6
    r = kcount("export", SWEEP, "--format", "chrome", "-o", out, "--from", "1s", "--to", "1500ms")
    check("export --from 1s --to 1500ms", r.returncode == 0, r.stderr)
    win = events(out)
    kernels = [e for e in win if e.get("cat") == "kernel" and e["ph"] == "X"]
    launches = {e["args"]["correlation id"] for e in win if e.get("cat") == "cuda_api" and e["ph"] == "X"}
    want = [e for e in full_kernels if float(e["ts"]) <= hi and float(e["ts"]) + float(e["dur"]) >= lo]
    check(f"export window: {len(kernels)} of {len(full_kernels)} kernels", 0 < len(kernels) < len(full_kernels))
    check("export window: exactly the kernels that overlap the window (or whose launch does)",
          sorted(e["args"]["correlation id"] for e in want) == sorted(e["args"]["correlation id"] for e in kernels))
    check("export window: every kernel's launch is in it",
          all(e["args"]["correlation id"] in launches for e in kernels))
    records = os.path.join(work, "r.json")
    r = kcount("export", SWEEP, "--format", "json", "-o", records, "--from", "1s", "--to", "1500ms")
    with open(records) as f:
        doc = json.load(f)
    check("export --format json: the same window, the same kernels",
          r.returncode == 0 and len(doc["kernels"]) == len(kernels), (len(doc["kernels"]), len(kernels)))
    r = kcount("export", SWEEP, "--format", "chrome", "-o", out, "--from", "2s", "--to", "1s")
    check("export: --to before --from refused", r.returncode == 2 and "before --from" in r.stderr, r.stderr)
    r = kcount("export", SWEEP, "--format", "chrome", "-o", out, "--from", "soon")
    check("export: --from soon refused", r.returncode == 2 and "not a duration" in r.stderr, r.stderr)

    # --segment: 3 capture windows of 20 kernels each.
    seg = os.path.join(work, "seg.kcount")
    script = "".join(f"push step\nkernel 100 k{j}\npop\n" for j in range(20))
    make_log(seg, (script + "segment\n") * 3)
    r = kcount("export", seg, "--format", "chrome", "-o", out, "--segment", "1")
    kernels = [e for e in events(out) if e.get("cat") == "kernel" and e["ph"] == "X"]
    check("export --segment 1: its 20 kernels", r.returncode == 0 and len(kernels) == 20, (r.stderr, len(kernels)))
    r = kcount("export", seg, "--format", "chrome", "-o", out, "--max-mb", "0.001")
    check("export: the refusal names --segment for a log with capture windows",
          r.returncode == 2 and "--segment N (one of the 3 capture windows, 0 to 2)" in r.stderr, r.stderr)
    r = kcount("export", seg, "--format", "csv", "-o", os.path.join(work, "csv"), "--segment", "2")
    with open(os.path.join(work, "csv", "kernels.csv")) as f:
        rows = list(csv.DictReader(f))
    check("export --format csv --segment 2: 20 kernel rows", r.returncode == 0 and len(rows) == 20, len(rows))
    r = kcount("export", seg, "--format", "chrome", "-o", out, "--segment", "7")
    check("export --segment 7",
          r.returncode == 2 and "no segment 7 (the log has 3 capture windows)" in r.stderr, r.stderr)
    # A log recorded from start to exit has no capture window: --segment 0 says the whole log is the recording.
    whole = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
    r = kcount("summary", whole, "--segment", "0")
    check("summary --segment 0 of a log without windows: why",
          r.returncode == 2 and "no segment 0 (the log has 0 capture windows): it was recorded from start to exit"
          in r.stderr and "leave out --segment" in r.stderr, r.stderr)


def test_summary_mode_segment(work):
    log = os.path.join(work, "summary-mode.kcount")
    make_log(log, "push step\nkernel 100 k\npop\nsnapshot\n")
    r = kcount("summary", "--segment", "0", log)
    check("summary --segment on a summary-mode log: error, exit 2, no table",
          r.returncode == 2 and "summary-mode log" in r.stderr and "--series" in r.stderr and r.stdout == "", (r.returncode, r.stderr, r.stdout))
    # With capture windows: listed without per-window counts, and no hint at --segment, which refuses it.
    windows = os.path.join(work, "summary-windows.kcount")
    make_log(windows, "push step\nkernel 100 k\npop\nsegment\n" * 3 + "snapshot\n")
    r = kcount("summary", windows)
    check("summary of a summary-mode log with windows: windows listed, counts not",
          r.returncode == 0 and "capture windows: 3; summary mode: the numbers above are cumulative" in r.stdout
          and "--segment" not in r.stdout and "  segment 1: ctl -> ctl, " in r.stdout
          and " unmatched, GPU time" not in r.stdout, r.stdout)
    r = kcount("summary", "--segment", "0", windows)
    check("summary --segment on it: refused, naming its windows",
          r.returncode == 2 and "has no capture windows" not in r.stderr and "3 capture windows" in r.stderr, r.stderr)
    r = kcount("summary", "--format", "json", windows)
    segs = json.loads(r.stdout)["logs"][0]["segments"]
    check("summary --format json on it: per-window counts null",
          r.returncode == 0 and len(segs) == 3 and all(s["ranges"] is None and s["launches"] is None for s in segs), segs)


def test_not_a_log(work):
    empty = os.path.join(work, "empty.kcount")
    open(empty, "wb").close()
    rand = os.path.join(work, "random.kcount")
    with open(rand, "wb") as f:
        f.write(bytes((i * 73 + 41) % 256 for i in range(4096)))
    script = os.path.join(work, "script.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho hi\n")
    for path, want in ((empty, "empty file (0 bytes)"), (rand, "byte 0 holds 29 72 bb"),
                       (script, 'byte 0 holds 23 21 2f 62 69 6e 2f 73 68 0a 65 63 68 6f 20 68 ("#!/bin/sh\\necho h") (18 bytes in all)')):
        name = os.path.basename(path)
        r = kcount("check", path)
        check(f"check {name}: exit 2", r.returncode == 2, r.returncode)
        check(f"check {name}: says what byte 0 holds", "NOT A KCOUNT LOG" in r.stdout and want in r.stdout, r.stdout)
        check(f"check {name}: no join or record lines",
              "join:" not in r.stdout and "records:" not in r.stdout, r.stdout)
        r = kcount("summary", path)
        check(f"summary {name}: not a kcount log, no --salvage suggested",
              r.returncode == 2 and "--salvage" not in r.stderr and "not a kcount log" in r.stderr, r.stderr)
    # A file name that starts with '-'.
    weird = os.path.join(work, "-weird name.kcount")
    make_log(weird, "push step\nkernel 100 k\npop\n")
    r = kcount("summary", "-weird name.kcount", cwd=work)
    check("summary -weird: the error says to put it after --", r.returncode == 2 and 'after "--"' in r.stderr, r.stderr)
    r = kcount("summary", "--", "-weird name.kcount", cwd=work)
    check("summary -- -weird name.kcount works", r.returncode == 0 and "step" in r.stdout, r.stderr)
    r = kcount("check", "--", "-weird name.kcount", cwd=work)
    check("check -- -weird name.kcount works", r.returncode == 0 and r.stdout.rstrip().endswith("OK"), r.stdout)


def test_missing_paths(work):
    r = kcount("summary", os.path.join(work, "nope.kcount"))
    check("summary of a path that does not exist: one line naming it, exit 2",
          r.returncode == 2 and r.stderr.strip() == f"kcount: {os.path.join(work, 'nope.kcount')}: no such file", r.stderr)
    r = kcount("export", "csv", "--format", "csv", "-o", os.path.join(work, "x.csv"))
    check("export csv ...: the format word taken for a log is named as such",
          r.returncode == 2 and "kcount: csv: no such file (a format is an option: --format csv)" in r.stderr, r.stderr)
    r = kcount("summary", "-")
    check("summary -: says logs are not read from standard input",
          r.returncode == 2 and "kcount: -: no such file (logs are read from files, not from standard input" in r.stderr,
          r.stderr)
    r = kcount("export", "csv", "--help")
    check("--help wins over a path that does not exist",
          r.returncode == 0 and "Usage:" in r.stdout, r.stdout[:200] + r.stderr)
    r = kcount("diff", "-a", os.path.join(work, "nope-a.kcount"), "-b", os.path.join(work, "nope-b.kcount"))
    check("diff -a/-b: every missing path named", r.returncode == 2 and r.stderr.count("no such file") == 2, r.stderr)
    # Three (or one) logs: a usage error before any path is looked at, not "no such file" per path.
    for given, word in ((("x", "y", "z"), "3 logs"), (("x",), "1 log")):
        r = kcount("diff", *given)
        check(f"diff with {word}: one usage error",
              r.returncode == 2 and "diff takes two logs (A B)" in r.stderr and f"(given: {word})" in r.stderr
              and "no such file" not in r.stderr, r.stderr)
    # -a takes every log after it: `diff -a A B` has no side B, and says so (it read "given: 0 logs").
    r = kcount("diff", "-a", "x", "y")
    check("diff -a A B: names what -a took and that -b is missing",
          r.returncode == 2 and "(given: -a with 2 logs, no -b); -a takes every log after it" in r.stderr, r.stderr)


def test_metric_note():
    one = os.path.join(ROOT, "tests", "data", "launches.kcount")
    two = os.path.join(ROOT, "tests", "data", "graphs.kcount")
    r = kcount("summary", "--metric", "kernels", one)
    check("summary --metric with one log: says it has no effect",
          r.returncode == 0 and "--metric chooses the number of the across-logs table" in r.stderr, r.stderr)
    r = kcount("summary", "--metric", "kernels", one, two)
    check("summary --metric with two logs: no note", r.returncode == 0 and "--metric" not in r.stderr, r.stderr)


def test_short_interval(work, build):
    # KCOUNT_INTERVAL below the library's 100 ms drain: check says what the snapshots really follow.
    log = os.path.join(work, "short-interval.kcount")
    env = dict(os.environ, KCOUNT_MODE="summary", KCOUNT_INTERVAL="1ms", KCOUNT_OUTPUT=log,
               NVTX_INJECTION64_PATH=os.path.join(build, "lib", "libkcount.so"))
    subprocess.run([os.path.join(build, "bin", "nvtx_ranges"), "2000"], env=env, capture_output=True, check=True)
    r = kcount("check", log)
    check("check: an interval below 100 ms shown as the 100 ms it acts as",
          r.returncode == 0 and "every 100 ms (KCOUNT_INTERVAL=1.00 ms, below the 100 ms drain interval)" in r.stdout, r.stdout[-500:] + r.stderr)


def test_newer_format(work):
    # A log whose header names major version 2 (a later kcount): "unsupported", not damaged.
    src = os.path.join(ROOT, "tests", "data", "launches.kcount")
    data = bytearray(open(src, "rb").read())
    data[8] = 2  # FileHeader.major (docs/format.md: magic, then u16 major)
    newer = os.path.join(work, "newer.kcount")
    with open(newer, "wb") as f:
        f.write(data)
    r = kcount("check", newer)
    check("check: a newer major version is UNSUPPORTED, not DAMAGED",
          r.returncode == 2 and "UNSUPPORTED: format 2." in r.stdout and "DAMAGED" not in r.stdout
          and "records:" not in r.stdout, r.stdout)
    r = kcount("summary", newer)
    check("summary: a newer major version named, not called damaged",
          r.returncode == 2 and "log format 2." in r.stderr and "is not one this kcount reads (1.x)" in r.stderr
          and "damaged" not in r.stderr, r.stderr)


def test_drops(work):
    lossy = os.path.join(work, "lossy.kcount")
    make_log(lossy, "push step\nkernel 100 k\npop\ndropped host 970\ndropped activity 3\n")
    clean = os.path.join(work, "clean.kcount")
    make_log(clean, "push step\nkernel 100 k\npop\n")
    r = kcount("summary", lossy)
    want = ("log complete but LOSSY: 973 records dropped while recording (host records: 970 (KCOUNT_MAX_HOST_MB, or NVTX ranges nested deeper than 256), "
            "activity records: 3 (dropped by CUPTI)); the numbers above undercount")
    check("summary: a lossy log's state line", r.returncode == 0 and want in r.stdout.splitlines(), r.stdout[-600:])
    r = kcount("summary", clean)
    check("summary: a clean log says only 'log complete'", "log complete" in r.stdout.splitlines(), r.stdout[-300:])
    j = json.loads(kcount("summary", "--format", "json", lossy).stdout)["logs"][0]
    check("summary json: state, lossy, drops",
          j["state"] == "complete, lossy" and j["lossy"] and j["drops"]["records"] == 973
          and j["drops"]["counters"] == {"dropped_host_records": 970, "dropped_activity_records": 3}, {k: j[k] for k in ("state", "lossy", "drops")})
    j = json.loads(kcount("summary", "--format", "json", clean).stdout)["logs"][0]
    check("summary json: a clean log is complete, not lossy", j["state"] == "complete" and not j["lossy"])
    r = kcount("check", lossy)
    lines = r.stdout.splitlines()
    check("check: a lossy log exits 1 (not 2: drops are not damage)", r.returncode == 1, r.returncode)
    check("check: DROPS line and COMPLETE BUT LOSSY",
          any(l.startswith("DROPS: 973 records dropped") for l in lines) and lines[-1].startswith("COMPLETE BUT LOSSY"), r.stdout)
    r = kcount("check", clean)
    check("check: clean log OK", r.returncode == 0 and r.stdout.splitlines()[-1] == "OK" and "DROPS" not in r.stdout)
    # Every other reading command names the lossy log on stderr, once, and says nothing for a clean one.
    warn = (f"kcount: {lossy}: warning: log complete but LOSSY: 973 records dropped while recording (host records: "
            "970 (KCOUNT_MAX_HOST_MB, or NVTX ranges nested deeper than 256), activity records: 3 (dropped by CUPTI)); its numbers undercount")
    page = os.path.join(work, "lossy.html")
    for args in (("kernels", lossy, clean), ("kernels", "--format", "json", lossy, clean),
                 ("export", "--format", "json", "-o", os.path.join(work, "l.json"), lossy, clean),
                 ("export", "--format", "sqlite", "-o", os.path.join(work, "l.db"), lossy, clean),
                 ("report", "-o", page, lossy, clean), ("diff", lossy, clean), ("diff", clean, lossy)):
        r = kcount(*args)
        lines = r.stderr.splitlines()
        check(f"{' '.join(args[:2])}: one LOSSY warning for the lossy log, none for the clean one",
              r.returncode == 0 and lines.count(warn) == 1 and not any(clean in l for l in lines), r.stderr)
    with open(page) as f:
        html = f.read()
    check("report: the page carries the lossy state line",
          "log complete but LOSSY: 973 records dropped" in html and '"complete, lossy"' in html)
    r = kcount("diff", lossy, lossy)
    check("diff of a lossy log with itself: each side warned, and the same file named",
          r.stderr.count("LOSSY") == 2 and "hold the same file" in r.stderr, r.stderr)


def test_not_a_file(work):
    # A missing path inside this test's own folder (a fixed one such as /nonexistent/x.kcount can be made by
    # anyone on the machine, e.g. a profiled run with KCOUNT_OUTPUT pointing there).
    missing = os.path.join(work, "no-such-folder", "x.kcount")
    for path, want in ((missing, "CANNOT READ: cannot read it: No such file or directory"),
                       (work, "NOT A LOG FILE: a folder, not a log file"),
                       ("/dev/null", "NOT A LOG FILE: not a regular file"),
                       # its size reads as 0, yet it is not empty
                       ("/proc/self/status", "NOT A LOG FILE: a /proc or /sys file")):
        r = kcount("check", path)
        lines = r.stdout.splitlines()
        check(f"check {path}: one clear line, exit 2",
              r.returncode == 2 and len(lines) == 2 and lines[1].startswith(want)
              and "format version" not in r.stdout and "chunk -1" not in r.stdout, r.stdout + r.stderr)
        if not os.path.exists(path):
            continue  # summary says "no such file" (usage.md)
        r = kcount("summary", path)
        check(f"summary {path}: why, without a byte offset into a file that holds no log (exit 2)",
              r.returncode == 2 and want.split(": ", 1)[1] in r.stderr and "(byte 0)" not in r.stderr, r.stderr)
    # A FIFO is never opened: every reading command answers at once (it used to block in open()).
    fifo = os.path.join(work, "pipe.kcount")
    os.mkfifo(fifo)
    for args in (["summary", fifo], ["kernels", fifo], ["diff", fifo, fifo],
                 ["export", fifo, "--format", "csv", "-o", os.path.join(work, "fifo.csv")],
                 ["report", fifo, "-o", os.path.join(work, "fifo.html")], ["check", fifo]):
        try:
            r = subprocess.run([KCOUNT, *args], capture_output=True, text=True, timeout=20)
            ok = r.returncode == 2 and "not a regular file" in r.stdout + r.stderr
            detail = r.stdout + r.stderr
        except subprocess.TimeoutExpired:
            ok, detail = False, "still waiting after 20 s"
        check(f"{args[0]} of a FIFO: not a regular file, exit 2, no wait", ok, detail)
    os.unlink(fifo)
    # A log its reader may not open: named so, not called damaged (needs a second user: root creates it).
    if os.geteuid() == 0 and shutil.which("useradd"):
        user = "kcountctl"
        try:
            pwd.getpwnam(user)
        except KeyError:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", user], check=True)
        closed = os.path.join(work, "closed.kcount")
        make_log(closed, "push a\nkernel 10 k\npop\n")
        os.chmod(closed, 0o600)
        os.chmod(work, 0o711)
        try:
            r = subprocess.run([KCOUNT, "check", closed], capture_output=True, text=True, user=user, timeout=30)
            check("check of a log this user may not open: CANNOT READ, not DAMAGED",
                  r.returncode == 2 and "CANNOT READ: cannot read it: Permission denied" in r.stdout
                  and "DAMAGED" not in r.stdout and "format version" not in r.stdout, r.stdout + r.stderr)
            r = subprocess.run([KCOUNT, "summary", closed], capture_output=True, text=True, user=user, timeout=30)
            check("summary of a log this user may not open: the reason, not 'damaged'",
                  r.returncode == 2 and "Permission denied" in r.stderr and "damaged" not in r.stderr, r.stderr)
        finally:
            os.chmod(work, 0o700)
    else:
        print("SKIP unreadable log: needs root to create a second user")
    gz = os.path.join(work, "log.kcount.gz")
    with open(gz, "wb") as f:
        f.write(bytes([0x1f, 0x8b, 8, 0]) + bytes(40))
    zst = os.path.join(work, "log.kcount.zst")
    with open(zst, "wb") as f:
        f.write(bytes([0x28, 0xb5, 0x2f, 0xfd]) + bytes(40))
    for path, kind in ((gz, "gzip"), (zst, "zstd")):
        r = kcount("check", path)
        check(f"check {kind} data: named, with a hint",
              r.returncode == 2 and f"not a kcount log ({kind} data: decompress it first)" in r.stdout, r.stdout)
        r = kcount("summary", path)
        check(f"summary {kind} data: named, with a hint",
              r.returncode == 2 and f"({kind} data: decompress it first)" in r.stderr, r.stderr)
    log = os.path.join(work, "small.kcount")
    make_log(log, "push step\nkernel 100 k\npop\n")
    folder = os.path.join(work, "outdir")
    os.makedirs(folder, exist_ok=True)
    for fmt in ("json", "chrome"):
        r = kcount("export", "--format", fmt, "-o", folder, log)
        check(f"export --format {fmt} -o FOLDER: says it is a folder",
              r.returncode == 2 and f"cannot write {folder}: it is a folder" in r.stderr, r.stderr)
    nowhere = os.path.join(work, "no-such-folder", "dir", "r.html")
    r = kcount("report", "-o", nowhere, log)
    check("report -o in a missing folder: the system's reason",
          r.returncode == 2 and f"cannot write {nowhere}: No such file or directory" in r.stderr, r.stderr)


def test_rotated_parts(work):
    ident = "meta host h1\nmeta pid 42\nmeta start_ns 1000\n"
    p0 = os.path.join(work, "rot.kcount")
    p1 = os.path.join(work, "rot.1.kcount")
    p3 = os.path.join(work, "rot.3.kcount")
    make_log(p0, ident + "push step\nkernel 100 k\npop\n")
    make_log(p1, ident + "meta rotated_file 1\npush step\nkernel 200 k\npop\n")
    make_log(p3, ident + "meta rotated_file 3\npush step\nkernel 300 k\npop\n")
    r = kcount("summary", p1)
    check("summary of part 1 alone: footer names the missing part 0",
          r.returncode == 0 and "rotated part 1; part 0 not given; the numbers cover this part only" in r.stdout
          and "log complete" not in r.stdout, r.stdout[-400:])
    j = json.loads(kcount("summary", "--format", "json", p3).stdout)["logs"][0]
    check("summary json of part 3 alone: state 'rotated part'", j["state"] == "rotated part", j["state"])
    r = kcount("check", p3)
    check("check of part 3 alone: PARTIAL, exit 1",
          r.returncode == 1 and r.stdout.splitlines()[-1].startswith("PARTIAL: rotated part 3; parts 0..2 not given"), r.stdout[-300:])
    r = kcount("check", p1, p3)
    last = [l for l in r.stdout.splitlines() if l.startswith("PARTIAL: rotated part 3")]
    check("check of parts 1 and 3: part 3 names only the parts not given (0, 2), not 0..2",
          r.returncode == 1 and len(last) == 1 and last[0].startswith("PARTIAL: rotated part 3; parts 0, 2 not given"),
          r.stdout[-400:])
    r = kcount("check", p0, p3)
    last = [l for l in r.stdout.splitlines() if l.startswith("PARTIAL: rotated part 3")]
    check("check of parts 0 and 3: part 3 says parts 1..2 not given",
          len(last) == 1 and last[0].startswith("PARTIAL: rotated part 3; parts 1..2 not given"), r.stdout[-400:])
    r = kcount("check", p0)
    check("check of part 0 (a complete log): OK", r.returncode == 0 and r.stdout.splitlines()[-1] == "OK")
    r = kcount("kernels", p1)
    check("kernels of part 1 alone: warned",
          r.returncode == 0 and "warning: rotated part 1; part 0 not given" in r.stderr, r.stderr)
    # The same file twice (by another name too) is read once.
    r = kcount("summary", p0, p0, os.path.join(work, ".", "rot.kcount"))
    check("summary of one file given three times: one log, two repeats named",
          r.returncode == 0 and r.stdout.count("== ") == 1 and r.stderr.count("given twice): read once") == 2, r.stderr + r.stdout[:200])
    r = kcount("summary", p0, p0, p1)
    check("summary r r r.1: one joined run, no double counting",
          r.returncode == 0 and r.stdout.count("== ") == 1 and "(2 rotated files joined)" in r.stdout, r.stdout[-300:])
    r = kcount("diff", p0, p1)
    check("diff of two parts of one run: warned", r.returncode == 0 and "are parts of one rotated run" in r.stderr,
          r.stderr)
    other = os.path.join(work, "other.kcount")
    make_log(other, "meta host h2\nmeta pid 7\nmeta start_ns 5\npush step\nkernel 100 k\npop\n")
    r = kcount("diff", p0, other)
    check("diff of two runs: no warning", r.returncode == 0 and r.stderr == "", r.stderr)


def test_long_names(work):
    name = "L" * 2500 + "M" * 2500
    log = os.path.join(work, "long.kcount")
    make_log(log, f"push {name}\nkernel 100 k\npop\npush short\nkernel 100 k\npop\n")
    for args in (("summary", log), ("summary", "--view", "inclusive", log), ("kernels", log), ("diff", log, log)):
        out = kcount(*args).stdout
        width = max(len(l) for l in out.splitlines())
        check(f"{' '.join(args[:-1])}: long name elided (widest line {width})", width < 400 and "LLLL…MMMM" in out)
    j = json.loads(kcount("summary", "--format", "json", log).stdout)
    check("summary json: the full name", any(r["path"] == name for r in j["logs"][0]["ranges"]))
    rows = list(csv.reader(io.StringIO(kcount("summary", "--format", "csv", log).stdout)))
    check("summary csv: the full name", any(name in row for row in rows))
    j = json.loads(kcount("diff", "--format", "json", log, log).stdout)
    check("diff json: the full name", any(r["path"] == name for r in j["ranges"]))


def test_records_and_placeholders(work):
    # Launches as summary counts them; memcpy/memset calls (launch records too) named apart, only if any.
    log = os.path.join(work, "mem.kcount")
    make_log(log, "push step\nkernel 100 k\nkernel 100 k\nmemcpy 50 4096\nmemcpy 50 4096\nmemcpy 50 8\npop\n")
    r = kcount("check", log)
    rec = [l for l in r.stdout.splitlines() if l.startswith("records:")]
    want = "records: 4 strings, 1 scope, 2 launches (+3 memcpy/memset calls), 2 kernels, 1 range"
    check("check: records line splits launches and memcpy/memset calls", r.returncode == 0 and rec == [want], rec)
    j = json.loads(kcount("summary", "--format", "json", log).stdout)["logs"][0]
    check("summary: the same 2 launches", j["totals"]["launches"] == 2, j.get("totals"))
    pattern = r"^records: .*, (\d+) launch(?:es)?(?: \(\+(\d+) memcpy/memset calls?\))?, (\d+) kernels?, (\d+) ranges?$"
    m = re.search(pattern, r.stdout, re.M)
    check("tests/gpu/check_rotation.sh's pattern reads it", m is not None and m.groups() == ("2", "3", "2", "1"),
          m and m.groups())
    plain = os.path.join(work, "plain.kcount")
    make_log(plain, "push step\nkernel 100 k\npop\n")
    r = kcount("check", plain)
    m = re.search(pattern, r.stdout, re.M)
    check("check without memory calls: no memcpy/memset part; the pattern reads it",
          m is not None and m.groups() == ("1", None, "1", "1") and "memcpy" not in m.group(0), r.stdout)
    # A range with no instance of its own (open when the log closed) above a range with one.
    ph = os.path.join(work, "placeholder.kcount")
    name = "decoder_layer_forward_with_a_long_name"
    make_log(ph, f"push {name}\npush attention\npop\npush attention\npop\nforget\n")
    closed = os.path.join(work, "closed.kcount")  # the same ranges, the outer one closed: no placeholder
    make_log(closed, f"push {name}\npush attention\npop\npush attention\npop\npop\n")
    for view in ("tree", "inclusive"):
        out = kcount("summary", "--view", view, ph).stdout
        lines = out.splitlines()
        row = [l for l in lines if name in l and "attention" not in l]
        table = lines[:lines.index(kc_note)] if kc_note in lines else lines
        width = max(len(l) for l in table)
        plain_width = max(len(l) for l in kcount("summary", "--view", view, closed).stdout.splitlines())
        check(f"summary --view {view}: placeholder row marked '*', explained under the table (table {width} wide, "
              f"{plain_width} without the placeholder)",
              len(row) == 1 and row[0].split()[0] == name and row[0].split()[1] == "*" and "no instance" not in row[0]
              and kc_note in lines and width <= plain_width + 2, out)
    out = kcount("summary", os.path.join(work, "plain.kcount")).stdout
    check("summary without placeholder rows: no '*' note", kc_note not in out, out)


kc_note = "*: placeholder row, no instance recorded (the range was open when recording began or stopped)"


def test_docs_in_tool(work):
    log = os.path.join(work, "nvjet.kcount")
    make_log(log, "push step\nkernel 100 nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN\npop\n")
    out = kcount("kernels", log).stdout
    check("kernels: the table explains '-'", "-: not in the kernel name" in out, out)
    help_text = kcount("summary", "--help").stdout
    check("summary --help: innermost CPU time",
          "CPU time stays the range's wall time" in re.sub(r"\s+", " ", help_text))
    for target in ("/dev/stdout", "/dev/stderr"):
        r = subprocess.run([KCOUNT, "run", "--output", target, "--", "true"], capture_output=True, text=True)
        check(f"run --output {target} refused",
              r.returncode == 2 and "would be mixed with the program's own output" in r.stderr, r.stderr)


def make_log_bytes(path, script):
    subprocess.run([MAKE_LOG, path], input=script, check=True)


def test_diff_wording(work):
    # Changes that round to 0%: never "-0%" or "+0%"; one decimal below 1%; "<0.1%" below that; "0%" unchanged.
    base = os.path.join(work, "pct-a.kcount")
    make_log(base, "push step\nkernel 1000 k\nkernel 100000 g\npop\n")
    cases = (("pct-b.kcount", "kernel 999 k\nkernel 100000 g\n", "-0.1%"),   # GPU 101000 -> 100999: -0.00099%
             ("pct-c.kcount", "kernel 1000 k\nkernel 100000 g\n", "0%"),
             ("pct-d.kcount", "kernel 1000 k\nkernel 99600 g\n", "-0.4%"))
    for name, body, _ in cases:
        make_log(os.path.join(work, name), "push step\n" + body + "pop\n")
    outs = {name: kcount("diff", base, os.path.join(work, name)).stdout for name, _, _ in cases}
    for name, _, _ in cases:
        out = outs[name]
        check(f"diff {name}: no -0% or +0%",
              "-0%" not in out and "+0%" not in out and "(+0." not in out.replace("(+0.4", ""), out)
    gpu = lambda out: re.search(r"GPU time \S+ \S+ -> \S+ \S+ \(([^)]*)\)", out).group(1)
    check("diff: a change below 0.05% reads <0.1% (no sign)",
          gpu(outs["pct-b.kcount"]) == "<0.1%", gpu(outs["pct-b.kcount"]))
    check("diff: no change reads 0%", gpu(outs["pct-c.kcount"]) == "0%", gpu(outs["pct-c.kcount"]))
    check("diff: -0.4% with one decimal", gpu(outs["pct-d.kcount"]) == "-0.4%", gpu(outs["pct-d.kcount"]))
    row = [l for l in outs["pct-c.kcount"].splitlines() if l.startswith("step ")]
    check("diff table: no change reads '0 ns (0%)'",
          len(row) == 1 and " 0 ns (0%)" in row[0] and "+0 ns" not in row[0], row)
    # No kernel name in common: said so, never "0 of N distinct names equal" or "0 distinct names equal".
    ga = os.path.join(work, "gemm-a.kcount")
    gb = os.path.join(work, "gemm-b.kcount")
    make_log(ga, "push step\nkernel 100 nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT\nkernel 10 foo_kernel\npop\n")
    make_log(gb, "push step\nkernel 100 nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN\nkernel 10 bar_kernel\npop\n")
    out = kcount("diff", ga, gb).stdout
    check("diff: no '0 ... distinct names equal' line",
          re.search(r"\b0 (of \d+ )?distinct names? equal", out) is None, out)
    check("diff: GEMM kernels with no name in common say so",
          "GEMM kernels changed: no distinct name in common (1 in A, 1 in B)" in out, out)
    check("diff: other kernels with no name in common",
          "other: no distinct name in common (1 in A, 1 in B)" in out, out)
    out = kcount("diff", ga, ga).stdout
    check("diff: '1 of 1 distinct name equal'", "GEMM kernels identical: 1 of 1 distinct name equal" in out, out)


PLURAL_AFTER_ONE = re.compile(r"(?<![\d.,x])1 (?:[a-zA-Z/-]+ )?(launches|kernels|ranges|scopes|strings|chunks|records|"
                              r"bytes|windows|snapshots|names|calls|pops|buffers|instances|files)\b")


def test_plurals(work):
    one = os.path.join(work, "one.kcount")
    make_log(one, "push step\nkernel 100 k\npop\ndropped host 1\n")
    other = os.path.join(work, "one-other.kcount")
    make_log(other, "push step\nkernel 100 k\nkernel 100 j\npop\n")
    for args in (("summary", one), ("check", one), ("kernels", one), ("diff", one, other), ("diff", other, one)):
        r = kcount(*args)
        bad = PLURAL_AFTER_ONE.findall(r.stdout + r.stderr)
        check(f"{args[0]}: no '1 <plural>'", not bad, (bad, r.stdout + r.stderr))
    out = kcount("check", one).stdout
    check("check: '1 chunk', '1 scope', '1 launch', ...",
          "1 chunk read" in out and "1 scope," in out and "1 launch," in out and "1 range\n" in out
          and "1 launch record (" in out and "1 host record," in out, out)
    out = kcount("summary", one).stdout
    check("summary: singular totals and drops",
          "totals: 1 launch (0 graph launches), 1 kernel, 0 unmatched kernels, 0 launches without kernel" in out
          and "1 record dropped while recording" in out, out)


def test_mean_rounding(work):
    # Two instances with kernels of 41 and 42 ns: 41.5 ns per instance, 42 ns rounded half up, in the verdict
    # and the kernels table alike (the verdict used to truncate to 41 ns).
    log = os.path.join(work, "mean.kcount")
    make_log(log, "push step\nkernel 41 k\npop\npush step\nkernel 42 k\npop\n")
    j = json.loads(kcount("summary", "--format", "json", log).stdout)["logs"][0]
    step = [r for r in j["ranges"] if r["path"] == "step"][0]
    gpu, inst = step["inclusive"]["gpu_ns"], step["instances"]
    want = (2 * gpu + inst) // (2 * inst)  # round half up
    out = kcount("summary", log).stdout
    verdict = [l for l in out.splitlines() if l.startswith("  step: ")]
    check(f"summary verdict: {gpu} ns / {inst} instances is {want} ns",
          len(verdict) == 1 and f"for {want} ns of GPU work" in verdict[0] and verdict[0].count(" per instance") == 1, verdict)
    row = [l for l in kcount("kernels", log).stdout.splitlines() if l.startswith("k ")]
    check(f"kernels table: GPU avg {want} ns", len(row) == 1 and row[0].split()[4:6] == [str(want), "ns"], row)


LONG_NS = "N" * 120
LONG_KERNEL = f"_ZN{len(LONG_NS)}{LONG_NS}6kernelEv"  # demangles to NNN...N::kernel(): a 128-character short name
LONG_SHORT = f"{LONG_NS}::kernel"


def test_full_names_machine_readable(work):
    log = os.path.join(work, "longk.kcount")
    make_log(log, f"push step\nkernel 100 {LONG_KERNEL}\npop\n")
    rows = list(csv.DictReader(io.StringIO(kcount("summary", "--format", "csv", log).stdout)))
    tops = [r["top_kernels"] for r in rows if r["path"] == "step"]
    check("summary csv: top_kernels carries the whole short name", tops == [json.dumps([{"name": LONG_SHORT, "count": 1}],
                                                                                    separators=(",", ":"))], tops)
    rows = list(csv.DictReader(io.StringIO(kcount("kernels", "--format", "csv", log).stdout)))
    check("kernels csv: the whole short name", [r["kernel"] for r in rows] == [LONG_SHORT], [r["kernel"] for r in rows])
    out = os.path.join(work, "longk-csv")
    r = kcount("export", "--format", "csv", "-o", out, log)
    with open(os.path.join(out, "kernels.csv")) as f:
        names = [row["shortName"] for row in csv.DictReader(f)]
    check("export csv: shortName whole", r.returncode == 0 and names == [LONG_SHORT], names)
    r = kcount("export", "--format", "json", "-o", os.path.join(work, "longk.json"), log)
    with open(os.path.join(work, "longk.json")) as f:
        names = [k["shortName"] for k in json.load(f)["kernels"]]
    check("export json: shortName whole", names == [LONG_SHORT], names)
    j = json.loads(kcount("kernels", "--format", "json", log).stdout)
    check("kernels json: short whole", [k["short"] for k in j["kernels"]] == [LONG_SHORT])
    j = json.loads(kcount("summary", "--format", "json", log).stdout)["logs"][0]
    shorts = [k["short"] for r in j["ranges"] for k in r.get("kernels", [])]
    check("summary json: short whole", shorts and all(s == LONG_SHORT for s in shorts), shorts)
    j = json.loads(kcount("diff", "--format", "json", log, log).stdout)
    check("diff json: short whole", [k["short"] for k in j["kernels"]["same"]] == [LONG_SHORT])
    # Text keeps the display form: cut at 100 characters with "…".
    cut = LONG_SHORT[:99] + "…"
    check("summary text: the verdict line cuts the name", f"top: {cut} ×1" in kcount("summary", log).stdout)
    # The diff's kernels table shortens it further, to the name column's 60 characters, as `kcount kernels` does.
    shown = [l for l in kcount("kernels", log).stdout.splitlines() if l.startswith("NNN")]
    name = shown[0][:60] if shown else None
    rows = [l for l in kcount("diff", log, log).stdout.splitlines() if l.startswith("  same ")]
    check("diff text: the kernels table shortens the name as the kernels table does",
          name is not None and "…" in name and len(rows) == 1 and f" {name} " in rows[0] and cut not in rows[0], (name, rows))


def test_non_utf8_kernel_names(work):
    log = os.path.join(work, "latin1.kcount")
    make_log_bytes(log, b"push step\nkernel 100 caf\xe9_kernel\x01x\nkernel 50 ok_kernel\npop\n")
    escaped = "caf\\xe9_kernel\\x01x"
    for args in (("summary", log), ("kernels", log), ("diff", log, log), ("summary", "--full-names", log),
                 ("kernels", "--full-names", log)):
        r = subprocess.run([KCOUNT, *args], capture_output=True)
        try:
            text = r.stdout.decode("utf-8")
        except UnicodeDecodeError as e:
            text = None
            check(f"{' '.join(args[:-1])}: text output is valid UTF-8", False, e)
            continue
        check(f"{' '.join(args[:-1])}: the kernel name escaped as range names are (\\xHH)",
              escaped in text and not any(ord(c) < 0x20 and c not in "\n" for c in text), text[-800:])
    # CSV: the name as recorded, the invalid byte as \xHH (as in the table); JSON: U+FFFD (as for range names).
    rows = list(csv.DictReader(io.StringIO(kcount("kernels", "--format", "csv", log).stdout)))
    check("kernels csv: \\xHH for the invalid byte", "caf\\xe9_kernel\x01x" in [r["kernel"] for r in rows],
          [r["kernel"] for r in rows])
    j = json.loads(kcount("kernels", "--format", "json", log).stdout)
    check("kernels json: U+FFFD for the invalid byte", "caf\ufffd_kernel\x01x" in [k["short"] for k in j["kernels"]])


def test_export_output(work):
    log = os.path.join(work, "out.kcount")
    make_log(log, "push step\nkernel 100 k\npop\n")
    log2 = os.path.join(work, "out2.kcount")
    make_log(log2, "push step\nkernel 100 k\nkernel 100 k2\npop\n")
    cwd = os.path.join(work, "cwd")
    os.makedirs(cwd, exist_ok=True)
    # -o - is standard output for chrome, json and csv (one --table); sqlite refuses it. No file named "-".
    def doc(text):
        try:
            return json.loads(text)
        except ValueError:
            return {}
    r = kcount("export", "--format", "chrome", "-o", "-", log, cwd=cwd)
    check("export chrome -o -: the trace on standard output",
          r.returncode == 0 and any(e.get("cat") == "kernel" for e in doc(r.stdout).get("traceEvents", [])), r.stderr)
    r = kcount("export", "--format", "json", "-o", "-", log, cwd=cwd)
    check("export json -o -: records on standard output",
          r.returncode == 0 and len(doc(r.stdout).get("kernels", [])) == 1,
          r.stderr)
    r = kcount("export", "--format", "csv", "--table", "kernels", "-o", "-", log, cwd=cwd)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check("export csv --table kernels -o -: one table", r.returncode == 0 and [x["shortName"] for x in rows] == ["k"],
          r.stdout + r.stderr)
    r = kcount("export", "--format", "csv", "-o", "-", log, cwd=cwd)
    check("export csv -o - without --table: exit 2, names --table",
          r.returncode == 2 and "--table" in r.stderr and r.stdout == "",
          r.stderr)
    r = kcount("export", "--format", "sqlite", "-o", "-", log, cwd=cwd)
    check("export sqlite -o -: one-line error, exit 2",
          r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "sqlite" in r.stderr and "standard output" in r.stderr, (r.returncode, r.stderr))
    check("export -o -: no file named '-' written", os.listdir(cwd) == [], os.listdir(cwd))
    # An existing output is replaced, in every format (csv: the table files in the folder).
    for fmt, name in (("chrome", "o.json"), ("json", "o-rec.json"), ("sqlite", "o.db"), ("csv", "o-csv")):
        path = os.path.join(work, name)
        r1 = kcount("export", "--format", fmt, "-o", path, log)
        r2 = kcount("export", "--format", fmt, "-o", path, log2)
        if fmt == "sqlite":
            import sqlite3
            n = sqlite3.connect(path).execute("SELECT count(*) FROM kernels").fetchone()[0]
        elif fmt == "csv":
            with open(os.path.join(path, "kernels.csv")) as f:
                n = len(list(csv.DictReader(f)))
        elif fmt == "json":
            with open(path) as f:
                n = len(json.load(f)["kernels"])
        else:
            n = len([e for e in events(path) if e.get("cat") == "kernel" and e["ph"] == "X"])
        check(f"export {fmt} onto an existing output: replaced ({n} kernels from the second log)",
              r1.returncode == 0 and r2.returncode == 0 and n == 2
              and all(l.startswith("kcount export: wrote ") for l in r2.stderr.splitlines()), r1.stderr + r2.stderr)
    # The other kind of thing at -o: refused with one clear line naming it, nothing removed.
    afile = os.path.join(work, "a-file.txt")
    with open(afile, "w") as f:
        f.write("keep\n")
    r = kcount("export", "--format", "csv", "-o", afile, log)
    check("export csv -o FILE: refused, file named, kept",
          r.returncode == 2 and f"cannot write {afile}: it is a file, not a folder" in r.stderr
          and "filesystem error" not in r.stderr and open(afile).read() == "keep\n", r.stderr)
    folder = os.path.join(work, "a-folder")
    os.makedirs(folder, exist_ok=True)
    r = kcount("export", "--format", "sqlite", "-o", folder, log)
    check("export sqlite -o FOLDER: refused, the folder kept",
          r.returncode == 2 and f"cannot write {folder}: it is a folder" in r.stderr and os.path.isdir(folder), r.stderr)
    under_file = os.path.join(afile, "x")  # a folder that cannot be created (even by root)
    r = kcount("export", "--format", "csv", "-o", under_file, log)
    check("export csv -o under a file: cannot write, the system's reason",
          r.returncode == 2 and f"cannot write {under_file}: Not a directory" in r.stderr
          and "filesystem error" not in r.stderr, r.stderr)
    r = kcount("report", "-o", "-", log, cwd=cwd)
    check("report -o -: the page on standard output",
          r.returncode == 0 and r.stdout.startswith("<!DOCTYPE html>") and os.listdir(cwd) == [], r.stderr)


def test_slash_in_range_name(work):
    # A range named "a/b" is not range b inside range a: diff and the across-logs table keep two rows.
    e1 = os.path.join(work, "slash-1.kcount")
    e2 = os.path.join(work, "slash-2.kcount")
    make_log(e1, "push a/b\nkernel 100 k1\npop\n")
    make_log(e2, "push a\npush b\nkernel 300 k1\npop\npop\n")
    out = kcount("diff", e1, e2).stdout
    rows = {l.split()[0]: l for l in out.splitlines() if l.split()[:1] and l.split()[0] in ("a\\/b", "a/b", "a")}
    check("diff: range 'a/b' (one name) and a > b are two rows, each with its own GPU time",
          set(rows) == {"a\\/b", "a", "a/b"} and "100 ns" in rows["a\\/b"] and "300 ns" not in rows["a\\/b"]
          and "only in A: a\\/b" in out, out)
    j = json.loads(kcount("diff", "--format", "json", e1, e2).stdout)
    ins = {r["path"]: r["in"] for r in j["ranges"]}
    check("diff JSON: the two paths apart (name's '/' escaped)", ins.get("a\\/b") == "a" and ins.get("a/b") == "b", ins)
    out = kcount("summary", "--metric", "gpu", e1, e2).stdout
    across = [re.split(r"\s{2,}", l)[0] for l in out.split("== across", 1)[-1].splitlines()[3:] if l.strip() and not l.startswith("not added up")]
    check("summary across logs: 'a/b' and a > b are two rows", across == ["(no range)", "a\\/b", "a", "a/b"], across)
    j = json.loads(kcount("summary", "--format", "json", e1, e2).stdout)
    paths = [r["path"] for r in j["across_logs"]["ranges"]]
    check("summary JSON across logs: two rows with the raw path 'a/b' (one per log)", paths.count("a/b") == 2, paths)


def test_unknown_command():
    r = kcount("sumary", "x.kcount")
    check("an unknown command is named, with the commands there are (exit 2)",
          r.returncode == 2 and "unknown command 'sumary'" in r.stderr and "summary, kernels, diff" in r.stderr, r.stderr)
    check("... and the command it is closest to (within 2 edits)", "(did you mean 'summary'?)" in r.stderr, r.stderr)
    r = kcount("su")
    check("an abbreviation of one command suggests that command (not a near name: 'su' is 2 edits from 'run')",
          r.returncode == 2 and "(did you mean 'summary'?)" in r.stderr, r.stderr)
    r = kcount("help", "--help")
    check("kcount help --help: the help, exit 0",
          r.returncode == 0 and "Usage: kcount [OPTIONS] SUBCOMMAND" in r.stdout,
          (r.returncode, r.stderr))
    r = kcount("zzz")
    check("no suggestion for a name far from every command",
          r.returncode == 2 and "did you mean" not in r.stderr, r.stderr)
    r = kcount()
    check("no command at all: the usage with the commands (exit 2)",
          r.returncode == 2 and "unknown command" not in r.stderr and "kcount: no command given" in r.stderr
          and "Usage: kcount [OPTIONS] SUBCOMMAND" in r.stderr and "summary " in r.stderr and "ctl " in r.stderr, r.stderr)
    check("kcount --help lists help", re.search(r"^  help +this help", kcount("--help").stdout, re.M) is not None,
          kcount("--help").stdout)
    r = kcount("help", "summary", "kernels")
    check("kcount help with a second word: a usage error (exit 2)",
          r.returncode == 2 and "kcount help: unexpected argument 'kernels'" in r.stderr and r.stdout == "", (r.returncode, r.stderr))
    r = kcount("hlep")
    check("an unknown command lists help with the others",
          r.returncode == 2 and "(did you mean 'help'?)" in r.stderr
          and "(commands: summary, kernels, diff, check, export, report, run, ctl, exporter, help;" in r.stderr, r.stderr)
    r, h = kcount("help"), kcount("--help")
    check("kcount help: kcount --help's text (exit 0)",
          r.returncode == 0 and "Usage: kcount [OPTIONS] SUBCOMMAND" in r.stdout
          and r.stdout.split("Usage:", 1)[1].split("\n", 1)[1] == h.stdout.split("Usage:", 1)[1].split("\n", 1)[1], (r.returncode, r.stdout[:200], r.stderr))
    r, h = kcount("help", "ctl"), kcount("ctl", "--help")
    check("kcount help ctl: kcount ctl --help's text (exit 0)",
          r.returncode == 0 and "Usage: kcount ctl" in r.stdout
          and r.stdout.split("Usage:", 1)[1].split("\n", 1)[1] == h.stdout.split("Usage:", 1)[1].split("\n", 1)[1], (r.returncode, r.stdout[:200], r.stderr))
    r = kcount("help", "sumary")
    check("kcount help of an unknown command: exit 2",
          r.returncode == 2 and "kcount help: unknown command 'sumary' (did you mean 'summary'?)" in r.stderr,
          (r.returncode, r.stderr))


def test_range_name_for_path():
    """`kernels --range NAME` with a range's own name instead of its path names the paths that end with it."""
    log = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
    r = subprocess.run([KCOUNT, "kernels", "--range", "gate", log], capture_output=True, text=True)
    check("kernels --range gate: refused (exit 2), step/gate and warmup/step/gate suggested",
          r.returncode == 2 and "step/gate, warmup/step/gate)" in r.stderr and r.stdout == "", r.stderr)
    r = subprocess.run([KCOUNT, "kernels", "--range", "nothing", log], capture_output=True, text=True)
    check("kernels --range nothing: refused, the general hint", r.returncode == 2 and "e.g. step/mlp" in r.stderr, r.stderr)


def test_sort():
    """`summary --sort`: siblings by the number in the tree view (each with its subtree), all rows in the flat
    views; (no range) first; CSV in the table's order; JSON keeps depth-first order and says --sort has no
    effect."""
    log = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")

    def labels(*args):
        r = subprocess.run([KCOUNT, "summary", "--top", "0", *args, log], capture_output=True, text=True)
        lines = r.stdout.splitlines()
        start = next(i for i, l in enumerate(lines) if l.startswith("---")) + 1
        rows = []
        for l in lines[start:]:
            m = re.match(r"^( *\S.*?)\s{2,}[0-9-]", l)
            if not m:
                break  # the end of the table
            rows.append(m.group(1))
        return r, rows

    r, rows = labels()
    check("summary: rows in run order by default (warmup, as first seen, before step)",
          rows[:4] == ["(no range)", "warmup", "  step", "    gate"], rows)
    r, rows = labels("--sort", "gpu")
    check("summary --sort gpu (tree): step (30.6 ms) before warmup (7.55 ms), each with its subtree, children by "
          "GPU time (gate, up, down, act)",
          r.returncode == 0 and rows == ["(no range)", "step", "  gate", "  up", "  down", "  act", "warmup", "  step",
                                         "    gate", "    up", "    down", "    act"], rows)
    r, rows = labels("--sort", "cpu", "--view", "inclusive")
    check("summary --sort cpu --view inclusive: all rows by CPU time (warmup 155 ms first, warmup/step/up 726 µs "
          "last)", rows[:4] == ["(no range)", "warmup", "warmup/step", "warmup/step/gate"]
          and rows[-2:] == ["step/up", "warmup/step/up"], rows)
    r, rows = labels("--sort", "launches", "--view", "innermost")
    check("summary --sort launches --view innermost: step/act (40 launches of its own) first, ranges with none last",
          rows[1] == "step/act" and rows[-3:] == ["warmup", "warmup/step", "step"], rows)
    r = subprocess.run([KCOUNT, "summary", "--format", "csv", "--sort", "gpu", "--view", "innermost", log],
                       capture_output=True, text=True)
    paths = [row["path"] for row in csv.DictReader(io.StringIO(r.stdout))]
    check("summary --format csv --sort gpu --view innermost: rows by GPU time (step/gate first after the run's rows)",
          "step/gate" in paths and paths.index("step/gate") < paths.index("step/act") < paths.index("warmup/step/gate"),
          paths)
    r = subprocess.run([KCOUNT, "summary", "--format", "json", "--sort", "gpu", log], capture_output=True, text=True)
    check("summary --format json --sort gpu: JSON as without --sort, a note on stderr",
          r.returncode == 0 and "--sort orders the rows of the table and CSV" in r.stderr
          and json.loads(r.stdout) == json.loads(kcount("summary", "--format", "json", log).stdout), r.stderr)
    r = subprocess.run([KCOUNT, "summary", "--sort", "size", log], capture_output=True, text=True)
    check("summary --sort size: refused (exit 2), the choices named", r.returncode != 0 and "gpu" in r.stderr, r.stderr)


def test_write_failure_reasons():
    """Every command that cannot write its output says why (a full device), exit 2."""
    if not os.path.exists("/dev/full"):
        print("SKIP write failure reasons: no /dev/full")
        return
    log = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
    for args, to in ((["report", log, "-o", "/dev/full"], None), (["export", log, "--format", "chrome", "-o", "/dev/full"], None),
                     (["check", log], "/dev/full"), (["summary", log], "/dev/full"), (["kernels", log], "/dev/full")):
        with open(to or os.devnull, "w") as out:
            r = subprocess.run([KCOUNT, *args], stdout=out, stderr=subprocess.PIPE, text=True)
        check(f"{' '.join(args[:1])} {'> ' + to if to else '-o /dev/full'}: exit 2, the reason named",
              r.returncode == 2 and "No space left on device" in r.stderr, (r.returncode, r.stderr))


def main():
    global KCOUNT, MAKE_LOG
    build = os.path.abspath(sys.argv[1])
    KCOUNT = os.path.join(build, "bin", "kcount")
    MAKE_LOG = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(build, "bin", "kc_make_log")
    with tempfile.TemporaryDirectory() as work:
        test_export(work)
        test_range_name_for_path()
        test_sort()
        test_write_failure_reasons()
        test_summary_mode_segment(work)
        test_not_a_log(work)
        test_newer_format(work)
        test_missing_paths(work)
        test_metric_note()
        test_short_interval(work, build)
        test_drops(work)
        test_not_a_file(work)
        test_rotated_parts(work)
        test_long_names(work)
        test_records_and_placeholders(work)
        test_docs_in_tool(work)
        test_diff_wording(work)
        test_plurals(work)
        test_mean_rounding(work)
        test_full_names_machine_readable(work)
        test_non_utf8_kernel_names(work)
        test_export_output(work)
        test_slash_in_range_name(work)
        test_unknown_command()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
