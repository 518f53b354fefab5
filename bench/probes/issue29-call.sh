#!/usr/bin/env bash
# Issue 29, one call on the lent NVIDIA machine (2026-11-25): build, the single-pass scan tests
# on the device, a 64-bit stress, scan-trace's uint and ulong speed at 2^28, CUB, then `tune`
# of tiled-2d into a copy of the device's shipped profile and the convolutions at mask 5 with
# and without it.  bash bench/probes/issue29-call.sh PROFILE [TUNE_BUDGET_S]   (output in $OUT)
# PHASES (default "tests stress trace cub tune conv") picks the parts; TUNE_ARGS adds to `tune`
# (e.g. "--size-class huge --type-bytes 4").
set -u
phases=" ${PHASES:-tests stress trace cub tune conv} "; has() { [[ $phases == *" $1 "* ]]; }
profile=$1; budget=${2:-170}; out=${OUT:-gpu-out}; mkdir -p "$out"
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
date -u; git log --oneline -1 | cut -c1-60
tests=ON; has tests || tests=OFF
{ cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=$tests \
    && cmake --build build-dev -j16; } > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
b=build-dev; date -u
has tests && RSB_TEST_PLATFORM=NVIDIA timeout 120 $b/tests/ScanTests --gtest_filter='*SinglePass*:*TileBytes*' \
  > "$out/scantests.txt" 2>&1 && tail -1 "$out/scantests.txt"; grep -s FAILED "$out/scantests.txt"
has stress && { timeout 200 $b/reduce-scan-bench --platform NVIDIA -q --task scan --variant single-pass \
  --type uint,long,ulong,double --op all --scan-kind all --size 1,4097,1000003,2^24+3 --check \
  --validate-runs 25 --format csv > "$out/stress.csv" 2> "$out/stress.err"
echo "stress rc=$?: $(grep -c ',passed,' "$out/stress.csv") cases passed (25 validated runs each), $(grep -c ',failed,' "$out/stress.csv") failed"; }
has trace && for t in uint ulong; do timeout 60 $b/scan-trace --type $t --n 2^28 --runs 20 2>&1 | tail -1; done
has cub && timeout 200 python3 bench/compare.py --bench $b/reduce-scan-bench --reference $b/cub-reference \
  --platform NVIDIA --sizes 2^28 --types uint,float,ulong,double --variants single-pass \
  > "$out/cub.txt" 2>&1 && tail -9 "$out/cub.txt"
if has tune; then
  tuned=$out/$(basename "$profile"); cp "$profile" "$tuned"; s=$(date +%s)
  timeout $((budget + 90)) $b/reduce-scan-bench tune --platform NVIDIA --variant tiled-2d \
    ${TUNE_ARGS:-} --budget "$budget" -o "$tuned" --note "$(nvidia-smi --query-gpu=name,driver_version \
    --format=csv,noheader); tiled-2d re-tuned with convolution-across, budget $budget s; $(date -u +%F)" \
    > "$out/tune.txt" 2> "$out/tune.log"
  echo "tune rc=$? $(( $(date +%s) - s )) s"; tail -8 "$out/tune.txt"; profile=$tuned
fi
has conv && for how in --no-profile "--profile $profile"; do
  timeout 90 $b/reduce-scan-bench --platform NVIDIA -q $how --task convolution \
    --variant tiled-1d,cached-1d,tiled-2d --size 2^28,8192x8192 --mask-width 5 --format json \
    > "$out/conv.json" 2> /dev/null
  python3 - "$out/conv.json" "${how%% *}" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    if (x["variant"] == "tiled-2d") != (x.get("height", 1) > 1):
        continue
    t = x["tuning"]
    print(f'{sys.argv[2]:12s} {x["variant"]:9s} n={x["n"]} L={x["local_size"]} {x["status"]} '
          f'{x.get("gelem_s") or 0:.1f} Gelem/s util {x.get("utilisation") or 0:.3f} '
          f'items={t.get("convolution-items")} rows={t.get("convolution-rows")} across={t.get("convolution-across")}')
PY
done
date -u
