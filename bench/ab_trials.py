#!/usr/bin/env python3
"""How often `reduce-scan-bench ab` calls a change (docs/BENCHMARKS.md, "A/B in turns").

TRIALS A/A runs (two copies of the same kernels/) and TRIALS A/B runs (B: a copy whose reduction
`decomposition` kernel is slower: every work-item runs a masked extra load, which in one work-group
in EVERY reads an element; a real kernel made slower, not a scaled file; with --op max the element
cannot change the result), alternating A/A, A/B, ..., each one `ab` run of that one case. The
kernel needs the suite's own decomposition (a hand-out's TODO is not one to slow down). A call in
an A/A run is a false alarm; `slower` in an A/B run is the power. --busy K keeps K busy loops
running beside it.

  bench/ab_trials.py BIN [--trials 20] [--rounds 16] [--size 2^20] [--time-budget 0.15]
                     [--every auto|N] [--platform P] [--busy 1] [--out ab-trials.json]
                     [--revision R]
  bench/ab_trials.py --table FILE...     the Markdown table of result files (BENCHMARKS.md)

The result file records the command, the revision, the date, the host and its load, the device,
the settings, every trial (change, ratio, p-value, exit status, seconds) and the counts. With
--platform NVIDIA the NVIDIA ICD is registered as the bench/gpu_*.sh scripts do. Exit 0; 2 on
bad arguments; 3 where an `ab` run failed.
"""
import argparse
import datetime
import json
import os
import shutil
import socket
import statistics
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
GUARD = "#if RSB_WANTS(ReduceDecomposition)\n"
# Put in front of ReduceDecomposition: the value each work-item hands to the work-group tree
# (WorkGroup.clh) goes through SlowValue first.
SLOW = """// The A/B trial's slowdown (bench/ab_trials.py): in one work-group in {every} each work-item
// reads one more element, n / 2 away (max or min only: it cannot change the result); elsewhere
// its index is n, past the end, and LoadOrIdentity reads nothing. No branch of its own.
inline T SlowValue(__global const T* src, IDX n, T v) {{
  const IDX far = get_global_id(0) + n / 2;
  const IDX at = get_group_id(0) % {every} != 0 ? n : far >= n ? far - n : far;
  return OP(v, LoadOrIdentity(src, at, n));
}}
#define WorkGroupReduceSequential(scratch, v) \\
  WorkGroupReduceSequential(scratch, SlowValue(src, n, v))
"""


def slowed_copy(dst, every):
    """kernels/ copied to dst, ReduceDecomposition's work-group values through SlowValue (SLOW):
    one work-group in `every` reads one more element a work-item."""
    shutil.copytree(os.path.join(REPO, "kernels"), dst)
    path = os.path.join(dst, "Reduction.cl")
    text = open(path).read()
    at = text.find(GUARD)
    end = text.find("#endif", at)
    if at < 0 or end < 0:
        sys.exit(f"{path}: no {GUARD.strip()} ... #endif")
    at += len(GUARD)
    text = (text[:at] + SLOW.format(every=every) + text[at:end] +
            "#undef WorkGroupReduceSequential\n" + text[end:])
    open(path, "w").write(text)


def provenance(argv, args):
    """Command, revision (--revision, else git's, else the binary's own --version), date, host."""
    def git(*a):
        r = subprocess.run(["git", "-C", REPO, *a], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    revision = args.revision or git("rev-parse", "--short", "HEAD")
    if revision and not args.revision and git("status", "--porcelain", "--untracked-files=no"):
        revision += " (modified)"
    if not revision:
        version = subprocess.run([args.bin, "--version"], capture_output=True, text=True).stdout
        revision = version.split("(git ", 1)[-1].split(",", 1)[0] if "(git " in version else "unknown"
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"command": " ".join(["bench/ab_trials.py"] + argv), "revision": revision,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "host": f"{socket.gethostname()}: {cpu}, {os.cpu_count()} cores"}


