#!/usr/bin/env python3
"""`kcount diff` says in its output, not only on stderr, when a side's log is not complete (docs/usage.md,
"kcount diff A B"):

- a side whose log has RECORDS MISSING (tests/data/packed/launches-first-records-compact.kcount), is
  incomplete (tests/data/sigkill.kcount, killed), damaged and salvaged (a cut copy of tests/data/launches.kcount)
  or lossy (records dropped while recording): the table's line under its header ("state of B: ..."), JSON's
  "state" (summary's words), CSV's state_a and state_b columns on every row; complete sides get none of it;
- two copies of one recording that read differently (one cut, or with records missing) are not called
  "a run with itself ... no difference": stderr names how they differ; identical copies still are;
- --full-names: the kernels section names each kernel by its whole name (kernels that differ only in the
  middle of their names, as PyTorch's uniform and normal distribution kernels);
- CSV: a range of one side only gets its changes with the other side counting 0, as a kernel of one side
  only does.

Usage: test_diff_states.py BUILD_DIR KC_MAKE_LOG
"""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import check, exit_status, kcount

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
LAUNCHES = os.path.join(DATA, "launches.kcount")
MISSING = os.path.join(DATA, "packed", "launches-first-records-compact.kcount")
SIGKILL = os.path.join(DATA, "sigkill.kcount")
GEGLU_EAGER = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
MAKE_LOG = None


def make_log(path, script):
    subprocess.run([MAKE_LOG, path], input=script, text=True, check=True)


def diff_all(a, b, *opts):
    """(table, json, csv rows, stderr of the table run) of `kcount diff A B`."""
    t = kcount("diff", *opts, a, b)
    j = kcount("diff", "--format", "json", *opts, a, b)
    c = kcount("diff", "--format", "csv", *opts, a, b)
    doc = json.loads(j.stdout) if j.rc == 0 else {}
    rows = list(csv.DictReader(io.StringIO(c.stdout))) if c.rc == 0 else []
    return t, doc, rows, c.stdout.splitlines()[:1]


def check_state(name, a, b, want_a, want_b, *opts):
    t, doc, rows, head = diff_all(a, b, *opts)
    lines = t.stdout.splitlines()
    header = lines[:lines.index("")] if "" in lines else lines
    for side, want in (("A", want_a), ("B", want_b)):
        said = [l for l in header if l.startswith(f"state of {side}: ")]
        if want == "complete":
            check(f"{name}: table: no state line for complete side {side}", not said, header)
        else:
            check(f"{name}: table: side {side} named {want!r} under the header, its numbers undercount",
                  len(said) == 1 and said[0].startswith(f"state of {side}: {want} (")
                  and f"{side}'s numbers undercount" in said[0], header)
    check(f"{name}: json state", doc.get("state") == {"a": want_a, "b": want_b}, doc.get("state"))
    check(f"{name}: csv header ends with state_a,state_b", head and head[0].endswith(",state_a,state_b"), head)
    check(f"{name}: csv: every row carries both states",
          rows and all((r.get("state_a"), r.get("state_b")) == (want_a, want_b) for r in rows),
          [(r.get("kind"), r.get("state_a"), r.get("state_b")) for r in rows[:3]])
    return t


