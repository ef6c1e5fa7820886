#!/usr/bin/env python3
"""Checks on `kcount summary --format json LOG` output, used by tests/gpu/run_gpu_checks.sh.

Each subcommand prints ONE line, "PASS <key numbers>" or "FAIL <what failed> | <key numbers>", and exits
0 (pass), 1 (a check failed) or 2 (bad usage). Unreadable or malformed input is a failed check.

    check_summary.py linear          SUMMARY --steps N
    check_summary.py geglu-eager     SUMMARY --steps N
    check_summary.py geglu-compiled  SUMMARY --eager EAGER_SUMMARY --steps N
    check_summary.py last-step       SUMMARY --steps N --per-step K
    check_summary.py same-subtree    SUMMARY_A SUMMARY_B [--root step]
    check_summary.py torch-agree     PROFILER_JSON SUMMARY [--expect K]
    check_summary.py maps            PROBE_STDOUT

Summary schema (one object per log):
    {"logs": [{"path", "metadata", "complete", "issues": [{"severity", ...}],
               "totals": {"launches", "kernels", "unmatched_kernels", "launches_without_kernel",
                          "dropped_host_records", "dropped_activity_records",
                          "activity_buffers_refused", "nvtx_pop_underflow", ...},
               "ranges": [{"path", "name", "depth", "instances", "cpu_ns",
                           "exclusive": {"launches", "graph_launches", "kernels", ...},
                           "inclusive": {...}, "kernels_per_instance",
                           "kernels": [{"name", "short", "count", "gpu_ns"}]}]}]}
The "kernels" list of a range holds its EXCLUSIVE kernels only.
"""

import argparse
import collections
import json
import sys

GEMM_MARKS = ("nvjet", "gemm", "xmma", "cutlass")
ZERO_TOTALS = ("unmatched_kernels", "dropped_host_records", "dropped_activity_records", "late_activity_records",
               "activity_buffers_refused", "nvtx_pop_underflow")
COUNT_KEYS = ("launches", "graph_launches", "kernels")


class SchemaError(Exception):
    pass


class Result:
    """Collects failures and key numbers for one check."""

    def __init__(self):
        self.fails = []
        self.notes = []

    def fail(self, msg):
        self.fails.append(msg)

    def expect(self, cond, msg):
        if not cond:
            self.fails.append(msg)
        return cond

    def eq(self, label, got, want):
        return self.expect(got == want, f"{label}={got} (want {want})")

    def note(self, msg):
        self.notes.append(msg)

    @property
    def ok(self):
        return not self.fails

    def line(self):
        notes = "; ".join(self.notes)
        if self.ok:
            return "PASS " + notes
        return "FAIL " + "; ".join(self.fails) + (" | " + notes if notes else "")


# ---------------------------------------------------------------------------------------------- access

def get(obj, *keys):
    cur = obj
    for k in keys:
        if not isinstance(cur, dict) or k not in cur:
            raise SchemaError("missing " + ".".join(str(x) for x in keys))
        cur = cur[k]
    return cur


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as exc:
        raise SchemaError(f"cannot read {path}: {exc}")


def load_log(path, res):
    """The single log object of a summary file."""
    data = load_json(path)
    logs = get(data, "logs")
    if not isinstance(logs, list) or not logs:
        raise SchemaError(f"{path}: no logs")
    res.expect(len(logs) == 1, f"{path}: {len(logs)} logs (want 1)")
    return logs[0]


def ranges_by_path(log):
    """Ranges by their path as the summary table writes it: a range of a named NVTX domain as "mylib: name"
    ("step/mylib: gemm"), so ranges of one path in two domains are two keys; the default domain's ranges
    by their JSON "path"."""
    ranges = get(log, "ranges")
    if not isinstance(ranges, list):
        raise SchemaError("ranges is not a list")
    if not any(r.get("domain") for r in ranges):
        return {get(r, "path"): r for r in ranges}
    by_id = {r["scope_id"]: r for r in ranges if r.get("scope_id") is not None}

    def shown(r):
        parts, seen = [], set()
        while r is not None and r.get("scope_id") not in seen:
            seen.add(r.get("scope_id"))
            if r.get("parent_scope_id") is None:  # the root, a lost range: its path as JSON has it
                parts.append(get(r, "path"))
                break
            name = r["name"].replace("\\", "\\\\").replace("/", "\\/")
            parts.append(f"{r['domain']}: {name}" if r.get("domain") else name)
            r = by_id.get(r["parent_scope_id"]) if r["parent_scope_id"] != 0 else None
        return "/".join(reversed(parts))

    return {shown(r): r for r in ranges}


