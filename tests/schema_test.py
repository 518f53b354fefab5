#!/usr/bin/env python3
"""Real output against docs/result-schema.json: a timed run (both tasks, passed cases with
confidence intervals), a --check, a skipped case and a failed one, a --cold run, a sweep of local
sizes, a run on several devices (pocl made to show two: POCL_DEVICES="pthread basic") and untimed
cases (RSB_FORCE_UNTIMED); and
--explain's JSON against docs/explain-schema.json (every task, an image, a skipped case).
   tests/schema_test.py BENCH SOURCE_DIR
The device: RSB_TEST_PLATFORM / RSB_TEST_DEVICE as for the other tests."""
import json, os, shutil, subprocess, sys, tempfile

try:
    import jsonschema
except ImportError:
    # ctest shows this test as "Skipped" (SKIP_RETURN_CODE 77), never as passed: a machine
    # without the package (the lent GPU reaches no registry) cannot judge the schema.
    print("SKIPPED: python3-jsonschema is missing (scripts/install-deps.sh installs it)")
    sys.exit(77)

bench, src = sys.argv[1], sys.argv[2]
schema = json.load(open(os.path.join(src, "docs", "result-schema.json")))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
selectors = []
for env, opt in (("RSB_TEST_PLATFORM", "--platform"), ("RSB_TEST_DEVICE", "--device")):
    if os.environ.get(env):
        selectors += [opt, os.environ[env]]

tmp = tempfile.mkdtemp(prefix="rsb-schema.")
broken = os.path.join(tmp, "kernels")
shutil.copytree(os.path.join(src, "kernels"), broken)
step = "dst[idx] = idx + stride < n ? OP(a, src[idx + stride]) : a;"
text = open(os.path.join(broken, "Reduction.cl")).read()
assert step in text, "the interleaved step's line moved: update this test"
open(os.path.join(broken, "Reduction.cl"), "w").write(text.replace(step, "dst[idx] = a;"))

# pocl lists two devices with this (a CPU device of each of its drivers); other platforms ignore it.
two_devices = dict(os.environ, POCL_DEVICES="pthread basic")
# The first timed run measures the memory ceilings (their fields are checked there); the others
# leave them out (--no-ceilings: 12 streams a run).
runs = [
    (["--size", "2^12,1000", "--type", "uint,float", "--iterations", "8"], {0}),
    (["--check", "--size", "100", "--type", "all", "--op", "min"], {0}),
    (["--size", "2^12", "--task", "reduction", "--variant", "sequential", "--cold",
      "--iterations", "8", "--local-size", "8192", "--no-ceilings"],
     {0}),  # skipped: beyond the work-group limit
    (["--check", "--size", "100000", "--task", "reduction", "--kernels", broken], {1}),
    # Task parameters and images: convolution's mask width, a 2-D shape.
    (["--check", "--task", "convolution", "--size", "300,20x11", "--mask-width", "3,5"], {0}),
    # A sweep of local sizes, timed, on every device: several devices where pocl shows two.
    (["--size", "2^10", "--task", "reduction", "--variant", "sequential,atomic", "--local-size",
      "16,64,auto", "--iterations", "8", "--device", "all", "--no-ceilings"], {0}),
]
# --check --oclgrind where Oclgrind is installed: a clean case and one with a diagnostic.
if shutil.which("oclgrind"):
    oob = os.path.join(tmp, "oob")
    shutil.copytree(os.path.join(src, "kernels"), oob)
    scan = open(os.path.join(oob, "Scan.cl")).read()
    assert "  dst[i] = v;\n" in scan, "the naive scan's store moved: update this test"
    open(os.path.join(oob, "Scan.cl"), "w").write(
        scan.replace("  dst[i] = v;\n", "  dst[i] = v;\n  if (i == n - 1)\n    dst[n] = v;\n", 1))
    runs += [
        (["--check", "--oclgrind", "--task", "reduction", "--variant", "decomposition", "--size",
          "300"], {0}),
        (["--check", "--oclgrind", "--task", "scan", "--variant", "naive", "--size", "300",
          "--kernels", oob], {1}),
    ]
