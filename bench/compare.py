#!/usr/bin/env python3
"""Runs reduce-scan-bench (JSON) and a reference library on the same device in one go and
prints our throughput over the reference's, per task, type and size.

  GPU (NVIDIA):  bench/compare.py --reference build/cub-reference --platform NVIDIA
  CPU (pocl):    bench/compare.py --reference build/boost-reference --platform Portable
  against the host's cores:  bench/compare.py --reference build/cpu-reference --platform NVIDIA
  the Markdown table of stored runs:  bench/compare.py --table FILE.json [FILE.json...]

The reference is CUB (cub-reference, built where CMake finds CUDA), Boost.Compute
(boost-reference, built where Boost's headers are installed) or std::reduce /
std::inclusive_scan under std::execution::par on every core of the host (cpu-reference, built
where oneTBB is found). All print JSON lines; the suite runs its single-pass variants (or
--variants) with --format json.

On a shared machine one round can land in a slow spell of the host (pocl on a 2-core cloud
machine: the same case 45-116% of the copy ceiling from run to run, the reduction and
std::reduce slowed with it); --rounds N runs the pair N times in turn and prints, per case, the
median over the rounds with the lowest and highest beside it.

--table reads files that --json-out wrote (the suite's results with the reference's in
`reference`; one round, or a list of rounds: the median over them) and prints, per file, where it
came from (command, revision, date, host, device), then one Markdown table of the single-pass
cases: a row per n, a column per task and file, each cell "ours / ours (ratio / ratio)" in Gelem/s
for the file's types in their order, the ratio ours over the reference's ("-" where a case did not
pass or has no reference). Exit 2 on a file that is not such a result file.
"""
import argparse
import json
import os
import subprocess
import sys
from statistics import median


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} exited {proc.returncode}")
    return proc.stdout


def main():
    if sys.argv[1:2] == ["--table"]:
        return table(sys.argv[2:])
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(here, "..", "build", "reduce-scan-bench"))
    ap.add_argument("--reference", required=True, help="cub-reference, boost-reference or cpu-reference binary")
    ap.add_argument("--table", nargs="+", metavar="FILE.json",
                    help="(first, alone) the Markdown table of files --json-out wrote; runs nothing")
    ap.add_argument("--platform", default="", help="OpenCL platform substring for both")
    ap.add_argument("--sizes", default="2^24,2^26,2^28")
    ap.add_argument("--types", default="uint,float")
    ap.add_argument("--variants", default="single-pass")
    ap.add_argument("--json-out", help="also write the suite's JSON here, the reference's results\n"
                    "(its JSON lines, of the first round) in its `reference`")
    ap.add_argument("--bench-args", default="",
                    help="more options for the suite, e.g. \"--portable\" (the reference runs as is)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run the suite and the reference this many times in turn; per case the\n"
                         "median over the rounds (lowest-highest) (default 1)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")

    cmd = [args.bench, "--format", "json", "-q", "--task", "reduction,scan", "--variant",
           args.variants, "--type", args.types, "--size", args.sizes, "--scan-kind", "inclusive"]
    if args.platform:
        cmd += ["--platform", args.platform]
    cmd += args.bench_args.split()
    ref_cmd = [args.reference, "--sizes", args.sizes, "--types", args.types]
    if "boost" in os.path.basename(args.reference) and args.platform:
        ref_cmd += ["--platform", args.platform]

    rounds = []  # (the suite's JSON, the reference's results by (task, type, n))
    for _ in range(args.rounds):
        ours = json.loads(run(cmd))
        refs = {}
        for line in run(ref_cmd).splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                refs[case_key(r)] = r
        ours["reference"] = list(refs.values())
        rounds.append((ours, refs))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rounds[0][0] if args.rounds == 1 else [o for o, _ in rounds], f, indent=2)

    dev = rounds[0][0]["device"]
    print(f"device: {dev['name']} ({dev['platform']}, driver {dev['driver_version']}), "
          + ceilings_text(rounds))
    if args.rounds > 1:
        print(f"{args.rounds} rounds: per case the median over the rounds; in brackets the lowest-highest "
              "Gelem/s, util and ratio")
    print(f"{'task':<10} {'variant':<14} {'type':<6} {'n':>10} {'status':<7} {'ours Gelem/s':>12} "
          f"{'util':>5} {'reference':<32} {'ref Gelem/s':>11} {'ratio':>6}")
    failed = False
    for i, r in enumerate(rounds[0][0]["results"]):
        key = case_key(r)
        cases = [o["results"][i] for o, _ in rounds]
        case_refs = [rf.get(key) for _, rf in rounds]
        statuses = {c["status"] for c in cases}
        failed |= "failed" in statuses
        status = "failed" if "failed" in statuses else cases[0]["status"]
        ours_g = [c["gelem_s"] for c in cases]
        util = [100 * c.get("utilisation", c.get("bandwidth_util", 0)) for c in cases]
        ref_g = [rf["gelem_s"] for rf in case_refs if rf]
        ratio = [c["gelem_s"] / rf["gelem_s"] for c, rf in zip(cases, case_refs)
                 if rf and rf["gelem_s"] and c["gelem_s"]]
        print(f"{r['task']:<10} {r['variant']:<14} {r['type']:<6} {r['n']:>10} {status:<7} "
              f"{median(ours_g):>12.1f} {median(util):>4.0f}% "
              f"{case_refs[0]['algorithm'] if case_refs[0] else '-':<32} "
              f"{median(ref_g) if ref_g else 0:>11.1f} "
              + (f"{median(ratio):>5.2f}x" if ratio else f"{'-':>6}")
              + spread(ours_g, util, ratio))
    return 1 if failed else 0


