"""scripts/case_study.py, without a GPU:

1. on a synthetic sweep (synthetic_sweep.py: the sweep's exact ranges, kernel names from simple rules) the
   document states what the rules imply (counts computed here independently) and lists the kernel no
   grammar matches;
2. two runs give byte-identical Markdown and PNGs;
3. on the shipped logs of other programs it runs and reports them as not sweep logs;
4. when examples/logs/sweep-eager.kcount and sweep-compiled.kcount exist, the documented command at the top
   of docs/case-study.md regenerates docs/case-study.md and docs/case-study/*.png byte for byte (skipped,
   and said so, while those logs do not exist).

Usage: test_case_study.py BUILD_DIR KC_MAKE_LOG   (a python3 with matplotlib: Debian's python3-matplotlib)
Prints "PASS name" / "FAIL name: why" per check and "N passed, N failed"; exit 1 on any failure.
"""

import filecmp
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import synthetic_sweep as syn  # noqa: E402
from checks import check, exit_status  # noqa: E402


def generate(kcount, out_dir, logs):
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "case_study.py"), "--kcount", kcount,
           "--out-dir", out_dir] + logs
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stderr


def same_tree(a, b):
    """(equal, why): case-study.md and every case-study/*.png byte-identical, same file names."""
    if not filecmp.cmp(os.path.join(a, "case-study.md"), os.path.join(b, "case-study.md"), shallow=False):
        return False, f"{a}/case-study.md differs from {b}/case-study.md"
    pa = sorted(os.listdir(os.path.join(a, "case-study"))) if os.path.isdir(os.path.join(a, "case-study")) else []
    pb = sorted(os.listdir(os.path.join(b, "case-study"))) if os.path.isdir(os.path.join(b, "case-study")) else []
    if pa != pb:
        return False, f"plots differ: {pa} vs {pb}"
    for name in pa:
        if not filecmp.cmp(os.path.join(a, "case-study", name), os.path.join(b, "case-study", name), shallow=False):
            return False, f"case-study/{name} differs"
    return True, ""


def expected_synthetic():
    """What the document must say about the synthetic logs, computed from the synthetic rules."""
    eager = syn.sweep.configurations("eager", "all")
    pairs = same_tile = 0
    for _, cfg in eager:
        if cfg["model"] in ("linear", "geglu") and cfg["dtype"] == "bf16":
            layers = 1 if cfg["model"] == "linear" else 3
            a, b = syn.nvjet_tile("bf16", cfg["t"]), syn.nvjet_tile("fp16", cfg["t"])
            pairs += layers
            same_tile += layers if (a[0], a[2]) == (b[0], b[2]) else 0
    compiled = syn.sweep.configurations("compiled", "all")
    gemm_same = 0
    for _, cfg in compiled:
        def gemms(c):
            return sorted(k for _, k, _ in syn.step_kernels(cfg, c) if k.startswith(("nvjet", "sm90", "cutlass", "_Z17")))
        gemm_same += gemms(False) == gemms(True)
    rms_calls = 0
    for _, cfg in eager:
        if cfg["model"] == "block" and cfg["norm"] == "rms":
            rms_calls += (2 if cfg["attn"] == "sdpa" else 1) * (2 + syn.STEPS)
    segs = []
    for t in syn.sweep.TOKENS:
        tile, _, cluster, _ = syn.nvjet_tile("fp16", t)
        lab = f"{tile} c{cluster}"
        if segs and segs[-1][0] == lab:
            segs[-1][1].append(t)
        else:
            segs.append((lab, [t]))

    def rng(ts):
        return str(ts[0]) if len(ts) == 1 else f"{ts[0]}–{ts[-1]}"
    fp16_line = (f"- H={', '.join(str(h) for h in syn.sweep.HIDDEN)}: {len(segs)} choices: "
                 + "; ".join(f"`{lab}` for T {rng(ts)}" for lab, ts in segs))
    return {
        "bf16/fp16 pairs": f"Compared over {pairs} GEMMs",
        "bf16/fp16 identical names": f"- identical kernel name: 0 of {pairs};",
        "bf16/fp16 same tile": f"- same tile and cluster: {same_tile} of {pairs};",
        "answers: bf16/fp16": f"- bf16 vs fp16: the same kernel family in {same_tile} of {pairs} GEMMs, the "
                              f"identical kernel name in 0 of {pairs}.",
        "eager/compiled GEMMs": f"were identical in eager and compiled mode in {gemm_same} of {len(compiled)}.",
        "undecoded kernel listed": f"| `{syn.RMS_NORM_UNKNOWN}` | {rms_calls} | `sweep-eager.kcount` |",
        "fp16 tile changes along T": fp16_line,
        "fused activation": "the activation (gelu) runs in `triton_poi_fused_gelu_mul_1`, together with the "
                            "multiply (`mul`)",
        "warm-up excluded (GeGLU 5 -> 4 kernels)": "| `geglu dtype=bf16 t=1 h=4096 i=11008` | 5 → 4 |",
        "no unmatched kernels": "Over all logs: 0 unmatched kernels and 0 dropped records.",
    }


