#!/usr/bin/env bash
# Issue 28, device calls of 2026-11-27: the tree with --check-platform and --worker-timer (whose
# first device call's output was lost with its session) measured again on the H100.
#   stage a: build with tests and CUB; the single-pass ratios against CUB at 2^28 (the run layer
#            changed: a timed run may be told the timer's verdict); every test but the grader's
#            on the NVIDIA device;
#   stage b: the grader's tests on the NVIDIA device; the kernel-only class of 96 with residents
#            (bench/gpu_grade_class.sh k16), for the 60-a-minute target.
# Usage: bench/probes/grading/issue28-gpu-call4.sh a|b      Output in $OUT.
# As run that day: stage a's build and CUB part as here (its ctest line then wrote to a wrong
# path), then its ctest, stage b's ctest and the class as commands of their own on the same
# machine (the same lines), and HandoutAndHandin again after the fixes 42ff34c and c431219.
set -u
stage=${1:?a or b}
out=${OUT:-gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
date -u; t0=$(date +%s); git log --oneline -1
b=build-dev
{ cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=ON -DRSB_BUILD_REFERENCES=ON && cmake --build $b -j16; } > "$out/build-$stage.log" 2>&1 || { tail -30 "$out/build-$stage.log"; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
if [ "$stage" = a ]; then
  timeout 200 python3 bench/compare.py --bench $b/reduce-scan-bench --reference $b/cub-reference \
    --platform NVIDIA --sizes 2^28 --types uint,float,ulong,double --variants single-pass \
    > "$out/cub.txt" 2>&1; tail -9 "$out/cub.txt"
  echo "at $(( $(date +%s) - t0 )) s"
  (cd $b && RSB_TEST_PLATFORM=NVIDIA timeout 380 ctest -j8 -E '^Grade\.' --timeout 300 > "$out/ctest-a.txt" 2>&1)
  echo "ctest exit $?"; grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" "$out/ctest-a.txt" | head -20
else
  (cd $b && RSB_TEST_PLATFORM=NVIDIA timeout 420 ctest -j4 -R '^Grade\.|HandoutAndHandin' --timeout 320 --output-on-failure > "$out/ctest-b.txt" 2>&1)
  echo "ctest exit $?"; grep -E "tests passed|tests failed|\*\*\*Failed|Timeout|Not Run" "$out/ctest-b.txt" | head -20
  echo "at $(( $(date +%s) - t0 )) s"
  OUT=$out/class bash bench/gpu_grade_class.sh "k16 96 0 16 170 --resident-runs on" 2>&1 | tail -6
fi
echo "at $(( $(date +%s) - t0 )) s"
