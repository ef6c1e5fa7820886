#!/usr/bin/env python3
"""kcount on shipped logs whose chunks were moved, and moved chunks with other damage: every permutation of a
3-chunk log and seeded random shuffles of larger ones read as REORDERED with every record; an End chunk moved
before other chunks, plus a zero tail, trailing bytes, a second log, a cut or a lost chunk: the chunks after
the End chunk are read and the other damage is named as what it is; junk bytes before chunk 0, between
moved chunks, or holding a chunk header whose checksum fails, where the intact chunks carry every number:
junk, no chunk skipped; counts in messages with their singular.

Usage: test_reordered_chunks.py BUILD_DIR   (KCOUNT=path runs another kcount, e.g. an older build)
"""
import itertools
import json
import os
import random
import struct
import sys
import tempfile

import checks
from checks import check, exit_status, kcount

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EAGER = os.path.join(SRC, "examples", "logs", "geglu-eager.kcount")        # 3 chunks, End in the last
COMPILED = os.path.join(SRC, "examples", "logs", "geglu-compiled.kcount")  # 8 chunks
SWEEP = os.path.join(SRC, "examples", "logs", "sweep-eager.kcount")        # 10 chunks
TMP = tempfile.mkdtemp(prefix="kc-reordered-")
if os.environ.get("KCOUNT"):
    checks.KCOUNT = os.environ["KCOUNT"]


def split(path):
    """(file header, [chunk bytes, ...]) of a log: a 16-byte file header, then chunks whose header starts
    with the magic CKHK (24-byte header) or CKHZ (32 bytes) and the u32 length of what follows it
    (docs/format.md)."""
    data = open(path, "rb").read()
    pos, chunks = 16, []
    while pos < len(data):
        magic = data[pos:pos + 4]
        assert magic in (b"CKHK", b"CKHZ"), (path, pos, magic)
        size = (24 if magic == b"CKHK" else 32) + struct.unpack_from("<I", data, pos + 4)[0]
        chunks.append(data[pos:pos + size])
        pos += size
    return data[:16], chunks


def write(name, data):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def summary(path, *extra):
    """The log's summary JSON without what names the file or judges it (path, issues, state, intact)."""
    r = kcount("summary", "--format", "json", *extra, path)
    if r.rc != 0:
        return r.rc, r.err
    log = json.loads(r.out)["logs"][0]
    for key in ("path", "issues", "state", "intact"):
        log.pop(key, None)
    return 0, log


def lines(out, prefix):
    return [line for line in out.splitlines() if line.startswith(prefix)]


def test_permutations():
    head, chunks = split(EAGER)
    _, want = summary(EAGER)
    for order in itertools.permutations(range(len(chunks))):
        if list(order) == sorted(order):
            continue
        path = write("perm.kcount", head + b"".join(chunks[i] for i in order))
        r = kcount("check", path)
        name = f"{os.path.basename(EAGER)} chunks in order {','.join(map(str, order))}"
        check(f"{name}: check says REORDERED, exit 1, no error", r.rc == 1 and "\nREORDERED: " in r.out and
              not lines(r.out, "error:"), f"rc={r.rc}\n{r.out}")
        check(f"{name}: summary reads every record", summary(path) == (0, want), r.out)


def test_shuffles():
    rng = random.Random(20261202)
    for src, count in ((COMPILED, 16), (SWEEP, 4)):
        head, chunks = split(src)
        _, want = summary(src)
        bad = []
        for k in range(count):
            order = list(range(len(chunks)))
            while order == sorted(order):
                rng.shuffle(order)
            path = write("shuffle.kcount", head + b"".join(chunks[i] for i in order))
            r = kcount("check", path)
            if not (r.rc == 1 and "\nREORDERED: " in r.out and summary(path) == (0, want)):
                bad.append((order, r.rc, lines(r.out, "error:")[:1]))
        check(f"{os.path.basename(src)}: {count} random chunk orders all REORDERED with every record", not bad,
              f"{len(bad)} failed, e.g. {bad[:2]}")


