#!/usr/bin/env python3
"""Same-process comparison of kcount with the bare CUPTI floor, per launch (issue budget lines).

    python3 bench/ab_floor.py --build-dir build --out /tmp/kcount-ab-floor [--processes 3] [--rounds 10]

Why: the budget lines (kcount trace at most 0.2 us per launch above the floor, summary at most 0.1) are
smaller than the spread between fresh processes (0.1-0.4 us per launch on the H200, docs/performance.md
Run 7). Here each process runs `launch_loop ab API N R` (bench/launch_loop.cu) with libkcount.so preloaded
(KCOUNT_START=paused, KCOUNT_CONTROL=on) and libcupti_floor.so loaded by the program: in every round the
program switches on, in rotated order, nothing, the floor (cuptiFloorAttach) and kcount (a `start` to its
control socket), times N empty-kernel launches with each, and switches it off again. The paired
differences kcount - floor of each round are the figure; their median over all rounds of all processes,
with a 95% interval (bootstrap over processes, then rounds), is checked against the budget. The table's
budget column says "<= BUDGET VERDICT": PASS when the interval lies within the budget, FAIL when it lies
over it, UNRESOLVED when it straddles it or fewer than 10 pairs were measured (run more processes or
rounds). Configurations (each in --processes fresh processes, interleaved):
  trace          KCOUNT_MODE=trace                     budget: kcount - floor <= 0.2 us/launch
  summary        KCOUNT_MODE=summary                   budget: kcount - floor <= 0.1 us/launch
  summary-nogpu  KCOUNT_MODE=summary KCOUNT_GPU_TIME=0, floor with CUPTI_FLOOR_ACTIVITY=0 (no budget line)
  summary-sampled  KCOUNT_MODE=summary KCOUNT_LAUNCH_TIMING=16 (one launch call in 16 timed)
                                                       budget: kcount - floor <= 0.1 us/launch
  summary-cb-empty, summary-cb-state, summary-cb-norecord
                 summary mode with a variant of the library (build it: ninja kcount_bench_cb0 kcount_bench_cb1
                 kcount_bench_cb2) whose launch callbacks return at once / keep the open-launch bookkeeping
                 only / do everything but write the record: where the distance to the floor goes (no budget;
                 their logs hold no launches, or only those the variant records)
  summary-wide   summary mode, the whole launch path, each launch written in the 64-byte form other events
                 take instead of one 32-byte slot (ninja kcount_bench_cb4): what the compact record saves
  summary-ntstore  summary mode, the whole launch path, the slot written with non-temporal stores and an
                 sfence before it is published (ninja kcount_bench_cb5): whether the record's first store to
                 a line the writer thread read last is what costs
Besides the mean over a side's launches (with the closing synchronize: the figure the verdicts use), each
round reports the median of the side's 1,000-launch blocks (the cost of a launch when the host does not
stall) and the launching thread's CPU time; a table before the budget table gives kcount - floor for all
three, which tells a per-launch cost (in every block) from stalls (in the mean only).
The floor enables what this libkcount.so enables (run_bench.floor_match). launch_loop.cu is compiled with
nvcc as run_bench.py does. Writes ab_floor.json, kcount's logs (OUT/logs/CONFIG-API-INDEX.kcount: each
holds exactly R x (10,000 + N) launches, the ones made while kcount was on) and prints the table last. Exit status: 0 when every
process worked (budget failures are reported in the table, not in the exit status), 1 otherwise.
--dry-run replaces launch_loop with a stand-in that prints made-up numbers in the same format (CI checks
this script's plumbing and table with it; its numbers mean nothing).
"""
import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ab_common  # noqa: E402
import run_bench  # noqa: E402  (find_nvcc, compile_launch_loop, floor_match)

CONFIGS = {
    "trace": ({"KCOUNT_MODE": "trace"}, {}, 0.2),
    "summary": ({"KCOUNT_MODE": "summary"}, {}, 0.1),
    "summary-nogpu": ({"KCOUNT_MODE": "summary", "KCOUNT_GPU_TIME": "0"}, {"CUPTI_FLOOR_ACTIVITY": "0"}, None),
    "summary-sampled": ({"KCOUNT_MODE": "summary", "KCOUNT_LAUNCH_TIMING": "16"}, {}, 0.1),
    # Variants of the library that leave out parts of the launch callbacks (bench/CMakeLists.txt), to tell
    # where the distance to the floor goes: no budget line; the 4th field is the library's file in lib/.
    "summary-cb-empty": ({"KCOUNT_MODE": "summary"}, {}, None, "libkcount_bench_cb0.so"),
    "summary-cb-state": ({"KCOUNT_MODE": "summary"}, {}, None, "libkcount_bench_cb1.so"),
    "summary-cb-norecord": ({"KCOUNT_MODE": "summary"}, {}, None, "libkcount_bench_cb2.so"),
    "summary-wide": ({"KCOUNT_MODE": "summary"}, {}, None, "libkcount_bench_cb4.so"),
    "summary-ntstore": ({"KCOUNT_MODE": "summary"}, {}, None, "libkcount_bench_cb5.so"),
}


