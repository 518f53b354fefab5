#!/usr/bin/env python3
"""Draws reduce-scan-bench result files (--format json) as one figure, a row per task:
  left:  throughput (Gelem/s) against n per variant, log-log;
  right: utilisation per variant against its ceiling (100%), against n.
Several files overlay, one line style per file (labelled by device). A variant has one colour in
every panel (its place in --variant-order); its other series (type, op, kind, local size) are
shades of it with their own marker. Error bars: the median's 95% interval as a rate: across
rounds where the run had them (time_ms_rounds, --repetitions), else within the run (time_ms). A utilisation above 100% carries the table's mark: c (the input fits in the
last-level cache), ? (suspect). Each row's legends name only what it draws.

  scripts/plot.py -o FILE.png|.svg RESULTS.json [MORE.json ...] [--title TEXT] [--metadata M.json]

Normally run through `reduce-scan-bench plot`, which checks the files first. A result counts
when its status is passed and its median time and its throughput (gelem_s) are above 0; the
others (skipped, failed, untimed, or a hand-edited file without them) are left out. Utilisation is the result's
`utilisation` where recorded (against the ceiling of its own traffic), else `bandwidth_util`
(against the device's copy bandwidth).
"""
import argparse
import io
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

# Variants in teaching order: the task tables' order, which `reduce-scan-bench plot` passes as
# --variant-order (run alone, the order the results first name them in). The colours follow it,
# so a variant keeps its colour across panels and figures.
VARIANT_ORDER = []
# A file's line style; a marker per series of one variant (another type, op, kind, local size).
LINESTYLES = ["-", "--", ":", "-.", (0, (5, 1)), (0, (1, 1))]
MARKERS = ["o", "s", "^", "D", "v", "x"]


def positive(x):
    """A number above 0 (and finite), else False: absent, null, text or NaN all read as none."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < math.inf


def plottable(r):
    time = r.get("time_ms")
    return (isinstance(r, dict) and r.get("status") == "passed" and isinstance(time, dict)
            and positive(time.get("median")) and positive(r.get("gelem_s"))
            and isinstance(r.get("n"), int) and isinstance(r.get("task"), str)
            and isinstance(r.get("variant"), str))


def load(path):
    with open(path) as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ValueError("not a result file (no object at the top)")
    device = data.get("device")
    device = device if isinstance(device, dict) else {}
    results = data.get("results")
    results = [r for r in results if isinstance(r, dict) and plottable(r)] \
        if isinstance(results, list) else []
    return device, results


def device_labels(files):
    """A label per file: the device name, with the driver or the file name where two files
    would otherwise read the same."""
    names = [d.get("name", "?") for _, d, _ in files]
    labels = []
    for path, d, _ in files:
        label = d.get("name", "?")
        if names.count(label) > 1:
            drivers = [f[1].get("driver_version", "") for f in files if f[1].get("name") == label]
            if len(set(drivers)) == len(drivers):
                label += f", driver {d.get('driver_version', '')}"
            else:
                label += f" ({os.path.basename(path)})"
        labels.append(label)
    return labels


# The fields of a case a series may differ in: type, op, the tasks' fields of their own
# (--case-fields) and local size.
SERIES_FIELDS = ["type", "op", "local_size"]


def series_key(r, varying):
    """What a line stands for within a task: the variant, plus the series fields that vary among
    the plotted results."""
    parts = [r["variant"]]
    for field in SERIES_FIELDS:
        if field in varying:
            value = r.get(field, "-")
            parts.append(f"L={value}" if field == "local_size" else str(value))
    return " ".join(parts)


def utilisation(r):
    u = r.get("utilisation")
    if u is None:
        u = r.get("bandwidth_util")
    return u if positive(u) else None


def variant_rank(key):
    v = key.split(" ")[0]
    return (VARIANT_ORDER.index(v) if v in VARIANT_ORDER else len(VARIANT_ORDER), key)


def variant_colours():
    """One colour per variant name, fixed by its place in VARIANT_ORDER (every task's variants,
    each once), so that a variant has the same colour in every panel and every figure drawn
    with the same order."""
    # tab20 is ten hues, each dark then light: the dark ones first, so that neighbours differ.
    palette = [plt.cm.tab20(i) for i in list(range(0, 20, 2)) + list(range(1, 20, 2))]
    return {v: matplotlib.colors.to_hex(palette[i % len(palette)])
            for i, v in enumerate(VARIANT_ORDER)}


def shade(colour, k):
    """The k-th series of one variant (another type, op, kind or local size): its colour mixed
    towards white, so that it stays that variant's colour."""
    rgb = matplotlib.colors.to_rgb(colour)
    mix = min(0.6, 0.3 * k)
    return matplotlib.colors.to_hex([c + (1 - c) * mix for c in rgb])


