#!/usr/bin/env python3
"""Copies that the suite generates stay what it generates: a variant is its kernel and its table
row, and the lists that name variants or rubric items follow from the code.

  python3 tests/generated_test.py BINARY [SOURCE_DIR] [--write]

Checked, each command run from SOURCE_DIR with `reduce-scan-bench` standing for BINARY:
  - every block of README.md between `<!-- generated: reduce-scan-bench --list-variants ... -->`
    and `<!-- end generated -->` is the command's output (the variant table);
  - FILES below: each file is its command's output (GitHub Classroom's tests, from the rubric).
Exit 1 with a line per copy that differs, naming the command that regenerates it; --write
rewrites them instead.
"""
import os
import re
import shlex
import subprocess
import sys

FILES = {
    "grading/github-classroom/autograding.json":
        "reduce-scan-bench grade autograding --rubric grading/rubric.json",
}
BLOCK = re.compile(r"(<!-- generated: (reduce-scan-bench --list-variants[^>]*?) -->\n)(.*?)"
                   r"(<!-- end generated -->)", re.S)


def output(binary, root, command):
    argv = shlex.split(command)
    run = subprocess.run([binary] + argv[1:], cwd=root, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"FAIL: `{command}` exited {run.returncode}: {run.stderr.strip()}")
    return run.stdout


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    write = "--write" in sys.argv[1:]
    binary = os.path.abspath(args[0])
    root = os.path.abspath(args[1] if len(args) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    shown = os.path.relpath(binary, root)
    problems, checked = [], 0
    readme = os.path.join(root, "README.md")
    text = open(readme, encoding="utf-8").read()
    for m in BLOCK.finditer(text):
        checked += 1
        if output(binary, root, m.group(2)) != m.group(3):
            problems.append(f"README.md: the block of `{m.group(2)}` differs from its output; "
                            f"regenerate: python3 tests/generated_test.py {shown} --write")
    if checked == 0:
        problems.append("README.md: no `<!-- generated: reduce-scan-bench --list-variants` block")
    elif write:
        fresh = BLOCK.sub(lambda m: m.group(1) + output(binary, root, m.group(2)) + m.group(4), text)
        open(readme, "w", encoding="utf-8").write(fresh)
    for path, command in FILES.items():
        want = output(binary, root, command)
        checked += 1
        if open(os.path.join(root, path), encoding="utf-8").read() != want:
            problems.append(f"{path}: differs from its command's output; regenerate: "
                            f"{command.replace('reduce-scan-bench', shown, 1)} > {path}")
            if write:
                open(os.path.join(root, path), "w", encoding="utf-8").write(want)
    for p in problems:
        print(("rewritten: " if write else "FAIL: ") + p)
    if problems and not write:
        return 1
    print(f"{checked} generated copies are what their commands print")
    return 0


if __name__ == "__main__":
    sys.exit(main())
