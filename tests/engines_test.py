#!/usr/bin/env python3
"""The engines a course runs the grader in, each on a perfect hand-in and one whose Scan.cl does
not compile:
  - GitHub Classroom: grading/github-classroom/autograding.json has one test per item of the
    shipped rubric with its points; its tests' run commands, run as the autograding action runs
    them (bash in the student's repository, a test passes with exit 0 and earns its points), on
    a scratch $HOME laid out as setup.sh leaves it (its build stood in for by the suite's binary);
  - PrairieLearn: grading/prairielearn/run on a scratch root laid out as PrairieLearn lays out
    /grade (data/, student/ with the submitted files, tests/rubric.json, results/), results.json
    field by field; and what it says when the grader refuses;
  - `grade --format junit`: junit.xml, a testcase per item per hand-in.

  tests/engines_test.py BENCH SOURCE_DIR

The device: RSB_TEST_PLATFORM / RSB_TEST_DEVICE as for the other tests."""
import json, os, shlex, shutil, subprocess, sys, tempfile
import xml.etree.ElementTree as ET

from checks import check, summary

bench, src = sys.argv[1], sys.argv[2]
SELECTORS = []
for env, opt in (("RSB_TEST_PLATFORM", "--platform"), ("RSB_TEST_DEVICE", "--device")):
    if os.environ.get(env):
        SELECTORS += [opt, os.environ[env]]
CACHE = ["--kernel-cache", os.environ["POCL_CACHE_DIR"]] if os.environ.get("POCL_CACHE_DIR") else []


SHIPPED = {i["id"]: i for i in json.load(open(os.path.join(src, "grading", "rubric.json")))["items"]}
# Two of the shipped rubric's items with their ids, titles and points, on small cases.
RUBRIC = {"name": "engines test rubric", "items": [
    {"id": "scan-naive", "title": SHIPPED["scan-naive"]["title"], "task": "scan",
     "variant": "naive", "points": SHIPPED["scan-naive"]["points"],
     "cases": {"sizes": [1, 257], "scan_kinds": ["inclusive"]}},
    {"id": "reduction-sequential", "title": SHIPPED["reduction-sequential"]["title"],
     "task": "reduction", "variant": "sequential",
     "points": SHIPPED["reduction-sequential"]["points"], "cases": {"sizes": [1000]}}]}
SCAN_POINTS, RED_POINTS = (i["points"] for i in RUBRIC["items"])


def github_classroom(tmp, perfect, broken):
    tests = json.load(open(os.path.join(src, "grading", "github-classroom", "autograding.json")))
    tests = tests["tests"]
    check([t["name"].split(":")[0] for t in tests] == list(SHIPPED),
          f"autograding.json's tests {[t['name'] for t in tests]}, the rubric's {list(SHIPPED)}")
    for t in tests:
        item = SHIPPED.get(t["name"].split(":")[0], {})
        check(t["points"] == item.get("points"), f"{t['name']}: {t['points']} points")
        check(f"--items {item.get('id')} " in t["run"] and "--format github-classroom" in t["run"],
              f"{t['name']} runs {t['run']}")
    check(tests[0]["setup"] == "bash .github/classroom/setup.sh", tests[0]["setup"])
    home = os.path.join(tmp, "home")  # as setup.sh leaves it
    os.makedirs(os.path.join(home, "rsb-grader", "build"))
    os.makedirs(os.path.join(home, "rsb-grader", "grading"))
    os.symlink(bench, os.path.join(home, "rsb-grader", "build", "reduce-scan-bench"))
    json.dump(RUBRIC, open(os.path.join(home, "rsb-grader", "grading", "rubric.json"), "w"))
    env = dict(os.environ, HOME=home)
    byid = {t["name"].split(":")[0]: t for t in tests}
    for repo, item, earns in ((perfect, "scan-naive", True), (perfect, "reduction-sequential", True),
                              (broken, "scan-naive", False)):
        t = byid[item]
        # (And the test run's kernel cache: the hand-in's runs compile no kernel the suite's
        # tests compiled, as the other engines' runs here.)
        command = t["run"] + "".join(" " + shlex.quote(s) for s in SELECTORS + CACHE)
        run = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True,
                             text=True, timeout=60 * t["timeout"])
        name = os.path.basename(repo)
        check((run.returncode == 0) == earns,
              f"{name}, {item}: exit {run.returncode}\n{run.stdout}\n{run.stderr}")
        check(run.returncode in (0, 1), f"{name}, {item}: exit {run.returncode}: {run.stderr}")
        points = SHIPPED[item]["points"]
        check(f"# {name}: {points if earns else 0} / {points} points" in run.stdout,
              f"{name}, {item}: the report on stdout:\n{run.stdout}")


