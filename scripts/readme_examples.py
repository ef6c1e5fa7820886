#!/usr/bin/env python3
"""Keeps the `$ kcount ...` examples of README.md equal to what the commands print.

An example is a fenced code block whose first line is `$ kcount ARGS...`; the lines after it are the
command's output (standard output, then standard error). The command runs from the repository root
with the given kcount binary in place of `kcount`, its standard output a pipe and `COLUMNS` removed
from its environment, so the tables have the tool's default width whatever the terminal.

A block may show an excerpt: an HTML comment on the line just before its opening fence,
`<!-- readme_examples: lines 35-49 -->` (several ranges: `lines 1-3, 10-12`), picks output lines
(numbered from 1, both ends included); a line `...` stands for the lines left out before, between and
after the ranges. Without the comment the block holds the whole output.

Usage:
  python3 scripts/readme_examples.py --check --kcount build/bin/kcount [--readme README.md]
  python3 scripts/readme_examples.py --write --kcount build/bin/kcount [--readme README.md]

--check exits 0 when every block equals its command's output, 1 naming the first block that differs
(its command, its line in the README and a diff), 2 on a usage error (no such binary, a command
that cannot be parsed). --write rewrites the blocks in place with the commands' output.
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ELISION = "..."
DIRECTIVE = re.compile(r"^<!--\s*readme_examples:\s*lines\s+([0-9,\s-]+?)\s*-->\s*$")


@dataclass
class Example:
    """One README block: the line numbers (0-based) of its fences, its command and excerpt ranges."""

    open_line: int  # index of the opening ``` line
    close_line: int  # index of the closing ``` line
    command: str  # the text after "$ " on the block's first line
    ranges: list  # [(first, last)] output lines, 1-based and inclusive; empty: the whole output


def parseRanges(text: str, where: str) -> list:
    ranges = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", part)
        if not m or int(m.group(1)) < 1 or int(m.group(1)) > int(m.group(2)):
            raise SystemExit(f"readme_examples: {where}: bad line range {part.strip()!r} (want A-B, 1 <= A <= B)")
        ranges.append((int(m.group(1)), int(m.group(2))))
    if any(b[0] <= a[1] for a, b in zip(ranges, ranges[1:])):
        raise SystemExit(f"readme_examples: {where}: line ranges must be in order and not overlap")
    return ranges


def findExamples(lines: list, readme: Path) -> list:
    """Every fenced block of `lines` whose first line starts with `$ kcount `."""
    examples = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        close = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        if close is None:
            raise SystemExit(f"readme_examples: {readme}:{i + 1}: code block never closed")
        first = lines[i + 1] if i + 1 < close else ""
        if first.startswith("$ kcount "):
            ranges = []
            m = DIRECTIVE.match(lines[i - 1]) if i > 0 else None
            if m:
                ranges = parseRanges(m.group(1), f"{readme}:{i}")
            examples.append(Example(i, close, first[2:], ranges))
        i = close + 1
    return examples


def runCommand(command: str, kcount: str) -> list:
    """Output lines of `command` with `kcount` replaced by the binary, run from the repository root."""
    argv = shlex.split(command)
    argv[0] = kcount
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    text = (done.stdout + done.stderr).decode("utf-8", errors="replace")
    return text.splitlines()


def excerpt(output: list, ranges: list) -> list:
    """The output lines an example shows: all of them, or its ranges with `...` for the lines left out."""
    if not ranges:
        return output
    shown = []
    next_line = 1
    for first, last in ranges:
        if first > next_line:
            shown.append(ELISION)
        shown.extend(output[first - 1 : last])
        next_line = last + 1
    if next_line <= len(output):
        shown.append(ELISION)
    return shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare every example with its command's output")
    mode.add_argument("--write", action="store_true", help="rewrite every example with its command's output")
    parser.add_argument("--kcount", required=True, help="the kcount binary that runs the examples")
    parser.add_argument("--readme", default=str(ROOT / "README.md"), help="the file (default: README.md)")
    args = parser.parse_args()

    kcount = str(Path(args.kcount).resolve())
    if not os.access(kcount, os.X_OK):
        print(f"readme_examples: {args.kcount}: not an executable file", file=sys.stderr)
        return 2
    readme = Path(args.readme)
    lines = readme.read_text(encoding="utf-8").split("\n")
    examples = findExamples(lines, readme)
    if not examples:
        print(f"readme_examples: {readme}: no `$ kcount ...` example found", file=sys.stderr)
        return 1

    if args.write:
        # From the last block up, so that rewriting one leaves the line numbers of those before it valid.
        for example in reversed(examples):
            expected = excerpt(runCommand(example.command, kcount), example.ranges)
            lines[example.open_line + 2 : example.close_line] = expected
    else:
        for example in examples:
            expected = excerpt(runCommand(example.command, kcount), example.ranges)
            shown = lines[example.open_line + 2 : example.close_line]
            if shown == expected:
                continue
            diff = difflib.unified_diff(shown, expected, "README block", "command output", lineterm="", n=1)
            print(f"readme_examples: {readme}:{example.open_line + 2}: the block of `$ {example.command}` "
                  f"differs from what the command prints ({len(shown)} lines shown, {len(expected)} expected):",
                  file=sys.stderr)
            print("\n".join(list(diff)[:40]), file=sys.stderr)
            print(f"(run: python3 scripts/readme_examples.py --write --kcount KCOUNT)", file=sys.stderr)
            return 1
    if args.write:
        readme.write_text("\n".join(lines), encoding="utf-8")
        print(f"readme_examples: {len(examples)} examples written in {readme}")
    else:
        print(f"readme_examples: {len(examples)} examples equal to their commands' output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
