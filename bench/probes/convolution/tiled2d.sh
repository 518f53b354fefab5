#!/usr/bin/env bash
# Issue 29: the tiled-2d convolution at mask 5 over its local sizes, rows per work-item and
# work-items across a tile, on the lent NVIDIA machine (--no-profile: only the command line's
# settings differ):
#   bash bench/probes/convolution/tiled2d.sh BUILD_DIR [SHAPE] [MASK]   (8192x8192, 5)
# SETTINGS: "L:rows:across ..." (default: L 64, 128, 256 x rows 4, 8, 16, across 16).
# One line per setting: Gelem/s and utilisation of the device's ceiling; JSON in $OUT/t2d-*.json.
set -uo pipefail
build=$1; shape=${2:-8192x8192}; mask=${3:-5}
out=${OUT:-gpu-out}; mkdir -p "$out"
platform=${PLATFORM:-NVIDIA}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
bin=$build/reduce-scan-bench
date -u
settings=${SETTINGS:-$(for L in 64 128 256; do for r in 4 8 16; do echo -n "$L:$r:16 "; done; done)}
for set in $settings; do
  IFS=: read -r L rows across <<< "$set"
  f=$out/t2d-L$L-r$rows-a$across.json
  timeout 120 "$bin" --platform "$platform" -q --no-profile --task convolution --variant tiled-2d \
    --size "$shape" --mask-width "$mask" --local-size "$L" --tune convolution-rows=$rows \
    --tune convolution-across=$across --format json > "$f" 2> "$f.err" \
    || { echo "L=$L rows=$rows across=$across: exit $? $(tail -1 "$f.err")"; continue; }
  python3 - "$f" "L=$L rows=$rows across=$across" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    print(f'{sys.argv[2]:26s} {x["type"]:6s} {x["status"]:7s} {x.get("gelem_s") or 0:7.1f} Gelem/s  util {x.get("utilisation") or 0:.3f}')
PY
done
date -u
