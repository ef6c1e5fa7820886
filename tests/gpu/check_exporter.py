"""GPU check of `kcount exporter` (docs/production.md): the HTTP inference server (control/server.py, a
PyTorch MLP) started with libkcount.so preloaded, paused, in summary mode with module ranges
(KCOUNT_TORCH_MODULES=1); a window opened by `kcount ctl PID start` for 50 requests and closed by `stop`;
`kcount exporter` (127.0.0.1, a free port) scraped while it runs and after it exits. Checks that the
per-range kernel, launch and instance counters of the last scrape equal `kcount summary --format json` of
the same log (innermost numbers), and prints the commands' outputs (for docs/production.md).

    python3 tests/gpu/check_exporter.py BUILD_DIR OUTDIR      (BUILD_DIR: build, or .carry on the GPU)

Exits 1 if a check failed.
"""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

BUILD = os.path.abspath(sys.argv[1])
OUT = os.path.abspath(sys.argv[2])
KCOUNT = os.path.join(BUILD, "bin", "kcount")
LIB = os.path.join(BUILD, "lib", "libkcount.so")
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(OUT, exist_ok=True)
control = os.path.join(OUT, "control")
os.makedirs(control, mode=0o700, exist_ok=True)
os.chmod(control, 0o700)
env = dict(os.environ, KCOUNT_CONTROL_DIR=control)
failed = []


def check(name, ok, detail=""):
    print(f"==> {name}: {'PASS' if ok else 'FAIL'} {detail}", flush=True)
    if not ok:
        failed.append(name)


def shown(cmd, out):
    print("$ " + " ".join(cmd) + "\n" + out.rstrip() + "\n", flush=True)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    shown(cmd, r.stdout + r.stderr)
    return r


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def samples(text, name):
    out = {}
    for line in text.splitlines():
        m = re.match(rf'^{name}\{{(.*)\}} (\S+)$', line)
        if m:
            labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(1)))
            out[(labels.get("pid"), labels.get("range"))] = float(m.group(2))
    return out


log = os.path.join(OUT, "server.kcount")
if os.path.exists(log):
    os.remove(log)
server = subprocess.Popen([sys.executable, os.path.join(HERE, "control", "server.py"), "--port", "0"],
                          stdout=subprocess.PIPE, stderr=open(os.path.join(OUT, "server.stderr.txt"), "w"), text=True,
                          env=dict(env, LD_PRELOAD=LIB, KCOUNT_START="paused", KCOUNT_MODE="summary",
                                   KCOUNT_INTERVAL="1s", KCOUNT_TORCH_MODULES="1", KCOUNT_OUTPUT=log))
exporter = subprocess.Popen([KCOUNT, "exporter", "--listen", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True, env=env)
try:
    port = server.stdout.readline().split()[1]
    url = f"http://127.0.0.1:{port}/infer"
    m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", exporter.stderr.readline())
    metrics = f"http://127.0.0.1:{m.group(1)}/metrics"
    for i in range(20):  # paused: nothing recorded
        post(url, {"value": 0.01})
    run([KCOUNT, "ctl", str(server.pid), "start"])
    for i in range(50):
        post(url, {"value": 0.01 * (i % 5)})
    run([KCOUNT, "ctl", str(server.pid), "stop"])
    time.sleep(2.5)  # the next periodic snapshot
    live = urllib.request.urlopen(metrics).read().decode()
    shown(["curl", "-s", metrics], "\n".join(l for l in live.splitlines() if str(server.pid) in l or l.startswith("# TYPE")))
    post(f"http://127.0.0.1:{port}/quit", {})
    check("server exits 0", server.wait(timeout=60) == 0)
    time.sleep(1)
    final = urllib.request.urlopen(metrics).read().decode()
    r = run([KCOUNT, "summary", log])
    js = json.loads(subprocess.run([KCOUNT, "summary", "--format", "json", log], capture_output=True, text=True).stdout)
    ranges = {x["path"]: x for x in js["logs"][0]["ranges"]}
    pid = str(server.pid)
    for metric, field in [("kcount_range_kernels_total", "kernels"), ("kcount_range_launches_total", "launches")]:
        got = {rng: v for (p, rng), v in samples(final, metric).items() if p == pid}
        want = {path: float(x["exclusive"][field]) for path, x in ranges.items()
                if x["exclusive"][field] or x["instances"]}
        check(f"{metric} per range = kcount summary's innermost {field}", got and got == want,
              f"{len(got)} ranges, total {sum(got.values()):.0f}" if got == want else (got, want))
    got = {rng: v for (p, rng), v in samples(final, "kcount_range_instances_total").items() if p == pid}
    want = {path: float(x["instances"]) for path, x in ranges.items() if x["exclusive"]["kernels"] or x["instances"]}
    check("kcount_range_instances_total per range = kcount summary's instances", got == want, "" if got == want else (got, want))
    up = samples(final, "kcount_up")
    check("after the exit: kcount_up 0 for the server", any(p == pid and v == 0 for (p, _), v in up.items()), up)
finally:
    for p in (server, exporter):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
print("FAILED: " + ", ".join(failed) if failed else "all passed")
sys.exit(1 if failed else 0)
