#!/usr/bin/env python3
"""Renders a reduce-scan-bench JSON file as a Markdown table (one row per result), with the
ratio to a reference (cub-reference / boost-reference JSON lines) where one matches.

  bench/report.py results.json [--reference cub.jsonl] [--type uint]
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--reference")
    ap.add_argument("--type")
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
    print("| task | variant | type | n | local | status | median ms | Gelem/s | GB/s | util |" + ratio_head)
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|" if refs else ""))
    for r in data["results"]:
        if args.type and r["type"] != args.type:
            continue
        ref = refs.get((r["task"], r["type"], r["n"])) if r["variant"] == "single-pass" else None
        ratio = f"{r['gelem_s'] / ref['gelem_s']:.2f}x" if ref and r["gelem_s"] else ""
        exp = r["n"].bit_length() - 1
        n = f"2^{exp}" if r["n"] == 1 << exp else str(r["n"])
        print(f"| {r['task']} | {r['variant']} | {r['type']} | {n} | {r['local_size']} | "
              f"{r['status']} | {r['time_ms']['median']:.4f} | {r['gelem_s']:.1f} | "
              f"{r['gbytes_s']:.0f} | {100 * r['bandwidth_util']:.0f}% |" + (f" {ratio} |" if refs else ""))


if __name__ == "__main__":
    main()