def interval(r):
    """The factors (low, high) by which the median's 95% interval moves a throughput (a rate:
    n / time), or None where the result has none (0 to 0: too few samples) or one that does not
    hold its median. The rounds' interval where there are rounds: what a second run meets."""
    t = r.get("time_ms_rounds") or r["time_ms"]
    low, high, median = t.get("ci_low"), t.get("ci_high"), t["median"]
    if not (positive(low) and positive(high) and low <= median <= high):
        return None
    return median / high, median / low


def mark(r):
    """The table's mark after a utilisation: c where the input fits in the last-level cache,
    ? where the utilisation is suspect (above the ceiling, unexplained)."""
    return "c" if r.get("fits_in_cache") is True else "?" if r.get("utilisation_suspect") else ""


MARK_MEANING = {"c": "c: the input fits in the last-level cache (it may pass the ceiling)",
                "?": "?: above the ceiling without the cache to explain it (suspect)"}


def draw_series(ax, points, style, gid, record):
    """One line of (n, y, interval, mark) points, with error bars where the points have
    intervals; its gid names it in the SVG, and `record` (the metadata) says what it holds."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    lows = [p[1] - p[1] * p[2][0] if p[2] else 0 for p in points]
    highs = [p[1] * p[2][1] - p[1] if p[2] else 0 for p in points]
    bars = any(p[2] for p in points)
    container = ax.errorbar(xs, ys, yerr=[lows, highs] if bars else None, capsize=2,
                            elinewidth=0.8, markersize=4, linewidth=1.3, **style)
    container.lines[0].set_gid(gid)
    for i, artist in enumerate(container.lines[2]):
        artist.set_gid(f"{gid}-bars{i}")
    record.update(gid=gid, points=[{"n": p[0], "y": p[1], "low": p[1] - lo, "high": p[1] + hi,
                                    "mark": p[3]} for p, lo, hi in zip(points, lows, highs)])
    for i, p in enumerate(points):
        if p[3]:
            ax.annotate(p[3], (p[0], p[1]), textcoords="offset points", xytext=(3, 3),
                        fontsize=9, fontweight="bold", color=style["color"],
                        gid=f"{gid}-mark{i}")


def task_series(files, task):
    """The series of one task: (key, the varying fields) with keys in the variants' order."""
    values = {}
    for fi, (_, _, res) in enumerate(files):
        for r in res:
            if r["task"] == task:
                for f in SERIES_FIELDS:
                    values.setdefault((fi, r["variant"], f), set()).add(str(r.get(f, "-")))
    varying = {k[2] for k, v in values.items() if len(v) > 1}
    keys = sorted({series_key(r, varying) for _, _, res in files for r in res
                   if r["task"] == task}, key=variant_rank)
    return keys, varying


def draw_task(axes, files, task, colours, meta):
    """One row: throughput and utilisation per series and file; returns what was drawn: the
    keys with their style, the files with a line in this row, the marks shown."""
    ax_t, ax_u = axes
    keys, varying = task_series(files, task)
    nth = {}
    style = {}
    for key in keys:
        v = key.split(" ")[0]
        k = nth[v] = nth.get(v, -1) + 1
        style[key] = (shade(colours[v], k), MARKERS[k % len(MARKERS)])
    drawn_files, marks = [], set()
    for fi, (_, _, results) in enumerate(files):
        for key in keys:
            points = sorted(((r["n"], r["gelem_s"], interval(r), utilisation(r), mark(r))
                             for r in results
                             if r["task"] == task and series_key(r, varying) == key),
                            key=lambda p: p[:2])
            if not points:
                continue
            if fi not in drawn_files:
                drawn_files.append(fi)
            colour, marker = style[key]
            line = {"color": colour, "marker": marker, "linestyle": LINESTYLES[fi % len(LINESTYLES)]}
            base = {"task": task, "key": key, "variant": key.split(" ")[0], "file": fi,
                    "colour": colour}
            gid = f"rsb-{len(meta['series'])}"
            meta["series"].append(dict(base, panel="throughput"))
            draw_series(ax_t, [(p[0], p[1], p[2], "") for p in points], line, gid,
                        meta["series"][-1])
            util = [(p[0], 100 * p[3], p[2], p[4] if p[3] > 1 else "") for p in points
                    if p[3] is not None]
            if util:
                marks |= {p[3] for p in util if p[3]}
                meta["series"].append(dict(base, panel="utilisation"))
                draw_series(ax_u, util, line, f"{gid}u", meta["series"][-1])
    return [(k, style[k]) for k in keys], drawn_files, marks


def label_axes(ax_t, ax_u, task, ceiling_known):
    ax_t.set_xscale("log", base=2)
    ax_t.set_yscale("log")
    ax_t.set_xlabel("n (elements)")
    ax_t.set_ylabel("Gelem/s (median)")
    ax_t.set_title(f"{task}: throughput")
    ax_t.grid(True, which="both", alpha=0.3)
    ax_t.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    # Within one decade there is no major tick to label: the minor ones (2, 3, 5) are labelled.
    low, high = ax_t.get_ylim()
    narrow = high < 10 * low
    ax_t.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if narrow and f"{v:.0e}"[0] in "235" else ""))
    ax_u.set_xscale("log", base=2)
    ax_u.set_ylim(bottom=0)
    ax_u.set_xlabel("n (elements)")
    ax_u.set_ylabel("% of ceiling" if ceiling_known else "% of copy bandwidth")
    ax_u.set_title(f"{task}: utilisation (100% = "
                   + ("its ceiling)" if ceiling_known else "the device's copy bandwidth)"))
    ax_u.grid(True, alpha=0.3)


