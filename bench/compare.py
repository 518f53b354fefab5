#!/usr/bin/env python3
"""Runs reduce-scan-bench (JSON) and a reference library on the same device in one go and
prints our throughput over the reference's, per task, type and size.

  GPU (NVIDIA):  bench/compare.py --reference build/cub-reference --platform NVIDIA
  CPU (pocl):    bench/compare.py --reference build/boost-reference --platform Portable
  against the host's cores:  bench/compare.py --reference build/cpu-reference --platform NVIDIA

The reference is CUB (cub-reference, built where CMake finds CUDA), Boost.Compute
(boost-reference, built where Boost's headers are installed) or std::reduce /
std::inclusive_scan under std::execution::par on every core of the host (cpu-reference, built
where oneTBB is found). All print JSON lines; the suite runs its single-pass variants (or
--variants) with --format json.
"""
import argparse
import json
import os
import subprocess
import sys


def run(cmd):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"{cmd[0]} exited {proc.returncode}")
    return proc.stdout


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(here, "..", "build", "reduce-scan-bench"))
    ap.add_argument("--reference", required=True, help="cub-reference, boost-reference or cpu-reference binary")
    ap.add_argument("--platform", default="", help="OpenCL platform substring for both")
    ap.add_argument("--sizes", default="2^24,2^26,2^28")
    ap.add_argument("--types", default="uint,float")
    ap.add_argument("--variants", default="single-pass")
    ap.add_argument("--json-out", help="also write the suite's JSON here")
    ap.add_argument("--bench-args", default="",
                    help="more options for the suite, e.g. \"--portable\" (the reference runs as is)")
    args = ap.parse_args()

    cmd = [args.bench, "--format", "json", "-q", "--task", "reduction,scan", "--variant",
           args.variants, "--type", args.types, "--size", args.sizes, "--scan-kind", "inclusive"]
    if args.platform:
        cmd += ["--platform", args.platform]
    cmd += args.bench_args.split()
    ours = json.loads(run(cmd))
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(ours, f, indent=2)

    ref_cmd = [args.reference, "--sizes", args.sizes, "--types", args.types]
    if "boost" in os.path.basename(args.reference) and args.platform:
        ref_cmd += ["--platform", args.platform]
    refs = {}
    for line in run(ref_cmd).splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            refs[(r["task"], r["type"], r["n"])] = r

    dev = ours["device"]
    print(f"device: {dev['name']} ({dev['platform']}, driver {dev['driver_version']}), "
          f"ceilings read/write/copy {dev.get('ceilings', {}).get('read_gbytes_s', 0):.0f}/"
          f"{dev.get('ceilings', {}).get('write_gbytes_s', 0):.0f}/{dev.get('copy_gbytes_s', 0):.0f} GB/s")
    print(f"{'task':<10} {'variant':<14} {'type':<6} {'n':>10} {'status':<7} {'ours Gelem/s':>12} "
          f"{'util':>5} {'reference':<32} {'ref Gelem/s':>11} {'ratio':>6}")
    failed = False
    for r in ours["results"]:
        ref = refs.get((r["task"], r["type"], r["n"]))
        failed |= r["status"] == "failed"
        ratio = f"{r['gelem_s'] / ref['gelem_s']:.2f}x" if ref and r["gelem_s"] else "-"
        print(f"{r['task']:<10} {r['variant']:<14} {r['type']:<6} {r['n']:>10} {r['status']:<7} "
              f"{r['gelem_s']:>12.1f} {100 * r.get('utilisation', r.get('bandwidth_util', 0)):>4.0f}% "
              f"{ref['algorithm'] if ref else '-':<32} "
              f"{ref['gelem_s'] if ref else 0:>11.1f} {ratio:>6}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
