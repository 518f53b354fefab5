#!/usr/bin/env bash
# One call's worth of GPU work on the lent NVIDIA machine (see docs/BENCHMARKS.md):
#   bench/gpu_session.sh BUILD_DIR STAGE...
# stages: info cub sweep sweep64 tests bench localsizes kernelinfo compare compare64 portable cpuref check31 stress stress64
#         trace isolation robustness ceilings sizes default breakdown conv conv2d sass big index-ab
# BUILD_DIR is built on the developer machine (with CUDA there, so cub-reference is in it) and carried.
# Results go to $OUT (or ./gpu-out); a short summary is printed last.
# CSV: rows with an empty 34th column (`kernel`) are the cases; the others their kernels.
set -uo pipefail
build=$1; shift
out=${OUT:-gpu-out}; mkdir -p "$out"
# The NVIDIA driver is not registered with the ICD loader there until we do it.
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
# The build folder holds absolute paths of the developer machine (/work/main): mirror them.
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
bin=$build/reduce-scan-bench
nv="--platform NVIDIA -q"
# sweep_tiles NAME KNOB "CASE OPTIONS" "L ITEMS"...: the single-pass scan at each tile shape,
# each shape's Gelem/s summed over the cases (the best shape last); $out/NAME.txt.
sweep_tiles() {
  local name=$1 knob=$2 cases=$3 r score; shift 3
  for c in "$@"; do set -- $c
    r=$("$bin" $nv --format csv --task scan --variant single-pass $cases --local-size $1 \
      --tune $knob=$2 --time-budget 0.2 | awk -F, 'NR > 1 && $34 == ""' | cut -d, -f10,18)
    score=$(echo "$r" | awk -F, '$1 == "passed" { s += $2 } END { printf "%d", s }')
    echo "L=$1 items=$2: $(echo $r | tr '\n' ' ') sum=$score"
  done | tee "$out/$name.txt"
  echo "best: $(sort -t= -k4 -n "$out/$name.txt" | tail -1)"
}
for stage in "$@"; do
  echo "=== $stage ($(date -u +%FT%TZ))"
  case $stage in
    info)
      nvidia-smi -L; "$bin" --list-devices; ldd "$bin" | grep -i "not found";;
    cub)
      "$build/cub-reference" --sizes 2^20,2^24,2^26,2^28 --types uint,float > "$out/cub.jsonl"
      grep -v copy "$out/cub.jsonl" | cut -c1-150;;
    sweep)  # single-pass scan tile shape (work-items x items each, --local-size and --tune)
      sweep_tiles sweep scan-gpu-items "--size 2^24,2^26,2^28" "256 24" "256 28" "256 32" "128 32" \
        "128 48" "256 40";;
    sweep64)  # the 64-bit single-pass scan's tile (work-items x items each); with BASE_KERNELS=DIR,
      # first the default tile with those kernels and with ours, three interleaved pairs (A/B)
      if [ -n "${BASE_KERNELS:-}" ]; then
        for i in 1 2 3; do for k in "$BASE_KERNELS" kernels; do
          echo "$k: $("$bin" $nv --kernels "$k" --format csv --task scan --variant single-pass --type long,double \
            --size 2^26,2^28 --time-budget 0.3 | awk -F, 'NR > 1 && $34 == ""' | cut -d, -f5,8,10,18 | tr '\n' ' ')"
        done; done | tee "$out/ab64.txt"
      fi
      sweep_tiles sweep64 scan-gpu-items-64 "--type long,double --size 2^26,2^28" "128 16" "128 24" \
        "128 32" "256 8" "256 12" "256 16" "256 24" "512 8" "512 12";;
    tests)
      (cd "$build" && RSB_TEST_PLATFORM=NVIDIA ctest -j8 --timeout 300 --output-on-failure > "$out/ctest-nvidia.log" 2>&1; \
       grep -E "tests passed|tests failed|\(Failed\)|Timeout" "$out/ctest-nvidia.log");;
    localsizes)  # the course variants at every local size, uint sum, 2^26
      for L in 64 128 256 512 1024; do
        "$bin" $nv --format csv --variant interleaved,sequential,decomposition,unrolled,atomic,kogge-stone,work-efficient,conflict-free \
          --size 2^26 --local-size $L --time-budget 0.2 | awk -F, 'NR > 1 && $34 == ""'
      done > "$out/localsizes.csv"; cut -d, -f3,4,9,10,18 "$out/localsizes.csv" | sort -t, -k1,2 | tr '\n' ' ';;
    kernelinfo)  # why a course kernel allows 256 work-items, and what the reqd_work_group_size attribute changes
      { for t in reduction scan; do
          "$build/kernel-info" --kernels kernels --platform NVIDIA --task $t --local-sizes 256,512,1024 --options -DRSB_NO_REQD_WG_SIZE=1
          "$build/kernel-info" --kernels kernels --platform NVIDIA --task $t --local-sizes 256,512,1024
        done; } > "$out/kernelinfo.txt" 2>&1
      grep -E "variant|Interleaved|TileKogge|SinglePass" "$out/kernelinfo.txt" | cut -c1-140;;
    bench)
      "$bin" $nv --format json --type uint,float --size 2^20,2^24,2^26,2^28 --time-budget 0.25 -o "$out/h100-all.json"
      echo "exit $?";;
    compare)
      python3 bench/compare.py --bench "$bin" --reference "$build/cub-reference" --platform NVIDIA \
        --sizes 2^24,2^26,2^28 --types uint,float | tee "$out/compare.txt";;
    compare64)  # the 64-bit single-pass scan (two status words per tile) against CUB's, same types
      python3 bench/compare.py --bench "$bin" --reference "$build/cub-reference" --platform NVIDIA \
        --sizes 2^24,2^26,2^28 --types long,ulong,double | tee "$out/compare64.txt";;
    portable)  # the single-pass path every non-NVIDIA GPU runs, forced on the H100, against CUB
      python3 bench/compare.py --bench "$bin" --reference "$build/cub-reference" --platform NVIDIA \
        --sizes 2^26,2^28 --types uint,float --bench-args=--portable | tee "$out/portable.txt";;
    stress64)  # the 64-bit single-pass scan, every run validated: 12,000+ runs over odd sizes
      { for k in inclusive exclusive; do
          "$bin" $nv --check --task scan --variant single-pass --scan-kind $k --format csv \
            --size 1,2,3,31,1000,2047,4095,4096,4097,65537 --type long,ulong,double --validate-runs 200
          "$bin" $nv --check --task scan --variant single-pass --scan-kind $k --format csv \
            --size 1000003,2^20+1 --type long,double --op sum,min,max --validate-runs 40
          "$bin" $nv --check --task scan --variant single-pass --scan-kind $k --format csv \
            --size 2^26+3 --type ulong,double --validate-runs 5
        done; } | grep -v "^device" > "$out/stress64.csv"
      awk -F, '{ runs += $28; if ($0 ~ /,passed,/) ok++; else bad++ } END { printf "stress64: %d cases passed, %d not; %d validated runs\n", ok, bad, runs }' "$out/stress64.csv";;
    cpuref)  # issue 11: against what a CPU programmer would use, std::execution::par on the host
      python3 bench/compare.py --bench "$bin" --reference "$build/cpu-reference" --platform NVIDIA \
        --sizes 2^24,2^26,2^28 --types uint,float | tee "$out/compare-cpu.txt";;
    check31)  # issue 11: --check of the single-pass scan at 2^31, end to end (host side included)
      for t in uint float; do
        s=$EPOCHREALTIME
        "$bin" $nv --check --task scan --variant single-pass --scan-kind inclusive --size 2^31 \
          --type $t --format csv > "$out/check31-$t.csv" 2>&1; rc=$?; e=$EPOCHREALTIME
        echo "check 2^31 $t: exit $rc in $(awk "BEGIN { printf \"%.1f\", $e - $s }") s;" \
          "$(grep -c ,passed, "$out/check31-$t.csv") passed"
      done
      "$build/host-data-bench" --sizes 2^31 --types uint,float --threads 1,16 | tee "$out/host-data-2^31.jsonl";;
    stress)  # single-pass scan, every run validated (poisoned output, every element checked)
      { for k in inclusive exclusive; do
          "$bin" $nv --check --task scan --variant single-pass --scan-kind $k --format csv \
            --size 1,2,3,31,1000,2047,6143,6144,6145,65537 --type uint --validate-runs 500
          "$bin" $nv --check --task scan --variant single-pass --scan-kind $k --format csv \
            --size 1000003,2^20+1 --type int,float --op sum,max --validate-runs 100
          "$bin" $nv --check --task scan --variant single-pass --scan-kind $k --format csv \
            --size 2^24+1 --type uint --validate-runs 60
          "$bin" $nv --check --task scan --variant single-pass --scan-kind $k --format csv \
            --size 2^28+3 --type uint,float --validate-runs 6
        done; } | grep -v "^device" > "$out/stress.csv"
      awk -F, '{ runs += $28; if ($0 ~ /,passed,/) ok++; else bad++ } END { printf "stress: %d cases passed, %d not; %d validated runs\n", ok, bad, runs }' "$out/stress.csv";;
    trace)  # where a single-pass scan tile's time goes (docs/BENCHMARKS.md)
      { for n in 16777216 67108864; do
          "$build/scan-trace" --kernels kernels --n $n
          "$build/scan-trace" --kernels kernels --n $n --portable
          "$build/scan-trace" --kernels kernels --n $n --traced  # built with -DSP_TRACE=1
        done; } > "$out/trace.txt" 2>&1
      grep -E "Used|median" "$out/trace.txt";;
    isolation)  # the cost of worker processes (--isolate): the same runs in process and isolated
      for i in 1 2 3; do
        for m in "" "--isolate"; do
          for run in "--check --size 1000 --type all --op all" "--size 2^24"; do
            s=$EPOCHREALTIME; "$bin" $nv $run $m > /dev/null 2>&1; rc=$?; e=$EPOCHREALTIME
            echo "$run ${m:-in-process}: $(awk "BEGIN { printf \"%.2f\", $e - $s }") s (exit $rc)"
          done
        done
      done | tee "$out/isolation.txt";;
    ceilings)  # issue 10: every variant's utilisation over its own ceiling, and the intervals
      "$bin" $nv --format json --type uint,float --size 2^20,2^24,2^26,2^28 -o "$out/h100-all.json"
      echo "exit $?"
      python3 - "$out/h100-all.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); c = d["device"]["ceilings"]
