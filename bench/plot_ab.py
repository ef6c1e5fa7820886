#!/usr/bin/env python3
"""PNG plot of same-process comparisons with the CUPTI floor (bench/ab_floor.py JSON files).

    python3 bench/plot_ab.py --out docs/performance-run11-ab.png LABEL=ab_floor.json [LABEL=ab_floor.json ...]

A label given with several files pools their processes (as ab_floor.py --pool does).

One point per (file, configuration, API) row: the median of kcount - floor in µs per launch with its 95%
interval (ab_floor.table_rows, the same figures as ab_floor's table), grouped by configuration and
API, one marker per LABEL (e.g. pinned=..., unpinned=...), with each configuration's budget line
(trace 0.2, summary 0.1 µs per launch) drawn across its group. Needs matplotlib (exit status 3 with a
message when it is missing); not needed by the tests.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ab_floor  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", metavar="LABEL=JSON", help="an ab_floor.json file and its label")
    p.add_argument("--out", required=True, help="PNG file to write")
    p.add_argument("--title", default="kcount - CUPTI floor within one process, µs per launch (median, 95% interval)")
    args = p.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_ab: matplotlib is not installed", file=sys.stderr)
        return 3
    by_label = {}  # label -> processes of all its files (a label may name several files)
    for item in args.runs:
        label, sep, path = item.partition("=")
        if not sep:
            p.error(f"{item}: want LABEL=JSON")
        with open(path) as f:
            doc = json.load(f)
        unknown = sorted({r["config"] for r in doc["runs"]} - set(ab_floor.CONFIGS))
        if unknown:  # a configuration an older ab_floor.py knew (its library variant is gone)
            print(f"plot_ab: {path}: not drawn: {', '.join(unknown)}", file=sys.stderr)
        by_label.setdefault(label, []).extend(r for r in doc["runs"] if r.get("ok") and r["config"] in ab_floor.CONFIGS)
    series = []  # (label, rows)
    for label, runs in by_label.items():
        configs = sorted({r["config"] for r in runs}, key=list(ab_floor.CONFIGS).index)
        series.append((label, ab_floor.table_rows(runs, configs, list(ab_floor.APIS))))
    groups = []  # (config, api) in first-seen order
    for _, rows in series:
        for r in rows:
            if (r["config"], r["api"]) not in groups:
                groups.append((r["config"], r["api"]))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(groups)), 4.5))
    markers = "osD^v"
    width = 0.6
    for si, (label, rows) in enumerate(series):
        xs, ys, lo, hi = [], [], [], []
        for r in rows:
            g = groups.index((r["config"], r["api"]))
            d = r["kcount_minus_floor_us"]
            xs.append(g - width / 2 + width * (si + 0.5) / len(series))
            ys.append(d["median"])
            lo.append(d["median"] - d["ci95"][0])
            hi.append(d["ci95"][1] - d["median"])
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt=markers[si % len(markers)], capsize=4, label=label)
    for g, (config, _) in enumerate(groups):
        budget = ab_floor.CONFIGS[config][2]
        if budget is not None:
            ax.hlines(budget, g - 0.45, g + 0.45, colors="red", linestyles="dashed", linewidth=1)
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([(c.replace("-", "-\n", 1) if len(c) > 14 else c) + "\n" + a for c, a in groups])
    ax.set_ylabel("µs per launch (red: budget line)")
    ax.set_title(args.title, fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot_ab: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
