#!/usr/bin/env bash
# Where a GPU grading child's time goes when many start at once (docs/BENCHMARKS.md, "Grading
# throughput"): one process's cold and warm case lists of the shipped rubric, K processes that
# each only start and run a tiny case, K cold and 16 warm list processes at once. Each process's
# wall, user and system time; output in $OUT/probe.txt. Run on the GPU machine from the repository
# root: bash bench/probes/grading/contexts.sh
set +e
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null || true; export OCL_ICD_VENDORS=/tmp/icd
mkdir -p $OUT; exec > >(tee $OUT/probe.txt) 2>&1
nproc; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DRSB_CUDA_ARCH=90 -DRSB_BUILD_TESTS=OFF -DRSB_BUILD_REFERENCES=OFF >/dev/null && cmake --build build-dev -j16 >/dev/null 2>&1 || { echo build failed; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
python3 bench/probes/grading/expand_rubric.py grading/rubric.json /tmp/red.json /tmp/scan.json
B=$PWD/build-dev/reduce-scan-bench
one() { # dir casefile
  mkdir -p $1; timeout 60 /usr/bin/time -f "%e %U %S" -o $1/time env CUDA_CACHE_PATH=$1/nv $B --kernels kernels --cases $2 --check --no-isolate --validate-runs 2 --seed 1 --format json --output $1/out.json -q --no-profile --platform NVIDIA >$1/log 2>&1 || echo "rc $? in $1: $(tail -2 $1/log)"; }
triv() { mkdir -p $1; timeout 60 /usr/bin/time -f "%e %U %S" -o $1/time env CUDA_CACHE_PATH=/tmp/warm/nv $B --task reduction --variant sequential --size 1024 --type uint --check --no-isolate -q --no-profile --platform NVIDIA --format json --output $1/out.json >$1/log 2>&1 || echo "rc $? $1"; }
summ() { python3 - "$@" <<'PY'
import sys,glob
w=[list(map(float,open(f).read().split())) for f in sys.argv[2:]]
print(f"{sys.argv[1]:34s} procs {len(w):2d}  wall each med {sorted(x[0] for x in w)[len(w)//2]:6.2f} max {max(x[0] for x in w):6.2f}  user {sum(x[1] for x in w):6.1f} sys {sum(x[2] for x in w):6.1f}")
PY
}
for f in red scan; do
  one /tmp/c1-$f /tmp/$f.json; summ "cold $f x1" /tmp/c1-$f/time
  cp -r /tmp/c1-$f/nv /tmp/keep-$f-nv
  one /tmp/c1-$f /tmp/$f.json; summ "warm $f x1" /tmp/c1-$f/time
done
mkdir -p /tmp/warm; triv /tmp/warm; cat /tmp/warm/time /tmp/warm/log | tail -5
for K in 1 4 16; do
  s=$(date +%s.%N); for i in $(seq $K); do triv /tmp/t$K-$i & P="$P $!"; done; wait $P; P=
  summ "trivial run (context) x$K" /tmp/t$K-*/time; echo "  batch wall $(python3 -c "print(round($(date +%s.%N)-$s,2))")"
done
for K in 4 16; do
  s=$(date +%s.%N); for i in $(seq $K); do one /tmp/r$K-$i /tmp/red.json & P="$P $!"; done; wait $P; P=
  summ "cold red list x$K" /tmp/r$K-*/time; echo "  batch wall $(python3 -c "print(round($(date +%s.%N)-$s,2))")"
done
K=16; for i in $(seq $K); do rm -rf /tmp/w$i; mkdir -p /tmp/w$i; cp -r /tmp/keep-red-nv /tmp/w$i/nv; done
s=$(date +%s.%N); for i in $(seq $K); do one /tmp/w$i /tmp/red.json & P="$P $!"; done; wait $P; P=
summ "warm red list x16" /tmp/w*/time; echo "  batch wall $(python3 -c "print(round($(date +%s.%N)-$s,2))")"
grep -h '"status"' /tmp/c1-red/out.json | sort | uniq -c | head -5