def legends(ax_t, ax_u, drawn, labels, meta):
    """A legend of what the row draws: its series (colour and marker), the error bars; the
    files with a line in it (line style), the 100% line and the marks shown."""
    keys, files, marks = drawn
    handles = [Line2D([], [], color=c, marker=m, linewidth=2, label=k) for k, (c, m) in keys]
    handles.append(Line2D([], [], color="grey", marker="|", linestyle="none", markersize=10,
                          label="bars: the median's 95% interval"))
    ax_t.legend(handles=handles, fontsize=8, loc="best")
    handles = [Line2D([], [], color="black", linewidth=1, linestyle="--", label="100%")]
    if len(labels) > 1:
        handles += [Line2D([], [], color="grey", linestyle=LINESTYLES[i % len(LINESTYLES)],
                           label=labels[i]) for i in files]
    handles += [Line2D([], [], linestyle="none", label=MARK_MEANING[m]) for m in sorted(marks)]
    ax_u.legend(handles=handles, fontsize=8, loc="best")
    meta["legends"].append({"series": [k for k, _ in keys], "files": [labels[i] for i in files],
                            "marks": sorted(marks)})


def draw(files, labels, title):
    """The figure, and its metadata: the colour of every variant, each line's gid, points and
    error bars, and each row's legend."""
    colours = variant_colours()
    tasks = []
    for _, _, results in files:
        for r in results:
            if r["task"] not in tasks:
                tasks.append(r["task"])
    ceiling_known = any("utilisation" in r for _, _, res in files for r in res)
    meta = {"colours": colours, "files": labels, "series": [], "legends": []}
    fig, axes = plt.subplots(len(tasks), 2, figsize=(12, 4.2 * len(tasks)), squeeze=False)
    for row, task in enumerate(tasks):
        ax_t, ax_u = axes[row]
        ax_u.axhline(100, color="black", linewidth=1, linestyle="--", gid=f"rsb-ceiling-{row}")
        drawn = draw_task(axes[row], files, task, colours, meta)
        label_axes(ax_t, ax_u, task, ceiling_known)
        legends(ax_t, ax_u, drawn, labels, meta)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig, meta


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("--variant-order", default="",
                    help="the variants' order, comma-separated (default: as the results name them)")
    ap.add_argument("--case-fields", default="",
                    help="the results' fields that are keys of a case besides type and op, "
                         "comma-separated (reduce-scan-bench plot passes its tasks' own)")
    ap.add_argument("--metadata", help="also write what was drawn as JSON (for the tests)")
    args = ap.parse_args()
    VARIANT_ORDER.extend(v for v in args.variant_order.split(",") if v)
    SERIES_FIELDS[2:2] = [f for f in args.case_fields.split(",") if f]

    files = []
    for path in args.files:
        try:
            device, results = load(path)
        except (OSError, ValueError) as e:  # json.JSONDecodeError is a ValueError
            sys.exit(f"plot.py: {path}: {e}")
        files.append((path, device, results))
    labels = device_labels(files)
    for _, _, results in files:  # variants the order does not name: as the results name them
        for r in results:
            if r["variant"] not in VARIANT_ORDER:
                VARIANT_ORDER.append(r["variant"])
    if not any(results for _, _, results in files):
        sys.exit("plot.py: no timed results (passed, median > 0) in " + ", ".join(args.files))
    matplotlib.rcParams["svg.hashsalt"] = "reduce-scan-bench"  # the same SVG ids every run
    fig, meta = draw(files, labels, args.title or (labels[0] if len(files) == 1 else ""))
    fmt = os.path.splitext(args.output)[1].lower().lstrip(".")
    try:
        if fmt == "svg":
            fig.savefig(args.output, format="svg", metadata={"Date": None})
        else:
            save_png(fig, args.output)
        if args.metadata:
            with open(args.metadata, "w") as f:
                json.dump(meta, f, indent=1)
    except OSError as e:
        sys.exit(f"plot.py: cannot write {e.filename}: {e.strerror or e}")
    return 0


def save_png(fig, path):
    """A PNG of 256 colours where Pillow (a matplotlib dependency) can make one: a third of the
    size, for figures kept in a repository."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    try:
        from PIL import Image
        Image.open(io.BytesIO(buf.getvalue())).convert("RGB").quantize(colors=256).save(
            path, format="PNG", optimize=True)
    except ImportError:
        with open(path, "wb") as f:
            f.write(buf.getvalue())


if __name__ == "__main__":
    sys.exit(main())
