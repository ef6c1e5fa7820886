#!/usr/bin/env python3
"""bench/ab_floor.py without a GPU: its plumbing, pairing, budget verdicts (from a bootstrap interval), JSON and table on the dry-run
stand-in (made-up numbers: trace 0.15 us above the floor, summary 0.25, summary-nogpu against a floor
without activity), a launch_loop that fails, and libcupti_floor.so's switch refusing bad settings.

    test_ab_floor.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "ab_floor.py")
failures = 0


def check(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what)
    failures += 0 if ok else 1


def main():
    build = os.path.abspath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="ab-floor-test-")
    out = os.path.join(work, "dry")
    p = subprocess.run([sys.executable, SCRIPT, "--dry-run", "--out", out, "--processes", "2", "--rounds", "5",
                        "--build-dir", build], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"dry run exits 0 (rc {p.returncode})" + ("" if p.returncode == 0 else ": " + p.stderr[-300:]))
    lines = p.stdout.splitlines()
    check(lines and lines[0].startswith("DRY RUN"), "dry run says its numbers are made up")
    rows = {tuple(ln.split()[:2]): ln for ln in lines if ln.split()[:1] and ln.split()[0] in ("trace", "summary", "summary-nogpu")}
    check(len(rows) == 6, f"one table row per configuration and API: {sorted(rows)}")
    check(all(rows.get((c, a), "").rstrip().endswith("<= 0.2 PASS") for c, a in [("trace", "runtime"), ("trace", "driver")]),
          "trace 0.15 us above the floor: within 0.2 (PASS)")
    check(all(rows.get(("summary", a), "").rstrip().endswith("<= 0.1 FAIL") for a in ("runtime", "driver")),
          "summary 0.25 us above the floor: over 0.1 (FAIL)")
    nogpu = rows.get(("summary-nogpu", "runtime"), "")
    check("+0.150 (" in nogpu and "+0.950" in nogpu and nogpu.rstrip().endswith("-"),
          f"summary-nogpu paired with a floor without activity (+0.150 above it, floor +0.950 above none), no budget: {nogpu!r}")
    doc = json.load(open(os.path.join(out, "ab_floor.json")))
    r0 = next(r for r in doc["rows"] if r["config"] == "trace" and r["api"] == "runtime")
    check(r0["pairs"] == 10 and r0["processes"] == 2, f"pairs = processes x rounds (10): {r0['pairs']}")
    check(abs(r0["kcount_minus_floor_us"]["median"] - 0.15) < 1e-9 and r0["verdict"] == "PASS",
          "JSON row: median difference and verdict")
    est = r0.get("by_estimator", {})
    check(abs(est.get("block median", {}).get("median", 0) - 0.15) < 1e-9
          and abs(est.get("thread CPU", {}).get("median", 0) - 0.05) < 1e-9,
          f"JSON row: block-median and thread-CPU differences from their own round fields (0.15, 0.05): {est}")
    check(any(ln.startswith("kcount - floor, us/launch, median (95% CI), by estimator") for ln in lines)
          and lines[-1].split()[:2] == ["summary-nogpu", "driver"],
          "the estimator table comes before the budget table, which is printed last")
    check(all(abs(x - 0.15) < 1e-9 for x in r0["kcount_minus_floor_us"]["ci95"]),
          f"constant pairs: the 95% interval is the point: {r0['kcount_minus_floor_us']['ci95']}")

    # --pool: the runs of saved JSON files together, nothing run: the same file twice doubles the pairs.
    dry_json = os.path.join(out, "ab_floor.json")
    p = subprocess.run([sys.executable, SCRIPT, "--pool", dry_json, dry_json, "--configs", "trace"],
                       capture_output=True, text=True, timeout=60)
    pooled = [ln for ln in p.stdout.splitlines() if ln.split()[:2] == ["trace", "runtime"]]
    check(p.returncode == 0 and pooled and pooled[-1].split()[2] == "20" and pooled[-1].rstrip().endswith("PASS"),
          f"--pool of the dry run's JSON twice: 20 pairs, the same verdict: {pooled[-1:] or p.stderr}")
    p = subprocess.run([sys.executable, SCRIPT, "--pool", os.path.join(work, "missing.json")],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "missing.json" in p.stderr, f"--pool of a missing file: exit 1, named: {p.stderr.strip()}")

    # Verdicts from the interval, not the median alone (pairs as spread as on the H200).
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import ab_floor
    spread = [0.08 + 0.6 * ((i * 37) % 21 - 10) / 10 for i in range(30)]  # median 0.08, -0.52..+0.68
    low, high = ab_floor.median_ci(spread)
    check(low < 0.08 < high and ab_floor.median_ci(spread) == (low, high),
          f"bootstrap interval around the median, the same on every call: ({low:.3f}, {high:.3f})")
    check(high > 0.2 and ab_floor.budget_verdict((low, high), 0.2) == "UNRESOLVED",
          "median 0.08 within 0.2 but the interval reaches past it: UNRESOLVED, not PASS")
    # Rounds of one process share its offset: three processes at -0.1, +0.1 and +0.3 with tight rounds give
    # a wide interval (the processes disagree), the same rounds as one process a narrow one.
    procs = [[o + 0.001 * i for i in range(10)] for o in (-0.1, 0.1, 0.3)]
    wide = ab_floor.median_ci(procs)
    narrow = ab_floor.median_ci([x for g in procs for x in g])
    check(wide[1] - wide[0] > 1.5 * (narrow[1] - narrow[0]) and wide[1] >= 0.25 > narrow[1],
          f"processes, not rounds, set the interval when they disagree: {wide} vs pooled {narrow}")
    check(ab_floor.budget_verdict((0.0, 0.0), 0.2, pairs=1) == "UNRESOLVED", "one pair: no verdict (UNRESOLVED)")
    check(ab_floor.budget_verdict((6.9 - 6.7, 6.9 - 6.7), 0.2) == "PASS", "a difference of 0.2 (in floating point) is within 0.2")
    check(ab_floor.budget_verdict((0.21, 0.3), 0.2) == "FAIL" and ab_floor.budget_verdict((0.05, 0.25), 0.2) == "UNRESOLVED"
          and ab_floor.budget_verdict((0.05, 0.2), 0.2) == "PASS" and ab_floor.budget_verdict((0.0, 1.0), None) == "-",
          "verdicts: over = FAIL, straddling = UNRESOLVED, within = PASS, no budget = -")
    orders = [tuple(rd["order"]) for run in doc["runs"] if run["config"] == "trace" for rd in run["rounds"]]
    check(len(set(orders)) == 3, f"side order rotated by round ({len(set(orders))} orders)")

    # --pin-cpu and --no-none: the child runs off the pinned CPU (its other threads), is told which CPU to
    # pin its launching thread to, keeps only rounds that say they were pinned, and has no `none` side.
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        pin = cpus[-1]
        out2 = os.path.join(work, "pinned")
        p = subprocess.run([sys.executable, SCRIPT, "--dry-run", "--out", out2, "--processes", "1", "--rounds", "4",
                            "--configs", "summary", "--apis", "runtime", "--pin-cpu", str(pin), "--no-none",
                            "--build-dir", build], capture_output=True, text=True, timeout=120)
        info = next((json.loads(ln) for ln in open(os.path.join(out2, "summary-runtime-0.out"))
                     if '"info"' in ln), {})
        doc2 = json.load(open(os.path.join(out2, "ab_floor.json")))
        rounds = doc2["runs"][0]["rounds"] if doc2["runs"] else []
        row = doc2["rows"][0] if doc2["rows"] else {}
        check(p.returncode == 0 and info.get("cpus") == [c for c in cpus if c != pin],
              f"--pin-cpu {pin}: the child's affinity is every other CPU: {info.get('cpus')} (rc {p.returncode})")
        check(len(rounds) == 4 and all(r0.get("pinned_cpu") == pin and set(r0["order"]) == {"floor", "kcount"}
                                       for r0 in rounds),
              f"--pin-cpu --no-none: 4 pinned rounds of floor and kcount: {[r0.get('order') for r0 in rounds]}")
        check(row.get("pairs") == 4 and row.get("floor_minus_none_us") is None,
              f"--no-none: 4 pairs, no floor - none figure: {row.get('pairs')}, {row.get('floor_minus_none_us')}")
        p = subprocess.run([sys.executable, SCRIPT, "--dry-run", "--out", out2, "--pin-cpu", "100000",
                            "--build-dir", build], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and "--pin-cpu 100000" in p.stderr, f"--pin-cpu of a CPU not allowed: usage error: {p.stderr.strip()[-120:]}")

    # A launch_loop that fails: exit 1, the run named without result.
    bad = os.path.join(work, "bad_loop.sh")
    with open(bad, "w") as f:
        f.write("#!/bin/sh\necho 'launch_loop: cudaFree(nullptr) failed with 100' >&2\nexit 1\n")
    os.chmod(bad, 0o755)
    fake_build = os.path.join(work, "build")
    os.makedirs(os.path.join(fake_build, "lib"))
    for name in ("libkcount.so", "libcupti_floor.so"):
        open(os.path.join(fake_build, "lib", name), "w").close()
    p = subprocess.run([sys.executable, SCRIPT, "--launch-loop", bad, "--build-dir", fake_build, "--out",
                        os.path.join(work, "bad"), "--processes", "1", "--configs", "trace", "--apis", "runtime"],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, LD_PRELOAD=""))
    check(p.returncode == 1 and "(no result)" in p.stderr, f"a failing launch_loop: exit 1, named: {p.stderr.strip()[-200:]}")

    # The floor's switch: settings are checked before CUPTI is touched, so this holds with or without a GPU.
    floor = os.path.join(build, "lib", "libcupti_floor.so")
    code = ("import ctypes; f = ctypes.CDLL(%r); f.cuptiFloorDetach(); print(f.cuptiFloorAttach())" % floor)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, CUPTI_FLOOR_CALLBACKS="bogus"))
    check(p.stdout.strip() == "0" and "cupti_floor: inactive: CUPTI_FLOOR_CALLBACKS=bogus" in p.stderr,
          f"cuptiFloorAttach with a bad setting: 0 and one 'inactive' line: {p.stdout.strip()!r} {p.stderr.strip()!r}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
