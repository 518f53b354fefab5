#!/usr/bin/env bash
# One device call (issue 28, 2026-11-25): build with tests, the RunProcess tests and a subset of
# GradeTests on the NVIDIA device, then the kernel-only class of 96 with resident runs.
set -u
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
mkdir -p $OUT
t0=$(date +%s)
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_REFERENCES=OFF >/dev/null && cmake --build build-dev -j16 >$OUT/build.log 2>&1 || { echo build failed; tail -30 $OUT/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export RSB_TEST_PLATFORM=NVIDIA
build-dev/tests/SandboxTests --gtest_filter='RunProcess.*' 2>&1 | tail -4 | tee $OUT/sandbox-tests.txt
timeout 300 build-dev/tests/GradeTests --gtest_filter='Grade.JobsGiveExactlyThePointsOfOneAtATime:Grade.SuiteKernelsGetFullPointsAndTheSamePointsOnAReRun:Grade.WrongKernelFailsWithFirstWrongIndexAndTheSummaryHasOneRowPerHandIn:Grade.OutOfBoundsWriteThatCrashesTheChildIsAnErrorOfThatItem:Grade.EndlessLoopTimesOutAndTheGraderFinishesSoonAfter:Grade.ResidentRunsAnswerAsChildProcessesWould' > $OUT/grade-tests.txt 2>&1
echo "GradeTests subset exit $?"; grep -E "^\[  (     OK|FAILED|  PASSED|  SKIPPED) " $OUT/grade-tests.txt | head -20
echo "at $(( $(date +%s) - t0 )) s"
if [ $(( $(date +%s) - t0 )) -lt 380 ]; then
  bash bench/gpu_grade_class.sh "k16 96 0 16 180 --resident-runs on" 2>&1 | tail -12
else
  echo "no time left for the class of 96"
fi
