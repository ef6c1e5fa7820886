"""Launch-loop timing for tests/gpu/check_control.py: microseconds per `a.add_(1)` on a 16-element tensor
(one kernel launch per iteration), in rounds. With --ctl KCOUNT: round 0..K-1 before any capture
(paused), then `kcount ctl <own pid> start`, one round while recording, `kcount ctl stop`, one round that
takes the stop's one-time work (CUPTI is finalized at the first CUDA call after a stop; the writer closes
the window meanwhile), then rounds after the stop. Prints one JSON line: {"before": [...], "recording":
[...], "stopping": [...], "after": [...], "cupti_before": ..., "cupti_after": "finalized"|...,
"launches_at_stop": N, "launches_after": N} (µs/iter; CUPTI's state by `kcount ctl status` before the
start and after the last round; the library's launch records taken right after the stop and after the
last round: equal when nothing was recorded after the stop).

    python3 launch_loop.py --iters 20000 --rounds 3 [--ctl PATH_TO_KCOUNT]
"""
import argparse
import json
import os
import subprocess
import time

import torch


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ctl", default=None)
    args = p.parse_args()
    a = torch.zeros(16, device="cuda")
    for _ in range(2000):
        a.add_(1)
    torch.cuda.synchronize()

    def measure():
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(args.iters):
            a.add_(1)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / args.iters * 1e6

    out = {"before": [measure() for _ in range(args.rounds)], "recording": [], "stopping": [], "after": []}
    if args.ctl:
        def status():
            """The library's `ctl status` as a dict; {"error": text} when it cannot be read."""
            st = subprocess.run([args.ctl, "ctl", str(os.getpid()), "status", "--format", "json"],
                                capture_output=True, text=True)
            try:
                return json.loads(st.stdout.strip().splitlines()[-1])["status"]
            except Exception:
                return {"error": f"ctl status exit {st.returncode}: {(st.stdout + st.stderr)[-200:]}"}

        out["cupti_before"] = status().get("cupti")  # paused: CUPTI never loaded
        subprocess.run([args.ctl, "ctl", str(os.getpid()), "start"], check=True, stdout=subprocess.DEVNULL)
        out["recording"].append(measure())
        subprocess.run([args.ctl, "ctl", str(os.getpid()), "stop"], check=True, stdout=subprocess.DEVNULL)
        out["launches_at_stop"] = status().get("records", {}).get("launches")
        out["stopping"].append(measure())
        out["after"] = [measure() for _ in range(args.rounds)]
        # What the library says after the rounds: CUPTI "finalized" once dynamic detach ran, and no launch
        # recorded since the stop.
        end = status()
        out["cupti_after"] = end.get("cupti", end.get("error"))
        out["launches_after"] = end.get("records", {}).get("launches")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