def test_states(work):
    t = check_state("records missing", LAUNCHES, MISSING, "complete", "records missing")
    check("records missing: exit 0", t.rc == 0, t.stderr)
    check("records missing: copies that differ are not called a run compared with itself",
          "shows no difference between runs" not in t.stderr
          and "copies of one recording (same host, pid and start) that differ (A complete, B records missing" in t.stderr,
          t.stderr)
    check_state("incomplete", LAUNCHES, SIGKILL, "complete", "incomplete")
    check_state("incomplete as A", SIGKILL, LAUNCHES, "incomplete", "complete")
    cut = os.path.join(work, "cut.kcount")
    with open(LAUNCHES, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[: len(data) * 2 // 3])
    t = check_state("damaged", LAUNCHES, cut, "complete", "damaged", "--salvage")
    check("damaged: a cut copy is not called a run compared with itself",
          "shows no difference between runs" not in t.stderr and "that differ (A complete, B damaged" in t.stderr,
          t.stderr)
    copy = os.path.join(work, "copy.kcount")
    shutil.copyfile(LAUNCHES, copy)
    t = check_state("whole copy", LAUNCHES, copy, "complete", "complete")
    check("whole copy: still called a run compared with itself",
          "shows no difference between runs" in t.stderr and "that differ" not in t.stderr, t.stderr)
    lossy = os.path.join(work, "lossy.kcount")
    clean = os.path.join(work, "clean.kcount")
    make_log(lossy, "push step\nkernel 1000 k\npop\ndropped activity 5\n")
    make_log(clean, "push step\nkernel 1000 k\npop\n")
    check_state("lossy", clean, lossy, "complete", "complete, lossy")
    check_state("both complete", GEGLU_EAGER, GEGLU_EAGER, "complete", "complete")


UNIFORM = ("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
           "at::native::templates::cuda::uniform_and_transform<float, float, at::CUDAGeneratorImpl*, "
           "at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, double, "
           "double, at::CUDAGeneratorImpl*)::{lambda(curandStatePhilox4_32_10*)#1}>(at::TensorIteratorBase&, "
           "at::CUDAGeneratorImpl*, at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl*>("
           "at::TensorIteratorBase&, double, double, at::CUDAGeneratorImpl*)::{lambda(float)#1})::"
           "{lambda(int, float4)#1}>(long, at::PhiloxCudaState, at::CUDAGeneratorImpl*, at::CUDAGeneratorImpl*)")
NORMAL = UNIFORM.replace("uniform", "normal")


def test_full_names(work):
    h = kcount("diff", "--help")
    check("diff --help names --full-names", "--full-names" in h.stdout, h.stdout)
    a = os.path.join(work, "rand-a.kcount")
    b = os.path.join(work, "rand-b.kcount")
    make_log(a, f"push step\nkernel 1000 {UNIFORM}\npop\n")
    make_log(b, f"push step\nkernel 1000 {NORMAL}\npop\n")
    r = kcount("diff", "--full-names", a, b)
    check("diff --full-names: exit 0", r.rc == 0, r.stderr)
    rows = [l for l in r.stdout.splitlines() if l.startswith("  only ")]
    check("diff --full-names: the kernels section names both kernels whole",
          len(rows) == 2 and any(UNIFORM in l for l in rows) and any(NORMAL in l for l in rows), rows)
    r = kcount("diff", a, b)
    rows = [l for l in r.stdout.splitlines() if l.startswith("  only ")]
    check("diff without --full-names: names shortened (the table stays narrow)",
          len(rows) == 2 and not any(UNIFORM in l or NORMAL in l for l in rows), rows)


def test_one_side_changes(work):
    a = os.path.join(work, "one-a.kcount")
    b = os.path.join(work, "one-b.kcount")
    make_log(a, "push step\nkernel 1000 k\npop\npush extra\nkernel 700 k\nkernel 300 x\npop\n")
    make_log(b, "push step\nkernel 1000 k\npop\npush added\nkernel 400 y\npop\n")
    rows = list(csv.DictReader(io.StringIO(kcount("diff", "--format", "csv", a, b).stdout)))
    by = {(r["kind"], r["path"] or r["identity"]): r for r in rows}
    extra, added = by.get(("range", "extra"), {}), by.get(("range", "added"), {})
    cols = ("in", "launches_change", "kernels_change", "gpu_ns_change", "launch_api_ns_change")
    check("diff csv: a range only in A: its changes count B as 0",
          tuple(extra.get(c) for c in cols)[:4] == ("a", "-2", "-2", "-1000")
          and extra.get("launch_api_ns_change") not in ("", None), extra)
    check("diff csv: a range only in B: its changes count A as 0",
          tuple(added.get(c) for c in cols)[:4] == ("b", "1", "1", "400"), added)
    x = by.get(("kernel", "x"), {})
    check("diff csv: a kernel only in A: its changes count B as 0 (as before)",
          (x.get("in"), x.get("kernels_change"), x.get("gpu_ns_change")) == ("a", "-1", "-300"), x)
    check("diff csv: a side's value of a range it lacks stays empty",
          (extra.get("launches_b"), extra.get("gpu_ns_b"), added.get("launches_a")) == ("", "", ""), (extra, added))


def main():
    global MAKE_LOG
    build = os.path.abspath(sys.argv[1])
    MAKE_LOG = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(build, "bin", "kc_make_log")
    with tempfile.TemporaryDirectory() as work:
        test_states(work)
        test_full_names(work)
        test_one_side_changes(work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
