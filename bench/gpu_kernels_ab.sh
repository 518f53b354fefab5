#!/usr/bin/env bash
# Two kernel folders against each other on the lent NVIDIA machine, each against CUB, in turn:
#   bench/gpu_kernels_ab.sh BUILD_DIR KERNELS_A KERNELS_B [ROUNDS]   (default 3 rounds)
# e.g. main's kernels (git archive HEAD kernels) against an edited copy. Per round and folder,
# bench/compare.py runs the single-pass cases at 2^28 (uint, float, ulong, double, the device's
# profile, with its ceilings) and CUB; prints per case the utilisation and the ratio to CUB;
# the whole compare output goes to $OUT/ab-{a,b}-ROUND.txt. Builds BUILD_DIR first if it has no
# binary (CUDA architecture 90: the H100 and the H200).
set -u
build=$1; ka=$2; kb=$3; rounds=${4:-3}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
out=${OUT:-gpu-out}; mkdir -p "$out"
if [ ! -x "$build/reduce-scan-bench" ]; then
  { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=OFF \
      && cmake --build "$build" -j"$(nproc)"; } > "$out/build.log" 2>&1 \
    || { tail -30 "$out/build.log"; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
for round in $(seq "$rounds"); do
  for which in a b; do
    k=$([ $which = a ] && echo "$ka" || echo "$kb")
    python3 bench/compare.py --bench "$build/reduce-scan-bench" --reference "$build/cub-reference" \
      --platform NVIDIA --sizes 2^28 --types uint,float,ulong,double --variants single-pass \
      --bench-args "--kernels $k" > "$out/ab-$which-$round.txt" 2>&1
    echo "== $which ($k) round $round: $(grep -E '^(reduction|scan)' "$out/ab-$which-$round.txt" \
      | awk '{printf "%s/%s %s %.3fx | ", substr($1, 1, 3), $3, $7, $6 / $(NF - 1)}')"
  done
done
date -u
