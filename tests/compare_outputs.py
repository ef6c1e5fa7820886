#!/usr/bin/env python3
"""Byte-for-byte comparison of the reading commands' outputs between two builds of the kcount tool.

A restructuring of the reader or the tools must not change what any command prints. This script runs
`summary`, `kernels`, `diff`, `check`, `export` (json, csv, chrome, sqlite) and `report` with the options
that choose other code paths, on every shipped log (examples/logs), every test log (tests/data, its
packed/ and fuzz-regressions/ folders included), and compares stdout, stderr, exit status and written
files of the two tools.

Usage:
  python3 tests/compare_outputs.py --base COMMIT [--new BUILD/bin/kcount]
  python3 tests/compare_outputs.py --base-tool OLD/bin/kcount --new NEW/bin/kcount

--base builds the tool of COMMIT (its `kcount` target only) in build-baseline/<commit>/ from a
`git worktree` and reuses it on later calls. Exit 0: every output equal; 1: a difference (the first
few are printed with the command that shows them); 2: a usage error or a build failure.
"""
import argparse
import difflib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def logs():
    """Every log the comparison runs on, as paths relative to the repository root (stable in outputs)."""
    found = []
    for folder in ["examples/logs", "tests/data", "tests/data/packed", "tests/data/fuzz-regressions"]:
        for p in sorted((ROOT / folder).iterdir()):
            if p.is_file() and p.name != "README.md":
                found.append(str(p.relative_to(ROOT)))
    return found


PAIRS = [
    ("examples/logs/geglu-eager.kcount", "examples/logs/geglu-compiled.kcount"),
    ("examples/logs/sweep-eager.kcount", "examples/logs/sweep-compiled.kcount"),
    ("examples/logs/linear-eager.kcount", "examples/logs/geglu-eager.kcount"),
    ("tests/data/graphs.kcount", "tests/data/launches.kcount"),
    ("tests/data/sigkill.kcount", "tests/data/launches.kcount"),
]


def commands_for(log):
    """(name, argv, output kind) for one log; output kind: None, "file", "folder" or "sqlite"."""
    out = []
    for fmt in ["table", "csv", "json"]:
        out.append((["summary", log, "--format", fmt], None))
        out.append((["summary", log, "--format", fmt, "--salvage"], None))
        out.append((["kernels", log, "--format", fmt], None))
        out.append((["kernels", log, "--format", fmt, "--salvage"], None))
    for opts in (["--view", "innermost"], ["--view", "inclusive", "--sort", "gpu"], ["--graph-view", "capture"],
                 ["--series"], ["--full-names"], ["--wide"], ["--width", "80"], ["--top", "0"],
                 ["--segment", "0"], ["--sort", "launches"]):
        out.append((["summary", log] + opts, None))
        out.append((["summary", log, "--format", "json"] + opts, None))
    out.append((["summary", log, "--format", "csv", "--graph-view", "capture", "--view", "innermost"], None))
    out.append((["kernels", log, "--sort", "name", "--full-names"], None))
    out.append((["kernels", log, "--range", "step", "--format", "json"], None))
    out.append((["check", log], None))
    out.append((["check", log, "--salvage"], None))
    for fmt in ["json", "chrome"]:
        out.append((["export", log, "--format", fmt, "-o", "{out}", "--salvage"], "file"))
    out.append((["export", log, "--format", "csv", "-o", "{out}", "--salvage"], "folder"))
    out.append((["export", log, "--format", "sqlite", "-o", "{out}", "--salvage"], "sqlite"))
    out.append((["report", log, "-o", "{out}", "--salvage"], "file"))
    return out


def commands_for_pair(a, b):
    out = []
    for fmt in ["table", "csv", "json"]:
        out.append((["diff", a, b, "--format", fmt], None))
        out.append((["diff", a, b, "--format", fmt, "--salvage"], None))
        out.append((["summary", a, b, "--format", fmt], None))
    out.append((["diff", a, b, "--full-names"], None))
    out.append((["diff", a, b, "--width", "100"], None))
    out.append((["summary", a, b, "--metric", "kernels"], None))
    out.append((["check", a, b], None))
    out.append((["report", a, b, "-o", "{out}"], "file"))
    return out


