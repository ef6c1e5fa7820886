#!/usr/bin/env python3
"""kcount's own cost per range (format 1.4, RangeCallbacks records) in the reading commands: `check` prints,
after the log's own-cost line, the ranges with the most estimated self time (at most 5, one line each), the
summary footer one line naming 3, `summary --format json` a "by_range" array in "kcount_cost"; a record
that cannot be right is an error and the others still show; a log without the records (every shipped log)
prints nothing of it. Logs written by kc_make_log (tests/programs/make_log.cpp).
Usage: test_range_cost.py BUILD_DIR KC_MAKE_LOG"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
COST = ["meta kcount_callbacks 10000", "meta kcount_callbacks_timed 150", "meta kcount_callback_timed_ns 15000"]

# request (inclusive 4000 callbacks, 60 timed, 6010 ns) holds decode (2480, 38, 3230) and prefill (900, 10,
# 1000): request's self is 620 callbacks, 12 timed, 1780 ns. idle has none timed; tail and more two more.
RANGES = ["push request", "kernel 1000 k",
          "push decode", "kernel 1000 k", "rangecost 2480 38 3230", "pop",
          "push prefill", "rangecost 900 10 1000", "pop",
          "rangecost 4000 60 6010", "pop",
          "push idle", "rangecost 5 0 0", "pop",
          "push tail", "rangecost 64 1 50", "pop",
          "push more", "rangecost 3 1 40", "pop"]


def make_log(path, lines):
    subprocess.run([sys.argv[2], path], input="\n".join(lines) + "\n", text=True, check=True)


def by_range_lines(text):
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("  by range (self"):
            return lines[i:i + 1] + [m for m in lines[i + 1:i + 7] if m.startswith("    ")]
    return []


def footer_lines(text):
    return [l for l in text.splitlines() if l.startswith("kcount's own cost by range")]


def main():
    with tempfile.TemporaryDirectory() as work:
        ranged = os.path.join(work, "ranged.kcount")
        plain = os.path.join(work, "plain.kcount")
        damaged = os.path.join(work, "damaged.kcount")
        make_log(ranged, COST + RANGES)
        make_log(plain, COST + [l for l in RANGES if not l.startswith("rangecost")])
        make_log(damaged, COST + RANGES[:5] + ["rangecost 10 11 1100"] + RANGES[5:])

        rc, out, err = kcount("check", ranged)
        want = ["  by range (self: callbacks inside the range but not its child ranges), most first:",
                "    request/decode: 2480 callbacks, about 211 µs (38 timed, mean 85 ns)",
                "    request: 620 callbacks, about 92.0 µs (12 timed, mean 148 ns)",
                "    request/prefill: 900 callbacks, about 90.0 µs (10 timed, mean 100 ns)",
                "    tail: 64 callbacks, about 3.20 µs (1 timed, mean 50 ns)",
                "    more: 3 callbacks, about 120 ns (1 timed, mean 40 ns)"]
        check("check: after the log's own-cost line, the 5 ranges with the most self time, one line each",
              by_range_lines(out) == want, "\n".join(by_range_lines(out)) or out[-1500:])
        lines = out.splitlines()
        at = [i for i, l in enumerate(lines) if l.startswith("kcount's own cost:")]
        check("check: the per-range lines follow the log's line", at and lines[at[0] + 1] == want[0], out[-1500:])
        check("check: exit 0", rc == 0, (rc, err[-500:]))

        rc, out, err = kcount("summary", ranged)
        want = ("kcount's own cost by range (self): request/decode about 211 µs (2480 callbacks), request about 92.0 µs "
                "(620 callbacks), request/prefill about 90.0 µs (900 callbacks)")
        check("summary footer: one line naming the 3 ranges with the most self time", footer_lines(out) == [want],
              footer_lines(out) or out[-1500:])

        rc, out, err = kcount("summary", "--format", "json", ranged)
        cost = json.loads(out)["logs"][0]["kcount_cost"]
        by_range = cost.get("by_range")
        check("summary JSON: by_range, most estimated self time first, ranges without a sample last",
              by_range is not None and [r["path"] for r in by_range] == ["request/decode", "request", "request/prefill", "tail",
                                                                          "more", "idle"],
              by_range)
        check("summary JSON: a range's inclusive and self counts and its estimate",
              by_range and by_range[1] == {"path": "request", "callbacks": 4000, "timed": 60, "timed_ns": 6010,
                                           "self_callbacks": 620, "self_timed": 12, "self_timed_ns": 1780,
                                           "estimated_ns": 91967}, by_range and by_range[1])
        check("summary JSON: none timed, no estimate",
              by_range and by_range[-1]["estimated_ns"] is None and by_range[-1]["self_callbacks"] == 5,
              by_range and by_range[-1])
        check("summary JSON: the log's own numbers unchanged beside it",
              cost["callbacks"] == 10000 and cost["estimated_ns"] == 1000000, cost)

        # A record that cannot be right (more timed than callbacks): an error, the other ranges still shown.
        rc, out, err = kcount("check", damaged)
        check("check of a damaged record: the error names it", "range callbacks record" in out + err and
              "is damaged (scope 2, 10 callbacks, 11 timed); skipped" in out + err, (out + err)[-1500:])
        check("check of a damaged record: the other ranges' lines", by_range_lines(out)[1:2] ==
              ["    request/decode: 2480 callbacks, about 211 µs (38 timed, mean 85 ns)"], by_range_lines(out))
        check("check of a damaged record: exit status says the log is damaged", rc != 0, rc)

        # Logs without the records: nothing of it, and no by_range key.
        for name, path in [("a log without the records", plain), ("a shipped log", SHIPPED)]:
            rc, out, err = kcount("check", path)
            check(f"check: no per-range lines for {name}", not by_range_lines(out), by_range_lines(out))
            rc, out, err = kcount("summary", path)
            check(f"summary footer: no per-range line for {name}", not footer_lines(out), footer_lines(out))
            rc, out, err = kcount("summary", "--format", "json", path)
            cost = json.loads(out)["logs"][0]["kcount_cost"]
            check(f"summary JSON: no by_range for {name}", cost is None or "by_range" not in cost, cost)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
