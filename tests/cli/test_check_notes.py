#!/usr/bin/env python3
"""What the reading commands say on stderr and how often, on logs made with kc_make_log:

- a log of 60 damaged chunks: `check` lists the first 20 damaged-chunk errors and one line for the other 40
  (with the exact count, 60 skipped, in its header), and `check --salvage` and `summary --salvage` print
  those lines once, not once in the report and again in the summary of the intact part or on stderr;
- `summary --format csv` prints the reader's warnings (here: a newer minor format version) on stderr, as
  `kernels --format csv` does;
- an option the output format ignores is named on stderr: `summary --view` with --format json (and csv
  without --sort, where the view orders nothing), `export --max-mb` and `--force` with a format other
  than chrome.

Usage: test_check_notes.py BUILD_DIR KC_MAKE_LOG
"""
import os
import struct
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

MAKE_LOG = sys.argv[2]
DAMAGED = 60  # chunks damaged
LISTED = 20   # damaged-chunk errors listed one by one (kListedChunkErrors)


def make_log(path, script):
    subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)


def chunks_of(data):
    """(byte offset, header bytes) of each chunk of a log: plain chunks ("CKHK", a 24-byte header) and
    packed ones ("CKHZ", 32 bytes), each header's second field the bytes after it."""
    at, out = 16, []
    while at + 24 <= len(data):
        magic, stored = struct.unpack_from("<II", data, at)
        header = {0x4B484B43: 24, 0x5A484B43: 32}.get(magic)
        if header is None:
            break
        out.append((at, header))
        at += header + stored
    return out


def mismatch_lines(text):
    return [l for l in text.splitlines() if "checksum mismatch in chunk" in l]


with tempfile.TemporaryDirectory() as tmp:
    # One chunk per capture window ("segment" ends the chunk): 70 windows of one kernel each.
    log = os.path.join(tmp, "windows.kcount")
    make_log(log, "push step\n" + "kernel 1000 gemm\nsegment\n" * 70 + "pop\n")
    data = bytearray(open(log, "rb").read())
    found = chunks_of(data)
    chunks = [at for at, _ in found]
    check("the made log has a chunk per window", len(chunks) > DAMAGED + 2, len(chunks))
    for at, header in found[1:1 + DAMAGED]:
        data[at + header] ^= 0x01  # the first stored byte: the checksum no longer verifies
    damaged = os.path.join(tmp, "damaged.kcount")
    open(damaged, "wb").write(bytes(data))

    r = kcount("check", damaged)
    listed = mismatch_lines(r.out)
    more = [l for l in r.out.splitlines() if "... and " in l]
    check("check: damaged, exit 2", r.rc == 2 and "\nDAMAGED\n" in r.out, r.out[-600:])
    check(f"check: the first {LISTED} damaged chunks listed", len(listed) == LISTED, len(listed))
    check("check: one line for the other damaged chunks, with their count and where they are",
          len(more) == 1 and f"... and {DAMAGED - LISTED} more damaged chunks not listed (chunks {LISTED + 1} to "
          f"{DAMAGED}, at bytes {chunks[LISTED + 1]} to {chunks[DAMAGED]}); {DAMAGED} chunks skipped in all" in more[0],
          more)
    check("check: the exact count in the header line", f", {DAMAGED} chunks skipped\n" in r.out, r.out[:400])

    r = kcount("check", "--salvage", damaged)
    check("check --salvage: the errors once", len(mismatch_lines(r.out + r.err)) == LISTED,
          len(mismatch_lines(r.out + r.err)))
    check("check --salvage: the intact part's state line points at the errors above",
          "intact part:" in r.out and "(salvaged; see the errors above)" in r.out, r.out[-800:])

    r = kcount("summary", "--salvage", damaged)
    check("summary --salvage: exit 0", r.rc == 0, r.err)
    check("summary --salvage: the errors once (under the footer)", len(mismatch_lines(r.out)) == LISTED and
          not mismatch_lines(r.err), (len(mismatch_lines(r.out)), r.err[:600]))
    r = kcount("summary", "--salvage", "--format", "csv", damaged)
    check("summary --salvage --format csv: the errors once, on stderr", len(mismatch_lines(r.err)) == LISTED and
          not mismatch_lines(r.out), len(mismatch_lines(r.err)))

    # A log whose file header says format 1.99: intact, with the reader's warning.
    newer = os.path.join(tmp, "newer.kcount")
    head = bytearray(open(log, "rb").read())
    struct.pack_into("<H", head, 10, 99)
    open(newer, "wb").write(bytes(head))
    warning = "is newer than this reader's"
    r = kcount("kernels", "--format", "csv", newer)
    check("kernels --format csv: the reader's warning on stderr", r.rc == 0 and warning in r.err, r.err)
    r = kcount("summary", "--format", "csv", newer)
    check("summary --format csv: the reader's warning on stderr, once", r.rc == 0 and r.err.count(warning) == 1,
          r.err)
    r = kcount("summary", "--format", "json", newer)
    check("summary --format json: the warning in its issues", r.rc == 0 and warning in r.out, r.err)

    # Options the format ignores.
    r = kcount("summary", "--view", "inclusive", "--format", "json", log)
    check("summary --view with json: a note", r.rc == 0 and "kcount: --view lays out the table format" in r.err
          and "no effect with --format json" in r.err, r.err)
    r = kcount("summary", "--view", "innermost", "--format", "csv", log)
    check("summary --view with csv: a note", r.rc == 0 and "no effect with --format csv" in r.err, r.err)
    r = kcount("summary", "--view", "innermost", "--sort", "gpu", "--format", "csv", log)
    check("summary --view --sort with csv: no note (the view orders the rows)", r.rc == 0 and "--view" not in r.err,
          r.err)
    r = kcount("summary", "--view", "inclusive", log)
    check("summary --view with the table: no note", r.rc == 0 and "--view" not in r.err, r.err)
    for fmt in ("json", "csv"):
        args = ["export", "--format", fmt, "--max-mb", "10", "--force", "-o", "-"] + \
            (["--table", "kernels"] if fmt == "csv" else []) + [log]
        r = kcount(*args)
        check(f"export --max-mb and --force with {fmt}: a note each", r.rc == 0 and
              f"kcount: --max-mb is for --format chrome (the size of the trace a browser opens): no effect with "
              f"--format {fmt}" in r.err and "kcount: --force is for --format chrome" in r.err, r.err)
    r = kcount("export", "--format", "chrome", "--max-mb", "10", "-o", "-", log)
    check("export --max-mb with chrome: no note", r.rc == 0 and "--max-mb" not in r.err, r.err)

sys.exit(exit_status())
