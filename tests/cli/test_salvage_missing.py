#!/usr/bin/env python3
"""`kcount summary --salvage` on a damaged log says how much of the recorded run is missing when the log
tells it (docs/reading-logs.md): a trace-mode log whose Stats record (in the final chunk, with the End
record) was read names, per kind, the records the library wrote that the intact chunks do not hold; a log
cut short (no Stats record) says nothing of the kind, as no number tells it.

Usage: test_salvage_missing.py BUILD_DIR
"""
import os
import re
import sys
import tempfile

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")


def state_line(out):
    return next((l for l in out.splitlines() if l.startswith("log ")), "")


def main():
    blob = open(LOG, "rb").read()
    whole = kcount("check", LOG).out
    stats = re.search(r"stats: (\d+) launch records", whole)
    with tempfile.TemporaryDirectory() as tmp:
        # A byte flipped in chunk 0: its checksum fails, the final chunk (Stats and End) is read.
        damaged = os.path.join(tmp, "damaged.kcount")
        b = bytearray(blob)
        b[3000] ^= 0xFF
        open(damaged, "wb").write(bytes(b))
        r = kcount("summary", "--salvage", damaged)
        line = state_line(r.out)
        m = re.search(r"; missing with the damage: (\d+) of (\d+) launch records", line)
        read = re.search(r"records: [^\n]*?(\d+) launches \(\+(\d+) memcpy/memset calls\)", kcount("check", damaged).out)
        check("salvage, damaged chunk 0: the footer names the launch records lost, from the Stats record",
              r.rc == 0 and m is not None and stats is not None and m.group(2) == stats.group(1)
              and read is not None and int(m.group(1)) == int(m.group(2)) - int(read.group(1)) - int(read.group(2))
              and line.endswith("(the Stats record's counts less those read)"), (line, read and read.groups()))
        # The file cut at two thirds: no Stats record, no number of the run; nothing said of what is missing.
        cut = os.path.join(tmp, "cut.kcount")
        open(cut, "wb").write(blob[:len(blob) * 2 // 3])
        r = kcount("summary", "--salvage", cut)
        line = state_line(r.out)
        check("salvage, cut short: no 'missing' numbers (the Stats record is lost)",
              r.rc == 0 and line.endswith("; no intact end record") and "missing with the damage" not in line, line)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
