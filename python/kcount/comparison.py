"""`kcount.diff()`: two runs compared by `kcount diff --format json`, as verdicts and change tables
(the module is not named diff: that name is the function `kcount.diff`)."""
import os

from kcount import _tool, frames

__all__ = ["Diff", "diff"]

_SIDE_KEYS = ("instances", "cpu_ns", "launches", "kernels", "gpu_ns", "launch_api_ns", "kernel_identities",
              "mem_ops", "mem_gpu_ns")


def _side_columns(row, obj, suffix):
    obj = obj or {}
    for k in _SIDE_KEYS:
        row[k + suffix] = obj.get(k)


def ranges_frame(data):
    """One row per range row of the diff (`(overall)` first, then the ranges in the table's order):
    path (escaped as the table writes it), domain, in ("both", "a", "b"), each side's numbers as *_a
    and *_b, the change B - A as *_change (<NA> where a side lacks the range, or where it is not known),
    nesting_differs."""
    rows = []
    overall = data.get("overall") or {}
    row = {"path": "(overall)", "domain": None, "in": "both", "nesting_differs": False}
    for side, suffix in (("a", "_a"), ("b", "_b"), ("change", "_change")):
        _side_columns(row, overall.get(side), suffix)
    rows.append(row)
    for r in data.get("ranges") or []:
        row = {"path": r.get("path"), "domain": r.get("domain"), "in": r.get("in"),
               "nesting_differs": r.get("nesting_differs")}
        for side, suffix in (("a", "_a"), ("b", "_b"), ("change", "_change")):
            _side_columns(row, r.get(side), suffix)
        rows.append(row)
    columns = ["path", "domain", "in"] + [k + s for s in ("_a", "_b", "_change") for k in _SIDE_KEYS]
    return frames.frame_from_rows(rows, columns + ["nesting_differs"])


def kernels_frame(data):
    """One row per kernel identity of the whole run: status ("same", "only_a", "only_b"), identity,
    short, name (as recorded; only_a and only_b), category, count_a, count_b, gpu_ns_a, gpu_ns_b (<NA> on
    the side that did not run it), and the changes count_change, gpu_ns_change (B - A, a missing side
    counted 0), largest GPU time (of A's and B's) first."""
    rows = []
    kernels = data.get("kernels") or {}
    for status in ("same", "only_a", "only_b"):
        for k in kernels.get(status) or []:
            row = {"status": status, "identity": k.get("identity"), "short": k.get("short"), "name": k.get("name"),
                   "category": k.get("category")}
            for side in ("a", "b"):  # a kernel of one side has "count" and "gpu_ns" (JSON), that side's
                one = status == "only_" + side
                row["count_" + side] = k.get("count") if one else k.get("count_" + side)
                row["gpu_ns_" + side] = k.get("gpu_ns") if one else k.get("gpu_ns_" + side)
            rows.append(row)
    frame = frames.frame_from_rows(rows, ("status", "identity", "short", "name", "category", "count_a", "count_b",
                                 "gpu_ns_a", "gpu_ns_b"))
    for what in ("count", "gpu_ns"):
        try:
            a, b = (frame[what + side].astype("Int64").fillna(0) for side in ("_a", "_b"))
        except (OverflowError, TypeError, ValueError):
            continue  # a sum held at 2^64 - 1 (object column): its change is not known
        frame[what + "_change"] = b - a
        if what == "gpu_ns" and not frame.empty:
            order = (-a.where(a > b, b).astype("int64")).argsort(kind="stable")
            frame = frame.iloc[order].reset_index(drop=True)
    return frame


def verdicts_frame(data):
    """One row per verdict line, in the tool's order (most repeated range first, the whole run last):
    unit (the range path, "(overall)" for the whole run), line (0 first), text."""
    rows = [{"unit": v.get("unit"), "line": i, "text": text}
            for v in data.get("verdicts") or [] for i, text in enumerate(v.get("lines") or [])]
    return frames.frame_from_rows(rows, ("unit", "line", "text"))


class Diff:
    """The comparison of side A with side B, as `kcount diff` makes it.

    Attributes: `verdicts` (DataFrame: unit, line, text), `ranges` (per range: both sides and the
    change), `kernels` (per decoded kernel identity: same / only_a / only_b with counts and GPU time),
    `steady_state` (the first verdict's range when it ran more than once on both sides, else None),
    `state` ({"a", "b"}: each side's state word), `undercounts` ({"a", "b"}), `work_differs` (None when
    the runs did the same work), `data` (the JSON as parsed), `warnings` (the tool's stderr lines)."""

    def __init__(self, a, b, data, warnings):
        self.a = list(a)
        self.b = list(b)
        self.data = data
        self.warnings = list(warnings)
        self.verdicts = verdicts_frame(data)
        self.ranges = ranges_frame(data)
        self.kernels = kernels_frame(data)
        self.steady_state = data.get("steady_state")
        self.state = data.get("state")
        self.undercounts = data.get("undercounts")
        self.work_differs = (data.get("overall") or {}).get("work_differs")

    def verdict(self, unit=None):
        """The verdict lines of `unit` (a range path; default: the first verdict, the most repeated
        range), as a list of strings; [] when the diff has no verdict for it."""
        v = self.verdicts
        if v.empty:
            return []
        unit = v["unit"].iloc[0] if unit is None else unit
        return list(v.loc[v["unit"] == unit, "text"])

    def _repr_html_(self):
        from kcount import html
        return html.diff_html(self)

    def __repr__(self):
        return "<kcount.Diff %s vs %s; %d range rows, %d kernel identities, %d verdict lines>" % (
            ", ".join(map(os.path.basename, self.a)), ", ".join(map(os.path.basename, self.b)),
            len(self.ranges), len(self.kernels), len(self.verdicts))


def _side(x):
    if isinstance(x, (str, bytes, os.PathLike)):
        return [os.fsdecode(x)]
    side = [os.fsdecode(p) for p in x]
    if not side:
        raise ValueError("kcount.diff: a side without logs")
    return side


def diff(a, b, tool=None, salvage=False):
    """Compares run A with run B: `a` and `b` are log paths, or lists of paths (each side the sum of its
    logs: ranks of one job). Returns a Diff. Raises KcountError with the tool's message and exit status
    (2: a damaged log without salvage=True, a log without totals, a file that is no log)."""
    side_a, side_b = _side(a), _side(b)
    if len(side_a) == 1 and len(side_b) == 1:
        args = ["diff", side_a[0], side_b[0]]
    else:
        args = ["diff", "-a"] + side_a + ["-b"] + side_b
    data, warnings = _tool.run_json(args + (["--salvage"] if salvage else []), tool)
    return Diff(side_a, side_b, data, warnings)
