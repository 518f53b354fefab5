#!/usr/bin/env bash
# Issue 28, 2026-11-25: the kernel-only class of 96 with residents (k16) graded by the binary of
# f2f711b (the device copy's git HEAD) and of the working tree (build-dev), alternately, twice
# each, fresh caches: did this session's grader change its speed on the H100?   Output in $OUT.
set -u
out=${OUT:-gpu-out}; mkdir -p "$out"
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
git worktree add -f /tmp/base HEAD >/dev/null 2>&1; git -C /tmp/base log --oneline -1
(cmake -S /tmp/base -B /tmp/base/build -DCMAKE_BUILD_TYPE=Release -DRSB_BUILD_TESTS=OFF -DRSB_BUILD_REFERENCES=OFF && cmake --build /tmp/base/build -j16 --target reduce-scan-bench) > "$out/base-build.log" 2>&1 || { tail -20 "$out/base-build.log"; exit 1; }
cmake --build build-dev -j16 --target reduce-scan-bench > /dev/null 2>&1
python3 - <<'PY'
import json; r=json.load(open('grading/rubric.json'))
for it in r['items']:
    it['oclgrind']='off'; it.pop('work_ceiling',None); it.pop('oclgrind_case',None)
json.dump(r,open('/tmp/rubric-gpu.json','w'),indent=1)
PY
rm -rf /tmp/class; python3 bench/make-class /tmp/class 96 --seed 7 --host-share 0 >/dev/null
for round in 1 2; do for b in /tmp/base/build build-dev; do
  rm -rf /tmp/grades /tmp/gcache; mkdir -p /tmp/gcache; s=$(date +%s%N)
  XDG_CACHE_HOME=/tmp/gcache timeout 170 $b/reduce-scan-bench grade --platform NVIDIA --sandbox none --jobs 16 --resident-runs on --rubric /tmp/rubric-gpu.json --output-dir /tmp/grades /tmp/class/*/ 2>/dev/null
  echo "$b round $round: $(( ($(date +%s%N) - s) / 1000000 )) ms, $(python3 bench/make-class /tmp/class --check /tmp/grades 2>&1 | tail -1)"
done; done | tee "$out/ab.txt"
