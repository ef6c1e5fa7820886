"""Plots of a Log with matplotlib (imported here, on first use: `import kcount` does not need it)."""

_NS_PER_MS = 1e6


def _axes(ax):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt
    return plt.subplots(figsize=(8, 4.5))[1]


def gpu_time_per_range(ranges, ax=None, top=20, inclusive=False):
    """Horizontal bars: GPU time (ms) per range path, the `top` largest, largest at the top; self time
    (kernels launched in the range itself) unless `inclusive`. Several logs: one bar per (log, path).
    Returns the Axes."""
    column = "gpu_ns" if inclusive else "self_gpu_ns"
    rows = ranges[ranges[column].notna() & (ranges[column] > 0)]
    rows = rows.sort_values(column, ascending=False).head(top).iloc[::-1]
    several = ranges["log"].nunique() > 1
    labels = [("%s: %s" % (log.rsplit("/", 1)[-1], path)) if several else path
              for log, path in zip(rows["log"], rows["path"])]
    ax = _axes(ax)
    ax.barh(labels, rows[column].astype("float64") / _NS_PER_MS)
    ax.set_xlabel("GPU time (ms)" + (", with nested ranges" if inclusive else ", range's own kernels"))
    ax.set_title("GPU time per range")
    return ax


def kernels_per_step(segment_ranges, range_path, ax=None):
    """Kernels per instance of `range_path` (inclusive kernels / instances) in each capture window, one
    line per log, x the window index. Returns the Axes (empty, titled so, when no window ran it)."""
    ax = _axes(ax)
    ax.set_title("kernels per %s, by capture window" % range_path)
    ax.set_xlabel("capture window")
    ax.set_ylabel("kernels per %s" % range_path)
    rows = segment_ranges[(segment_ranges["path"] == range_path) & (segment_ranges["instances"] > 0)]
    for log, part in rows.groupby("log", sort=False):
        per_step = part["kernels"].astype("float64") / part["instances"].astype("float64")
        ax.plot(part["segment"].astype("int64"), per_step, marker="o", label=log.rsplit("/", 1)[-1])
    if rows.empty:
        ax.text(0.5, 0.5, "no capture window ran %s" % range_path, ha="center", transform=ax.transAxes)
    else:
        ax.legend()
    return ax
