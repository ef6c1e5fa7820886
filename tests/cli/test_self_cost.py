#!/usr/bin/env python3
"""kcount's own cost (metadata kcount_callbacks, kcount_callbacks_timed, kcount_callback_timed_ns) in the
reading commands: `check` prints one line, the summary footer one line, `summary --format json` a
"kcount_cost" object (null without the keys); several logs read together add up; a log without the keys
(every shipped log, written before them) prints nothing. Logs written by kc_make_log
(tests/programs/make_log.cpp). Usage: test_self_cost.py BUILD_DIR KC_MAKE_LOG"""
import json
import os
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
LINE = "kcount's own cost"


def make_log(path, meta):
    """Two steps of one launch each, with the metadata entries `meta` ((key, value) pairs)."""
    lines = [f"meta {k} {v}" for k, v in meta]
    for _ in range(2):
        lines += ["push step", "kernel 1000 k", "pop"]
    subprocess.run([sys.argv[2], path], input="\n".join(lines) + "\n", text=True, check=True)


def cost_meta(callbacks, timed, timed_ns):
    return [("kcount_callbacks", callbacks), ("kcount_callbacks_timed", timed), ("kcount_callback_timed_ns", timed_ns)]


def lines_with(text, word=LINE):
    return [l for l in text.splitlines() if word in l]


def main():
    with tempfile.TemporaryDirectory() as work:
        with_cost = os.path.join(work, "with.kcount")
        other = os.path.join(work, "other.kcount")
        without = os.path.join(work, "without.kcount")
        untimed = os.path.join(work, "untimed.kcount")
        damaged = os.path.join(work, "damaged.kcount")
        # 19290 callbacks timed, 84 ns each: 1234567 x 84 ns = 103703628 ns in all.
        make_log(with_cost, cost_meta(1234567, 19290, 19290 * 84))
        make_log(other, cost_meta(1000, 10, 10 * 100))  # 100 µs in all
        make_log(without, [])
        make_log(untimed, cost_meta(12, 0, 0))
        make_log(damaged, cost_meta(10, 20, 1000))  # more timed than handled: not a cost kcount wrote

        rc, out, err = kcount("check", with_cost)
        want = ("kcount's own cost: 1234567 callbacks on the program's threads; 19290 timed: mean 84 ns, about "
                "104 ms in all (estimated from the sample)")
        check("check: the line with the count, the sample and the estimate", want in out.splitlines(), lines_with(out))
        check("check: exit 0 (the cost is not a state)", rc == 0, (rc, out[-500:]))
        rc, out, err = kcount("summary", with_cost)
        want = "kcount's own cost: about 104 ms on the program's threads (1234567 callbacks, mean 84 ns over 19290 timed)"
        check("summary footer: one short line with the estimate", lines_with(out) == [want], lines_with(out))
        rc, out, err = kcount("summary", "--format", "json", with_cost)
        cost = json.loads(out)["logs"][0].get("kcount_cost")
        check("summary JSON: kcount_cost carries the three numbers and the estimate",
              cost == {"callbacks": 1234567, "timed": 19290, "timed_ns": 19290 * 84, "mean_ns": 84,
                       "estimated_ns": 103703628}, cost)

        rc, out, err = kcount("check", untimed)
        check("check: a log whose sample is empty says none was timed",
              lines_with(out) == ["kcount's own cost: 12 callbacks on the program's threads; none timed (one in "
                                  "about 64 is, at random)"], lines_with(out))
        rc, out, err = kcount("summary", untimed)
        check("summary footer: none timed", lines_with(out) == [
            "kcount's own cost: 12 callbacks on the program's threads (none timed)"], lines_with(out))
        rc, out, err = kcount("summary", "--format", "json", untimed)
        cost = json.loads(out)["logs"][0].get("kcount_cost")
        check("summary JSON: no estimate without a sample",
              cost == {"callbacks": 12, "timed": 0, "timed_ns": 0, "mean_ns": None, "estimated_ns": None}, cost)

        for name, path in [("a log without the keys", without), ("a shipped log", SHIPPED),
                           ("a log whose keys do not add up", damaged)]:
            rc, out, err = kcount("check", path)
            check(f"check: nothing for {name}", not lines_with(out), lines_with(out))
            rc, out, err = kcount("summary", path)
            check(f"summary footer: nothing for {name}", not lines_with(out), lines_with(out))
            rc, out, err = kcount("summary", "--format", "json", path)
            log = json.loads(out)["logs"][0]
            check(f"summary JSON: kcount_cost null for {name}", "kcount_cost" in log and log["kcount_cost"] is None,
                  log.get("kcount_cost", "absent"))

        # Several logs: each footer its own, the across-logs table the sum of those that have it.
        rc, out, err = kcount("summary", with_cost, other, without)
        want = ("kcount's own cost, 2 of 3 logs added up: about 104 ms on the program's threads (1235567 callbacks, "
                "mean 84 ns over 19300 timed)")
        check("summary of several logs: each log's footer, then the sum under the across-logs table",
              lines_with(out)[-1:] == [want] and len(lines_with(out)) == 3, lines_with(out))
        rc, out, err = kcount("summary", "--format", "json", with_cost, other, without)
        doc = json.loads(out)
        across = doc.get("across_logs", {}).get("kcount_cost")
        check("summary JSON of several logs: across_logs.kcount_cost adds up the logs that have it",
              across == {"callbacks": 1235567, "timed": 19300, "timed_ns": 19290 * 84 + 1000, "mean_ns": 84,
                         "estimated_ns": 103703628 + 100000, "logs": 2}, across)
        check("summary JSON of several logs: each log its own", [l["kcount_cost"] and l["kcount_cost"]["callbacks"]
                                                                 for l in doc["logs"]] == [1234567, 1000, None],
              [l.get("kcount_cost") for l in doc["logs"]])
        rc, out, err = kcount("summary", without, SHIPPED)
        check("summary of several logs without the keys: no line", not lines_with(out), lines_with(out))
        rc, out, err = kcount("summary", "--format", "json", without, SHIPPED)
        check("summary JSON of several logs without the keys: across_logs.kcount_cost null",
              json.loads(out)["across_logs"].get("kcount_cost", "absent") is None, out[:300])
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
