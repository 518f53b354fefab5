#!/usr/bin/env python3
"""Draws reduce-scan-bench result files (--format json) as one figure, a row per task:
  left:  throughput (Gelem/s) against n per variant, log-log;
  right: utilisation per variant against its ceiling (100%), against n.
Several files overlay, one line style and marker per file (labelled by device).

  scripts/plot.py -o FILE.png|.svg RESULTS.json [MORE.json ...] [--title TEXT]

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
STYLES = [("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1)), "v"), ((0, (1, 1)), "x")]


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


def series_key(r, varying):
    """What a line stands for within a task: the variant, plus type, op, scan kind and local
    size where those vary among the plotted results."""
    parts = [r["variant"]]
    for field in ("type", "op", "scan_kind", "local_size"):
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


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("--variant-order", default="",
                    help="the variants' order, comma-separated (default: as the results name them)")
    args = ap.parse_args()
    VARIANT_ORDER.extend(v for v in args.variant_order.split(",") if v)

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
    tasks = []
    for _, _, results in files:
        for r in results:
            if r["task"] not in tasks:
                tasks.append(r["task"])
    if not tasks:
        sys.exit("plot.py: no timed results (passed, median > 0) in " + ", ".join(args.files))
    ceiling_known = any("utilisation" in r for _, _, res in files for r in res)

    fig, axes = plt.subplots(len(tasks), 2, figsize=(12, 4.2 * len(tasks)), squeeze=False)
    for row, task in enumerate(tasks):
        in_task = [r for _, _, res in files for r in res if r["task"] == task]
        # A field is in the label where one file holds one variant with several values of it.
        values = {}
        for fi, (_, _, res) in enumerate(files):
            for r in res:
                if r["task"] == task:
                    for f in ("type", "op", "scan_kind", "local_size"):
                        values.setdefault((fi, r["variant"], f), set()).add(str(r.get(f, "-")))
        varying = {k[2] for k, v in values.items() if len(v) > 1}
        keys = sorted({series_key(r, varying) for r in in_task}, key=variant_rank)
        cmap = plt.cm.tab10 if len(keys) <= 10 else plt.cm.tab20
        colour = {k: cmap(i % cmap.N) for i, k in enumerate(keys)}
        ax_t, ax_u = axes[row]
        for fi, (path, device, results) in enumerate(files):
            style, marker = STYLES[fi % len(STYLES)]
            for key in keys:
                points = sorted(((r["n"], r["gelem_s"], utilisation(r)) for r in results
                                 if r["task"] == task and series_key(r, varying) == key),
                                key=lambda p: p[:2])
                if not points:
                    continue
                ns = [p[0] for p in points]
                ax_t.plot(ns, [p[1] for p in points], linestyle=style, marker=marker,
                          color=colour[key], markersize=4, linewidth=1.3)
                util = [(p[0], 100 * p[2]) for p in points if p[2] is not None]
                if util:
                    ax_u.plot([u[0] for u in util], [u[1] for u in util], linestyle=style,
                              marker=marker, color=colour[key], markersize=4, linewidth=1.3)
        ax_t.set_xscale("log", base=2)
        ax_t.set_yscale("log")
        ax_t.set_xlabel("n (elements)")
        ax_t.set_ylabel("Gelem/s (median)")
        ax_t.set_title(f"{task}: throughput")
        ax_t.grid(True, which="both", alpha=0.3)
        ax_t.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax_t.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        ax_u.axhline(100, color="black", linewidth=1, linestyle="--")
        ax_u.set_xscale("log", base=2)
        ax_u.set_ylim(bottom=0)
        ax_u.set_xlabel("n (elements)")
        ax_u.set_ylabel("% of ceiling" if ceiling_known else "% of copy bandwidth")
        ax_u.set_title(f"{task}: utilisation (100% = "
                       + ("its ceiling)" if ceiling_known else "the device's copy bandwidth)"))
        ax_u.grid(True, alpha=0.3)
        variant_legend = [Line2D([], [], color=colour[k], linewidth=2, label=k) for k in keys]
        ax_t.legend(handles=variant_legend, fontsize=8, loc="best")
        if len(files) > 1:
            device_legend = [Line2D([], [], color="grey", linestyle=STYLES[i % len(STYLES)][0],
                                    marker=STYLES[i % len(STYLES)][1], label=labels[i])
                             for i in range(len(files))]
            ax_u.legend(handles=device_legend, fontsize=8, loc="best")
    title = args.title or (labels[0] if len(files) == 1 else "")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fmt = os.path.splitext(args.output)[1].lower().lstrip(".")
    try:
        if fmt == "svg":
            fig.savefig(args.output, format="svg", metadata={"Date": None})
        else:
            save_png(fig, args.output)
    except OSError as e:
        sys.exit(f"plot.py: cannot write {args.output}: {e.strerror or e}")
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
