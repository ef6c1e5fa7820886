#!/usr/bin/env python3
"""Ranges of one name pushed in different NVTX domains (nvtxDomainCreate, nvtxDomainRangePushEx) stay apart
(docs/usage.md, "Ranges"):

- `kcount summary`: the table labels a range of a named domain "mylib: step" (the default domain's is just
  "step"), so the two rows read apart and the table stays aligned; CSV's path holds the domain and its
  last column `domain` names it; JSON's rows carry "domain" (null for the default domain);
- several logs (`kcount summary A B`): one row per (domain, path), JSON's rows with "domain";
- `kcount diff`: ranges are matched by domain and path: "step" and "mylib: step" are two rows, each
  compared with its own counterpart; JSON's rows carry "domain";
- `kcount kernels --range`: the path as the table shows it selects one domain's range ("step" the default
  domain's, "mylib: step" mylib's); a path without its domains works when one named domain holds it
  ("solo") and is refused, naming each domain's path, when several do;
- `kcount report`: the page's ranges carry their domains as well.

Usage: test_domains.py BUILD_DIR [KC_MAKE_LOG]
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

MAKE_LOG = None

# "step" in the default domain and in domain mylib, at the top level; inside "outer" (default domain),
# "gemm" in both domains; "solo" in mylib only; "shared" in mylib and other, not in the default domain.
# `mylib_step_ns` sets the mylib step's kernel time.
def script(mylib_step_ns):
    return (
        "push step\nkernel 100 k_default_step\npop\n"
        f"dpush mylib step\nkernel {mylib_step_ns} k_mylib_step\npop\n"
        "push outer\n"
        "push gemm\nkernel 50 k_default_gemm\npop\n"
        "dpush mylib gemm\nkernel 70 k_mylib_gemm\npop\n"
        "pop\n"
        "dpush mylib solo\nkernel 20 k_solo\npop\n"
        "dpush mylib shared\nkernel 10 k_shared_mylib\npop\n"
        "dpush other shared\nkernel 10 k_shared_other\npop\n"
    )


def make_log(path, text):
    subprocess.run([MAKE_LOG, path], input=text, text=True, check=True)


def table_labels(out):
    """The summary table's first column (labels as shown, indentation kept), between its rule and the
    verdicts."""
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("---")) + 1
    end = next(i for i in range(start, len(lines)) if not lines[i] or lines[i].startswith("verdicts"))
    return lines[start - 2], lines[start:end]


def test_summary(log):
    r = kcount("summary", log)
    check("summary: exit 0", r.rc == 0, r.err)
    head, rows = table_labels(r.out)
    labels = [row[: head.index("instances")].rstrip() for row in rows]
    want = ["(no range)", "step", "mylib: step", "outer", "  gemm", "  mylib: gemm", "mylib: solo", "mylib: shared",
            "other: shared"]
    check("summary: the table labels a named domain's range with its domain, the default domain's without",
          labels == want, labels)
    check("summary: the table's rows stay aligned (one width per row)", len({len(row) for row in rows}) == 1, rows)
    check("summary: the verdict lines name the domain ('mylib: step', 'outer/mylib: gemm')",
          "\n  mylib: step:" in r.out and "\n  outer/mylib: gemm:" in r.out and "\n  outer/gemm:" in r.out, r.out)
    r = kcount("summary", "--view", "innermost", log)
    _, rows = table_labels(r.out)
    check("summary --view innermost: paths with their domains",
          "outer/mylib: gemm" in [row.split("  ")[0] for row in rows], rows)

    r = kcount("summary", "--format", "csv", log)
    rows = list(csv.DictReader(io.StringIO(r.out)))
    by_path = {row["path"]: row for row in rows}
    check("summary csv: domain is the 27th column, after kernels_per_launch",
          r.out.splitlines()[0].split(",")[25:27] == ["kernels_per_launch", "domain"], r.out.splitlines()[0])
    check("summary csv: paths with domains, each its own row",
          {"step", "mylib: step", "outer/gemm", "outer/mylib: gemm", "mylib: solo"} <= set(by_path) and len(rows) == 10,
          sorted(by_path))
    def field(path, key):
        return by_path.get(path, {}).get(key)

    check("summary csv: domain is mylib for mylib's ranges, empty for the default domain and (overall)",
          field("mylib: step", "domain") == "mylib" and field("outer/mylib: gemm", "domain") == "mylib"
          and field("step", "domain") == "" and field("outer", "domain") == ""
          and field("(overall)", "domain") == "", {p: r.get("domain") for p, r in by_path.items()})
    check("summary csv: each step row holds its own domain's kernel",
          field("step", "incl_gpu_ns") == "100" and field("mylib: step", "incl_gpu_ns") == "300",
          {p: r["incl_gpu_ns"] for p, r in by_path.items()})

    r = kcount("summary", "--format", "json", log)
    ranges = json.loads(r.out)["logs"][0]["ranges"]
    steps = sorted(((x.get("domain") or ""), x["inclusive"]["gpu_ns"]) for x in ranges if x["path"] == "step")
    check("summary json: two 'step' rows, domain null (default) and 'mylib', each with its kernel",
          steps == [("", 100), ("mylib", 300)], steps)
    check("summary json: every row has a domain key, null for (no range) and the default domain",
          all("domain" in x for x in ranges) and ranges[0]["domain"] is None
          and next(x for x in ranges if x["path"] == "outer")["domain"] is None, ranges)


def test_several_logs(a, b):
    r = kcount("summary", "--format", "json", a, b)
    ranges = json.loads(r.out).get("across_logs", {}).get("ranges", [])
    steps = sorted((x.get("domain") or "", x["total"]["gpu_ns"]) for x in ranges if x["path"] == "step")
    check("summary A B (json): one row per domain of 'step', with its domain",
          steps == [("", 200), ("mylib", 900)], steps or r.out[:400])
    r = kcount("summary", a, b)
    across = r.out[r.out.find("== across"):]
    lines = [l.split("  ")[0] for l in across.splitlines()]
    check("summary A B (table): 'step' and 'mylib: step' are two rows",
          lines.count("step") == 1 and lines.count("mylib: step") == 1, r.out)


def test_diff(a, b):
    r = kcount("diff", "--format", "json", a, b)
    check("diff json: exit 0", r.rc == 0, r.err)
    ranges = {x["path"]: x for x in json.loads(r.out)["ranges"]}
    check("diff json: 'step' and 'mylib: step' are two rows, not merged",
          "step" in ranges and "mylib: step" in ranges, sorted(ranges))
    if "step" in ranges and "mylib: step" in ranges:
        s, m = ranges["step"], ranges["mylib: step"]
        check("diff json: the default domain's step is unchanged, mylib's step changed by its own kernel",
              s["change"]["gpu_ns"] == 0 and m["change"]["gpu_ns"] == 300, (s["change"], m["change"]))
        check("diff json: rows carry their domain (null for the default domain)",
              s["domain"] is None and m["domain"] == "mylib" and ranges["outer/mylib: gemm"]["domain"] == "mylib",
              (s.get("domain"), m.get("domain")))
        check("diff json: children lists name the domain", sorted(ranges["outer"]["children_a"]) == ["gemm", "mylib: gemm"],
              ranges["outer"]["children_a"])
    r = kcount("diff", a, b)
    check("diff table: a row for 'mylib: step'", any(l.startswith("mylib: step ") for l in r.out.splitlines()), r.out)


def test_report(a, b, work):
    page = os.path.join(work, "ab.html")
    r = kcount("report", a, b, "-o", page)
    text = open(page, encoding="utf-8").read() if r.rc == 0 else r.err
    check("report: the page names the ranges with their domains ('mylib: step', 'outer/mylib: gemm')",
          '"mylib: step"' in text and '"outer/mylib: gemm"' in text and '"domain":"mylib"' in text.replace(" ", ""),
          (r.rc, r.err))


def test_kernels_range(log):
    def names(r):
        return sorted(k["name"] for k in json.loads(r.out)["kernels"]) if r.rc == 0 else r.err

    def kernels(*args):
        return kcount("kernels", "--format", "json", *args, log)

    r = kernels()
    ranges = {k["name"]: k["ranges"] for k in json.loads(r.out)["kernels"]} if r.rc == 0 else r.err
    check("kernels json: a kernel's ranges name their domains",
          ranges.get("k_mylib_gemm") == {"outer/mylib: gemm": 1} and ranges.get("k_default_gemm") == {"outer/gemm": 1},
          ranges)
    r = kcount("kernels", log)
    check("kernels table: the ranges column names the domain", "outer/mylib: gemm ×1" in r.out, r.out)
    r = kernels("--range", "mylib: step")
    check("kernels --range 'mylib: step': mylib's step alone", names(r) == ["k_mylib_step"], names(r))
    r = kernels("--range", "outer/mylib: gemm")
    check("kernels --range 'outer/mylib: gemm': mylib's gemm alone", names(r) == ["k_mylib_gemm"], names(r))
    r = kernels("--range", "outer")
    check("kernels --range outer: both domains' ranges nested in it",
          names(r) == ["k_default_gemm", "k_mylib_gemm"], names(r))
    r = kernels("--range", "solo")
    check("kernels --range solo: a plain path works when one domain holds it", names(r) == ["k_solo"], names(r))
    r = kernels("--range", "step")
    check("kernels --range step: the default domain's step, as the table shows it", names(r) == ["k_default_step"],
          names(r))
    r = kernels("--range", "outer/gemm")
    check("kernels --range outer/gemm: the default domain's gemm", names(r) == ["k_default_gemm"], names(r))
    r = kernels("--range", "shared")
    check("kernels --range shared: refused (exit 2) when only named domains hold it, several of them, naming each",
          r.rc == 2 and "several NVTX domains" in r.err and "mylib: shared" in r.err and "other: shared" in r.err,
          (r.rc, r.err))
    r = kernels("--range", "other: shared")
    check("kernels --range 'other: shared': that domain's range", names(r) == ["k_shared_other"], names(r))
    r = kernels("--range", "gemm")
    check("kernels --range gemm: the hint names both domains' paths",
          r.rc == 2 and "outer/gemm" in r.err and "outer/mylib: gemm" in r.err, (r.rc, r.err))


def test_label_collisions(work):
    """Names that read like a label: a default-domain range named "mylib: step" beside mylib's step, and a
    range named "(no range)" beside the row of work outside every range. The name's ": " shows as "\\: "
    and a label-like name gets a leading '\\', so the rows stay apart in the table, in diff and for
    kernels --range."""
    text = ("kernel 7 k_outside\n"
            "push mylib: step\nkernel 40 k_literal\npop\n"
            "dpush mylib step\nkernel 300 k_mylib_step\npop\n"
            "push (no range)\nkernel 5 k_named_no_range\npop\n")
    a, b = os.path.join(work, "la.kcount"), os.path.join(work, "lb.kcount")
    make_log(a, text)
    make_log(b, text.replace("kernel 300", "kernel 900"))
    r = kcount("summary", a)
    _, rows = table_labels(r.out)
    head = r.out.splitlines()[1]
    labels = [row.split("  ")[0] for row in rows]
    check("labels: the default domain's 'mylib: step' reads 'mylib\\: step', mylib's step 'mylib: step'",
          "mylib\\: step" in labels and "mylib: step" in labels, labels)
    check("labels: a range named '(no range)' reads '\\(no range)', apart from the (no range) row",
          "\\(no range)" in labels and "(no range)" in labels, labels)
    r = kcount("diff", "--format", "json", a, b)
    ranges = {x["path"]: x for x in json.loads(r.out)["ranges"]}
    check("labels: diff keeps the four rows apart", all(p in ranges for p in ["(no range)", "\\(no range)", "mylib: step",
                                                                               "mylib\\: step"]), sorted(ranges))
    if all(p in ranges for p in ["(no range)", "\\(no range)", "mylib: step", "mylib\\: step"]):
        check("labels: diff compares each with its own counterpart (only mylib's step changed, by 600 ns)",
              ranges["mylib: step"]["change"]["gpu_ns"] == 600 and ranges["mylib\\: step"]["change"]["gpu_ns"] == 0
              and ranges["\\(no range)"]["a"]["kernels"] == 1 and ranges["(no range)"]["a"]["kernels"] == 1,
              {p: (ranges[p]["change"], ranges[p]["a"]) for p in ranges})
    r = kcount("kernels", "--format", "json", "--range", "mylib\\: step", a)
    names = sorted(k["name"] for k in json.loads(r.out)["kernels"]) if r.rc == 0 else r.err
    check("labels: kernels --range 'mylib\\: step' selects the default domain's range", names == ["k_literal"], names)
    r = kcount("kernels", "--format", "json", "--range", "mylib: step", a)
    names = sorted(k["name"] for k in json.loads(r.out)["kernels"]) if r.rc == 0 else r.err
    check("labels: kernels --range 'mylib: step' selects mylib's", names == ["k_mylib_step"], names)


def main():
    global MAKE_LOG
    build = os.path.abspath(sys.argv[1])
    MAKE_LOG = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(build, "bin", "kc_make_log")
    with tempfile.TemporaryDirectory() as work:
        a, b = os.path.join(work, "a.kcount"), os.path.join(work, "b.kcount")
        make_log(a, script(300))
        make_log(b, script(600))
        test_summary(a)
        test_several_logs(a, b)
        test_diff(a, b)
        test_kernels_range(a)
        test_report(a, b, work)
        test_label_collisions(work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