def test_end_moved_and_more():
    head, chunks = split(COMPILED)
    n = len(chunks)
    moved = [0, n - 1] + list(range(1, n - 1))  # the End chunk second
    body = head + b"".join(chunks[i] for i in moved)
    _, want = summary(COMPILED)

    r = kcount("check", write("zeros.kcount", body + bytes(4096)))
    check("End moved + zero tail: padding after the end record, chunks after the End read, REORDERED",
          r.rc == 1 and f"warning: 4096 zero bytes follow the end record, from byte {len(body)}" in r.out and
          "\nREORDERED: " in r.out and not lines(r.out, "error:"), f"rc={r.rc}\n{r.out}")
    check("End moved + zero tail: every record read", summary(os.path.join(TMP, "zeros.kcount")) == (0, want))

    r = kcount("check", write("one-zero.kcount", body + bytes(1)))
    check("End moved + 1 zero byte: '1 zero byte follows'", f"1 zero byte follows the end record, from byte {len(body)}"
          in r.out, r.out)

    r = kcount("check", write("one-byte.kcount", body + b"x"))
    check("End moved + 1 trailing byte: '1 byte follows ... before it'",
          f"1 byte follows the end record, from byte {len(body)}; only the log before it (bytes 0 to {len(body)})"
          in r.out, r.out)

    r = kcount("check", write("trailing.kcount", body + b"garbage!" * 100))
    check("End moved + trailing bytes: named after the end record, not chunks missing",
          r.rc == 1 and f"800 bytes follow the end record, from byte {len(body)}" in r.out and
          not lines(r.out, "error:"), f"rc={r.rc}\n{r.out}")
    check("End moved + trailing bytes: every record read",
          summary(os.path.join(TMP, "trailing.kcount"), "--salvage") == (0, want))

    second = open(EAGER, "rb").read()
    r = kcount("check", write("second.kcount", body + second))
    check("End moved + a second log: NOT ONE LOG, not chunks missing",
          r.rc == 1 and f"{len(second)} bytes follow the end record, from byte {len(body)}: a second log starts there"
          in r.out and not lines(r.out, "error:"), f"rc={r.rc}\n{r.out}")
    check("End moved + a second log: the first log's records, all of them",
          summary(os.path.join(TMP, "second.kcount"), "--salvage") == (0, want))

    cut = body[:-10]  # the last chunk (n - 2) cut short
    r = kcount("check", write("cut.kcount", cut))
    check("End moved + last chunk cut: truncated, not chunks missing",
          r.rc == 2 and f"truncated at byte {len(cut)} in chunk {n - 1}" in r.out and "chunks missing" not in r.out,
          f"rc={r.rc}\n{r.out}")
    j = summary(os.path.join(TMP, "cut.kcount"), "--salvage")
    check("End moved + last chunk cut: the chunks after the End up to the cut are read",
          j[0] == 0 and j[1]["totals"]["launches"] > 0, j)

    # Chunk 3 cut to its last 3000 bytes (its header lost), after the moved End chunk: one damaged chunk,
    # counted skipped, whose number is the one not among the intact chunks; not junk with a chunk missing.
    headless = head + b"".join(chunks[i][-3000:] if i == 3 else chunks[i] for i in moved)
    at = 16 + sum(len(chunks[i]) for i in moved[:moved.index(3)])
    r = kcount("check", write("headless.kcount", headless))
    errs = lines(r.out, "error:")
    check("End moved + a chunk cut to its tail: one error, a damaged chunk skipped at its place",
          r.rc == 2 and len(errs) == 1 and errs[0].startswith(f"error: bad chunk magic at byte {at} in chunk 4; "
                                                              f"skipped 3000 bytes") and "junk" not in r.out and
          f"{n - 1} chunks read (0 packed), 1 chunk skipped" in r.out and "missing" not in r.out,
          f"rc={r.rc}\n{r.out}")
    check("End moved + a chunk cut to its tail: the warning names the number as the damaged chunk's",
          "the number 3 is not among the intact chunks: that of the damaged chunk skipped" in r.out, r.out)

    lost = head + b"".join(chunks[i] for i in moved if i != 3)  # chunk 3 lost
    r = kcount("check", write("lost.kcount", lost))
    errs = lines(r.out, "error:")
    check("End moved + a chunk lost: one error, '1 chunk missing: number 3 is not in the file'",
          r.rc == 2 and len(errs) == 1 and errs[0].startswith("error: 1 chunk missing: number 3 is not in the file"),
          f"rc={r.rc}\n{r.out}")
    check("End moved + a chunk lost: every other chunk read",
          f"{n - 1} chunks read (0 packed), 0 chunks skipped" in r.out, r.out)


def test_junk():
    head, chunks = split(EAGER)
    _, want = summary(EAGER)

    def junk_check(name, data, junk_at, junk_len, between, extra_state=""):
        path = write("junk.kcount", data)
        r = kcount("check", path)
        errs = lines(r.out, "error:")
        noun = "junk byte" if junk_len == 1 else "junk bytes"
        check(f"{name}: one error naming the junk bytes, no chunk skipped",
              r.rc == 2 and len(errs) == 1 and
              f"{junk_len} {noun} (bytes {junk_at} to {junk_at + junk_len}) between {between}, skipped" in errs[0]
              and "3 chunks read (0 packed), 0 chunks skipped" in r.out, f"rc={r.rc}\n{r.out}")
        check(f"{name}: every record read", summary(path, "--salvage") == (0, want))

    for n in (1, 100):
        junk_check(f"{n} junk bytes before chunk 0", head + b"\x01" * n + b"".join(chunks), 16, n,
                   "the file header and chunk 0")
    swapped = [chunks[0], chunks[2], b"\x01" * 40, chunks[1]]
    at = 16 + len(chunks[0]) + len(chunks[2])
    junk_check("junk between two swapped chunks", head + b"".join(swapped), at, 40, "chunk 1 and chunk 2")
    fake = b"CKHK" + struct.pack("<IQII", 8, 0x1234, 1, 1) + b"\x07\x00\x00\x00\x00\x00\x00\x00"  # checksum fails
    at = 16 + len(chunks[0])
    junk_check("junk holding a plausible chunk header", head + chunks[0] + fake + chunks[1] + chunks[2], at,
               len(fake), "chunk 0 and chunk 1")


