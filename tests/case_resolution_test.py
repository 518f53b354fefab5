#!/usr/bin/env python3
"""One case, resolved in one place: outside ResolveCase (common/engine/Case.cpp), no code in
common/ or src/ works out a case's local size, tile or plan itself:

  python3 tests/case_resolution_test.py [SOURCE_DIR]

Each rule is a call and the files that may make it: ResolveCase; the task interface that
declares it (IComputeTask.h); PlannedTask, which defines the rules (the automatic local size
halves until the tile fits; PlanFor makes the plan from Plan); and the tasks (src/tasks), whose
plan functions read their own tile. A local size and the knobs it settles are resolved in one
place: ResolveCase is the only caller of LocalSize and Tuning (a declaration is no call).
Comments do not count.

Exit 1, naming each file:line, where any other file makes one of these calls.
"""
import fnmatch
import os
import re
import sys

RESOLVER = "common/engine/Case.cpp"
RULE_FILES = ["common/engine/IComputeTask.h", "common/engine/PlannedTask.h",
              "common/engine/PlannedTask.cpp"]
# what: (call, where it may be made)
RULES = {
    # not a declaration or definition: `size_t LocalSize(`
    "the local size": (r"(?<!size_t )\bLocalSize\s*\(", [RESOLVER]),
    "the tile": (r"\bTile\s*\(", RULE_FILES + ["src/tasks/*"]),
    "the plan": (r"\bPlanFor\s*\(|(?<![\w:.>])Plan\s*\(", [RESOLVER] + RULE_FILES + ["src/tasks/*"]),
    "the tile's knobs": (r"(\.|->)\s*Tuning\s*\(", [RESOLVER]),
    "the plan's cost or options":
        (r"(\.|->)\s*(Cost|KernelOptions)\s*\(\s*[^)\s]", [RESOLVER]),
}
SEARCHED = ["common", "src"]


def code_of(text):
    """The text without comments and string literals, line for line."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    lines = []
    for line in text.splitlines():
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        lines.append(re.sub(r"//.*", "", line))
    return lines


def sources(root):
    for top in SEARCHED:
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            for n in sorted(names):
                if n.endswith((".h", ".cpp")):
                    path = os.path.join(d, n)
                    yield os.path.relpath(path, root).replace(os.sep, "/"), path


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    if not os.path.isfile(os.path.join(root, "common", "engine", "PlannedTask.h")):
        print(f"no common/engine/PlannedTask.h under {root}")
        return 1
    found = []
    for rel, path in sources(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines, raw = code_of(text), text.splitlines()
        for what, (call, allowed) in RULES.items():
            if any(fnmatch.fnmatch(rel, a) for a in allowed):
                continue
            for number, line in enumerate(lines, 1):
                if re.search(call, line):
                    found.append(f"{rel}:{number}: resolves {what} itself: {raw[number - 1].strip()}")
    if not os.path.isfile(os.path.join(root, RESOLVER)):
        found.append(f"{RESOLVER}: missing (ResolveCase, the one place a case is resolved)")
    for f in found:
        print(f)
    if found:
        print(f"{len(found)} call(s) outside ResolveCase ({RESOLVER}): take the case it resolves")
        return 1
    print("every case is resolved by ResolveCase")
    return 0


if __name__ == "__main__":
    sys.exit(main())
