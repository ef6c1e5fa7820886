"""The tool's JSON as pandas DataFrames: pure functions from parsed `kcount ... --format json` output.

Column names follow the JSON keys (docs/usage.md, `summary --format json`). Times are ns, counts are
integers held in pandas' nullable Int64 (a JSON null, "not measured", is <NA>, never 0); a sum held at
2^64 - 1 (a crafted or damaged log) does not fit Int64 and leaves its column as Python ints (object).
"""
import pandas as pd

# The COUNTS object of summary JSON, flattened: memcpy/memset sub-objects become memcpy_count, ...
# graph_gpu_*: only in logs recorded with KCOUNT_GPU_TIME=graphs (the graph launches' GPU spans); <NA> otherwise.
_COUNT_KEYS = ("launches", "graph_launches", "captured_launches", "kernels", "gpu_ns", "launch_api_ns",
               "graph_gpu_launches", "graph_gpu_ns")
_MEM_KEYS = ("count", "bytes", "gpu_ns")
_RANGE_KEYS = ("path", "name", "domain", "depth", "scope_id", "parent_scope_id", "unknown_range", "lost_range",
               "placeholder", "tally_dropped", "instances", "unclosed_instances", "cpu_ns")
_LAYER_KEYS = ("gemm_gpu_ns", "other_gpu_ns", "kernels_per_launch", "verdict")


def flat_counts(counts, prefix=""):
    """A COUNTS object ({"launches", ..., "memcpy": {"count", "bytes", "gpu_ns"}, "memset": {...}}) as
    one flat dict, keys prefixed with `prefix`. None gives every key None."""
    counts = counts or {}
    out = {prefix + k: counts.get(k) for k in _COUNT_KEYS}
    for mem in ("memcpy", "memset"):
        sub = counts.get(mem) or {}
        for k in _MEM_KEYS:
            out["%s%s_%s" % (prefix, mem, k)] = sub.get(k)
    return out


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _column(values, numeric=False):
    """A column of JSON values: nullable Int64 when every value is an int (or null) that fits in it, or
    when every value is null in a `numeric` column (GPU ns of a log without GPU times: <NA>, not objects);
    nullable Float64 for numbers with a fraction (kernels_per_instance); else object (text, booleans,
    lists, and ints past Int64), the values as the JSON gave them."""
    present = [v for v in values if v is not None]
    if not present and numeric:
        return pd.array(values, dtype="Int64")
    if present and all(_is_int(v) for v in present):
        if all(-2 ** 63 <= v < 2 ** 63 for v in present):
            return pd.array(values, dtype="Int64")
        return pd.Series(values, dtype=object)  # a sum held at 2^64 - 1: exact, as Python ints
    if present and all(isinstance(v, float) or _is_int(v) for v in present):
        return pd.array([None if v is None else float(v) for v in values], dtype="Float64")
    return pd.Series(values, dtype=object)


def frame_from_rows(rows, columns):
    """A DataFrame of `rows` (dicts) with exactly `columns`, in that order, typed column by column."""
    return pd.DataFrame({c: _column([r.get(c) for r in rows], numeric=c.endswith(("_ns", "graph_gpu_launches"))) for c in columns},
                        columns=list(columns))


def _range_columns():
    columns = ["log"] + list(_RANGE_KEYS)
    columns += list(flat_counts({}).keys()) + list(flat_counts({}, "self_").keys())
    columns += ["kernels_per_instance"] + list(_LAYER_KEYS)
    columns += ["self_" + k for k in _LAYER_KEYS]
    return columns


def ranges_frame(summary):
    """One row per (log, range path) of `summary --format json`, in the table's order ("(no range)"
    first): the range's keys, its inclusive COUNTS unprefixed, its exclusive (self) COUNTS as self_*,
    kernels_per_instance and the layer keys (inclusive: gemm_gpu_ns, ..., verdict; innermost: self_*).
    A log without known numbers (a summary-mode log with no complete snapshot) has no row."""
    rows = []
    for log in summary.get("logs", []):
        for r in log.get("ranges") or []:
            row = {"log": log.get("path")}
            row.update({k: r.get(k) for k in _RANGE_KEYS})
            row.update(flat_counts(r.get("inclusive")))
            row.update(flat_counts(r.get("exclusive"), "self_"))
            row["kernels_per_instance"] = r.get("kernels_per_instance")
            layers = r.get("layers") or {}
            for prefix, layer in (("", layers.get("inclusive") or {}), ("self_", layers.get("innermost") or {})):
                for k in _LAYER_KEYS:
                    row[prefix + k] = layer.get(k)
            rows.append(row)
    return frame_from_rows(rows, _range_columns())


def _decoded_by_name(kernels):
    """{recorded name: {decoded field: value, grid_x.., block_x.., distinct_grids, distinct_blocks}} from
    `kernels --format json`, and the sorted list of decoded field names."""
    by_name, fields = {}, []
    for k in (kernels or {}).get("kernels", []):
        decoded = dict(k.get("decoded") or {})
        for key in decoded:
            if key not in fields:
                fields.append(key)
        for shape in ("grid", "block"):
            xyz = k.get(shape) or [None, None, None]
            for axis, v in zip("xyz", xyz):
                decoded["%s_%s" % (shape, axis)] = v
        decoded["distinct_grids"] = k.get("distinct_grids")
        decoded["distinct_blocks"] = k.get("distinct_blocks")
        by_name[k.get("name")] = decoded
    return by_name, fields