def config_library(build, config):
    """The libkcount.so (or benchmark variant of it) a configuration preloads."""
    spec = CONFIGS[config]
    return os.path.join(build, "lib", spec[3] if len(spec) > 3 else "libkcount.so")
APIS = ("runtime", "driver")

# --dry-run: us per launch of each side, per configuration (made up; only the plumbing is tested).
FAKE_US = {"none": 4.50, "floor": 6.70, "floor-noactivity": 5.45, "trace": 6.85, "summary": 6.95,
           "summary-nogpu": 5.60, "summary-sampled": 6.78, "summary-cb-empty": 6.72, "summary-cb-state": 6.75,
           "summary-cb-norecord": 6.80, "summary-wide": 6.80, "summary-ntstore": 6.80}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"),
                   help="folder with lib/libkcount.so and lib/libcupti_floor.so (default: build)")
    p.add_argument("--out", default="/tmp/kcount-ab-floor", help="results folder (ab_floor.json, each process's output)")
    p.add_argument("--configs", default="trace,summary,summary-nogpu",
                   help="comma-separated configurations (trace, summary, summary-nogpu; see above)")
    p.add_argument("--apis", default="runtime,driver",
                   help="comma-separated launch APIs: runtime (<<<>>>), driver (cuLaunchKernel)")
    p.add_argument("--processes", type=int, default=3, help="fresh processes per configuration and API")
    p.add_argument("--rounds", type=int, default=10, help="rounds per process (each side once per round)")
    p.add_argument("--launches", type=int, default=200_000, help="timed launches per side per round")
    p.add_argument("--timeout-s", type=float, default=300, help="per process")
    p.add_argument("--pin-cpu", type=int, default=None, metavar="C",
                   help="run each side's timed launches on CPU C alone and keep every other thread of the "
                        "process off C (LAUNCH_LOOP_PIN_CPU; the process's affinity is its allowed CPUs but C)")
    p.add_argument("--no-none", action="store_true",
                   help="no `none` side (rounds of floor and kcount only, alternating; LAUNCH_LOOP_AB_NONE=0): "
                        "more pairs in the same time, no floor - none column")
    p.add_argument("--nvcc", default=None)
    p.add_argument("--arch", default="sm_90")
    p.add_argument("--launch-loop", default=None, help="a compiled launch_loop (default: compile bench/launch_loop.cu)")
    p.add_argument("--dry-run", action="store_true", help="a stand-in for launch_loop (no GPU; numbers made up)")
    p.add_argument("--pool", nargs="+", metavar="JSON",
                   help="run nothing: the tables of the runs in these ab_floor.json files together (their "
                        "processes pooled; --configs and --apis select rows)")
    p.add_argument("--fake-child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.fake_child is not None:
        return args
    args.configs = [c for c in args.configs.split(",") if c]
    args.apis = [a for a in args.apis.split(",") if a]
    bad = [c for c in args.configs if c not in CONFIGS] + [a for a in args.apis if a not in APIS]
    if bad or not args.configs or not args.apis:
        p.error(f"unknown configurations or APIs {bad}; choose from {', '.join(CONFIGS)} and {', '.join(APIS)}")
    if args.processes < 1 or args.rounds < 1 or args.launches < 1:
        p.error("--processes, --rounds and --launches must be at least 1")
    if args.pin_cpu is not None and args.pin_cpu not in os.sched_getaffinity(0):
        p.error(f"--pin-cpu {args.pin_cpu}: not among this process's CPUs {sorted(os.sched_getaffinity(0))}")
    if args.pin_cpu is not None and len(os.sched_getaffinity(0)) < 2:
        p.error("--pin-cpu needs at least two CPUs (one for the launching thread, the rest for the others)")
    return args


def fake_child(argv):
    """Prints what `launch_loop ab API N R` prints, with made-up numbers (see FAKE_US)."""
    api, n, rounds = argv[1], int(argv[2]), int(argv[3])
    config = os.environ["KCOUNT_AB_FAKE_CONFIG"]
    sides = ["none", "floor", "kcount"] if os.environ.get("LAUNCH_LOOP_AB_NONE") != "0" else ["floor", "kcount"]
    pinned = os.environ.get("LAUNCH_LOOP_PIN_CPU")
    print("cupti_floor: active: dry run", file=sys.stderr)
    print(json.dumps({"workload": "info", "device": "fake device (dry run)", "driver_version": 0, "runtime_version": 0,
                      "cpus": sorted(os.sched_getaffinity(0))}))
    paired = {"kcount-floor": [], "floor-none": [], "kcount-none": []}
    per = {s: [] for s in sides}
    for r in range(rounds):
        wobble = 0.01 * ((r * 7) % 5 - 2)
        floor = FAKE_US["floor-noactivity" if os.environ.get("CUPTI_FLOOR_ACTIVITY") == "0" else "floor"]
        us = {"none": FAKE_US["none"] + wobble, "floor": floor + wobble, "kcount": FAKE_US[config] + wobble}
        us = {k: v for k, v in us.items() if k in sides}
        order = sides[r % len(sides):] + sides[:r % len(sides)]
        block = {k: v - 0.5 for k, v in us.items()}  # blocks without the closing synchronize: lower
        cpu = {k: v - 0.1 * (k == "kcount") for k, v in us.items()}  # made up: kcount 0.1 us less on the CPU
        line = {"workload": f"ab-{api}", "round": r, "order": order, "us_per_launch": us,
                "block_us_per_launch": block, "cpu_us_per_launch": cpu}
        if pinned is not None:
            line["pinned_cpu"] = int(pinned)
        print(json.dumps(line))
        for s in sides:
            per[s].append(us[s])
        for name in paired:
            a, b = name.split("-")
            if a in us and b in us:
                paired[name].append(us[a] - us[b])
    print(json.dumps({"workload": f"ab-{api}", "n": n, "rounds": rounds,
                      "median_us_per_launch": {s: statistics.median(v) for s, v in per.items()},
                      "paired_us_per_launch": {k: {"median": statistics.median(v), "min": min(v), "max": max(v)}
                                               for k, v in paired.items() if v}}))
    return 0


def run_process(args, binary, config, api, index, kcount_lib, floor_lib, match, work):
    kcount_env, floor_env = CONFIGS[config][:2]
    env = dict(os.environ)
    env.update({"LD_PRELOAD": kcount_lib, "KCOUNT_START": "paused", "KCOUNT_CONTROL": "on",
                "KCOUNT_CONTROL_DIR": ab_common.control_dir(work),
                "KCOUNT_OUTPUT": os.path.join(args.out, "logs", f"{config}-{api}-{index}.kcount"),
                "CUPTI_FLOOR_LIB": floor_lib})
    env.update(kcount_env)
    env.update(match)
    env.update(floor_env)
    cpus = None
    if args.pin_cpu is not None:
        env["LAUNCH_LOOP_PIN_CPU"] = str(args.pin_cpu)
        cpus = sorted(os.sched_getaffinity(0) - {args.pin_cpu})
    if args.no_none:
        env["LAUNCH_LOOP_AB_NONE"] = "0"
    argv = binary + ["ab", api, str(args.launches), str(args.rounds)]
    if args.dry_run:
        env["KCOUNT_AB_FAKE_CONFIG"] = config
        env.pop("LD_PRELOAD")
    out_path = os.path.join(args.out, f"{config}-{api}-{index}.out")
    err_path = os.path.join(args.out, f"{config}-{api}-{index}.err")
    t0 = time.time()
    rc = ab_common.run_child(argv, env, out_path, err_path, args.timeout_s, cpus=cpus)
    lines = ab_common.json_lines(out_path)
    rounds = [obj for obj in lines if "round" in obj]
    if args.pin_cpu is not None:  # a round whose timing could not be pinned is not a pinned pair
        rounds = [r0 for r0 in rounds if r0.get("pinned_cpu") == args.pin_cpu]
    summary = next((obj for obj in lines if "paired_us_per_launch" in obj), None)
    with open(err_path) as f:
        floor_line = next((ln.strip() for ln in f if ln.startswith("cupti_floor:")), None)
    ok = rc == 0 and summary is not None and bool(rounds) and all({"floor", "kcount"} <= set(r["us_per_launch"]) for r in rounds)
    return {"config": config, "api": api, "index": index, "rc": rc, "ok": ok, "wall_s": time.time() - t0,
            "rounds": rounds, "summary": summary, "floor": floor_line}


MIN_PAIRS = 10  # fewer paired rounds than this: no verdict (UNRESOLVED), whatever the interval


def median_ci(groups, resamples=2000, seed=20261130):
    """95% interval of the median of the paired differences, by a two-level (cluster) bootstrap: each
    resample draws the processes with replacement, then each drawn process's rounds with replacement,
    and takes the median of all drawn rounds (rounds of one process share its offsets, so they are not
    independent draws; with one process this is the plain bootstrap of its rounds). `groups`: one list of
    differences per process (a flat list of numbers counts as one process). Percentile method, fixed seed
    (a JSON file gives the same table again). Returns (low, high)."""
    if groups and not isinstance(groups[0], (list, tuple)):
        groups = [groups]
    groups = [g for g in groups if g]
    rng = random.Random(seed)
    meds = []
    for _ in range(resamples):
        drawn = []
        for g in rng.choices(groups, k=len(groups)):
            drawn.extend(rng.choices(g, k=len(g)))
        meds.append(statistics.median(drawn))
    meds.sort()
    return meds[int(0.025 * resamples)], meds[int(0.975 * resamples) - 1]


def budget_verdict(ci, budget, pairs=MIN_PAIRS):
    """PASS when the whole 95% interval of the median difference is within the budget, FAIL when the whole
    interval is over it, UNRESOLVED when it straddles the budget or when fewer than MIN_PAIRS pairs were
    measured (more processes or rounds needed to say); "-" without a budget line. Differences within
    1e-9 us of the budget count as on it (0.2 printed as +0.200 is within 0.2)."""
    if budget is None:
        return "-"
    if pairs < MIN_PAIRS:
        return "UNRESOLVED"
    low, high = ci
    eps = 1e-9
    return "PASS" if high <= budget + eps else "FAIL" if low > budget + eps else "UNRESOLVED"


# What each round reports per side (launch_loop ab), in microseconds per launch: the mean over the side's
# launches with the closing synchronize (the budget lines are judged on it), the median of its
# 1,000-launch blocks (a launch when the host does not stall), the launching thread's CPU time.
ESTIMATORS = [("mean", "us_per_launch"), ("block median", "block_us_per_launch"), ("thread CPU", "cpu_us_per_launch")]


def paired_stats(mine, key):
    """kcount - floor of each round of each run in `mine` for one estimator (the round key `key`): the
    median, its 95% interval (median_ci, processes then rounds), min and max; None when no round has it."""
    groups = [[r0[key]["kcount"] - r0[key]["floor"] for r0 in r["rounds"] if key in r0] for r in mine]
    flat = [d for g in groups for d in g]
    if not flat:
        return None
    return {"median": statistics.median(flat), "ci95": list(median_ci(groups)), "min": min(flat), "max": max(flat),
            "pairs": len(flat)}


def table_rows(runs, configs, apis):
    rows = []
    for config in configs:
        for api in apis:
            mine = [r for r in runs if r["config"] == config and r["api"] == api and r["ok"]]
            main = paired_stats(mine, "us_per_launch")
            if main is None:
                continue
            floor_cost = [r0["us_per_launch"]["floor"] - r0["us_per_launch"]["none"] for r in mine for r0 in r["rounds"]
                          if "none" in r0["us_per_launch"]]
            budget = CONFIGS[config][2]
            pairs = main.pop("pairs")
            verdict = budget_verdict(main["ci95"], budget, pairs)
            main["process_medians"] = [r["summary"]["paired_us_per_launch"]["kcount-floor"]["median"] for r in mine]
            others = {name: paired_stats(mine, key) for name, key in ESTIMATORS[1:]}
            rows.append({"config": config, "api": api, "processes": len(mine), "pairs": pairs,
                         "kcount_minus_floor_us": main,
                         "by_estimator": {name: st for name, st in others.items() if st is not None},
                         "floor_minus_none_us": statistics.median(floor_cost) if floor_cost else None,
                         "budget_us": budget, "verdict": verdict})
    return rows


def cell(d):
    return f"{d['median']:+.3f} ({d['ci95'][0]:+.3f}..{d['ci95'][1]:+.3f})"


def print_tables(rows):
    """The estimator table (when the runs have more than the mean), then the budget table (printed last)."""
    if any(r["by_estimator"] for r in rows):
        print("kcount - floor, us/launch, median (95% CI), by estimator (verdicts below use the mean)")
        print(f"{'config':<19} {'api':<8} " + " ".join(f"{name:<24}" for name, _ in ESTIMATORS))
        for r in rows:
            cells = [r["kcount_minus_floor_us"]] + [r["by_estimator"].get(name) for name, _ in ESTIMATORS[1:]]
            print(f"{r['config']:<19} {r['api']:<8} " + " ".join(f"{cell(c) if c else '-':<24}" for c in cells))
        print()
    print(f"{'config':<19} {'api':<8} {'pairs':>5}  {'kcount - floor, us/launch: median (95% CI) [min..max]':<60} "
          f"{'floor - none':>12}  budget")
    for r in rows:
        d = r["kcount_minus_floor_us"]
        text = f"{cell(d)} [{d['min']:+.3f}..{d['max']:+.3f}]"
        floor = "-" if r["floor_minus_none_us"] is None else f"{r['floor_minus_none_us']:+.3f}"
        budget = "-" if r["budget_us"] is None else f"<= {r['budget_us']:.1f} {r['verdict']}"
        print(f"{r['config']:<19} {r['api']:<8} {r['pairs']:>5}  {text:<60} {floor:>12}  {budget}")


def pool(args):
    """--pool: the tables of earlier runs together. Exit 1 when a file cannot be read or holds no run."""
    runs = []
    for path in args.pool:
        try:
            with open(path) as f:
                doc = json.load(f)
            runs += [r for r in doc["runs"] if r.get("ok")]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"ab_floor: --pool {path}: {e}", file=sys.stderr)
            return 1
    rows = table_rows(runs, args.configs, args.apis)
    if not rows:
        print("ab_floor: --pool: no run of the configurations and APIs asked for", file=sys.stderr)
        return 1
    print(f"pooled: {len(runs)} processes from {len(args.pool)} files")
    print_tables(rows)
    return 0