def main():
    build, make_log = sys.argv[1], sys.argv[2]
    kcount = os.path.join(os.path.abspath(build), "bin", "kcount")
    with tempfile.TemporaryDirectory(prefix="kcount-case-study-") as work:
        logs = syn.write_logs(make_log, os.path.join(work, "logs"))
        a, b = os.path.join(work, "a"), os.path.join(work, "b")
        rc, err = generate(kcount, a, logs)
        check("generator on the synthetic sweep", rc == 0, err.strip())
        if rc == 0:
            doc = open(os.path.join(a, "case-study.md"), encoding="utf-8").read()
            for name, text in expected_synthetic().items():
                check(f"synthetic: {name}", text in doc, f"missing: {text!r}")
            pngs = sorted(os.listdir(os.path.join(a, "case-study")))
            check("synthetic: plots written and linked", len(pngs) >= 4 and all(f"case-study/{p}" in doc for p in pngs),
                  f"{pngs}")
            rc2, err2 = generate(kcount, b, logs)
            ok, why = same_tree(a, b) if rc2 == 0 else (False, err2)
            check("two runs are byte-identical (Markdown and PNGs)", ok, why)

        shipped = [os.path.join(ROOT, "examples", "logs", n) for n in
                   ("linear-eager.kcount", "geglu-eager.kcount", "geglu-compiled.kcount")]
        c = os.path.join(work, "shipped")
        rc, err = generate(kcount, c, shipped)
        ok = rc == 0 and "not a sweep log" in open(os.path.join(c, "case-study.md"), encoding="utf-8").read()
        check("generator on the shipped logs of other programs", ok, err.strip())

        sweep_logs = [os.path.join(ROOT, "examples", "logs", f"sweep-{m}.kcount") for m in ("eager", "compiled")]
        if all(os.path.exists(p) for p in sweep_logs):
            doc_path = os.path.join(ROOT, "docs", "case-study.md")
            cmd = None
            if os.path.exists(doc_path):
                for line in open(doc_path, encoding="utf-8"):
                    if line.startswith("/usr/bin/python3 scripts/case_study.py "):
                        cmd = shlex.split(line)
                        break
            if cmd is None:
                check("docs/case-study.md is up to date", False, "no documented command in docs/case-study.md")
            else:
                d = os.path.join(work, "docs")
                rc, err = generate(kcount, d, [os.path.join(ROOT, p) for p in cmd[2:]])
                ok, why = same_tree(d, os.path.join(ROOT, "docs")) if rc == 0 else (False, err)
                check("docs/case-study.md is up to date with examples/logs/sweep-*.kcount "
                      "(regenerate: the command at its top)", ok, why)
        else:
            print("SKIP docs/case-study.md up to date: examples/logs/sweep-eager.kcount and "
                  "sweep-compiled.kcount are not there yet", flush=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
