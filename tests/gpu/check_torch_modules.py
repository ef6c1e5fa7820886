#!/usr/bin/env python3
"""Checks of tests/gpu/check_torch_modules.sh on `kcount summary --format json` output. Each subcommand
prints ONE line, "PASS <numbers>" or "FAIL <what> | <numbers>", and exits 0 (pass) or 1.

    layers    SUMMARY PROFILER_JSON --layers N   eager --torch-modules vs torch.profiler per module
    off       SUMMARY_OFF SUMMARY_ON             no module range without --torch-modules, same kernels
    compiled  SUMMARY DYNAMO SUMMARY_OFF DYNAMO_OFF  compiled model with/without hooks: same Dynamo counters
    ops       SUMMARY SUMMARY_MODULES            --torch-ops: op ranges, one name per op, same kernels
    backward  SUMMARY --layers N                 --torch-backward: backward range per decoder layer
    bench     BENCH_JSON                         cost per module call (reported)
"""
import argparse
import json
import sys

ROOT_CLASS = "LlamaForCausalLM"


def load(path):
    with open(path) as f:
        log = json.load(f)["logs"][0]
    return log, {r["path"]: r for r in log["ranges"]}


def step_ranges(ranges):
    return {p: r for p, r in ranges.items() if p == "step" or p.startswith("step/")}


def by_name(ranges, name):
    """The measured-step range whose last component is `name` (one path), or None."""
    hits = [r for p, r in step_ranges(ranges).items() if r["name"] == name]
    return hits[0] if len(hits) == 1 else None


def per_step(r, steps):
    return r["inclusive"]["kernels"] / steps if r else None


def finish(fails, notes):
    line = ("PASS " if not fails else "FAIL " + "; ".join(fails) + " | ") + "; ".join(notes)
    print(line)
    return 1 if fails else 0


def cmd_layers(a):
    log, ranges = load(a.summary)
    with open(a.profiler) as f:
        prof = json.load(f)
    fails, notes = [], []
    steps = ranges["step"]["instances"] if "step" in ranges else 0
    if steps == 0:
        return finish(["no step range"], [])
    psteps = prof["steps"]
    counts = []
    for i in range(a.layers):
        layer = "model.layers.%d" % i
        r = by_name(ranges, layer)
        if r is None:
            fails.append("no range %s under step" % layer)
            continue
        if r["instances"] != steps:
            fails.append("%s: %d instances for %d steps" % (layer, r["instances"], steps))
        k = per_step(r, steps)
        counts.append(k)
        pk = prof["per_module"].get(layer, 0) / psteps
        if k != pk:
            fails.append("%s: kcount %s kernels/step, torch.profiler %s" % (layer, k, pk))
        for sub in ("self_attn", "mlp", "input_layernorm", "post_attention_layernorm", "self_attn.q_proj",
                    "mlp.down_proj"):
            name = layer + "." + sub
            rs = by_name(ranges, name)
            if rs is None:
                fails.append("no range %s" % name)
                continue
            ks, pks = per_step(rs, steps), prof["per_module"].get(name, 0) / psteps
            if ks != pks:
                fails.append("%s: kcount %s, torch.profiler %s" % (name, ks, pks))
    if counts and len(set(counts)) != 1:
        fails.append("decoder layers differ: %s kernels/step" % counts)
    root = by_name(ranges, ROOT_CLASS)
    if root is None:
        fails.append("no %s range under step" % ROOT_CLASS)
    else:
        rk = per_step(root, steps)
        pk = prof["per_module"].get(ROOT_CLASS, 0) / psteps
        notes.append("%s %s kernels/step (torch.profiler %s)" % (ROOT_CLASS, rk, pk))
        if rk != pk:
            fails.append("%s: kcount %s, torch.profiler %s" % (ROOT_CLASS, rk, pk))
    t = log["totals"]
    for k in ("unmatched_kernels", "dropped_host_records", "dropped_activity_records", "nvtx_pop_underflow"):
        if t.get(k):
            fails.append("%s=%s" % (k, t[k]))
    notes.append("decoder layers %s kernels/step each (torch.profiler: %s)" % (
        counts[0] if counts else "?", [prof["per_module"].get("model.layers.%d" % i, 0) / psteps for i in range(a.layers)]))
    notes.append("%d module range paths under step" % (len(step_ranges(ranges)) - 1))
    notes.append("torch.profiler: %s kernels, %s placed through their aten op, %s unplaced" % (
        prof.get("kernels"), prof.get("placed_by_op"), prof.get("unmatched")))
    return finish(fails, notes)


