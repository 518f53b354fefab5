#!/usr/bin/env bash
# One call's worth of GPU work on the lent NVIDIA machine (see docs/BENCHMARKS.md):
#   bench/gpu_session.sh BUILD_DIR STAGE...   stages: info tests bench compare stress
# BUILD_DIR is built on the developer machine with -DRSB_BUILD_REFERENCES=ON and carried.
# Results go to $OUT (or ./gpu-out) as JSON and logs; a short table is printed last.
set -uo pipefail
build=$1; shift
out=${OUT:-gpu-out}; mkdir -p "$out"
# The NVIDIA driver is not registered with the ICD loader there until we do it.
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd \
  && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
# The build folder holds absolute paths of the developer machine (/work/main): mirror them.
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
bin=$build/reduce-scan-bench
for stage in "$@"; do
  echo "=== $stage ($(date -u +%FT%TZ))"
  case $stage in
    info)
      nvidia-smi -L; clinfo -l 2>/dev/null; "$bin" --list-devices; ldd "$bin" | grep -i "not found";;
    tests)
      (cd "$build" && RSB_TEST_PLATFORM=NVIDIA ctest -j8 --timeout 600 2>&1 | tee "$out/ctest-nvidia.log" | grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run" );;
    tests-reduction)
      (cd "$build" && RSB_TEST_PLATFORM=NVIDIA ctest -j8 -R "Reduction|Cli|HostData" 2>&1 | tee "$out/ctest-nvidia.log" | grep -E "tests passed|tests failed|Failed|\*\*\*" );;
    bench)
      "$bin" --platform NVIDIA -q --format json --type uint,float --size 2^20,2^24,2^26,2^28 \
        --time-budget 0.3 -o "$out/h100-all.json"; echo "exit $?";;
    compare)
      python3 bench/compare.py --bench "$bin" --reference "$build/cub-reference" --platform NVIDIA \
        --sizes 2^24,2^26,2^28 --types uint,float --json-out "$out/h100-single-pass.json" | tee "$out/compare.txt";;
    *) echo "unknown stage $stage";;
  esac
done
