#!/usr/bin/env python3
"""bench/make-class: its refusals (exit 2, one line, nothing written), a small class (the folders,
kernel files that no two hand-ins share, the two kinds, class.json), the same class again for the
same seed, --from-handout giving the same files, and --check on reports as the grader writes
them. No device, no build: a few seconds.

usage: make_class_test.py SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def files_of(folder):
    out = {}
    for d, _, names in os.walk(folder):
        for n in names:
            path = os.path.join(d, n)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = f.read()
    return out


def refusals(script, tmp):
    taken = os.path.join(tmp, "taken")
    os.makedirs(taken)
    open(os.path.join(taken, "x"), "w").close()
    fresh = os.path.join(tmp, "fresh")
    for args, want in [(["0"], "N '0'"), (["many"], "N 'many'"),
                       (["3", "--defects", "scan-race,nope"], "unknown defect 'nope'"),
                       (["3", "--defects", ""], "unknown defect ''"),
                       (["3", "--defect-share", "1.5"], "--defect-share '1.5'"),
                       (["3", "--host-share", "x"], "--host-share 'x'"),
                       (["3", "--seed", "1.5"], "--seed '1.5'"),
                       (["3", "--bogus"], "--bogus"), ([], "N: missing"),
                       (["3", "--check", tmp], "N '3': not allowed with --check")]:
        r = subprocess.run([sys.executable, script, fresh] + args, capture_output=True, text=True)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and want in r.stderr,
              f"make-class {' '.join(args)}: exit {r.returncode}, {r.stderr!r} (wanted 2, "
              f"one line with {want!r})")
        check(not os.path.exists(fresh), f"make-class {' '.join(args)} wrote {fresh}")
    under_file = os.path.join(taken, "x", "class")  # OUT below a regular file: no traceback
    r = subprocess.run([sys.executable, script, under_file, "3"], capture_output=True, text=True)
    check(r.returncode == 2 and "is not a folder" in r.stderr and r.stderr.count("\n") == 1,
          f"OUT under a file: exit {r.returncode}, {r.stderr!r}")
    r = subprocess.run([sys.executable, script, taken, "3"], capture_output=True, text=True)
    check(r.returncode == 2 and "is not an empty folder" in r.stderr and
          r.stderr.count("\n") == 1, f"OUT not empty: exit {r.returncode}, {r.stderr!r}")


def missing_anchor(src, tmp):
    """A tree whose Scan.cl lacks the down-sweep barrier: exit 2 naming the defect."""
    tree = os.path.join(tmp, "tree")
    for rel in ["bench/make-class", "scripts/make-handin", "grading/rubric.json"]:
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        shutil.copy(os.path.join(src, rel), os.path.join(tree, rel))
    shutil.copytree(os.path.join(src, "kernels"), os.path.join(tree, "kernels"))
    shutil.copytree(os.path.join(src, "src"), os.path.join(tree, "src"))
    scan = os.path.join(tree, "kernels", "Scan.cl")
    with open(scan) as f:
        text = f.read()
    with open(scan, "w") as f:
        f.write(text.replace("    barrier(CLK_LOCAL_MEM_FENCE);\n    if (lid < active) {",
                             "    if (lid < active) {"))
    out = os.path.join(tmp, "anchorless")
    r = subprocess.run([sys.executable, os.path.join(tree, "bench", "make-class"), out, "2"],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "defect scan-race (kernels/Scan.cl)" in r.stderr and
          "occurs 0 times" in r.stderr and r.stderr.count("\n") == 1,
          f"missing anchor: exit {r.returncode}, {r.stderr!r}")
    check(not os.path.exists(out), "missing anchor: OUT written")


def small_class(src, script, tmp):
    out = os.path.join(tmp, "class")
    args = ["6", "--seed", "5", "--host-share", "0.34", "--defect-share", "0.5"]
    r = subprocess.run([sys.executable, script, out] + args, capture_output=True, text=True)
    check(r.returncode == 0, f"make-class {' '.join(args)}: exit {r.returncode}, {r.stderr}")
    if r.returncode != 0:
        return None
    check(r.stdout.count("\n") == 1 and "wrote 6 hand-ins" in r.stdout and
          "4 kernel-only, 2 host-code" in r.stdout, f"summary: {r.stdout!r}")
    names = sorted(os.listdir(out))
    check(names == ["class.json", "s001", "s002", "s003", "s004", "s005", "s006"],
          f"OUT holds {names}")
    with open(os.path.join(out, "class.json")) as f:
        cls = json.load(f)
    handins = {h["name"]: h for h in cls.get("handins", [])}
    check(sorted(handins) == names[1:], f"class.json hand-ins: {sorted(handins)}")
    tree = files_of(os.path.join(src, "kernels"))
    per = {n: files_of(os.path.join(out, n)) for n in names[1:]}
    for rel in tree:  # every kernel file, in every hand-in, differs from every other's
        texts = {per[n].get("kernels/" + rel) for n in per}
        check(len(texts) == len(per), f"kernels/{rel}: {len(texts)} distinct texts in 6 hand-ins")
    kinds = {"kernel-only": 0, "host-code": 0}
    defects = 0
    for n, h in handins.items():
        for key in ["kind", "defect", "host_edit", "loses", "expected_total", "caught_by"]:
            check(key in h, f"{n}: class.json lacks {key}")
        kinds[h.get("kind")] = kinds.get(h.get("kind"), 0) + 1
        same = all(per[n]["src/tasks/" + f] == open(os.path.join(src, "src", "tasks", f), "rb").read()
                   for f in ["CScanTask.cpp", "CReductionTask.cpp", "CScanTask.h"])
        check(same == (h.get("kind") == "kernel-only"),
              f"{n}: {h.get('kind')} but its task sources are "
              f"{'' if same else 'not '}the tree's")
        d = h.get("defect")
        if d:
            defects += 1
            info = cls["defects"][d]
            check(h["loses"] == info["loses"] and h["loses"], f"{n}: {d} loses {h['loses']}")
            with open(os.path.join(src, info["file"]), "rb") as f:
                base = f.read()
            body = per[n][info["file"]].split(b"\n", 1)[1]
            check(body != base and (info["kind"] == "host") == (h["kind"] == "host-code"),
                  f"{n}: {d} not applied to {info['file']} of a {h['kind']} hand-in")
        else:
            check(h["loses"] == [] and h["expected_total"] == cls["rubric_max"],
                  f"{n}: no defect, yet loses {h['loses']}")
    check(kinds == {"kernel-only": 4, "host-code": 2}, f"kinds: {kinds}")
    check(defects == 3, f"{defects} defects (wanted round(6 * 0.5) = 3)")
    check(cls.get("rubric_items") and "scan-naive" in cls["rubric_items"],
          f"class.json rubric_items: {cls.get('rubric_items')}")
    return out, args


def same_again(script, tmp, first, args, extra):
    out = os.path.join(tmp, "again" + "".join(extra))
    r = subprocess.run([sys.executable, script, out] + args + extra, capture_output=True,
                       text=True)
    check(r.returncode == 0, f"make-class {' '.join(args + extra)}: exit {r.returncode}, "
          f"{r.stderr}")
    a, b = files_of(first), files_of(out)
    a = {k: v for k, v in a.items() if k != "class.json"}
    b = {k: v for k, v in b.items() if k != "class.json" and not k.endswith("HANDIN.txt")}
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    check(not differ, f"{' '.join(extra) or 'the same seed'}: files differ: {differ[:5]}")


def check_mode(script, tmp, out):
    """--check against reports written as the grader writes them: as predicted, then one not."""
    with open(os.path.join(out, "class.json")) as f:
        cls = json.load(f)
    grades = os.path.join(tmp, "grades")
    os.makedirs(grades)

    def write(h, extra_loss):
        items = [{"id": i, "status": "failed" if i in h["loses"] + extra_loss else "passed",
                  "points": 0 if i in h["loses"] + extra_loss else 2, "max_points": 2,
                  "detail": "wrong result at index 1"} for i in cls["rubric_items"]]
        host = {"tasks": {"scan": {"built": True, "compiled": ["src/tasks/CScanTask.cpp"]}}} \
            if h["kind"] == "host-code" else None
        with open(os.path.join(grades, h["name"] + ".json"), "w") as f:
            json.dump({"items": items, "host_code": host}, f)

    for h in cls["handins"][1:]:  # s001 not graded
        write(h, [])
    r = subprocess.run([sys.executable, script, out, "--check", grades], capture_output=True,
                       text=True)
    check(r.returncode == 0 and "5 of 5 graded hand-ins as class.json predicts (1 of 6 not "
          "graded" in r.stdout, f"--check as predicted: exit {r.returncode}, {r.stdout!r}")
    clean = next(h for h in cls["handins"][1:] if not h["defect"])
    write(clean, ["scan-naive"])
    r = subprocess.run([sys.executable, script, out, "--check", grades], capture_output=True,
                       text=True)
    check(r.returncode == 1 and f"make-class: {clean['name']} (" in r.stdout and
          "lost ['scan-naive'], predicted []" in r.stdout and "4 of 5 graded" in r.stdout,
          f"--check, one hand-in lost more: exit {r.returncode}, {r.stdout!r}")


def main():
    src = os.path.abspath(sys.argv[1])
    script = os.path.join(src, "bench", "make-class")
    with tempfile.TemporaryDirectory(prefix="rsb-make-class-") as tmp:
        refusals(script, tmp)
        missing_anchor(src, tmp)
        made = small_class(src, script, tmp)
        if made:
            same_again(script, tmp, made[0], made[1], [])
            same_again(script, tmp, made[0], made[1], ["--from-handout"])
            check_mode(script, tmp, made[0])
    for f in failures:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'passed'}: make-class, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
