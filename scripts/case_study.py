#!/usr/bin/python3
"""Generates docs/case-study.md and its PNG plots from the logs of examples/sweep.py.

    /usr/bin/python3 scripts/case_study.py examples/logs/sweep-eager.kcount examples/logs/sweep-compiled.kcount

Every number and every claim in the document is computed here from kcount's own output on the logs:
`kcount summary --format json` (ranges, kernels per range, GPU time), `kcount kernels --format json` (decoded
kernel names) and `kcount diff --format json` (eager vs compiled verdicts). Nothing is measured here and no
GPU is needed. The output is byte-for-byte reproducible: no time stamps, no absolute paths, sorted
iteration, fixed number formats, and PNGs written by matplotlib's Agg backend without metadata (the same
bytes need the same matplotlib and FreeType: Debian 12's python3-matplotlib).

Options:
  --kcount PATH     the kcount tool (default: $KCOUNT, else build/bin/kcount under the repository)
  --out-dir DIR     where case-study.md and case-study/*.png go (default: docs)

Logs are told apart by the `--mode eager|compiled` of examples/sweep.py in their command line (metadata
`command_line`); a log of another program is listed and otherwise skipped. The range names are parsed with
examples/sweep.py's parse_config_name (its docstring documents the grammar).
"""

import argparse
import collections
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC_NAME = "case-study.md"
IMG_DIR = "case-study"
DTYPE_ORDER = ["bf16", "fp16", "fp32", "tf32"]
DTYPE_TEXT = {"bf16": "bf16", "fp16": "fp16", "fp32": "fp32 (TF32 off)", "tf32": "fp32 with TF32"}
# Operation classes for the fusion summary (ATen op names as Inductor writes them in kernel names).
ACTIVATION_OPS = {"gelu", "silu", "sigmoid", "tanh", "relu", "erf", "mish", "hardswish"}
NORM_OPS_NAMED = {"native_layer_norm", "layer_norm", "rms_norm", "_fused_rms_norm", "native_group_norm",
                  "group_norm", "native_batch_norm", "batch_norm"}
NORM_OPS_DECOMPOSED = {"var_mean", "rsqrt", "mean", "pow"}


def load_sweep_module():
    path = os.path.join(ROOT, "examples", "sweep.py")
    spec = importlib.util.spec_from_file_location("kcount_sweep", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SWEEP = load_sweep_module()


# ---------------------------------------------------------------------------------------------------------
# formatting

def fmt_ns(ns):
    """Fixed formats: 950 ns, 12.3 µs, 4.56 ms, 1.23 s."""
    ns = float(ns)
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    if ns < 1e9:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e9:.2f} s"


def fmt_num(x):
    """Counts per step: integers as integers, else one decimal."""
    if abs(x - round(x)) < 1e-9:
        return str(int(round(x)))
    return f"{x:.1f}"


def fmt_ratio(x):
    return f"{x:.2f}×"


def md_escape(s):
    """Free text that may hold kernel names: < and > would be read as HTML tags."""
    return s.replace("<", "&lt;").replace(">", "&gt;")


def code(s):
    """An inline code span (kernel names keep their < > as written)."""
    return "`" + s.replace("`", "'") + "`"


def cell(s):
    """Table cell text: a '|' would end the cell (GFM accepts the escaped form inside code spans too)."""
    return str(s).replace("|", "\\|")


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(cell(c) for c in r) + " |")
    return "\n".join(out)


def ranges_text(values):
    """[1, 2, 4, 8, 64] over the known grid -> '1–8, 64' (runs of consecutive grid values)."""
    grid = sorted(set(SWEEP.TOKENS) | set(values))
    idx = {v: i for i, v in enumerate(grid)}
    vals = sorted(set(values))
    parts, start, prev = [], None, None
    for v in vals:
        if start is None:
            start = prev = v
        elif idx[v] == idx[prev] + 1:
            prev = v
        else:
            parts.append(str(start) if start == prev else f"{start}–{prev}")
            start = prev = v
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}–{prev}")
    return ", ".join(parts)


def plural(n, word, words=None):
    return f"{n} {word if n == 1 else (words or word + 's')}"


# ---------------------------------------------------------------------------------------------------------
# kcount

