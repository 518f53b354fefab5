#!/usr/bin/env python3
"""Layering: includes in common/ and src/ point only to the same layer or a lower one.

  python3 tests/layering_test.py [SOURCE_DIR]

The layers, lowest first (docs/ARCHITECTURE.md draws them):
  common/platform  OpenCL, errors, sizes, types, child processes, the device lock
  common/engine    launch plans, the task interface, the runner, results, workers, Oclgrind
  common/report    the output writers
  common/cli       the command line's options
  src/tasks        the tasks (the files a student edits) and their table
  src/run          the benchmark command: job expansion, case files, profiles, the check matrix
  src/tools        grade, compare, plot, tune and result files
  src/main.cpp     the entry point
Every include of the suite's own headers names its layer folder ("engine/Runner.h"), so the
folder says the layer. Exit 1 with one line per include that points upwards or names no layer.
"""
import os
import re
import sys

LAYERS = ["platform", "engine", "report", "cli", "tasks", "run", "tools", "main"]
# Headers generated at build time (cmake/BuildInfo.cmake): below every layer.
GENERATED = {"GitRevision.h"}


def layer_of(rel):
    """The layer of a file given relative to the source tree (common/engine/Runner.h)."""
    parts = rel.split("/")
    if parts == ["src", "main.cpp"]:
        return "main"
    if len(parts) >= 3 and parts[0] in ("common", "src") and parts[1] in LAYERS:
        return parts[1]
    return None


def check(root):
    problems = []
    for top in ("common", "src"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                mine = layer_of(rel)
                if mine is None:
                    problems.append(f"{rel}: not in a layer folder ({', '.join(LAYERS[:-1])})")
                    continue
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if not m or m.group(1) in GENERATED:
                            continue
                        target = m.group(1).split("/")[0]
                        if target not in LAYERS[:-1]:
                            problems.append(f"{rel}:{number}: #include \"{m.group(1)}\" names no "
                                            f"layer folder")
                        elif LAYERS.index(target) > LAYERS.index(mine):
                            problems.append(f"{rel}:{number}: #include \"{m.group(1)}\": {mine} "
                                            f"includes {target}, a higher layer")
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the layering (tests/layering_test.py)")
        return 1
    print("layering holds: every include points to its own layer or a lower one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
