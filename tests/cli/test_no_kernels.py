#!/usr/bin/env python3
"""`kcount kernels` on a log that lists no kernel says so on stderr, with the reason the log gives, and
keeps the exit status of the log's state (0 for an intact log), as `kcount summary` does for a log without
totals (docs/usage.md, "kcount kernels"):

- an NVTX-only log (ranges, no launch), a log with nothing recorded, one with memcpy calls only;
- launches without any kernel record: their activity records dropped, graph launches of a
  KCOUNT_GPU_TIME=0 log (whose direct launches still name their kernels), none come at all;
- a summary-mode log whose snapshot tallies no launch;
- `--range P` where P ran no kernel but the log has some;
- a log with kernels (KCOUNT_GPU_TIME=0 included) gets no such line; with several logs only the one
  without kernels is named.

Usage: test_no_kernels.py BUILD_DIR [KC_MAKE_LOG]
"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount


def main():
    with tempfile.TemporaryDirectory() as work:
        def make(name, script):
            path = os.path.join(work, name)
            subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
            return path

        cases = [
            ("nvtx-only", make("nvtx.kcount", "push step\npop\npush step\npop\n"),
             "no kernel launch was recorded (the log holds 2 range records)"),
            ("nothing recorded", make("empty.kcount", ""),
             "nothing was recorded (no kernel launch, range or memcpy/memset call)"),
            ("memcpy calls only", make("copies.kcount", "memcpy 100 4096\n"),
             "no kernel launch was recorded (the log holds 1 memcpy/memset call)"),
            ("activity dropped", make("dropped.kcount", "push step\nlaunch\nlaunch\npop\ndropped activity 2\n"),
             "2 launches recorded, but their kernel activity records were lost while recording (2 activity records "
             "dropped)"),
            ("graph launches, KCOUNT_GPU_TIME=0", make("graph-off.kcount", "meta gpu_time off\ngraph\n"),
             "1 launch recorded, none a direct launch: the kernels of graph launches are not known with "
             "KCOUNT_GPU_TIME=0"),
            ("launches without kernel records", make("lost.kcount", "launch\n"),
             "1 launch recorded, but no kernel record came for it"),
            ("summary mode", make("summary.kcount", "snapshot\n"), "no kernel launch was tallied (summary mode"),
        ]
        for what, log, reason in cases:
            for fmt in ("table", "csv", "json"):
                r = kcount("kernels", "--format", fmt, log)
                lines = [l for l in r.stderr.splitlines() if "no kernels" in l]
                check(f"kernels --format {fmt}, {what}: exit 0 and '{reason}' on stderr",
                      r.returncode == 0 and len(lines) == 1 and lines[0].startswith(f"kcount: {log}: warning: no kernels: ")
                      and reason in lines[0],
                      (r.returncode, r.stderr))
            check(f"kernels, {what}: the table's heading on stdout",
                  kcount("kernels", log).stdout.startswith("kernel "))

        with_kernels = make("step.kcount", "push warmup\npop\npush step\nkernel 100 k\npop\n")
        off = make("off.kcount", "meta gpu_time off\npush step\nkernel 0 k\ngraph\npop\n")
        for what, log in (("a log with kernels", with_kernels), ("KCOUNT_GPU_TIME=0, kernels named at launch", off)):
            r = kcount("kernels", log)
            check(f"kernels, {what}: its kernels, no warning",
                  r.returncode == 0 and "no kernels" not in r.stderr and "\nk " in r.stdout, (r.returncode, r.stderr))

        nvtx = cases[0][1]
        r = kcount("kernels", with_kernels, nvtx)
        lines = [l for l in r.stderr.splitlines() if "no kernels" in l]
        check("kernels of two logs: only the log without kernels is named",
              r.returncode == 0 and len(lines) == 1 and lines[0].startswith(f"kcount: {nvtx}: "), r.stderr)

        r = kcount("kernels", "--range", "step", with_kernels, nvtx_other := make("other.kcount", "push other\npop\n"))
        check("kernels --range of a log without the range: named once, as without the range",
              r.returncode == 0 and "no kernels" not in r.stderr and f"kcount: {nvtx_other}: no range step" in r.stderr, r.stderr)
        # Left out: a log without the range adds no whole-run rows among the range's (one row, the range's k).
        elsewhere = make("elsewhere.kcount", "push other\nkernel 100 k2\npop\n")
        r = kcount("kernels", "--range", "step", "--format", "json", with_kernels, elsewhere)
        names = [k["name"] for k in json.loads(r.stdout)["kernels"]] if r.returncode == 0 else None
        check("kernels --range: a log without the range is left out, not listed with its whole run",
              f"kcount: {elsewhere}: no range step" in r.stderr and "left out" in r.stderr and names == ["k"],
              (r.returncode, r.stderr, names))
        r = kcount("kernels", "--range", "warmup", with_kernels)
        check("kernels --range of a range without kernels",
              r.returncode == 0 and f"kcount: {with_kernels}: warning: no kernels: none ran in range warmup or the "
              "ranges nested in it (1 kernel in the whole log)" in r.stderr,
              (r.returncode, r.stderr))

    return exit_status()


if __name__ == "__main__":
    build = os.path.abspath(sys.argv[1])
    KCOUNT = os.path.join(build, "bin", "kcount")
    MAKE_LOG = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(build, "bin", "kc_make_log")
    sys.exit(main())