def find_range(ranges, path, res):
    r = ranges.get(path)
    if r is None:
        res.fail(f"no range '{path}'")
    return r


def subtree(ranges, root):
    return [r for p, r in sorted(ranges.items()) if p == root or p.startswith(root + "/")]


def kernel_tally(range_list):
    """Counter mangled name -> count over the EXCLUSIVE kernel lists of the given ranges."""
    tally = collections.Counter()
    for r in range_list:
        for k in get(r, "kernels"):
            tally[get(k, "name")] += get(k, "count")
    return tally


def short_names(range_list):
    shorts = {}
    for r in range_list:
        for k in get(r, "kernels"):
            shorts.setdefault(get(k, "name"), k.get("short") or get(k, "name"))
    return shorts


def is_gemm(name, short=""):
    text = (name + " " + (short or "")).lower()
    return any(m in text for m in GEMM_MARKS)


def is_triton(name, short=""):
    return name.startswith("triton_") or (short or "").startswith("triton_")


def abbreviate(name, n=60):
    return name if len(name) <= n else name[: n - 3] + "..."


# ----------------------------------------------------------------------------------------------- checks

def check_common(log, res, want=None):
    """Log complete, no error issues, no unmatched kernels, nothing dropped. `want` overrides the
    expected value of some totals (e.g. {"nvtx_pop_underflow": 1} for a program that pops too often)."""
    want = want or {}
    res.eq("complete", get(log, "complete"), True)
    issues = log.get("issues") or []
    errors = [i for i in issues if isinstance(i, dict) and i.get("severity") == "error"]
    if errors:
        res.fail(f"{len(errors)} error issues (first: {errors[0].get('message')})")
    warnings = len(issues) - len(errors)
    totals = get(log, "totals")
    for key in ZERO_TOTALS:
        res.eq("totals." + key, get(log, "totals", key), want.get(key, 0))
    res.note(f"totals launches={get(totals, 'launches')} kernels={get(totals, 'kernels')} "
             f"unmatched={get(totals, 'unmatched_kernels')}"
             + (f" warnings={warnings}" if warnings else ""))


def check_step(ranges, steps, per_step, res, check_launches=True):
    """Range 'step': instances == steps, inclusive kernels (and launches) == steps * per_step."""
    step = find_range(ranges, "step", res)
    if step is None:
        return None
    inst = get(step, "instances")
    kern = get(step, "inclusive", "kernels")
    launches = get(step, "inclusive", "launches")
    res.eq("step.instances", inst, steps)
    res.eq("step.inclusive.kernels", kern, steps * per_step)
    if check_launches:
        res.eq("step.inclusive.launches", launches, steps * per_step)
    res.note(f"step n={inst} kernels={kern} launches={launches}")
    # Consistency of the tool: the exclusive kernel lists of the subtree add up to the inclusive count.
    listed = sum(kernel_tally(subtree(ranges, "step")).values())
    res.eq("sum of step-subtree kernel lists", listed, kern)
    return step


def check_single_kernel_range(ranges, path, steps, res, predicate, what):
    """Range `path`: exclusive kernels == steps, exactly one distinct kernel name, matching predicate."""
    r = find_range(ranges, path, res)
    if r is None:
        return None
    res.eq(path + ".exclusive.kernels", get(r, "exclusive", "kernels"), steps)
    names = kernel_tally([r])
    shorts = short_names([r])
    if not res.expect(len(names) == 1, f"{path}: {len(names)} distinct kernel names (want 1): "
                      + ", ".join(abbreviate(shorts[n]) for n in names)):
        return None
    (name, count), = names.items()
    res.eq(path + " kernel count", count, steps)
    res.expect(predicate(name, shorts[name]), f"{path}: kernel '{abbreviate(name)}' is not {what}")
    res.note(f"{path}: {abbreviate(shorts[name], 50)}")
    return name


