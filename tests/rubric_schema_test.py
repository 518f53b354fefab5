#!/usr/bin/env python3
"""The rubric's JSON Schema (docs/rubric.schema.json) and the grader agree (issue 44):

   tests/rubric_schema_test.py BINARY SOURCE_DIR

 - the schema is a valid 2020-12 schema and the shipped grading/rubric.json passes it, as do
   rubrics the docs show (a 2-D convolution item, singular keys);
 - its task and variant names are the task tables' (BINARY --list-variants);
 - every rubric error below is refused by the grader (exit 2, before anything runs) and by the
   schema; the few the schema cannot say (GRADER_ONLY, with why) by the grader alone.
Skips (77) where python3-jsonschema is not installed.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    print("skipped: python3-jsonschema is not installed (scripts/install-deps.sh installs it)")
    sys.exit(77)

BINARY, SOURCE = sys.argv[1], sys.argv[2]
ITEM = {"id": "a", "task": "reduction", "variant": "sequential", "points": 1,
        "cases": [{"sizes": [1000], "local_size": 16}]}


def rubric(**item_edits):
    """A good one-item rubric with the item's keys edited (None deletes)."""
    it = copy.deepcopy(ITEM)
    for k, v in item_edits.items():
        if v is None:
            it.pop(k, None)
        else:
            it[k] = v
    return {"items": [it]}


def case(**edits):
    return rubric(cases=[dict({"sizes": [1000]}, **edits)])


CONV2D = {"task": "convolution", "variant": "tiled-2d"}
# (what, the rubric): each refused by the grader and by the schema.
BAD = [
    ("no items", {"name": "x"}),
    ("empty items", {"items": []}),
    ("an unknown top key", dict(rubric(), extra=1)),
    ("a negative seed", dict(rubric(), seed=-1)),
    ("a seed that is a string", dict(rubric(), seed="1")),
    ("an absolute required file", dict(rubric(), required_files=["/etc/passwd"])),
    ("a required file outside the hand-in", dict(rubric(), required_files=["../x.cl"])),
    ("an empty required_files", dict(rubric(), required_files=[])),
    ("an item that is not an object", {"items": [1]}),
    ("an item without id", rubric(id=None)),
    ("an id with a comma", rubric(id="a,b")),
    ("an id that is a number", rubric(id=7)),
    ("an unknown item key", rubric(speed=1)),
    ("an unknown task", rubric(task="sort")),
    ("a variant of another task", rubric(variant="naive")),
    ("no points", rubric(points=None)),
    ("points as a string", rubric(points="two")),
    ("negative points", rubric(points=-1)),
    ("no cases", rubric(cases=None)),
    ("an empty case list", rubric(cases=[])),
    ("a case without a size", rubric(cases=[{"types": ["uint"]}])),
    ("an unknown case key", case(colour="red")),
    ("a mask width on a reduction", case(mask_width=3)),
    ("size 0", case(sizes=[0])),
    ("a size that is no size", case(sizes=["lots"])),
    ("an image for a 1-D variant", case(sizes=["64x64"])),
    ("a count for a 2-D variant", dict(rubric(**CONV2D, cases=[{"sizes": [4096]}]))),
    ("a type the task does not compute", rubric(task="convolution", variant="basic-1d",
                                                 cases=[{"sizes": [100], "types": ["uint"]}])),
    ("an unknown type", case(types=["bool"])),
    ("an unknown operator", case(ops=["product"])),
    ("min for a convolution", rubric(task="convolution", variant="basic-1d",
                                     cases=[{"sizes": [100], "op": "min"}])),
    ("a scan kind on a reduction", case(scan_kind="inclusive")),
    ("an unknown scan kind", rubric(task="scan", variant="naive",
                                    cases=[{"sizes": [100], "scan_kinds": ["both"]}])),
    ("local size 3", case(local_sizes=[3])),
    ("local size 2048", case(local_size=2048)),
    ("validate_runs 0", case(validate_runs=0)),
    ("an even mask width", rubric(task="convolution", variant="basic-1d",
                                  cases=[{"sizes": [100], "mask_width": 4}])),
    ("speed_floor 0", rubric(speed_floor=0)),
    ("speed_floor as a word", rubric(speed_floor="fast")),
    ("an unknown Oclgrind mode", rubric(oclgrind="maybe")),
    ("work_ceiling without Oclgrind", rubric(work_ceiling=2)),
    ("work_ceiling with Oclgrind off", rubric(work_ceiling=2, oclgrind="off")),
    ("a speed_case that is no case", rubric(speed_floor=0.5, speed_case={"sizes": [0]})),
]
# Refused by the grader only, and why the schema cannot say so.
GRADER_ONLY = [
    ("an id given twice", {"items": [ITEM, ITEM]},
     "JSON Schema has no uniqueness of one key across array items"),
    ("a mask wider than its image", rubric(**CONV2D, cases=[{"sizes": ["8x8"], "mask_widths": [9]}]),
     "a relation between two values of a case"),
    ("a 2-D mask wider than 31", rubric(**CONV2D, cases=[{"sizes": ["64x64"], "mask_width": 33}]),
     "the width allowed depends on the variant: kept out of the schema's case entry"),
    ("points 1e400", "1e400",
     "not JSON's number: Python reads inf, which the schema does refuse (maximum), but the text is "
     "checked by the grader, which the test runs on the text"),
]
GOOD = [
    ("the doc's large-arrays item", {"items": [{
        "id": "scan-large-arrays", "task": "scan", "variant": "work-efficient", "points": 4,
        "cases": [{"sizes": [4097, 16385, 100003, "2^21+5"], "types": ["uint"],
                   "scan_kinds": ["inclusive", "exclusive"], "local_sizes": [8, 64]},
                  {"sizes": ["2^20+1"], "types": ["float"], "local_size": 64}],
        "oclgrind": "deduct", "oclgrind_case": {"sizes": [4097], "local_size": 8},
        "speed_floor": 0.5}]}),
    ("a 2-D convolution, singular keys", dict(rubric(**CONV2D, cases={"size": "64x48",
                                                                        "mask_width": 5,
                                                                        "type": "double"}),
                                               seed=3, required_files=["kernels/Convolution.cl"])),
]


