#!/usr/bin/env python3
"""The class at a glance (`grade`'s index.html, index.md and terminal lines) on a class of three:
a perfect hand-in, one whose Scan.cl does not compile and one without kernels/; an item with a
speed floor none reaches (`failed`, 0 points: an item's status and points agree).

  tests/class_page_test.py BENCH SOURCE_DIR

Grades them with --jobs 2 and again (two of them) with --jobs 1: each hand-in's total on the
terminal as it finishes, the class's mean and median at the end. Opens index.html in headless
Chromium (Debian's `chromium`; exit 77, skipped, where it is missing): it renders with no console
message (a page with a script error, opened first, shows that one is seen), fetches nothing, and
its numbers (every hand-in's total and points, the mean, the median, the histogram, each item's
pass rate and failures) match summary.csv and the hand-ins' reports.
The device: RSB_TEST_PLATFORM / RSB_TEST_DEVICE as for the other tests."""
import csv, html.parser, json, os, re, shutil, statistics, subprocess, sys, tempfile

from html_page import CHROMIUM, console_is_read, open_page
from checks import check, summary

bench, src = sys.argv[1], sys.argv[2]
if not CHROMIUM:
    print("SKIPPED: no chromium (scripts/install-deps.sh --html installs it)")
    sys.exit(77)


RUBRIC = {"name": "class page test rubric", "items": [
    {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
     "cases": {"sizes": [1, 257], "scan_kinds": ["inclusive"]}},
    {"id": "reduction-sequential", "task": "reduction", "variant": "sequential", "points": 3,
     "cases": {"sizes": [1000]}},
    # A speed floor no hand-in reaches: correct but slow reads `failed` with 0 points.
    {"id": "reduction-atomic", "task": "reduction", "variant": "atomic", "points": 1,
     "cases": {"sizes": [1000]}, "speed_floor": 1000, "speed_case": {"sizes": [4096]}}]}


def grade(tmp, out, handins, jobs):
    args = [bench, "grade", "--sandbox", "none", "--rubric", os.path.join(tmp, "rubric.json"),
            "--output-dir", out, "--jobs", str(jobs)]
    if os.environ.get("POCL_CACHE_DIR"):
        args += ["--kernel-cache", os.environ["POCL_CACHE_DIR"]]
    for env, opt in (("RSB_TEST_PLATFORM", "--platform"), ("RSB_TEST_DEVICE", "--device")):
        if os.environ.get(env):
            args += [opt, os.environ[env]]
    run = subprocess.run(args + handins, capture_output=True, text=True, timeout=900)
    check(run.returncode == 0, f"grade exited {run.returncode}: {run.stderr}")
    return run.stderr


def check_terminal(err, rows, jobs):
    for r in rows:
        line = re.search(rf"\] {r['name']}: (\S+) / (\S+) \(", err)
        check(line is not None, f"--jobs {jobs}: no line with {r['name']}'s total in:\n{err}")
        if line:
            check(float(line.group(1)) == float(r["total"]),
                  f"--jobs {jobs}: {r['name']}'s total on the terminal {line.group(1)}, "
                  f"summary.csv {r['total']}")
    totals = [float(r["total"]) for r in rows]
    m = re.search(r"class: (\d+) hand-in\(s\), mean (\S+) / \S+, median (\S+) / ", err)
    check(m is not None, f"--jobs {jobs}: no class mean and median in:\n{err}")
    if m:
        check(int(m.group(1)) == len(rows), f"class line counts {m.group(1)} hand-ins")
        check(abs(float(m.group(2)) - statistics.mean(totals)) < 0.051, "the class mean")
        check(float(m.group(3)) == statistics.median(totals), "the class median")


class Dom(html.parser.HTMLParser):
    """The page's elements with data-* attributes, its tags, and the text of each failure."""

    def __init__(self):
        super().__init__()
        self.elements, self.tags, self.urls, self.open_failure = [], set(), [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v]
        if any(k.startswith("data-") or k == "id" for k in a):
            self.elements.append((tag, a, []))
            if a.get("class") == "failure":
                self.open_failure = self.elements[-1][2]

    def handle_endtag(self, tag):
        if tag == "li":
            self.open_failure = None

    def handle_data(self, data):
        if self.open_failure is not None:
            self.open_failure.append(data)


def rendered(path, tmp):
    """(the DOM Chromium rendered, its console messages)."""
    dom, said, status, err = open_page(path, tmp)
    check(status == 0, f"chromium exited {status}: {err}")
    return dom, said