def test_header_copy():
    """A copy of the 16-byte file header between moved chunks is junk, as it is between chunks in order; after a
    log without End record whose chunk after it repeats a number (a second log's chunk 0), a second log."""
    head, chunks = split(COMPILED)
    _, want = summary(COMPILED)
    at = 16 + len(chunks[0]) + len(chunks[2])
    path = write("header-copy.kcount", head + chunks[0] + chunks[2] + head + chunks[1] + b"".join(chunks[3:]))
    r = kcount("check", path)
    errs = lines(r.out, "error:")
    check("header copy between moved chunks: one error naming 16 junk bytes, not a second log",
          r.rc == 2 and len(errs) == 1 and f"16 junk bytes (bytes {at} to {at + 16}) between chunk 1 and chunk 2, "
          "skipped: a copy of the file header, followed by a chunk that carries sequence number 1, which no chunk "
          "before it carries" in errs[0] and "a second log" not in r.out.replace("not a second log", ""),
          f"rc={r.rc}\n{r.out}")
    check("header copy between moved chunks: every record read (384 kernels)", summary(path, "--salvage") == (0, want))
    killed = open(os.path.join(SRC, "tests", "data", "sigkill.kcount"), "rb").read()
    r = kcount("check", write("killed-then-log.kcount", killed + open(EAGER, "rb").read()))
    check("a log without End record, then a second log: still a second log",
          r.rc == 2 and f"a second log starts at byte {len(killed)}" in r.out, f"rc={r.rc}\n{r.out}")


def test_damaged_among_moved():
    """A chunk cut short among moved chunks: the damaged chunk is named with its offset and the number its
    header carries, no intact chunk is called a damaged header."""
    head, chunks = split(COMPILED)
    for name, order, cut in (("number 2 cut after number 3", [0, 1, 3, 2] + list(range(4, len(chunks))), 2),
                             ("number 3 cut before number 2", [0, 1, 3, 2] + list(range(4, len(chunks))), 3)):
        data, at_cut, place = head, None, None
        for k, i in enumerate(order):
            if i == cut:
                at_cut, place = len(data), k
            data += chunks[i][:100] if i == cut else chunks[i]
        r = kcount("check", write("cut-moved.kcount", data))
        errs = lines(r.out, "error:")
        check(f"{name}: one error, at the cut chunk {place} at byte {at_cut}",
              r.rc == 2 and errs and errs[0].startswith(f"error: checksum mismatch in chunk {place} at byte {at_cut}")
              and not [e for e in errs[1:] if "chunk" in e.split(":")[1]], f"rc={r.rc}\n{r.out}")
        check(f"{name}: the warning gives number {cut} to the damaged chunk, no intact chunk is a damaged header",
              f"number {cut} is that of damaged chunk {place} at byte {at_cut} (skipped; its header carries it)"
              in r.out and "damaged chunk header" not in r.out and "missing" not in r.out, r.out)


def test_moved_counts():
    """Chunks moved are counted as the fewest that, moved back, restore the write order; a count of chunks
    missing agrees with the numbers listed."""
    head, chunks = split(COMPILED)
    n = len(chunks)
    order = [0, n - 1, 1, 2, 4, 5, 6, 3]  # the End chunk and number 3 moved
    r = kcount("check", write("two-moved.kcount", head + b"".join(chunks[i] for i in order)))
    check("End chunk and one more moved: 2 chunks moved, numbers 3 and 7",
          "2 chunks were moved (the fewest that, moved back, restore the write order: numbers 3, 7)" in r.out and
          "\nREORDERED: 2 chunks are out of write order" in r.out, r.out)
    r = kcount("check", write("one-moved.kcount", head + b"".join(chunks[i] for i in [0] + list(range(2, n)) + [1])))
    check("one chunk moved to the end: 1 chunk moved, number 1",
          "1 chunk was moved (the fewest that, moved back, restore the write order: number 1)" in r.out and
          "\nREORDERED: 1 chunk is out of write order" in r.out, r.out)
    # Numbers 1 and 2 not among the intact chunks, one damaged chunk (its header lost) skipped: 1 missing.
    data = head + chunks[0] + chunks[n - 1] + chunks[1][-500:] + b"".join(chunks[3:n - 1])
    r = kcount("check", write("one-of-two.kcount", data))
    errs = lines(r.out, "error:")
    check("2 numbers absent, 1 damaged chunk of unknown number: '1 chunk missing' says why numbers 1-2",
          len(errs) >= 2 and errs[1].startswith("error: 1 chunk missing: numbers 1-2 are not among the intact "
                                                "chunks, and only 1 damaged chunk whose number is unknown was skipped"),
          r.out)


