#!/usr/bin/env python3
"""bench/ab_same_process.py and bench/python_workloads.py's A/B switches without a GPU: the paired
summary (ratios, differences, per-process medians), the torch.profiler budget lines, the recorded H200
run reproduced from its own per-round values, and the argument checks.

    test_ab_same_process.py
"""
import contextlib
import io
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import ab_same_process  # noqa: E402
import python_workloads  # noqa: E402

failures = 0


def check(ok, what, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + what + ("" if ok else f"  {detail}"))
    failures += 0 if ok else 1


def run(config, index, off, on, workload="add_loop", unit="us/iter"):
    return {"config": config, "index": index, "rc": 0, "results": [
        {"workload": workload, "unit": unit, "values_off": off, "values_on": on,
         "value_off": sorted(off)[len(off) // 2], "value_on": sorted(on)[len(on) // 2]}]}


def main():
    # Two processes of kcount summary: pairs (10, 11), (10, 12), (20, 22), differences 1, 2, 2, ratios
    # 10 %, 20 %, 10 %; an off value of 0 makes no pair.
    runs = [run("summary", 0, [10, 10, 0], [11, 12, 5]), run("summary", 1, [20], [22]),
            run("torch-profiler", 0, [10, 10], [14, 14]), run("null", 0, [10], [30]),
            run("summary-nogpu", 0, [10], [13])]
    rows = ab_same_process.summarize(runs, ["add_loop", "transformer_eager"],
                                     ["null", "summary", "summary-nogpu", "torch-profiler"])
    by = {r["config"]: r for r in rows}
    s = by.get("summary", {})
    check(len(rows) == 4 and all(r["workload"] == "add_loop" for r in rows),
          "one row per configuration with results; none for a workload without any", rows)
    check(s.get("pairs") == 3 and abs(s.get("added_median", 0) - 2.0) < 1e-9
          and abs(s.get("added_pct_median", 0) - 10.0) < 1e-9 and abs(s.get("added_pct_max", 0) - 20.0) < 1e-9,
          "summary: 3 pairs (the zero off value left out), median difference +2.0, ratios 10 % .. 20 %", s)
    check(s.get("off_medians") == [10, 20] and s.get("on_medians") == [11, 22], "per-process medians kept", s)
    lines = ab_same_process.budget_lines(rows)
    want = ["BUDGET PASS add_loop: kcount summary added <= 1/2 of torch.profiler's (same process, paired): "
            "+2.000 vs +4.000 us/iter",
            "BUDGET FAIL add_loop: kcount summary-nogpu added <= 1/2 of torch.profiler's (same process, paired): "
            "+3.000 vs +4.000 us/iter"]
    check(lines == want, "budget lines: kcount's added time against half of torch.profiler's; null left out", lines)
    check(ab_same_process.budget_lines([r for r in rows if r["config"] != "torch-profiler"]) == [],
          "no budget line without a torch-profiler row")

    # A realistic step: the 1 % line for the summary configurations, with the null's median beside it; no
    # half-of-torch.profiler line (GPU-bound steps put both inside the noise).
    step = [run("summary", 0, [100, 100], [100.5, 100.9], "geglu_eager", "ms/step"),
            run("summary-nogpu", 0, [100], [103], "geglu_eager", "ms/step"),
            run("torch-profiler", 0, [100], [100.1], "geglu_eager", "ms/step"),
            run("null", 0, [100], [99.8], "geglu_eager", "ms/step")]
    step_rows = ab_same_process.summarize(step, ["geglu_eager"], ["null", "summary", "summary-nogpu", "torch-profiler"])
    lines = ab_same_process.budget_lines(step_rows)
    want = ["BUDGET PASS geglu_eager: kcount summary adds <= 1 % per step (same process, paired): +0.70 % (null -0.20 %)",
            "BUDGET FAIL geglu_eager: kcount summary-nogpu adds <= 1 % per step (same process, paired): +3.00 % (null -0.20 %)"]
    check(lines == want, "realistic steps: the 1 % line per summary configuration, null beside it", lines)

    # The H200 runs recorded in docs/performance.md (Runs 13, 19 and 20): their rows follow from their own
    # per-round values.
    for name, n in (("run13", 8), ("run19", 12), ("run20a", 8), ("run20b", 8)):
        with open(os.path.join(ROOT, "docs", "data", f"ab-same-process-{name}.json")) as f:
            doc = json.load(f)
        again = ab_same_process.summarize(doc["runs"], doc["args"]["workloads"].split(","), doc["args"]["configs"])
        check(len(again) == len(doc["rows"]) == n and all(
            a["pairs"] == b["pairs"] and abs(a["added_median"] - b["added_median"]) < 1e-9
            and abs(a["added_pct_median"] - b["added_pct_median"]) < 1e-9 for a, b in zip(again, doc["rows"])),
            f"{name}'s {n} rows recomputed from its rounds", [(r["config"], r["added_median"]) for r in again])

    # Argument checks (no GPU or torch needed to parse).
    def refused(argv, env=None):
        old = dict(os.environ)
        os.environ.update(env or {})
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                python_workloads.parse_args(argv)
            return False
        except SystemExit as e:
            return e.code == 2
        finally:
            os.environ.clear()
            os.environ.update(old)

    check(refused(["--ab-torch-profiler", "--ab-control"], {"KCOUNT_CONTROL_DIR": "/tmp"}),
          "python_workloads: --ab-torch-profiler with --ab-control refused")
    check(refused(["--ab-torch-profiler", "--torch-profiler"]), "python_workloads: --ab-torch-profiler with --torch-profiler refused")
    os.environ.pop("KCOUNT_CONTROL_DIR", None)
    check(not refused(["--ab-torch-profiler"]), "python_workloads: --ab-torch-profiler needs no kcount control folder")
    a = ab_same_process.parse_args(["--configs", "summary,torch-profiler"])
    check(a.configs == ["summary", "torch-profiler"], "ab_same_process: torch-profiler is a configuration")
    print(f"{failures} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