def cmd_off(a):
    log_off, off = load(a.off)
    log_on, on = load(a.on)
    fails, notes = [], []
    modules = [p for p in off if ROOT_CLASS in p or "model.layers" in p]
    if modules:
        fails.append("module ranges without --torch-modules: %s" % modules[:3])
    if set(off) - {"(no range)"} != {"warmup", "warmup/step", "step"}:
        fails.append("ranges %s" % sorted(off))
    ko, kn = log_off["totals"]["kernels"], log_on["totals"]["kernels"]
    so, sn = off["step"]["inclusive"]["kernels"], on["step"]["inclusive"]["kernels"]
    if ko != kn or so != sn:
        fails.append("kernels off %d (step %d) vs on %d (step %d)" % (ko, so, kn, sn))
    notes.append("kernels %d = %d, step %d = %d; ranges off: %s" % (ko, kn, so, sn, sorted(set(off) - {"(no range)"})))
    return finish(fails, notes)


def cmd_compiled(a):
    """Compiled with --torch-modules (SUMMARY, DYNAMO) vs compiled without (SUMMARY_OFF, DYNAMO_OFF): the
    range around the compiled call, no module range inside it, the same graph breaks and graphs (the
    hooks do not change what Dynamo compiles), and the same kernels per step."""
    log, ranges = load(a.summary)
    log_off, ranges_off = load(a.summary_off)
    dyn, dyn_off = (json.load(open(p)) for p in (a.dynamo, a.dynamo_off))
    fails, notes = [], []
    steps = ranges["step"]["instances"]
    paths = sorted(p for p in step_ranges(ranges) if p != "step")
    inner = [p for p in paths if p.startswith("step/%s/" % ROOT_CLASS)]
    notes.append("ranges under step: %s; %d module ranges inside the compiled call%s" % (
        [p for p in paths if p not in inner], len(inner), (" (run eagerly by Dynamo: %s)" % inner[:3]) if inner else ""))
    if ("step/" + ROOT_CLASS) not in paths:
        fails.append("no range step/%s around the compiled call" % ROOT_CLASS)
    breaks = sum(dyn.get("graph_break", {}).values())
    breaks_off = sum(dyn_off.get("graph_break", {}).values())
    graphs = (dyn.get("stats", {}).get("unique_graphs"), dyn_off.get("stats", {}).get("unique_graphs"))
    notes.append("graph breaks %d (without hooks %d), unique graphs %s, frames %s (without hooks %s)" % (
        breaks, breaks_off, graphs, dyn.get("frames", {}), dyn_off.get("frames", {})))
    # Graph breaks and distinct graphs decide what is measured. Dynamo's frame count is reported, not
    # compared: on the H200 (PyTorch 2.11) it was 3 with the hooks and 1 without, with 0 graph breaks,
    # 1 unique graph and 55 kernels per step in both runs.
    if breaks != breaks_off or graphs[0] != graphs[1]:
        fails.append("Dynamo saw the hooks: graph breaks %d vs %d, unique graphs %s" % (breaks, breaks_off, graphs))
    k, k_off = ranges["step"]["inclusive"]["kernels"] / steps, ranges_off["step"]["inclusive"]["kernels"] / ranges_off["step"]["instances"]
    notes.append("kernels/step %s (without hooks %s)" % (k, k_off))
    if k != k_off:
        fails.append("kernels per step differ with hooks: %s vs %s" % (k, k_off))
    if a.kernels_per_step is not None and k != a.kernels_per_step:
        fails.append("kernels per step %s, expected %s" % (k, a.kernels_per_step))
    return finish(fails, notes)


