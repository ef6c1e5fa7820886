#!/usr/bin/env python3
"""Range names that are not valid UTF-8, and sums past 2^64 - 1, through the kcount command (logs made
by kc_make_log).

  names  a range named b"caf\\xe9" (Latin-1): the summary table and summary CSV show it as `caf\\xe9`,
         JSON (summary's paths, diff's verdict lines) and export CSV/JSON as "caf\\ufffd"; every output decodes
         as UTF-8.
  sums   3 kernels of 2^63 - 1 ns: GPU time held at 2^64 - 1 (not wrapped to 2^64 - 3 mod 2^64), with
         the warning "sums held at 2^64 - 1" on stderr and in JSON issues.
Usage: test_names_and_sums.py BUILD_DIR KC_MAKE_LOG
"""
import json
import os
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
    check("names: export CSV files are all UTF-8, the name as caf\\ufffd", r.returncode == 0 and files and not bad
          and "caf\ufffd" in joined, f"rc {r.returncode} {r.stderr[:300]!r}, not UTF-8: {bad}")
    r = kc("export", "--format", "json", "-o", os.path.join(work, "x.json"), names)
    check("names: export JSON has caf\\ufffd", r.returncode == 0 and
          "caf\ufffd" in open(os.path.join(work, "x.json"), encoding="utf-8").read(), repr(r.stderr[:300]))

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