def main(argv=None):
    args = parse_args(argv)
    if args.fake_child is not None:
        return fake_child(args.fake_child)
    if args.pool:
        return pool(args)
    build = os.path.abspath(args.build_dir)
    kcount_lib = os.path.join(build, "lib", "libkcount.so")
    floor_lib = os.path.join(build, "lib", "libcupti_floor.so")
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="kcount-ab-floor-")
    if args.dry_run:
        binary = [sys.executable, os.path.abspath(__file__), "--fake-child"]
        match = {}
    else:
        for path in [floor_lib] + sorted({config_library(build, c) for c in args.configs}):
            if not os.path.exists(path):
                print(f"ab_floor: {path} not found", file=sys.stderr)
                return 1
        if args.launch_loop:
            binary = [os.path.abspath(args.launch_loop)]
        else:
            compiled, msg = run_bench.compile_launch_loop(run_bench.find_nvcc(args.nvcc), args.arch, work)
            if compiled is None:
                print(f"ab_floor: launch_loop.cu did not compile: {msg}", file=sys.stderr)
                return 1
            binary = [compiled]
        match = run_bench.floor_match(kcount_lib)
    runs = []
    for index in range(args.processes):  # interleaved: every (configuration, API) once per index, rotated
        combos = [(c, a) for c in args.configs for a in args.apis]
        k = index % len(combos)
        for config, api in combos[k:] + combos[:k]:
            run = run_process(args, binary, config, api, index, config_library(build, config), floor_lib, match, work)
            runs.append(run)
            print(f"[{config} {api} #{index}] rc={run['rc']}{'' if run['ok'] else ' (no result)'} "
                  f"{run['wall_s']:.0f}s", file=sys.stderr, flush=True)
    shutil.rmtree(work, ignore_errors=True)  # control folders and the compiled launch_loop
    rows = table_rows(runs, args.configs, args.apis)
    doc = {"args": {k: v for k, v in vars(args).items() if k != "fake_child"}, "floor_match": match,
           "runs": runs, "rows": rows, "dry_run": args.dry_run,
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with open(os.path.join(args.out, "ab_floor.json"), "w") as f:
        json.dump(doc, f, indent=1)
    if args.dry_run:
        print("DRY RUN: launch_loop replaced by a stand-in; the numbers below are made up")
    print_tables(rows)
    return 0 if runs and all(run["ok"] for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