def cmd_linear(a):
    res = Result()
    log = load_log(a.summary, res)
    ranges = ranges_by_path(log)
    check_step(ranges, a.steps, 1, res)
    check_single_kernel_range(ranges, "step/linear", a.steps, res,
                              lambda n, s: "bias" in n or "bias" in s, "a GEMM with 'bias' in its name")
    check_common(log, res)
    return res


def eager_gemm_tally(ranges, steps, res):
    """Checks the eager GeGLU ranges; returns Counter GEMM name -> count over gate/up/down."""
    tally = collections.Counter()
    for path in ("step/gate", "step/up", "step/down"):
        name = check_single_kernel_range(ranges, path, steps, res, is_gemm,
                                         "a GEMM (" + "/".join(GEMM_MARKS) + ")")
        r = ranges.get(path)
        if name is not None and r is not None:
            tally.update(kernel_tally([r]))
    return tally


def cmd_geglu_eager(a):
    res = Result()
    log = load_log(a.summary, res)
    ranges = ranges_by_path(log)
    check_step(ranges, a.steps, 5, res)
    eager_gemm_tally(ranges, a.steps, res)
    act = find_range(ranges, "step/act", res)
    if act is not None:
        res.eq("step/act.exclusive.kernels", get(act, "exclusive", "kernels"), 2 * a.steps)
        names = kernel_tally([act])
        shorts = short_names([act])
        res.eq("step/act distinct kernel names", len(names), 2)
        for n, c in names.items():
            res.eq(f"step/act count of '{abbreviate(shorts[n])}'", c, a.steps)
        res.note("act: " + ", ".join(abbreviate(shorts[n], 40) for n in sorted(names)))
    check_common(log, res)
    return res


def cmd_geglu_compiled(a):
    res = Result()
    log = load_log(a.summary, res)
    ranges = ranges_by_path(log)
    check_step(ranges, a.steps, 4, res)
    sub = subtree(ranges, "step")
    tally = kernel_tally(sub)
    shorts = short_names(sub)

    # GEMM names of the eager run (gate/up/down), per step.
    eres = Result()
    elog = load_log(a.eager, eres)
    eranges = ranges_by_path(elog)
    estep = eranges.get("step")
    esteps = get(estep, "instances") if estep is not None else 0
    etally = collections.Counter()
    for path in ("step/gate", "step/up", "step/down"):
        r = eranges.get(path)
        if r is None:
            res.fail(f"eager summary has no range '{path}'")
        else:
            etally.update(kernel_tally([r]))
    if not etally or not esteps:
        res.fail("eager summary has no GEMM kernels to compare with")

    triton = {n: c for n, c in tally.items() if is_triton(n, shorts[n])}
    gemms = {n: c for n, c in tally.items() if n in etally}
    other = {n: c for n, c in tally.items() if n not in triton and n not in gemms}

    res.eq("distinct triton_ kernel names", len(triton), 1)
    for n, c in triton.items():
        res.eq(f"count of {n}", c, a.steps)
    res.expect(set(gemms) == set(etally),
               "GEMM names differ from eager: missing "
               + str(sorted(abbreviate(n) for n in set(etally) - set(gemms))))
    res.eq("GEMM kernels", sum(gemms.values()), 3 * a.steps)
    if esteps:
        for n, c in etally.items():
            want = c * a.steps / esteps
            got = gemms.get(n, 0)
            res.expect(got == want, f"'{abbreviate(n)}' ran {got} times (eager: {c} in {esteps} steps)")
    if other:
        res.fail("kernels that are neither eager GEMMs nor triton_: "
                 + ", ".join(f"{abbreviate(shorts[n])} x{c}" for n, c in sorted(other.items())))
    res.note(f"GEMM names={len(gemms)} (eager {len(etally)}) GEMM kernels={sum(gemms.values())} "
             f"triton={','.join(abbreviate(n, 40) for n in triton)}")
    check_common(log, res)
    return res


def cmd_last_step(a):
    res = Result()
    log = load_log(a.summary, res)
    ranges = ranges_by_path(log)
    check_step(ranges, a.steps, a.per_step, res)
    res.eq("totals.launches_without_kernel", get(log, "totals", "launches_without_kernel"), 0)
    check_common(log, res)
    return res


def range_fingerprint(r):
    fp = {"instances": get(r, "instances")}
    for side in ("exclusive", "inclusive"):
        for key in COUNT_KEYS:
            fp[f"{side}.{key}"] = get(r, side, key)
    fp["kernels"] = dict(kernel_tally([r]))
    return fp


