#!/usr/bin/env python3
"""The Python package `kcount` (python/), installed as a user installs it, on real pandas.

1. `pip install --no-index --no-build-isolation` of python/ into a fresh virtual environment made with
   `--system-site-packages` (Debian's python3-pandas); `import kcount` imports neither pandas nor
   matplotlib.
2. Every shipped log (examples/logs/*.kcount, tests/data/*.kcount) loaded: per range, the inclusive
   and self kernels, launches and GPU ns equal `kcount summary --format json`'s; the self columns, the
   per-range kernel rows and the kernels per name add up exactly to the log's whole-process counts;
   totals, states and windows as the JSON gives them; several logs loaded at once.
3. kcount.diff: verdict lines, range changes and kernel identities as `kcount diff --format json`.
4. Errors: a damaged log raises KcountError with the tool's stderr and exit status 2; no tool found;
   the tool found through KCOUNT_TOOL, PATH and the build tree's share/kcount/python.
5. Control: without libkcount.so, start/stop/window do nothing and warn once; with it preloaded
   (paused, NVTX ranges pushed through an NVTX library), `with kcount.window()` records exactly the
   ranges of its block. Notebook HTML; the plots (matplotlib's Agg backend) on a shipped log and, for
   kernels per step across capture windows, on a log with windows written by kc_make_log.

Usage: test_python_package.py BUILD_DIR SOURCE_DIR NVTX_EXPORT_LIB MAKE_LOG
(then re-runs itself inside the virtual environment with --inside). Python: KCOUNT_TEST_PYTHON, else
/usr/bin/python3 (Debian's, whose pandas is the one CI installs), else this interpreter.
"""
import glob
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, exit_status