failures = 0


def validated(command, args, schema_validator, allowed=(0,), env=None):
    """The JSON document the suite prints for command + args, once checked against the schema
    (failures counted and printed); None if the run itself failed."""
    global failures
    p = subprocess.run([bench] + command + selectors + args, capture_output=True, text=True,
                       env=env)
    name = " ".join(command[:1] + args)
    if p.returncode not in allowed:
        print(f"FAIL: {name} -> exit {p.returncode}: {p.stderr[-500:]}")
        failures += 1
        return None
    doc = json.loads(p.stdout)
    errors = sorted(schema_validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:10]:
        print(f"FAIL: {name}: {'/'.join(map(str, e.path))}: {e.message}")
    failures += bool(errors)
    return doc


statuses = set()
for args, allowed in runs:
    env = two_devices if "all" in args else None
    doc = validated(["-q", "--format", "json"], args, validator, allowed, env)
    if doc is None:
        continue
    statuses |= {r["status"] for r in doc["results"]}
    if "all" in args and "devices" in doc:
        devices = {r["device"]["index"] for r in doc["results"]}
        if devices != set(range(len(doc["devices"]))) or doc["device"] != doc["devices"][0]:
            print(f"FAIL: {' '.join(args)}: results ran on devices {devices} of "
                  f"{len(doc['devices'])}, or `device` is not the first of `devices`")
            failures += 1
    if "--cold" in args and not doc["cold"]:
        print("FAIL: --cold is not recorded")
        failures += 1
    timed = [r for r in doc["results"] if r["iterations"] >= 6]
    for r in timed:
        t = r["time_ms"]
        if not (0 < t["ci_low"] <= t["median"] <= t["ci_high"]):
            print(f"FAIL: {r['variant']} n={r['n']}: the interval {t['ci_low']}..{t['ci_high']} "
                  f"does not hold the median {t['median']}")
            failures += 1
# A device whose profiling timer is unusable (forced: RSB_FORCE_UNTIMED, a test setting): with
# --timer events every case untimed, without the measured fields, isolated or not; by default
# (--timer auto) timed by the host's clock, which each result names.
for mode in ("--no-isolate", "--isolate"):
    for timer in ("events", "auto"):
        doc = validated(["-q", "--format", "json"],
                        ["--task", "reduction", "--variant", "sequential", "--size", "1000", mode,
                         "--no-ceilings", "--timer", timer],
                        validator, env=dict(os.environ, RSB_FORCE_UNTIMED="1"))
        if doc is not None:
            statuses |= {r["status"] for r in doc["results"]}
            if timer == "auto" and any(r.get("timer") != "host" for r in doc["results"]):
                print("FAIL: an unusable timer's cases are not timed by the host's clock")
                failures += 1
for wanted in ("passed", "failed", "skipped", "untimed"):
    if wanted not in statuses:
        print(f"FAIL: no {wanted} case was checked against the schema")
        failures += 1
# --explain's JSON against docs/explain-schema.json: every task, an image, a skipped case.
explain_schema = json.load(open(os.path.join(src, "docs", "explain-schema.json")))
jsonschema.Draft202012Validator.check_schema(explain_schema)
explain_validator = jsonschema.Draft202012Validator(explain_schema)
explain_statuses = set()
for args in (["--task", "reduction,scan", "--size", "2^20,1000", "--type", "uint,double"],
             ["--task", "convolution", "--size", "300,64x33", "--mask-width", "3,5"],
             ["--task", "reduction", "--variant", "sequential", "--size", "2^12",
              "--local-size", "8192"]):  # skipped: beyond the device's work-group limit
    doc = validated(["--explain", "--format", "json"], args, explain_validator)
    if doc is not None:
        explain_statuses |= {c["status"] for c in doc["cases"]}
for wanted in ("explained", "skipped"):
    if wanted not in explain_statuses:
        print(f"FAIL: no {wanted} --explain case was checked against the schema")
        failures += 1

shutil.rmtree(tmp)
print("schema: every result file valid" if not failures else f"schema: {failures} failures")
sys.exit(1 if failures else 0)
