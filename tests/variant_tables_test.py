#!/usr/bin/env python3
"""A variant is a kernel and a table row, everywhere: what lists variants outside the task tables
follows them (the plot's order needs no check: `plot` passes it from the tables).

  python3 tests/variant_tables_test.py BINARY [SOURCE_DIR]

The task tables speak through `BINARY --list-variants` (task, variant, description, in table
order). Checked against them:
  README.md            its variant table: one row per variant, in the same order, same words;
  grading/rubric.json  every item's task and variant is a row of the tables.
Exit 1 with one line per drift, naming the file and what to change.
"""
import json
import os
import re
import subprocess
import sys


def table(binary):
    out = subprocess.run([binary, "--list-variants"], capture_output=True, text=True, check=True)
    rows = []
    for line in out.stdout.splitlines():
        task, variant, description = line.split(None, 2)
        rows.append((task, variant, description))
    return rows


def readme_rows(root):
    rows = []
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\|\s*(\w+)\s*\|\s*`([\w-]+)`\s*\|\s*(.*?)\s*\|\s*$", line)
            if m:
                rows.append(m.groups())
    return rows


def main():
    binary = sys.argv[1]
    root = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                           os.path.join(os.path.dirname(__file__), ".."))
    rows = table(binary)
    problems = []
    readme = readme_rows(root)
    if [tuple(r) for r in readme] != rows:
        want = "\n".join(f"| {t} | `{v}` | {d} |" for t, v, d in rows)
        problems.append(f"README.md: the variant table differs from --list-variants; it should "
                        f"read (after its header):\n{want}")
    known = {(t, v) for t, v, _ in rows}
    rubric = json.load(open(os.path.join(root, "grading", "rubric.json"), encoding="utf-8"))
    for item in rubric.get("items", []):
        if (item.get("task"), item.get("variant")) not in known:
            problems.append(f"grading/rubric.json: item {item.get('id')} grades "
                            f"{item.get('task')}/{item.get('variant')}, which no task table has")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(rows)} variants: README.md's table and grading/rubric.json's "
          f"{len(rubric.get('items', []))} items follow the task tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
