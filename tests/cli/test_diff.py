#!/usr/bin/env python3
"""`kcount diff` as a PyTorch user reads it (docs/usage.md, "kcount diff A B"):

- the verdicts start with the most repeated range (`step` of the shipped GeGLU logs; every configuration's
  `step` of the shipped sweep logs) and end with the whole run;
- the whole run's verdict says when its totals are not comparable (the sweeps ran different
  configurations), and not when the runs did the same work (GeGLU eager against compiled);
- the kernels section gives each kernel's GPU time in A and B and the change, largest first;
- no verdict line is longer than about 300 characters;
- `diff -a X Y -b Z`: logs of one side from different command lines are named once on stderr;
- memory operations (copies, memsets) get their count and GPU time per side, apart from the kernels';
- sides that share files: "every difference is zero" only when they hold the same files; a side holding the
  other's file among others, or sides sharing some files, are said as such;
- JSON: a CPU time that was not measured (no instance: overall, `(no range)`) is null, as in summary;
- CSV: the table's ranges and the kernels section's kernels, one row each, with the JSON's numbers.

Usage: test_diff.py BUILD_DIR [KC_MAKE_LOG]
"""
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = os.path.join(ROOT, "examples", "logs")
GEGLU = (os.path.join(LOGS, "geglu-eager.kcount"), os.path.join(LOGS, "geglu-compiled.kcount"))
SWEEP = (os.path.join(LOGS, "sweep-eager.kcount"), os.path.join(LOGS, "sweep-compiled.kcount"))
MAX_LINE = 300


def unwrap(out):
    """The text with each wrapped verdict line joined again (a continuation starts with 6 spaces or more)."""
    return re.sub(r"\n {6,}", " ", out)


def verdict_headers(out):
    return [l for l in unwrap(out).splitlines() if l.startswith("verdict for ")]


def verdict_lines(out):
    lines, inside = [], False
    for l in unwrap(out).splitlines():
        if l.startswith("verdict for "):
            inside = True
        elif inside and l.startswith("  "):
            lines.append(l[2:])
    return lines


UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}


def ns(text):
    m = re.fullmatch(r"([0-9.]+) (ns|µs|ms|s)", text)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def kernel_rows(out):
    """The kernels section's rows: (in, GPU A, GPU B) with durations in ns (None for '-')."""
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("kernels (whole run"))
    rows = []
    for l in lines[start + 2:]:
        if not l.startswith("  "):
            break
        m = re.match(r"  (same|only A|only B)\s.*\s(-|[0-9.]+ (?:ns|µs|ms|s))\s+(-|[0-9.]+ (?:ns|µs|ms|s))\s+(\S+ \S+ \(\S+\)|-)$", l)
        rows.append((m.group(1), ns(m.group(2)), ns(m.group(3)), m.group(4)) if m else (l, None, None, None))
    return lines[start], lines[start + 1], rows


