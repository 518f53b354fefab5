#!/usr/bin/env python3
"""`reduce-scan-bench report`: result files as one self-contained HTML page, opened as a browser
shows it.

  tests/report_test.py BENCH SOURCE_DIR

Makes two small result files with BENCH (reduction and scan, sequential and single-pass, two
sizes; RSB_TEST_PLATFORM / RSB_TEST_DEVICE as for the other tests), writes a report of one and
of both, and one without matplotlib (RSB_PYTHON names no interpreter), and opens each in
headless Chromium (Debian's `chromium`; exit 77, skipped, where it is missing): no console
message (a page with a script error, opened first, shows that one is seen), nothing fetched,
and its numbers those of the JSON: each case's median and Gelem/s (exact in data-value, rounded
as the table rounds them in the text), each kernel's time in the breakdown, the device and the
command; the figure inline where matplotlib is there, else the reason it was left out; given
two files, each case's throughput ratio and change those of `compare --format json`. Files of an
older version (tests/fixtures) are said partial, a name with & and < is escaped, a file of two
devices gets a device column. Bad input (an output not .html, a missing file) is exit 2 with one
line and no page."""
import json, os, re, shutil, subprocess, sys, tempfile

from html_page import CHROMIUM, Elements, console_is_read, open_page
from checks import check, summary

bench, src = sys.argv[1], sys.argv[2]
if not CHROMIUM:
    print("SKIPPED: no chromium (scripts/install-deps.sh --html installs it)")
    sys.exit(77)


def device_args():
    args = []
    for env, opt in (("RSB_TEST_PLATFORM", "--platform"), ("RSB_TEST_DEVICE", "--device")):
        if os.environ.get(env):
            args += [opt, os.environ[env]]
    return args


def make_results(path):
    run = subprocess.run([bench, "--task", "reduction,scan", "--variant", "sequential,single-pass",
                          "--size", "2^10,2^12", "--time-budget", "0.02", "--format", "json", "-q",
                          "-o", path] + device_args(), capture_output=True, text=True, timeout=600)
    check(run.returncode == 0, f"the run for {path} exited {run.returncode}: {run.stderr}")
    return json.load(open(path))


def report(files, out, env=None):
    run = subprocess.run([bench, "report"] + files + ["-o", out], capture_output=True, text=True,
                         timeout=600, env=dict(os.environ, **(env or {})))
    check(run.returncode == 0 and os.path.exists(out),
          f"report {files} exited {run.returncode}: {run.stderr}")
    return run.stderr


def rendered(path, tmp):
    """The page's elements as Chromium rendered them; no console message, nothing fetched."""
    dom, said, status, err = open_page(path, tmp)
    check(status == 0, f"chromium exited {status} on {path}: {err}")
    check(said == [], f"{path}: console: {said}")
    page = Elements()
    page.feed(dom)
    check(not page.tags & {"script", "link", "img", "iframe", "object", "embed"},
          f"{path}: tags {page.tags}")
    check(all(u.startswith("#") for u in page.urls), f"{path}: URLs {page.urls}")
    check(not re.search(r"url\((?!#)", dom), f"{path}: a url() that is not in the page")
    return page


def section_of(page, index):
    """The elements of the section of file `index`, its own element first."""
    starts = [k for k, e in enumerate(page.elements) if e[0] == "section"]
    at = [k for k in starts if page.elements[k][1].get("id") == f"file-{index}"]
    if not at:
        return []
    ends = [k for k in starts if k > at[0]]
    return page.elements[at[0]:ends[0] if ends else len(page.elements)]


