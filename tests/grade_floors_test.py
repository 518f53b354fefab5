#!/usr/bin/env python3
"""Grade floors: the grader (src/grade) stays a few floors high, and in its order.

  python3 tests/grade_floors_test.py [SOURCE_DIR]

A module is a header and its .cpp (Runs.h, Runs.cpp). Its floor is 1 + the highest floor of the
grader's modules whose headers either of its files includes ("grade/X.h"); a module that
includes none is on floor 1. A .cpp counts: an include there ties the module to what it names
as much as one in the header does (Options.cpp including Class.h put options above the class
summary). The grader's height is its highest floor; it must be at most MAX_FLOORS.

Besides the height, the order (ORDER): each pair (low, high) says that low never reaches high
through includes, and that high is on a higher floor: options are parsed below the reports and
the class summary, which sit above the scoring whose grades they write; the options as parsed
(GradeOptions) below their parsing; the device's turns below the grading run's state (Context);
where a hand-in's files are (HandinFiles) below the host build that compiles them.

Prints every module's floor and its longest chain; exit 1 with a line per problem (a cycle, a
grader too high, a pair out of order).
"""
import os
import re
import sys

GRADE = os.path.join("src", "grade")
MAX_FLOORS = 5
ORDER = [("Options", "Class"), ("GradeOptions", "Options"), ("Turns", "Context"),
         ("HandinFiles", "HostBuild")]


def modules(root):
    """{module: set of grader modules its header and source include}."""
    deps = {}
    folder = os.path.join(root, GRADE)
    for name in sorted(os.listdir(folder)):
        stem, ext = os.path.splitext(name)
        if ext not in (".h", ".cpp"):
            continue
        mine = deps.setdefault(stem, set())
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                m = re.match(r'\s*#\s*include\s+"grade/([^"/]+)\.h"', line)
                if m and m.group(1) != stem:
                    mine.add(m.group(1))
    return deps


def floors(deps):
    """{module: (floor, longest chain from it down)}; raises ValueError on a cycle."""
    done, busy = {}, set()

    def visit(m):
        if m in done:
            return done[m]
        if m in busy:
            raise ValueError(f"include cycle through {m}")
        busy.add(m)
        below = [visit(d) for d in sorted(deps.get(m, ())) if d in deps]
        best = max(below, key=lambda fc: fc[0], default=(0, []))
        busy.discard(m)
        done[m] = (best[0] + 1, [m] + best[1])
        return done[m]

    for m in deps:
        visit(m)
    return done


def reaches(deps, start, goal):
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m == goal:
            return True
        if m not in seen:
            seen.add(m)
            todo.extend(deps.get(m, ()))
    return False


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    deps = modules(root)
    try:
        fl = floors(deps)
    except ValueError as e:
        print(f"{GRADE}: {e}")
        return 1
    for m, (floor, chain) in sorted(fl.items(), key=lambda kv: (kv[1][0], kv[0])):
        print(f"floor {floor}: {m}" + (f"  ({' -> '.join(chain)})" if floor > 1 else ""))
    height = max(f for f, _ in fl.values())
    problems = []
    if height > MAX_FLOORS:
        top = max(fl.values(), key=lambda fc: fc[0])[1]
        problems.append(f"{GRADE} is {height} floors high ({' -> '.join(top)}); at most "
                        f"{MAX_FLOORS} (tests/grade_floors_test.py)")
    for low, high in ORDER:
        if low not in fl or high not in fl:
            problems.append(f"{low} or {high}: no such module in {GRADE}")
        elif reaches(deps, low, high):
            problems.append(f"{low} reaches {high} through its includes; {high} must sit above it")
        elif fl[high][0] <= fl[low][0]:
            problems.append(f"{high} (floor {fl[high][0]}) must sit above {low} "
                            f"(floor {fl[low][0]})")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{GRADE}: {len(fl)} modules on {height} floors (at most {MAX_FLOORS})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