def test_geglu():
    r = kcount("diff", "--all", *GEGLU)
    check("geglu: diff exit 0, nothing on stderr", r.returncode == 0 and r.stderr == "", r.stderr)
    heads = verdict_headers(r.stdout)
    check("geglu: the steady state (step, 20 instances) is the first verdict",
          heads[:1] == ["verdict for step (most repeated range: 20 instances in A, 20 in B):"], heads)
    check("geglu: the whole run is the last verdict", heads[-1:] == ["verdict for the whole run:"], heads)
    check("geglu: by instances (20, 5, 1), then the whole run",
          heads == ["verdict for step (most repeated range: 20 instances in A, 20 in B):", "verdict for warmup/step:",
                    "verdict for warmup:", "verdict for the whole run:"], heads)
    check("geglu: same work (5 warm-up steps, 20 steps each): whole-run totals compared",
          "not comparable" not in r.stdout)
    table = [re.split(r"\s{2,}", l)[0] for l in r.stdout.split("\n\n")[1].splitlines()[2:]]
    check("geglu: a range only in B is listed under its parent (warmup/step/mlp right after A's children of "
          "warmup/step, step/mlp after step's), not after every range of A",
          table == ["(overall)", "(no range)", "warmup", "warmup/step", "warmup/step/gate", "warmup/step/up",
                    "warmup/step/act", "warmup/step/down", "warmup/step/mlp", "step", "step/gate", "step/up",
                    "step/act", "step/down", "step/mlp"], table)
    overall = next((re.split(r"\s{2,}", l.strip()) for l in r.stdout.splitlines() if l.startswith("(overall) ")), [])
    check("geglu: (overall) shows no instances ('-', it is no range)", overall[1:3] == ["-", "-"], overall[:4])
    order = [x["path"] for x in json.loads(kcount("diff", "--format", "json", *GEGLU).stdout)["ranges"]]
    check("geglu: the JSON's ranges are in the same order", order == table[1:], order)
    j = json.loads(kcount("diff", "--format", "json", *GEGLU).stdout)
    check("geglu json: the same order, steady_state step, work_differs null",
          [v["unit"] for v in j["verdicts"]] == ["step", "warmup/step", "warmup", "(overall)"] and j.get("steady_state") == "step"
          and j["overall"].get("work_differs", 0) is None,
          (j.get("steady_state"), j["overall"].get("work_differs")))

    head, cols, rows = kernel_rows(r.stdout)
    check("geglu: kernels section heading",
          head.startswith("kernels (whole run, matched by decoded identity, largest GPU time first): 4 same, 2 only in A, 2 only in B"), head)
    check("geglu: kernels columns named",
          all(x in cols for x in ("category", "kernel", "count A", "GPU A", "change")), cols)
    check("geglu: 8 kernel rows with GPU times",
          len(rows) == 8 and all(g is not None or h is not None for _, g, h, _ in rows), rows)
    cost = [max(g or 0, h or 0) for _, g, h, _ in rows]
    check("geglu: kernel rows by GPU time, largest first", cost == sorted(cost, reverse=True), cost)
    first = r.stdout.splitlines()[r.stdout.splitlines().index(head) + 2]
    check("geglu: the costliest kernel (the 192x192 GEMM, 23.6 ms) first",
          "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_TNN" in first and "23.6 ms" in first, first)
    fused = [l for l in r.stdout.splitlines() if "triton_poi_fused__unsafe_view_gelu_mul_0" in l and l.startswith("  only B")]
    check("geglu: the fused kernel's row: B's GPU time, new",
          len(fused) == 1 and "5.43 ms" in fused[0] and "(new)" in fused[0], fused)
    long_lines = [l for l in verdict_lines(r.stdout) if len(l) > MAX_LINE]
    check(f"geglu: no verdict line over {MAX_LINE} characters", not long_lines, long_lines)


