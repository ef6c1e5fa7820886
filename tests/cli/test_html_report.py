#!/usr/bin/env python3
"""`kcount report` checked in a real headless browser (Debian's chromium), on the H200 GeGLU logs.

1. The page is self-contained: no script/link/img element, url(), @import, fetch or XMLHttpRequest.
2. The embedded data matches `kcount summary --format json` of the same logs (another code path).
3. Chromium runs the page (--dump-dom): #kc-status says "ok"; every range holding at least 1% of the
   GPU time has a block in the chart; for two logs, ranges present in one log only are marked so; the
   "#metric=kernels" address switches the chart to kernel counts.
4. Chromium's screenshot (1400x900) is not blank: many distinct colours, and the chart's top bar colour
   (#c9d2e3) covers a wide band. The PNG is decoded here with zlib (no imaging library needed).
5. A vs B of synthetic logs (kc_make_log) whose GPU time changes by less than 1%: the change column
   writes -0.1% and <0.1% as kcount diff does, never -0%.
6. Names, order and labels, on synthetic logs with GEMM kernel names and sweep-like range names longer
   than the tables' 60 characters: kernel names and range names are shortened in the middle as
   kcount's text tables shorten them (the tile, layout and epilogue at the end stay), the full name in
   the tooltip, and chart labels keep the end of the name and the value; the ranges table lists ranges
   in tree order (two logs: a range of one log under its parent), the kernels table in `kcount kernels`
   order (its default: GPU total time, then count, then name); each run is labelled by its log's file
   name (two logs of one file name by their folders) with host and pid beside it. The page's pure
   functions (script "kc-lib") are also run under node when node is installed.
7. Verdicts: each range's verdict in the ranges table (one log; two logs: a column per side) is the text
   `kcount summary` prints for that range, on GPU-recorded logs (geglu-eager, tests/data/launches.kcount).
8. Logs with nothing to chart by a metric say why in place of the chart: GPU time of a log recorded with
   KCOUNT_GPU_TIME=0, kernels of a log with NVTX ranges only; such a log opens on a metric it has (kernel
   counts; CPU time in ranges, whose blocks are drawn).
9. Two logs (geglu-eager vs geglu-compiled): the page opens with the verdicts `kcount diff` answers with
   (before the first table: "GEMM kernels identical", the regrouping of gate, up, act, down as mlp), the
   same units and lines as its JSON; at 1400 px no table row wraps: the page's own "#check-rows" script
   counts, in Chromium, the rows taller than 1.5x a one-line row of their table, and the same count on the
   page with the old verdict column style (wrapped text) is not 0, so the check can fail. A 1400 px wide
   screenshot is kept: BUILD_DIR/test-artifacts/report-diff-1400.png.

A missing chromium is a failure, not a skip: scripts/install_deps.sh installs it.
Usage: test_html_report.py BUILD_DIR
"""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

from checks import check, exit_status

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EAGER = os.path.join(ROOT, "examples", "logs", "geglu-eager.kcount")
LAUNCHES = os.path.join(ROOT, "tests", "data", "launches.kcount")  # H200: launch-bound, CPU-bound, memops ranges
COMPILED = os.path.join(ROOT, "examples", "logs", "geglu-compiled.kcount")
ROOT_BAR = (0xC9, 0xD2, 0xE3)  # fill of the chart's top bar (tools/report_page.html)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browser(exe, url, *mode, work, size="1400,900"):
    profile = tempfile.mkdtemp(dir=work)
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + profile,
           "--window-size=" + size, *mode, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120).stdout


def decode_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, "unsupported PNG layout"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ftype == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif ftype == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def embedded_data(page):
    m = re.search(r'<script id="kcount-data" type="application/json">(.*?)</script>', page, re.S)
    return json.loads(m.group(1)) if m else None


