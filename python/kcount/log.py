"""`kcount.load()`: one or more logs read by the kcount tool, as pandas DataFrames."""
import os

from kcount import _tool, frames

__all__ = ["Log", "load"]


def _paths(path_or_paths):
    if isinstance(path_or_paths, (str, bytes, os.PathLike)):
        return [os.fsdecode(path_or_paths)]
    paths = [os.fsdecode(p) for p in path_or_paths]
    if not paths:
        raise ValueError("kcount.load: no log given")
    return paths


class Log:
    """Logs read once by `kcount summary` and `kcount kernels` (`--format json`); every frame has a
    `log` column (the path as given) so that several logs sit in one frame.

    Attributes (pandas DataFrames, see kcount/frames.py for the columns):
      ranges    one row per (log, range path): instances, cpu_ns, inclusive counts (launches, kernels,
                gpu_ns, launch_api_ns, memcpy_*, memset_*), self_* the same counts innermost, verdicts
      kernels   one row per (log, range, kernel name): count and gpu_ns in that range, decoded fields
      segments  one row per (log, capture window)
      totals    one row per log: totals and the whole process's counts (overall_*)
      check     one row per log: state and losses;  issues: the reader's errors and warnings
    `summary`, `kernel_list`: the tool's JSON as parsed; `warnings`: what the tool wrote on stderr.
    Not thread-safe while `segment_ranges()` fills its cache."""

    def __init__(self, paths, summary, kernel_list, warnings, tool=None, salvage=False):
        self.paths = list(paths)
        self.summary = summary
        self.kernel_list = kernel_list
        self.warnings = list(warnings)
        self._tool = tool
        self._salvage = salvage
        self.ranges = frames.ranges_frame(summary)
        self.kernels = frames.kernels_frame(summary, kernel_list)
        self.segments = frames.segments_frame(summary)
        self.totals = frames.totals_frame(summary)
        self.check = frames.check_frame(summary)
        self.issues = frames.issues_frame(summary)
        self._segment_ranges = None

    def segment_ranges(self):
        """The ranges frame of each capture window (`kcount summary LOG --segment N`), with a `segment`
        column; computed on first call (one tool run per window; each reads its log whole) and kept.
        Empty for summary-mode logs, whose windows have no numbers of their own."""
        if self._segment_ranges is None:
            import pandas as pd
            parts = []
            for log, index in self.segments[["log", "index"]].itertuples(index=False):
                mode = self.totals.loc[self.totals["log"] == log, "mode"]
                if len(mode) and mode.iloc[0] == "summary":
                    continue
                args = ["summary", log, "--segment", int(index)] + (["--salvage"] if self._salvage else [])
                data, _ = _tool.run_json(args, self._tool)
                part = frames.ranges_frame(data)
                part.insert(1, "segment", int(index))
                parts.append(part)
            columns = ["log", "segment"] + [c for c in self.ranges.columns if c != "log"]
            self._segment_ranges = (pd.concat(parts, ignore_index=True) if parts
                                    else pd.DataFrame(columns=columns))
        return self._segment_ranges

    def steady_state(self):
        """The path of the range with the most instances (the first in table order among equals; None
        when no range ran): the step of a training or benchmark loop."""
        rows = self.ranges[(self.ranges["depth"] > 0) & self.ranges["instances"].notna()]
        if rows.empty:
            return None
        return rows.loc[rows["instances"].astype("int64").idxmax(), "path"]

    def plot_gpu_time(self, ax=None, top=20, inclusive=False):
        """Horizontal bars of GPU time per range (self by default; inclusive=True: with nested ranges),
        the `top` largest; returns the matplotlib Axes. Imports matplotlib."""
        from kcount import plot
        return plot.gpu_time_per_range(self.ranges, ax=ax, top=top, inclusive=inclusive)

    def plot_kernels_per_step(self, range=None, ax=None):
        """Kernels per instance of `range` (default: `steady_state()`) in each capture window, one line
        per log; returns the matplotlib Axes. Imports matplotlib; runs `summary --segment` per window."""
        from kcount import plot
        return plot.kernels_per_step(self.segment_ranges(), range or self.steady_state(), ax=ax)

    def _repr_html_(self):
        from kcount import html
        return html.log_html(self)

    def __repr__(self):
        states = ", ".join("%s: %s" % (os.path.basename(str(p)), s)
                           for p, s in self.check[["log", "state"]].itertuples(index=False))
        windows = len(self.segments)
        return "<kcount.Log %s; %d ranges, %d kernel rows, %d window%s>" % (
            states, len(self.ranges), len(self.kernels), windows, "" if windows == 1 else "s")


def load(path_or_paths, tool=None, salvage=False):
    """Reads one log (a path) or several (a list of paths) with the kcount tool; returns a Log.

    `tool`: the kcount binary (default: KCOUNT_TOOL, then kcount on PATH, then the install this package
    belongs to). `salvage=True` reads the intact part of a damaged log (`--salvage`). Raises KcountError
    (the tool's stderr and exit status: 2 for a damaged log, a file that is no log, a path it cannot
    read) and ValueError for an empty list. Runs the tool twice (summary, kernels); blocks meanwhile."""
    paths = _paths(path_or_paths)
    extra = ["--salvage"] if salvage else []
    summary, warnings = _tool.run_json(["summary"] + paths + extra, tool)
    kernel_list, more = _tool.run_json(["kernels"] + paths + extra, tool)
    return Log(paths, summary, kernel_list, warnings + [w for w in more if w not in warnings], tool, salvage)