def one_trial(args, kind, ka, kb):
    cmd = [args.bin, "ab", "--kernels-a", ka, "--kernels-b", kb, "--rounds", str(args.rounds),
           "--format", "json", "-q", "--task", "reduction", "--variant", "decomposition",
           "--op", "max", "--size", args.size, "--time-budget", args.time_budget]
    if args.platform:
        cmd += ["--platform", args.platform]
    start = time.monotonic()
    run = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if run.returncode not in (0, 1):
        sys.stderr.write(f"{' '.join(cmd)}: exit {run.returncode}\n{run.stderr}")
        sys.exit(3)
    out = json.loads(run.stdout)
    case = out["cases"][0]
    return {"kind": kind, "change": case["change"], "ratio": case["throughput_ratio"],
            "p": case["p_value"], "regression": case["regression"], "exit": run.returncode,
            "seconds": round(seconds, 1), "device": out["base"]["devices"][0],
            "round_ratios": [round(r, 4) for r in case.get("round_ratios", [])]}


def calibrate(args, ka, work):
    """--every auto: of a ladder of EVERY (the extra code alone, then ever more reads), the first
    whose A/B probe of 6 rounds is within 0.012 of a 10% slowdown (throughput ratio 1/1.1), else
    the nearest. On pocl the extra index arithmetic and masked load cost about 10% by themselves,
    the reads little (the input is in the cache); on a GPU the reads."""
    probes = {}
    probe = argparse.Namespace(**{**vars(args), "rounds": 6})
    for every in (1000, 20, 8, 5, 3, 2, 1):
        kb = os.path.join(work, f"probe-{every}")
        slowed_copy(kb, every)
        probes[every] = one_trial(probe, "probe", ka, kb)["ratio"]
        print(f"probe: every {every}: ratio {probes[every]:.3f}", flush=True)
        if abs(probes[every] - 1 / 1.1) < 0.012 or probes[every] < 1 / 1.1:
            break
    best = min(probes, key=lambda e: abs(probes[e] - 1 / 1.1))
    return best, [{"every": e, "ratio": round(r, 4)} for e, r in probes.items()]


def counts(trials):
    def of(kind):
        t = [x for x in trials if x["kind"] == kind]
        ratios = [x["ratio"] for x in t]
        return {"trials": len(t),
                "called": sum(x["change"] in ("faster", "slower") for x in t),
                "slower": sum(x["change"] == "slower" for x in t),
                "exit_1": sum(x["exit"] == 1 for x in t),
                "ratio_median": statistics.median(ratios) if ratios else None,
                "ratio_min": min(ratios, default=None), "ratio_max": max(ratios, default=None),
                "seconds_median": statistics.median([x["seconds"] for x in t]) if t else None}
    return {"A/A": of("A/A"), "A/B": of("A/B")}


def nvidia_icd():
    """The NVIDIA ICD beside the machine's own, as bench/gpu_*.sh register it."""
    icd = "/tmp/icd"
    os.makedirs(icd, exist_ok=True)
    open(os.path.join(icd, "nvidia.icd"), "w").write("libnvidia-opencl.so.1\n")
    vendors = "/etc/OpenCL/vendors"
    for name in os.listdir(vendors) if os.path.isdir(vendors) else []:
        if name.endswith(".icd") and name != "nvidia.icd":
            shutil.copy(os.path.join(vendors, name), icd)
    os.environ["OCL_ICD_VENDORS"] = icd


