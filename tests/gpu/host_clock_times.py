#!/usr/bin/env python3
"""Checks one trace log of tests/gpu/launches.cu for tests/gpu/check_host_clock.sh.

    host_clock_times.py KCOUNT LOG EXPECTED_HOST_CLOCK

Exports LOG to SQLite (kcount export --format sqlite) and checks: 9660 launches and 10055 kernels (the
program's exact counts, tests/gpu/launches.cu), metadata host_clock == EXPECTED_HOST_CLOCK, every launch's
exit >= enter, every kernel joined to a launch starts no earlier than 1 µs before that launch entered
(the kernel cannot run before its launch call began: CPU and GPU times share CLOCK_MONOTONIC). Prints one
line ending in "timing: ..." (medians); exit 0 if every check holds, 1 otherwise.
"""
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile

SLACK_NS = 1000


def main():
    kcount, log, want = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="host-clock-")
    db = os.path.join(tmp, "log.sqlite")
    subprocess.run([kcount, "export", log, "--format", "sqlite", "-o", db], check=True, stdout=subprocess.DEVNULL)
    con = sqlite3.connect(db)
    launches = con.execute("SELECT count(*) FROM launches").fetchone()[0]  # kernel launches (memory calls apart)
    kernels = con.execute("SELECT count(*) FROM kernels").fetchone()[0]
    row = con.execute("SELECT value FROM metadata WHERE name = 'host_clock'").fetchone()
    host_clock = row[0] if row else None
    backwards = con.execute('SELECT count(*) FROM launches WHERE "end" < start').fetchone()[0]
    pairs = con.execute('SELECT l.start, l."end", k.start FROM kernels k JOIN launches l '
                        'USING (processId, correlationId) WHERE k.start IS NOT NULL').fetchall()
    early = [(ls, ks) for ls, le, ks in pairs if ks + SLACK_NS < ls]
    call = statistics.median(le - ls for ls, le, ks in pairs) if pairs else 0
    queue = statistics.median(ks - le for ls, le, ks in pairs) if pairs else 0
    problems = []
    if launches != 9660 or kernels != 10055:
        problems.append(f"counts {launches} launches, {kernels} kernels (want 9660, 10055)")
    if host_clock != want:
        problems.append(f"host_clock {host_clock!r} (want {want!r})")
    if backwards:
        problems.append(f"{backwards} launches end before they start")
    if early:
        worst = max(ls - ks for ls, ks in early)
        problems.append(f"{len(early)} of {len(pairs)} kernels start before their launch entered (worst {worst} ns)")
    print(f"launches {launches}, kernels {kernels}, host_clock {host_clock}, {len(pairs)} kernel/launch pairs, "
          f"{len(early)} kernels before their launch; " + ("; ".join(problems) + "; " if problems else "") +
          f"timing: launch call {call / 1000:.2f} us, launch exit -> kernel start {queue / 1000:.2f} us (medians)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
