#!/usr/bin/env python3
"""Does keeping every command's profiling event change the timing? Compares the median span of
each case between runs that keep every event (the default, or --breakdown) and runs that keep
only the first and last (--no-breakdown), each side given as one or more JSON result files
(alternate the runs so that drift hits both sides alike).

  bench/breakdown_ab.py --every on-1.json on-2.json --span-only off-1.json off-2.json

Per case: the median over each side's files of the case's median ms, the ratio every/span-only,
and the spread of each side (max/min of its medians over its files): a ratio inside the spread
is noise. With as many files on each side, given in the order they ran, file i of one side is
paired with file i of the other (adjacent in time, so slow drift of a shared machine cancels):
the median of the paired ratios and their range are printed too.
"""
import argparse
import json
import statistics


def load(paths):
    cases = {}  # key -> one median per file, in the files' order
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["results"]:
                if r["status"] == "passed" and r["time_ms"]["median"] > 0:
                    key = (r["task"], r["variant"], r["type"], r["n"])
                    cases.setdefault(key, []).append(r["time_ms"]["median"])
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--every", nargs="+", required=True, help="runs keeping every event")
    ap.add_argument("--span-only", nargs="+", required=True, help="runs with --no-breakdown")
    args = ap.parse_args()
    every, span = load(args.every), load(args.span_only)
    paired = len(args.every) == len(args.span_only)
    print(f"{'task':<10} {'variant':<14} {'n':>9} {'every ms':>10} {'span-only ms':>12} {'ratio':>6} "
          f"{'spread every':>12} {'spread span-only':>16}"
          + (f" {'paired ratio':>12} {'paired range':>14}" if paired else ""))
    for key in every:
        if key not in span:
            continue
        a, b = statistics.median(every[key]), statistics.median(span[key])
        line = (f"{key[0]:<10} {key[1]:<14} {key[3]:>9} {a:>10.4f} {b:>12.4f} {a / b:>6.3f} "
                f"{max(every[key]) / min(every[key]):>12.3f} "
                f"{max(span[key]) / min(span[key]):>16.3f}")
        if paired and len(every[key]) == len(span[key]):
            ratios = [x / y for x, y in zip(every[key], span[key])]
            line += (f" {statistics.median(ratios):>12.3f} "
                     f"{min(ratios):>6.3f}-{max(ratios):<7.3f}")
        print(line)


if __name__ == "__main__":
    main()
