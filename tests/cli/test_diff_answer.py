#!/usr/bin/env python3
"""`kcount diff` puts its answer first (docs/usage.md, "kcount diff A B"):

- by default the verdicts come first (the first within the first 40 lines of the shipped sweep logs' diff),
  then the largest changes of ranges and kernels, then how many rows are not shown: the whole output of the
  sweep logs' diff is at most 200 lines;
- ranges nested differently under a range of both sides are compared as one: eager step/gate, step/up,
  step/act, step/down against compiled step/mlp on one line with their kernels per step (5 and 4), then
  the kernels on each side by category or short name;
- verdict lines wrap at the width (120 without a limit) with a hanging indent, nothing cut;
- --all prints every row (the range table, the nesting lines, every kernel, every verdict);
- --range PATH prints that range's verdict and its subtree; a path of neither side is a usage error (2).

Usage: test_diff_answer.py BUILD_DIR
"""
import os
import re
import sys

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = os.path.join(ROOT, "examples", "logs")
GEGLU = (os.path.join(LOGS, "geglu-eager.kcount"), os.path.join(LOGS, "geglu-compiled.kcount"))
SWEEP = (os.path.join(LOGS, "sweep-eager.kcount"), os.path.join(LOGS, "sweep-compiled.kcount"))


def test_sweep_short():
    r = kcount("diff", *SWEEP)
    lines = r.stdout.splitlines()
    check("sweep: exit 0", r.returncode == 0, r.stderr)
    first = next((i for i, l in enumerate(lines) if l.startswith("verdict for ")), None)
    check("sweep: the first verdict within the first 40 lines", first is not None and first < 40, first)
    check("sweep: at most 200 lines", len(lines) <= 200, len(lines))
    check("sweep: the whole run's verdict is shown", "verdict for the whole run:" in lines, lines[:60])
    not_shown = [l for l in lines if l.startswith("not shown: ")]
    check("sweep: one line says what is not shown and how to see it",
          len(not_shown) == 1 and "--all" in not_shown[0] and "--range PATH" in not_shown[0], not_shown)
    rows = [l for l in lines if l.startswith("  same ") or l.startswith("  only A ") or l.startswith("  only B ")]
    check("sweep: at most 10 kernel rows", 0 < len(rows) <= 10, len(rows))
    check("sweep: no 'nesting differs' nor 'only in' lines by default",
          not any(l.startswith("nesting differs") or l.startswith("only in ") for l in lines))
    regrouped = [l for l in lines if " in A ran as " in l]
    check("sweep: the eager step's children are compared as one with the compiled step's block",
          any(re.search(r"norm1, attn, add1, norm2, mlp, add2 \(\d+ kernels per step\) in A ran as block "
                        r"\(\d+ kernels per step\) in B", l) for l in regrouped), regrouped)
    full = kcount("diff", "--all", *SWEEP).stdout
    check("sweep --all: longer, with the nesting lines and every verdict",
          len(full.splitlines()) > 1000 and "nesting differs under " in full
          and full.count("verdict for ") > r.stdout.count("verdict for "), len(full.splitlines()))


def test_geglu_regrouped():
    r = kcount("diff", *GEGLU)
    lines = r.stdout.splitlines()
    one = [l for l in lines if "gate, up, act, down" in l]
    check("geglu: gate, up, act, down (5 kernels per step) and mlp (4 kernels per step) on one line",
          len(one) >= 1 and "gate, up, act, down (5 kernels per step) in A ran as mlp (4 kernels per step) in B" in one[0],
          one)
    at = lines.index(one[0]) if one else -1
    kernels = [l.strip() for l in lines[at + 1:at + 3]]
    check("geglu: then the kernels on each side (3 GEMM, the eager pointwise kernels, the fused Triton kernel)",
          len(kernels) == 2 and kernels[0].startswith("A: 3 GEMM + ") and "MulFunctor" in kernels[0]
          and "GeluCUDAKernelImpl" in kernels[0]
          and kernels[1] == "B: 3 GEMM + triton_poi_fused__unsafe_view_gelu_mul_0", kernels)
    heads = [l for l in lines if l.startswith("verdict for ")]
    check("geglu: the steady state first, the whole run last",
          heads[:1] == ["verdict for step (most repeated range: 20 instances in A, 20 in B):"]
          and heads[-1:] == ["verdict for the whole run:"], heads)
    check("geglu: the verdicts come before the tables",
          lines.index(heads[0]) < next(i for i, l in enumerate(lines) if l.startswith("range ")), heads)


def test_json_regrouped():
    import json
    j = json.loads(kcount("diff", "--format", "json", *GEGLU).stdout)
    step = next(v for v in j["verdicts"] if v["unit"] == "step")
    check("geglu json: step's verdict lists the regrouped children with their kernels and step's instances",
          step.get("regrouped") == [{"under": "step", "a": ["gate", "up", "act", "down"], "b": ["mlp"],
                                     "kernels_a": 100, "kernels_b": 80, "instances_a": 20, "instances_b": 20}],
          step.get("regrouped"))
    whole = next(v for v in j["verdicts"] if v["unit"] == "(overall)")
    check("geglu json: the whole run regroups nothing", whole.get("regrouped") == [], whole.get("regrouped"))


def test_wrap():
    r = kcount("diff", "--width", "80", *SWEEP)
    lines = r.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("verdict for "))
    end = next(i for i, l in enumerate(lines) if l.startswith("largest changes"))
    verdict = lines[start:end]
    check("--width 80: verdict lines fit 80 columns (but words longer than a line)",
          all(len(l) <= 80 or " " not in l.strip() for l in verdict), [l for l in verdict if len(l) > 80])
    check("--width 80: a wrapped line continues with a hanging indent",
          any(l.startswith("      ") for l in verdict), verdict[:20])
    wide = kcount("diff", "--width", "0", *SWEEP).stdout.splitlines()
    ws = next(i for i, l in enumerate(wide) if l.startswith("verdict for "))
    we = next(i for i, l in enumerate(wide) if l.startswith("largest changes"))
    check("--width 0: verdict lines wrap at 120",
          all(len(l) <= 120 or " " not in l.strip() for l in wide[ws:we]), [l for l in wide[ws:we] if len(l) > 120])
    # Nothing lost: the same text at 80 and 120 columns, but for where lines break (a word longer than the
    # line is broken inside it).
    text = lambda ls: "".join("".join(ls).split())
    check("--width 80 and 120: the same text", text(verdict) == text(wide[ws:we]), "")


def test_range():
    r = kcount("diff", "--range", "step", *GEGLU)
    out = r.stdout
    table = [re.split(r"\s{2,}", l)[0] for l in out.splitlines() if re.match(r"(\(overall\)|step)\S*\s", l)]
    check("--range step: exit 0, step's verdict", r.returncode == 0 and "verdict for step" in out, r.stderr)
    check("--range step: the table of step's subtree only",
          table == ["(overall)", "step", "step/gate", "step/up", "step/act", "step/down", "step/mlp"], table)
    bad = kcount("diff", "--range", "nope", *GEGLU)
    check("--range nope: exit 2, said on stderr", bad.returncode == 2 and "no range nope" in bad.stderr, bad.stderr)
    both = kcount("diff", "--range", "step", "--all", *GEGLU)
    check("--range with --all: a usage error", both.returncode != 0, both.returncode)


def main():
    test_sweep_short()
    test_geglu_regrouped()
    test_json_regrouped()
    test_wrap()
    test_range()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
