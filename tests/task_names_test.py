#!/usr/bin/env python3
"""Task names: a task is its own files. For each task (src/tasks/C<Name>Task.cpp), counts the
files outside its own that name it in code, which a new task would have to edit likewise:

  python3 tests/task_names_test.py [SOURCE_DIR]

Searched: common/, src/, cmake/, CMakeLists.txt, scripts/. A task's own files: its sources
(src/tasks/C<Name>Task.{h,cpp}), its kernel file (kernels/<Name>.cl) and the registry
(src/tasks/Tasks.cpp: one line a task). Its rubric items, README row and tests are outside the
searched folders. A name in code: the class C<Name>Task, the file <Name>.cl, the task's name as a
string literal ("scan"), and identifiers of an axis that only that task has (EXTRA below).
Comments do not count: an example in a comment needs no edit for a new task.

Exit 1 where a task is named in more files than ALLOWED (0 unless said there, with the reason).
"""
import glob
import os
import re
import sys

# Identifiers of what only one task has, which belongs in its parameters (the scan's kind: its
# parameter scan-kind, recorded in the field scan_kind), not in the engine.
EXTRA = {"scan": [r"\bScanKind\b", r"\bscanKind\b", r"\bscan_kind\b"]}
ALLOWED = {}

SEARCHED = ["common", "src", "cmake", "scripts"]


def code_of(path, text):
    """The text without comments (// and /* */ in C++, # in CMake, Python and shell)."""
    if path.endswith((".h", ".cpp", ".clh", ".cl")):
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())
    return "\n".join(re.sub(r"(^|\s)#.*", "", line) for line in text.splitlines())


def files(root):
    out = [os.path.join(root, "CMakeLists.txt")]
    for top in SEARCHED:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            out += [os.path.join(d, n) for n in sorted(names)]
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    tasks = sorted(os.path.basename(p)[1:-len("Task.cpp")]
                   for p in glob.glob(os.path.join(root, "src", "tasks", "C*Task.cpp")))
    if not tasks:
        print(f"no src/tasks/C*Task.cpp under {root}")
        return 1
    texts = {}
    for path in files(root):
        try:
            with open(path, encoding="utf-8") as f:
                texts[os.path.relpath(path, root)] = code_of(path, f.read())
        except (UnicodeDecodeError, IsADirectoryError):
            continue
    problems = 0
    for name in tasks:
        lower = name.lower()
        own = {f"src/tasks/C{name}Task.h", f"src/tasks/C{name}Task.cpp", "src/tasks/Tasks.cpp"}
        pattern = re.compile("|".join([rf"\bC{name}Task\b", rf"\b{name}\.cl\b",
                                       rf"[\"']{lower}[\"']"] + EXTRA.get(lower, [])))
        naming = sorted(p for p, t in texts.items() if p not in own and pattern.search(t))
        allowed = ALLOWED.get(lower, 0)
        print(f"{lower}: named in {len(naming)} file(s) outside its own (allowed {allowed})")
        for p in naming:
            print(f"  {p}")
        if len(naming) > allowed:
            problems += 1
            print(f"FAIL: {lower} is named in {len(naming)} files outside its own, more than "
                  f"{allowed}: a new task would have to edit as many")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