def test_sweep():
    r = kcount("diff", "--all", *SWEEP)
    check("sweep: diff exit 0", r.returncode == 0, r.stderr)
    heads = verdict_headers(r.stdout)
    j = json.loads(kcount("diff", "--format", "json", *SWEEP).stdout)
    units = [v["unit"] for v in j["verdicts"]]
    both = {p["path"]: p for p in j["ranges"] if p["in"] == "both" and p["a"]["kernels"] and p["b"]["kernels"]}
    repeats = [min(both[u]["a"]["instances"], both[u]["b"]["instances"]) for u in units if u in both]
    check("sweep: verdicts by instances, most first (3 per configuration's step)",
          len(repeats) > 10 and repeats == sorted(repeats, reverse=True) and repeats[0] == 3, repeats)
    # Each configuration's timed steps (`CONFIG/step`, 3 instances) lead, with the ranges inside them that
    # ran as often (a linear configuration's step/linear), in sweep order.
    steps = [u for u in both if u.endswith("/step") and u.count("/") == 1]
    lead = units[:repeats.count(3)]
    check("sweep: every configuration's step verdict first, in sweep order; warm-up and setup after",
          len(steps) > 10 and all(s in lead for s in steps) and [u for u in lead if u in steps] == steps
          and all(u.split("/")[0] + "/step" in steps and "/warmup" not in u for u in lead), lead[:8])
    check("sweep: the whole run last",
          units[-1] == "(overall)" and heads[-1] == "verdict for the whole run:", heads[-1:])
    check("sweep: the first verdict names its instances",
          heads[0].startswith("verdict for ") and "(most repeated range: 3 instances in A, 3 in B):" in heads[0], heads[0])
    work = j["overall"].get("work_differs")
    check("sweep json: configurations of eager only, warm-up steps 1 against 2",
          work is not None and work["only_a"] and any(d["path"].endswith("/warmup/step") for d in work["instances"]), work)
    whole = unwrap(r.stdout[r.stdout.index("verdict for the whole run:"):]).splitlines()
    check("sweep: the whole run says its totals are not comparable, and why, in one line",
          whole[1].startswith("  whole-run totals not comparable: the runs did different work (instances differ: ")
          and "top-level ranges only in A: " in whole[1] and " more" in whole[1] and len(whole[1]) <= MAX_LINE + 2, whole[1])
    long_lines = [l for l in verdict_lines(r.stdout) if len(l) > MAX_LINE]
    check(f"sweep: no verdict line over {MAX_LINE} characters", not long_lines, long_lines[:2])
    _, _, rows = kernel_rows(r.stdout)
    cost = [max(g or 0, h or 0) for _, g, h, _ in rows]
    check("sweep: kernel rows by GPU time, largest first",
          len(rows) > 10 and cost == sorted(cost, reverse=True), cost[:10])


def test_pooled_programs(work):
    def log(name, cmd):
        path = os.path.join(work, name)
        script = (f"meta command_line {cmd}\n" if cmd else "") + "push step\nkernel 100 k\npop\n"
        subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
        return path

    r0, r1 = log("r0.kcount", "python3 train.py --steps 20"), log("r1.kcount", "python3 train.py --steps 20")
    other = log("other.kcount", "python3 eval.py")
    r = kcount("diff", "-a", r0, r1, "-b", other)
    check("diff -a of one program: no warning", r.returncode == 0 and r.stderr == "", r.stderr)
    s0, s1 = log("s0.kcount", "python3 train.py --steps 20"), log("s1.kcount", "python3 eval.py")
    r = kcount("diff", "-a", r0, r1, other, "-b", s0, s1)
    warned = [l for l in r.stderr.splitlines() if "different command lines" in l]
    check("diff -a/-b of two programs each: one warning per side",
          r.returncode == 0 and len(warned) == 2 and len(r.stderr.splitlines()) == 2, r.stderr)
    check("diff: side A's warning names each command line with its logs",
          any(l.startswith("kcount: diff: warning: the 3 logs of A come from 2 different command lines") and
              f"`python3 train.py --steps 20` ({r0}, {r1}); `python3 eval.py` ({other})" in l for l in warned), warned)
    check("diff: side B's warning",
          any("the 2 logs of B come from 2 different command lines" in l for l in warned), warned)
    r = kcount("diff", *GEGLU)
    check("diff A B (one log a side): no warning, even though the programs differ",
          "command lines" not in r.stderr, r.stderr)


def test_shared_files(work):
    """The same-file warning only when both sides are the same files; a side that holds the other's file
    among others is said as such, and so are sides that share some files."""
    eager, compiled = GEGLU
    same = [l for l in kcount("diff", eager, eager).stderr.splitlines() if "hold the same file" in l]
    check("diff X X: every difference is zero", len(same) == 1 and "every difference is zero" in same[0], same)
    link = os.path.join(work, "eager-link.kcount")
    os.symlink(eager, link)
    r = kcount("diff", "-a", eager, compiled, "-b", compiled, link)
    check("diff -a X Y -b Y X' (X' a link to X): the same files", "hold the same files: every difference is zero" in r.stderr,
          r.stderr)
    r = kcount("diff", "-a", eager, "-b", eager, compiled)
    check("diff -a X -b X Y: not called the same file", "same file" not in r.stderr and "is zero" not in r.stderr,
          r.stderr)
    check("diff -a X -b X Y: B holds A's file and another, named",
          f"B ({eager}, {compiled}) holds A's file ({eager}) and 1 other file ({compiled}): a side sums its logs, so "
          f"every change (B - A) is that file's numbers" in r.stderr, r.stderr)
    r = kcount("diff", "-a", eager, compiled, "-b", eager)
    check("diff -a X Y -b X: A holds B's file and another", "A (" in r.stderr and "holds B's file" in r.stderr and
          "is minus that file's numbers" in r.stderr and "is zero" not in r.stderr, r.stderr)
    other = SWEEP[0]
    r = kcount("diff", "-a", eager, other, "-b", eager, compiled)
    check("diff -a X Y -b X Z: the shared file named, its numbers cancel out",
          f"both hold the file {eager}: a side sums its logs, so its numbers cancel out" in r.stderr and
          "is zero" not in r.stderr, r.stderr)