print(f"ceilings GB/s: read {c['read_gbytes_s']:.0f} write {c['write_gbytes_s']:.0f} copy {c['copy_gbytes_s']:.0f} ({c['buffer_bytes'] >> 20} MiB)")
if c.get("near_cache_buffer_bytes"):
    print(f"  near the cache: read {c['near_cache_read_gbytes_s']:.0f} write {c['near_cache_write_gbytes_s']:.0f} copy {c['near_cache_copy_gbytes_s']:.0f} ({c['near_cache_buffer_bytes'] >> 20} MiB)")
rs = [r for r in d["results"] if r["utilisation"] > 0]
top = max(rs, key=lambda r: r["utilisation"])
print(f"highest utilisation: {100 * top['utilisation']:.1f}% {top['task']}/{top['variant']} {top['type']} n={top['n']} (fits in cache: {top['fits_in_cache']})")
over = [r for r in rs if r["utilisation"] > 1.05]
print(f"above 105%: {len(over)} of {len(rs)}: " + ", ".join(f"{r['task']}/{r['variant']} {r['type']} n={r['n']} {100 * r['utilisation']:.0f}%{' (cache)' if r['fits_in_cache'] else ''}" for r in over))
for r in rs:
    if r["variant"] == "single-pass":
        print(f"  {r['task']:<9} single-pass {r['type']:<5} n={r['n']:>9}: {r['gelem_s']:7.1f} Gelem/s, {100 * r['utilisation']:5.1f}% of {r['ceiling']} ({r.get('ceiling_stream_bytes', 0) >> 20} MiB streams), +-{100 * max(r['time_ms']['median'] - r['time_ms']['ci_low'], r['time_ms']['ci_high'] - r['time_ms']['median']) / r['time_ms']['median']:.1f}% ({r['iterations']} runs)")