def check_file(page, index, path, data):
    """The section of one file: device, provenance, every case's numbers, every breakdown."""
    section = section_of(page, index)
    check(section and section[0][1].get("data-path") == path, f"the section of {path}")
    fields = {e[1]["data-field"]: page.text(e) for e in section
              if e[0] == "td" and "data-field" in e[1] and "data-value" not in e[1]}
    check(fields.get("name") == data["device"]["name"], f"device name {fields.get('name')}")
    check(fields.get("command") == data["command"], f"command {fields.get('command')}")
    check(fields.get("suite.git_revision") == data["suite"]["git_revision"], "the revision")
    rows = {int(e[1]["data-index"]): e for e in section
            if e[0] == "tr" and e[1].get("data-file") == path}
    check(sorted(rows) == list(range(len(data["results"]))), f"{path}: rows {sorted(rows)}")
    for i, r in enumerate(data["results"]):
        check(r["status"] == "passed", f"{path}: results[{i}] {r['status']}")
        got = row_values(section, rows.get(i), page)
        want = {"gelem_s": (r["gelem_s"], f"{r['gelem_s']:.2f}"),
                "time_ms.median": (r["time_ms"]["median"], f"{r['time_ms']['median']:.4f}")}
        for field, (value, text) in want.items():
            shown = got.get(field)
            check(shown is not None and float(shown[0]) == value and shown[1].startswith(text),
                  f"{path}: results[{i}] {field}: page {shown}, JSON {value}")
        check_breakdown(page, section, path, i, r)


def row_values(section, row, page):
    """{data-field: (data-value, text)} of the cells of one table row (they follow it in
    document order, up to the next row)."""
    if row is None:
        return {}
    out = {}
    for e in section[section.index(row) + 1:]:
        if e[0] == "tr":
            break
        if e[0] == "td" and "data-value" in e[1]:
            out[e[1]["data-field"]] = (e[1]["data-value"], page.text(e))
    return out


def check_breakdown(page, section, path, i, r):
    """The case's breakdown table: its kernels in order, each one's time that of the JSON."""
    tables = [e for e in section if e[0] == "table" and e[1].get("data-file") == path
              and e[1].get("data-index") == str(i)]
    kernels = r.get("breakdown") or []
    check(len(tables) == (1 if kernels else 0),
          f"{path}: results[{i}]: {len(tables)} breakdown tables, {len(kernels)} kernels")
    if not tables:
        return
    inside = []
    for e in section[section.index(tables[0]) + 1:]:
        if e[0] in ("table", "section"):
            break
        inside.append(e)
    names = [e[1]["data-kernel"] for e in inside if e[0] == "tr" and "data-kernel" in e[1]]
    times = [float(e[1]["data-value"]) for e in inside if e[1].get("data-field") == "time_ms"]
    check(names == [k["kernel"] for k in kernels], f"{path}: results[{i}]: kernels {names}")
    check(times == [k["time_ms"] for k in kernels], f"{path}: results[{i}]: kernel times {times}")


def check_comparison(page, base, new, tmp):
    """The comparison's rows: each case's ratio and change those of `compare --format json`,
    the ratio BASE's median over NEW's."""
    run = subprocess.run([bench, "compare", base, new, "--format", "json"], capture_output=True,
                         text=True, timeout=300)
    check(run.returncode in (0, 1), f"compare exited {run.returncode}: {run.stderr}")
    cases = json.loads(run.stdout)["cases"] if run.returncode in (0, 1) else []
    rows = [e for e in page.elements if e[0] == "tr" and "data-change" in e[1]]
    want_cases = len(json.load(open(base))["results"])
    check(len(rows) == len(cases) == want_cases, f"comparison rows {len(rows)}, compare's cases "
          f"{len(cases)}, want {want_cases}")
    ratios = [e for e in page.elements if e[1].get("data-field") == "speedup"]
    for row, ratio, case in zip(rows, ratios, cases):
        check(row[1]["data-change"] == case["change"],
              f"{row[1]['data-label']}: change {row[1]['data-change']}, compare {case['change']}")
        want = case["base"]["median_ms"] / case["new"]["median_ms"]
        check(float(ratio[1]["data-value"]) == case["throughput_ratio"] == want and
              page.text(ratio) == f"{want:.3f}x",
              f"{row[1]['data-label']}: ratio {ratio[1]['data-value']} ({page.text(ratio)}), "
              f"compare {case['throughput_ratio']}, medians {want}")
    summary = [page.text(e) for e in page.elements if e[1].get("id") == "compare-summary"]
    check(summary and summary[0].startswith(f"{want_cases} matched cases:"), f"summary {summary}")


