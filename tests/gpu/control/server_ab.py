"""Throughput of the HTTP inference server (server.py) under several process set-ups, side by side: all
servers run at once and batches of requests go to each in turn, in an order that rotates every round,
so each set-up sees the same GPU, machine load and warm-up. Says which part of loading kcount costs
requests per second while it records nothing.

    python3 server_ab.py BUILD_DIR [--rounds 8] [--requests 200] [--json OUT.json]

Set-ups: none and none-2 (two plain servers: the spread between identical processes), preload-paused
(LD_PRELOAD=libkcount.so, KCOUNT_START=paused), preload-paused-nocontrol (also KCOUNT_CONTROL=off: no
control socket thread), inject-paused (CUDA_INJECTION64_PATH only: no symbol interposition). Prints
one line per set-up: median req/s, min..max, and the change against `none`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


class Server:
    """One server.py process (environment = ours + env_extra; stderr to OUTDIR/ab-TAG.stderr.txt) and a
    sequential client: requests(n) -> requests per second; sent/failed counters; quit() -> exit status."""

    def __init__(self, tag, env_extra, outdir):
        env = dict(os.environ)
        env.update(env_extra)
        self.tag = tag
        self.err = open(os.path.join(outdir, f"ab-{tag}.stderr.txt"), "w")
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "server.py"), "--port", "0"],
                                  stdout=subprocess.PIPE, stderr=self.err, env=env, text=True, cwd=outdir)
        line = self.p.stdout.readline().split()
        if len(line) != 2 or line[0] != "PORT":
            raise RuntimeError(f"server {tag} did not start (see {self.err.name})")
        self.url = f"http://127.0.0.1:{line[1]}"
        self.failed = 0
        self.sent = 0

    def post(self, path, body):
        req = urllib.request.Request(self.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())

    def requests(self, n):
        t = time.perf_counter()
        for i in range(n):
            self.sent += 1
            try:
                code, body = self.post("/infer", {"value": 0.001 * (i % 7)})
                self.failed += code != 200 or not body.get("ok")
            except Exception:
                self.failed += 1
        return n / (time.perf_counter() - t)

    def quit(self):
        try:
            self.post("/quit", {})
        except Exception:
            pass
        rc = self.p.wait(timeout=60)
        self.err.close()
        return rc


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--json", default=None)
    p.add_argument("--outdir", default="/tmp/kcount-server-ab")
    a = p.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    lib = os.path.join(os.path.abspath(a.build), "lib", "libkcount.so")
    log = os.path.join(a.outdir, "ab-%p.kcount")
    setups = {
        "none": {},
        "none-2": {},
        "preload-paused": {"LD_PRELOAD": lib, "KCOUNT_START": "paused", "KCOUNT_OUTPUT": log},
        "preload-paused-nocontrol": {"LD_PRELOAD": lib, "KCOUNT_START": "paused", "KCOUNT_CONTROL": "off",
                                     "KCOUNT_OUTPUT": log},
        "inject-paused": {"CUDA_INJECTION64_PATH": lib, "KCOUNT_START": "paused", "KCOUNT_OUTPUT": log},
    }
    servers = {k: Server(k, v, a.outdir) for k, v in setups.items()}
    rps = {k: [] for k in setups}
    names = list(setups)
    try:
        for s in servers.values():
            s.requests(30)  # warm-up
        for r in range(a.rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            if r % 2:
                order.reverse()
            for k in order:
                rps[k].append(servers[k].requests(a.requests))
    finally:
        rcs = {k: s.quit() for k, s in servers.items()}
    base = statistics.median(rps["none"])
    out = {}
    for k in names:
        m = statistics.median(rps[k])
        out[k] = {"median": m, "min": min(rps[k]), "max": max(rps[k]), "vs_none": m / base - 1,
                  "failed": servers[k].failed, "exit": rcs[k]}
        print(f"{k:<26} median {m:7.0f} req/s  [{min(rps[k]):.0f}..{max(rps[k]):.0f}]  {100 * (m / base - 1):+6.1f}% "
              f"vs none  failed {servers[k].failed} exit {rcs[k]}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rounds": a.rounds, "requests": a.requests, "setups": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
