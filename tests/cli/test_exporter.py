#!/usr/bin/env python3
"""kcount exporter end to end, without a GPU, everything on 127.0.0.1:
- a real Prometheus (Debian's prometheus) scrapes the exporter every second while two summary-mode
  processes run: kc_summary_process (the collector's Aggregator writing snapshots as the library's writer
  thread does; its log named on the exporter's command line) and nvtx_server with libkcount.so preloaded
  (KCOUNT_MODE=summary; found through its control socket). After they end, Prometheus's query API
  (/api/v1/query) gives kcount_range_kernels_total (and the other counters) equal to the log's numbers from
  `kcount summary --format json`; `promtool check metrics` passes on the exporter's output;
- a process that exits is served as down (kcount_up 0) with its final totals while the rest is served;
- counters do not go backwards when the log read goes back to an earlier snapshot;
- `kcount exporter --once`: the same numbers; a damaged log, a symbolic link, another user's log, a trace
  log, a missing file: kcount_up 0, exit 1, the other logs still served, no crash.
Everything started is stopped, also on failure. Usage: test_exporter.py BUILD_DIR KC_SUMMARY_PROCESS"""
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from checks import check, exit_status

BUILD = os.path.abspath(sys.argv[1])
WRITER = os.path.abspath(sys.argv[2])
KCOUNT = os.path.join(BUILD, "bin", "kcount")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(BUILD, "lib", "libkcount.so")
SERVER = os.path.join(BUILD, "bin", "nvtx_server")
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
STEPS = 50  # of the writer, 100 ms each: several scrapes while it runs

started = []  # every process started, stopped in the finally below


