"""GPU check of the example inference server (examples/serve.py) under kcount. Run by check_server.sh.

The server is started three times under `kcount run --paused`: with KCOUNT_MODE=summary, with
KCOUNT_MODE=trace (the environment's other KCOUNT_* settings pass through), and "count": KCOUNT_MODE=summary
KCOUNT_GPU_TIME=0 (no kernel activity: the decode graph, captured while paused, is read by the graph watch).
Each time: WARMUP requests while paused, `kcount ctl PID start`, K requests of M new tokens, `kcount ctl
PID stop`, one more request (not recorded), after which the server exits by itself (--max-requests).
A request of M new tokens runs one prefill, M samples and M - 1 decode steps, each decode step one replay
of the CUDA graph captured at startup; the server prints that graph's kernel node count G at startup
(cuGraphGetNodes on CUDAGraph.raw_cuda_graph(), examples/_common.py: graph_node_counts).

Rows:
  startup          both servers started paused, printed their port and the same G > 0
  requests         every request answered 200 with exactly M tokens; both servers exited 0; one log each
  exact MODE       in the window (the whole log: nothing is recorded outside it): request x K, prefill x K,
                   sample x K*M, decode x K*(M-1) instances; decode: K*(M-1) launches, all graph launches,
                   K*(M-1)*(G+D) kernels (G+D per decode instance; D: the graph's memcpy/memset nodes that
                   the driver ran as kernels of its own, seen with activity only); no kernel outside
                   `request`; no unmatched kernel, no launch without kernel; one segment, opened and closed
                   by ctl (MODE summary, trace, count)
  count = summary  per range: instances, launches, graph launches and kernels by name of the count-only log
                   equal the summary log's, apart from the driver's copy kernels
  trace segment    trace mode: `--segment 0` gives the same per-range numbers as the whole log
  trace = summary  per range: instances, launches, graph launches, kernels and kernels by name equal
  exporter         if `kcount help exporter` exits 0: `kcount exporter --once LOG` (the summary-mode log)
                   gives kcount_range_kernels_total{range="request/decode",...} equal to `kcount summary
                   --format json`'s kernels of request/decode (SKIP when the tool has no exporter)

Prints rows "NAME  PASS|FAIL|SKIP  details" and a table last; exits 1 if any row failed.
Usage: python3 check_server.py BUILD_DIR OUTDIR
"""
import json
import os
import re
import select
import subprocess
import sys
import time

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 2 else None
OUT = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
KCOUNT = os.path.join(BUILD, "bin", "kcount") if BUILD else "kcount"
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PY = os.environ.get("PYTHON", sys.executable)
sys.path.insert(0, os.path.join(REPO, "examples"))
import client  # noqa: E402  (examples/client.py: the requests)

WARMUP, K, M, PROMPT = 3, 8, 32, 64  # requests before the window; in it: K requests of M new tokens
SERVER_ARGS = ["--layers", "4", "--hidden", "1024", "--max-seq", "256", "--warmup", "2"]
COUNTS = ("launches", "graph_launches", "kernels")
DRIVER_COPY = re.compile(r"mem(cpy|set)")  # the driver's own kernels for a graph's memcpy/memset nodes
rows = []


def row(name, status, detail):
    status = status if isinstance(status, str) else ("PASS" if status else "FAIL")
    rows.append((name, status, detail))
    print(f"==> {name}: {status} {detail}", flush=True)


def tool(*args, timeout=120):
    return subprocess.run([KCOUNT, *args], capture_output=True, text=True, timeout=timeout)


def summary(log, *extra):
    r = tool("summary", log, "--format", "json", *extra)
    if r.returncode != 0:
        raise RuntimeError(f"kcount summary {log} {' '.join(extra)}: exit {r.returncode}: {r.stderr[-400:]}")
    return json.loads(r.stdout)["logs"][0]


def wait_for_line(proc, pattern, timeout):
    """The first stdout line of proc (unbuffered, binary) matching pattern, as a match object; None at end
    of file or timeout. Lines before it are echoed."""
    deadline, buf = time.time() + timeout, b""
    while time.time() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.time()))
        chunk = os.read(proc.stdout.fileno(), 65536) if ready else b""
        if not chunk:
            return None
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace")
            print("   " + text, flush=True)
            m = re.search(pattern, text)
            if m:
                return m
    return None


