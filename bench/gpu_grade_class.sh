#!/usr/bin/env bash
# Grades made-up classes (bench/make-class, seed 7) on the GPU machine's NVIDIA device against
# the shipped rubric with its Oclgrind gates off (the GPU machine has no Oclgrind) and
# --sandbox none (no bubblewrap there), and checks every hand-in's total against the generator's
# expectation. Used for docs/BENCHMARKS.md ("Grading a class").
#
#   bench/gpu_grade_class.sh "TAG N HOST_SHARE JOBS LIMIT_S [GRADE OPTIONS...]" ...
#
# One grading run per quoted argument, each of a fresh class and with fresh kernel caches, e.g.
# "r16 200 0.2 16 420 --resident-runs on". Per run, $OUT/TAG.txt holds the machine, the time
# (wall, user, sys), hand-ins graded, the grader's last lines and make-class --check's verdict;
# $OUT/TAG-summary.csv the class's summary, $OUT/TAG-trace.csv its child runs (grade --trace). $OUT/machine.txt: nproc, GPU, build time.
set -e
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null || true; export OCL_ICD_VENDORS=/tmp/icd
mkdir -p $OUT
{ nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; git log --oneline -1 2>/dev/null || true; } | tee $OUT/machine.txt
t0=$(date +%s)
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=OFF -DRSB_BUILD_REFERENCES=OFF >/dev/null && cmake --build build-dev -j16 >/dev/null 2>&1 || { echo build failed; cmake --build build-dev -j16 2>&1 | tail -20; exit 1; }
echo "build $(( $(date +%s) - t0 )) s" | tee -a $OUT/machine.txt
python3 scripts/rubric-without-oclgrind grading/rubric.json /tmp/rubric-gpu.json
for spec in "$@"; do
  read -r tag n share jobs limit extra <<< "$spec"
  rm -rf /tmp/class /tmp/grades /tmp/gcache; mkdir -p /tmp/gcache
  python3 bench/make-class /tmp/class $n --seed 7 --host-share $share >/dev/null
  f=$OUT/$tag.txt
  echo "== $tag: $n hand-ins (host share $share), --jobs $jobs, limit $limit s, $extra" | tee $f
  set +e
  XDG_CACHE_HOME=/tmp/gcache /usr/bin/time -f "grade: %e s wall, %U s user, %S s sys" -o /tmp/time.txt \
    timeout $limit build-dev/reduce-scan-bench grade --platform NVIDIA --sandbox none \
    --jobs $jobs $extra --trace /tmp/trace.csv --rubric /tmp/rubric-gpu.json --output-dir /tmp/grades /tmp/class/*/ \
    2>/tmp/grade.log
  set -e
  { cat /tmp/time.txt; echo "graded: $(grep -c '^\[' /tmp/grade.log || true)"; head -4 /tmp/grade.log; tail -4 /tmp/grade.log
    python3 bench/make-class /tmp/class --check /tmp/grades 2>&1 | tail -4 || true; } | tee -a $f
  cp /tmp/grades/summary.csv $OUT/$tag-summary.csv 2>/dev/null || true
  cp /tmp/trace.csv $OUT/$tag-trace.csv 2>/dev/null || true
done
