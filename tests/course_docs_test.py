#!/usr/bin/env python3
"""The course's two pages and `grade --help` say the same (issue 44):

   tests/course_docs_test.py BINARY SOURCE_DIR

 - docs/STUDENT.md, the students' page, within 150 lines, with its sections: what you edit,
   check, Oclgrind, read a failure, hand in (naming scripts/make-handin and the handin target);
 - docs/COURSE.md, the instructor's page, links it and names scripts/make-handin;
 - `grade --help` lists every class file the grader writes (summary.csv, index.md,
   grading.json), says what --timeout is as COURSE.md does (the least time; 5 times the suite's
   own run) and claims for rusticl what COURSE.md measured (five to six times as fast compiling).
"""
import os
import re
import subprocess
import sys

BINARY, SOURCE = sys.argv[1], sys.argv[2]


def read(rel):
    with open(os.path.join(SOURCE, rel), encoding="utf-8") as f:
        return f.read()


def flat(text):
    return re.sub(r"\s+", " ", text)


def main():
    fails = []
    student, course = read("docs/STUDENT.md"), read("docs/COURSE.md")
    lines = student.count("\n")
    if lines > 150:
        fails.append(f"docs/STUDENT.md has {lines} lines (at most 150)")
    for heading in ("## What you edit", "## Check", "## Oclgrind", "## Read a failure",
                    "## Hand in"):
        if heading not in student:
            fails.append(f"docs/STUDENT.md lacks the section '{heading}'")
    for text, what in ((student, "docs/STUDENT.md"), (course, "docs/COURSE.md")):
        if "scripts/make-handin" not in text:
            fails.append(f"{what} does not name scripts/make-handin")
    if "--target handin" not in student:
        fails.append("docs/STUDENT.md does not name the handin target")
    if "(STUDENT.md)" not in course:
        fails.append("docs/COURSE.md does not link STUDENT.md")
    run = subprocess.run([BINARY, "grade", "--help"], capture_output=True, text=True)
    help_text = flat(run.stdout)
    if run.returncode != 0:
        fails.append(f"grade --help -> {run.returncode}: {run.stderr}")
    for name in ("summary.csv", "index.md", "grading.json"):
        if name not in help_text:
            fails.append(f"grade --help does not list {name}")
    timeout = re.search(r"--timeout \S+\s+(.*?)(?= --[a-z])", help_text)
    timeout = timeout.group(1) if timeout else ""
    course_flat = flat(course)
    for words in ("least", "5 times the suite's own run"):
        if words not in timeout or words not in course_flat:
            fails.append(f"--timeout: '{words}' not in both grade --help ('{timeout}') and "
                         "docs/COURSE.md")
    rusticl_help = re.findall(r"(\w+ to \w+ times as fast|\w+ times as fast|twice as fast)",
                              help_text)
    rusticl_doc = re.findall(r"compiles (\w+ to \w+ times as fast)", course_flat)
    if not rusticl_doc or rusticl_help != rusticl_doc[:1]:
        fails.append(f"rusticl's speed: grade --help says {rusticl_help}, docs/COURSE.md "
                     f"{rusticl_doc}")
    for f in fails:
        print(f"FAIL: {f}")
    if not fails:
        print(f"docs/STUDENT.md ({lines} lines), docs/COURSE.md and grade --help agree")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