def check_bad_input(tmp, base):
    for args, expect in (([base, "-o", os.path.join(tmp, "x.pdf")], "--output"),
                         ([os.path.join(tmp, "missing.json"), "-o", os.path.join(tmp, "y.html")],
                          "no such file"),
                         ([base], "--output")):
        run = subprocess.run([bench, "report"] + args, capture_output=True, text=True)
        check(run.returncode == 2 and expect in run.stderr and run.stderr.count("\n") == 1,
              f"report {args}: exit {run.returncode}: {run.stderr}")
    check(not os.path.exists(os.path.join(tmp, "y.html")), "a page written on bad input")


def check_older_files(tmp):
    """Files of an older version (tests/fixtures: no utilisation, no breakdown), one under a name
    that needs escaping, one with a second device: said partial, a device column, the numbers."""
    odd = os.path.join(tmp, "old & <base>.json")
    shutil.copy(os.path.join(src, "tests", "fixtures", "base.json"), odd)
    files = [odd, os.path.join(src, "tests", "fixtures", "two-devices.json")]
    out = os.path.join(tmp, "older.html")
    report(files, out)
    page = rendered(out, tmp)
    for i, path in enumerate(files):
        data = json.load(open(path))
        section = section_of(page, i)
        check(section and section[0][1].get("data-path") == path, f"the section of {path}")
        notes = [page.text(e) for e in section if e[1].get("data-partial")]
        check(notes == [f"{len(data['results'])} of {len(data['results'])} results lack fields "
                        "this version writes (an older or edited file): their utilisation, "
                        "marks and breakdown are not shown"], f"{path}: partial note {notes}")
        rows = [e for e in section if e[0] == "tr" and e[1].get("data-file") == path]
        check(len(rows) == len(data["results"]), f"{path}: {len(rows)} rows")
        for row, r in zip(rows, data["results"]):
            shown = row_values(section, row, page).get("gelem_s")
            check(shown is not None and float(shown[0]) == r["gelem_s"],
                  f"{path}: {row[1].get('data-label')}: gelem_s {shown}, JSON {r['gelem_s']}")
    headers = [page.text(e) for e in section_of(page, 1) if e[1].get("data-column")]
    check(headers[:1] == ["device"], f"two devices: the columns {headers}")


def main():
    tmp = tempfile.mkdtemp(prefix="rsb-report.")
    try:
        paths = [os.path.join(tmp, "base.json"), os.path.join(tmp, "new.json")]
        data = [make_results(p) for p in paths]
        check(console_is_read(tmp), "Chromium's console is not read")
        one, two, bare = (os.path.join(tmp, n) for n in ("one.html", "two.html", "bare.html"))
        report(paths[:1], one)
        report(paths, two)
        err = report(paths[:1], bare, {"RSB_PYTHON": os.path.join(tmp, "no-python")})
        check("plots left out" in err, f"no note of the plots left out: {err}")
        matplotlib = subprocess.run([bench, "plot", paths[0], "-o", os.path.join(tmp, "p.svg")],
                                    capture_output=True, text=True).returncode == 0
        pages = {}  # each page opened once in Chromium
        for html, files in ((one, 1), (two, 2), (bare, 1)):
            page = pages[html] = rendered(html, tmp)
            for i in range(files):
                check_file(page, i, paths[i], data[i])
            left_out = [page.text(e) for e in page.elements if e[1].get("id") == "plots-left-out"]
            if html == bare or not matplotlib:
                check(left_out and "python3-matplotlib" in left_out[0],
                      f"{html}: why the plots are left out: {left_out}")
            else:
                check("svg" in page.tags and not left_out, f"{html}: no figure inline")
            check(("comparison" in [e[1].get("id") for e in page.elements]) == (files == 2),
                  f"{html}: a comparison only for two files")
        check_comparison(pages[two], paths[0], paths[1], tmp)
        check_bad_input(tmp, paths[0])
        check_older_files(tmp)
        usage = subprocess.run([bench, "report", "--help"], capture_output=True, text=True)
        check(usage.returncode == 0 and "Usage: reduce-scan-bench report" in usage.stdout,
              f"report --help: {usage.stdout}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