def ctl(pid, what, res):
    r = tool("ctl", str(pid), what, "--format", "json")
    if r.returncode != 0:
        res["errors"].append(f"ctl {what}: exit {r.returncode}: {(r.stdout + r.stderr).strip()[-200:]}")


def run_server(mode):
    """One server under kcount run --paused in `mode`; returns a dict of what happened (raises on the way
    only for what makes the rest meaningless)."""
    log = os.path.join(OUT, f"server-{mode}.kcount")
    for f in os.listdir(OUT):
        if f.startswith(f"server-{mode}") and f.endswith(".kcount"):
            os.unlink(os.path.join(OUT, f))
    # "count": summary mode without kernel activity (KCOUNT_GPU_TIME=0): the decode graph, captured while
    # paused, is read by the graph watch and each replay credited with its kernel nodes.
    env = dict(os.environ, KCOUNT_MODE="summary" if mode == "count" else mode, PYTHONUNBUFFERED="1")
    if mode == "count":  # SERVER_COUNT_GPU_TIME=graphs: also each graph launch's GPU span (GRAPH_TRACE)
        env["KCOUNT_GPU_TIME"] = os.environ.get("SERVER_COUNT_GPU_TIME", "0")
    cmd = [KCOUNT, "run", "--paused", "--output", log, "--", PY, os.path.join(REPO, "examples", "serve.py"),
           "--port", "0", "--max-requests", str(WARMUP + K + 1), *SERVER_ARGS]
    print(f"\n+ KCOUNT_MODE={mode} {' '.join(cmd)}", flush=True)
    err_path = os.path.join(OUT, f"server-{mode}.stderr.txt")
    res = {"mode": mode, "errors": [], "tokens_per_s": None}
    with open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env, bufsize=0, cwd=OUT)
        try:
            m = wait_for_line(proc, r"^serve\.py: listening .* port=(\d+) pid=(\d+) ", 300)
            if m is None:
                raise RuntimeError(f"no startup line (see {err_path})")
            port, pid = int(m.group(1)), int(m.group(2))
            g = re.search(r" graph_kernel_nodes=(\d+)", m.string)
            res["graph_kernels"] = int(g.group(1)) if g else None
            res["graph_copy_nodes"] = sum(int(x) for x in re.findall(r" graph_mem(?:cpy|set)_nodes=(\d+)", m.string))
            base = f"http://127.0.0.1:{port}"
            for _ in range(WARMUP):
                client.generate(base, PROMPT, M)
            ctl(pid, "start", res)
            b = client.bench(base, K, PROMPT, M)
            res["tokens_per_s"] = b["tokens_per_s"]
            if b["failed"]:
                res["errors"].append(f"{b['failed']} of {K} requests failed: {b['errors']}")
            ctl(pid, "stop", res)
            client.generate(base, PROMPT, M)  # outside the window; the server exits after it
            res["exit"] = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:  # kcount run passes SIGTERM on to the server
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    with open(err_path) as f:
        logs = re.findall(r"^kcount: log: (.*)$", f.read(), re.M)
    res["logs"] = logs
    if len(logs) != 1:
        raise RuntimeError(f"{len(logs)} logs written ({logs}; see {err_path}); exit {res.get('exit')}; "
                           f"{'; '.join(res['errors']) or 'ctl and requests ok'}")
    res["log"] = logs[0]
    res["summary"] = summary(logs[0])
    return res


def by_path(s):
    return {r["path"]: r for r in s["ranges"]}


def range_numbers(r, copies=True):
    """What must agree between two logs of the same window, for one range. copies=False sets the driver's
    copy kernels (DRIVER_COPY: reported with kernel activity only) apart, from the names and the kernels."""
    every = r.get("kernels") or []
    kept = [k for k in every if copies or not DRIVER_COPY.match(k["name"])]
    nums = {"instances": r["instances"], **{c: r["exclusive"][c] for c in COUNTS}}
    nums["kernels"] -= sum(k["count"] for k in every) - sum(k["count"] for k in kept)
    return {**nums, "kernel_names": sorted((k["name"], k["count"]) for k in kept)}


def range_diffs(a, b, label_a, label_b, copies=True):
    """The ranges whose range_numbers differ between two summaries' ranges by path `a` and `b`."""
    diffs = []
    for path in sorted(set(a) | set(b)):
        na, nb = (range_numbers(x[path], copies) if path in x else None for x in (a, b))
        if na != nb:
            diffs.append(f"{path}: {label_a} {na} vs {label_b} {nb}")
    return diffs


