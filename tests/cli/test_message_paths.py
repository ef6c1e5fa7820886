#!/usr/bin/env python3
"""Messages that name a log's path stay one line when the path holds a newline or a tab: the reading
commands (summary, kernels, export, report, diff) show such a path in double quotes with the control
characters escaped ("/tmp/a\\nb.kcount"), as `kcount run` and the library show theirs (kc::shownPath); a
plain path is shown as it is.

Each case runs kcount on files made by kc_make_log (or cut, or not logs) and checks that every line on
stderr starts with "kcount" (a newline of a path would start a line with the rest of the path) and that the
quoted path is there.
Usage: test_message_paths.py BUILD_DIR KC_MAKE_LOG
"""
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, exit_status

build, make_log = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
kcount = os.path.join(build, "bin", "kcount")


def quoted(path):
    """The path as kc::shownPath shows one with a control character: fmt's "{:?}"."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def one_line_messages(name, args, must_have, cwd):
    r = subprocess.run([kcount, *args], capture_output=True, text=True, cwd=cwd)
    lines = r.stderr.splitlines()
    split = [x for x in lines if not x.startswith("kcount")]
    check(f"{name}: every stderr line is a whole message naming {must_have}",
          lines and not split and any(must_have in x for x in lines), r.stderr[-1500:])


with tempfile.TemporaryDirectory() as work:
    log = "run\nA.kcount"  # relative to `work`: the messages name it as given
    subprocess.run([make_log, os.path.join(work, log)], input="push step\nkernel 100 gemm\npop\n", text=True,
                   check=True)
    cut = "cut\tB.kcount"
    data = open(os.path.join(work, log), "rb").read()
    open(os.path.join(work, cut), "wb").write(data[:100])
    notlog = "not\na log.kcount"
    open(os.path.join(work, notlog), "w").write("plain text")
    os.mkdir(os.path.join(work, "fold\ner"))
    copy = "copy\nA.kcount"
    shutil.copy(os.path.join(work, log), os.path.join(work, copy))

    for cmd in (["summary"], ["kernels"], ["export", "--format", "json", "-o", os.path.join(work, "x.json")],
                ["report", "-o", os.path.join(work, "x.html")]):
        one_line_messages(f"{cmd[0]} of a cut log", [*cmd, cut], quoted(cut), work)
    one_line_messages("summary of a missing file", ["summary", "no\nsuch.kcount"], quoted("no\nsuch.kcount"), work)
    one_line_messages("summary of a file that is not a log", ["summary", notlog], quoted(notlog), work)
    one_line_messages("summary of a folder", ["summary", "fold\ner"], quoted("fold\ner"), work)
    one_line_messages("diff of a log with itself", ["diff", log, log], f"A ({quoted(log)}) and B ({quoted(log)})", work)
    one_line_messages("export onto a log", ["export", "--format", "json", "-o", log, log], f"-o {quoted(log)} is the log",
                      work)
    one_line_messages("report onto a log", ["report", "-o", copy, log], f"-o {quoted(copy)} is a kcount log", work)
    one_line_messages("export into a missing folder", ["export", "--format", "json", "-o", "no\ndir/x.json", log],
                      f"cannot write {quoted('no' + chr(10) + 'dir/x.json')}", work)
    one_line_messages("kernels --range of a range the log lacks", ["kernels", "--range", "nope", log],
                      f"{quoted(log)}: no range nope", work)
    one_line_messages("summary --segment the log lacks", ["summary", "--segment", "3", log], f"{quoted(log)}: no segment 3",
                      work)
    # A plain path (blanks included) is shown as it is, without quotes.
    plain = "plain name.kcount"
    open(os.path.join(work, plain), "wb").write(data[:100])
    r = subprocess.run([kcount, "summary", plain], capture_output=True, text=True, cwd=work)
    check("a plain path is shown as given", f"kcount: {plain}: " in r.stderr and f'"{plain}"' not in r.stderr,
          r.stderr)

sys.exit(exit_status())
