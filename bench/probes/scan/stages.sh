#!/usr/bin/env bash
# Issue 29: the single-pass scan's tile passed through local memory in parts (scan-gpu-stages,
# kernels/SinglePassTile.clh) against the tile in one piece, on the lent NVIDIA machine:
#   bash bench/probes/scan/stages.sh BUILD_DIR [ROUNDS]     (PLATFORM, SIZE: NVIDIA, 2^28)
# Per round, each setting of the 64-bit and the 32-bit scans (--no-profile, so that only the
# command line's settings differ) with its Gelem/s and utilisation of the device's ceiling;
# JSON in $OUT/st-LABEL-ROUND.json.
set -uo pipefail
build=$1; rounds=${2:-2}
out=${OUT:-gpu-out}; mkdir -p "$out"
platform=${PLATFORM:-NVIDIA}; size=${SIZE:-2^28}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
bin=$build/reduce-scan-bench
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null; date -u
one() {  # LABEL ROUND ARGS...
  local label=$1 round=$2; shift 2
  timeout 300 "$bin" --platform "$platform" -q --no-profile --task scan --variant single-pass \
    --size "$size" --format json "$@" > "$out/st-$label-$round.json" 2> "$out/st-$label-$round.err" \
    || { echo "$label: exit $? $(tail -2 "$out/st-$label-$round.err")"; return; }
  python3 - "$out/st-$label-$round.json" "$label" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    t = x["tuning"]
    items = t.get("scan-gpu-items-64" if x["type"] in ("long", "ulong", "double") else "scan-gpu-items")
    print(f'{sys.argv[2]:10s} {x["type"]:6s} L={x["local_size"]:<4} items={items:<3} parts={t.get("scan-gpu-stages")} '
          f'{x["status"]:7s} {x.get("gelem_s") or 0:7.1f} Gelem/s  util {x.get("utilisation") or 0:.3f}')
PY
}
for round in $(seq "$rounds"); do
  echo "== round $round"
  one d64 "$round" --type ulong,double
  one s2-64 "$round" --type ulong,double --tune scan-gpu-stages=2
  one i32-64 "$round" --type ulong,double --tune scan-gpu-items-64=32
  one i32s4-64 "$round" --type ulong,double --tune scan-gpu-items-64=32 --tune scan-gpu-stages=4
  one l512-64 "$round" --type ulong,double --local-size 512
  one d32 "$round" --type uint,float
  one i64-32 "$round" --type uint,float --tune scan-gpu-items=64
  one l512-32 "$round" --type uint,float --local-size 512
done
date -u
