#!/usr/bin/env python3
"""scripts/plot.py reads as one figure: a variant has one colour in every panel, error bars are
the median's 95% interval, a utilisation above 100% carries the table's mark (c, ?), and each
row's legend names only what it draws.

  tests/plot_test.py SOURCE_DIR

Draws tests/fixtures/base.json (reduction and scan, single-pass in both) edited (a cached and a
suspect utilisation above 100%, a cached one below, a result without an interval) with a second
device that has reduction results only, as SVG with --metadata; checks the metadata against the
JSON and the SVG's elements against the metadata (each line's stroke, its error bars and marks,
by gid). Needs Python 3 with matplotlib (exit 77, skipped, without: RSB_PYTHON, python3 or
/usr/bin/python3)."""
import copy, json, os, re, shutil, subprocess, sys, tempfile
from checks import check, summary

src = sys.argv[1]


def python_with_matplotlib():
    for py in [os.environ.get("RSB_PYTHON"), sys.executable, "/usr/bin/python3"]:
        if py and subprocess.run([py, "-c", "import matplotlib"],
                                 capture_output=True).returncode == 0:
            return py
    return None


def inputs(tmp):
    base = json.load(open(os.path.join(src, "tests", "fixtures", "base.json")))
    r = base["results"]
    for x in r:
        x["utilisation"], x["fits_in_cache"] = 0.5, False
    r[1].update(utilisation=2.3, fits_in_cache=True)  # reduction single-pass 2^12: "230%c"
    r[3].update(utilisation=1.8, utilisation_suspect="above the ceiling")  # "180%?"
    r[4].update(utilisation=0.7, fits_in_cache=True)  # scan 2^12: cached, below 100%: no mark
    r[5]["time_ms"].update(ci_low=0, ci_high=0)  # no interval: no bar
    # In rounds (--repetitions): the bar is the rounds' interval, not the run's.
    t = r[2]["time_ms"]
    r[2]["time_ms_rounds"] = {"rounds": 5, "median": 2 * t["median"], "ci_low": 1.5 * t["median"],
                              "ci_high": 3 * t["median"]}
    other = json.load(open(os.path.join(src, "tests", "fixtures", "other-device.json")))
    other["results"] = [x for x in other["results"] if x["task"] == "reduction"]
    paths = [os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")]
    for p, d in zip(paths, (base, other)):
        json.dump(d, open(p, "w"))
    return paths, [base, other]


def expected_points(data, task, variant, panel):
    """(n, y, low, high, mark) per result as the JSON gives them."""
    out = []
    for r in data["results"]:
        if r["task"] != task or r["variant"] != variant:
            continue
        t = r.get("time_ms_rounds") or r["time_ms"]
        ci = t["ci_high"] > 0
        if panel == "throughput":
            y = r["gelem_s"]
            mark = ""
        else:
            y = 100 * (r.get("utilisation") or r["bandwidth_util"])
            mark = ("c" if r.get("fits_in_cache") else "?" if r.get("utilisation_suspect")
                    else "") if y > 100 else ""
        low, high = (y * t["median"] / t["ci_high"], y * t["median"] / t["ci_low"]) if ci \
            else (y, y)
        out.append((r["n"], y, low, high, mark))
    return sorted(out)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def check_series(meta, svg, data):
    for s in meta["series"]:
        what = f"{s['task']} {s['panel']} {s['key']} file {s['file']}"
        check(s["colour"] == meta["colours"][s["variant"]], f"{what}: colour {s['colour']}")
        m = re.search(rf'<g id="{s["gid"]}">\s*<path [^>]*stroke: (#[0-9a-f]{{6}})', svg)
        check(m is not None and m.group(1) == s["colour"],
              f"{what}: the SVG's line {s['gid']} is drawn in {m and m.group(1)}, "
              f"not {s['colour']}")
        want = expected_points(data[s["file"]], s["task"], s["variant"], s["panel"])
        got = [(p["n"], p["y"], p["low"], p["high"], p["mark"]) for p in s["points"]]
        check(len(want) == len(got) and all(w[0] == g[0] and w[4] == g[4] and
                                            all(close(a, b) for a, b in zip(w[1:4], g[1:4]))
                                            for w, g in zip(want, got)),
              f"{what}: points {got}, from the JSON {want}")
        bars = any(p["low"] < p["y"] for p in s["points"])
        check(bars == (f'id="{s["gid"]}-bars0"' in svg), f"{what}: error bars in the SVG")
        for i, p in enumerate(s["points"]):
            shown = re.search(rf'<g id="{s["gid"]}-mark{i}">.*?<!-- (\S+) -->', svg, re.S)
            check((shown.group(1) if shown else "") == p["mark"],
                  f"{what}: point {i}'s mark in the SVG {shown and shown.group(1)}, "
                  f"want {p['mark']!r}")


def main():
    py = python_with_matplotlib()
    if not py:
        print("SKIPPED: no Python with matplotlib (scripts/install-deps.sh --plot)")
        return 77
    tmp = tempfile.mkdtemp(prefix="rsb-plot.")
    try:
        paths, data = inputs(tmp)
        svg_path, meta_path = os.path.join(tmp, "f.svg"), os.path.join(tmp, "f.json")
        run = subprocess.run([py, os.path.join(src, "scripts", "plot.py"), "-o", svg_path,
                              "--metadata", meta_path, "--variant-order",
                              "atomic,sequential,single-pass"] + paths,
                             capture_output=True, text=True, timeout=300)
        check(run.returncode == 0, f"plot.py exited {run.returncode}: {run.stderr}")
        meta, svg = json.load(open(meta_path)), open(svg_path).read()
        colours = meta["colours"]
        check(list(colours)[:3] == ["atomic", "sequential", "single-pass"] and
              len(set(colours.values())) == len(colours), f"one colour per variant: {colours}")
        panels = {(s["task"], s["panel"]) for s in meta["series"] if s["variant"] == "single-pass"}
        check(len(panels) == 4, f"single-pass drawn in both tasks' panels: {panels}")
        check_series(meta, svg, data)
        marks = [p["mark"] for s in meta["series"] for p in s["points"] if p["mark"]]
        check(sorted(marks) == ["?", "c"], f"marks drawn: {marks}")
        devices = [d["device"]["name"] for d in data]
        check(meta["legends"] == [
            {"series": ["sequential", "single-pass"], "files": devices, "marks": ["?", "c"]},
            {"series": ["single-pass"], "files": devices[:1], "marks": []}],
              f"legends: {meta['legends']}")
        check("c: the input fits in the last-level cache" in svg, "the mark c explained")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