def run_kcount(kcount, *args):
    proc = subprocess.run([kcount, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"case_study: kcount {' '.join(args)} failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


MAX_SHORT_NAME = 100  # tools/kernel_names.h kMaxShortName


def short_for_table(name, short):
    """A kernel's short name as kcount's tables show it: JSON's "short" is whole; a table cuts the short
    name of a mangled (_Z...) kernel at 100 characters, the last being "…" (kc::shortKernelName)."""
    if name.startswith("_Z") and len(short) > MAX_SHORT_NAME:
        return short[:MAX_SHORT_NAME - 1] + "…"
    return short


class Log:
    """One log: kcount's summary (ranges) and kernels (decoded names), and the sweep mode."""

    def __init__(self, kcount, path, shown):
        self.path = path
        self.shown = shown
        summary = json.loads(run_kcount(kcount, "summary", "--format", "json", path))["logs"][0]
        self.meta = summary["metadata"]
        self.totals = summary["totals"]
        self.complete = summary["complete"]
        self.issues = summary["issues"]
        self.ranges = {r["path"]: r for r in summary["ranges"]}
        kernels = json.loads(run_kcount(kcount, "kernels", "--format", "json", path))["kernels"]
        self.kernels = {k["name"]: k for k in kernels}
        self.size = os.path.getsize(path)
        m = re.search(r"sweep\.py\b.*?--mode[ =](eager|compiled)\b", self.meta.get("command_line", ""))
        self.mode = m.group(1) if m else None

    def decoded(self, name):
        return self.kernels[name]["decoded"]

    def short(self, name):
        return short_for_table(name, self.kernels[name]["short"])


# ---------------------------------------------------------------------------------------------------------
# the sweep's configurations, read from the range paths

class Run:
    """One configuration in one log: per-step numbers of CONFIG/step and the kernels of its layers."""

    def __init__(self, log, name, cfg):
        self.log = log
        self.name = name
        self.cfg = cfg
        step = log.ranges.get(f"{name}/step")
        self.steps = step["instances"] if step else 0
        self.ok = bool(step) and self.steps > 0
        if not self.ok:
            return
        inc = step["inclusive"]
        self.kernels_per_step = inc["kernels"] / self.steps
        self.launches_per_step = inc["launches"] / self.steps
        self.gpu_ns_per_step = inc["gpu_ns"] / self.steps
        self.cpu_ns_per_step = step["cpu_ns"] / self.steps
        self.launch_api_ns_per_step = inc["launch_api_ns"] / self.steps
        # layer ("" for kernels launched directly in step) -> {kernel name: (count per step, gpu ns per step)}
        self.layers = collections.OrderedDict()
        prefix = f"{name}/step"
        for path, r in log.ranges.items():
            if path != prefix and not path.startswith(prefix + "/"):
                continue
            layer = path[len(prefix) + 1:]
            ks = {}
            for k in r["kernels"]:
                ks[k["name"]] = (k["count"] / self.steps, k["gpu_ns"] / self.steps)
            self.layers[layer] = {"kernels": ks, "gpu_ns": r["exclusive"]["gpu_ns"] / self.steps,
                                  "incl_gpu_ns": r["inclusive"]["gpu_ns"] / self.steps,
                                  "launches": r["exclusive"]["launches"] / self.steps,
                                  "incl_kernels": r["inclusive"]["kernels"] / self.steps}

    def kernels(self, layer_prefix=None):
        """{kernel name: [count per step, gpu ns per step]} over all layers (or those under layer_prefix)."""
        out = {}
        for layer, data in self.layers.items():
            if layer_prefix is not None and layer != layer_prefix and not layer.startswith(layer_prefix + "/"):
                continue
            for k, (c, g) in data["kernels"].items():
                cur = out.setdefault(k, [0.0, 0.0])
                cur[0] += c
                cur[1] += g
        return out

    def gemms(self, layer_prefix=None):
        """GEMM kernels (decoded category GEMM), the longest first: [(name, count/step, gpu ns/step)]."""
        ks = [(k, c, g) for k, (c, g) in self.kernels(layer_prefix).items()
              if self.log.decoded(k)["category"] == "GEMM"]
        return sorted(ks, key=lambda x: (-x[2], x[0]))


def collect_runs(logs):
    """{mode: {config name: Run}} and {config name: cfg} over all sweep logs."""
    runs = {"eager": {}, "compiled": {}}
    cfgs = {}
    for log in logs:
        if log.mode is None:
            continue
        for path, r in log.ranges.items():
            if r["depth"] != 1:
                continue
            cfg = SWEEP.parse_config_name(path)
            if cfg is None:
                continue
            run = Run(log, path, cfg)
            if run.ok:
                runs[log.mode][path] = run
                cfgs[path] = cfg
    return runs, cfgs


def gemm_key(cfg, layer):
    return (cfg["model"], layer, cfg["t"], cfg["h"])


def gemm_layers(model):
    return ["linear"] if model == "linear" else ["gate", "up", "down"]


def main_gemm(run, layer):
    g = run.gemms(layer)
    return g[0][0] if g else None


def tile_label(log, name):
    """Short label of a GEMM kernel for the maps: tile (and cluster), else the function (gemv...)."""
    if name is None:
        return "-"
    d = log.decoded(name)
    if d["tile"]:
        return d["tile"] + (f" c{d['cluster']}" if d["cluster"] else "")
    if d["kind"]:
        return d["kind"]
    return log.short(name)[:24]


def family(log, name):
    """What "the same kernel family" means here: library, tile, cluster, layout, epilogue, and the
    undocumented nvjet shape/flag tokens; the dtype and the nvjet variant token (which differs with the
    element type) are left out."""
    d = log.decoded(name)
    raw = d["raw"]
    return (d["library"], d["kind"] if d["grammar"] != "nvjet" else None, d["tile"], d["cluster"], d["layout"],
            d["epilogue"], raw.get("shape2"), raw.get("h/v"), raw.get("flags"))


def describe_gemm(log, name):
    d = log.decoded(name)
    fields = [d["library"] or "?"]
    for key in ("tile", "cluster", "stages", "layout", "epilogue", "dtype"):
        if d[key]:
            fields.append(f"{key} {d[key]}")
    if d["raw"].get("variant"):
        fields.append(f"variant {d['raw']['variant']}")
    if d["kind"] and d["grammar"] != "nvjet":
        fields.append(f"function {d['kind']}")
    return ", ".join(fields)


# ---------------------------------------------------------------------------------------------------------
# plots

class Plots:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.files = []
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        matplotlib.rcParams.update({
            "font.family": "DejaVu Sans", "font.size": 8, "svg.hashsalt": "kcount-case-study",
            "path.simplify": False, "figure.dpi": 100, "savefig.dpi": 100,
        })
        self.plt = plt

    def save(self, fig, name):
        os.makedirs(os.path.join(self.out_dir, IMG_DIR), exist_ok=True)
        path = os.path.join(self.out_dir, IMG_DIR, name)
        fig.savefig(path, format="png", metadata={"Software": None})
        self.plt.close(fig)
        self.files.append(name)
        return f"{IMG_DIR}/{name}"

    def tile_maps(self, title, grids, name):
        """grids: {dtype: (tokens, hiddens, labels[h][t])}; one categorical map per dtype."""
        plt = self.plt
        dtypes = [d for d in DTYPE_ORDER if d in grids]
        labels = sorted({lab for d in dtypes for row in grids[d][2] for lab in row if lab != "-"})
        cmap = plt.get_cmap("tab20")
        color = {lab: cmap(i % 20) for i, lab in enumerate(labels)}
        fig, axes = plt.subplots(len(dtypes), 1, figsize=(11, 1.3 + 1.15 * len(dtypes) + 0.18 * len(labels)),
                                 squeeze=False)
        for ax, dt in zip(axes[:, 0], dtypes):
            tokens, hiddens, grid = grids[dt]
            for yi, row in enumerate(grid):
                for xi, lab in enumerate(row):
                    c = color.get(lab, (1, 1, 1, 1))
                    ax.add_patch(plt.Rectangle((xi, yi), 1, 1, facecolor=c, edgecolor="white"))
                    text = lab.replace(" c", "\nc")
                    if len(text) > 12 and "\n" not in text:
                        text = "\n".join(text[i:i + 12] for i in range(0, len(text), 12))
                    ax.text(xi + 0.5, yi + 0.5, text, ha="center", va="center", fontsize=5)
            ax.set_xlim(0, len(tokens))
            ax.set_ylim(0, len(hiddens))
            ax.set_xticks([i + 0.5 for i in range(len(tokens))])
            ax.set_xticklabels([str(t) for t in tokens])
            ax.set_yticks([i + 0.5 for i in range(len(hiddens))])
            ax.set_yticklabels([f"H={h}" for h in hiddens])
            ax.set_title(f"{title}: {DTYPE_TEXT[dt]}", fontsize=8, loc="left")
        axes[-1, 0].set_xlabel("tokens T (rows of x)")
        fig.tight_layout()
        return self.save(fig, name)

    def lines(self, title, series, xlabel, ylabel, name, logy=True):
        """series: [(label, xs, ys)]"""
        plt = self.plt
        fig, ax = plt.subplots(figsize=(7, 4))
        for label, xs, ys in series:
            ax.plot(xs, ys, marker="o", markersize=3, label=label)
        ax.set_xscale("log", base=2)
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="major", linewidth=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        return self.save(fig, name)

    def stacked(self, title, bars, segments, ylabel, name):
        """bars: [label]; segments: [(segment label, [value per bar])]"""
        plt = self.plt
        fig, ax = plt.subplots(figsize=(9, 4.5))
        bottom = [0.0] * len(bars)
        cmap = plt.get_cmap("tab20")
        for i, (lab, vals) in enumerate(segments):
            ax.bar(range(len(bars)), vals, bottom=bottom, label=lab, color=cmap(i % 20), width=0.7)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels(bars, fontsize=6)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fig.tight_layout()
        return self.save(fig, name)


# ---------------------------------------------------------------------------------------------------------
# document sections

def section_sources(logs, runs, cfgs):
    out = ["## The logs", ""]
    rows = []
    for log in logs:
        t = log.totals
        dropped = (t["dropped_host_records"] + t["dropped_activity_records"] + t["activity_buffers_refused"]
                   + t["late_activity_records"] + t.get("bytes_dropped", 0))
        rows.append([code(log.shown), log.mode or "not a sweep log (skipped)", f"{log.size:,}",
                     md_escape(log.meta.get("gpu.0", "?")), f"{t['launches']:,}", f"{t['kernels']:,}",
                     f"{t['unmatched_kernels']:,}", f"{dropped:,}",
                     "complete" if log.complete else "INCOMPLETE",
                     len(runs.get(log.mode, {})) if log.mode else 0])
    out.append(table(["log", "mode", "bytes", "GPU", "launches", "kernels", "unmatched kernels",
                      "dropped records", "end record", "configurations"], rows))
    out.append("")
    for log in logs:
        m = log.meta
        out.append(f"- {code(log.shown)}: command {code(m.get('command_line', '?'))}; CUDA driver "
                   f"{m.get('cuda_driver_version', '?')}, CUPTI API {m.get('cupti_version', '?')}, kcount "
                   f"{m.get('kcount_version', '?')}.")
    total_unmatched = sum(l.totals["unmatched_kernels"] for l in logs)
    total_dropped = sum(l.totals["dropped_host_records"] + l.totals["dropped_activity_records"]
                        + l.totals["activity_buffers_refused"] + l.totals["late_activity_records"]
                        for l in logs)
    out.append("")
    out.append(f"Over all logs: {total_unmatched} unmatched kernels and {total_dropped} dropped records.")
    steps = sorted({r.steps for m in runs.values() for r in m.values()})
    if steps:
        out.append(f"Each configuration's numbers are per recorded step: the {code('CONFIG/step')} ranges "
                   f"({', '.join(str(s) for s in steps)} per configuration); the warm-up calls "
                   f"({code('CONFIG/warmup')}, where compilation and autotuning happen) and the setup are "
                   f"left out.")
    out.append("")
    return out


def section_compiled_subset(runs):
    comp = runs["compiled"]
    if not comp:
        return []
    out = ["### Which configurations were compiled", ""]
    by_model = collections.defaultdict(list)
    for name, r in comp.items():
        by_model[r.cfg["model"]].append(r.cfg)
    for model in ("linear", "geglu", "block"):
        cs = by_model.get(model)
        if not cs:
            continue
        tokens = sorted({c["t"] for c in cs})
        hidden = sorted({c["h"] for c in cs})
        dtypes = [d for d in DTYPE_ORDER if any(c["dtype"] == d for c in cs)]
        out.append(f"- {model}: {plural(len(cs), 'configuration')}, tokens {', '.join(map(str, tokens))}; "
                   f"hidden {', '.join(map(str, hidden))}; dtypes {', '.join(dtypes)}.")
    n_eager = len(runs["eager"])
    out.append("")
    warm = {}
    total = {}
    for mode, rs in runs.items():
        w = [r.log.ranges[f"{n}/warmup"]["cpu_ns"] for n, r in rs.items() if f"{n}/warmup" in r.log.ranges]
        warm[mode] = statistics.median(w) if w else None
        total[mode] = sum(r.log.ranges[n]["cpu_ns"] for n, r in rs.items())
    gpu = statistics.median([r.gpu_ns_per_step for r in comp.values()])
    text = (f"The eager log holds {n_eager} configurations, the compiled one {len(comp)}: each compiled "
            f"configuration is one Dynamo/Inductor compilation with static shapes (`dynamic=False`), done in "
            f"its `warmup` range")
    if warm.get("compiled") is not None:
        text += (f", which took a median {fmt_ns(warm['compiled'])} per compiled configuration (host time in "
                 f"`CONFIG/warmup`")
        if warm.get("eager") is not None:
            text += f"; eager: {fmt_ns(warm['eager'])}"
        text += f") against a median {fmt_ns(gpu)} of GPU time per compiled step"
    text += (f". The configuration ranges add up to {fmt_ns(total['compiled'])} of host time in the compiled "
             f"log and {fmt_ns(total['eager'])} in the eager log. So the compiled sweep covers the subset above "
             f"(`COMPILED_TOKENS`, `COMPILED_HIDDEN` and the blocks in `examples/sweep.py`), and the eager "
             f"sweep the whole grid.")
    out.append(text)
    out.append("")
    return out


def gemm_grid(runs, model, layer, dtype):
    """tokens, hiddens, labels[h][t], names[h][t] of the main GEMM kernel of one layer."""
    rs = [r for r in runs.values() if r.cfg["model"] == model and r.cfg["dtype"] == dtype]
    tokens = sorted({r.cfg["t"] for r in rs})
    hiddens = sorted({r.cfg["h"] for r in rs})
    by = {(r.cfg["h"], r.cfg["t"]): r for r in rs}
    labels, names = [], []
    for h in hiddens:
        lr, nr = [], []
        for t in tokens:
            r = by.get((h, t))
            n = main_gemm(r, layer) if r else None
            nr.append((r.log, n) if r else None)
            lr.append(tile_label(r.log, n) if r else "-")
        labels.append(lr)
        names.append(nr)
    return tokens, hiddens, labels, names


def section_gemm_choice(runs, plots):
    eager = runs["eager"]
    out = ["## 1. Which GEMM kernel ran, per shape and dtype", ""]
    if not any(r.cfg["model"] in ("linear", "geglu") for r in eager.values()):
        out += ["No eager Linear or GeGLU configuration in the logs.", ""]
        return out
    out.append("The kernel named is the GEMM kernel (decoded category GEMM) with the most GPU time in the "
               "layer's range; the decoded fields come from `kcount kernels --format json` "
               "(grammars: [kernel-names.md](kernel-names.md)). `cX` is the thread-block cluster. "
               "Rows: hidden size H; columns: tokens T.")
    out.append("")
    for model, layer, what in (("linear", "linear", "Linear H -> H with bias (x @ W.T + b)"),
                               ("geglu", "gate", "GeGLU gate projection H -> I (no bias)"),
                               ("geglu", "down", "GeGLU down projection I -> H (no bias)")):
        grids = {}
        for dt in DTYPE_ORDER:
            tokens, hiddens, labels, names = gemm_grid(eager, model, layer, dt)
            if tokens:
                grids[dt] = (tokens, hiddens, labels, names)
        if not grids:
            continue
        out.append(f"### {what}")
        out.append("")
        if plots:
            img = plots.tile_maps(f"{model}/{layer} GEMM tile", {d: g[:3] for d, g in grids.items()},
                                  f"tiles-{model}-{layer}.png")
            out.append(f"![GEMM tile per shape: {model} {layer}]({img})")
            out.append("")
        for dt in DTYPE_ORDER:
            if dt not in grids:
                continue
            tokens, hiddens, labels, names = grids[dt]
            out.append(f"**{DTYPE_TEXT[dt]}**")
            out.append("")
            out.append(table(["H \\ T"] + [str(t) for t in tokens],
                             [[str(h)] + [md_escape(l) for l in labels[i]] for i, h in enumerate(hiddens)]))
            out.append("")
            # where the choice changes
            by_text = collections.OrderedDict()
            for i, h in enumerate(hiddens):
                segs = []
                for t, lab in zip(tokens, labels[i]):
                    if segs and segs[-1][0] == lab:
                        segs[-1][1].append(t)
                    else:
                        segs.append((lab, [t]))
                text = (f"{len(segs)} {'choice' if len(segs) == 1 else 'choices'}: "
                        + "; ".join(f"{code(lab)} for T {ranges_text(ts)}" for lab, ts in segs))
                by_text.setdefault(text, []).append(h)
            out.append("Where the choice changes along T:")
            out.append("")
            for text, hs in by_text.items():
                out.append(f"- H={', '.join(str(h) for h in hs)}: {text}")
            out.append("")
        # the distinct kernels with their decoded fields
        seen = collections.OrderedDict()
        for dt in DTYPE_ORDER:
            if dt not in grids:
                continue
            tokens, hiddens, labels, names = grids[dt]
            for i, h in enumerate(hiddens):
                for j, t in enumerate(tokens):
                    e = names[i][j]
                    if not e or not e[1]:
                        continue
                    log, n = e
                    seen.setdefault(n, (log, []))[1].append((dt, h, t))
        rows = []
        for n in sorted(seen, key=lambda k: (-len(seen[k][1]), k)):
            log, where = seen[n]
            where_text = where_text_of(where)
            rows.append([code(log.short(n)), md_escape(describe_gemm(log, n)), len(where), md_escape(where_text)])
        out.append(f"{plural(len(rows), 'distinct GEMM kernel')} for this layer:")
        out.append("")
        out.append(table(["kernel", "decoded", "shapes", "where"], rows))
        out.append("")
    return out


def where_text_of(where):
    """[(dtype, h, t)] -> 'bf16 H=1024, 2048: T 1–16; bf16 H=4096: T 1–8' (H values with equal T sets merged)."""
    by_dt_h = collections.OrderedDict()
    for dt, h, t in where:
        by_dt_h.setdefault((dt, h), []).append(t)
    merged = collections.OrderedDict()
    for (dt, h), ts in by_dt_h.items():
        merged.setdefault((dt, ranges_text(ts)), []).append(h)
    return "; ".join(f"{dt} H={', '.join(str(h) for h in hs)}: T {tr}" for (dt, tr), hs in merged.items())


def other_kernels_in_linear(runs):
    """Linear steps that ran more than the GEMM: {(dtype, h, t): [short names of non-GEMM kernels]}."""
    out = {}
    for r in runs.values():
        if r.cfg["model"] != "linear":
            continue
        others = [r.log.short(k) for k in sorted(r.kernels("linear"))
                  if r.log.decoded(k)["category"] != "GEMM"]
        if others:
            out[(r.cfg["dtype"], r.cfg["h"], r.cfg["t"])] = others
    return out


def section_linear_kernels(runs):
    eager = runs["eager"]
    lin = [r for r in eager.values() if r.cfg["model"] == "linear"]
    if not lin:
        return []
    out = ["### Kernels per Linear call", ""]
    counts = collections.Counter(fmt_num(r.layers.get("linear", {}).get("incl_kernels", 0)) for r in lin)
    out.append("Kernels per call of `F.linear(x, W, b)` over the eager configurations: "
               + ", ".join(f"{k} kernel(s) in {v} configurations" for k, v in sorted(counts.items())) + ".")
    extra = other_kernels_in_linear(eager)
    if extra:
        groups = collections.OrderedDict()
        for (dt, h, t), names in sorted(extra.items(), key=lambda x: (DTYPE_ORDER.index(x[0][0]), x[0][1], x[0][2])):
            groups.setdefault((dt, tuple(names)), []).append((h, t))
        out.append(" Configurations whose call ran kernels besides the GEMM:")
        out.append("")
        for (dt, names), where in groups.items():
            out.append(f"- {where_text_of([(dt, h, t) for h, t in where])}: " + ", ".join(code(n) for n in names))
    else:
        out.append(" Every eager Linear call ran its GEMM and nothing else.")
    epi = collections.Counter()
    for r in lin:
        n = main_gemm(r, "linear")
        if n:
            epi[r.log.decoded(n)["epilogue"] or "none"] += 1
    out.append("")
    out.append("Epilogue written in the main GEMM kernel's name: "
               + ", ".join(f"{code(k)} in {v}" for k, v in sorted(epi.items())) + f" of {sum(epi.values())} "
               "configurations.")
    out.append("")
    return out


def compare_dtypes(runs, a, b):
    """Per (model, layer, T, H) present in both dtypes: (key, name_a, name_b, log_a, log_b, ns_a, ns_b)."""
    idx = {}
    for r in runs.values():
        if r.cfg["model"] not in ("linear", "geglu"):
            continue
        for layer in gemm_layers(r.cfg["model"]):
            g = r.gemms(layer)
            if g:
                idx[(r.cfg["dtype"],) + gemm_key(r.cfg, layer)] = (r.log, g[0][0], sum(x[2] for x in g))
    out = []
    for key in sorted(k[1:] for k in idx if k[0] == a):
        if (b,) + key in idx:
            la, na, ta = idx[(a,) + key]
            lb, nb, tb = idx[(b,) + key]
            out.append((key, na, nb, la, lb, ta, tb))
    return out


def section_bf16_fp16(runs):
    pairs = compare_dtypes(runs["eager"], "bf16", "fp16")
    out = ["## 2. Do bf16 and fp16 select different kernels?", ""]
    if not pairs:
        return out + ["The logs hold no shape recorded in both bf16 and fp16.", ""]
    same_name = sum(1 for p in pairs if p[1] == p[2])
    same_family = sum(1 for p in pairs if family(p[3], p[1]) == family(p[4], p[2]))
    same_tile = sum(1 for p in pairs if (p[3].decoded(p[1])["tile"], p[3].decoded(p[1])["cluster"])
                    == (p[4].decoded(p[2])["tile"], p[4].decoded(p[2])["cluster"]))
    n = len(pairs)
    out.append(f"Compared over {n} GEMMs (Linear, and GeGLU's gate, up and down, each T and H recorded in both "
               f"dtypes, eager), by the main GEMM kernel of each:")
    out.append("")
    out.append(f"- identical kernel name: {same_name} of {n};")
    out.append(f"- same tile and cluster: {same_tile} of {n};")
    out.append(f"- same kernel family (library, tile, cluster, layout, epilogue and the undocumented nvjet "
               f"shape/flag tokens; the element-type token left out): {same_family} of {n}.")
    variants = collections.defaultdict(collections.Counter)
    for p in pairs:
        for dt, log, name in (("bf16", p[3], p[1]), ("fp16", p[4], p[2])):
            d = log.decoded(name)
            variants[dt][d["raw"].get("variant") or d["library"] or "?"] += 1
    out.append("")
    out.append("Name token that differs with the element type (nvjet `variant`, else the library): "
               + "; ".join(f"{dt}: " + ", ".join(f"{code(v)} ×{c}" for v, c in sorted(variants[dt].items()))
                           for dt in ("bf16", "fp16")) + ".")
    diff = [p for p in pairs if family(p[3], p[1]) != family(p[4], p[2])]
    if diff:
        out.append("")
        out.append(f"The {plural(len(diff), 'GEMM')} where the family differs:")
        out.append("")
        groups = collections.OrderedDict()
        for (model, layer, t, h), na, nb, la, lb, ta, tb in diff:
            groups.setdefault((f"{model}/{layer}", la.short(na), lb.short(nb)), []).append(("", h, t))
        rows = [[layer, code(ka), code(kb), where_text_of(w).replace(" H=", "H=")]
                for (layer, ka, kb), w in groups.items()]
        out.append(table(["layer", "bf16 kernel", "fp16 kernel", "where"], rows))
    ratios = [p[5] / p[6] for p in pairs if p[6] > 0]
    if ratios:
        out.append("")
        out.append(f"GPU time of the GEMM per step, bf16 / fp16: median {fmt_ratio(statistics.median(ratios))} "
                   f"(min {fmt_ratio(min(ratios))}, max {fmt_ratio(max(ratios))}) over {len(ratios)} GEMMs.")
    out.append("")
    return out


def section_fp32_tf32(runs, plots):
    eager = runs["eager"]
    pairs = compare_dtypes(eager, "fp32", "tf32")
    out = ["## 3. fp32 with and without TF32", ""]
    if not pairs:
        return out + ["The logs hold no shape recorded both with and without TF32.", ""]
    n = len(pairs)
    same_name = sum(1 for p in pairs if p[1] == p[2])
    out.append(f"Over {n} GEMMs recorded in both (eager): identical kernel name in {same_name} of {n}.")
    for label, idx in (("fp32 (TF32 off)", 1), ("fp32 with TF32", 2)):
        libs = collections.Counter()
        for p in pairs:
            log = p[3] if idx == 1 else p[4]
            d = log.decoded(p[idx])
            libs[(d["library"] or "?", d["raw"].get("variant") or d["kind"] or "")] += 1
        out.append(f"- {label}: " + ", ".join(f"{lib}{(' ' + code(v)) if v else ''} ×{c}"
                                              for (lib, v), c in sorted(libs.items())) + ".")
    ratios = [p[5] / p[6] for p in pairs if p[6] > 0]
    big = [p[5] / p[6] for p in pairs if p[6] > 0 and p[0][2] >= 1024]
    out.append("")
    out.append(f"GPU time per step, TF32 off / TF32 on: median {fmt_ratio(statistics.median(ratios))} "
               f"(min {fmt_ratio(min(ratios))}, max {fmt_ratio(max(ratios))}) over {len(ratios)} GEMMs"
               + (f"; for T >= 1024: median {fmt_ratio(statistics.median(big))} over {len(big)}" if big else "")
               + ".")
    out.append("")
    if plots:
        lin = [r for r in eager.values() if r.cfg["model"] == "linear"]
        hs = sorted({r.cfg["h"] for r in lin})
        h = 4096 if 4096 in hs else (hs[-1] if hs else None)
        if h is not None:
            series = []
            for dt in DTYPE_ORDER:
                pts = sorted((r.cfg["t"], r.layers["linear"]["incl_gpu_ns"] / 1e3) for r in lin
                             if r.cfg["dtype"] == dt and r.cfg["h"] == h and "linear" in r.layers)
                if pts:
                    series.append((DTYPE_TEXT[dt], [p[0] for p in pts], [p[1] for p in pts]))
            img = plots.lines(f"Linear {h} -> {h} with bias: GPU time per call (eager)", series,
                              "tokens T", "GPU time per call (µs)", "linear-time-by-dtype.png")
            out.append(f"![Linear GPU time per call by dtype]({img})")
            out.append("")
    return out


def gemm_multiset(run):
    return sorted((k, round(c, 3)) for k, (c, g) in run.kernels().items()
                  if run.log.decoded(k)["category"] == "GEMM")


def section_eager_vs_compiled(runs, diffs):
    eager, comp = runs["eager"], runs["compiled"]
    both = [n for n in comp if n in eager]
    out = ["## 4. Eager vs torch.compile", ""]
    if not both:
        return out + ["No configuration was recorded in both modes.", ""]
    order = sorted(both, key=config_sort_key)
    same = [n for n in order if gemm_multiset(eager[n]) == gemm_multiset(comp[n])]
    out.append(f"Configurations recorded in both modes: {len(both)}. The GEMM kernels of a step (names and "
               f"counts) were identical in eager and compiled mode in {len(same)} of {len(both)}.")
    fewer = sum(1 for n in both if comp[n].kernels_per_step < eager[n].kernels_per_step)
    equal = sum(1 for n in both if comp[n].kernels_per_step == eager[n].kernels_per_step)
    out.append(f"Kernels per step: fewer when compiled in {fewer}, equal in {equal}, more in "
               f"{len(both) - fewer - equal}.")
    out.append("")
    rows = []
    for n in order:
        e, c = eager[n], comp[n]
        ge, gc = gemm_multiset(e), gemm_multiset(c)
        rows.append([code(n), f"{fmt_num(e.kernels_per_step)} → {fmt_num(c.kernels_per_step)}",
                     f"{fmt_num(e.launches_per_step)} → {fmt_num(c.launches_per_step)}",
                     f"{fmt_ns(e.gpu_ns_per_step)} → {fmt_ns(c.gpu_ns_per_step)}",
                     f"{fmt_ns(e.cpu_ns_per_step)} → {fmt_ns(c.cpu_ns_per_step)}",
                     "identical" if ge == gc else "differ",
                     non_gemm_text(e), non_gemm_text(c)])
    out.append("Per step; `CPU time in step` is the wall time of the `step` range on the host. The last two "
               "columns count the kernels that are not GEMMs by decoded category and library, with the fused "
               "operations of Triton kernels.")
    out.append("")
    out.append(table(["configuration", "kernels", "launches", "GPU time", "CPU time in step",
                      "GEMM kernels", "other kernels, eager", "other kernels, compiled"], rows))
    out.append("")
    differ = [n for n in order if n not in same]
    if differ:
        out.append("Where the GEMM kernels differ, eager → compiled:")
        out.append("")
        for n in differ:
            e, c = eager[n], comp[n]
            out.append(f"- {code(n)}: " + ", ".join(code(e.log.short(k)) for k, _ in gemm_multiset(e)) + " → "
                       + ", ".join(code(c.log.short(k)) for k, _ in gemm_multiset(c)))
        out.append("")
    blocks = [n for n in order if comp[n].cfg["model"] == "block" and diffs.get(f"{n}/step")]
    if blocks:
        out.append("`kcount diff` verdicts for the transformer blocks' `step` ranges (A = eager, B = compiled; "
                   "as kcount prints them):")
        out.append("")
        out.append("```")
        for n in blocks:
            out.append(f"{n}/step:")
            for line in diffs[f"{n}/step"]:
                out.append(f"  {line}")
        out.append("```")
        out.append("")
    return out


def non_gemm_text(run):
    """'pointwise ×2 (ATen); pointwise ×1 (Triton (Inductor): gelu, mul)' for the non-GEMM kernels of a step."""
    groups = collections.OrderedDict()
    for k, (cnt, g) in sorted(run.kernels().items()):
        d = run.log.decoded(k)
        if d["category"] == "GEMM":
            continue
        key = (d["category"], d["library"] or "no library")
        e = groups.setdefault(key, [0.0, []])
        e[0] += cnt
        if d["ops"]:
            e[1].append("+".join(d["ops"]))
    if not groups:
        return "-"
    return "; ".join(f"{cat} ×{fmt_num(n)} ({lib}{': ' + ', '.join(ops) if ops else ''})"
                     for (cat, lib), (n, ops) in sorted(groups.items()))


def config_sort_key(name):
    cfg = SWEEP.parse_config_name(name)
    return (SWEEP.MODELS.index(cfg["model"]), DTYPE_ORDER.index(cfg["dtype"]) if cfg.get("dtype") in DTYPE_ORDER
            else 9, cfg.get("norm", ""), cfg.get("mlp", ""), cfg.get("attn", ""), cfg.get("h", 0), cfg.get("t", 0))


def section_fusion(runs):
    comp = runs["compiled"]
    eager = runs["eager"]
    blocks = sorted((n for n in comp if comp[n].cfg["model"] == "block"), key=config_sort_key)
    out = ["## 5. What Inductor fused in the transformer block", ""]
    if not blocks:
        return out + ["No compiled transformer block in the logs.", ""]
    out.append("The operations come from the Triton kernels' names as kcount decodes them (Inductor writes the "
               "sorted ATen operations of the fused nodes into the name; rule and limits: "
               "[kernel-names.md](kernel-names.md#inductor-triton-kernels-documented-by-pytorchs-source)). "
               "Classes used below: activation = " + ", ".join(sorted(ACTIVATION_OPS)) + "; normalization = "
               + ", ".join(sorted(NORM_OPS_NAMED)) + ", or the decomposed form (" +
               ", ".join(sorted(NORM_OPS_DECOMPOSED)) + ").")
    out.append("")
    for n in blocks:
        c = comp[n]
        cfg = c.cfg
        out.append(f"### {code(n)}")
        out.append("")
        rows = []
        triton = []
        for k, (cnt, g) in sorted(c.kernels().items(), key=lambda x: (-x[1][1], x[0])):
            d = c.log.decoded(k)
            rows.append([code(c.log.short(k)), d["category"], d["library"] or "-",
                         md_escape(", ".join(d["ops"])) if d["ops"] else "-", fmt_num(cnt), fmt_ns(g)])
            if d["grammar"] == "inductor-triton":
                triton.append((k, d))
        out.append(f"Compiled: {fmt_num(c.kernels_per_step)} kernels per step, {fmt_ns(c.gpu_ns_per_step)} of GPU "
                   f"time per step.")
        out.append("")
        out.append(table(["kernel", "category", "library", "fused ops", "per step", "GPU time/step"], rows))
        out.append("")
        facts = []
        act = [(k, d) for k, d in triton if ACTIVATION_OPS & set(d["ops"])]
        for k, d in act:
            with_mul = "mul" in d["ops"]
            facts.append(f"the activation ({', '.join(sorted(ACTIVATION_OPS & set(d['ops'])))}) runs in "
                         f"{code(k)}" + (", together with the multiply (`mul`)" if with_mul else ""))
        if not act:
            facts.append("no Triton kernel names an activation op")
        norm = [(k, d) for k, d in triton if (NORM_OPS_NAMED | NORM_OPS_DECOMPOSED) & set(d["ops"])]
        for k, d in norm:
            ops = set(d["ops"])
            named = bool(NORM_OPS_NAMED & ops)
            if "add" in ops:
                extra = (" and also an `add` (with a named norm op, whose epsilon is inside it, this add is "
                         "the residual add)" if named else
                         " and an `add` (in the decomposed form this may be the epsilon of the norm, or the "
                         "residual add)")
            else:
                extra = " and no `add`"
            facts.append(f"{code(k)} holds normalization ops ({', '.join(sorted(ops & (NORM_OPS_NAMED | NORM_OPS_DECOMPOSED)))})"
                         + extra)
        if not norm:
            facts.append("no Triton kernel names a normalization op")
        adds_alone = [k for k, d in triton if d["ops"] and set(d["ops"]) <= {"add", "_to_copy", "view",
                                                                             "_unsafe_view", "clone"}]
        if adds_alone:
            facts.append("kernels with only an add (and copies/views): " + ", ".join(code(k) for k in adds_alone))
        unsplit = [k for k, d in triton if not d["ops"]]
        if unsplit:
            facts.append("kernels whose fused-op list kcount could not split unambiguously: "
                         + ", ".join(code(k) for k in unsplit))
        out.append("Read from the names: " + "; ".join(facts) + ".")
        out.append("")
        e = eager.get(n)
        if e:
            out.append(f"Eager, the same block: {fmt_num(e.kernels_per_step)} kernels per step, "
                       f"{fmt_ns(e.gpu_ns_per_step)} of GPU time per step; kernels of the layers that Inductor "
                       f"can fuse:")
            out.append("")
            for layer in ("norm1", "add1", "norm2", "mlp/act", "add2"):
                if layer in e.layers:
                    ks = e.kernels(layer)
                    out.append(f"- `{layer}`: " + (", ".join(f"{code(e.log.short(k))} ×{fmt_num(cnt)}"
                                                            for k, (cnt, g) in sorted(ks.items())) or "none"))
            out.append("")
    return out


def section_layer_time(runs, plots):
    eager, comp = runs["eager"], runs["compiled"]
    out = ["## 6. GPU time per layer", ""]
    blocks = sorted((n for n in eager if eager[n].cfg["model"] == "block"), key=config_sort_key)
    if blocks:
        layer_names = []
        for n in blocks:
            for layer, data in eager[n].layers.items():
                if data["kernels"] and layer not in layer_names and layer:
                    layer_names.append(layer)
        header = ["layer"] + [code(n.replace("block ", "").split(" dtype=")[0]) for n in blocks]
        rows = []
        for layer in layer_names:
            row = [code(layer)]
            for n in blocks:
                d = eager[n].layers.get(layer)
                if d and d["kernels"]:
                    tot = eager[n].gpu_ns_per_step
                    row.append(f"{fmt_ns(d['gpu_ns'])} ({100 * d['gpu_ns'] / tot:.1f}%)" if tot else fmt_ns(d["gpu_ns"]))
                else:
                    row.append("-")
            rows.append(row)
        rows.append(["**step, eager**"] + [fmt_ns(eager[n].gpu_ns_per_step) for n in blocks])
        rows.append(["**step, compiled**"] + [fmt_ns(comp[n].gpu_ns_per_step) if n in comp else "-" for n in blocks])
        shape = SWEEP.parse_config_name(blocks[0])
        out.append(f"Transformer blocks (bf16, T={shape['t']} tokens, H={shape['h']}, I={shape['i']}), eager, GPU "
                   f"time per step in each layer's range (share of the step):")
        out.append("")
        out.append(table(header, rows))
        out.append("")
        if plots:
            bars, segs = [], {}
            for n in blocks:
                c = SWEEP.parse_config_name(n)
                for mode, r in (("eager", eager.get(n)), ("compiled", comp.get(n))):
                    if not r:
                        continue
                    bars.append(f"{c['norm']}/{c['mlp']}/{c['attn']}\n{mode}")
                    for k, (cnt, g) in r.kernels().items():
                        d = r.log.decoded(k)
                        key = d["category"] + (" (Triton)" if d["grammar"] == "inductor-triton" else "")
                        segs.setdefault(key, {})
                        segs[key][len(bars) - 1] = segs[key].get(len(bars) - 1, 0.0) + g / 1e3
            segments = [(k, [segs[k].get(i, 0.0) for i in range(len(bars))]) for k in sorted(segs)]
            img = plots.stacked("Transformer block: GPU time per step by decoded kernel category "
                                "(norm/mlp/attention)", bars, segments, "µs per step", "block-categories.png")
            out.append(f"![GPU time per step by kernel category]({img})")
            out.append("")
    gg = [r for r in eager.values() if r.cfg["model"] == "geglu"]
    if gg:
        hs = sorted({r.cfg["h"] for r in gg})
        h = 4096 if 4096 in hs else hs[-1]
        out.append(f"GeGLU MLP, H={h}, eager: GPU time per step, and in parentheses the share of the pointwise "
                   f"`act` range (GELU and multiply; the rest are the three GEMMs):")
        out.append("")
        by = {(r.cfg["dtype"], r.cfg["t"]): r for r in gg if r.cfg["h"] == h}
        dts = [d for d in DTYPE_ORDER if any(k[0] == d for k in by)]
        rows = []
        for t in sorted({k[1] for k in by}):
            row = [t]
            for dt in dts:
                r = by.get((dt, t))
                if not r:
                    row.append("-")
                    continue
                act = r.layers.get("act", {}).get("gpu_ns", 0.0)
                tot = r.gpu_ns_per_step
                row.append(f"{fmt_ns(tot)} ({100 * act / tot:.1f}%)" if tot else "-")
            rows.append(row)
        out.append(table(["T"] + [DTYPE_TEXT[d] for d in dts], rows))
        out.append("")
    if not blocks and not gg:
        out.append("No eager block or GeGLU configuration in the logs.")
        out.append("")
    return out


def section_undecoded(logs):
    out = ["## 7. Kernel names kcount could not decode", ""]
    unknown = collections.OrderedDict()
    partial = collections.OrderedDict()
    total = set()
    for log in logs:
        for name, k in sorted(log.kernels.items()):
            total.add(name)
            d = k["decoded"]
            if not d["grammar"]:
                e = unknown.setdefault(name, [short_for_table(name, k["short"]), 0, set()])
                e[1] += k["count"]
                e[2].update(log.shown for _ in [0])
            elif d["category"] == "GEMM" and not d["tile"] and d["grammar"] not in ("cublas-kernel", "cublas-namespace"):
                partial.setdefault(name, (short_for_table(name, k["short"]), d["grammar"]))
    out.append(f"Distinct kernel names over all logs: {len(total)}; matched by no grammar "
               f"(category `other`, no library): {len(unknown)}.")
    out.append("")
    if unknown:
        out.append(table(["kernel", "count", "logs"],
                         [[code(v[0]), v[1], ", ".join(code(x) for x in sorted(v[2]))] for v in unknown.values()]))
        out.append("")
    if partial:
        out.append("GEMM kernels whose name matched a grammar but gave no tile:")
        out.append("")
        for name, (short, grammar) in partial.items():
            out.append(f"- {code(short)} (grammar {grammar})")
        out.append("")
    return out


def section_answers(runs, logs):
    """The short answers, each computed the same way as in its section below."""
    eager, comp = runs["eager"], runs["compiled"]
    out = ["## Answers in short", ""]
    for model, layer, what in (("linear", "linear", "Linear"), ("geglu", "gate", "GeGLU gate")):
        for dt in DTYPE_ORDER:
            tokens, hiddens, labels, names = gemm_grid(eager, model, layer, dt)
            if not tokens:
                continue
            distinct = {lab for row in labels for lab in row if lab != "-"}
            changes = sum(1 for row in labels for a, b in zip(row, row[1:]) if a != b)
            out.append(f"- {what}, {DTYPE_TEXT[dt]}: {plural(len(distinct), 'distinct tile choice')} over "
                       f"{len(tokens) * len(hiddens)} shapes; the choice changes {changes} times along T "
                       f"(summed over {plural(len(hiddens), 'hidden size')}).")
    pairs = compare_dtypes(eager, "bf16", "fp16")
    if pairs:
        same = sum(1 for p in pairs if family(p[3], p[1]) == family(p[4], p[2]))
        same_name = sum(1 for p in pairs if p[1] == p[2])
        out.append(f"- bf16 vs fp16: the same kernel family in {same} of {len(pairs)} GEMMs, the identical kernel "
                   f"name in {same_name} of {len(pairs)}.")
    pairs = compare_dtypes(eager, "fp32", "tf32")
    if pairs:
        ratios = [p[5] / p[6] for p in pairs if p[6] > 0]
        same_name = sum(1 for p in pairs if p[1] == p[2])
        out.append(f"- fp32, TF32 off vs on: the identical kernel name in {same_name} of {len(pairs)} GEMMs; GPU "
                   f"time TF32 off / on: median {fmt_ratio(statistics.median(ratios))}.")
    both = [n for n in comp if n in eager]
    if both:
        same = sum(1 for n in both if gemm_multiset(eager[n]) == gemm_multiset(comp[n]))
        fewer = sum(1 for n in both if comp[n].kernels_per_step < eager[n].kernels_per_step)
        out.append(f"- eager vs torch.compile: identical GEMM kernels in {same} of {len(both)} configurations; "
                   f"fewer kernels per step when compiled in {fewer} of {len(both)}.")
    blocks = [n for n in comp if comp[n].cfg["model"] == "block"]
    if blocks:
        act_mul = norm_add = 0
        for n in blocks:
            c = comp[n]
            ds = [c.log.decoded(k) for k in c.kernels() if c.log.decoded(k)["grammar"] == "inductor-triton"]
            act_mul += any(ACTIVATION_OPS & set(d["ops"]) and "mul" in d["ops"] for d in ds)
            norm_add += any((NORM_OPS_NAMED | NORM_OPS_DECOMPOSED) & set(d["ops"]) and "add" in d["ops"] for d in ds)
        out.append(f"- Inductor in the compiled blocks: the activation and the multiply in one Triton kernel in "
                   f"{act_mul} of {len(blocks)} blocks; a Triton kernel holding normalization ops and an `add` in "
                   f"{norm_add} of {len(blocks)} (section 5 says which add).")
    unknown = {name for log in logs for name, k in log.kernels.items() if not k["decoded"]["grammar"]}
    total = {name for log in logs for name in log.kernels}
    out.append(f"- Kernel names no grammar decoded: {len(unknown)} of {len(total)}.")
    out.append("")
    return out


def diff_verdicts(kcount, logs):
    eager = [l for l in logs if l.mode == "eager"]
    comp = [l for l in logs if l.mode == "compiled"]
    if len(eager) != 1 or len(comp) != 1:
        return {}
    d = json.loads(run_kcount(kcount, "diff", "--format", "json", eager[0].path, comp[0].path))
    return {v["unit"]: v["lines"] for v in d["verdicts"]}


def generate(args):
    kcount = args.kcount or os.environ.get("KCOUNT") or os.path.join(ROOT, "build", "bin", "kcount")
    logs = []
    for p in args.logs:
        rel = os.path.relpath(os.path.abspath(p), ROOT)
        shown = rel if not rel.startswith("..") else os.path.basename(p)
        logs.append(Log(kcount, p, shown))
    runs, cfgs = collect_runs(logs)
    plots = None if args.no_plots else Plots(args.out_dir)
    diffs = diff_verdicts(kcount, logs)
    cmd = "/usr/bin/python3 scripts/case_study.py " + " ".join(l.shown for l in logs)
    lines = [
        "# Case study: GEMM kernel choice and Inductor fusion on the GPU, read with kcount",
        "",
        "<!-- Generated by scripts/case_study.py from the logs below; do not edit by hand. -->",
        "",
        "Regenerate (no GPU needed; kcount built in `build/`, Debian 12's `python3-matplotlib`):",
        "",
        "```",
        cmd,
        "```",
        "",
        "The logs were recorded with `examples/run_sweep.sh` (one `kcount run` of `examples/sweep.py` per mode). "
        "The sweep answers the questions a single Linear/GeGLU example leaves open: does cuBLAS pick different "
        "tiles at different shapes, do bf16 and fp16 select different kernels, what does TF32 change for fp32, "
        "and how far does Inductor fuse activations, normalization and residual adds. Every number and every "
        "sentence with a number below is computed from the logs by the script.",
        "",
    ]
    lines += section_answers(runs, logs)
    lines += section_sources(logs, runs, cfgs)
    lines += section_compiled_subset(runs)
    lines += section_gemm_choice(runs, plots)
    lines += section_linear_kernels(runs)
    lines += section_bf16_fp16(runs)
    lines += section_fp32_tf32(runs, plots)
    lines += section_eager_vs_compiled(runs, diffs)
    lines += section_fusion(runs)
    lines += section_layer_time(runs, plots)
    lines += section_undecoded(logs)
    text = "\n".join(lines).rstrip("\n") + "\n"
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, DOC_NAME), "w", encoding="utf-8") as f:
        f.write(text)
    if plots:
        # Remove plots of an earlier run that this run did not write.
        img_dir = os.path.join(args.out_dir, IMG_DIR)
        for name in sorted(os.listdir(img_dir)) if os.path.isdir(img_dir) else []:
            if name.endswith(".png") and name not in plots.files:
                os.unlink(os.path.join(img_dir, name))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description="Generate docs/case-study.md from the sweep logs")
    p.add_argument("logs", nargs="+", help="kcount logs of examples/sweep.py (eager and compiled)")
    p.add_argument("--kcount", default=None, help="kcount tool (default: $KCOUNT, else build/bin/kcount)")
    p.add_argument("--out-dir", default=os.path.join(ROOT, "docs"),
                   help="folder for case-study.md and case-study/*.png (default: docs)")
    p.add_argument("--no-plots", action="store_true", help="write no PNG (for machines without matplotlib)")
    return generate(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
