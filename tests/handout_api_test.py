#!/usr/bin/env python3
"""A hand-in names its hand-out's task API, and the grader builds the previous release's:

   tests/handout_api_test.py BINARY SOURCE_DIR [KIT]

 (KIT: the hand-in kit to build against, as `grade --handin-kit`; ctest gives the tests' -O0 copy
 of the suite's.)

 1. The task sources of the earlier releases' hand-outs (tests/fixtures/handout-VERSION: each
    release's src/tasks/C*Task.{h,cpp} as its tree had them, solution regions and stubs included,
    and a HANDIN.txt naming its suite version and task API) of this tree's task API
    (common/engine/TaskApi.h) build against this tree, both as a student hands them in (the
    solutions written in: full points) and as they were handed out (the stubs): within a version
    the API only grows. Fixtures of another task API are not built (CHANGELOG.md).
 2. Host code that does not build, of a hand-in of another task API or of none: the item's
    detail is one line naming both versions and what to do, then the compiler's first message;
    the task's log is that line and the first message only, not every error. The same code in a
    hand-in of this grader's API: the compiler's errors, as ever.
 3. Through grading/gradescope/run_autograder, a handin.tar.gz's HANDIN.txt reaches the grader.
 4. scripts/make-handin writes the tree's suite version and task API into HANDIN.txt.
"""
import functools
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import checks
from checks import check

BINARY, SOURCE = sys.argv[1], sys.argv[2]
KIT = ["--handin-kit", sys.argv[3]] if len(sys.argv) > 3 else []
# One small case per task: what is checked here is the host build; the items' runs show that the
# built binaries run the variants.
RUBRIC = {"name": "task api", "items": [
    {"id": "reduction-sequential", "task": "reduction", "variant": "sequential", "points": 1,
     "cases": {"sizes": [1000]}},
    {"id": "scan-naive", "task": "scan", "variant": "naive", "points": 1,
     "cases": {"sizes": [1000]}},
    {"id": "convolution-basic-1d", "task": "convolution", "variant": "basic-1d", "points": 1,
     "cases": {"sizes": [1000]}}]}
# Two names no task API declares: a task source of another API that uses names this one lacks.
BROKEN = "\nnamespace rsb {\nint gone = NameOfAnotherTaskApi + OtherNameOfAnotherTaskApi;\n}\n"


def task_api(root):
    with open(os.path.join(root, "common", "engine", "TaskApi.h")) as f:
        return int(re.search(r"kTaskApiVersion = ([0-9]+);", f.read()).group(1))


def manifest(text):
    return dict(re.findall(r"^(suite version|task api): *(\S+)", text, re.M))


def releases():
    """(folder, suite version, task API) of every fixture, oldest first."""
    fixtures = os.path.join(SOURCE, "tests", "fixtures")
    found = []
    for name in os.listdir(fixtures):
        m = re.fullmatch(r"handout-([0-9.]+)", name)
        if m:
            with open(os.path.join(fixtures, name, "HANDIN.txt")) as f:
                fields = manifest(f.read())
            found.append((tuple(int(x) for x in m.group(1).split(".")),
                          os.path.join(fixtures, name), fields["suite version"],
                          int(fields["task api"])))
    return [r[1:] for r in sorted(found)]


def sources_of(root):
    """{src/tasks/...: text} of the task sources under root."""
    sources = {}
    for name in sorted(os.listdir(os.path.join(root, "src", "tasks"))):
        if re.fullmatch(r"C\w+Task\.(h|cpp)", name):
            with open(os.path.join(root, "src", "tasks", name)) as f:
                sources[f"src/tasks/{name}"] = f.read()
    return sources


