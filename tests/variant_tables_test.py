#!/usr/bin/env python3
"""A variant is a kernel and a table row, everywhere: the rubric grades only variants the task
tables have (the README's table is generated from them: tests/generated_test.py; the plot's order
needs no check: `plot` passes it from the tables).

  python3 tests/variant_tables_test.py BINARY [SOURCE_DIR]

The task tables speak through `BINARY --list-variants --format json`. Checked against them:
  grading/rubric.json  every item's task and variant is a row of the tables.
Exit 1 with one line per drift, naming the file and what to change.
"""
import json
import os
import subprocess
import sys


def table(binary):
    out = subprocess.run([binary, "--list-variants", "--format", "json"], capture_output=True,
                         text=True, check=True)
    return [(v["task"], v["variant"]) for v in json.loads(out.stdout)["variants"]]


def main():
    binary = sys.argv[1]
    root = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                           os.path.join(os.path.dirname(__file__), ".."))
    known = set(table(binary))
    problems = []
    rubric = json.load(open(os.path.join(root, "grading", "rubric.json"), encoding="utf-8"))
    for item in rubric.get("items", []):
        if (item.get("task"), item.get("variant")) not in known:
            problems.append(f"grading/rubric.json: item {item.get('id')} grades "
                            f"{item.get('task')}/{item.get('variant')}, which no task table has")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(known)} variants: grading/rubric.json's {len(rubric.get('items', []))} items "
          f"grade variants of the task tables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