missed = [r for r in rs if not r["ci_met"]]
print(f"interval target missed: {len(missed)} of {len(rs)}")
PY
      ;;
    robustness)  # issue 9 on the GPU: an out-of-bounds write, then the tests that judge kernels
      k=/tmp/oob-kernels; rm -rf $k; cp -r kernels $k
      python3 - "$k/Scan.cl" <<'PY'
import sys; p = sys.argv[1]; s = open(p).read()
s = s.replace("  dst[i] = v;\n  // SOLUTION END", "  dst[i + (1u << 31)] = v;\n  // SOLUTION END", 1)
open(p, "w").write(s)
PY
      for m in isolate no-isolate; do
        o=--$m; [ $m = isolate ] && o="--timeout 60"
        s=$EPOCHREALTIME
        "$bin" --platform NVIDIA --check --size 1,257,4097 --kernels $k $o --format csv \
          > "$out/oob-$m.csv" 2> "$out/oob-$m.err"; rc=$?; e=$EPOCHREALTIME
        echo "oob $m: exit $rc in $(awk "BEGIN { printf \"%.1f\", $e - $s }") s;" \
          "$(cut -d, -f10 "$out/oob-$m.csv" | sort | uniq -c | tr '\n' ' ')"
        grep -m2 "naive" "$out/oob-$m.csv" | cut -c1-300
      done
      "$bin" $nv --check --size 1000 > /dev/null 2>&1; echo "a clean check right after: exit $?"
      (cd "$build" && RSB_TEST_PLATFORM=NVIDIA ctest -R "Grade|Robust|BrokenKernel|CheckMatrix|Cli" \
        -j4 --timeout 400 --output-on-failure > "$out/ctest-robust.log" 2>&1
       grep -E "tests passed|tests failed|\(Failed\)|Timeout|Not Run" "$out/ctest-robust.log");;
    sizes)  # every reduction and scan variant against n (uint): docs/USAGE.md's plot (issue 10)
      "$bin" $nv --task reduction,scan --type uint --size 2^12,2^16,2^20,2^22,2^24,2^26,2^28 \
        --time-budget 0.25 --format json -o "$out/h100-sizes.json"; echo "exit $?"
      "$bin" plot "$out/h100-sizes.json" -o "$out/h100-sizes.png" || echo "plot: exit $?";;
    default)  # docs/BENCHMARKS.md's H100 sample: the default run on the GPU
      "$bin" --platform NVIDIA 2>/dev/null | tee "$out/h100-default.txt";;
    breakdown)  # per-kernel breakdown (docs/BENCHMARKS.md): does keeping every event cost
      # anything (the default run, every event kept with --breakdown against --no-breakdown,
      # four pairs), then every variant at 2^24 kernel by kernel (the table)
      for i in 1 2 3 4; do  # the order inside a pair swapped every pair
        every=("$bin" $nv --breakdown --format json -o "$out/breakdown-every-$i.json")
        spanonly=("$bin" $nv --no-breakdown --format json -o "$out/breakdown-spanonly-$i.json")
        if [ $((i % 2)) = 1 ]; then "${every[@]}"; "${spanonly[@]}"; else "${spanonly[@]}"; "${every[@]}"; fi
      done
      python3 bench/breakdown_ab.py --every "$out"/breakdown-every-*.json \
        --span-only "$out"/breakdown-spanonly-*.json | tee "$out/breakdown-ab.txt"
      # the default run is every variant at 2^24: the first run's JSON as Markdown for the docs
      python3 bench/report.py --breakdown "$out/breakdown-every-1.json" > "$out/h100-breakdown-2^24.md"
      "$bin" $nv --breakdown | tee "$out/h100-breakdown-2^24.txt"
      echo "exit $?";;
    conv)  # convolution at 2^26 (1-D) and 8192x8192 (2-D), masks 5 and 9, float; NPP's 2-D filter
      npp=$build/npp-reference
      if [ ! -x "$npp" ] && command -v nvcc > /dev/null; then  # no NPP on the build machine
        cudalib=$(dirname "$(command -v nvcc)")/../lib64
        nvcc -O3 -std=c++17 -arch=sm_90 -o "$out/npp-reference" bench/npp_reference.cu -lnppif -lnppc \
          -Xlinker -rpath -Xlinker "$cudalib" \
          > "$out/npp-build.log" 2>&1 && npp=$out/npp-reference || tail -3 "$out/npp-build.log"
      fi
      "$bin" $nv --task convolution --type float --size 2^26,8192x8192 --mask-width 5,9 \
        --format json -o "$out/conv.json"; echo "exit $?"
      for L in 128 512; do  # the default local size is 256
        "$bin" $nv --task convolution --type float --size 2^26,8192x8192 --mask-width 5,9 \
          --local-size $L --time-budget 0.3 --format json -o "$out/conv-local$L.json"
      done
      for k in 1 2 8; do  # outputs (rows in 2-D) per work-item of the tiled variants (default 4)
        "$bin" $nv --task convolution --variant tiled-1d,cached-1d,tiled-2d --type float \
          --size 2^26,8192x8192 --mask-width 5,9 --tune convolution-items=$k --tune convolution-rows=$k --time-budget 0.3 \
          --format json -o "$out/conv-items$k.json"
      done
      if [ -x "$npp" ]; then "$npp" --width 8192 --height 8192 --masks 5,9 | tee "$out/npp.txt"
      else echo "npp-reference: not available (neither in $build nor buildable: no nvcc or NPP)"; fi
      python3 - "$out"/conv.json "$out"/conv-local*.json "$out"/conv-items*.json <<'PY' | tee "$out/conv.txt"
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path)); copy = d["device"]["copy_gbytes_s"]
    print(f"{path.split('/')[-1]}: copy {copy:.0f} GB/s")
    for r in d["results"]:
        shape = r.get("shape", str(r["n"])); items = r["tuning"].get("convolution-rows" if r["variant"] == "tiled-2d" else "convolution-items")
        print(f"  {r['variant']:<12} {shape:>10} mask {r['params']['mask-width']:>2} L {r['local_size']:>3} items {items} "
              f"{r['status']:<7} {r['time_ms']['median']:.4f} ms {r['gelem_s']:8.2f} Gelem/s "
              f"{r['gbytes_s']:8.1f} GB/s {100 * r['bandwidth_util']:4.0f}% of copy "
              f"{100 * r.get('utilisation', 0):4.0f}% of {r.get('ceiling', '?')}")
