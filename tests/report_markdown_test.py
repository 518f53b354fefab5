#!/usr/bin/env python3
"""`reduce-scan-bench report --format markdown`: result files as Markdown, for docs.

  tests/report_markdown_test.py BENCH SOURCE_DIR

Two stored result files (tests/fixtures/base.json and new-faster.json) give, on stdout, exactly
tests/fixtures/printer/report-two-files.md (their provenance, device, results' tables and
compare's comparison); each row's Gelem/s is the JSON's, rounded as the table rounds it; `-o
FILE.md` writes the same text; a file of two devices gets a device column. Bad input (an output
not .md, an unknown format, html without an output) is exit 2 with one line and no file.
RSB_UPDATE_GOLDEN=1 rewrites the golden file instead of comparing."""
import json, os, subprocess, sys, tempfile

from checks import check, summary

bench, src = sys.argv[1], sys.argv[2]
fixtures = os.path.join(src, "tests", "fixtures")
golden = os.path.join(fixtures, "printer", "report-two-files.md")


def report(args, cwd):
    return subprocess.run([bench, "report"] + args, capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def main():
    files = ["tests/fixtures/base.json", "tests/fixtures/new-faster.json"]
    run = report(["--format", "markdown"] + files, src)
    check(run.returncode == 0 and run.stderr == "", f"exit {run.returncode}: {run.stderr}")
    if os.environ.get("RSB_UPDATE_GOLDEN"):
        open(golden, "w").write(run.stdout)
    check(run.stdout == open(golden).read(), f"the output differs from {golden}:\n{run.stdout}")
    for path in files:
        for r in json.load(open(os.path.join(src, path)))["results"]:
            cell = f"| {r['gelem_s']:.2f} |"
            check(r["status"] != "passed" or cell in run.stdout, f"{path}: no cell '{cell}'")
    check("| BASE ms |" in run.stdout, "no comparison for two files")
    with tempfile.TemporaryDirectory(prefix="rsb-report-md.") as tmp:
        out = os.path.join(tmp, "r.md")
        wrote = report(["--format", "markdown", "-o", out] + files, src)
        check(wrote.returncode == 0 and open(out).read() == run.stdout,
              f"-o {out}: exit {wrote.returncode}: {wrote.stderr}")
        two = report(["--format", "markdown", "tests/fixtures/two-devices.json"], src)
        check(two.returncode == 0 and two.stdout.count("| device | task |") == 1,
              f"two devices: no device column: {two.stdout}")
        for args, expect in ((["--format", "markdown", "-o", os.path.join(tmp, "x.html")],
                              "--output"),
                             (["--format", "pdf", "-o", os.path.join(tmp, "y.md")], "--format"),
                             ([], "--output")):
            bad = report(args + files[:1], src)
            check(bad.returncode == 2 and expect in bad.stderr and bad.stderr.count("\n") == 1,
                  f"report {args}: exit {bad.returncode}: {bad.stderr}")
        check(os.listdir(tmp) == ["r.md"], f"a file written on bad input: {os.listdir(tmp)}")
    usage = report(["--help"], src)
    check(usage.returncode == 0 and "--format" in usage.stdout and "markdown" in usage.stdout,
          f"report --help: {usage.stdout}")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
