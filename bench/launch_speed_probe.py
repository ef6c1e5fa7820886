#!/usr/bin/env python3
"""Do processes of one launch-bound program run at the same speed? With and without a pinned CPU.

    python3 bench/launch_speed_probe.py [--processes 4] [--rounds 6] [--iters 20000] [--pin-cpu 2] [--out F.json]
                                        [--build-dir BUILD]

Runs tests/gpu/control/launch_loop.py (microseconds per `a.add_(1)` on a 16-element tensor, one kernel
launch per iteration; no profiler) in --processes fresh processes left to the scheduler and as many with
the whole process on CPU --pin-cpu (sched_setaffinity before exec), alternating, and prints each
process's rounds, its median and, last, the spread of the per-process medians for both ways. Why: on the
H200 VM, processes of one program ran at two speeds (7.1-7.3 vs 10.3-11.4 µs per add_,
docs/performance.md Run 10), more than any cost a same-process or cross-process comparison tries to
resolve; if pinning removes it, comparisons pin. With --build-dir (lib/libkcount.so, bin/kcount), two more
ways, unpinned and pinned: kcount loaded paused, then `kcount ctl start`, one round, `stop`, and
--rounds rounds after the stop (launch_loop.py --ctl): each such process also prints the median after
the stop over the median before (the GPU check control row c judges that ratio). Needs a CUDA device and
PyTorch. Exit status 0 when every process ran, 1 otherwise.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(os.path.dirname(HERE), "tests", "gpu", "control", "launch_loop.py")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--processes", type=int, default=4, help="processes each way (unpinned, pinned)")
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--iters", type=int, default=20000)
    p.add_argument("--pin-cpu", type=int, default=2)
    p.add_argument("--out", default=None, help="write every process's rounds here (JSON)")
    p.add_argument("--build-dir", default=None, help="also run with kcount paused, started and stopped")
    args = p.parse_args()
    if args.pin_cpu not in os.sched_getaffinity(0):
        p.error(f"--pin-cpu {args.pin_cpu}: not among this process's CPUs")
    ways = [("free", False, False), ("pinned", True, False)]
    if args.build_dir:
        ways += [("kcount", False, True), ("kcount-pinned", True, True)]
        build = os.path.abspath(args.build_dir)
    runs = []
    ok = True
    for i in range(args.processes):
        for way, pinned, kcount in ways:
            setup = (lambda: os.sched_setaffinity(0, {args.pin_cpu})) if pinned else None
            cmd = [sys.executable, LOOP, "--iters", str(args.iters), "--rounds", str(args.rounds)]
            env = dict(os.environ)
            if kcount:
                cmd += ["--ctl", os.path.join(build, "bin", "kcount")]
                env.update(LD_PRELOAD=os.path.join(build, "lib", "libkcount.so"), KCOUNT_START="paused",
                           KCOUNT_OUTPUT=os.path.join("/tmp", "launch-speed-probe-%p.kcount"))
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, preexec_fn=setup, env=env)
            try:
                res = json.loads(r.stdout.strip().splitlines()[-1])
                rounds = res["before"]
                med = statistics.median(rounds)
            except (ValueError, IndexError, KeyError, statistics.StatisticsError):
                print(f"process {i} {way}: exit {r.returncode}: {r.stderr[-300:]}", file=sys.stderr)
                ok = False
                continue
            run = {"way": way, "index": i, "rounds": rounds, "median": med}
            text = f"{way:<13} #{i}: median {med:6.2f} µs/add_  rounds " + " ".join(f"{x:.2f}" for x in rounds)
            if kcount and res.get("after"):
                run.update(after=res["after"], recording=res.get("recording"), cupti_after=res.get("cupti_after"),
                           after_over_before=statistics.median(res["after"]) / med)
                text += (f"  after stop " + " ".join(f"{x:.2f}" for x in res["after"])
                         + f" (x{run['after_over_before']:.3f}; CUPTI {res.get('cupti_after')})")
            runs.append(run)
            print(text, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "runs": runs}, f, indent=1)
    print(f"{'way':<13} {'processes':>9}  per-process medians, µs per add_: min..max (max/min); after/before")
    for way, _, _ in ways:
        mine = [r for r in runs if r["way"] == way]
        if mine:
            meds = [r["median"] for r in mine]
            ab = [round(r["after_over_before"], 3) for r in mine if "after_over_before" in r]
            print(f"{way:<13} {len(meds):>9}  {min(meds):.2f}..{max(meds):.2f} (x{max(meds) / min(meds):.2f})"
                  + (f"; {ab}" if ab else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