def trials(args, argv):
    record = provenance(argv, args)
    record["settings"] = {"trials": args.trials, "rounds": args.rounds, "size": args.size,
                          "time_budget": args.time_budget, "every": args.every,
                          "platform": args.platform, "busy_loops": args.busy,
                          "case": "reduction/decomposition uint max"}
    if args.platform.upper().startswith("NVIDIA"):
        nvidia_icd()
    work = tempfile.mkdtemp(prefix="rsb-ab-trials-")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the busy loops end too (finally)
    busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.busy)]
    try:
        ka, ka2, kb = (os.path.join(work, k) for k in ("a", "a2", "b"))
        shutil.copytree(os.path.join(REPO, "kernels"), ka)
        shutil.copytree(os.path.join(REPO, "kernels"), ka2)
        if args.every == "auto":
            args.every, record["settings"]["calibration"] = calibrate(args, ka, work)
            record["settings"]["every"] = args.every
        slowed_copy(kb, args.every)
        record["load_start"] = [round(x, 2) for x in os.getloadavg()]
        done = []
        for k in range(2 * args.trials):
            kind = "A/A" if k % 2 == 0 else "A/B"
            t = one_trial(args, kind, ka, ka2 if kind == "A/A" else kb)
            done.append(t)
            print(f"{len(done):3} {kind}: {t['change']:7} ratio {t['ratio']:.3f} p {t['p']} "
                  f"exit {t['exit']} {t['seconds']} s", flush=True)
        record["load_end"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        for p in busy:
            p.kill()
            p.wait()
        shutil.rmtree(work, ignore_errors=True)
    record["device"] = done[0].pop("device")
    for t in done:
        t.pop("device", None)
    record["trials"] = done
    record["counts"] = counts(done)
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    c = record["counts"]
    print(f"A/A: a change called in {c['A/A']['called']} of {c['A/A']['trials']}; A/B: slower in "
          f"{c['A/B']['slower']} of {c['A/B']['trials']} (ratio {c['A/B']['ratio_median']:.3f}); "
          f"{args.out}")


def table(files):
    print("| device | host load (1 min: start, end) | case, n, rounds x budget; B | A/A: a change "
          "called | A/B: `slower` | B/A throughput ratio: median (range) | a trial | revision, date |")
    print("|---|---|---|--:|--:|---|--:|---|")
    for path in files:
        r = json.load(open(path))
        s, c = r["settings"], r["counts"]
        aa, ab = c["A/A"], c["A/B"]
        busy = f", {s['busy_loops']} busy loop{'s' if s['busy_loops'] != 1 else ''} beside" \
            if s["busy_loops"] else ""
        print(f"| {r['device']} | {r['load_start'][0]}, {r['load_end'][0]}{busy} | {s['case']}, "
              f"{s['size']}, {s['rounds']} x {s['time_budget']} s; B: EVERY {s['every']}"
              f"{' (probed)' if s.get('calibration') else ''} | {aa['called']} of "
              f"{aa['trials']} | {ab['slower']} of {ab['trials']} | {ab['ratio_median']:.3f} "
              f"({ab['ratio_min']:.3f}-{ab['ratio_max']:.3f}) | {ab['seconds_median']:.0f} s | "
              f"`{r['revision']}`, {r['date']} |")


def main(argv):
    if argv[:1] == ["--table"]:
        if len(argv) < 2 or not all(os.path.isfile(f) for f in argv[1:]):
            sys.stderr.write("usage: bench/ab_trials.py --table FILE...  (result files)\n")
            return 2
        table(argv[1:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("bin", help="the reduce-scan-bench binary")
    ap.add_argument("--trials", type=int, default=20, help="A/A runs, and as many A/B (default 20)")
    ap.add_argument("--rounds", type=int, default=16, help="ab's --rounds (default 16)")
    ap.add_argument("--size", default="2^20", help="n (default 2^20)")
    ap.add_argument("--time-budget", default="0.15", help="seconds a case a round (default 0.15)")
    ap.add_argument("--every", default="auto",
                    help="B: one work-group in EVERY reads one more element a work-item (on top\n"
                         "of the extra code every work-item runs); auto (default): the EVERY that\n"
                         "makes B about 10%% slower on this device, from A/B probes (recorded)")
    ap.add_argument("--platform", default="", help="OpenCL platform (default: the first device)")
    ap.add_argument("--busy", type=int, default=0, help="busy loops beside the runs (default 0)")
    ap.add_argument("--out", default="ab-trials.json", help="the result file")
    ap.add_argument("--revision", default="", help="the revision to record (default: git's)")
    args = ap.parse_args(argv)
    if args.every != "auto":
        args.every = int(args.every) if args.every.isdigit() else 0
    if not os.access(args.bin, os.X_OK) or args.trials < 1 or args.rounds < 6 or args.every == 0 \
            or args.busy < 0:
        ap.error("BIN must be executable; --trials >= 1, --rounds >= 6, --every a whole number "
                 ">= 1 or auto, --busy >= 0")
    trials(args, argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