def cmd_same_subtree(a):
    res = Result()
    la = load_log(a.summary_a, res)
    lb = load_log(a.summary_b, res)
    ra = {r["path"]: range_fingerprint(r) for r in subtree(ranges_by_path(la), a.root)}
    rb = {r["path"]: range_fingerprint(r) for r in subtree(ranges_by_path(lb), a.root)}
    res.expect(bool(ra), f"first summary has no '{a.root}' range")
    for path in sorted(set(ra) | set(rb)):
        if path not in ra or path not in rb:
            res.fail(f"range '{path}' only in {'first' if path in ra else 'second'} summary")
            continue
        for key in ra[path]:
            if ra[path][key] != rb[path][key]:
                va, vb = ra[path][key], rb[path][key]
                if key == "kernels":
                    va, vb = sorted(va.values()), sorted(vb.values())
                    if va == vb:
                        va, vb = "names", "other names"
                res.fail(f"{path} {key}: {va} vs {vb}")
    if a.root in ra:
        res.note(f"{len(ra)} ranges under '{a.root}', {a.root} inclusive kernels="
                 f"{ra[a.root]['inclusive.kernels']}")
    check_common(lb, res)
    return res


def cmd_torch_agree(a):
    res = Result()
    prof = load_json(a.profiler)
    tp = get(prof, "kernels_per_step")
    log = load_log(a.summary, res)
    step = find_range(ranges_by_path(log), "step", res)
    if step is None:
        return res
    inst = get(step, "instances")
    kern = get(step, "inclusive", "kernels")
    if not res.expect(inst > 0, "step.instances=0"):
        return res
    kp = kern / inst
    res.expect(abs(kp - tp) < 1e-9, f"kcount {kp:g} kernels/step vs torch.profiler {tp:g}")
    if a.expect is not None:
        res.expect(abs(kp - a.expect) < 1e-9, f"kcount {kp:g} kernels/step (want {a.expect:g})")
        res.expect(abs(tp - a.expect) < 1e-9, f"torch.profiler {tp:g} kernels/step (want {a.expect:g})")
    chrome = prof.get("kernels_chrome_trace")
    res.note(f"per step: kcount={kp:g} torch.profiler={tp:g}"
             + (f" (chrome trace {chrome}/{prof.get('steps')})" if chrome is not None else ""))
    return res


def cmd_maps(a):
    res = Result()
    found = None
    try:
        with open(a.probe_stdout) as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise SchemaError(f"cannot read {a.probe_stdout}: {exc}")
    for line in reversed(lines):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict) and "libcupti_files" in obj:
            found = obj
            break
    if found is None:
        res.fail("no libcupti_files JSON line in probe output")
        return res
    files = found["libcupti_files"]
    res.eq("distinct libcupti files", len(files), 1)
    res.note("libcupti: " + (", ".join(files) if files else "none"))
    if found.get("exit_code", 0) != 0:
        res.fail(f"example exit code {found.get('exit_code')}")
    return res


# -------------------------------------------------------------------------------------------------- CLI

def cmd_expect(a):
    """Generic exact values: PATH:FIELD=VALUE, FIELD one of instances, exclusive.X, inclusive.X, or
    totals.X (with PATH empty). Also requires check_common (complete log, nothing dropped/unmatched)."""
    res = Result()
    log = load_log(a.summary, res)
    if a.allow_incomplete:
        log = dict(log, complete=True, issues=[i for i in log.get("issues") or [] if i.get("severity") != "error"])
    check_common(log, res, {"nvtx_pop_underflow": a.allow_underflow})
    ranges = ranges_by_path(log)
    for spec in a.values:
        where, _, want = spec.rpartition("=")
        path, _, field = where.rpartition(":")
        keys = field.split(".")
        if keys[0] == "totals":
            got = get(log, *keys)
        else:
            r = find_range(ranges, path, res)
            if r is None:
                continue
            got = get(r, *keys)
        res.eq(f"{path}:{field}" if path else field, got, int(want))
    res.note(f"{len(a.values)} exact values")
    return res


