set -u
out=${OUT:-gpu-out}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
echo "=== build ($(date -u +%T))"
rm -rf /tmp/probe && mkdir -p /tmp/probe && tar --exclude=./build --exclude=./build-gpu --exclude=./.git -cf - . | (cd /tmp/probe && tar xf -)
sed -i 's/if (!v.passed) {/if (false) {/' /tmp/probe/common/Runner.cpp
( cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release > /tmp/c1.log 2>&1 && cmake --build build-gpu -j8 --target reduce-scan-bench kernel-info >> /tmp/c1.log 2>&1; echo main $? ) &
( cmake -S /tmp/probe -B /tmp/probe/b -DCMAKE_BUILD_TYPE=Release > /tmp/c2.log 2>&1 && cmake --build /tmp/probe/b -j8 --target reduce-scan-bench >> /tmp/c2.log 2>&1; echo probe $? ) &
wait
tail -3 /tmp/c1.log /tmp/c2.log
echo "=== built ($(date -u +%T))"
dirs="kernels .carry/k-stagger2 .carry/k-stagger4 .carry/k-nosums .carry/k-noload"
for k in $dirs; do for m in 5 9; do
  echo "$k mask $m: $(build-gpu/kernel-info --kernels $k --platform NVIDIA --task convolution --variants tiled-2d --type float --local-sizes 256 --set mask-width=$m 2>&1 | grep -o 'Used [0-9]* registers' | head -1)"
done; done | tee $out/registers.txt
echo "=== stagger kernels validated (normal binary)"
for k in .carry/k-stagger2 .carry/k-stagger4; do
  build-gpu/reduce-scan-bench --kernels $k --platform NVIDIA -q --task convolution --variant tiled-2d --type float,double --size 8192x8192,1000x77,4096x4093 --mask-width 5,9 --check 2>&1 | tail -2
done
echo "=== A/B 8192x8192 float tiled-2d, Gelem/s mask 5 then 9 ($(date -u +%T)); validation off (probe binary)"
for r in 1 2; do for k in $dirs; do
  echo "$k: $(/tmp/probe/b/reduce-scan-bench --kernels $k --platform NVIDIA -q --format csv --task convolution --variant tiled-2d --type float --size 8192x8192 --mask-width 5,9 --time-budget 0.3 | awk -F, 'NR > 1 && $34 == ""' | cut -d, -f10,18 | tr '\n' ' ')"
done; done | tee $out/ab.txt
date -u +%T
