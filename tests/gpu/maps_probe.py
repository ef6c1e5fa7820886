"""Runs a Python script in this process (runpy, sys.argv adjusted), then prints which libcupti files are
mapped into the process, as one JSON line on stdout:

    {"libcupti_files": [...], "libcupti_files_before": [...], "exit_code": N}

Usage: python3 tests/gpu/maps_probe.py SCRIPT [ARGS...]     (normally under `kcount run --`)

kcount must reuse a CUPTI already loaded in the process (PyTorch's), so exactly one distinct libcupti file
should be mapped at the end.
"""

import json
import os
import runpy
import sys


def mapped_cupti_files(maps_path="/proc/self/maps"):
    """Distinct paths (first-seen order) of mapped files whose base name contains 'libcupti'."""
    paths = []
    with open(maps_path) as f:
        for line in f:
            fields = line.split(None, 5)
            if len(fields) < 6:
                continue
            path = fields[5].rstrip("\n")
            if path.endswith(" (deleted)"):
                path = path[: -len(" (deleted)")]
            if "libcupti" in os.path.basename(path) and path not in paths:
                paths.append(path)
    return paths


def main():
    if len(sys.argv) < 2:
        print("usage: maps_probe.py SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    script = sys.argv[1]
    before = mapped_cupti_files()
    sys.argv = sys.argv[1:]
    # What `python3 SCRIPT` does: the script's directory comes first on sys.path.
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    code = 0
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    sys.stdout.flush()
    print(json.dumps({"libcupti_files": mapped_cupti_files(),
                      "libcupti_files_before": before,
                      "exit_code": code}), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