PY
      ;;
    conv2d)  # tiled-2d's register block (4 columns x convolution-rows rows a work-item) at local
      # sizes 128 and 256, masks 5 and 9, 8192x8192 float; ptxas's registers for each build; the
      # FP32 multiply-add rate the device sustains (bench/probes/fma_probe.cpp), mask 9's ceiling
      g++ -std=c++17 -O1 -o "$out/fma-probe" bench/probes/fma_probe.cpp -lOpenCL 2> /dev/null \
        && "$out/fma-probe" | tee "$out/fma-probe.txt"
      for m in 5 9; do for k in 2 4 8; do
        "$build/kernel-info" --kernels kernels --platform NVIDIA --task convolution --variants tiled-2d \
          --type float --local-sizes 128,256 --set mask-width=$m,convolution-rows=$k | grep tiled-2d \
          | sed "s/^/mask $m rows $k: /"
      done; done | tee "$out/conv2d-registers.txt" | cut -c1-160
      for L in 128 256; do for k in 1 2 4 8; do
        "$bin" $nv --format csv --task convolution --variant tiled-2d --type float --size 8192x8192 \
          --mask-width 5,9 --local-size $L --tune convolution-rows=$k --time-budget 0.3 \
          | awk -F, 'NR > 1 && $34 == ""' | cut -d, -f10,18,23 | tr '\n' ' ' | sed "s/^/L=$L rows=$k: /"; echo
      done; done | tee "$out/conv2d.txt";;
    sass)  # tiled-2d's machine code (KERNELS=DIR, default kernels; SET="mask-width=9,..." as
      # kernel-info's --set): the driver's PTX (kernel-info --binaries), ptxas's registers for it,
      # the SASS (cuobjdump), the highest register each 4 KiB of code uses, which shows where a
      # kernel's registers go (docs/BENCHMARKS.md, Convolution, H100: how the row pointer was found),
      # and the most frequent opcodes (in the code, not as executed); into $out/sass-SET/
      cuda=$(dirname "$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas | head -1)")
      set_=${SET:-mask-width=9}; d="$out/sass-$(echo "$set_" | tr '=,' '-_')"  # a folder per SET
      "$build/kernel-info" --kernels "${KERNELS:-kernels}" --platform NVIDIA --task convolution \
        --variants tiled-2d --type float --local-sizes 256 --set "$set_" --binaries "$d" | grep tiled-2d
      tr -d '\000' < "$d/tiled-2d-L256.bin" > "$d/tiled-2d.ptx"  # a trailing NUL
      "$cuda/ptxas" -arch=sm_90 -v -o "$d/tiled-2d.cubin" "$d/tiled-2d.ptx" 2>&1 \
        | grep -A3 "'ConvolutionTiled2D'" | grep Used
      "$cuda/cuobjdump" -sass -fun ConvolutionTiled2D "$d/tiled-2d.cubin" > "$d/tiled-2d.sass"
      python3 - "$d/tiled-2d.sass" <<'PY'