def run(cmd, env=None, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def outside(build, source, nvtx_lib, make_log):
    """Makes the virtual environment, installs the package, runs the checks inside it."""
    py = os.environ.get("KCOUNT_TEST_PYTHON") or ("/usr/bin/python3" if os.path.exists("/usr/bin/python3")
                                                  else sys.executable)
    work = tempfile.mkdtemp(prefix="kcount-python-")
    try:
        venv = os.path.join(work, "venv")
        rc, out, err = run([py, "-m", "venv", "--system-site-packages", venv])
        if not check("python -m venv --system-site-packages (%s)" % py, rc == 0, err):
            return
        # A copy of python/, so that pip's build folder and egg-info land outside the source tree.
        src = os.path.join(work, "src")
        shutil.copytree(os.path.join(source, "python"), src, ignore=shutil.ignore_patterns("__pycache__", "build"))
        vpy = os.path.join(venv, "bin", "python")
        rc, out, err = run([vpy, "-m", "pip", "install", "--no-index", "--no-build-isolation", src])
        if not check("pip install --no-index --no-build-isolation ./python", rc == 0, out[-1500:] + err[-1500:]):
            return
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KCOUNT_TOOL", "LD_PRELOAD")}
        env["PYTHONPATH"] = os.path.dirname(os.path.abspath(__file__))  # checks.py only
        r = subprocess.run([vpy, os.path.abspath(__file__), "--inside", build, source, nvtx_lib, make_log, work], env=env,
                           timeout=1800)
        check("checks inside the virtual environment ran to the end", r.returncode in (0, 1),
              "exit status %d" % r.returncode)
        if r.returncode == 1:
            check("checks inside the virtual environment passed", False, "see the FAIL lines above")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__" and sys.argv[1:2] != ["--inside"]:
    outside(*(os.path.abspath(a) for a in sys.argv[1:5]))
    sys.exit(exit_status())

# ---- inside the virtual environment ---------------------------------------------------------------

BUILD, SOURCE, NVTX_LIB, MAKE_LOG, WORK = (os.path.abspath(a) for a in sys.argv[2:7])
KCOUNT = os.path.join(BUILD, "bin", "kcount")
LIB = os.path.join(BUILD, "lib", "libkcount.so")
import kcount  # noqa: E402
import pandas as pd  # noqa: E402


def tool_json(*args):
    rc, out, err = run([KCOUNT] + [str(a) for a in args] + ["--format", "json"])
    return rc, (json.loads(out) if rc == 0 else None), err


def shipped_logs():
    return sorted(glob.glob(os.path.join(SOURCE, "examples", "logs", "*.kcount")) +
                  glob.glob(os.path.join(SOURCE, "tests", "data", "*.kcount")))


def install_checks():
    check("kcount imported from the virtual environment, not the source tree: %s" % kcount.__file__,
          kcount.__file__.startswith(sys.prefix) and not kcount.__file__.startswith(SOURCE))
    rc, out, err = run([sys.executable, "-c", "import sys, kcount, kcount.torch, kcount_torch; "
                        "print(sorted(m for m in ('pandas', 'matplotlib', 'torch') if m in sys.modules))"])
    check("import kcount (and kcount.torch, kcount_torch) imports no pandas, matplotlib or torch: %s" % out.strip(),
          rc == 0 and out.strip() == "[]", err)
    check("pandas is the real one (%s)" % pd.__version__, hasattr(pd.DataFrame, "to_html"))


def ints(series):
    return [None if pd.isna(v) else int(v) for v in series]


def counts_of(c, keys=("launches", "kernels", "gpu_ns")):
    return [None if c is None else c.get(k) for k in keys]


def range_checks(name, log, data):
    j = data["logs"][0]
    rows = j["ranges"] or []
    fr = log.ranges
    check("%s: one ranges row per range path of the JSON (%d)" % (name, len(rows)),
          list(fr["path"]) == [r["path"] for r in rows] and list(fr["domain"]) == [r["domain"] for r in rows])
    for prefix, key in (("", "inclusive"), ("self_", "exclusive")):
        got = [list(t) for t in zip(*(ints(fr[prefix + k]) for k in ("launches", "kernels", "gpu_ns")))]
        want = [counts_of(r[key]) for r in rows]
        check("%s: %s kernels, launches, GPU ns per range equal the JSON's" % (name, key), got == want,
              [(r["path"], g, w) for r, g, w in zip(rows, got, want) if g != w][:5])
    check("%s: instances and cpu_ns per range equal the JSON's" % name,
          ints(fr["instances"]) == [r["instances"] for r in rows] and ints(fr["cpu_ns"]) == [r["cpu_ns"] for r in rows])
    overall = j["overall"]
    if overall is None:
        check("%s: no totals: no range rows, totals <NA>" % name, fr.empty and log.totals["kernels"].isna().all())
        return
    for k in ("launches", "kernels", "gpu_ns"):
        total = None if fr["self_" + k].isna().any() else int(fr["self_" + k].sum())
        check("%s: sum of self_%s over ranges = the whole process's %s (%s)" % (name, k, k, overall[k]),
              total == overall[k])
    t = log.totals.iloc[0]
    check("%s: totals frame = JSON totals and overall" % name,
          [ints(pd.Series([t[k]]))[0] for k in ("kernels", "launches", "unmatched_kernels", "gpu_ns")] ==
          [j["totals"][k] for k in ("kernels", "launches", "unmatched_kernels", "gpu_ns")] and
          [ints(pd.Series([t["overall_" + k]]))[0] for k in ("kernels", "launches", "gpu_ns")] ==
          counts_of(overall, ("kernels", "launches", "gpu_ns")))


def kernel_checks(name, log, data, names):
    j = data["logs"][0]
    if j["overall"] is None:
        return
    k = log.kernels
    per_range = k.groupby("range", sort=False)["count"].sum() if not k.empty else pd.Series(dtype="int64")
    self_k = log.ranges.set_index("path")["self_kernels"]
    check("%s: kernel rows of each range add up to its self kernels" % name,
          all(int(per_range.get(p, 0)) == int(v) for p, v in self_k.items() if not pd.isna(v)))
    check("%s: kernel rows add up to the whole process's kernels (%d)" % (name, j["overall"]["kernels"]),
          int(k["count"].sum()) == j["overall"]["kernels"])
    if j["gpu_time"] and not k.empty:
        check("%s: kernel rows' GPU ns add up to the whole process's" % name,
              int(k["gpu_ns"].sum()) == j["overall"]["gpu_ns"])
    # Per kernel name, against `kcount kernels` (which lists matched and unmatched records: unmatched
    # ones are the "(unmatched)" range there).
    by_name = k.groupby("name")["count"].sum() if not k.empty else pd.Series(dtype="int64")
    want = {}
    for e in names["kernels"]:
        n = e["count"] - e["ranges"].get("(unmatched)", 0)
        if n:
            want[e["name"]] = n
    check("%s: counts per kernel name = kcount kernels' (%d names)" % (name, len(want)),
          {n: int(c) for n, c in by_name.items()} == want)
    decoded = [c for c in ("library", "category", "dtype") if c in k.columns]
    check("%s: decoded fields are columns (%s)" % (name, ", ".join(decoded)), k.empty or len(decoded) == 3)


def load_checks():
    logs = shipped_logs()
    check("shipped logs found (%d)" % len(logs), len(logs) >= 8, logs)
    for path in logs:
        name = os.path.relpath(path, SOURCE)
        rc, data, err = tool_json("summary", path)
        rc2, names, err2 = tool_json("kernels", path)
        if not check("%s: kcount summary and kernels --format json exit 0" % name, rc == 0 and rc2 == 0, err + err2):
            continue
        log = kcount.load(path, tool=KCOUNT)
        check("%s: check frame: state %r as the JSON's" % (name, data["logs"][0]["state"]),
              list(log.check["state"]) == [data["logs"][0]["state"]] and
              bool(log.check["lossy"].iloc[0]) == data["logs"][0]["lossy"])
        check("%s: segments frame: %d windows as the JSON's" % (name, len(data["logs"][0]["segments"])),
              ints(log.segments["index"]) == [s["index"] for s in data["logs"][0]["segments"]] and
              ints(log.segments["kernels"]) == [s["kernels"] for s in data["logs"][0]["segments"]])
        range_checks(name, log, data)
        kernel_checks(name, log, data, names)
        if data["logs"][0].get("gpu_time") is False:  # KCOUNT_GPU_TIME=0: not measured is <NA>, a number column
            # graph_gpu_*: the graph launches' GPU spans of a KCOUNT_GPU_TIME=graphs log, measured (below).
            cols = [c for c in log.ranges.columns if c.endswith("gpu_ns") and "graph_gpu" not in c] + ["gpu_ns"]
            check("%s: GPU ns columns of a log without GPU times are Int64, all <NA>" % name,
                  all(str(log.ranges[c].dtype) == "Int64" and log.ranges[c].isna().all() for c in cols if c in log.ranges)
                  and str(log.kernels["gpu_ns"].dtype) == "Int64" and log.kernels["gpu_ns"].isna().all(),
                  {c: str(log.ranges[c].dtype) for c in cols if c in log.ranges})
        if data["logs"][0].get("graph_gpu_time"):  # KCOUNT_GPU_TIME=graphs: spans per range as the JSON's
            want = [r["exclusive"]["graph_gpu_ns"] for r in data["logs"][0]["ranges"]]
            check("%s: self_graph_gpu_ns per range = the JSON's (%d ns in all)" % (name, sum(want)),
                  str(log.ranges["self_graph_gpu_ns"].dtype) == "Int64" and ints(log.ranges["self_graph_gpu_ns"]) == want
                  and sum(want) > 0, list(log.ranges["self_graph_gpu_ns"]))
    examples = [os.path.join(SOURCE, "examples", "logs", n + ".kcount") for n in ("geglu-eager", "geglu-compiled",
                                                                                 "linear-eager")]
    both = kcount.load(examples, tool=KCOUNT)
    single = [kcount.load(p, tool=KCOUNT) for p in examples]
    check("several logs in one load: rows per log as loaded alone",
          [len(both.ranges[both.ranges["log"] == p]) for p in examples] == [len(s.ranges) for s in single] and
          [int(both.kernels.loc[both.kernels["log"] == p, "count"].sum()) for p in examples] ==
          [int(s.kernels["count"].sum()) for s in single])


def diff_checks():
    ex = os.path.join(SOURCE, "examples", "logs")
    pairs = [("geglu-eager", "geglu-compiled"), ("sweep-eager", "sweep-compiled"), ("linear-eager", "geglu-eager")]
    for a, b in pairs:
        pa, pb = os.path.join(ex, a + ".kcount"), os.path.join(ex, b + ".kcount")
        rc, data, err = tool_json("diff", pa, pb)
        d = kcount.diff(pa, pb, tool=KCOUNT)
        want = [(v["unit"], t) for v in data["verdicts"] for t in v["lines"]]
        check("diff %s %s: verdict lines as kcount diff --format json (%d)" % (a, b, len(want)),
              list(zip(d.verdicts["unit"], d.verdicts["text"])) == want)
        check("diff %s %s: steady state %r" % (a, b, data["steady_state"]), d.steady_state == data["steady_state"])
        rows = [r for r in data["ranges"]]
        fr = d.ranges.iloc[1:]
        check("diff %s %s: range rows and their kernel changes as the JSON's" % (a, b),
              list(fr["path"]) == [r["path"] for r in rows] and
              ints(fr["kernels_change"]) == [(r["change"] or {}).get("kernels") for r in rows] and
              ints(fr["gpu_ns_b"]) == [(r["b"] or {}).get("gpu_ns") for r in rows])
        check("diff %s %s: (overall) row as the JSON's" % (a, b),
              ints(d.ranges.iloc[:1]["kernels_a"]) == [data["overall"]["a"]["kernels"]] and
              ints(d.ranges.iloc[:1]["launches_change"]) == [data["overall"]["change"]["launches"]])
        kinds = {s: len(data["kernels"][s]) for s in ("same", "only_a", "only_b")}
        same = data["kernels"]["same"]
        change = (sum(k["count_b"] - k["count_a"] for k in same) + sum(k["count"] for k in data["kernels"]["only_b"]) -
                  sum(k["count"] for k in data["kernels"]["only_a"]))
        check("diff %s %s: kernel identities %s, count change %d" % (a, b, kinds, change),
              {s: int((d.kernels["status"] == s).sum()) for s in kinds} == kinds and
              int(d.kernels["count_change"].sum()) == change and
              sorted(ints(d.kernels.loc[d.kernels["status"] == "only_a", "count_a"])) ==
              sorted(k["count"] for k in data["kernels"]["only_a"]))
        page = d._repr_html_()
        check("diff %s %s: notebook HTML holds every verdict line" % (a, b),
              all(html.escape(t) in page for _, t in want))
    sides = [os.path.join(ex, n + ".kcount") for n in ("geglu-eager", "linear-eager")]
    rc, data, err = tool_json("diff", "-a", *sides, "-b", *sides)
    d = kcount.diff(sides, sides, tool=KCOUNT)
    check("diff with two logs a side (-a/-b): verdicts as the tool's",
          rc == 0 and list(d.verdicts["text"]) == [t for v in data["verdicts"] for t in v["lines"]])


def error_checks():
    src = os.path.join(SOURCE, "examples", "logs", "geglu-eager.kcount")
    bad = os.path.join(WORK, "damaged.kcount")
    with open(src, "rb") as f:
        blob = bytearray(f.read())
    blob[len(blob) // 2: len(blob) // 2 + 64] = b"\xff" * 64  # a chunk's bytes: its checksum fails
    with open(bad, "wb") as f:
        f.write(blob)
    rc, out, err = run([KCOUNT, "summary", bad, "--format", "json"])
    try:
        kcount.load(bad, tool=KCOUNT)
        check("damaged log: KcountError raised", False, "no exception")
    except kcount.KcountError as e:
        check("damaged log: KcountError with the tool's exit status %d and its stderr" % rc,
              rc == 2 and e.returncode == 2 and e.message == err.strip() and "error" in e.message, (e.returncode, str(e)))
    salvaged = kcount.load(bad, tool=KCOUNT, salvage=True)
    check("damaged log, salvage=True: read, state %r" % salvaged.check["state"].iloc[0],
          salvaged.check["state"].iloc[0] == "damaged" and not salvaged.issues.empty)
    try:
        kcount.load(os.path.join(WORK, "missing.kcount"), tool=KCOUNT)
        check("missing log: KcountError raised", False)
    except kcount.KcountError as e:
        check("missing log: KcountError, exit status 2, the tool's reason: %s" % e.message,
              e.returncode == 2 and "no such file" in e.message.lower())
    try:
        kcount.diff(bad, src, tool=KCOUNT)
        check("diff of a damaged log: KcountError raised", False)
    except kcount.KcountError as e:
        check("diff of a damaged log: KcountError with exit status 2", e.returncode == 2)

    # Where the tool is found: KCOUNT_TOOL, PATH, the build tree's share/kcount/python; none: an error.
    empty = os.path.join(WORK, "emptybin")
    os.makedirs(empty, exist_ok=True)
    probe = ("import kcount, json\ntry:\n    print(json.dumps([kcount.find_tool(), None]))\n"
             "except kcount.KcountError as e:\n    print(json.dumps([None, [e.message, e.returncode]]))\n")
    base = {k: v for k, v in os.environ.items() if k not in ("KCOUNT_TOOL", "PYTHONPATH")}
    cases = [("KCOUNT_TOOL", dict(base, KCOUNT_TOOL=KCOUNT, PATH=empty), sys.executable, KCOUNT),
             ("PATH", dict(base, PATH=os.path.dirname(KCOUNT) + ":" + empty), sys.executable, KCOUNT),
             ("build tree", dict(base, PATH=empty, PYTHONPATH=os.path.join(BUILD, "share", "kcount", "python")),
              "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable, KCOUNT),
             ("none", dict(base, PATH=empty), sys.executable, None)]
    for what, env, py, want in cases:
        rc, out, err = run([py, "-c", probe], env=env)
        found, error = json.loads(out) if rc == 0 else (None, None)
        if want:
            check("tool found through %s: %s" % (what, found),
                  found is not None and os.path.realpath(found) == os.path.realpath(want), err)
        else:
            check("no tool: KcountError without exit status: %s" % (error and error[0]),
                  found is None and error is not None and error[1] is None and "KCOUNT_TOOL" in error[0], err)


CONTROL_NO_LIBRARY = """
import json, warnings, kcount
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    res = [kcount.start(), kcount.stop()]
    ran = False
    with kcount.window():
        ran = True
    res.append(kcount.start(duration=1))
print(json.dumps({"res": res, "ran": ran, "status": kcount.status(),
                  "warnings": [(x.category.__name__, str(x.message)) for x in w]}))
"""

CONTROL_WITH_LIBRARY = """
import ctypes, json, sys, kcount
nvtx = ctypes.CDLL(sys.argv[1])
nvtx.nvtxRangePushA.argtypes = [ctypes.c_char_p]
def ranged(name):
    nvtx.nvtxRangePushA(name.encode())
    nvtx.nvtxRangePop()
ranged("before")
before = kcount.status()["mode"]
with kcount.window():
    ranged("inside")
    ranged("inside")
    inside = kcount.status()["window_open"]
ranged("after")
try:
    kcount.stop()
    error = None
except kcount.ControlError as e:
    error = e.message
print(json.dumps({"before": before, "inside": inside, "after": kcount.status()["window_open"],
                  "error": error}))
"""


def control_checks():
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH",
                                                           "NVTX_INJECTION64_PATH")}
    rc, out, err = run([sys.executable, "-c", CONTROL_NO_LIBRARY], env=env)
    p = json.loads(out) if rc == 0 else {}
    warned = p.get("warnings", [])
    check("without the library: start/stop/window are no-ops (None), the block runs, status None",
          p.get("res") == [None, None, None] and p.get("ran") is True and p.get("status") is None, err)
    check("without the library: exactly one KcountWarning: %s" % warned,
          len(warned) == 1 and warned[0][0] == "KcountWarning" and "not started with libkcount.so" in warned[0][1])

    out_log = os.path.join(WORK, "window.kcount")
    env = dict(env, LD_PRELOAD=LIB, KCOUNT_OUTPUT=out_log, KCOUNT_START="paused", KCOUNT_CONTROL="on",
               KCOUNT_CONTROL_DIR=os.path.join(WORK, "ctl"), KCOUNT_LOG_LEVEL="warn")
    rc, out, err = run([sys.executable, "-c", CONTROL_WITH_LIBRARY, NVTX_LIB], env=env, timeout=120)
    p = json.loads(out.strip().splitlines()[-1]) if rc == 0 and out.strip() else {}
    check("with the library: paused before, window open inside the block, closed after: %s" % p,
          p.get("before") == "paused" and p.get("inside") is True and p.get("after") is False, err[-1500:])
    check("with the library: stop() with no window open raises ControlError: %s" % p.get("error"),
          bool(p.get("error")))
    if not os.path.exists(out_log):
        check("with the library: the log was written", False, err[-1500:])
        return
    log = kcount.load(out_log, tool=KCOUNT)
    named = log.ranges[log.ranges["depth"] == 1]
    check("with the library: the log holds the block's ranges only (inside x2): %s" %
          list(zip(named["path"], ints(named["instances"]))),
          list(named["path"]) == ["inside"] and ints(named["instances"]) == [2])
    check("with the library: one capture window: %s" % list(log.segments["reason"]),
          len(log.segments) == 1 and list(log.segments["reason"]) == ["ctl"])


def view_checks():
    ex = os.path.join(SOURCE, "examples", "logs")
    log = kcount.load(os.path.join(ex, "geglu-eager.kcount"), tool=KCOUNT)
    page = log._repr_html_()
    check("Log._repr_html_: state line and the first range rows",
          "complete" in page and "<table" in page and "step" in page)
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        check("matplotlib importable for the plots (python3-matplotlib)", False)
        return
    ax = log.plot_gpu_time(top=5)
    bars = [p.get_width() for p in ax.patches]
    top = log.ranges[log.ranges["self_gpu_ns"] > 0].nlargest(5, "self_gpu_ns")["self_gpu_ns"]
    check("plot_gpu_time: the 5 largest self GPU times, in ms",
          sorted(round(b, 6) for b in bars) == sorted(round(int(v) / 1e6, 6) for v in top))
    check("segment_ranges of a log without windows: empty", log.segment_ranges().empty)
    # Three capture windows whose steps run 3, then 4, then 2 kernels each (kc_make_log), one step range
    # twice per window, a setup range outside every step.
    script = ["push setup", "kernel 500 setup_kernel", "pop", "segment"]
    for n in (3, 4, 2):
        for _ in range(2):
            script += ["push step"] + ["kernel 1000 k%d" % i for i in range(n)] + ["pop"]
        script.append("segment")
    windowed = os.path.join(WORK, "windows.kcount")
    r = subprocess.run([MAKE_LOG, windowed], input="\n".join(script) + "\n", capture_output=True, text=True)
    if not check("kc_make_log wrote a log with 4 windows", r.returncode == 0, r.stderr):
        return
    w = kcount.load(windowed, tool=KCOUNT)
    seg = w.segment_ranges()
    check("segment_ranges: the windows' ranges (%d windows)" % len(w.segments),
          ints(w.segments["index"]) == [0, 1, 2, 3] and sorted(set(ints(seg["segment"]))) == [0, 1, 2, 3] and
          ints(seg.loc[seg["path"] == "step", "kernels"]) == [6, 8, 4])
    check("steady_state: the most repeated range (%s)" % w.steady_state(), w.steady_state() == "step")
    lines = w.plot_kernels_per_step().get_lines()
    check("plot_kernels_per_step: kernels per step in each window, 3 4 2",
          len(lines) == 1 and list(lines[0].get_xdata()) == [1, 2, 3] and list(lines[0].get_ydata()) == [3, 4, 2])


def held_sum_checks():
    """A kernel ending at 2^64 - 1 ns (a crafted log): GPU time sums beyond Int64 stay exact."""
    held = os.path.join(WORK, "held.kcount")
    r = subprocess.run([MAKE_LOG, held], input="push step\nkernel 18446744073709551615 K\nkernel 100 K\npop\n",
                       capture_output=True, text=True)
    rc, data, err = tool_json("summary", held)
    if not check("kc_make_log wrote a log with a kernel ending at 2^64 - 1", r.returncode == 0 and rc == 0, r.stderr):
        return
    want = [x["inclusive"]["gpu_ns"] for x in data["logs"][0]["ranges"]]
    log = kcount.load(held, tool=KCOUNT)
    check("sums past 2^63 - 1 stay exact Python ints: %s" % want,
          max(want) >= 2 ** 63 and list(log.ranges["gpu_ns"]) == want and log.ranges["kernels"].dtype == "Int64")
    d = kcount.diff(held, held, tool=KCOUNT)
    check("diff of such logs: no gpu_ns_change column (not known), count_change 0",
          "gpu_ns_change" not in d.kernels.columns and ints(d.kernels["count_change"]) == [0])


if __name__ == "__main__":
    install_checks()
    load_checks()
    diff_checks()
    error_checks()
    control_checks()
    view_checks()
    held_sum_checks()
    sys.exit(exit_status())
