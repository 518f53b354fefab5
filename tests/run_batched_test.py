#!/usr/bin/env python3
"""scripts/run-batched (scripts/run-tests' runner of both steps) on this build's tests: ctest's
selection of GoogleTest tests runs in batches, one process each, every test named with its
outcome, exit 0, their times kept for the next run's order, a test labelled own-process (the
grader's) through ctest; a test that fails (here those that open the device, the test device made
one that does not exist) is named, with its batch's output, and the exit is 1.

  tests/run_batched_test.py BUILD_DIR SOURCE_DIR"""
import os, re, subprocess, sys

build, src = sys.argv[1], sys.argv[2]
script = os.path.join(src, "scripts", "run-batched")
# In-process tests of the device suite that need no device, two that open it and a
# parameterised one (its ctest name is more than its GoogleTest name); one of the grader's binary.
select = ["-R", r"^(Timer\.(RealLooking|SpansThatRun)|Breakdown\.(KernelTimes|Overlaps)|"
          r"Kernels\.DeclareTheWorkGroupSize|Poison\.Fills|"
          r"Reduction/ReductionVariant\.PassesTheCheckMatrix/sequential_int|"
          r"SandboxCommandLine\.InnermostRuleWins)"]
failures = []
env = dict(os.environ, BATCH="2")
times = os.path.join(build, "Testing", "Temporary", "BatchedTimes.txt")
kept = os.path.getsize(times) if os.path.exists(times) else 0  # (the build's own, kept)
run = subprocess.run([script, build, "2"] + select, capture_output=True, text=True, env=env)
names = re.findall(r"^ +OK (\S+)$", run.stdout, re.M)
if run.returncode != 0 or len(names) != 7:
    failures.append(f"7 tests expected to pass, exit 0: exit {run.returncode}\n{run.stdout}")
added = open(times).read()[kept:] if os.path.exists(times) else ""
timed = set(re.findall(r"^(\S+) \d+(?:\.\d+)?$", added, re.M))
if not set(names) <= timed:
    failures.append(f"the batches' times not all in {times}: {sorted(set(names) - timed)}")
if "7 tests in 4 batches, 1 through ctest" not in run.stdout:
    failures.append(f"not 4 batches of at most 2, the grader's test through ctest:\n{run.stdout}")
env["RSB_TEST_PLATFORM"] = "no-such-platform"
run = subprocess.run([script, build, "2"] + select, capture_output=True, text=True, env=env)
bad = re.findall(r"^ +FAILED (\S+)$", run.stdout, re.M)
if run.returncode != 1 or sorted(bad) != ["Kernels.DeclareTheWorkGroupSizeTheyAreBuiltFor",
                                          "Poison.FillsAndWritesThePatternEverywhere",
                                          "Reduction/ReductionVariant.PassesTheCheckMatrix/"
                                          "sequential_int"]:
    failures.append(f"the three device tests expected to fail, exit 1: exit {run.returncode}, "
                    f"failed {bad}\n{run.stdout}")
for f in failures:
    print("FAIL:", f)
print("run-batched: as expected" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