def test_cpu_not_measured():
    """diff JSON: cpu_ns null where it was not measured (no instance: overall, (no range)), as summary's JSON;
    the text table shows '-' there."""
    j = json.loads(kcount("diff", "--format", "json", *GEGLU).stdout)
    no_range = next(x for x in j["ranges"] if x["path"] == "(no range)")
    for name, unit in (("overall", j["overall"]), ("(no range)", no_range)):
        check(f"diff json: {name} cpu_ns null on each side and in the change",
              unit["a"]["cpu_ns"] is None and unit["b"]["cpu_ns"] is None and unit["change"]["cpu_ns"] is None, unit)
    s = json.loads(kcount("summary", "--format", "json", GEGLU[0]).stdout)["logs"][0]
    check("summary json: (no range) cpu_ns null too",
          next(r for r in s["ranges"] if r["path"] == "(no range)")["cpu_ns"] is None)
    step = next(x for x in j["ranges"] if x["path"] == "step")
    check("diff json: a range with instances keeps its cpu_ns and change",
          step["a"]["cpu_ns"] > 0 and step["b"]["cpu_ns"] > 0 and
          step["change"]["cpu_ns"] == step["b"]["cpu_ns"] - step["a"]["cpu_ns"], step)


def test_memory_ops(work):
    """A warm-up range whose GPU work is mostly copies: diff shows their count and GPU time per side (table,
    JSON, the range's verdict), apart from the kernels' GPU time; runs without copies get no memory columns."""
    def log(name, copies):
        path = os.path.join(work, name)
        script = "push warmup\n" + "memcpy 7000 4096\n" * copies + "kernel 1000 k\npop\npush step\nkernel 100 k\npop\n"
        subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)
        return path

    a, b = log("copies1.kcount", 1), log("copies2.kcount", 2)
    r = kcount("diff", "--all", a, b)
    lines = r.stdout.splitlines()
    head = re.split(r"\s{2,}", lines[3].strip())
    check("diff: memory columns after the others when a run has memory operations",
          r.returncode == 0 and head[-6:] == ["mem ops A", "B", "change", "mem GPU A", "B", "change"], head)
    rows = {c[0]: c for c in (re.split(r"\s{2,}", l.strip()) for l in lines[5:9])}
    check("diff: warmup's copies, count and GPU time per side and the change",
          rows.get("warmup", [])[-6:] == ["1", "2", "+1", "7.00 µs", "14.0 µs", "+7.00 µs (+100%)"], rows.get("warmup"))
    check("diff: warmup's kernel GPU time stays the kernels' alone",
          rows.get("warmup", [])[9:12] == ["1.00 µs", "1.00 µs", "0 ns (0%)"], rows.get("warmup"))
    check("diff: step ran no copy",
          rows.get("step", [])[-6:] == ["0", "0", "0", "0 ns", "0 ns", "0 ns (0%)"], rows.get("step"))
    check("diff: (overall) counts every copy",
          rows.get("(overall)", [])[-6:-3] == ["1", "2", "+1"], rows.get("(overall)"))
    check("diff: the verdicts name the copies beside the kernels' GPU time",
          "memory ops 1 -> 2 (+1), memory GPU time 7.00 µs -> 14.0 µs (+100%)" in unwrap(r.stdout), r.stdout[-600:])
    j = json.loads(kcount("diff", "--format", "json", a, b).stdout)
    w = next(x for x in j["ranges"] if x["path"] == "warmup")
    check("diff json: mem_ops and mem_gpu_ns per side and their change",
          (w["a"]["mem_ops"], w["b"]["mem_ops"], w["a"]["mem_gpu_ns"], w["b"]["mem_gpu_ns"], w["change"]["mem_ops"],
           w["change"]["mem_gpu_ns"], w["a"]["gpu_ns"]) == (1, 2, 7000, 14000, 1, 7000, 1000), w)
    check("diff json: overall memory operations", j["overall"]["b"]["mem_ops"] == 2, j["overall"])
    r = kcount("diff", "--all", log("nocopy1.kcount", 0), log("nocopy2.kcount", 0))
    check("diff of runs without memory operations: no memory columns or words",
          r.returncode == 0 and "mem ops" not in r.stdout.splitlines()[3] and "memory ops" not in r.stdout, r.stdout.splitlines()[3])
    # The shipped GeGLU runs: compiled's warm-up GPU work is mostly copies (68.5 ms against 14.3 ms of kernels).
    j = json.loads(kcount("diff", "--format", "json", *GEGLU).stdout)
    w = next(x for x in j["ranges"] if x["path"] == "warmup")
    check("geglu: the compiled warm-up's copies are shown, several times its kernels' GPU time",
          w["b"]["mem_gpu_ns"] > 4 * w["b"]["gpu_ns"] and w["change"]["mem_ops"] == w["b"]["mem_ops"] - w["a"]["mem_ops"], w)


