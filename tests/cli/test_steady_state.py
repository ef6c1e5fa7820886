#!/usr/bin/env python3
"""The steady state the tools put first, and a diff of ranges repeated a different number of times:
- ranges about as repeated as the most (9 in 10 of its instances) count as most repeated, and of them the
  one with the most kernels is the steady state: an inference server's decode step (9 instances, 50
  kernels each) over its sampling (10 instances, one kernel), in `diff`'s first verdict, summary JSON's
  focus and the exporter's kernels per instance;
- a range with 4 instances in A and 8 in B doing the same work per instance: its diff verdict compares
  per instance ("0%"), not totals ("+100%").

Usage: test_steady_state.py BUILD_DIR KC_MAKE_LOG"""
import os
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount_out

MAKE_LOG = sys.argv[2]


def make(path, requests, tokens):
    """A server-like log: per request one prefill, `tokens` decode steps of a 50-kernel graph, and one more
    sample than decode steps."""
    lines = []
    for _ in range(requests):
        lines += ["push request", "push prefill", "kernel 0 _Z7prefillv", "pop"]
        for t in range(tokens + 1):
            lines += ["push sample", "kernel 0 _Z6samplev", "pop"]
            if t < tokens:
                lines += ["push decode", "graphrun 0 50 _Z5layerv", "pop"]
        lines += ["pop"]
    subprocess.run([MAKE_LOG, path], input="\n".join(lines) + "\n", text=True, check=True)


def main():
    tmp = tempfile.mkdtemp(prefix="kcount-steady-")
    a, b = os.path.join(tmp, "a.kcount"), os.path.join(tmp, "b.kcount")
    make(a, 1, 9)  # sample 10, decode 9 instances
    make(b, 2, 9)  # sample 20, decode 18

    out = kcount_out("diff", a, b)
    first = next((l for l in out.splitlines() if l.startswith("verdict for")), "")
    check("diff: the first verdict is decode's (most kernels among the most repeated)",
          first.startswith("verdict for request/decode (most repeated range"), out)
    check("diff: sample's verdict follows (about as repeated)", "verdict for request/sample" in out, out)
    per = [l for l in out.splitlines() if "per instance (" in l]
    check("diff: instance counts differ, so per instance", len(per) >= 2, out)
    check("diff: decode per instance: 1 launch, 50 kernels, unchanged",
          any("(9 in A, 18 in B): launches 1 -> 1 (0%), kernels 50 -> 50 (0%)" in l for l in per), per)
    check("diff: no total change is shown for decode", "kernels 450 -> 900" not in out, out)

    # The exporter serves summary-mode logs: the example server's, recorded on the GPU (sample 256, decode
    # 248 instances of 239 kernels).
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "logs",
                           "serve-graphs.kcount")
    prom = kcount_out("exporter", "--once", shipped)
    gauge = [l for l in prom.splitlines() if l.startswith("kcount_range_kernels_per_instance{")]
    check("exporter: kernels per instance of the server's request/decode, 239",
          len(gauge) == 1 and 'range="request/decode"' in gauge[0] and gauge[0].endswith(" 239"), gauge)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
