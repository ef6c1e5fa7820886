#!/usr/bin/env python3
"""Messages of the reading commands, said once, in one wording, accurate for what was found:

1. Bytes after the End record: kernels, diff, export, report and summary (every format) warn once on
   stderr, in the reader's words; "a second log starts there" only when a second log does.
3. Copies of one recording of different sizes: the warning says what makes them differ (a second log,
   bytes that are no log, a cut copy); diff's line for a side of several logs names its logs in the order
   of the states it lists.
2. summary JSON: the warnings kcount adds after reading (implausible records, sums held at 2^64 - 1) have
   no place in the file: "offset": null, "chunk": -1, as docs/usage.md says.

Usage: test_tool_messages.py BUILD_DIR KC_MAKE_LOG (KCOUNT=PATH runs another kcount, e.g. an older one)
"""
import json
import os
import subprocess
import sys
import tempfile

import checks
from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCHES = os.path.join(ROOT, "tests", "data", "launches.kcount")
EAGER = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
MAKE_LOG = None


def make_log(path, script):
    subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
    return path


def after_end(work):
    with open(LAUNCHES, "rb") as f:
        data = f.read()
    junk = os.path.join(work, "junk8.kcount")
    with open(junk, "wb") as f:
        f.write(data + b"12345678")
    twice = os.path.join(work, "twice.kcount")
    with open(twice, "wb") as f:
        f.write(data + data)
    other = make_log(os.path.join(work, "other.kcount"), "push step\nkernel 1000 K\npop\n")
    commands = [["kernels"], ["summary"], ["summary", "--format", "csv"], ["summary", "--format", "json"],
                ["export", "--format", "json", "-o", os.devnull], ["report", "-o", os.devnull], ["diff", other]]
    for log, second in ((junk, False), (twice, True)):
        for cmd in commands:
            r = kcount(*cmd, log)
            lines = [l for l in r.err.splitlines() if "the end record" in l]
            name = f"{' '.join(cmd[:3 if cmd[0] == 'summary' else 1])} of {os.path.basename(log)}"
            check(f"{name}: one warning of the bytes after the end record, 'second log' only for a second log",
                  r.rc == 0 and len(lines) == 1 and ("a second log starts there" in lines[0]) == second
                  and "covers the first log" not in r.err, r.err)


def issue_offsets(work):
    log = make_log(os.path.join(work, "held.kcount"),
                   "push step\nkernel 1000 K\nkernel 18446744073709551615 BAD\nkernel 18446744073709551615 BAD\npop\n")
    r = kcount("summary", "--format", "json", log)
    issues = json.loads(r.out)["logs"][0]["issues"] if r.rc == 0 else []
    check("summary JSON: the implausible-record and held-sum warnings, offset null and chunk -1",
          len(issues) == 2 and all(i["offset"] is None and i["chunk"] == -1 for i in issues)
          and any("2^64 - 1 ns" in i["message"] for i in issues)
          and any(i["message"].startswith("sums held at 2^64 - 1") for i in issues), issues)


def copies(work):
    with open(LAUNCHES, "rb") as f:
        data = f.read()
    with open(EAGER, "rb") as f:
        eager = f.read()
    files = {}
    # The cut copy: geglu-eager's first 20000 bytes (chunk 0 whole, with the run's identity; chunk 1 cut).
    for name, body in (("junk8", data + b"12345678"), ("twice", data + data), ("cut", eager[:20000])):
        files[name] = os.path.join(work, f"copy-{name}.kcount")
        with open(files[name], "wb") as f:
            f.write(body)
    expect = {
        "junk8": f"copy-junk8.kcount is {LAUNCHES} followed by 8 bytes after its end record that are not a log",
        "twice": f"copy-twice.kcount is {LAUNCHES} followed by {len(data)} bytes after its end record: a second log",
        "cut": "one was copied before the recording ended, or was cut",
    }
    for name, text in expect.items():
        original = EAGER if name == "cut" else LAUNCHES
        r = kcount("summary", "--salvage", original, files[name])
        lines = [l for l in r.err.splitlines() if "are copies of one recording" in l]
        check(f"summary: a copy ({name}) of another size: the warning says what was found",
              len(lines) == 1 and text in lines[0] and (name == "cut") == ("copied before" in lines[0]), lines)
        r = kcount("check", original, files[name])
        lines = [l for l in r.out.splitlines() if l.startswith("COPY: ")]
        check(f"check: COPY of {name} says what was found", len(lines) == 1 and text in lines[0], lines)
    # A side of a lossy log and a log with data after its end: states and logs in one order.
    plain = make_log(os.path.join(work, "a.kcount"), "push step\nkernel 1000 K\npop\n")
    lossy = make_log(os.path.join(work, "lossy.kcount"), "push step\nkernel 1000 K\npop\ndropped host 5\n")
    tail = make_log(os.path.join(work, "tail.kcount"), "push step\nkernel 1000 K\npop\n")
    with open(tail, "ab") as f:
        f.write(b"junkjunk")
    r = kcount("diff", "--a", plain, "--b", lossy, tail)
    line = next((l for l in r.out.splitlines() if l.startswith("state of B: ")), "")
    check("diff: the side's logs named in the order of its states (data after end, then lossy)",
          line.startswith("state of B: data after end and complete, lossy (") and 0 < line.find(tail) < line.find(lossy),
          line)


def main():
    global MAKE_LOG
    MAKE_LOG = sys.argv[2]
    if os.environ.get("KCOUNT"):
        checks.KCOUNT = os.environ["KCOUNT"]
    with tempfile.TemporaryDirectory() as work:
        after_end(work)
        issue_offsets(work)
        copies(work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
