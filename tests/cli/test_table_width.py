#!/usr/bin/env python3
"""Text tables by display columns: wide (CJK) range names, --width and the terminal's width (logs made by
kc_make_log).

  align     a log whose range names are CJK (2 columns a character) and hold a combining mark (0 columns):
            summary (tree and inclusive), kernels and diff print, column for column, what they print for a
            log whose names are ASCII of the same widths; each numeric column of summary's table ends at the
            same display column on every row.
  width     --width N: every line of each table (summary, kernels, diff's two) takes at most N columns, the
            numbers unchanged; at --width 60, where names alone are not enough, columns are left out (named
            above the table) and every line fits; --width 0 prints the table as without --width; output that
            is not a terminal is the same as with --width 0.
  terminal  standard output a terminal (a pseudo-terminal) of 160 columns: tables fit in 160; COLUMNS=150
            wins over the terminal's size.
Usage: test_table_width.py BUILD_DIR KC_MAKE_LOG
"""
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
import unicodedata

from checks import check, exit_status, kcount

make_log = os.path.abspath(sys.argv[2])

# Range names of the CJK log: ideographs, katakana, a fullwidth letter, e + U+0301 COMBINING ACUTE ACCENT;
# a kernel named in ideographs (the kernels table's first column).
CJK_SCRIPT = """push 前向传播
push 注意力层
kernel 100 gemm_kernel
pop
push mlp
kernel 50 gelu_kernel
pop
pop
push カーネルＡ
push cafe\u0301
kernel 10 gemm_kernel
kernel 5 计算核
pop
pop
"""
# Long names that no other name clashes with: they can be cut to any width.
LONG_SCRIPT = """push 这是一个非常长的范围名称用于测试终端宽度的适配功能是否正常工作以及省略号
kernel 100 gemm_kernel_with_a_long_generated_name_sm90_tile_128x256x64_cluster_2x1x1_stages_4_warpspecialized
push inner_range_with_a_rather_long_descriptive_name_for_testing_purposes
kernel 50 triton_poi_fused_add_mul_0
pop
pop
"""


