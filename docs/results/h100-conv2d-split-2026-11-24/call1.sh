set -u
out=${OUT:-gpu-out}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
bin=build-gpu/reduce-scan-bench
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "=== registers ($(date -u +%T))"
for k in kernels .carry/k-split; do for m in 5 9; do
  build-gpu/kernel-info --kernels $k --platform NVIDIA --task convolution --variants tiled-2d --type float \
    --local-sizes 256 --set mask-width=$m 2>&1 | grep tiled-2d | sed "s|^|$k mask $m: |" | cut -c1-170
done; done
mkdir -p /tmp/bin && build-gpu/kernel-info --kernels .carry/k-split --platform NVIDIA --task convolution --variants tiled-2d --type float --local-sizes 256 --set mask-width=9 --binaries /tmp/bin >/dev/null 2>&1
for f in /tmp/bin/*; do tr -d '\000' < "$f" > /tmp/k.ptx; /usr/local/cuda/bin/ptxas -arch=sm_90 -v /tmp/k.ptx -o /tmp/k.cubin 2>&1 | grep -E "ConvolutionTiled2D|registers" | head -4; done
echo "=== A/B 8192x8192 float tiled-2d, tree vs split, interleaved, Gelem/s mask 5 then 9 ($(date -u +%T))"
for r in 1 2 3; do for k in kernels .carry/k-split; do
  echo "$k: $($bin --kernels $k --platform NVIDIA -q --format csv --task convolution --variant tiled-2d --type float --size 8192x8192 --mask-width 5,9 --time-budget 0.3 | awk -F, 'NR > 1 && $34 == ""' | cut -d, -f10,18 | tr '\n' ' ')"
done; done | tee $out/ab.txt
# decide: split's best mask-9 figure against the tree's, and mask 5 not below 98%
verdict=$(awk '{ split($2,a,","); split($3,b,","); if ($1 ~ /split/) { s5 = (a[2] > s5 ? a[2] : s5); s9 = (b[2] > s9 ? b[2] : s9) } else { t5 = (a[2] > t5 ? a[2] : t5); t9 = (b[2] > t9 ? b[2] : t9) } } END { printf "%s tree %.1f/%.1f split %.1f/%.1f", (s9 > 1.04 * t9 && s5 > 0.98 * t5) ? "split" : "tree", t5, t9, s5, s9 }' $out/ab.txt)
echo "verdict: $verdict"
case $verdict in split*) cp .carry/k-split/Convolution.cl kernels/Convolution.cl; echo "kernels/Convolution.cl is now the split kernel";; esac
echo "=== default convolution run ($(date -u +%T))"
$bin --platform NVIDIA --task convolution --type float --size 2^26,8192x8192 --mask-width 5,9 --format json -o $out/conv.json > $out/conv.txt 2>&1; echo "exit $?"
grep -E "tiled|ceiling|device" $out/conv.txt | cut -c1-160
echo "=== compare ($(date -u +%T))"
python3 bench/compare.py --bench $bin --reference build-gpu/cub-reference --platform NVIDIA --sizes 2^24,2^26,2^28 --types uint,float > $out/compare.txt 2>&1; echo "exit $?"; tail -14 $out/compare.txt
left=$(( 560 - ($(date +%s) - t0) - 100 ))
echo "=== tests, ${left}s left ($(date -u +%T))"
(cd build-gpu && RSB_TEST_PLATFORM=NVIDIA timeout $left ctest -j8 --timeout 200 --output-on-failure > $out/ctest-nvidia.log 2>&1; echo "ctest exit $?"; grep -E "tests passed|tests failed|\(Failed\)|Timeout|Total Test time" $out/ctest-nvidia.log)
date -u +%T
