#!/usr/bin/env bash
# Tuning on an NVIDIA GPU and measuring the profile it writes (docs/BENCHMARKS.md, "Tuning profiles"):
#   bench/gpu_tune.sh BUILD_DIR tune TAG         # `tune` with its default budget -> $OUT/TAG.json
#   bench/gpu_tune.sh BUILD_DIR measure PROFILE  # default settings against PROFILE, then CUB
# measure: the single-pass reduction and scan at 2^28 (uint, float, ulong, double) and the tiled
# and cached convolutions at mask 5 (2^28, 8192x8192), each with --no-profile and with --profile PROFILE (Gelem/s
# and % of the device's ceiling), then bench/compare.py against CUB with the profile.
set -uo pipefail
build=$1; stage=$2; arg=$3
out=${OUT:-gpu-out}; mkdir -p "$out"
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
bin=$build/reduce-scan-bench
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)
case $stage in
  tune)
    s=$(date +%s)
    "$bin" tune --platform NVIDIA -o "$out/$arg.json" \
      --note "$gpu; reduce-scan-bench tune, default budget (300 s); $(date -u +%F)" \
      > "$out/tune-$arg.txt" 2> "$out/tune-$arg.log"
    echo "tune: exit $?, $(( $(date +%s) - s )) s"; cat "$out/tune-$arg.txt";;
  measure)
    for how in "--no-profile" "--profile $arg"; do
      tag=$([ "$how" = --no-profile ] && echo default || echo profile)
      "$bin" --platform NVIDIA -q $how --task reduction,scan --variant single-pass \
        --type uint,float,ulong,double --size 2^28 --format json > "$out/sp-$tag.json"
      "$bin" --platform NVIDIA -q $how --task convolution --variant tiled-1d,cached-1d,tiled-2d \
        --size 2^28,8192x8192 --mask-width 5 --format json > "$out/conv-$tag.json"
    done
    python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def rows(tag):
    r = {}
    for f in ("sp", "conv"):
        for x in json.load(open(f"{out}/{f}-{tag}.json"))["results"]:
            key = f'{x["task"]}/{x["variant"]} {x["type"]} n={x["n"]}'
            r[key] = (x["status"], x.get("gelem_s") or 0, x.get("utilisation"),
                      x.get("local_size"), x.get("settings", {}).get("source"))
    return r
d, p = rows("default"), rows("profile")
print(f'{"case":44} {"default":>16} {"profile":>16}  local  source')
for k in d:
    a, b = d[k], p.get(k, ("-", 0, None, None, None))
    pct = lambda v: f"{100*v:.0f}%" if isinstance(v, (int, float)) else "-"
    print(f"{k:44} {a[1]:8.1f} {pct(a[2]):>6} {b[1]:9.1f} {pct(b[2]):>6}  {b[3]}  {b[4]} {a[0]}/{b[0]}")
PY
    for t in "uint,float" "ulong,double"; do
      python3 bench/compare.py --bench "$bin" --reference "$build/cub-reference" --platform NVIDIA \
        --sizes 2^24,2^26,2^28 --types $t --bench-args="--profile=$arg" | tee -a "$out/compare.txt"
    done;;
esac