def width(text):
    """Display columns of `text`: 2 for wide and fullwidth characters, 0 for combining marks, else 1."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def ascii_twins(script):
    """Each non-ASCII character of `script` -> ASCII of its display width ("" for a combining mark): "z"
    and a capital letter for a wide character, in code point order, so that names keep their order."""
    wide = sorted({c for c in script if ord(c) > 127 and width(c) == 2})
    twins = {c: "z" + chr(ord("A") + i) for i, c in enumerate(wide)}
    twins.update({c: "" for c in script if unicodedata.combining(c)})
    return twins


def as_ascii(text, twins):
    return "".join(twins.get(c, c) for c in text)


def make(path, script):
    subprocess.run([make_log, path], input=script.encode(), check=True)


def tables(text):
    """The text tables in `text`: lists of lines, from a heading (the line above a rule of '-', or the
    kernels section's heading of diff) to the last row (the next line that is blank or a note)."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        rule = line and set(line) == {"-"}
        if not rule and not line.startswith("          category     kernel"):
            continue
        start = i - 1 if rule else i
        j = i + 1
        while j < len(lines) and lines[j] and not re.match(r"(verdicts|totals|-:|GPU time|launch CPU|kernels \()", lines[j]):
            j += 1
        found.append(lines[start:j])
    return found


def numbers(line):
    """A row's cells between its name and its last column (a list that --width may cut): the text between
    its first and its last run of two spaces or more (indent left out)."""
    parts = re.split(r" {2,}", line.strip())
    return parts[1:-1]


def run_in_terminal(args, columns, env=None):
    """kcount ARGS with standard output a pseudo-terminal `columns` wide: (exit status, output)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    from checks import kcount_path
    p = subprocess.Popen([kcount_path(), *args], stdout=slave, stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other end is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return p.wait(), b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


with tempfile.TemporaryDirectory() as work:
    os.makedirs(os.path.join(work, "cjk"))
    os.makedirs(os.path.join(work, "ascii"))
    cjk, plain = os.path.join(work, "cjk", "run.kcount"), os.path.join(work, "ascii", "run.kcount")
    twins = ascii_twins(CJK_SCRIPT)
    make(cjk, CJK_SCRIPT)
    make(plain, as_ascii(CJK_SCRIPT, twins))
    other = os.path.join(work, "other.kcount")
    make(other, "push mlp\nkernel 70 gelu_kernel\npop\n")

    # align: the CJK log's text, each wide character as two ASCII ones, is the ASCII log's text.
    for name, args in (("summary", ["summary"]), ("summary --view inclusive", ["summary", "--view", "inclusive"]),
                       ("kernels", ["kernels"]), ("diff", ["diff", other])):
        a, b = kcount(*args, cjk), kcount(*args, plain)
        shown = as_ascii(a.out.replace(cjk, plain), twins)
        check(f"align: kcount {name}: CJK names take 2 columns a character, marks 0",
              a.rc == 0 and shown == b.out, f"rc {a.rc}\n{a.out}\nexpected, as ASCII:\n{b.out}")
    summary = tables(kcount("summary", cjk).out)[0]
    heading = summary[0]
    ends = [m.end() for m in re.finditer(r"(instances|launches|kernels|self|GPU time|CPU time)(?=  |$)", heading)]
    rows = [as_ascii(r, twins) for r in summary[2:]]
    misplaced = [r for r in rows for e in ends if not (e <= len(r) and r[e - 1] != " " and (e == len(r) or r[e] == " "))]
    check("align: each numeric column of summary's table ends at the same display column on every row",
          len(rows) == 6 and not misplaced, "\n".join(summary))

    # width: --width N.
    long_log = os.path.join(work, "long.kcount")
    make(long_log, LONG_SCRIPT)
    for name, args, n in (("summary", ["summary"], 150), ("summary --view inclusive", ["summary", "--view", "inclusive"], 150),
                          ("kernels", ["kernels"], 200), ("diff", ["diff", cjk], 190)):
        full, fitted = kcount(*args, long_log, "--width", "0"), kcount(*args, long_log, "--width", str(n))
        wide = [line for t in tables(fitted.out) for line in t if width(line) > n]
        check(f"width: kcount {name} --width {n}: every table line fits",
              fitted.rc == 0 and tables(fitted.out) and not wide and "…" in fitted.out, f"rc {fitted.rc}\n{fitted.out}")
        before = [numbers(r) for t in tables(full.out) for r in t]
        after = [numbers(r) for t in tables(fitted.out) for r in t]
        check(f"width: kcount {name} --width {n}: names cut, numbers unchanged",
              before == after and full.out != fitted.out, f"{before}\n{after}")
        narrow = kcount(*args, long_log, "--width", "60")
        too_long = [line for line in narrow.out.split("\n") if width(line) > 60]
        check(f"width: kcount {name} --width 60 (names alone cannot fit): every line fits, the columns left out named",
              narrow.rc == 0 and not too_long and "columns left out to fit 60" in narrow.out, narrow.out)
        plain_out = kcount(*args, long_log)
        check(f"width: kcount {name} not to a terminal: as --width 0",
              plain_out.out == full.out, plain_out.out)
    r = kcount("summary", "--width", "-1", long_log)
    check("width: --width -1 is a usage error (exit 2) naming the bounds", r.rc == 2 and "from 60 to" in r.err,
          f"rc {r.rc} {r.err}")
    r = kcount("summary", "--format", "csv", "--width", "100", long_log)
    check("width: --width with --format csv: a note on stderr, CSV unchanged",
          r.rc == 0 and "--width" in r.err and r.out == kcount("summary", "--format", "csv", long_log).out, r.err)

    # terminal: the width of standard output's terminal, and COLUMNS.
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    for columns, extra in ((160, {}), (200, {"COLUMNS": "150"})):
        rc, out = run_in_terminal(["summary", long_log], columns, {**env, **extra})
        limit = int(extra.get("COLUMNS", columns))
        wide = [line for t in tables(out) for line in t if width(line) > limit]
        check(f"terminal: {columns} columns{' with COLUMNS=' + extra['COLUMNS'] if extra else ''}: summary's table "
              f"fits in {limit}", rc == 0 and tables(out) and not wide and "…" in out, out)
    rc, out = run_in_terminal(["summary", "--width", "0", long_log], 160, env)
    check("terminal: --width 0 on a terminal: the table as to a file", out == kcount("summary", long_log).out, out)

sys.exit(exit_status())
