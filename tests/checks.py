"""The script tests' one tally of failures: check(ok, what) prints and keeps each that failed
(and returns ok); summary() prints their count and gives the test's exit status."""
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)
    return ok


def summary():
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0