def prairielearn(tmp, perfect, broken):
    root = os.path.join(tmp, "grade")

    def submit_and_run(handin, args=""):
        shutil.rmtree(root, ignore_errors=True)
        for d in ("data", "student", "tests", "results"):
            os.makedirs(os.path.join(root, d))
        json.dump({"params": {}, "correct_answers": {}, "submitted_answers": {}, "gradable": True},
                  open(os.path.join(root, "data", "data.json"), "w"))
        json.dump(RUBRIC, open(os.path.join(root, "tests", "rubric.json"), "w"))
        for name in os.listdir(os.path.join(handin, "kernels")):  # a file upload: loose files
            shutil.copy(os.path.join(handin, "kernels", name), os.path.join(root, "student"))
        env = dict(os.environ, PL_GRADE_ROOT=root, RSB_BINARY=bench,
                   RSB_GRADE_ARGS=shlex.join(CACHE + SELECTORS) + " " + args)
        run = subprocess.run([os.path.join(src, "grading", "prairielearn", "run")], env=env,
                             capture_output=True, text=True, timeout=900)
        check(run.returncode == 0, f"run exited {run.returncode}: {run.stdout}{run.stderr}")
        return json.load(open(os.path.join(root, "results", "results.json")))

    for handin, perfect_one in ((perfect, True), (broken, False)):
        r = submit_and_run(handin)
        what = f"PrairieLearn, {os.path.basename(handin)}: {json.dumps(r, indent=1)}"
        total = SCAN_POINTS + RED_POINTS
        check(r["gradable"] is True, what)
        check(abs(r["score"] - (1.0 if perfect_one else RED_POINTS / total)) < 1e-9, what)
        check(r["message"].startswith(f"{total if perfect_one else RED_POINTS} / {total} points."),
              what)
        check("engines test rubric" in r["message"] and "# submission:" in r["output"], what)
        check([t["name"] for t in r["tests"]] == ["scan-naive", "reduction-sequential"], what)
        scan, red = r["tests"]
        check(scan["description"] == RUBRIC["items"][0]["title"], what)
        check(scan["max_points"] == SCAN_POINTS and red["max_points"] == RED_POINTS, what)
        check(scan["points"] == (SCAN_POINTS if perfect_one else 0), what)
        check(red["points"] == RED_POINTS and red["message"] == "passed", what)
        check(red["output"] == f"passed: {RED_POINTS} / {RED_POINTS} points\n", what)
        if perfect_one:
            check(scan["message"] == "passed", what)
        else:
            check(scan["message"].startswith("error: ") and "Scan.cl" in scan["message"], what)
            check(scan["output"].startswith(f"error: 0 / {SCAN_POINTS} points\n\n"), what)
    r = submit_and_run(perfect, "--timeout 0")
    check(r["gradable"] is False and r["score"] == 0 and r["tests"] == [], json.dumps(r))
    check("the grader exited with 2" in r["message"] and "error: --timeout" in r["message"],
          json.dumps(r))


def junit(tmp, perfect, broken):
    out = os.path.join(tmp, "junit-out")
    run = subprocess.run([bench, "grade", "--sandbox", "none", "--format", "junit", "--jobs", "2",
                          "--rubric", os.path.join(tmp, "rubric.json"), "--output-dir", out, "-q"]
                         + CACHE + SELECTORS + [perfect, broken], capture_output=True, text=True,
                         timeout=900)
    check(run.returncode == 0, f"junit: exit {run.returncode}: {run.stderr}")
    doc = ET.parse(os.path.join(out, "junit.xml")).getroot()
    check(doc.tag == "testsuites" and doc.get("name") == "engines test rubric", doc.attrib)
    check((doc.get("tests"), doc.get("failures"), doc.get("errors")) == ("4", "0", "1"),
          f"junit counts {doc.attrib}")
    suites = {s.get("name"): s for s in doc.findall("testsuite")}
    check(list(suites) == ["perfect", "broken"], f"junit suites {list(suites)}")
    for name, suite in suites.items():
        cases = suite.findall("testcase")
        check([c.get("name") for c in cases] == ["scan-naive", "reduction-sequential"],
              f"{name}'s testcases")
        check(all(c.get("classname") == name for c in cases), f"{name}'s classnames")
        scan_error = cases[0].find("error")
        if name == "perfect":
            check(all(c.find("error") is None and c.find("failure") is None for c in cases),
                  f"perfect has a failure: {ET.tostring(suite).decode()}")
            check(cases[0].findtext("system-out") == f"passed: {SCAN_POINTS} / {SCAN_POINTS} points",
                  ET.tostring(cases[0]).decode())
        elif check(scan_error is not None, f"broken's scan-naive: {ET.tostring(suite).decode()}"):
            check(scan_error.get("type") == "error" and "Scan.cl" in scan_error.get("message"),
                  scan_error.attrib)
            check(cases[0].findtext("system-out") == f"error: 0 / {SCAN_POINTS} points",
                  ET.tostring(cases[0]).decode())
    for fmt in ("prairielearn", "gradescope"):
        two = subprocess.run([bench, "grade", "--sandbox", "none", "--format", fmt, "--output-dir",
                              os.path.join(tmp, "refused"), perfect, broken],
                             capture_output=True, text=True, timeout=120)
        check(two.returncode == 2 and f"--format {fmt}: 2 hand-ins given" in two.stderr,
              f"{fmt} of two hand-ins: {two.returncode} {two.stderr}")


def main():
    tmp = tempfile.mkdtemp(prefix="rsb-engines.")
    try:
        json.dump(RUBRIC, open(os.path.join(tmp, "rubric.json"), "w"))
        perfect, broken = os.path.join(tmp, "perfect"), os.path.join(tmp, "broken")
        for h in (perfect, broken):
            shutil.copytree(os.path.join(src, "kernels"), os.path.join(h, "kernels"))
        with open(os.path.join(broken, "kernels", "Scan.cl"), "a") as f:
            f.write("\nthis line is not OpenCL C\n")
        junit(tmp, perfect, broken)
        prairielearn(tmp, perfect, broken)
        github_classroom(tmp, perfect, broken)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
