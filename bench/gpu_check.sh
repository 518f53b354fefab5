#!/usr/bin/env bash
# The suite on an NVIDIA GPU in one device call (docs/BENCHMARKS.md, "NVIDIA H100"):
#   bench/gpu_check.sh [BUILD_DIR]        (default build-gpu; output in $OUT, else gpu-out)
# 1. build with the tests and the CUB reference (-j16);
# 2. the single-pass reduction and scan against CUB at 2^24, 2^26, 2^28 (bench/compare.py;
#    uint, float, ulong, double; result files $OUT/cub-uint-float.json, cub-ulong-double.json
#    with CUB's lines in `reference`), and the default run ($OUT/default-run.json);
# 3. cases past the device's limits: every convolution variant at local sizes 512 and 1024 with
#    --tune convolution-items=8 and 12 (tiled-2d's tile then needs more local memory than the
#    device has): each passes or is skipped with the reason, none is an error;
# 4. the tests on the NVIDIA device (ctest, RSB_TEST_PLATFORM=NVIDIA; CTEST_EXCLUDE=REGEX leaves
#    some out, e.g. '^Grade\.|HandoutAndHandin' for the grader's, which take minutes).
# Prints a short table last: the CUB ratios, the limit cases' statuses, ctest's summary.
set -u
build=${1:-build-gpu}
out=${OUT:-gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
t0=$(date +%s); at() { echo "== $1 (at $(( $(date +%s) - t0 )) s)"; }
date -u; nvidia-smi -L; git log --oneline -1 2>/dev/null
at build
{ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=ON \
    -DRSB_BUILD_REFERENCES=ON && cmake --build "$build" -j16 && cmake --build "$build" \
    --target references -j16; } > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
bin=$build/reduce-scan-bench
at "single-pass against CUB"
for t in uint,float ulong,double; do
  timeout 200 python3 bench/compare.py --bench "$bin" --reference "$build/cub-reference" \
    --platform NVIDIA --sizes 2^24,2^26,2^28 --types $t --json-out "$out/cub-${t/,/-}.json" \
    > "$out/cub-${t/,/-}.txt" 2>&1
done
"$bin" --platform NVIDIA -q --format json -o "$out/default-run.json" > "$out/default-run.txt" 2>&1
at "cases past the device's limits"
for k in 8 12; do
  "$bin" --platform NVIDIA --check -q --task convolution --local-size 512,1024 --size 2^20,1024x1024 \
    --tune convolution-items=$k --format csv -o "$out/limits-$k.csv" 2> "$out/limits-$k.err"
  echo "convolution-items=$k: exit $?"
done
at "tests on the NVIDIA device"
(cd "$build" && RSB_TEST_PLATFORM=NVIDIA timeout "${CTEST_S:-330}" ctest -j8 --timeout 300 \
  ${CTEST_EXCLUDE:+-E "$CTEST_EXCLUDE"} > "$out/ctest.txt" 2>&1); echo "ctest exit $?"
at done
echo; cat "$out"/cub-*.txt | grep -vE '^\+ ' | tail -n 40
python3 - "$out" <<'PY'
import csv, sys
for k in (8, 12):
    rows = list(csv.DictReader(open(f"{sys.argv[1]}/limits-{k}.csv")))
    for r in rows:
        print(f'items={k} {r["variant"]:12} L={r["local_size"]:5} n={r["n"]:8} {r["status"]:8} '
              f'{(r.get("message") or "")[:90]}')
PY
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run|Skipped" "$out/ctest.txt" | head -30
