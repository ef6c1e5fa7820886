#!/usr/bin/env python3
"""Range names that are not valid UTF-8, and sums past 2^64 - 1, through the kcount command (logs made
by kc_make_log).

  names  a range named b"caf\\xe9" (Latin-1): the summary table and summary CSV show it as `caf\\xe9`,
         JSON (summary's paths, diff's verdict lines) and export JSON as "caf\\ufffd", export CSV and SQLite
         as `caf\\xe9` (one rule per kind of output: text and CSV escape, JSON replaces); every output
         decodes as UTF-8.
  kernel names  b"gem\\xffm" and b"gem\\xfem" follow the same rule: `gem\\xffm` in the kernels table, the
         kernels, summary and diff CSV, export CSV and SQLite (two names there, not one "gem\\ufffdm"), U+FFFD
         in JSON.
  sums   3 kernels of 2^63 - 1 ns: GPU time held at 2^64 - 1 (not wrapped to 2^64 - 3 mod 2^64), with
         the warning "sums held at 2^64 - 1" on stderr and in JSON issues.
Usage: test_names_and_sums.py BUILD_DIR KC_MAKE_LOG
"""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

from checks import check, exit_status

build, make_log = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
kcount = os.path.join(build, "bin", "kcount")
MAX = 2**64 - 1