import re, sys
hi = {}   # 4 KiB of code -> the highest register an instruction there names (RZ is R255)
ops = {}  # opcode (without its predicate and modifiers) -> how many instructions
for line in open(sys.argv[1]):
    m = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(.*?);", line)
    if not m:
        continue
    ops[m.group(2)] = ops.get(m.group(2), 0) + 1
    regs = [int(r) for r in re.findall(r"\bR(\d+)\b", m.group(3))]
    if regs:
        k = int(m.group(1), 16) // 4096
        hi[k] = max(hi.get(k, 0), max(regs))
print("highest register by 4 KiB of code: " + " ".join(f"{k:x}000:R{v}" for k, v in sorted(hi.items())))
print(f"{sum(ops.values())} instructions: " + " ".join(f"{o} {c}" for o, c in sorted(ops.items(), key=lambda x: -x[1])[:16]))
PY
      rm -f "$d/tiled-2d-L256.bin" "$d/tiled-2d.cubin"; gzip -9f "$d/tiled-2d.ptx" "$d/tiled-2d.sass";;
    big)  # issue 11: past 2^31 with 64-bit indices, validated (every element checked): reduction and
      # scan, single-pass and a course variant, uint at 2^32 + 7 and double at 2^31 + 3 (16 GiB of
      # input each; the host holds the input and pieces of the read-back).
      for c in "uint 2^32+7" "double 2^31+3"; do set -- $c
        s=$EPOCHREALTIME
        "$bin" $nv --check --task reduction,scan --variant single-pass,unrolled,work-efficient \
          --type $1 --size $2 --format json -o "$out/big-$1.json"; rc=$?; e=$EPOCHREALTIME
        echo "$1 $2: exit $rc in $(awk "BEGIN { printf \"%.0f\", $e - $s }") s"
      done
      python3 - "$out"/big-*.json <<'PY'