def test_repeated_payload():
    """A chunk's payload repeated under a new sequence number (the chunks after it renumbered): a repeated chunk,
    named with the chunk it repeats, its records not counted twice (was EXTRA RECORDS)."""
    head, chunks = split(COMPILED)
    n = len(chunks)
    renumber = lambda c, k: c[:16] + struct.pack("<I", k) + c[20:]
    at5 = 16 + sum(len(c) for c in chunks[:5])
    at_copy = 16 + sum(len(c) for c in chunks[:n - 1])
    path = write("repeated-payload.kcount",
                 head + b"".join(chunks[:n - 1]) + renumber(chunks[5], n - 1) + renumber(chunks[n - 1], n))
    r = kcount("check", path)
    errs = lines(r.out, "error:")
    check("payload of chunk 5 repeated under number 7: one error naming both chunks, not EXTRA RECORDS",
          r.rc == 2 and len(errs) == 1 and errs[0].startswith(
              f"error: chunk {n - 1} at byte {at_copy} repeats the payload of chunk 5 at byte {at5} (the same bytes) "
              f"under sequence number {n - 1} (that chunk carries 5") and "EXTRA RECORDS" not in r.out and
          f"{n} chunks read (0 packed), 1 chunk skipped" in r.out, f"rc={r.rc}\n{r.out}")
    _, want = summary(COMPILED)
    check("payload repeated under a new number: its records counted once", summary(path, "--salvage") == (0, want))


def test_windows_in_write_order():
    """Capture windows of a log whose chunks were moved are listed, with their records, in write order."""
    import subprocess
    script = "push step\n" + "".join("kernel 100 gemm\n" * k + "segment\n" for k in (1, 2, 3)) + "pop\n"
    path = os.path.join(TMP, "windows.kcount")
    subprocess.run([os.path.join(sys.argv[1], "bin", "kc_make_log"), path], input=script.encode(), check=True)
    head, chunks = split(path)  # one chunk per window, then the End chunk
    moved = write("windows-moved.kcount", head + chunks[0] + chunks[2] + chunks[1] + b"".join(chunks[3:]))
    rc, log = summary(moved)
    segs = [(s["index"], s["kernels"]) for s in log["segments"]] if rc == 0 else None
    check("windows 1 and 2 moved: JSON segments in write order, each with its own kernels",
          segs == [(0, 1), (1, 2), (2, 3)], segs)


def test_damaged_end_number():
    """Chunks moved and the End chunk's number damaged to 5000: a damaged End chunk header, not 4993 chunks
    missing; every record read."""
    head, chunks = split(COMPILED)
    end = chunks[-1][:16] + struct.pack("<I", 5000) + chunks[-1][20:]
    path = write("end-5000.kcount", head + chunks[0] + end + b"".join(chunks[1:-1]))
    r = kcount("check", path)
    check("End moved, its number 5000: a warning naming the End chunk's damaged header, REORDERED",
          r.rc == 1 and f"chunk 1 at byte {16 + len(chunks[0])}, which holds the end record, carries sequence number "
          "5000 where 7 was expected" in r.out and "chunks missing:" not in r.out and not lines(r.out, "error:") and
          "\nREORDERED: 1 chunk is out of write order" in r.out, f"rc={r.rc}\n{r.out}")
    _, want = summary(COMPILED)
    check("End moved, its number 5000: every record read", summary(path) == (0, want))
    body = head + chunks[0] + end + b"".join(chunks[1:-1])
    r = kcount("check", write("end-5000-trailing.kcount", body + b"garbage!" * 10))
    check("End moved, its number 5000, trailing bytes: bytes after the end record, not damage",
          r.rc == 1 and f"80 bytes follow the end record, from byte {len(body)}" in r.out and
          not lines(r.out, "error:"), f"rc={r.rc}\n{r.out}")


def main():
    test_permutations()
    test_shuffles()
    test_end_moved_and_more()
    test_junk()
    test_header_copy()
    test_damaged_among_moved()
    test_moved_counts()
    test_repeated_payload()
    test_windows_in_write_order()
    test_damaged_end_number()
    sys.exit(exit_status())


if __name__ == "__main__":
    main()