def kernels_frame(summary, kernels):
    """One row per (log, range, kernel name): the exclusive kernels of each range in `summary --format
    json` (count, gpu_ns: of that kernel in that range, not nested ranges), with the kernel's decoded
    fields from `kernels --format json` as columns (library, tile, dtype, layout, epilogue, ...: every
    key of its "decoded" object) and its grid/block (those of its first record, whole run). Kernels
    whose correlation id matches no launch are in no range and not here (`totals.unmatched_kernels`)."""
    by_name, fields = _decoded_by_name(kernels)
    extra = fields + ["grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z", "distinct_grids",
                      "distinct_blocks"]
    rows = []
    for log in summary.get("logs", []):
        for r in log.get("ranges") or []:
            for k in r.get("kernels") or []:
                row = {"log": log.get("path"), "range": r.get("path"), "domain": r.get("domain"),
                       "name": k.get("name"), "short": k.get("short"), "count": k.get("count"),
                       "gpu_ns": k.get("gpu_ns")}
                decoded = by_name.get(k.get("name"), {})
                row.update({f: decoded.get(f) for f in extra})
                rows.append(row)
    return frame_from_rows(rows, ["log", "range", "domain", "name", "short", "count", "gpu_ns"] + extra)


_SEGMENT_KEYS = ("index", "reason", "end_reason", "start_ns", "stop_ns", "duration_ns", "first_correlation_id",
                 "last_correlation_id", "activity_discarded", "launches", "kernels", "unmatched_kernels", "gpu_ns",
                 "ranges", "mem_ops")


def segments_frame(summary):
    """One row per (log, capture window) of `summary --format json`'s "segments" (counts <NA> in a
    summary-mode log, whose snapshots are cumulative over the windows)."""
    rows = []
    for log in summary.get("logs", []):
        for s in log.get("segments") or []:
            row = {"log": log.get("path")}
            row.update({k: s.get(k) for k in _SEGMENT_KEYS})
            rows.append(row)
    return frame_from_rows(rows, ("log",) + _SEGMENT_KEYS)


_TOTAL_KEYS = ("launches", "graph_launches", "kernels", "unmatched_kernels", "launches_without_kernel",
               "captured_launches", "mem_ops", "unmatched_mem_ops", "gpu_ns")


def totals_frame(summary):
    """One row per log: its "totals" (kernels, launches, gpu_ns over all kernel records, ...) and its
    "overall" COUNTS as overall_* (the whole process, matched records only). <NA> where not known."""
    rows = []
    for log in summary.get("logs", []):
        totals = log.get("totals") or {}
        row = {"log": log.get("path"), "mode": log.get("mode")}
        row.update({k: totals.get(k) for k in _TOTAL_KEYS})
        row.update(flat_counts(log.get("overall"), "overall_"))
        rows.append(row)
    columns = ["log", "mode"] + list(_TOTAL_KEYS) + list(flat_counts({}, "overall_").keys())
    return frame_from_rows(rows, columns)


_DROP_KEYS = ("dropped_host_records", "dropped_activity_records", "activity_buffers_refused",
              "late_activity_records", "nvtx_pop_underflow", "bytes_dropped")


def check_frame(summary):
    """One row per log: its state (the state word of `kcount check`'s last line, as summary JSON gives
    it: "complete", "complete, lossy", "incomplete", "damaged", ...), complete, intact, lossy, the drops
    (records, bytes, untallied events, the text `kcount check` prints) and the number of errors and
    warnings the reader raised (the messages: `issues_frame`)."""
    rows = []
    for log in summary.get("logs", []):
        drops = log.get("drops") or {}
        totals = log.get("totals") or {}
        issues = log.get("issues") or []
        row = {"log": log.get("path"), "state": log.get("state"), "complete": log.get("complete"),
               "intact": log.get("intact"), "lossy": log.get("lossy"), "mode": log.get("mode"),
               "gpu_time": log.get("gpu_time"), "dropped_records": drops.get("records"),
               "dropped_bytes": drops.get("bytes"), "untallied_events": drops.get("untallied_events"),
               "drops": drops.get("text"),
               "errors": sum(1 for i in issues if i.get("severity") == "error"),
               "warnings": sum(1 for i in issues if i.get("severity") == "warning")}
        row.update({k: totals.get(k) for k in _DROP_KEYS})
        rows.append(row)
    columns = ["log", "state", "complete", "intact", "lossy", "mode", "gpu_time", "dropped_records",
               "dropped_bytes", "untallied_events", "drops", "errors", "warnings"] + list(_DROP_KEYS)
    return frame_from_rows(rows, columns)


def issues_frame(summary):
    """One row per reader issue: log, severity ("error" or "warning"), byte offset (<NA>: no place in
    the file), chunk (-1: none), message."""
    rows = [{"log": log.get("path"), "severity": i.get("severity"), "offset": i.get("offset"),
             "chunk": i.get("chunk"), "message": i.get("message")}
            for log in summary.get("logs", []) for i in log.get("issues") or []]
    return frame_from_rows(rows, ("log", "severity", "offset", "chunk", "message"))
