#!/usr/bin/env python3
"""One truth about a hand-in's contents (issue 44):

   tests/kernels_only_test.py BINARY SOURCE_DIR

 1. Through grading/gradescope/run_autograder, with the shipped rubric (two of its items, one
    per task, to stay quick): an upload of only the two edited kernel files, loose, gets full
    points; the unchanged headers it lacks are the hand-out's and the task sources the suite's,
    and the output says so.
 2. `grade` itself finds a hand-in's files by name where the student put them: under an extra top
    folder (full points, the report saying where each was found, and, of task sources that are
    the suite's own, that nothing was built); the files a rubric requires
    are the student's own: a required header that is taken from the hand-out still costs the
    items ("the hand-in lacks ...").
 3. The shipped rubric requires only what docs/COURSE.md says a hand-in must hold: the kernels.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import checks

BINARY, SOURCE = sys.argv[1], sys.argv[2]
fails = []


def check(ok, what):
    if not ok:
        fails.append(what)
        print(f"FAIL: {what}")


def selectors():
    return checks.grade_args()


def kernels_only_through_gradescope(tmp):
    root = os.path.join(tmp, "autograder")
    os.makedirs(os.path.join(root, "source", "grading"))
    shutil.copy(os.path.join(SOURCE, "grading", "rubric.json"),
                os.path.join(root, "source", "grading", "rubric.json"))
    os.makedirs(os.path.join(root, "submission"))
    for f in ("Reduction.cl", "Scan.cl"):
        shutil.copy(os.path.join(SOURCE, "kernels", f), os.path.join(root, "submission", f))
    env = dict(os.environ, AUTOGRADER_ROOT=root, RSB_BINARY=BINARY,
               RSB_GRADE_ARGS=" ".join(["--items", "reduction-decomposition,scan-naive"] +
                                       [f"'{s}'" for s in selectors()]))
    run = subprocess.run([os.path.join(SOURCE, "grading", "gradescope", "run_autograder")],
                         env=env, capture_output=True, text=True, timeout=900)
    check(run.returncode == 0, f"run_autograder -> {run.returncode}: {run.stderr[-2000:]}")
    try:
        with open(os.path.join(root, "results", "results.json")) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        check(False, f"no results.json: {e}; {run.stdout[-2000:]}")
        return
    max_score = sum(t.get("max_score", 0) for t in r.get("tests", []))
    check(max_score == 4 and r.get("score") == max_score,
          f"kernels-only upload: score {r.get('score')} of {max_score} (wanted 4 of 4): "
          f"{json.dumps(r)[:3000]}")
    out = r.get("output", "")
    check("kernels/WorkGroup.clh (the hand-out's: not in the hand-in)" in out,
          f"the output does not say the header was the hand-out's: {out}")
    check("kernels/Reduction.cl (found at" not in out, "a laid-out file said to be moved: " + out)


def grade(tmp, rubric, handins, out):
    command = [BINARY, "grade", "--rubric", rubric, "--output-dir", out, "--quiet"] + \
        selectors() + handins
    run = subprocess.run(command, capture_output=True, text=True, timeout=900)
    check(run.returncode == 0, f"grade -> {run.returncode}: {run.stderr[-2000:]}")


def found_by_name_and_required_files(tmp):
    rubric = os.path.join(tmp, "rubric.json")
    with open(rubric, "w") as f:
        json.dump({"name": "found by name", "required_files": ["kernels/Reduction.cl",
                                                             "kernels/Common.clh"],
                   "items": [{"id": "seq", "task": "reduction", "variant": "sequential",
                              "points": 1, "cases": [{"sizes": [1000], "local_size": 16}]}]}, f)
    nested = os.path.join(tmp, "class", "nested", "nested-handin", "kernels")
    shutil.copytree(os.path.join(SOURCE, "kernels"), nested)
    # The suite's own reduction sources, under the extra folder too: found, nothing to build.
    for f in ("CReductionTask.h", "CReductionTask.cpp"):
        shutil.copy(os.path.join(SOURCE, "src", "tasks", f), os.path.dirname(nested))
    flat = os.path.join(tmp, "class", "flat")
    os.makedirs(flat)
    shutil.copy(os.path.join(SOURCE, "kernels", "Reduction.cl"), flat)
    out = os.path.join(tmp, "grades")
    grade(tmp, rubric, [os.path.dirname(os.path.dirname(nested)), flat], out)
    try:
        with open(os.path.join(out, "nested.json")) as f:
            nested_r = json.load(f)
        with open(os.path.join(out, "flat.json")) as f:
            flat_r = json.load(f)
        with open(os.path.join(out, "nested.md")) as f:
            nested_md = f.read()
    except (OSError, ValueError) as e:
        check(False, f"no reports: {e}")
        return
    check(nested_r["total"] == 1, f"a hand-in under an extra top folder: {nested_r['items']}")
    check(nested_r.get("files_from", {}).get("kernels/Reduction.cl") ==
          "nested-handin/kernels/Reduction.cl", f"files_from: {nested_r.get('files_from')}")
    check("kernels/Reduction.cl (found at nested-handin/kernels/Reduction.cl)" in nested_md,
          "nested.md does not say where Reduction.cl was found")
    host = (nested_r.get("host_code") or {}).get("tasks", {}).get("reduction", {})
    check(host.get("built") and host.get("compiled") == [] and
          nested_r.get("files_from", {}).get("src/tasks/CReductionTask.cpp") ==
          "nested-handin/CReductionTask.cpp", f"the nested task sources: {nested_r.get('host_code')}, "
          f"{nested_r.get('files_from')}")
    # Nothing was built: the report says so, not "built ... in 0.0 s".
    check("nothing to build" in nested_md and "built against" not in nested_md,
          "nested.md on host code that built nothing: " +
          next((l for l in nested_md.splitlines() if l.startswith("Host code")), "(no line)"))
    detail = flat_r["items"][0].get("detail", "")
    check(flat_r["total"] == 0 and "lacks kernels/Common.clh" in detail,
          f"a required header taken from the hand-out: {flat_r['total']} points, '{detail}'")
    check(flat_r.get("files_from", {}).get("kernels/Common.clh") == "the hand-out",
          f"flat files_from: {flat_r.get('files_from')}")


def shipped_rubric_requires_the_kernels():
    with open(os.path.join(SOURCE, "grading", "rubric.json")) as f:
        required = json.load(f).get("required_files", [])
    check(required == ["kernels/Reduction.cl", "kernels/Scan.cl"],
          f"the shipped rubric requires {required} (docs/COURSE.md: the kernels; task sources "
          "optional)")


def main():
    # The shipped rubric's items have Oclgrind gates and grade sandboxes with bwrap by default:
    # a machine without them (the GPU machines) cannot grade as a course does.
    missing = [t for t in ("oclgrind", "bwrap") if not shutil.which(t)]
    if missing:
        print(f"SKIPPED: no {' or '.join(missing)} on PATH (scripts/install-deps.sh --tests)")
        return 77
    tmp = tempfile.mkdtemp(prefix="rsb-kernels-only.")
    try:
        shipped_rubric_requires_the_kernels()
        found_by_name_and_required_files(tmp)
        kernels_only_through_gradescope(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