def cmd_ops(a):
    log, ranges = load(a.summary)
    log_m, ranges_m = load(a.modules)
    fails, notes = [], []
    ops = sorted({r["name"] for p, r in step_ranges(ranges).items() if "::" in r["name"]})
    bad = [n for n in ops if ", seq" in n or "op_id" in n]
    if not ops:
        fails.append("no op range (aten::...) under step")
    if bad:
        fails.append("per-call suffixes left: %s" % bad[:3])
    k, km = log["totals"]["kernels"], log_m["totals"]["kernels"]
    if k != km:
        fails.append("kernels %d with --torch-ops, %d without" % (k, km))
    names = sum(1 for p in ranges)
    notes.append("%d op names (%s); %d range paths; kernels %d = %d" % (len(ops), ", ".join(ops[:8]), names, k, km))
    return finish(fails, notes)


def cmd_backward(a):
    log, ranges = load(a.summary)
    fails, notes = [], []
    counts = []
    for i in range(a.layers):
        name = "model.layers.%d [backward]" % i
        hits = [r for p, r in ranges.items() if r["name"] == name]
        if not hits:
            fails.append("no range %s" % name)
            continue
        counts.append(sum(r["inclusive"]["kernels"] for r in hits) / max(1, sum(r["instances"] for r in hits)))
    if counts and len(set(counts)) != 1:
        fails.append("backward kernels per layer differ: %s" % counts)
    top = ranges.get(ROOT_CLASS + " [backward]")
    notes.append("backward kernels per decoder layer call %s; %s [backward]: %s instances, %s kernels; (no range) %s kernels" % (
        counts, ROOT_CLASS, top and top["instances"], top and top["inclusive"]["kernels"],
        ranges["(no range)"]["exclusive"]["kernels"]))
    return finish(fails, notes)


def cmd_bench(a):
    with open(a.bench) as f:
        b = json.load(f)
    fails = []
    if b.get("recording_state") != "kcount":
        fails.append("kcount's recording state not found (%s)" % b.get("recording_state"))
    reg = b.get("hooks_registered", {})
    if reg.get("paused") != [0]:
        fails.append("global module hooks registered while kcount was paused: %s" % reg.get("paused"))
    if not reg.get("recording") or 0 in reg.get("recording"):
        fails.append("hooks not registered while recording: %s" % reg.get("recording"))
    f_us, c, sp = b["forward_us"], b["per_module_call_us"], b.get("spread_us", {})
    return finish(fails, ["%d module calls per forward; forward CPU time, median of 7 x 50 [spread]: recording %.0f us "
                          "with the helper, %.0f without (+%.2f us per module call); paused %.0f us with the helper "
                          "[%.0f], %.0f without [%.0f] (%+.2f us per module call); hooks registered %s"
                          % (b["module_calls_per_forward"], f_us["recording"], f_us["recording-no-helper"],
                             c["recording"], f_us["paused"], sp.get("paused", 0), f_us["paused-no-helper"],
                             sp.get("paused-no-helper", 0), c["paused"], reg)])


def main(argv=None):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("layers"); s.add_argument("summary"); s.add_argument("profiler"); s.add_argument("--layers", type=int, default=4)
    s = sub.add_parser("off"); s.add_argument("off"); s.add_argument("on")
    s = sub.add_parser("compiled"); s.add_argument("summary"); s.add_argument("dynamo"); s.add_argument("summary_off"); s.add_argument("dynamo_off")
    s.add_argument("--kernels-per-step", type=float, default=None,
                   help="the kernels per step both runs must have (not only agree on)")
    s = sub.add_parser("ops"); s.add_argument("summary"); s.add_argument("modules")
    s = sub.add_parser("backward"); s.add_argument("summary"); s.add_argument("--layers", type=int, default=4)
    s = sub.add_parser("bench"); s.add_argument("bench")
    a = p.parse_args(argv)
    try:
        return {"layers": cmd_layers, "off": cmd_off, "compiled": cmd_compiled, "ops": cmd_ops,
                "backward": cmd_backward, "bench": cmd_bench}[a.cmd](a)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print("FAIL unreadable input: %s: %s" % (type(e).__name__, e))
        return 1


if __name__ == "__main__":
    sys.exit(main())
