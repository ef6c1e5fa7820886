#!/usr/bin/env python3
"""PNG plot of the overhead benchmark's per-launch cost per configuration, from run_bench.py's JSON.

    python3 bench/plot.py /tmp/kcount-bench/results.json --out /tmp/kcount-bench/results.png

One panel per workload present in the JSON: C++ <<<>>> launches, cuLaunchKernel launches (us per launch),
graph replay (us per kernel), and the Python add_ loop (us per iteration). Each configuration is a bar at
its median with a min..max error bar, and every run as a dot. The title names the machine and mode.
Needs matplotlib (exit status 3 with a message when it is missing); not needed by the tests.
"""

import argparse
import json
import sys

PANELS = [  # (job, workload key in stats, title, unit)
    ("cpp", "runtime", "C++ loop, <<<1,1>>>", "us per launch"),
    ("cpp", "driver", "C++ loop, cuLaunchKernel", "us per launch"),
    ("cpp", "graph", "CUDA graph replay (1,000 kernels)", "us per kernel"),
    ("py", "add_loop", "Python x.add_(1) loop", "us per iteration"),
]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("json", help="results.json written by bench/run_bench.py")
    p.add_argument("--out", required=True, help="PNG file to write")
    args = p.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        print(f"plot.py: matplotlib is not installed ({exc})", file=sys.stderr)
        return 3
    with open(args.json) as f:
        doc = json.load(f)
    stats = doc.get("stats", {})
    panels = [(job, w, title, unit) for job, w, title, unit in PANELS if stats.get(job, {}).get(w)]
    if not panels:
        print("plot.py: no per-launch statistics in the JSON", file=sys.stderr)
        return 1
    order = [c for cs in doc.get("plan", {}).values() for c in cs]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4.6), squeeze=False)
    for ax, (job, w, title, unit) in zip(axes[0], panels):
        per_config = stats[job][w]
        configs = [c for c in dict.fromkeys(order) if c in per_config]
        xs = range(len(configs))
        med = [per_config[c]["median"] for c in configs]
        lo = [per_config[c]["median"] - per_config[c]["min"] for c in configs]
        hi = [per_config[c]["max"] - per_config[c]["median"] for c in configs]
        colors = ["#8c8c8c" if c == "none" else "#4c72b0" if "floor" in c else "#dd8452" if c.startswith("kcount")
                  else "#55a868" for c in configs]
        ax.bar(xs, med, yerr=[lo, hi], color=colors, capsize=3, alpha=0.85)
        for x, c in zip(xs, configs):
            vals = per_config[c]["values"]
            ax.plot([x] * len(vals), vals, "k.", markersize=3)
            ax.annotate(f"{per_config[c]['median']:.2f}", (x, per_config[c]["max"]), ha="center", va="bottom",
                        fontsize=8, xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(configs, rotation=35, ha="right", fontsize=8)
        ax.set_ylabel(unit)
        ax.set_title(title, fontsize=10)
        ax.set_ylim(bottom=0)
    env = doc.get("environment", {})
    fig.suptitle(f"kcount overhead ({doc.get('mode')}{', DRY RUN: fake numbers' if doc.get('dry_run') else ''}): "
                 f"{env.get('device', '?')}, driver {env.get('driver', '?')}, {doc.get('finished', '')}; "
                 f"median, min..max, dots = runs", fontsize=10)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
