#!/usr/bin/env bash
# Grades a made-up class of ${N:-200} (bench/make-class, seed 7) on the GPU machine's NVIDIA
# device in one run with --jobs ${JOBS:-16}, against the shipped rubric with its Oclgrind gates
# off (the GPU machine has no Oclgrind), --sandbox none (no bubblewrap there), and checks every
# hand-in's total against the generator's expectation. Stops after ${LIMIT:-420} s. Reports and
# logs go to $OUT. Used for docs/BENCHMARKS.md ("Grading a class at scale").
set -e
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null || true; export OCL_ICD_VENDORS=/tmp/icd
mkdir -p $OUT
{ nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s)
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=OFF -DRSB_BUILD_REFERENCES=OFF >/dev/null && cmake --build build-dev -j16 >/dev/null 2>&1 || { echo build failed; cmake --build build-dev -j16 2>&1 | tail -20; exit 1; }
echo "build $(( $(date +%s) - t0 )) s" | tee -a $OUT/machine.txt
python3 bench/make-class /tmp/class ${N:-200} --seed 7
python3 - <<'PY'
import json; r=json.load(open('grading/rubric.json'))
for it in r['items']:
    it['oclgrind']='off'; it.pop('work_ceiling',None); it.pop('oclgrind_case',None)
r['name']+=' (no Oclgrind: not installed on this machine)'
json.dump(r,open('/tmp/rubric-gpu.json','w'),indent=1)
PY
/usr/bin/time -f "grade: %e s wall, %U s user, %S s sys" -o $OUT/time.txt \
  timeout ${LIMIT:-420} build-dev/reduce-scan-bench grade --platform NVIDIA --sandbox none \
  --jobs ${JOBS:-16} --rubric /tmp/rubric-gpu.json --output-dir $OUT/grades /tmp/class/*/ \
  2>$OUT/grade.log || true
cat $OUT/time.txt; grep -c "^\[" $OUT/grade.log || true; tail -3 $OUT/grade.log
cp /tmp/class/class.json $OUT/
python3 bench/make-class /tmp/class --check $OUT/grades 2>&1 | tail -5 || true