def sqlite_dump(path):
    """A text dump of a SQLite file (its bytes may differ where the rows do not)."""
    try:
        con = sqlite3.connect(path)
        text = "\n".join(con.iterdump())
        con.close()
        return text.encode()
    except sqlite3.Error as e:
        return f"(not a SQLite file: {e})".encode()


def run_one(tool, argv, kind, scratch):
    """Runs one command; returns a dict of what it produced (bytes), for comparison."""
    target = scratch / "out"
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    args = [a.replace("{out}", str(target)) for a in argv]
    p = subprocess.run([tool] + args, cwd=ROOT, capture_output=True, timeout=300,
                       env=dict(os.environ, COLUMNS="", LC_ALL="C.UTF-8"))
    result = {"exit": str(p.returncode).encode(),
              "stdout": p.stdout.replace(str(target).encode(), b"{out}"),
              "stderr": p.stderr.replace(str(target).encode(), b"{out}")}
    if kind == "file" and target.is_file():
        result["file"] = target.read_bytes()
    elif kind == "folder" and target.is_dir():
        for f in sorted(target.iterdir()):
            result["folder/" + f.name] = f.read_bytes()
    elif kind == "sqlite" and target.is_file():
        result["sqlite"] = sqlite_dump(target)
    return result


def build_base(commit):
    """Builds the kcount tool of COMMIT; returns its path."""
    full = subprocess.run(["git", "rev-parse", "--verify", commit + "^{commit}"], cwd=ROOT, capture_output=True,
                          text=True)
    if full.returncode != 0:
        sys.exit(f"compare_outputs: {commit} is not a commit of this repository")
    sha = full.stdout.strip()
    base = ROOT / "build-baseline" / sha[:12]
    tool = base / "build" / "bin" / "kcount"
    if tool.exists():
        return tool
    src = base / "src"
    if not src.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(src), sha], cwd=ROOT, check=True,
                       capture_output=True)
    env = dict(os.environ, BUILD_DIR=str(base / "build"), KCOUNT_TARGETS="kcount", KCOUNT_DEPS="build")
    r = subprocess.run(["bash", str(src / "scripts" / "build.sh"), "-DKCOUNT_BUILD_TESTS=OFF",
                        "-DKCOUNT_BUILD_BENCH=OFF"], env=env)
    if r.returncode != 0 or not tool.exists():
        sys.exit(f"compare_outputs: building the tool of {sha[:12]} failed")
    return tool


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", help="commit whose tool gives the expected outputs (built once, reused)")
    ap.add_argument("--base-tool", help="an already built kcount giving the expected outputs")
    ap.add_argument("--new", default=str(ROOT / "build" / "bin" / "kcount"), help="the kcount under test")
    ap.add_argument("--show", type=int, default=5, help="differences printed in full (default 5)")
    args = ap.parse_args()
    if bool(args.base) == bool(args.base_tool):
        ap.error("give one of --base COMMIT or --base-tool PATH")
    base_tool = Path(args.base_tool) if args.base_tool else build_base(args.base)
    new_tool = Path(args.new)
    for t in (base_tool, new_tool):
        if not t.exists():
            sys.exit(f"compare_outputs: no tool at {t}")

    cases = []
    for log in logs():
        cases += commands_for(log)
    for a, b in PAIRS:
        cases += commands_for_pair(a, b)

    differences = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for argv, kind in cases:
            want = run_one(str(base_tool), argv, kind, scratch)
            got = run_one(str(new_tool), argv, kind, scratch)
            if want != got:
                differences.append((argv, want, got))
    print(f"compare_outputs: {len(cases)} commands, {len(differences)} with different output "
          f"({base_tool} vs {new_tool})")
    for argv, want, got in differences[:args.show]:
        print("\n== kcount " + " ".join(argv))
        for key in sorted(set(want) | set(got)):
            w, g = want.get(key, b"(none)"), got.get(key, b"(none)")
            if w == g:
                continue
            print(f"-- {key} differs (sha1 {hashlib.sha1(w).hexdigest()[:10]} vs {hashlib.sha1(g).hexdigest()[:10]})")
            diff = difflib.unified_diff(w.decode(errors="replace").splitlines(),
                                        g.decode(errors="replace").splitlines(), "base", "new", lineterm="", n=1)
            for i, line in enumerate(diff):
                if i >= 20:
                    print("   ...")
                    break
                print("   " + line[:200])
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