def start(args, **kw):
    p = subprocess.Popen(args, **kw)
    started.append(p)
    return p


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(text):
    """[(name, {label: value}, float)] of an exposition text."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m:
            out.append((m.group(1), dict(LABEL.findall(m.group(3) or "")), float(m.group(4))))
    return out


def value(text, name, **labels):
    """The value of the one sample `name` whose labels include `labels`; None if none, "many" if several."""
    found = [v for n, l, v in samples(text) if n == name and all(l.get(k) == str(x) for k, x in labels.items())]
    return found[0] if len(found) == 1 else (None if not found else "many")


def summary_ranges(log):
    r = subprocess.run([KCOUNT, "summary", "--format", "json", log], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return {x["path"]: x for x in json.loads(r.stdout)["logs"][0]["ranges"]}


def once(*logs, extra=()):
    r = subprocess.run([KCOUNT, "exporter", "--once", *extra, *logs], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


tmp = tempfile.mkdtemp(prefix="kcount-exporter-test.")
os.chmod(tmp, 0o755)  # another user must be able to reach the file given away below
control = os.path.join(tmp, "control")
os.mkdir(control, 0o700)
env = dict(os.environ, KCOUNT_CONTROL_DIR=control)
try:
    if PROMETHEUS is None or PROMTOOL is None:
        check("prometheus and promtool installed (Debian's prometheus; scripts/install_deps.sh)", False)
        sys.exit(exit_status())

    # ---- the exporter, on a free port of 127.0.0.1, serving the live processes and the writer's log.
    live_log = os.path.join(tmp, "live.kcount")
    exporter = start([KCOUNT, "exporter", "--listen", "127.0.0.1:0", "--keep-exited", "120", live_log],
                     env=env, stderr=subprocess.PIPE, text=True)
    line = exporter.stderr.readline()
    m = re.search(r"serving http://127\.0\.0\.1:(\d+)/metrics", line)
    check("exporter says where it serves (127.0.0.1, a free port)", m, line)
    port = int(m.group(1)) if m else 0
    metrics_url = f"http://127.0.0.1:{port}/metrics"
    text = http_get(metrics_url)
    check("before any log: the watched log missing is served as down",
          value(text, "kcount_up", pid="") == 0, text)

    # ---- Prometheus on loopback, scraping it every second, storage in the test's folder.
    prom_port = free_port()
    config = os.path.join(tmp, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: kcount\n    scrape_interval: 1s\n    scrape_timeout: 1s\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
    prom = start([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={os.path.join(tmp, 'tsdb')}",
                  f"--web.listen-address=127.0.0.1:{prom_port}", "--log.level=warn"],
                 stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w"))
    prom_url = f"http://127.0.0.1:{prom_port}"
    ready = False
    for _ in range(300):
        try:
            ready = http_get(prom_url + "/-/ready", timeout=1).strip() != ""
            break
        except Exception:
            time.sleep(0.1)
    check("prometheus ready on 127.0.0.1", ready, open(os.path.join(tmp, "prometheus.log")).read()[-2000:])
    scraping = None
    for _ in range(300):  # its first scrape comes after target discovery (about 5 s)
        try:
            body = json.loads(http_get(prom_url + "/api/v1/query?query=up"))
            scraping = [r["value"][1] for r in body["data"]["result"]]
            if scraping == ["1"]:
                break
        except Exception:
            pass
        time.sleep(0.1)
    check("prometheus scrapes the exporter (up 1)", scraping == ["1"], scraping)

    # ---- two summary-mode processes: the writer (7 kernels a step) and nvtx_server with the library.
    writer = start([WRITER, live_log, str(STEPS), "100", "300"], env=dict(env, RANK="3"))
    server_log = os.path.join(tmp, "server.kcount")
    server = start([SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                   env=dict(env, LD_PRELOAD=LIB, KCOUNT_OUTPUT=server_log, KCOUNT_CONTROL="on",
                            KCOUNT_MODE="summary", KCOUNT_INTERVAL="200ms", KCOUNT_LOG_LEVEL="warn"))

    def serve(n):  # "done N", or why nvtx_server did not answer (its exit status and stderr)
        try:
            server.stdin.write(f"{n}\n")
            server.stdin.flush()
            answer = server.stdout.readline().strip()
        except OSError as e:
            answer = str(e)
        if answer == f"done {n}":
            return answer
        server.kill()
        return f"{answer!r}; nvtx_server exit {server.wait(timeout=10)}; stderr: {server.stderr.read()[-3000:]}"

    answer = serve(5)
    check("nvtx_server answers", answer == "done 5", answer)
    # While both run: the exporter finds nvtx_server through its socket, recording, up.
    mid = ""
    for _ in range(100):
        mid = http_get(metrics_url)
        if value(mid, "kcount_up", pid=server.pid) == 1 and value(mid, "kcount_range_kernels_total", pid=writer.pid,
                                                                   range="step/layer") is not None:
            break
        time.sleep(0.1)
    check("live: nvtx_server found through its control socket, up, recording",
          value(mid, "kcount_up", pid=server.pid) == 1 and value(mid, "kcount_recording", pid=server.pid) == 1, mid)
    check("live: the writer's log served while it grows, rank from its metadata (RANK)",
          value(mid, "kcount_up", pid=writer.pid, rank=3) == 1, mid)
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=mid, capture_output=True, text=True)
    check("promtool check metrics passes on the exporter's output", lint.returncode == 0, lint.stdout + lint.stderr)
    check("served as text/plain version 0.0.4",
          urllib.request.urlopen(metrics_url).headers.get("Content-Type", "").startswith("text/plain; version=0.0.4"))
    answer = serve(20)
    check("nvtx_server answers again", answer == "done 20", answer)
    check("writer exits 0", writer.wait(timeout=60) == 0)

    # ---- nvtx_server exits: served as down, with its final totals, while the rest is still served.
    server.stdin.write("quit\n")
    server.stdin.flush()
    check("nvtx_server exits 0", server.wait(timeout=30) == 0, server.stderr.read())
    time.sleep(3)  # three scrapes after both ended
    after = http_get(metrics_url)
    check("exited process: kcount_up 0, recording 0",
          value(after, "kcount_up", pid=server.pid) == 0 and value(after, "kcount_recording", pid=server.pid) == 0, after)
    check("the rest still served: the writer's log up", value(after, "kcount_up", pid=writer.pid) == 1, after)

    # ---- Prometheus's numbers equal the logs' (kcount summary --format json, innermost numbers).
    def query(q):
        body = http_get(prom_url + "/api/v1/query?" + urllib.parse.urlencode({"query": q}))
        res = json.loads(body)["data"]["result"]
        return float(res[0]["value"][1]) if len(res) == 1 else (None, body)

    live = summary_ranges(live_log)
    check("kcount summary reads the writer's log", live is not None and "step/layer" in live, live)
    want = live["step/layer"]["exclusive"]["kernels"] if live else -1
    got = query(f'kcount_range_kernels_total{{range="step/layer",pid="{writer.pid}"}}')
    check(f"prometheus: kcount_range_kernels_total of step/layer = the log's count ({want})",
          want == STEPS * 6 and got == want, (got, want))
    for metric, field, scale in [("launches_total", "launches", 1), ("gpu_seconds_total", "gpu_ns", 1e9),
                                 ("launch_cpu_seconds_total", "launch_api_ns", 1e9)]:
        got = query(f'kcount_range_{metric}{{range="step/sample",pid="{writer.pid}"}}')
        want = live["step/sample"]["exclusive"][field] / scale if live else -1
        check(f"prometheus: kcount_range_{metric} of step/sample = the log's",
              isinstance(got, float) and abs(got - want) <= 1e-12 * max(1, want), (got, want))
    got = query(f'kcount_range_instances_total{{range="step",pid="{writer.pid}"}}')
    check(f"prometheus: kcount_range_instances_total of step = {STEPS}", got == STEPS and live["step"]["instances"] == STEPS, got)
    got = query(f'kcount_range_kernels_per_instance{{pid="{writer.pid}"}}')
    check("prometheus: kernels per instance of the most repeated range (step/layer: 2)", got == 2, got)
    server_ranges = summary_ranges(server_log)
    got = query(f'kcount_range_instances_total{{range="request/inner",pid="{server.pid}"}}')
    want = server_ranges["request/inner"]["instances"] if server_ranges else -1
    check(f"prometheus: the exited library process's request/inner instances = its log's ({want})",
          want == 25 and got == want, (got, want))
    got = query(f'kcount_range_kernels_total{{range="request/inner",pid="{server.pid}"}}')
    check("prometheus: its kernels (none without CUDA) = its log's", got == server_ranges["request/inner"]["exclusive"]["kernels"], got)
    got = query(f'max_over_time(kcount_range_kernels_total{{range="step/layer",pid="{writer.pid}"}}[1m]) - '
                f'min_over_time(kcount_range_kernels_total{{range="step/layer",pid="{writer.pid}"}}[1m])')
    check("prometheus saw the counter grow while the writer ran (scraped before the end)",
          isinstance(got, float) and got > 0, got)

    # ---- a count-only log (KCOUNT_GPU_TIME=0, recorded on a GPU): kernels served, no GPU seconds (not 0)
    rc, out, err = once(os.path.join(REPO, "examples", "logs", "serve-count-only.kcount"))
    check("--once on a count-only log: decode's kernels, no kcount_range_gpu_seconds_total sample",
          rc == 0 and value(out, "kcount_range_kernels_total", range="request/decode") == 155 * 239
          and "\nkcount_range_gpu_seconds_total{" not in out, (rc, out[-1500:], err))

    # ---- a KCOUNT_GPU_TIME=graphs log (recorded on a GPU): the decode replays' GPU spans served in seconds
    rc, out, err = once(os.path.join(REPO, "examples", "logs", "serve-graphs.kcount"))
    decode = summary_ranges(os.path.join(REPO, "examples", "logs", "serve-graphs.kcount"))["request/decode"]["exclusive"]
    check("--once on a graphs log: decode's graph spans and their seconds, no kcount_range_gpu_seconds_total",
          rc == 0 and value(out, "kcount_range_graph_gpu_launches_total", range="request/decode") == 248 ==
          decode["graph_gpu_launches"]
          and value(out, "kcount_range_graph_gpu_seconds_total", range="request/decode") == decode["graph_gpu_ns"] / 1e9
          and "\nkcount_range_gpu_seconds_total{" not in out, (rc, out[-1500:], err))

    # ---- --once gives the same numbers; counters held when the log goes back to an earlier snapshot.
    rc, out, err = once(live_log)
    check("--once on the final log: exit 0, the kernels of step/layer",
          rc == 0 and value(out, "kcount_range_kernels_total", range="step/layer") == STEPS * 6, (rc, out[-1500:], err))
    with open(live_log, "rb") as f:
        data = f.read()
    before = value(http_get(metrics_url), "kcount_range_kernels_total", range="step/layer", pid=writer.pid)
    with open(live_log, "wb") as f:
        f.write(data[: len(data) // 2])  # the log read goes back to an earlier snapshot (a cut tail)
    rc_half, out_half, _ = once(live_log)
    half = value(out_half, "kcount_range_kernels_total", range="step/layer")
    held = value(http_get(metrics_url), "kcount_range_kernels_total", range="step/layer", pid=writer.pid)
    check("an older snapshot read: the served counter does not go backwards",
          isinstance(half, float) and half < STEPS * 6 and before == STEPS * 6 and held == STEPS * 6, (half, before, held))
    with open(live_log, "wb") as f:
        f.write(data)

    # ---- bad input: damaged, link, another user's, trace log, missing file; the good log still served.
    damaged = os.path.join(tmp, "damaged.kcount")
    with open(server_log, "rb") as f:
        flipped = bytearray(f.read())  # another run than the good log's (a copy of one run is served once)
    for i in range(len(flipped) // 3, len(flipped) // 3 + 64):
        flipped[i] ^= 0x5A
    with open(damaged, "wb") as f:
        f.write(bytes(flipped))
    link = os.path.join(tmp, "link.kcount")
    os.symlink(live_log, link)
    trace_log = os.path.join(tmp, "trace.kcount")
    subprocess.run([SERVER], input="3\nquit\n", text=True, capture_output=True,
                   env=dict(env, LD_PRELOAD=LIB, KCOUNT_OUTPUT=trace_log, KCOUNT_LOG_LEVEL="warn"))
    bad = [damaged, link, trace_log, os.path.join(tmp, "missing.kcount")]
    foreign = None
    if os.geteuid() == 0:
        foreign = os.path.join(tmp, "foreign.kcount")
        shutil.copy(live_log, foreign)
        os.chown(foreign, pwd.getpwnam("nobody").pw_uid, -1)
        bad.append(foreign)
    else:
        print("SKIP another user's log (needs root to give a file away)")
    rc, out, err = once(live_log, *bad)
    check("--once with bad logs: exit 1, no crash", rc == 1, (rc, err))
    check("--once with bad logs: the good log still served, up",
          value(out, "kcount_range_kernels_total", range="step/layer") == STEPS * 6 and
          len([v for n, l, v in samples(out) if n == "kcount_up" and v == 1]) == 1, out[-2000:])
    check(f"--once with bad logs: each of the {len(bad)} bad ones kcount_up 0",
          len([v for n, l, v in samples(out) if n == "kcount_up" and v == 0]) == len(bad), out[-2000:])
    if foreign is not None:
        strace = shutil.which("strace")
        if strace:
            r = subprocess.run([strace, "-f", "-e", "trace=read,pread64,mmap,openat,close", "-o",
                                os.path.join(tmp, "strace.txt"), KCOUNT, "exporter", "--once", foreign],
                               capture_output=True, text=True)
            # The calls on the descriptor of foreign.kcount while it is open: none may read it.
            fd, opened, reads = None, 0, []
            for call in open(os.path.join(tmp, "strace.txt")).read().splitlines():
                m = re.search(r'openat\(.*foreign\.kcount.*\) = (\d+)', call)
                if m:
                    fd, opened = m.group(1), opened + 1
                elif fd is not None and re.search(rf"\bclose\({fd}\)", call):
                    fd = None
                elif fd is not None and re.search(rf"\b(read|pread64)\({fd},|mmap\(.*, {fd}, ", call):
                    reads.append(call)
            check("another user's log: opened to look at its owner, never read", r.returncode == 1 and opened and not reads,
                  (r.returncode, opened, reads[:3]))
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=out, capture_output=True, text=True)
    check("promtool check metrics passes with bad logs in the output", lint.returncode == 0, lint.stdout + lint.stderr)
    rc, out, err = once()
    check("--once without logs: exit 2 with usage", rc == 2 and "--once needs" in err, (rc, err))
    r = subprocess.run([KCOUNT, "exporter", "--listen", "nonsense"], capture_output=True, text=True, timeout=30)
    check("--listen without a port: exit 2", r.returncode == 2 and "HOST:PORT" in r.stderr, (r.returncode, r.stderr))
    r = subprocess.run([KCOUNT, "exporter", "--listen", f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=30)
    check("--listen on a port in use: exit 1 saying so", r.returncode == 1 and "cannot listen" in r.stderr,
          (r.returncode, r.stderr))
    check("the exporter still serves after all that", value(http_get(metrics_url), "kcount_exporter_processes") is not None)
    exporter.send_signal(signal.SIGTERM)
    check("exporter stops on SIGTERM with exit 0", exporter.wait(timeout=30) == 0)
finally:
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)
sys.exit(exit_status())
