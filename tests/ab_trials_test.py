#!/usr/bin/env python3
"""bench/ab_trials.py against a stand-in for reduce-scan-bench: its `ab` answers every A/A run
(B's kernels a plain copy) `same` and every A/B run (B's decomposition kernel slowed) `slower`,
so the counts, the result file and its table can be checked exactly, with no device; and the
slowed copy differs from kernels/ in the decomposition kernel alone.

usage: ab_trials_test.py SOURCE_DIR
"""
import filecmp
import json
import os
import subprocess
import sys
import tempfile

# The stand-in: B is slowed where its Reduction.cl differs from A's.
BENCH = r'''#!/usr/bin/env python3
import json, os, sys
a = sys.argv[sys.argv.index("--kernels-a") + 1]
b = sys.argv[sys.argv.index("--kernels-b") + 1]
slow = open(os.path.join(a, "Reduction.cl")).read() != open(os.path.join(b, "Reduction.cl")).read()
print(json.dumps({"base": {"devices": ["stand-in"]}, "cases": [{
    "change": "slower" if slow else "same", "throughput_ratio": 0.9 if slow else 1.0,
    "p_value": 0.001 if slow else 0.5, "regression": slow}]}))
sys.exit(1 if slow else 0)
'''

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def main(root):
    script = os.path.join(root, "bench", "ab_trials.py")
    sys.path.insert(0, os.path.join(root, "bench"))
    import ab_trials
    if "SOLUTION BEGIN" not in open(os.path.join(root, "kernels", "Reduction.cl")).read():
        print("skipped: ReduceDecomposition is a hand-out's TODO here, nothing to slow down")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        bench = os.path.join(tmp, "bench")
        open(bench, "w").write(BENCH)
        os.chmod(bench, 0o755)
        out = os.path.join(tmp, "trials.json")
        run = subprocess.run([sys.executable, script, bench, "--trials", "3", "--every", "20",
                              "--out", out],
                             capture_output=True, text=True)
        check(run.returncode == 0, f"trials exited {run.returncode}: {run.stderr}")
        r = json.load(open(out))
        for key in ("command", "revision", "date", "host", "device", "load_start", "load_end"):
            check(key in r, f"the result file has no {key}")
        check([t["kind"] for t in r["trials"]] == ["A/A", "A/B"] * 3, f"order {r['trials']}")
        c = r["counts"]
        check(c["A/A"]["called"] == 0 and c["A/B"]["slower"] == 3 and c["A/B"]["exit_1"] == 3,
              f"counts {c}")
        table = subprocess.run([sys.executable, script, "--table", out], capture_output=True,
                               text=True)
        check(table.returncode == 0, f"--table exited {table.returncode}: {table.stderr}")
        row = table.stdout.splitlines()[-1]
        check("| stand-in |" in row and "; B: EVERY 20 | 0 of 3 | 3 of 3 | 0.900 "
              "(0.900-0.900) |" in row, row)
        # --every auto: probes first (the stand-in's B is 0.9x at any EVERY: the first), kept.
        auto = os.path.join(tmp, "auto.json")
        run = subprocess.run([sys.executable, script, bench, "--trials", "1", "--out", auto],
                             capture_output=True, text=True)
        check(run.returncode == 0, f"--every auto exited {run.returncode}: {run.stderr}")
        s = json.load(open(auto))["settings"]
        check(s["every"] == 1000 and s["calibration"] == [{"every": 1000, "ratio": 0.9}], f"{s}")
        bad = subprocess.run([sys.executable, script, bench, "--rounds", "5"], capture_output=True)
        check(bad.returncode == 2, f"--rounds 5 exited {bad.returncode}")
        # The slowed copy: only Reduction.cl differs, and only in ReduceDecomposition.
        copy = os.path.join(tmp, "slow")
        ab_trials.slowed_copy(copy, 5)
        kernels = os.path.join(root, "kernels")
        diff = filecmp.dircmp(kernels, copy)
        check(diff.diff_files == ["Reduction.cl"], f"files that differ: {diff.diff_files}")
        old = open(os.path.join(kernels, "Reduction.cl")).read()
        new = open(os.path.join(copy, "Reduction.cl")).read()
        slow = ab_trials.SLOW.format(every=5)
        check("get_group_id(0) % 5 != 0" in slow, slow)
        check(new.replace(slow, "", 1).replace("#undef WorkGroupReduceSequential\n", "", 1) == old,
              "the copy differs by more than SlowValue and its #undef")
        check(new.index(slow) > new.index("#if RSB_WANTS(ReduceDecomposition)") and
              new.index("#undef WorkGroupReduceSequential") <
              new.index("__kernel void ReduceUnrolled("),
              "SlowValue reaches past ReduceDecomposition")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