def grader_refuses(tmp, text):
    path = os.path.join(tmp, "rubric.json")
    with open(path, "w") as f:
        f.write(text)
    run = subprocess.run([BINARY, "grade", "--rubric", path, "--sandbox", "none", "--output-dir",
                          os.path.join(tmp, "out"), os.path.join(tmp, "handin")],
                         capture_output=True, text=True, timeout=120)
    return run.returncode == 2 and "--rubric" in run.stderr, run


def main():
    with open(os.path.join(SOURCE, "docs", "rubric.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    fails = []
    with open(os.path.join(SOURCE, "grading", "rubric.json")) as f:
        shipped = json.load(f)
    for what, r in [("the shipped rubric", shipped)] + GOOD:
        errors = [e.message for e in v.iter_errors(r)]
        if errors:
            fails.append(f"{what}: refused by the schema: {errors[:3]}")
    # The names: the task tables'.
    listed = subprocess.run([BINARY, "--list-variants"], capture_output=True, text=True,
                            check=True).stdout.split("\n")
    tables = {}
    for line in filter(None, listed):
        task, variant = line.split()[:2]
        tables.setdefault(task, set()).add(variant)
    item = schema["$defs"]["item"]
    named = {}
    for rule in item["allOf"]:
        task = rule.get("if", {}).get("properties", {}).get("task", {}).get("const")
        variants = rule.get("then", {}).get("properties", {}).get("variant", {}).get("enum")
        if task and variants:
            named.setdefault(task, set()).update(variants)
    if named != tables or set(item["properties"]["task"]["enum"]) != set(tables):
        fails.append(f"the schema's tasks and variants {named} are not the tables' {tables}")
    with tempfile.TemporaryDirectory(prefix="rsb-rubric-schema.") as tmp:
        os.makedirs(os.path.join(tmp, "handin", "kernels"))
        for what, r in BAD:
            if v.is_valid(r):
                fails.append(f"{what}: the schema takes {json.dumps(r)}")
            refused, run = grader_refuses(tmp, json.dumps(r))
            if not refused:
                fails.append(f"{what}: the grader -> {run.returncode}: {run.stderr[-300:]}")
        for what, r, why in GRADER_ONLY:
            refused, run = grader_refuses(tmp, r if isinstance(r, str) else json.dumps(r))
            if not refused:
                fails.append(f"{what} ({why}): the grader -> {run.returncode}: {run.stderr[-300:]}")
    for f in fails:
        print(f"FAIL: {f}")
    print(f"{len(BAD)} rubric errors refused by the grader and the schema, {len(GRADER_ONLY)} by the "
          f"grader alone; {1 + len(GOOD)} rubrics taken")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
