#!/usr/bin/env python3
"""Logs given to kcount that repeat one recording or hold part of a rotated run, and messages on out-of-range
input: a copy of a log (cp) is named and read once by summary, kernels, diff, export and report, and named in
check; diff words a copy as a copy and two parts as parts; a rotated run without its later part is PARTIAL,
not damage, and summary and check agree about it; a pid out of range, a size or duration too large, a --lib
that is no shared object and /dev/null as a log get messages that say what is wrong.

Usage: test_same_recording.py BUILD_DIR NVTX_PROGRAM SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

BUILD = sys.argv[1]
NVTX = sys.argv[2]
SRC = sys.argv[3]
KCOUNT = os.path.join(BUILD, "bin", "kcount")
LIB = os.path.join(BUILD, "lib", "libkcount.so")
TMP = tempfile.mkdtemp(prefix="kc-same-recording-")


def jload(text):
    """The JSON document in `text`, or {} when there is none (a command that failed)."""
    try:
        return json.loads(text)
    except ValueError:
        return {}


def copies():
    log = os.path.join(SRC, "examples", "logs", "linear-eager.kcount")
    cp = os.path.join(TMP, "copy.kcount")
    shutil.copyfile(log, cp)
    rc, out, err = kcount("summary", log, cp)
    check("summary of a log and its copy: named, read once", rc == 0 and "copies of one recording" in err
          and "read once" in err and out.count("\n== ") + out.startswith("== ") == 1 and "across" not in out.lower(),
          f"rc {rc} err {err!r} heads {[l for l in out.splitlines() if l.startswith('==')]}")
    one = kcount("summary", "--format", "json", log)[1]
    both = kcount("summary", "--format", "json", log, cp)[1]
    check("summary json of a log and its copy: one log, the same numbers",
          len(jload(both)["logs"]) == 1 and "across_logs" not in jload(both)
          and jload(both)["logs"][0].get("totals") == jload(one)["logs"][0].get("totals"))
    rc, out, err = kcount("kernels", "--format", "json", log, cp)
    check("kernels of a log and its copy: named, the numbers of one log", rc == 0 and "copies of one recording" in err
          and jload(out) == jload(kcount("kernels", "--format", "json", log)[1]), err)
    # A cut copy is not the same bytes: both read, so its damage is still reported (exit 2), and named.
    cut = os.path.join(TMP, "cut.kcount")
    with open(log, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:-1000])
    rc, _, err = kcount("summary", log, cut)
    check("summary of a log and a cut copy: both read, damage reported, the copy named",
          rc == 2 and "of different sizes" in err and "both are read" in err and "damaged log" in err, f"rc {rc} {err!r}")
    rc, _, err = kcount("export", "--format", "json", "-o", os.path.join(TMP, "x.json"), log, cp)
    check("export of a log and its copy: named", rc == 0 and "copies of one recording" in err, err)
    rc, _, err = kcount("report", "-o", os.path.join(TMP, "x.html"), log, cp)
    check("report of a log and its copy: named", rc == 0 and "copies of one recording" in err, err)
    rc, _, err = kcount("diff", log, cp)
    check("diff of a log and its copy: a copy, not parts of a rotated run",
          "copies of one recording" in err and "rotated" not in err, err)
    rc, out, _ = kcount("check", log, cp)
    check("check of a log and its copy: both checked, the copy named",
          rc == 0 and out.count("\nOK\n") + out.startswith("OK\n") == 2
          and f"COPY: {log} and {cp} are copies of one recording" in out, out[-400:])


def rotated():
    d = os.path.join(TMP, "rot")
    os.mkdir(d)
    env = dict(os.environ, KCOUNT_MAX_BYTES="64K", KCOUNT_MAX_FILES="3", KCOUNT_OUTPUT=os.path.join(d, "r.kcount"),
               NVTX_INJECTION64_PATH=LIB)
    subprocess.run([NVTX, "200000"], env=env, capture_output=True, check=True)
    r0, r1, r2 = (os.path.join(d, n) for n in ("r.kcount", "r.1.kcount", "r.2.kcount"))
    if not all(os.path.exists(p) for p in (r0, r1, r2)):
        check("rotated run made three parts", False, str(os.listdir(d)))
        return
    rcopy = os.path.join(d, "rcopy.kcount")
    shutil.copyfile(r0, rcopy)
    rc, out, err = kcount("summary", r0, rcopy, r1, r2)
    check("summary of the parts and a copy of part 0: one joined run, the copy named",
          "copies of one recording" in err and "(3 rotated files joined)" in out and "not given" not in out + err
          and "across" not in out.lower(), f"rc {rc} err {err!r} {out[-300:]!r}")
    rc, out, err = kcount("diff", r0, r1)
    check("diff of two parts: parts of one rotated run", "parts of one rotated run" in err
          and "copies" not in err, err)
    rc, out, err = kcount("diff", r0, rcopy)
    check("diff of part 0 and its copy: copies of one recording", "copies of one recording" in err, err)

    # Part 2 missing: partial, not damage; summary exit 0 with a warning, check exit 1 (PARTIAL).
    rc, out, err = kcount("summary", r0, r1)
    check("summary of parts 0..1 (part 2 missing): PARTIAL warning, not damage, exit 0",
          rc == 0 and "rotated run continues in part 2 (not given): the numbers cover parts 0..1 only" in err
          and "log PARTIAL" in out and "damaged" not in err.lower(), f"rc {rc} err {err!r}")
    state = (jload(kcount("summary", "--format", "json", r0, r1)[1]).get("logs") or [{}])[0].get("state")
    check("summary json of parts 0..1: state rotated part", state == "rotated part", state)
    rc, out, _ = kcount("check", r0, r1)
    check("check of parts 0..1: part 0 OK (part 1 given), part 1 PARTIAL, exit 1",
          rc == 1 and "OK: rotated part 0, continued in part 1 (given too" in out
          and "PARTIAL: rotated part 1, continued in part 2 (not given)" in out, out[-500:])
    rc, out, err = kcount("summary", r0)
    check("summary of part 0 alone: PARTIAL warning, exit 0", rc == 0
          and "rotated run continues in part 1 (not given): the numbers cover part 0 only" in err
          and "log PARTIAL" in out, f"rc {rc} err {err!r}")
    rc, out, _ = kcount("check", r0)
    check("check of part 0 alone: PARTIAL, exit 1", rc == 1 and "PARTIAL: rotated part 0, continued in part 1 (not given)"
          in out, out[-300:])
    rc, out, err = kcount("summary", r0, r2)
    check("summary of parts 0 and 2: part 1 named as not given, PARTIAL, exit 0",
          rc == 0 and "rotated run: part 1 not given: the numbers cover parts 0, 2 only" in err, f"rc {rc} {err!r}")
    rc, out, _ = kcount("check", r0, rcopy, r1, r2)
    check("check of every part and a copy: the copy named, no PARTIAL",
          "PARTIAL" not in out and "COPY:" in out and "rcopy.kcount are copies of one recording" in out, out[-600:])


def messages():
    rc, _, err = kcount("ctl", "99999999999999999999", "status")
    check("ctl with a pid past UINT64_MAX: out of range", rc == 2 and "out of range" in err
          and "no such process" not in err, err)
    rc, _, err = kcount("ctl", "5000000000", "status")
    check("ctl with a pid past pid_max: out of range", rc == 2 and "out of range" in err, err)
    rc, _, err = kcount("ctl", "1", "start", "--duration", "99999999999999h")
    check("ctl --duration past 2^64 ns: too large", rc == 2 and "too large" in err and "not a duration" not in err, err)
    log = os.path.join(SRC, "examples", "logs", "linear-eager.kcount")
    rc, _, err = kcount("export", "--format", "json", "-o", os.path.join(TMP, "y.json"), "--from", "99999999999999h", log)
    check("export --from past 2^64 ns: too large", rc == 2 and "too large" in err and "not a duration" not in err, err)
    d = os.path.join(TMP, "big")
    os.mkdir(d)
    for var, value, want in (("KCOUNT_MAX_BYTES", "99999999999T", " is too large"),
                             ("KCOUNT_MAX_BYTES", "12Q", " is not a size"),
                             ("KCOUNT_INTERVAL", "99999999999999h", ": too large"),
                             ("KCOUNT_CAPTURE_SKIP", "99999999999999999999999", ": too large"),
                             ("KCOUNT_MAX_FILES", "99999999999999999999999", ": too large (allowed: files from 1 to 100000)")):
        before = set(os.listdir(d))
        env = dict(os.environ, KCOUNT_OUTPUT=os.path.join(d, "b.kcount"), NVTX_INJECTION64_PATH=LIB, **{var: value})
        p = subprocess.run([NVTX, "10"], env=env, capture_output=True, text=True)
        check(f"{var}={value}: '{want}'", f"{var}={value}{want}" in p.stderr, p.stderr[-300:])
        if var == "KCOUNT_MAX_BYTES":
            # A disk cap that does not parse is not replaced by no cap: nothing is recorded, and it says so.
            check(f"{var}={value}: no log written, the program's exit unchanged",
                  set(os.listdir(d)) == before and p.returncode == 0
                  and "kcount records nothing in this process" in p.stderr, (sorted(os.listdir(d)), p.stderr[-300:]))
    rc, _, err = kcount("run", "--lib", "/etc/passwd", "--", "/bin/true")
    check("run --lib /etc/passwd: not an ELF shared object, refused up front", rc == 2
          and "not an ELF shared object" in err and "statically linked" not in err, err)
    rc, _, err = kcount("run", "--lib", "/bin/true", "--", "/bin/true")
    check("run --lib /bin/true (a program): refused up front", rc == 2 and "not a shared library" in err
          and "statically linked" not in err, err)
    rc, _, err = kcount("run", "--lib", LIB, "--output", os.path.join(TMP, "ok.kcount"), "--", "/bin/true")
    check("run --lib libkcount.so: accepted", rc == 0 and "--lib" not in err, err)
    rc, out, err = kcount("summary", "/dev/null")
    check("summary /dev/null: not a regular file", rc == 2 and "not a regular file" in err
          and "damaged" not in err, err)
    empty = os.path.join(TMP, "empty.kcount")
    open(empty, "w").close()
    rc, out, err = kcount("summary", empty)
    check("summary of an empty file: not a kcount log", rc == 2 and "not a kcount log: empty" in err, err)


def main():
    for test in (copies, rotated, messages):
        test()
    shutil.rmtree(TMP, ignore_errors=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