@functools.lru_cache(maxsize=None)
def make_handout():
    """scripts/make-handout, as a module."""
    loader = importlib.machinery.SourceFileLoader(
        "make_handout", os.path.join(SOURCE, "scripts", "make-handout"))
    spec = importlib.util.spec_from_loader("make_handout", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def stubbed(text, path):
    """The hand-out's text of a solution tree's file (scripts/make-handout's own function)."""
    return make_handout().strip_regions(path, text)


def handin(root, name, sources, manifest_text, edit=None):
    """A hand-in: the suite's kernels, the given task sources (`edit` on each text; each .cpp with
    a student's comment on top, so that it differs from the suite's and is compiled; a header as
    given: where it is the tree's own, the grader compiles no file again that includes it) and
    HANDIN.txt (none where manifest_text is None)."""
    h = os.path.join(root, name)
    shutil.copytree(os.path.join(SOURCE, "kernels"), os.path.join(h, "kernels"))
    os.makedirs(os.path.join(h, "src", "tasks"))
    for rel, text in sources.items():
        text = edit(rel, text) if edit else text
        if rel.endswith(".cpp"):
            text = f"// {name}'s {rel}\n" + text
        with open(os.path.join(h, rel), "w") as f:
            f.write(text)
    if manifest_text is not None:
        with open(os.path.join(h, "HANDIN.txt"), "w") as f:
            f.write(manifest_text)
    return h




def grade(tmp, handins):
    rubric = os.path.join(tmp, "rubric.json")
    with open(rubric, "w") as f:
        json.dump(RUBRIC, f)
    out = os.path.join(tmp, "grades")
    run = subprocess.run([BINARY, "grade", "--rubric", rubric, "--output-dir", out, "--quiet",
                          "--sandbox", "none"] + KIT + checks.grade_args() + handins,
                         capture_output=True, text=True, timeout=1500)
    check(run.returncode == 0, f"grade -> {run.returncode}: {run.stderr[-3000:]}")
    reports = {}
    for h in handins:
        name = os.path.basename(h)
        try:
            with open(os.path.join(out, name + ".json")) as f:
                reports[name] = json.load(f)
        except (OSError, ValueError) as e:
            check(False, f"no report of {name}: {e}")
    return reports


def item(report, item_id):
    return next((i for i in report.get("items", []) if i["id"] == item_id), {})


def check_release(reports, version, current):
    """1: a release's task sources, solved and handed out."""
    for name in (f"solved-{version}", f"handed-out-{version}"):
        host = (reports.get(name, {}).get("host_code") or {}).get("tasks", {})
        for task in ("reduction", "scan", "convolution"):
            t = host.get(task, {})
            check(t.get("built") and t.get("compiled"),
                  f"the task sources of release {version} ({name}) do not build against this "
                  f"tree's task API {current}: {task}: {t.get('log')}")
    r = reports.get(f"solved-{version}", {"total": 0, "max": -1, "items": []})
    check(r["total"] == r["max"], f"release {version}'s solved task sources: {r['total']} of "
          f"{r['max']}: {[(i['id'], i['detail']) for i in r['items']]}")


def check_mismatch(reports, current):
    """2: the one line, then the first message; and the current API's errors as they were."""
    lines = {"newer": [f"task API {current + 1} (its HANDIN.txt)", "reduce-scan-bench 9.9",
                       f"builds task API {current}:", "grade it with reduce-scan-bench 9.9"],
             "unversioned": ["names no task API (it has no HANDIN.txt",
                             f"builds task API {current}:"],
             "old-manifest": ["names no task API (its HANDIN.txt, of git revision 1a2b3c4, has "
                              "none", f"builds task API {current}:"]}
    if current > 1:  # a hand-in of the last release of the task API before
        lines["older"] = [f"reduce-scan-bench 0.2, task API {current - 1} (its HANDIN.txt)",
                          f"builds task API {current}:", "grade it with reduce-scan-bench 0.2,"]
    for name, wanted in lines.items():
        r = reports.get(name, {})
        scan = (r.get("host_code") or {}).get("tasks", {}).get("scan", {})
        detail = item(r, "scan-naive").get("detail", "")
        first = detail.split("\n")[0]
        check(all(w in first for w in wanted) and "src/tasks/" in first and
              "where the rubric allows" in first,
              f"{name}: the detail's first line does not name the versions and what to do "
              f"({wanted}): {detail!r}")
        check(detail.split("\n")[1:2] and "error:" in detail.split("\n")[1] and
              "NameOfAnotherTaskApi" in detail.split("\n")[1],
              f"{name}: the compiler's first message is not the detail's second line: {detail!r}")
        log = scan.get("log", "")
        check(log.startswith(first[len("host code does not build: "):] + "\n") and
              log.count("error:") == 1 and scan.get("api_note"),
              f"{name}: the log is not the line and the first message only: {log!r}")
        check(r.get("host_code", {}).get("task_api") == current,
              f"{name}: host_code.task_api: {r.get('host_code')}")
    r = reports.get("current", {})
    detail = item(r, "scan-naive").get("detail", "")
    log = (r.get("host_code") or {}).get("tasks", {}).get("scan", {}).get("log", "")
    check(detail.startswith("host code does not build: src/tasks/CScanTask.cpp:") and
          "task API" not in detail and log.count("error:") >= 2,
          f"a hand-in of this task API: the compiler's errors: {detail!r}, log {log!r}")
    check(r.get("host_code", {}).get("handin_task_api") == current,
          f"current: host_code.handin_task_api: {r.get('host_code')}")


def through_run_autograder(tmp, sources, current):
    """3: an archive with HANDIN.txt, through run_autograder: the line reaches the student."""
    root = os.path.join(tmp, "autograder")
    os.makedirs(os.path.join(root, "submission"))
    packed = handin(tmp, "packed", sources, f"suite version: 9.9\ntask api: {current + 1}\n",
                    lambda rel, text: text + BROKEN if rel.endswith("CScanTask.cpp") else text)
    with tarfile.open(os.path.join(root, "submission", "handin.tar.gz"), "w:gz") as tar:
        for f in ("HANDIN.txt", "kernels/Scan.cl", "src/tasks/CScanTask.h",
                  "src/tasks/CScanTask.cpp"):
            tar.add(os.path.join(packed, f), arcname=f)
    rubric = os.path.join(tmp, "rubric.json")
    args = ["--rubric", rubric, "--items", "scan-naive"] + KIT + checks.grade_args()
    env = dict(os.environ, AUTOGRADER_ROOT=root, RSB_BINARY=BINARY,
               RSB_GRADE_ARGS=" ".join(f"'{a}'" for a in args))
    run = subprocess.run([os.path.join(SOURCE, "grading", "gradescope", "run_autograder")],
                         env=env, capture_output=True, text=True, timeout=900)
    try:
        with open(os.path.join(root, "results", "results.json")) as f:
            output = json.dumps(json.load(f))
    except (OSError, ValueError) as e:
        output = f"no results.json: {e}; {run.stdout[-2000:]} {run.stderr[-2000:]}"
    check(f"task API {current + 1} (its HANDIN.txt)" in output and
          "HANDIN.txt" not in output.replace("(its HANDIN.txt)", ""),
          f"run_autograder: the hand-in's HANDIN.txt did not reach the grader: {output[:3000]}")


def make_handin_names_the_api(tmp, current):
    """4: make-handin's HANDIN.txt names the tree's suite version and task API."""
    archive = os.path.join(tmp, "handin.tar.gz")
    run = subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "make-handin"),
                          archive], capture_output=True, text=True)
    check(run.returncode == 0, f"make-handin -> {run.returncode}: {run.stderr}")
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        version = re.search(r"project\(reduce-scan-bench VERSION ([0-9.]+)", f.read()).group(1)
    try:
        with tarfile.open(archive) as tar:
            fields = manifest(tar.extractfile("HANDIN.txt").read().decode())
    except (OSError, KeyError, tarfile.TarError) as e:
        fields = {"error": str(e)}
    check(fields == {"suite version": version, "task api": str(current)},
          f"make-handin's HANDIN.txt: {fields} (wanted suite version {version}, task api "
          f"{current})")