import json, sys
for path in sys.argv[1:]:
    for r in json.load(open(path))["results"]:
        width = 64 if "-DRSB_INDEX64=1" in r["kernel_options"] else 32
        print(f"  {r['task']}/{r['variant']} {r['type']} n={r['n']}: {r['status']}, {width}-bit "
              f"indices, {r['validated_runs']} validated runs {r['message'][:120]}")
PY
      ;;
    index-ab)  # issue 11: the 32-bit build against the one before it (BASE_BUILD, built from
      # d99b4b2), single-pass at 2^28, interleaved; then the forced 64-bit build for comparison
      base=${BASE_BUILD:?"index-ab needs BASE_BUILD, a build of d99b4b2"}
      for i in 1 2 3 4 5; do
        for b in "$base/reduce-scan-bench" "$bin" "$bin --tune index-bits=64"; do
          $b $nv --task reduction,scan --variant single-pass --type uint,float --size 2^28 \
            --time-budget 1 --format csv | awk -F, -v b="$b" 'NR > 1 && $34 == "" { print b "," $3 "," $5 "," $13 "," $18 }'
        done
      done | tee "$out/index-ab.csv"
      python3 - "$out/index-ab.csv" <<'PY'
import csv, statistics, sys
rows = {}  # (task, type) -> build -> medians of the 5 rounds
for b, task, typ, ms, ge in csv.reader(open(sys.argv[1])):
    rows.setdefault((task, typ), {}).setdefault(b, []).append(float(ms))
for (task, typ), by in rows.items():
    meds = [(b, statistics.median(v)) for b, v in by.items()]
    base = meds[0][1]  # BASE_BUILD, the first of each round
    print(f"{task} {typ} 2^28: " + "; ".join(f"{b}: {m:.4f} ms ({m / base:.4f} of base)" for b, m in meds))
PY
      ;;
    *) echo "unknown stage $stage";;
  esac
done