def cmd_autograd(a):
    """Backward kernels run on autograd threads: never in `fwd`; in `bwd` only when autograd
    multithreading is off; the total over fwd+bwd (single-thread run) equals torch.profiler's."""
    res = Result()
    multi = ranges_by_path(load_log(a.multi, res))
    single = ranges_by_path(load_log(a.single, res))
    prof = load_json(a.profiler)

    def k(r, path):
        x = r.get(path)
        return get(x, "exclusive", "kernels") if x else 0

    fwd_m, fwd_s = k(multi, "fwd"), k(single, "fwd")
    bwd_m, bwd_s = k(multi, "bwd"), k(single, "bwd")
    nr_m, nr_s = k(multi, "(no range)"), k(single, "(no range)")
    res.expect(fwd_m > 0, "fwd has no kernels")
    res.eq("fwd kernels multi-thread vs single-thread", fwd_m, fwd_s)
    res.expect(bwd_s > bwd_m, f"bwd kernels: single-thread {bwd_s} not above multi-thread {bwd_m}")
    res.eq("kernels moved from (no range) to bwd", bwd_s - bwd_m, nr_m - nr_s)
    res.eq("fwd+bwd (single-thread) vs torch.profiler", fwd_s + bwd_s, get(prof, "kernels"))
    res.note(f"fwd={fwd_m}; bwd multi-thread={bwd_m} (+{nr_m - nr_s} on autograd threads, '(no range)'); "
             f"bwd single-thread={bwd_s}; torch.profiler={get(prof, 'kernels')}")
    return res


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("linear", help="examples/linear.py eager")
    s.add_argument("summary")
    s.add_argument("--steps", type=int, required=True)
    s.set_defaults(func=cmd_linear)

    s = sub.add_parser("geglu-eager", help="examples/geglu.py eager")
    s.add_argument("summary")
    s.add_argument("--steps", type=int, required=True)
    s.set_defaults(func=cmd_geglu_eager)

    s = sub.add_parser("geglu-compiled", help="examples/geglu.py --compile against the eager run")
    s.add_argument("summary")
    s.add_argument("--eager", required=True, help="summary JSON of the eager run")
    s.add_argument("--steps", type=int, required=True)
    s.set_defaults(func=cmd_geglu_compiled)

    s = sub.add_parser("last-step", help="step kernels exact when the program exits right after it")
    s.add_argument("summary")
    s.add_argument("--steps", type=int, required=True)
    s.add_argument("--per-step", type=int, required=True)
    s.set_defaults(func=cmd_last_step)

    s = sub.add_parser("same-subtree", help="two summaries have identical counts under --root")
    s.add_argument("summary_a")
    s.add_argument("summary_b")
    s.add_argument("--root", default="step")
    s.set_defaults(func=cmd_same_subtree)

    s = sub.add_parser("torch-agree", help="kernels per step agree with torch.profiler")
    s.add_argument("profiler")
    s.add_argument("summary")
    s.add_argument("--expect", type=float, default=None)
    s.set_defaults(func=cmd_torch_agree)

    s = sub.add_parser("expect", help="exact values PATH:FIELD=VALUE (e.g. step:inclusive.kernels=20)")
    s.add_argument("summary")
    s.add_argument("values", nargs="+")
    s.add_argument("--allow-underflow", type=int, default=0,
                   help="expected totals.nvtx_pop_underflow (default 0)")
    s.add_argument("--allow-incomplete", action="store_true",
                   help="the log may lack its end record (a killed process)")
    s.set_defaults(func=cmd_expect)

    s = sub.add_parser("autograd", help="backward kernels and autograd threads")
    s.add_argument("multi")
    s.add_argument("single")
    s.add_argument("profiler")
    s.set_defaults(func=cmd_autograd)

    s = sub.add_parser("maps", help="exactly one libcupti mapped (maps_probe.py output)")
    s.add_argument("probe_stdout")
    s.set_defaults(func=cmd_maps)
    return p


def run(argv=None):
    """Returns (exit code, line)."""
    args = build_parser().parse_args(argv)
    try:
        res = args.func(args)
    except SchemaError as exc:
        return 1, f"FAIL {exc}"
    except (TypeError, AttributeError, KeyError) as exc:
        return 1, f"FAIL malformed summary: {type(exc).__name__}: {exc}"
    return (0 if res.ok else 1), res.line()


def main(argv=None):
    code, line = run(argv)
    print(line)
    return code


if __name__ == "__main__":
    sys.exit(main())