def check_page(dom, out, rows, items):
    by_id = {a["id"]: a for _, a, _ in dom.elements if "id" in a}
    totals = [float(r["total"]) for r in rows]
    check(abs(float(by_id["mean"]["data-value"]) - statistics.mean(totals)) < 1e-4, "page mean")
    check(float(by_id["median"]["data-value"]) == statistics.median(totals), "page median")
    shown = {a["data-name"]: a for t, a, _ in dom.elements if t == "tr" and "data-name" in a}
    check(sorted(shown) == sorted(r["name"] for r in rows), f"hand-ins on the page: {list(shown)}")
    for r in rows:
        a = shown.get(r["name"], {})
        check(float(a.get("data-total", "nan")) == float(r["total"]), f"{r['name']}'s total")
        check(float(a.get("data-max", "nan")) == float(r["max"]), f"{r['name']}'s max")
        check(f"{r['name']}.md" in dom.urls and f"{r['name']}.json" in dom.urls,
              f"links to {r['name']}'s reports")
    points = [(a["data-item"], float(a["data-points"])) for t, a, _ in dom.elements
              if t == "td" and "data-points" in a]
    check(points == [(i, float(r[i])) for r in rows for i in items], f"item points: {points}")
    bins = [0] * 11
    for r in rows:
        t, m = float(r["total"]), float(r["max"])
        bins[10 if t >= m else min(9, int(10 * t / m))] += 1
    page_bins = [int(a["data-count"]) for t, a, _ in dom.elements if "data-bin" in a]
    check(page_bins == bins, f"histogram {page_bins}, from summary.csv {bins}")
    reports = {r["name"]: json.load(open(os.path.join(out, r["name"] + ".json"))) for r in rows}
    for item in items:
        got = [g for r in reports.values() for g in r["items"] if g["id"] == item]
        row = next(a for t, a, _ in dom.elements if t == "tr" and a.get("data-item") == item)
        passed = sum(g["status"] == "passed" for g in got)
        check(int(row["data-passed"]) == passed and int(row["data-graded"]) == len(got),
              f"{item}'s pass rate {row['data-passed']}/{row['data-graded']}, reports "
              f"{passed}/{len(got)}")
        lost = sum(g["status"] != "passed" or g["points"] < g["max_points"] for g in got)
        shown_lost = sum(int(a["data-count"]) for t, a, _ in dom.elements
                         if a.get("class") == "failure" and a.get("data-item") == item)
        check(shown_lost == lost, f"{item}: failures counted {shown_lost}, reports {lost}")


def main():
    tmp = tempfile.mkdtemp(prefix="rsb-class-page.")
    try:
        json.dump(RUBRIC, open(os.path.join(tmp, "rubric.json"), "w"))
        perfect, broken, empty = (os.path.join(tmp, n) for n in ("perfect", "broken", "empty"))
        for h in (perfect, broken):
            shutil.copytree(os.path.join(src, "kernels"), os.path.join(h, "kernels"))
        with open(os.path.join(broken, "kernels", "Scan.cl"), "a") as f:
            f.write("\nthis line is not OpenCL C\n")
        os.makedirs(empty)
        out = os.path.join(tmp, "out")
        err = grade(tmp, out, [perfect, broken, empty], 2)
        rows = list(csv.DictReader(open(os.path.join(out, "summary.csv"))))
        items = [i["id"] for i in RUBRIC["items"]]
        check(len(rows) == 3, f"summary.csv rows: {rows}")
        check_terminal(err, rows, 2)

        check(console_is_read(tmp), "Chromium's console is not read")
        page, said = rendered(os.path.join(out, "index.html"), tmp)
        check(said == [], f"index.html's console: {said}")
        dom = Dom()
        dom.feed(page)
        check(not dom.tags & {"script", "link", "img", "iframe"}, f"tags: {dom.tags}")
        check(not [u for u in dom.urls if re.match(r"[a-z]+:", u)], f"URLs: {dom.urls}")
        check_page(dom, out, rows, items)
        failure_text = " ".join(" ".join(t) for _, a, t in dom.elements
                                if a.get("data-item") == "scan-naive" and t)
        check("kernels/Scan.cl:" in failure_text and "broken" in failure_text,
              f"scan-naive's failures name the compiler's file:line and the hand-in: "
              f"{failure_text}")
        slow = json.load(open(os.path.join(out, "perfect.json")))["items"][2]
        check(slow["status"] == "failed" and slow["points"] == 0 and
              "below the floor 1000x" in slow["detail"],
              f"a correct but slow item: status and points agree: {json.dumps(slow)}")
        usage = subprocess.run([bench, "grade", "--help"], capture_output=True, text=True).stdout
        check("DIR/index.html (the class at a glance)" in usage, f"grade --help: {usage}")
        md = open(os.path.join(out, "index.md")).read()
        check("## Scores" in md and "### scan-naive: most common failures" in md, md)

        err = grade(tmp, os.path.join(tmp, "out1"), [perfect, empty], 1)
        check_terminal(err, list(csv.DictReader(open(os.path.join(tmp, "out1", "summary.csv")))),
                       1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
