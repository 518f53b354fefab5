#!/usr/bin/env python3
"""Renders a reduce-scan-bench JSON file as a Markdown table (one row per result), with the
ratio to a reference (cub-reference / boost-reference JSON lines) where one matches; with
--breakdown, each result's kernels follow it (time in the median run, share of the median span,
GB/s and utilisation from the kernel's own traffic, launches) and the queue's idle gaps.

  bench/report.py results.json [--reference cub.jsonl] [--type uint] [--breakdown]
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--reference")
    ap.add_argument("--type")
    ap.add_argument("--breakdown", action="store_true", help="a row per kernel under each result")
    args = ap.parse_args()
    with open(args.results) as f:
        data = json.load(f)
    refs = {}
    if args.reference:
        with open(args.reference) as f:
            for line in f:
                if line.startswith("{"):
                    r = json.loads(line)
                    refs[(r["task"], r["type"], r["n"])] = r
    ratio_head = " ratio |" if refs else ""
    launches_head = " launches |" if args.breakdown else ""
    print("| task | variant | type | n | local | status | median ms | Gelem/s | GB/s | util |"
          + launches_head + ratio_head)
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if args.breakdown else "")
          + ("---|" if refs else ""))
    for r in data["results"]:
        if args.type and r["type"] != args.type:
            continue
        ref = refs.get((r["task"], r["type"], r["n"])) if r["variant"] == "single-pass" else None
        ratio = f"{r['gelem_s'] / ref['gelem_s']:.2f}x" if ref and r["gelem_s"] else ""
        exp = r["n"].bit_length() - 1
        n = f"2^{exp}" if r["n"] == 1 << exp else str(r["n"])
        print(f"| {r['task']} | {r['variant']} | {r['type']} | {n} | {r['local_size']} | "
              f"{r['status']} | {r['time_ms']['median']:.4f} | {r['gelem_s']:.1f} | "
              f"{r['gbytes_s']:.0f} | {100 * r['bandwidth_util']:.0f}% |"
              + (f" {r['cost']['launches']} |" if args.breakdown else "")
              + (f" {ratio} |" if refs else ""))
        if args.breakdown and r.get("breakdown"):
            blank = " |" if refs else ""
            median = r["time_ms"]["median"]
            for k in r["breakdown"]:
                print(f"| | &nbsp;&nbsp;{k['kernel']} | | | | | {k['time_ms']:.4f} | "
                      f"{100 * k['share']:.1f}% | {k['gbytes_s']:.0f} | "
                      f"{100 * k['bandwidth_util']:.0f}% | {k['launches']} |" + blank)
            gaps = r.get("gaps_ms", 0)
            print(f"| | &nbsp;&nbsp;gaps (queue idle) | | | | | {gaps:.4f} | "
                  f"{100 * gaps / median if median else 0:.1f}% | | | |" + blank)


if __name__ == "__main__":
    main()
