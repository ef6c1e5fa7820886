"""examples/sweep.py without a GPU: the configuration list and its range names (the grammar that
scripts/case_study.py parses), --dry-run without torch, and, where torch is installed, the eager sweep on the
CPU with tiny shapes (skipped with a message otherwise; compiled mode needs a GPU build of torch).
Prints "PASS name" / "FAIL name: why" per check and "N passed, N failed"; exit 1 on any failure.
"""

import importlib.util
import os
import subprocess
import sys

from checks import check, exit_status

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWEEP = os.path.join(ROOT, "examples", "sweep.py")


def main():
    spec = importlib.util.spec_from_file_location("sweep", SWEEP)
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    for mode in ("eager", "compiled"):
        cfgs = sweep.configurations(mode, "all")
        names = [n for n, _ in cfgs]
        check(f"{mode}: names unique", len(set(names)) == len(names))
        check(f"{mode}: no '/' in a range name", not any("/" in n for n in names))
        bad = [n for n, c in cfgs if sweep.parse_config_name(n) != c or sweep.config_name(c["model"], **{
            k: v for k, v in c.items() if k != "model"}) != n]
        check(f"{mode}: every name parses back to its configuration", not bad, f"{bad[:3]}")
        p = subprocess.run([sys.executable, SWEEP, "--mode", mode, "--dry-run"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        check(f"{mode}: --dry-run lists the configurations", p.returncode == 0 and p.stdout.split("\n")[:-1] == names,
              p.stderr.strip())
    eager = {n for n, _ in sweep.configurations("eager", "all")}
    compiled = [n for n, _ in sweep.configurations("compiled", "all")]
    check("every compiled configuration is also in the eager sweep (kcount diff matches them by path)",
          all(n in eager for n in compiled), f"{[n for n in compiled if n not in eager][:3]}")
    n_eager = len(sweep.TOKENS) * len(sweep.HIDDEN) * len(sweep.DTYPES) * 2 + len(sweep.BLOCK_VARIANTS)
    check("eager sweep: full grid (tokens x hidden x dtypes x 2 models) plus the blocks", len(eager) == n_eager,
          f"{len(eager)} != {n_eager}")
    check("parse_config_name rejects other ranges", sweep.parse_config_name("step") is None
          and sweep.parse_config_name("setup model=linear dtype=bf16 h=1024") is None
          and sweep.parse_config_name("linear dtype=bf16 oops") is None)
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    if have_torch:
        p = subprocess.run([sys.executable, SWEEP, "--mode", "eager", "--device", "cpu", "--tiny"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check("eager sweep on the CPU with tiny shapes", p.returncode == 0 and "0 failed" in p.stdout,
              p.stdout[-2000:])
    else:
        print("SKIP eager sweep on the CPU (--device cpu --tiny): torch is not installed for "
              f"{sys.executable}", flush=True)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
