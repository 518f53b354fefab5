#!/usr/bin/env python3
"""bench/compare.py against stand-ins for the suite and a reference: fixed figures per round, so
the table it prints (one round as is; several: the median over the rounds and the spread) and
its exit status can be checked exactly, with no device and no reference library; and --table
against the stored files in tests/fixtures/compare-table (one round of uint/float with a failed
case and a case without a reference; three rounds of ulong/double): the Markdown table exactly.

usage: compare_py_test.py SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

# Round k (0, 1, 2) of the stand-in suite: the reduction at 2, 6, 4 Gelem/s (util 40, 120, 80%),
# the scan at 1, 1, 3 (20, 20, 60%); the stand-in reference at 2 Gelem/s for both, every round.
# Compactions at 1% and 50% kept, 4 Gelem/s each, against the reference's 2 and 4: paired by the
# kept percentage, 2.00x and 1.00x.
SUITE = r'''#!/usr/bin/env python3
import json, os, sys
counter = os.path.join(os.path.dirname(os.path.abspath(__file__)), "round")
k = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(k + 1))
red, scan = [2.0, 6.0, 4.0][k % 3], [1.0, 1.0, 3.0][k % 3]
fail = os.environ.get("FAIL_ROUND") == str(k)
print(json.dumps({
    "device": {"name": "dev", "platform": "plat", "driver_version": "1",
               "ceilings": {"read_gbytes_s": 10.0 + k, "write_gbytes_s": 8.0},
               "copy_gbytes_s": 12.0},
    "results": [
        {"task": "reduction", "variant": "single-pass", "type": "uint", "n": 64,
         "status": "passed", "gelem_s": red, "utilisation": red / 5},
        {"task": "scan", "variant": "single-pass", "type": "uint", "n": 64,
         "status": "failed" if fail else "passed", "gelem_s": scan, "utilisation": scan / 5},
        {"task": "compaction", "variant": "scan-scatter", "type": "uint", "n": 64,
         "params": {"kept": 1, "predicate": 0}, "status": "passed", "gelem_s": 4.0},
        {"task": "compaction", "variant": "scan-scatter", "type": "uint", "n": 64,
         "params": {"kept": 50, "predicate": 0}, "status": "passed", "gelem_s": 4.0}]}))
'''
REFERENCE = r'''#!/usr/bin/env python3
import json
for task, algo in (("reduction", "std::reduce(par)"), ("scan", "std::inclusive_scan(par)")):
    print(json.dumps({"task": task, "type": "uint", "n": 64, "gelem_s": 2.0, "algorithm": algo}))
for kept, gelem in ((1, 2.0), (50, 4.0)):
    print(json.dumps({"task": "compaction", "type": "uint", "n": 64, "gelem_s": gelem,
                      "kept_percent": kept, "algorithm": "copy_if"}))
'''

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def row(out, task):
    lines = [l for l in out.splitlines() if l.startswith(task + " ")]
    return lines[0] if len(lines) == 1 else ""


TABLE = """\
| n | reduction uint / float | reduction ulong / double | scan uint / float | scan ulong / double |
|---|---|---|---|---|
| 2^24 | 500.0 / 400.0 (1.25x / 1.00x) | 300.0 / 300.0 (1.50x / 1.00x) | 300.0 / 240.0 (1.20x / 1.20x) \
| 150.0 / 150.0 (1.50x / 1.00x) |
| 2^26 | 700.0 / 690.0 (1.00x / -) | - / - (- / -) | 350.0 / - (1.25x / -) | - / - (- / -) |
"""


def check_table(source, compare):
    """--table: each file's provenance, then the table of the single-pass cases; exit 2 on a file
    that --json-out did not write."""
    files = [os.path.join("tests", "fixtures", "compare-table", f)
             for f in ("uint-float.json", "ulong-double-rounds.json")]
    got = subprocess.run([sys.executable, compare, "--table", *files], cwd=source,
                         capture_output=True, text=True)
    check(got.returncode == 0, f"--table: exit {got.returncode}, {got.stderr}")
    lines = got.stdout.splitlines()
    for i, f in enumerate(files):
        line = lines[i] if len(lines) > i else ""
        check(line.startswith(f"`{f}`: `reduce-scan-bench --format json`; revision 0123456789ab, "
                              "2030-01-02T03:04:05Z, host fixture, Fixture GPU, driver 1.0"),
              f"--table: provenance of {f}: {line!r}")
    check("\n".join(lines[len(files) + 1:]) + "\n" == TABLE,
          f"--table: the table differs:\n{got.stdout}")
    for bad in (["docs/results/h100-convolution.json"], ["README.md"], []):
        run = subprocess.run([sys.executable, compare, "--table", *bad], cwd=source,
                             capture_output=True, text=True)
        check(run.returncode == 2 and run.stderr.startswith("error: --table: ")
              and not run.stdout, f"--table {bad}: exit {run.returncode}, {run.stderr!r}")


def main():
    compare = os.path.join(sys.argv[1], "bench", "compare.py")
    with tempfile.TemporaryDirectory() as tmp:
        suite, ref = os.path.join(tmp, "suite"), os.path.join(tmp, "reference")
        for path, text in ((suite, SUITE), (ref, REFERENCE)):
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)

        def run(*extra, env=None):
            counter = os.path.join(tmp, "round")
            if os.path.exists(counter):
                os.remove(counter)
            return subprocess.run([sys.executable, compare, "--bench", suite, "--reference", ref,
                                   "--sizes", "64", "--types", "uint", *extra],
                                  capture_output=True, text=True,
                                  env=dict(os.environ, **(env or {})))

        one = run()
        check(one.returncode == 0, f"one round: exit {one.returncode}, {one.stderr}")
        check("ceilings read/write/copy 10/8/12 GB/s" in one.stdout, "one round: ceilings line")
        r = row(one.stdout, "reduction")
        check(" 2.0 " in r and " 40% " in r and r.endswith("1.00x"), f"one round: {r!r}")

        kept = [l for l in one.stdout.splitlines() if l.startswith("compaction ")]
        check(len(kept) == 2 and kept[0].endswith("2.00x") and kept[1].endswith("1.00x"),
              f"one round, compactions paired by kept percentage: {kept!r}")

        three = run("--rounds", "3", "--json-out", os.path.join(tmp, "out.json"))
        check(three.returncode == 0, f"three rounds: exit {three.returncode}, {three.stderr}")
        check("ceilings read/write/copy 10-12/8/12 GB/s" in three.stdout,
              f"three rounds: ceilings line in {three.stdout!r}")
        r = row(three.stdout, "reduction")
        # median 4.0 Gelem/s, 80%, ratio median 2.00x; spread 2.0-6.0, 40-120%, 1.00-3.00x
        check(" 4.0 " in r and " 80% " in r and "2.00x  (2.0-6.0, 40-120%, 1.00-3.00x)" in r,
              f"three rounds, reduction: {r!r}")
        s = row(three.stdout, "scan")
        check(" 1.0 " in s and " 20% " in s and "0.50x  (1.0-3.0, 20-60%, 0.50-1.50x)" in s,
              f"three rounds, scan: {s!r}")
        with open(os.path.join(tmp, "out.json")) as f:
            rounds = json.load(f)
        check(isinstance(rounds, list) and len(rounds) == 3, "three rounds: --json-out a list of 3")

        failed = run("--rounds", "3", env={"FAIL_ROUND": "1"})
        check(failed.returncode == 1, f"a round failed: exit {failed.returncode}, want 1")
        check(" failed " in row(failed.stdout, "scan"), "a round failed: the scan row says failed")

        bad = run("--rounds", "0")
        check(bad.returncode == 2 and "--rounds must be at least 1, got 0" in bad.stderr,
              f"--rounds 0: exit {bad.returncode}, {bad.stderr!r}")

    check_table(sys.argv[1], compare)

    for f in failures:
        print("FAIL:", f)
    print(f"{'FAILED' if failures else 'passed'}: compare.py, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
