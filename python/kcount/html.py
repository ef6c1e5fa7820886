"""Notebook views (`_repr_html_`) of Log and Diff: each log's state, the first rows, the verdicts."""
import html

_ROWS = 10  # rows of each table shown in a notebook; the frames hold them all

_RANGE_COLUMNS = ["path", "instances", "launches", "kernels", "gpu_ns", "self_kernels", "self_gpu_ns",
                  "kernels_per_instance", "verdict"]
_DIFF_RANGE_COLUMNS = ["path", "in", "instances_a", "instances_b", "kernels_a", "kernels_b", "kernels_change",
                       "gpu_ns_a", "gpu_ns_b", "gpu_ns_change"]
_DIFF_KERNEL_COLUMNS = ["status", "category", "short", "count_a", "count_b", "gpu_ns_a", "gpu_ns_b",
                        "gpu_ns_change"]


def _table(frame, columns, title):
    shown = frame[[c for c in columns if c in frame.columns]]
    more = len(frame) - min(len(frame), _ROWS)
    tail = "<p>... %d more rows</p>" % more if more > 0 else ""
    return "<h4>%s (%d rows)</h4>%s%s" % (html.escape(title), len(frame),
                                          shown.head(_ROWS).to_html(index=False, na_rep="-"), tail)


def log_html(log):
    """Each log's path and state line, then the first rows of `ranges` and of `kernels` (by GPU time)."""
    parts = ["<div class='kcount-log'>"]
    for row in log.check.itertuples(index=False):
        parts.append("<p><b>%s</b>: %s%s</p>" % (html.escape(str(row.log)), html.escape(str(row.state)),
                                                 "; " + html.escape(row.drops) if row.drops else ""))
    parts.append(_table(log.ranges, (["log"] if len(log.paths) > 1 else []) + _RANGE_COLUMNS, "ranges"))
    kernels = log.kernels
    if not kernels.empty and kernels["gpu_ns"].notna().any():
        kernels = kernels.sort_values("gpu_ns", ascending=False, na_position="last")
    parts.append(_table(kernels, ["range", "short", "count", "gpu_ns", "library", "category", "dtype", "tile"],
                        "kernels (per range, largest GPU time first)"))
    return "".join(parts) + "</div>"


def diff_html(d):
    """The sides and their states, every verdict line, then the first rows of the change tables."""
    parts = ["<div class='kcount-diff'><p><b>A</b>: %s (%s)<br><b>B</b>: %s (%s)</p>" % (
        html.escape(", ".join(d.a)), html.escape(str((d.state or {}).get("a"))),
        html.escape(", ".join(d.b)), html.escape(str((d.state or {}).get("b"))))]
    for unit in dict.fromkeys(d.verdicts["unit"]):
        lines = "".join("<li>%s</li>" % html.escape(t) for t in d.verdict(unit))
        parts.append("<p>verdict for <b>%s</b>:</p><ul>%s</ul>" % (html.escape(str(unit)), lines))
    parts.append(_table(d.ranges, _DIFF_RANGE_COLUMNS, "ranges (B - A)"))
    parts.append(_table(d.kernels, _DIFF_KERNEL_COLUMNS, "kernels (whole run, by decoded identity)"))
    return "".join(parts) + "</div>"