def check_exact(res):
    """Row `exact MODE`: the window's numbers against K, M and the graph's kernel count G. A memcpy or
    memset node of the graph may run as a kernel of the driver's own (`memcpy32_post` on the H100 with
    driver 580): such kernels (names memcpy*/memset*) are counted apart and may number at most the
    graph's memcpy and memset nodes C; every other decode kernel comes from one of the G kernel nodes."""
    s, g, c = res["summary"], res["graph_kernels"], res.get("graph_copy_nodes") or 0
    rs = by_path(s)
    steps = K * (M - 1)
    dec = rs.get("request/decode") or {}
    errs = []
    copies = sum(k["count"] for k in dec.get("kernels") or [] if DRIVER_COPY.match(k["name"]))
    if copies % steps or copies // steps > c:
        errs.append(f"decode: {copies} driver copy kernels over {steps} steps (want a multiple, "
                    f"at most {c} per step: the graph's memcpy/memset nodes)")
    d = copies // steps
    want = {"request": {"instances": K}, "request/prefill": {"instances": K},
            "request/sample": {"instances": K * M},
            "request/decode": {"instances": steps, "launches": steps, "graph_launches": steps,
                               "kernels": steps * (g + d) if g else None}}
    for path, fields in want.items():
        r = rs.get(path)
        if r is None:
            errs.append(f"no range {path}")
            continue
        for field, value in fields.items():
            got = r["instances"] if field == "instances" else r["exclusive"][field]
            if value is None or got != value:
                errs.append(f"{path} {field} {got} (want {value})")
    dec = rs.get("request/decode")
    kpi = dec and dec.get("kernels_per_instance")
    if g is None or kpi != g + d:
        errs.append(f"decode kernels per instance {kpi} (want G + D = {g} + {d})")
    req = rs.get("request")
    overall, totals = s["overall"], s["totals"]
    if req is None or overall["kernels"] != req["inclusive"]["kernels"]:
        errs.append(f"kernels outside request: overall {overall['kernels']}, request "
                    f"{req and req['inclusive']['kernels']}")
    for key in ("unmatched_kernels", "launches_without_kernel"):
        if totals.get(key) != 0:
            errs.append(f"{key} {totals.get(key)}")
    segs = [(x["reason"], x["end_reason"]) for x in s.get("segments") or []]
    if segs != [("ctl", "ctl")]:
        errs.append(f"segments {segs} (want one, ctl -> ctl)")
    extra = sorted(p for p in rs if p != "(no range)" and p not in want)
    if extra:
        errs.append(f"ranges recorded outside the window's requests: {extra}")
    detail = (f"G={g}, D={d} copy nodes run as kernels: decode instances {dec and dec['instances']}, launches {dec and dec['exclusive']['launches']}, "
              f"kernels {dec and dec['exclusive']['kernels']} ({kpi} per instance); request {req and req['instances']}, "
              f"sample {rs.get('request/sample', {}).get('instances')}; window {res['tokens_per_s'] or 0:.0f} tokens/s")
    row(f"exact {res['mode']}", not errs, ("; ".join(errs) + " | " if errs else "") + detail)


def check_agree(trace, summ):
    a, b = by_path(trace["summary"]), by_path(summ["summary"])
    diffs = range_diffs(a, b, "trace", "summary")
    row("trace = summary", not diffs, "; ".join(diffs)[:600] if diffs else
        f"{len(a)} ranges equal (instances, launches, graph launches, kernels, kernels by name)")


