#!/usr/bin/env python3
"""Layering: includes in common/ and src/ point only to the same layer or a lower one.

  python3 tests/layering_test.py [SOURCE_DIR]

  python3 tests/layering_test.py SOURCE_DIR --targets BUILD_DIR/layers.json

The layers, lowest first (docs/ARCHITECTURE.md draws them):
  common/platform  OpenCL, errors, sizes, types, child processes, the device lock
  common/engine    launch plans, the task interface, the runner, results, workers, Oclgrind
  common/report    the output writers
  common/cli       the command line's options
  src/tasks        the tasks (the files a student edits) and their table
  src/run          the benchmark command: job expansion, case files, profiles, the check matrix
  src/tools        compare, ab, plot, report, tune and result files
  src/grade        the grading wing, `grade`: above the benchmark, which knows nothing of it
  src/main.cpp     the entry point
Every include of the suite's own headers names its layer folder ("engine/Runner.h"), so the
folder says the layer. Exit 1 with one line per include that points upwards or names no layer,
or where CMakeLists.txt's layers (its rsb_layer lines, one library each) are not these, in this
order. With --targets (the layers' libraries as the build configured them, written by
CMakeLists.txt): also where a layer's library links one above it, or the compiler, given a
layer's include folders, finds a header of a layer above it or misses one of its own, and
where a target other than WING_USERS links the wing, directly or through another target.
The wing's rule in words too: no file of common/ or src/ outside the wing names grading
(/grad/i), but for the lines of NAMES_GRADING, each with its reason.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# Each layer and its folder, lowest first.
FOLDERS = [("platform", "common/platform"), ("engine", "common/engine"),
           ("report", "common/report"), ("cli", "common/cli"), ("tasks", "src/tasks"),
           ("run", "src/run"), ("tools", "src/tools"), ("grade", "src/grade")]
LAYERS = [name for name, _ in FOLDERS] + ["main"]
# The wing: its library, its folder and the only targets that may link it.
WING, WING_FOLDER = "rsb-grade", "src/grade"
WING_USERS = {"rsb-main": "main.cpp, whose subcommand table dispatches `grade`",
              "reduce-scan-bench": "the binary", "GradeTests": "the grader's own tests"}
# Lines outside the wing that may name grading, each with its reason.
NAMES_GRADING = {
    ("src/main.cpp", '#include "grade/Grade.h"'): "the wing's entry point",
    ("src/main.cpp", '{"grade", Grade, GradeHelp()},'): "the subcommand table registers `grade`",
}
# Headers generated at build time (cmake/BuildInfo.cmake): below every layer.
GENERATED = {"GitRevision.h"}


def layer_of(rel):
    """The layer of a file given relative to the source tree (common/engine/Runner.h)."""
    if rel == "src/main.cpp":
        return "main"
    folder = os.path.dirname(rel)
    return next((name for name, f in FOLDERS if f == folder), None)


def layer_included(include):
    """The layer of an include as spelled ("grade/Rubric.h"), None where it names none."""
    folder = os.path.dirname(include)
    return next((name for name, f in FOLDERS if f.split("/", 1)[1] == folder), None)


def check_names(root):
    """No line of common/ or src/ outside the wing names grading but NAMES_GRADING's."""
    problems = []
    for top in ("common", "src"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            rel_dir = os.path.relpath(dirpath, root)
            if rel_dir == WING_FOLDER or rel_dir.startswith(WING_FOLDER + "/"):
                continue
            for name in sorted(n for n in names if n.endswith((".h", ".cpp"))):
                rel = os.path.join(rel_dir, name)
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        if re.search("grad", line, re.I) and \
                                (rel, line.strip()) not in NAMES_GRADING:
                            problems.append(f"{rel}:{number}: names grading outside the wing "
                                            f"({WING_FOLDER}): {line.strip()}")
    return problems


def check_wing_links(targets):
    """Only WING_USERS reach the wing through their links (layers.json's targets)."""
    links = {t["name"]: [l for l in t["links"] if l] for t in targets.get("targets", [])}
    def reaches(name, seen):
        for l in links.get(name, []):
            if l == WING or (l not in seen and (seen.add(l) or reaches(l, seen))):
                return True
        return False
    problems = [f"{name} links {WING}, the grading wing: only {', '.join(sorted(WING_USERS))} may"
                for name in sorted(links)
                if name != WING and name not in WING_USERS and reaches(name, set())]
    for need in ("GradeTests", "LogicTests", "reduce-scan-bench"):
        if need not in links:
            problems.append(f"layers.json lists no target {need}")
    return problems


def check_cmake(root):
    """CMakeLists.txt's layers (rsb_layer NAME FOLDER, lowest first) are FOLDERS."""
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        found = re.findall(r"^rsb_layer\((\S+) (\S+?)[ )]", f.read(), re.M)
    if found != FOLDERS:
        return [f"CMakeLists.txt: the layers' libraries are {found}, not, lowest first, {FOLDERS}"]
    return []


def check_targets(root, path):
    """The configured layers' libraries (layers.json): each links only layers below it, and its
    include folders hold its own headers and no header of a layer above it."""
    with open(path, encoding="utf-8") as f:
        targets = json.load(f)
    problems = []
    names = [t["name"] for t in targets["layers"]]
    if names != LAYERS[:-1]:
        return [f"{path}: the layers' libraries are {names}, not {LAYERS[:-1]}"]
    def header(layer):
        folder = os.path.join(root, dict(FOLDERS)[layer])
        first = sorted(n for n in os.listdir(folder) if n.endswith(".h"))[0]
        return os.path.relpath(os.path.join(folder, first), root).split("/", 1)[1]
    for i, t in enumerate(targets["layers"]):
        for link in t["links"]:
            if link.startswith("rsb-") and link[4:] in LAYERS and LAYERS.index(link[4:]) >= i:
                problems.append(f"rsb-{t['name']} links {link}, not a layer below it")
        # One compiler run for the layer where all is well; the header that is not, one run each.
        if preprocesses(targets["compiler"], t["includes"], [header(o) for o in LAYERS[:i + 1]],
                        [header(o) for o in LAYERS[i + 1:-1]]):
            continue
        for j, other in enumerate(LAYERS[:-1]):
            found = includes(targets["compiler"], t["includes"], header(other))
            if found != (j <= i):
                problems.append(f"rsb-{t['name']}'s include folders "
                                f"{'find' if found else 'miss'} \"{header(other)}\" ({other})")
    return problems + check_wing_links(targets)


def includes(compiler, folders, header):
    """Whether the compiler, given these include folders, preprocesses #include "header"."""
    return preprocesses(compiler, folders, [header], [])


def preprocesses(compiler, folders, found, missing):
    """Whether the compiler, given these include folders, preprocesses #include of each header of
    `found` and finds no header of `missing` (__has_include), in one run."""
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "probe.cpp")
        with open(source, "w", encoding="utf-8") as f:
            f.writelines(f'#include "{h}"\n' for h in found)
            f.writelines(f'#if __has_include("{h}")\n#error found\n#endif\n' for h in missing)
        command = [compiler, "-std=c++17", "-E", "-o", os.devnull, source]
        command += [f"-I{d}" for d in folders]
        return subprocess.run(command, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0


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
                    problems.append(f"{rel}: not in a layer folder "
                                    f"({', '.join(f for _, f in FOLDERS)})")
                    continue
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                        if not m or m.group(1) in GENERATED:
                            continue
                        target = layer_included(m.group(1))
                        if target is None:
                            problems.append(f"{rel}:{number}: #include \"{m.group(1)}\" names no "
                                            f"layer folder")
                        elif LAYERS.index(target) > LAYERS.index(mine):
                            problems.append(f"{rel}:{number}: #include \"{m.group(1)}\": {mine} "
                                            f"includes {target}, a higher layer")
    return problems


def main():
    args = sys.argv[1:]
    targets = None
    if "--targets" in args:
        targets = args[args.index("--targets") + 1]
        del args[args.index("--targets"):args.index("--targets") + 2]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    problems = check(root) + check_cmake(root) + check_names(root)
    if targets:
        problems += check_targets(root, targets)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) with the layering (tests/layering_test.py)")
        return 1
    print("layering holds: every include points to its own layer or a lower one, and nothing "
          "outside the grading wing names it" + (", and so do the layers' libraries, and only "
          "the binary and GradeTests link the wing" if targets else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