def main():
    kcount = os.path.join(os.path.abspath(sys.argv[1]), "bin", "kcount")
    exe = chromium()
    check("chromium is installed (scripts/install_deps.sh installs it)", exe is not None)
    with tempfile.TemporaryDirectory() as work:
        one = os.path.join(work, "one.html")
        two = os.path.join(work, "two.html")
        subprocess.run([kcount, "report", EAGER, "-o", one], check=True)
        subprocess.run([kcount, "report", EAGER, COMPILED, "-o", two], check=True)
        summaries = {}
        for log in (EAGER, COMPILED):
            out = subprocess.run([kcount, "summary", "--format", "json", log], check=True, capture_output=True, text=True).stdout
            summaries[log] = json.loads(out)["logs"][0]

        for name, path, logs in (("one log", one, [EAGER]), ("two logs", two, [EAGER, COMPILED])):
            with open(path, encoding="utf-8") as f:
                page = f.read()
            outside = re.findall(r"<script[^>]*\bsrc=|<link\b|<img\b|url\(|@import|\bfetch\(|XMLHttpRequest|<iframe", page)
            check(f"{name}: self-contained page (found {outside[:3]})", not outside)
            data = embedded_data(page)
            check(f"{name}: embedded data, one run per log", data is not None and len(data["runs"]) == len(logs))
            for run, log in zip(data["runs"], logs):
                want = {r["path"]: (r["inclusive"]["kernels"], r["inclusive"]["gpu_ns"], r["instances"])
                        for r in summaries[log]["ranges"] if r["depth"] > 0}
                got = {r["path"]: (r["incl"]["kernels"], r["incl"]["gpu_ns"], r["instances"]) for r in run["ranges"] if r["parent"] is not None}
                check(f"{name}: {run['label']} ranges equal the summary's ({len(want)} ranges)", got == want)
                check(f"{name}: {run['label']} kernel table counts every kernel",
                      sum(k["count"] for k in run["kernels"]) == summaries[log]["totals"]["kernels"] + summaries[log]["totals"]["unmatched_kernels"])
                check(f"{name}: {run['label']} kernels carry decoded fields",
                      all(k["decoded"]["category"] for k in run["kernels"]))
            if exe is None:
                continue

            dom = browser(exe, "file://" + path, "--dump-dom", work=work)
            status = re.search(r'<div id="kc-status"([^>]*)>', dom)
            attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', status.group(1))) if status else {}
            check(f"{name}: the page rendered ({attrs})", attrs.get("state") == "ok")
            check(f"{name}: {len(logs)} run(s) rendered", attrs.get("runs") == str(len(logs)))
            for log in logs:
                s = summaries[log]
                total = s["overall"]["gpu_ns"]
                big = [r["path"] for r in s["ranges"] if r["depth"] > 0 and r["inclusive"]["gpu_ns"] >= total / 100]
                missing = [p for p in big if f'data-path="{html.escape(p)}"' not in dom]
                check(f"{name}: chart blocks for the {len(big)} ranges with >= 1% of GPU time (missing {missing})",
                      big and not missing)
            if len(logs) == 2:
                paths = [{r["path"] for r in summaries[log]["ranges"] if r["depth"] > 0} for log in logs]
                only_a, only_b = paths[0] - paths[1], paths[1] - paths[0]
                text = html.unescape(dom)
                check(f"{name}: {len(only_a)} ranges marked A only, {len(only_b)} B only",
                      all(p + "  [A only]" in text for p in only_a) and all(p + "  [B only]" in text for p in only_b))
                check(f"{name}: side-by-side view", "A vs B" in text)
            dom_k = browser(exe, "file://" + path + "#metric=kernels", "--dump-dom", work=work)
            check(f"{name}: #metric=kernels sizes the chart by kernel count",
                  'data-metric="kernels"' in dom_k and re.search(r"whole process, \d+ kernels<", dom_k) is not None)

            png = os.path.join(work, name.replace(" ", "_") + ".png")
            browser(exe, "file://" + path, "--screenshot=" + png, work=work)
            check(f"{name}: screenshot written", os.path.exists(png))
            if not os.path.exists(png):
                continue
            width, height, rows = decode_png(png)
            colours = {px for row in rows for px in row}
            bar = max(sum(1 for px in row if px == ROOT_BAR) for row in rows)
            print(f"  {name}: {width}x{height}, {len(colours)} distinct colours, top bar {bar} px wide")
            check(f"{name}: screenshot not blank ({len(colours)} colours)", len(colours) >= 20)
            check(f"{name}: chart top bar drawn across the page ({bar} px)", bar >= width // 3)
        if exe is not None:
            small_changes(kcount, exe, work)
            names_order_labels(kcount, exe, work)
            verdicts(kcount, exe, work)
            empty_charts(kcount, exe, work)
            diff_verdicts_and_rows(kcount, exe, work, os.path.abspath(sys.argv[1]))
    return exit_status()


def status_attrs(dom):
    status = re.search(r'<div id="kc-status"([^>]*)>', dom)
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', status.group(1))) if status else {}


def diff_verdicts_and_rows(kcount, exe, work, build):
    """Two logs: the diff's verdicts open the page; no table row wraps at 1400 px; a 1400 px screenshot."""
    page = os.path.join(work, "diff.html")
    subprocess.run([kcount, "report", EAGER, COMPILED, "-o", page], check=True)
    want = json.loads(subprocess.run([kcount, "diff", "--format", "json", EAGER, COMPILED], check=True,
                                     capture_output=True, text=True).stdout)["verdicts"]
    dom = browser(exe, "file://" + page + "#check-rows", "--dump-dom", work=work)
    attrs = status_attrs(dom)
    check(f"diff page: rendered ({ {k: v for k, v in attrs.items() if k != 'tall-rows'} })", attrs.get("state") == "ok")
    first_table = dom.find("<table")
    head = dom[:first_table] if first_table >= 0 else ""
    items = [html.unescape(t) for t in re.findall(r"<li[^>]*>([^<]*)</li>", head)]
    units = [html.unescape(t) for t in re.findall(r'<div class="verdict-unit">([^<]*)</div>', head)]
    text = " ".join(items)
    check(f"diff page: a Verdicts section before the first table ({units})",
          "Verdicts" in head and units and units[-1] == "verdict for the whole run")
    check("diff page: \"GEMM kernels identical\" before the first table", "GEMM kernels identical" in text)
    regroup = [t for t in items if all(re.search(r"\b%s\b" % w, t) for w in ("gate", "up", "act", "down", "mlp"))]
    check(f"diff page: the regrouping line of gate, up, act, down as mlp before the first table ({regroup[:1]})",
          bool(regroup) and any(" ran as " in t for t in regroup))
    # The units and lines are those of the diff's JSON (the default text's choice: most repeated, then overall).
    by_unit = {v["unit"]: v["lines"] for v in want}
    data = embedded_data(open(page, encoding="utf-8").read())
    shown = (data.get("diff") or {}).get("verdicts", []) if data else []
    check(f"diff page: each verdict's lines are diff JSON's ({[v['unit'] for v in shown]})",
          shown and len(shown) <= 4 and shown[-1]["unit"] == "(overall)" and
          all(v["lines"] == by_unit.get(v["unit"]) for v in shown) and
          items == [line for v in shown for line in v["lines"]])
    rows, wrapped = int(attrs.get("rows", "0")), attrs.get("wrapped-rows")
    print(f"  diff page at 1400 px: {wrapped} of {rows} table rows wrap (taller than 1.5x a one-line row)"
          + (f": {html.unescape(attrs.get('tall-rows', ''))}" if wrapped != "0" else ""))
    check(f"diff page: no table row wraps at 1400 px ({wrapped} of {rows} rows)", rows >= 20 and wrapped == "0")
    one = os.path.join(work, "one-rows.html")
    subprocess.run([kcount, "report", EAGER, "-o", one], check=True)
    one_attrs = status_attrs(browser(exe, "file://" + one + "#check-rows", "--dump-dom", work=work))
    check(f"one log: no table row wraps at 1400 px ({one_attrs.get('wrapped-rows')} of {one_attrs.get('rows')} rows; "
          f"{html.unescape(one_attrs.get('tall-rows', ''))})",
          int(one_attrs.get("rows", "0")) >= 10 and one_attrs.get("wrapped-rows") == "0")
    # The check can fail: with the verdict cells of the old page (text wrapped in a column 28-52em wide) rows wrap.
    with open(page, encoding="utf-8") as f:
        old = f.read().replace("</head>", "<style>td.verdict { white-space: normal !important; min-width: 28em; "
                                          "max-width: 52em !important; }</style></head>", 1)
    old_page = os.path.join(work, "diff-old-style.html")
    with open(old_page, "w", encoding="utf-8") as f:
        f.write(old)
    old_wrapped = int(status_attrs(browser(exe, "file://" + old_page + "#check-rows", "--dump-dom", work=work)).get("wrapped-rows", "0"))
    print(f"  the same page with the old verdict column style: {old_wrapped} rows wrap")
    check(f"diff page: the row check counts wrapped rows of the old verdict style ({old_wrapped})", old_wrapped > 0)
    # Screenshot kept as a test artifact.
    out_dir = os.path.join(build, "test-artifacts")
    os.makedirs(out_dir, exist_ok=True)
    png = os.path.join(out_dir, "report-diff-1400.png")
    if os.path.exists(png):
        os.remove(png)
    browser(exe, "file://" + page, "--screenshot=" + png, work=work, size="1400,2000")
    check(f"diff page: screenshot written ({png})", os.path.exists(png))
    if os.path.exists(png):
        width, height, _ = decode_png(png)
        print(f"  screenshot of the diff page at 1400 px: {png} ({width}x{height})")
        check(f"diff page: screenshot is 1400 px wide ({width})", width == 1400)


def small_changes(kcount, exe, work):
    """A vs B of changes below 1%: the delta column writes them as kcount diff does, never "-0%"."""
    make_log = os.path.join(os.path.dirname(kcount), "kc_make_log")
    logs = []
    for name, ns in (("a", 100000), ("b", 99900), ("c", 99960)):  # -0.1%, -0.04%
        path = os.path.join(work, f"small-{name}.kcount")
        subprocess.run([make_log, path], input=f"push step\nkernel {ns} k\npop\n", text=True, check=True)
        logs.append(path)
    for other, want in ((logs[1], "(-0.1%)"), (logs[2], "(<0.1%)")):
        page = os.path.join(work, "small.html")
        subprocess.run([kcount, "report", logs[0], other, "-o", page], check=True)
        dom = browser(exe, "file://" + page, "--dump-dom", work=work)
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", dom)]
        changes = [c for c in cells if c.endswith("%)")]
        check(f"A vs B: a GPU time change of {os.path.basename(other)} reads {want}, never -0% ({changes})",
              any(c.endswith(want) for c in changes) and not any(c.endswith(("(-0%)", "(+0%)")) for c in changes))


GEMM = "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_256x128x64_2x1x1_0_tnn_align8_warpspecialized_cooperative_epi_tma"
XMMA = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
NVJET = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"
SWEEP = ["sweep point attn=sdpa dtype=bf16 tokens=4096 hidden=2048 intermediate=5504 layer=%d" % i for i in range(4)]


def elide(s, width):
    """kc::elideMiddle (tools/name_elision.cpp): `width` characters, the "…" in the middle."""
    if len(s) <= width:
        return s
    keep = width - 1
    head = (keep + 1) // 2
    return s[:head] + "…" + s[len(s) - (keep - head):]


def run_log(make_log, path, pid, extra_range):
    """A log with three GEMM kernels of long names, four sweep ranges with a quarter of the GPU time each
    (their kernel, 4 launches, has the most GPU time), a kernel of 5 short launches, and (extra_range) a
    range of this log only between two shared ones."""
    lines = ["meta host node1", f"meta pid {pid}", "push step", "push gemm", f"kernel 4000 {GEMM}",
             f"kernel 3000 {XMMA}", f"kernel 2000 {NVJET}", "pop"]
    if extra_range:
        lines += ["push only_here", "kernel 1000 small_kernel", "pop"]
    for name in SWEEP:
        lines += [f"push {name}", "kernel 1000000 sweep_kernel", "pop"]
    lines += ["push z_last"] + ["kernel 10 small_kernel"] * 5 + ["pop", "pop"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    subprocess.run([make_log, path], input="\n".join(lines) + "\n", text=True, check=True)
    return path


def cells(dom, table_index):
    """Rows of the table_index-th <table> of the DOM: lists of (text, title) per cell."""
    tables = re.findall(r"<table>(.*?)</table>", dom, re.S)
    if table_index >= len(tables):
        return []
    out = []
    for row in re.findall(r"<tr>(.*?)</tr>", tables[table_index], re.S):
        tds = []
        for attrs, text in re.findall(r"<td([^>]*)>([^<]*)</td>", row):
            title = re.search(r'title="([^"]*)"', attrs)
            tds.append((html.unescape(text), html.unescape(title.group(1)) if title else ""))
        if tds:
            out.append(tds)
    return out


def summary_verdicts(kcount, log):
    """{range path: verdict} from the lines `kcount summary` prints under its table ("  PATH: VERDICT" and
    "; top: ..." after it); a range without a verdict is absent."""
    out = subprocess.run([kcount, "summary", log], check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("verdicts, top kernels"))
    found = {}
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        path, _, rest = line[2:].partition(": ")
        verdict = "" if rest.startswith("top: ") else rest.split("; top: ")[0]
        if verdict:
            found[path] = verdict
    return found


def verdicts(kcount, exe, work):
    """The verdict column of the ranges table reads as `kcount summary`'s verdict line of each range."""
    for log in (EAGER, LAUNCHES):
        name = os.path.basename(log)
        want = summary_verdicts(kcount, log)
        page = os.path.join(work, "verdicts.html")
        subprocess.run([kcount, "report", log, "-o", page], check=True)
        dom = browser(exe, "file://" + page, "--dump-dom", work=work)
        rows = cells(dom, 0)
        got = {r[0][1]: r[-1][0] for r in rows}  # range path (title of its name cell) -> last cell
        summary_paths = set(want)
        check(f"{name}: every range with a summary verdict is in the ranges table ({sorted(summary_paths - set(got))})",
              len(want) >= 5 and summary_paths <= set(got))
        wrong = {p: (got[p], want.get(p, "")) for p in got if got[p] != want.get(p, "")}
        check(f"{name}: the verdict of each of {len(rows)} ranges is summary's ({wrong})", rows and not wrong)
    # Two logs: a verdict column per side, each as `kcount summary` of its log prints it.
    page = os.path.join(work, "verdicts-two.html")
    subprocess.run([kcount, "report", EAGER, COMPILED, "-o", page], check=True)
    dom = browser(exe, "file://" + page, "--dump-dom", work=work)
    rows = cells(dom, 0)
    want_a, want_b = summary_verdicts(kcount, EAGER), summary_verdicts(kcount, COMPILED)
    got_a = {r[0][1]: r[-2][0] for r in rows}
    got_b = {r[0][1]: r[-1][0] for r in rows}
    wrong = {p: (got_a[p], got_b[p]) for p in got_a
             if p != "(whole process)" and (got_a[p] != want_a.get(p, "") or got_b[p] != want_b.get(p, ""))}
    check(f"two logs: verdict A and verdict B columns are summary's ({wrong})",
          rows and want_a and want_b and not wrong)


def rendered(exe, url, work):
    """(DOM, data-* attributes of #kc-status, texts of the chart-empty messages by run index) of a page."""
    dom = browser(exe, url, "--dump-dom", work=work)
    status = re.search(r'<div id="kc-status"([^>]*)>', dom)
    attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', status.group(1))) if status else {}
    empty = {int(i): html.unescape(t) for i, t in re.findall(r'<div class="chart-empty" data-run="(\d+)">([^<]*)</div>', dom)}
    return dom, attrs, empty


def empty_charts(kcount, exe, work):
    """A chart with nothing to draw is replaced by the reason; a log opens on a metric it has."""
    make_log = os.path.join(os.path.dirname(kcount), "kc_make_log")
    logs = {}
    for name, script in (("off", "meta gpu_time off\n" + "push step\npush gate\nkernel 0 k\npop\npop\n" * 3),
                         ("on", "push step\npush gate\nkernel 5000 k\npop\npop\n" * 3),
                         ("ranges", "push step\npush load\npop\npush parse\npop\npop\n" * 3)):
        logs[name] = os.path.join(work, f"empty-{name}.kcount")
        subprocess.run([make_log, logs[name]], input=script, text=True, check=True)
    pages = {}
    for name, args in (("off", [logs["off"]]), ("ranges", [logs["ranges"]]), ("on-off", [logs["on"], logs["off"]])):
        pages[name] = os.path.join(work, f"empty-{name}.html")
        subprocess.run([kcount, "report", *args, "-o", pages[name]], check=True)

    # KCOUNT_GPU_TIME=0: opens on kernel counts (drawn); GPU time says why there is no chart.
    dom, attrs, empty = rendered(exe, "file://" + pages["off"], work)
    check(f"gpu_time off: opens on kernel counts, chart drawn ({attrs}, {empty})",
          attrs.get("metric") == "kernels" and not empty and 'data-path="step/gate"' in dom)
    dom, attrs, empty = rendered(exe, "file://" + pages["off"] + "#metric=gpu_ns", work)
    check(f"gpu_time off, GPU time: the reason in place of the chart ({attrs}, {empty})",
          attrs.get("metric") == "gpu_ns" and attrs.get("empty") == "1" and 'data-path="step/gate"' not in dom
          and empty.get(0, "").startswith("no GPU time in this log: recorded with KCOUNT_GPU_TIME=0"))
    # A vs B where B has no GPU time: A's chart drawn, B's replaced by the reason.
    dom, attrs, empty = rendered(exe, "file://" + pages["on-off"] + "#metric=gpu_ns", work)
    check(f"A (GPU time) vs B (none), GPU time: only B says why ({attrs}, {empty})",
          attrs.get("empty") == "1" and list(empty) == [1] and "KCOUNT_GPU_TIME=0" in empty[1]
          and 'data-path="step/gate"' in dom)
    # Each block's tooltip speaks of its own run: on kernel counts (both drawn), A's step/gate gives its GPU
    # time, B's says "not recorded"; the whole process has no CPU time of its own ("-").
    dom, attrs, empty = rendered(exe, "file://" + pages["on-off"] + "#metric=kernels", work)
    titles = [html.unescape(t) for t in re.findall(r"<title>([^<]*)</title>", dom)]
    gate = [t for t in titles if t.startswith("step/gate\n")]
    whole = [t for t in titles if t.startswith("whole process\n")]
    check(f"A vs B tooltips: GPU time of the block's own run; whole process CPU time '-' ({gate}, {whole[:1]})",
          len(gate) == 2 and "GPU time: 15.0 µs" in gate[0] and "GPU time: not recorded" in gate[1]
          and "not recorded in" not in " ".join(titles) and whole and all("CPU time: -" in t for t in whole))
    # NVTX ranges only: opens on CPU time in ranges, with a block per range; kernel counts say why not.
    dom, attrs, empty = rendered(exe, "file://" + pages["ranges"], work)
    text = html.unescape(dom)
    check(f"NVTX ranges only: opens on CPU time, a block per range, a note ({attrs}, {empty})",
          attrs.get("metric") == "cpu_ns" and not empty and all(f'data-path="step/{r}"' in dom for r in ("load", "parse"))
          and "No kernels recorded in empty-ranges" in text)
    for metric in ("gpu_ns", "kernels", "launches"):
        dom, attrs, empty = rendered(exe, "file://" + pages["ranges"] + "#metric=" + metric, work)
        check(f"NVTX ranges only, {metric}: 'no kernels recorded' in place of the chart ({attrs}, {empty})",
              attrs.get("empty") == "1" and 'data-path="step"' not in dom
              and empty.get(0, "").startswith("no kernels recorded: this log holds no kernel launch (3 NVTX ranges"))


def names_order_labels(kcount, exe, work):
    make_log = os.path.join(os.path.dirname(kcount), "kc_make_log")
    a = run_log(make_log, os.path.join(work, "run1", "kcount.kcount"), 11, False)
    b = run_log(make_log, os.path.join(work, "run2", "kcount.kcount"), 22, True)
    one, two = os.path.join(work, "names-one.html"), os.path.join(work, "names-two.html")
    subprocess.run([kcount, "report", a, "-o", one], check=True)
    subprocess.run([kcount, "report", a, b, "-o", two], check=True)
    with open(two, encoding="utf-8") as f:
        page = f.read()
    data = embedded_data(page)
    labels = [r["label"] for r in data["runs"]] if data else []
    check(f"(c) logs of one file name labelled by their folders ({labels})", labels == ["run1/kcount", "run2/kcount"])
    # Names are shortened in the middle; CSS cuts (text-overflow) only verdicts and the kernels' ranges and ops.
    cut = {sel.strip() for rule in re.findall(r"([^{}]*)\{[^}]*text-overflow", re.sub(r"/\*.*?\*/", "", page, flags=re.S)) for sel in rule.split(",")}
    check(f"(a) no CSS cut at the end of names (cut: {sorted(cut)})", cut <= {"td.verdict", "td.clip"})

    # (a) the kernels table: names shortened in the middle, the full name in the tooltip
    dom = browser(exe, "file://" + one, "--dump-dom", work=work)
    kernel_rows = cells(dom, 1)
    by_title = {r[0][1]: r[0][0] for r in kernel_rows}
    for name in (GEMM, XMMA, NVJET):
        shown = by_title.get(name)
        check(f"(a) kernels table: {name[:20]}… shown as the text table shortens it, end kept ({shown!r})",
              shown == elide(name, 60) and shown.endswith(name[-20:]))
    # (a) the chart: sweep ranges of a quarter width each keep both ends of their names and the value
    labels_svg = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", dom)]
    sweep = [t for t in labels_svg if t.startswith("sweep point")]
    ok = len(sweep) == 4
    for t in sweep:
        name, _, rest = t.partition("  ")
        full = next((n for n in SWEEP if elide(n, len(name)) == name), None)
        ok = ok and "…" in name and full is not None and rest.endswith("%")
    check(f"(a) chart labels shortened in the middle, value kept ({sweep})", ok)
    # (b) one log: ranges in tree order (the summary's), kernels in `kcount kernels` order
    summary = json.loads(subprocess.run([kcount, "summary", "--format", "json", a], check=True, capture_output=True,
                                        text=True).stdout)["logs"][0]
    want = [r["path"] for r in summary["ranges"]]
    got = [r[0][1] for r in cells(dom, 0)]
    check(f"(b) one log: ranges table in the summary's tree order ({got})", got == want)
    kernels = json.loads(subprocess.run([kcount, "kernels", "--format", "json", a], check=True, capture_output=True,
                                        text=True).stdout)["kernels"]
    want = [k["name"] for k in kernels]
    got = [r[0][1] for r in kernel_rows]
    # sweep_kernel: 4 ms over 4 launches; small_kernel: the most launches (5) and the least GPU time.
    check(f"(b) kernels table in `kcount kernels` order: GPU total time, then count, then name ({got})",
          got == want and got[0] == "sweep_kernel" and got[-1] == "small_kernel")
    # (b), (c) two logs: a range of B only under its parent; runs titled by label, host and pid
    dom = browser(exe, "file://" + two, "--dump-dom", work=work)
    got = [r[0][1] for r in cells(dom, 0)]
    want = ["(whole process)", "(no range)", "step", "step/gemm", "step/only_here"] + ["step/" + n for n in SWEEP] + ["step/z_last"]
    check(f"(b) two logs: ranges in tree order, a range of one log under its parent ({got})", got == want)
    text = html.unescape(re.sub(r"<[^>]+>", "", dom))
    for label, pid in (("A: run1/kcount", 11), ("B: run2/kcount", 22)):
        check(f"(c) chart title: {label} with host and pid",
              text.count(f"{label} (host node1 · pid {pid}) — whole process") == 1)
    lib = re.search(r'<script id="kc-lib">(.*?)</script>', page, re.S)
    node = shutil.which("node") or shutil.which("nodejs")
    check("the page has its kc-lib script", lib is not None)
    if lib is None or node is None:
        if node is None:
            print("note: node not installed, the page's pure functions were checked through Chromium only")
        return
    script = lib.group(1) + """
const L = module.exports, out = {};
out.elide = [[%s, 60], ["ab", 60], ["abcdefghij", 5], ["x", 0]].map(([s, w]) => L.elideMiddle(s, w));
out.distinct = L.elideDistinct(["x".repeat(35) + "A" + "y".repeat(45), "x".repeat(35) + "B" + "y".repeat(45), "short"], 60);
out.fit = [L.fitLabel(%s, "  4.00 ms  40%%", 300), L.fitLabel("step", "  1 ms", 300), L.fitLabel("abcdefghijklmnop", "  4.00 ms  40%%", 80)];
const run = (ranges) => ({ ranges: ranges.map(([id, parent, path]) => ({ id, parent, path })) });
out.tree = L.treeOrder([run([[0, null, "(no range)"], [1, 0, "s"], [2, 1, "s/x"], [3, 1, "s/z"]]),
                        run([[0, null, "(no range)"], [7, 0, "t"], [1, 0, "s"], [5, 1, "s/w"], [2, 1, "s/x"], [4, 1, "s/y"], [6, 4, "s/y/q"], [3, 1, "s/z"]])]);
out.kernels = L.kernelOrder([["b", 1, 9], ["a", 5, 2], ["c", 5, 2], ["d", 7, 2], ["e", 9, 0]], r => r[2], r => r[1], r => r[0]).map(r => r[0]);
out.ns = [0, 999, 1000, 9994, 9996, 9999, 99949, 99950, 999499, 999500, 999999500, 1234600000000, 1005, 9995, 2675, 99950, 1234500000000].map(L.fmtNs);
console.log(JSON.stringify(out));
""" % (json.dumps(GEMM), json.dumps(SWEEP[0]))
    res = subprocess.run([node, "-e", "const module = {exports: {}};" + script], capture_output=True, text=True)
    got = json.loads(res.stdout) if res.returncode == 0 else {}
    check(f"node: elideMiddle as kc::elideMiddle ({got.get('elide')}, {res.stderr[-300:]})",
          got.get("elide") == [elide(GEMM, 60), "ab", elide("abcdefghij", 5), ""])
    d = got.get("distinct", ["", "", ""])
    check(f"node: elideDistinct keeps names apart ({got.get('distinct')})",
          d[0] != d[1] and all("…" in t and len(t) < 81 for t in d[:2]) and d[2] == "short")
    fit = got.get("fit", [])
    check(f"node: fitLabel keeps the value and both ends of the name ({fit})",
          fit == [elide(SWEEP[0], 42 - 14) + "  4.00 ms  40%", "step  1 ms", elide("abcdefghijklmnop", 11)])
    check(f"node: treeOrder puts ranges of one run under their parent ({got.get('tree')})",
          got.get("tree") == ["(no range)", "t", "s", "s/w", "s/x", "s/y", "s/y/q", "s/z"])
    check(f"node: fmtNs as kc::formatDuration: rounded, then unit and decimals ({got.get('ns')})",
          got.get("ns") == ["0 ns", "999 ns", "1.00 µs", "9.99 µs", "10.0 µs", "10.0 µs", "99.9 µs", "100 µs",
                            "999 µs", "1.00 ms", "1.00 s", "1235 s",
                            # half-way points round up (toFixed on the double 9.995 gave 9.99)
                            "1.01 µs", "10.0 µs", "2.68 µs", "100 µs", "1235 s"])
    check(f"node: kernelOrder by GPU total, then count, then name ({got.get('kernels')})",
          got.get("kernels") == ["b", "d", "a", "c", "e"])


if __name__ == "__main__":
    sys.exit(main())