def csv_cell(v):
    """A JSON number as `diff --format csv` writes it: null an empty field."""
    return "" if v is None else str(v)


def test_csv(work):
    """`diff --format csv`: the header, then one row per range as the table and JSON have them ((overall)
    first, then JSON's "ranges" order) with the JSON's numbers (null: an empty field), then one row per kernel
    identity in the text's kernels order with its counts and GPU times; documented in --help."""
    r = kcount("diff", "--format", "csv", *GEGLU)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    j = json.loads(kcount("diff", "--format", "json", *GEGLU).stdout)
    ranges = [x for x in rows if x["kind"] == "range"]
    kernels = [x for x in rows if x["kind"] == "kernel"]
    check("diff csv: exit 0, (overall) then the JSON's ranges in order, then the kernels",
          r.returncode == 0 and rows and [x["path"] for x in ranges] == ["(overall)"] + [x["path"] for x in j["ranges"]]
          and [x["kind"] for x in rows] == ["range"] * len(ranges) + ["kernel"] * len(kernels), r.stdout[:600] + r.stderr)
    units = [j["overall"] | {"path": "(overall)", "in": "both", "domain": None}] + j["ranges"]
    bad = []
    for row, u in zip(ranges, units):
        if (row["in"], row["domain"]) != (u["in"], csv_cell(u["domain"])):
            bad.append((u["path"], "in/domain", row["in"], row["domain"]))
        for q in ("launches", "kernels", "gpu_ns", "cpu_ns", "launch_api_ns", "mem_ops", "mem_gpu_ns"):
            want = [csv_cell((u[s] or {}).get(q)) for s in ("a", "b", "change")]
            if u["in"] != "both":  # a range of one side: its change counts the other side as 0 (JSON: null)
                v = (u[u["in"]] or {}).get(q)
                want[2] = csv_cell(None if v is None else v if u["in"] == "b" else -v)
            got = [row[f"{q}_{s}"] for s in ("a", "b", "change")]
            if got != want:
                bad.append((u["path"], q, got, want))
        inst = [row["instances_a"], row["instances_b"]]
        want = ["", ""] if u["path"] == "(overall)" else [csv_cell((u[s] or {}).get("instances")) for s in ("a", "b")]
        if inst != want:
            bad.append((u["path"], "instances", inst, want))
    check("diff csv: each range's numbers are the JSON's (null: empty; a range of one side: the other counts 0 in the "
          "change), (overall) without instances", not bad, bad[:5])
    same = {k["identity"]: k for k in j["kernels"]["same"]}
    only = {k["identity"]: (side, k) for side in ("a", "b") for k in j["kernels"]["only_" + side]}
    check("diff csv: one row per kernel identity",
          sorted(x["identity"] for x in kernels) == sorted(list(same) + list(only)), len(kernels))
    bad = []
    for x in kernels:
        if x["identity"] in same:
            k = same[x["identity"]]
            want = ("both", str(k["count_a"]), str(k["count_b"]), str(k["count_b"] - k["count_a"]), str(k["gpu_ns_a"]),
                    str(k["gpu_ns_b"]), str(k["gpu_ns_b"] - k["gpu_ns_a"]), k["short"], k["category"])
        else:
            side, k = only[x["identity"]]
            n, g = (k["count"], k["gpu_ns"]) if side == "b" else (-k["count"], -k["gpu_ns"])
            want = (side, str(k["count"]) if side == "a" else "", str(k["count"]) if side == "b" else "", str(n),
                    str(k["gpu_ns"]) if side == "a" else "", str(k["gpu_ns"]) if side == "b" else "", str(g),
                    k["short"], k["category"])
        got = tuple(x[c] for c in ("in", "kernels_a", "kernels_b", "kernels_change", "gpu_ns_a", "gpu_ns_b",
                                   "gpu_ns_change", "kernel", "category"))
        if got != want or x["launches_a"] != "" or x["path"] != "":
            bad.append((x["identity"], got, want))
    check("diff csv: kernel rows: counts, GPU times and their changes as JSON's (a side without it counts 0)",
          not bad, bad[:3])
    gpu = [max(int(x["gpu_ns_a"] or 0), int(x["gpu_ns_b"] or 0)) for x in kernels]
    check("diff csv: kernel rows largest GPU time first, as the text's kernels section",
          gpu == sorted(gpu, reverse=True) and [x["in"] for x in kernels].count("both") == len(same), gpu)
    check("diff csv: a kernel name with a comma is one quoted field",
          any("," in x["kernel"] for x in kernels) and ',"at::native::vectorized_elementwise_kernel<8, ' in r.stdout,
          [x["kernel"] for x in kernels])
    h = kcount("diff", "--help")
    check("diff --help names csv", re.search(r"--format TEXT:\{table,csv,json\}\s+table, csv or json", h.stdout), h.stdout)
    # A side without GPU times: its GPU fields and every GPU change empty, counts kept.
    off = os.path.join(work, "csv-off.kcount")
    on = os.path.join(work, "csv-on.kcount")
    for path, meta in ((off, "meta gpu_time off\n"), (on, "")):
        subprocess.run([MAKE_LOG, path], input=meta + "push step\nkernel 1000 k\npop\n", text=True, check=True)
    rows = list(csv.DictReader(io.StringIO(kcount("diff", "--format", "csv", on, off).stdout)))
    step = next((x for x in rows if x["path"] == "step"), {})
    k = next((x for x in rows if x["kind"] == "kernel"), {})
    check("diff csv, B without GPU times: B's GPU fields and the GPU changes empty, kernel counts kept",
          (step.get("gpu_ns_a"), step.get("gpu_ns_b"), step.get("gpu_ns_change"), step.get("kernels_change"),
           k.get("gpu_ns_a"), k.get("gpu_ns_b"), k.get("gpu_ns_change"), k.get("kernels_change"))
          == ("1000", "", "", "0", "1000", "", "", "0"), (step, k))


def main():
    global KCOUNT, MAKE_LOG
    build = os.path.abspath(sys.argv[1])
    KCOUNT = os.path.join(build, "bin", "kcount")
    MAKE_LOG = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(build, "bin", "kc_make_log")
    test_geglu()
    test_sweep()
    test_cpu_not_measured()
    with tempfile.TemporaryDirectory() as work:
        test_pooled_programs(work)
        test_shared_files(work)
        test_memory_ops(work)
        test_csv(work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
