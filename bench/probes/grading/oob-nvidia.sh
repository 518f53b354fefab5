#!/usr/bin/env bash
# What an out-of-bounds store (GradeTests' oob hand-in) does on NVIDIA: a fresh process's case
# list, the isolated run, and grade with and without residents (2026-11-25, issue 28).
set -u
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
[ -x build-dev/reduce-scan-bench ] || { cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=OFF -DRSB_BUILD_REFERENCES=OFF >/dev/null && cmake --build build-dev -j16 >/dev/null 2>&1; }
B=build-dev/reduce-scan-bench
H=/tmp/oob; rm -rf $H; mkdir -p $H; cp -r kernels $H/
python3 - <<'PY'
p='/tmp/oob/kernels/Scan.cl'; s=open(p).read()
a="  dst[i] = v;\n  // SOLUTION END"; assert a in s
open(p,'w').write(s.replace(a,"  dst[i + (1u << 31)] = v;\n  // SOLUTION END",1))
PY
A="--platform NVIDIA --kernels $H/kernels --task scan --variant naive --size 1,257,4097 --scan-kind inclusive,exclusive --type uint --op sum --check -q --no-profile"
for mode in "--no-isolate" ""; do
  echo "== case list $mode"; s=$(date +%s.%N)
  timeout 90 $B $A $mode 2>&1 | tail -8; echo "exit ${PIPESTATUS[0]} after $(python3 -c "import time;print(round(time.time()-$s,1))") s"
done
echo "== one case n=257 alone"; s=$(date +%s.%N)
timeout 60 $B $A --size 257 --scan-kind inclusive --no-isolate 2>&1 | tail -4; echo "exit ${PIPESTATUS[0]} after $(python3 -c "import time;print(round(time.time()-$s,1))") s"
cat > /tmp/r.json <<'J'
{"name": "t", "items": [{"id": "scan-naive", "task": "scan", "variant": "naive", "points": 2,
 "cases": [{"sizes": [1, 257, 4097], "scan_kinds": ["inclusive", "exclusive"]}]}]}
J
for rr in off on; do
  echo "== grade --resident-runs $rr"; s=$(date +%s.%N)
  timeout 200 $B grade --platform NVIDIA --sandbox none --resident-runs $rr --rubric /tmp/r.json --output-dir /tmp/g-$rr $H --trace /tmp/t-$rr.csv 2>&1 | tail -3
  echo "exit ${PIPESTATUS[0]} after $(python3 -c "import time;print(round(time.time()-$s,1))") s"
  python3 -c "import json;j=json.load(open('/tmp/g-$rr/oob.json'));i=j['items'][0];print(i['status'],'|',i['detail'][:300])"
  cat /tmp/t-$rr.csv
done
