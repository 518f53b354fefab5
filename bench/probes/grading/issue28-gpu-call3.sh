#!/usr/bin/env bash
# Issue 28, device call of 2026-11-25 (second session): build with tests and CUB, the
# single-pass ratios against CUB at 2^28 (the run layer changed: a timed run may be told the
# timer's verdict), the timer and grading tests that touch the change, then the kernel-only class
# of 96 with residents as before (bench/gpu_grade_class.sh, k16).   Output in $OUT.
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
date -u; t0=$(date +%s)
{ cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=ON -DRSB_BUILD_REFERENCES=ON && cmake --build build-dev -j16; } > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
b=build-dev; echo "build $(( $(date +%s) - t0 )) s"
timeout 200 python3 bench/compare.py --bench $b/reduce-scan-bench --reference $b/cub-reference \
  --platform NVIDIA --sizes 2^28 --types uint,float,ulong,double --variants single-pass \
  > "$out/cub.txt" 2>&1; tail -9 "$out/cub.txt"
echo "at $(( $(date +%s) - t0 )) s"
export RSB_TEST_PLATFORM=NVIDIA
$b/tests/RobustnessTests --gtest_filter='Timer.*' 2>&1 | tail -3
timeout 300 $b/tests/GradeTests --gtest_filter='Grade.JobsGive*:Grade.SpeedFloors*:Grade.CheckPlatform*:Grade.ShardsMerge*:Grade.SuiteKernels*' > "$out/grade-tests.txt" 2>&1
echo "GradeTests exit $?"; grep -E "^\[  (     OK|FAILED|  PASSED|SKIPPED) |Failure" "$out/grade-tests.txt" | head -20
echo "at $(( $(date +%s) - t0 )) s"
OUT=$out/class bash bench/gpu_grade_class.sh "k16 96 0 16 180 --resident-runs on" 2>&1 | tail -8
echo "at $(( $(date +%s) - t0 )) s"