def check_count_agree(summ, count):
    """Row `count = summary`: the count-only log (no kernel activity) against the summary log with activity,
    per range: instances, launches, graph launches, kernels by name, apart from the driver's copy kernels
    of the graph's memcpy nodes (memcpy*/memset*), which only activity reports."""
    if summ is None:
        row("count = summary", False, "no summary-mode run to compare with")
        return
    a, b = by_path(summ["summary"]), by_path(count["summary"])
    diffs = range_diffs(a, b, "summary", "count", copies=False)
    gpu = count["summary"].get("gpu_time")
    if gpu is not False:
        diffs.append(f"count-only log has gpu_time {gpu!r}")
    spans = ""
    if os.environ.get("SERVER_COUNT_GPU_TIME") == "graphs":  # one GPU span per graph launch, in its range
        for path, r in b.items():
            ex = r["exclusive"]
            if ex.get("graph_gpu_launches") != ex["graph_launches"]:
                diffs.append(f"{path}: {ex.get('graph_gpu_launches')} graph spans, {ex['graph_launches']} graph launches")
        dec = b.get("request/decode", {}).get("exclusive", {})
        if dec.get("graph_gpu_launches"):
            spans = (f"; decode: {dec['graph_gpu_launches']} graph spans, "
                     f"{dec['graph_gpu_ns'] / dec['graph_gpu_launches'] / 1000:.1f} us GPU per replay")
    row("count = summary", not diffs, "; ".join(diffs)[:600] if diffs else
        f"{len(a)} ranges equal (instances, launches, graph launches, kernels, kernels by name; driver copy kernels "
        f"apart), "
        f"window {count['tokens_per_s'] or 0:.0f} tokens/s without activity, {summ['tokens_per_s'] or 0:.0f} with"
        + spans)


def check_segment(trace):
    seg = by_path(summary(trace["log"], "--segment", "0"))
    whole = by_path(trace["summary"])
    same = {p: range_numbers(r) for p, r in seg.items()} == {p: range_numbers(r) for p, r in whole.items()}
    row("trace segment", same, f"--segment 0 {'equals' if same else 'differs from'} the whole log "
        f"({len(seg)} vs {len(whole)} ranges)")


def check_exporter(summ):
    if tool("help", "exporter").returncode != 0:
        row("exporter", "SKIP", "`kcount help exporter` fails: this kcount has no exporter")
        return
    r = tool("exporter", "--once", summ["log"])
    pat = re.compile(r'^kcount_range_kernels_total\{(?=[^}]*range="request/decode")[^}]*\}\s+(\S+)', re.M)
    values = [float(v) for v in pat.findall(r.stdout)]
    want = by_path(summ["summary"])["request/decode"]["inclusive"]["kernels"]
    ok = r.returncode == 0 and len(values) == 1 and values[0] == want
    row("exporter", ok, f"exit {r.returncode}, kcount_range_kernels_total{{range=\"request/decode\"}} {values} "
        f"(want one series = {want}, summary's kernels){'; ' + r.stderr.strip()[-200:] if r.returncode else ''}")


def main():
    os.makedirs(OUT, exist_ok=True)
    t0 = time.time()
    runs = {}
    for mode in ("summary", "trace", "count"):
        try:
            runs[mode] = run_server(mode)
        except Exception as exc:
            row(f"server {mode}", False, f"{type(exc).__name__}: {exc}")
    if "count" in runs:
        count = runs.pop("count")
        for fn, args in ((check_exact, (count,)), (check_count_agree, (runs.get("summary"), count))):
            try:
                fn(*args)
            except Exception as exc:
                row(f"{fn.__name__} count", False, f"{type(exc).__name__}: {exc}")
    if len(runs) == 2:
        gs = [runs[m]["graph_kernels"] for m in runs]
        row("startup", gs[0] == gs[1] and (gs[0] or 0) > 0, f"graph kernel nodes G: summary {gs[0]}, trace {gs[1]}")
        errs = [f"{m}: {e}" for m in runs for e in runs[m]["errors"]]
        errs += [f"{m}: server exit {runs[m]['exit']}" for m in runs if runs[m]["exit"] != 0]
        row("requests", not errs, "; ".join(errs) if errs else
            f"{WARMUP} + {K} + 1 requests of {M} tokens (prompt {PROMPT}) per server, all answered; exit 0")
        for fn, args in ((check_exact, (runs["summary"],)), (check_exact, (runs["trace"],)),
                         (check_segment, (runs["trace"],)), (check_agree, (runs["trace"], runs["summary"])),
                         (check_exporter, (runs["summary"],))):
            try:
                fn(*args)
            except Exception as exc:
                row(fn.__name__, False, f"{type(exc).__name__}: {exc}")
    print()
    print(f"kcount example server checks ({OUT}, {time.time() - t0:.0f} s)")
    print(f"{'CHECK':<20} {'RESULT':<6} DETAILS")
    for name, status, detail in rows:
        print(f"{name:<20} {status:<6} {detail}")
    failed = any(s == "FAIL" for _, s, _ in rows)
    print("RESULT: " + ("FAIL" if failed else "PASS"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