def main():
    tmp = tempfile.mkdtemp(prefix="rsb-handout-api.")
    try:
        current = task_api(SOURCE)
        class_dir = os.path.join(tmp, "class")
        handins, built = [], []
        for folder, version, api in releases():
            if api != current:
                print(f"note: release {version}'s fixture is of task API {api}, this tree's "
                      f"{current}: not built (CHANGELOG.md: delete it)")
                continue
            with open(os.path.join(folder, "HANDIN.txt")) as f:
                release_manifest = f.read()
            sources = sources_of(folder)
            handins += [handin(class_dir, f"solved-{version}", sources, release_manifest),
                        handin(class_dir, f"handed-out-{version}", sources, release_manifest,
                               lambda rel, text: stubbed(text, rel))]
            built.append(version)
        if not built:
            print(f"note: no fixture of task API {current} yet (a release adds one: CHANGELOG.md)")
        # Host code that uses names this task API lacks: the suite's own scan sources, broken.
        scan = {rel: text for rel, text in sources_of(SOURCE).items() if "CScanTask" in rel}
        broken = lambda rel, text: text + BROKEN if rel.endswith("CScanTask.cpp") else text
        handins += [
            handin(class_dir, "newer", scan, f"suite version: 9.9\ntask api: {current + 1}\n",
                   broken),
            handin(class_dir, "unversioned", scan, None, broken),
            handin(class_dir, "old-manifest", scan, "user: x\ngit revision: 1a2b3c4\n", broken),
            handin(class_dir, "current", scan, f"task api: {current}\n", broken)]
        if current > 1:
            handins.append(handin(class_dir, "older", scan,
                                  f"suite version: 0.2\ntask api: {current - 1}\n", broken))
        reports = grade(tmp, handins)
        for version in built:
            check_release(reports, version, current)
        check_mismatch(reports, current)
        through_run_autograder(tmp, scan, current)
        make_handin_names_the_api(tmp, current)
        print(f"task API {current}: release(s) {', '.join(built) or 'none'} checked")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