def utf8(b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError as e:
        return None


def kc(*args):
    return subprocess.run([kcount, *args], capture_output=True)


with tempfile.TemporaryDirectory() as work:
    names = os.path.join(work, "names.kcount")
    script = b"push caf\xe9\nkernel 100 gemm\npop\npush ok\nkernel 50 gemm\npop\n"
    subprocess.run([make_log, names], input=script, check=True)

    r = kc("summary", names)
    text = utf8(r.stdout)
    check("names: summary table is UTF-8 and shows caf\\xe9", r.returncode == 0 and text is not None and
          "caf\\xe9 " in text, repr(r.stdout[:600]))
    r = kc("summary", "--format", "csv", names)
    text = utf8(r.stdout)
    check("names: summary CSV is UTF-8 and shows caf\\xe9", r.returncode == 0 and text is not None and
          ",caf\\xe9," in text, repr(r.stdout[:600]))
    r = kc("summary", "--format", "json", names)
    paths = [x["path"] for x in json.loads(r.stdout)["logs"][0]["ranges"]] if r.returncode == 0 else []
    check("names: JSON path caf\\ufffd", "caf\ufffd" in paths, repr(paths))
    r = kc("diff", "--format", "json", names, names)
    lines = [x for v in json.loads(r.stdout)["verdicts"] for x in v["lines"]] if r.returncode == 0 else []
    check("names: diff JSON is UTF-8, exit 0, a verdict line names caf\\ufffd", any("caf\ufffd" in x for x in lines),
          f"rc {r.returncode}: {r.stderr[-300:]!r}, lines {lines}")
    out = os.path.join(work, "csv")
    r = kc("export", "--format", "csv", "-o", out, names)
    files = sorted(os.listdir(out)) if os.path.isdir(out) else []
    bad = [f for f in files if utf8(open(os.path.join(out, f), "rb").read()) is None]
    joined = "".join(open(os.path.join(out, f), encoding="utf-8", errors="replace").read() for f in files)
    check("names: export CSV files are all UTF-8, the name as caf\\xe9", r.returncode == 0 and files and not bad
          and "0,1,0,caf\\xe9,,caf\\xe9,1" in joined and "\ufffd" not in joined,
          f"rc {r.returncode} {r.stderr[:300]!r}, not UTF-8: {bad}")
    r = kc("export", "--format", "json", "-o", os.path.join(work, "x.json"), names)
    check("names: export JSON has caf\\ufffd", r.returncode == 0 and
          "caf\ufffd" in open(os.path.join(work, "x.json"), encoding="utf-8").read(), repr(r.stderr[:300]))

    # Kernel names that differ only in bytes that are not UTF-8.
    knames = os.path.join(work, "knames.kcount")
    script = b"push caf\xe9\nkernel 100 gem\xffm\nkernel 70 gem\xfem\npop\n"
    subprocess.run([make_log, knames], input=script, check=True)
    r = kc("kernels", knames)
    text = utf8(r.stdout) or ""
    check("kernel names: the kernels table shows gem\\xffm and gem\\xfem", r.returncode == 0 and
          "gem\\xffm " in text and "gem\\xfem " in text, repr(r.stdout[:600]))
    for args, want in ((("kernels", "--format", "csv"), "\nknames.kcount,gem\\xffm,gem\\xffm,1,100,"),
                       (("kernels", "--format", "csv", "--full-names"), ",gem\\xfem,gem\\xfem,1,70,"),
                       (("summary", "--format", "csv"),  # top_kernels: JSON text, CSV-quoted
                        '""name"":""gem\\\\xfem"",""count"":1},{""name"":""gem\\\\xffm"",""count"":1}')):
        r = subprocess.run([kcount, *args, "knames.kcount"], capture_output=True, cwd=work)
        text = utf8(r.stdout)
        check(f"kernel names: {' '.join(args)} is UTF-8 and shows the bytes as the table does",
              r.returncode == 0 and text is not None and want in text and "\ufffd" not in text, repr(r.stdout[:900]))
    r = kc("diff", "--format", "csv", names, knames)
    text = utf8(r.stdout)
    check("kernel names: diff CSV tells gem\\xffm from gem\\xfem", r.returncode == 0 and text is not None and
          ",gem\\xfem,gem\\xfem,gem\\xfem," in text and ",gem\\xffm," in text, repr(r.stdout[-600:]))
    r = kc("kernels", "--format", "json", knames)
    got = sorted(k["name"] for k in json.loads(r.stdout)["kernels"]) if r.returncode == 0 else []
    check("kernel names: JSON has U+FFFD for the bytes (valid UTF-8)", got == ["gem\ufffdm", "gem\ufffdm"], got)
    db = os.path.join(work, "k.sqlite")
    r = kc("export", "--format", "sqlite", "-o", db, knames)
    con = sqlite3.connect(db) if r.returncode == 0 else None
    kn = sorted(x[0] for x in con.execute(
        "SELECT s.value FROM kernels k JOIN strings s ON s.id = k.mangledName")) if con else []
    paths = [x[0] for x in con.execute("SELECT s.value FROM scopes c JOIN strings s ON s.id = c.name")] if con else []
    check("kernel names: SQLite keeps the two names apart, as CSV writes them", kn == ["gem\\xfem", "gem\\xffm"],
          f"rc {r.returncode} {r.stderr[:300]!r} {kn}")
    check("names: SQLite's range name as CSV writes it", "caf\\xe9" in paths, paths)
    out = os.path.join(work, "kcsv")
    r = kc("export", "--format", "csv", "--table", "kernels", "-o", "-", knames)
    check("kernel names: export CSV keeps the two names apart", r.returncode == 0 and
          ",gem\\xffm,gem\\xffm,gem\\xffm," in r.stdout.decode() and ",gem\\xfem,gem\\xfem,gem\\xfem," in r.stdout.decode(),
          repr(r.stdout[:900]))

    sums = os.path.join(work, "sums.kcount")
    huge = 2**63 - 1
    script = f"push big\nkernel {huge} huge\nkernel {huge} huge\nkernel {huge} huge\npop\n".encode()
    subprocess.run([make_log, sums], input=script, check=True)
    r = kc("summary", "--format", "json", sums)
    log = json.loads(r.stdout)["logs"][0] if r.stdout else {}
    big = [x for x in log.get("ranges", []) if x["path"] == "big"]
    issues = " ".join(i.get("message", "") for i in log.get("issues", []))
    check("sums: JSON totals.gpu_ns and the range's GPU time held at 2^64 - 1",
          log.get("totals", {}).get("gpu_ns") == MAX and big and big[0]["inclusive"]["gpu_ns"] == MAX,
          f"totals {log.get('totals', {}).get('gpu_ns')}, big {big[0]['inclusive'] if big else None}")
    check("sums: JSON issues say so", "sums held at 2^64 - 1" in issues, issues)
    r = kc("summary", sums)
    check("sums: the table says so (warning under the table), exit 0, GPU time shown as at least 18446744074 s",
          r.returncode == 0 and b"warning: sums held at 2^64 - 1" in r.stdout + r.stderr and
          "\u226518446744074 s" in r.stdout.decode(), f"rc {r.returncode} {r.stdout[-600:]!r} {r.stderr[:300]!r}")

sys.exit(exit_status())
