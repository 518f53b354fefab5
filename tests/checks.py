"""The script tests' one tally of failures: check(ok, what) prints and keeps each that failed
(and returns ok); summary() prints their count and gives the test's exit status. And
grade_args(), what a test's `grade` runs on."""
import os

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)
    return ok


def summary():
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


def grade_args():
    """`grade` options for the test device (RSB_TEST_PLATFORM / RSB_TEST_DEVICE) and the test
    run's kernel cache (POCL_CACHE_DIR, which ctest sets)."""
    out = []
    for var, opt in (("RSB_TEST_PLATFORM", "--platform"), ("RSB_TEST_DEVICE", "--device")):
        if os.environ.get(var):
            out += [opt, os.environ[var]]
    if os.environ.get("POCL_CACHE_DIR"):
        out += ["--kernel-cache", os.environ["POCL_CACHE_DIR"]]
    return out
