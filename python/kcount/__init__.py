"""kcount for Python: logs as pandas DataFrames, runs compared, capture windows opened from the program.

    import kcount
    log = kcount.load("run.kcount")          # log.ranges, log.kernels, log.segments, log.check
    d = kcount.diff("eager.kcount", "compiled.kcount")   # d.verdicts, d.ranges, d.kernels
    with kcount.window():                    # record this block (process started with libkcount.so)
        train_step()

Reading goes through the `kcount` tool's `--format json` output (found as kcount/_tool.py says); errors
of the tool are raised as KcountError with its message and exit status. pandas is imported by load()
and diff(), matplotlib by the plots: `import kcount` itself imports neither (it runs inside profiled
programs, through `kcount.torch` too). docs/python.md walks through it on the shipped logs.
"""
from kcount._tool import KcountError, find_tool
from kcount.control import ControlError, KcountWarning, start, status, stop, window

__all__ = ["load", "diff", "start", "stop", "status", "window", "find_tool", "KcountError", "ControlError",
           "KcountWarning"]


def load(path_or_paths, tool=None, salvage=False):
    """Reads one log or a list of logs; returns a kcount.log.Log (see there). Raises KcountError."""
    from kcount.log import load as _load
    return _load(path_or_paths, tool=tool, salvage=salvage)


def diff(a, b, tool=None, salvage=False):
    """Compares run `a` with run `b` (paths, or lists of paths); returns a kcount.comparison.Diff (see there).
    Raises KcountError."""
    from kcount.comparison import diff as _diff
    return _diff(a, b, tool=tool, salvage=salvage)