def case_key(r):
    """What pairs a case of ours with the reference's: task, type, n, and for a compaction the kept
    percentage (the reference's kept_percent, the suite's params.kept)."""
    kept = r.get("kept_percent", r.get("params", {}).get("kept"))
    return (r["task"], r["type"], r["n"]) + (() if kept is None else (kept,))


def usage_error(text):
    print(f"error: {text}", file=sys.stderr)
    sys.exit(2)


def load_rounds(path):
    """The rounds of a --json-out file: [(results by (task, type, n), reference by (task, type, n))]."""
    try:
        with open(path) as f:
            doc = json.load(f)
        rounds = doc if isinstance(doc, list) else [doc]
        out = []
        for r in rounds:
            ours = {(c["task"], c["type"], c["n"]): c for c in r["results"]
                    if c["variant"] == "single-pass"}
            refs = {(c["task"], c["type"], c["n"]): c for c in r["reference"]}
            out.append((ours, refs))
        if not out:
            raise ValueError("no rounds")
        return rounds[0], out
    except (OSError, ValueError, KeyError, TypeError) as e:
        usage_error(f"--table: '{path}': not a file of `bench/compare.py --json-out` ({e!r}); "
                    "allowed: the suite's JSON with the reference's results in `reference`")


def size_text(n):
    """2^k for a power of two, else the number."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def cell(rounds, task, types, n):
    """'ours / ours (ratio / ratio)' over the types, medians over the rounds; '-' where missing."""
    gelem, ratios = [], []
    for t in types:
        ours = [o.get((task, t, n)) for o, _ in rounds]
        refs = [rf.get((task, t, n)) for _, rf in rounds]
        ok = [(o, rf) for o, rf in zip(ours, refs) if o and o.get("status") == "passed"
              and o.get("gelem_s")]
        gelem.append(f"{median(o['gelem_s'] for o, _ in ok):.1f}" if ok else "-")
        ratio = [o["gelem_s"] / rf["gelem_s"] for o, rf in ok if rf and rf.get("gelem_s")]
        ratios.append(f"{median(ratio):.2f}x" if ratio else "-")
    return f"{' / '.join(gelem)} ({' / '.join(ratios)})"


def table(paths):
    """Prints the provenance of each file and the Markdown table of their single-pass cases."""
    if not paths:
        usage_error("--table: no file given; allowed: one or more files of --json-out")
    files = []
    for path in paths:
        first, rounds = load_rounds(path)
        types, sizes, tasks = [], [], []
        for c in (c for c in first["results"] if c["variant"] == "single-pass"):
            for value, seen in ((c["type"], types), (c["n"], sizes), (c["task"], tasks)):
                if value not in seen:
                    seen.append(value)
        dev = first.get("device", {})
        rev = first.get("suite", {}).get("git_revision", "?")
        print(f"`{path}`: `{first.get('command', '?')}`; revision {rev}, {first.get('date', '?')}, "
              f"host {first.get('host', '?')}, {dev.get('name', '?')}, driver "
              f"{dev.get('driver_version', '?')}  ")
        files.append((rounds, types, sizes, tasks))
    print()
    all_tasks = [t for t in ("reduction", "scan") if any(t in f[3] for f in files)]
    all_tasks += sorted({t for f in files for t in f[3]} - set(all_tasks))
    columns = [(task, rounds, types) for task in all_tasks for rounds, types, _, tasks in files
               if task in tasks]
    sizes = sorted({n for f in files for n in f[2]})
    print("| n | " + " | ".join(f"{task} {' / '.join(types)}" for task, _, types in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for n in sizes:
        print(f"| {size_text(n)} | "
              + " | ".join(cell(rounds, task, types, n) for task, rounds, types in columns) + " |")
    return 0


def spread(ours_g, util, ratio):
    """With more than one round: the lowest and highest Gelem/s, util and ratio."""
    if len(ours_g) < 2:
        return ""
    text = f"  ({min(ours_g):.1f}-{max(ours_g):.1f}, {min(util):.0f}-{max(util):.0f}%"
    if ratio:
        text += f", {min(ratio):.2f}-{max(ratio):.2f}x"
    return text + ")"


def ceilings_text(rounds):
    """The ceilings of the run (read/write/copy GB/s), a range where the rounds measured more than one."""
    parts = []
    for key in ("read_gbytes_s", "write_gbytes_s"):
        parts.append([o["device"].get("ceilings", {}).get(key, 0) for o, _ in rounds])
    parts.append([o["device"].get("copy_gbytes_s", 0) for o, _ in rounds])

    def fmt(vs):
        lo, hi = min(vs), max(vs)
        return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f}"
    return "ceilings read/write/copy " + "/".join(fmt(v) for v in parts) + " GB/s"


if __name__ == "__main__":
    sys.exit(main())
