set -u
out=${OUT:-gpu-out}
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd && cp /etc/OpenCL/vendors/*.icd /tmp/icd/ 2>/dev/null; export OCL_ICD_VENDORS=/tmp/icd
if [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
bin=build-gpu/reduce-scan-bench
dirs="kernels .carry/k-split .carry/k-split-ni .carry/k-split-lm .carry/k-tree-lm"
echo "=== registers ($(date -u +%T))"
for k in $dirs; do for m in 5 9; do
  build-gpu/kernel-info --kernels $k --platform NVIDIA --task convolution --variants tiled-2d --type float \
    --local-sizes 256 --set mask-width=$m 2>&1 | grep tiled-2d | sed "s|^|$k mask $m: |" | grep -o "^.*mask [59]:\|Used.*" | tr '\n' ' '; echo
done; done | tee $out/registers.txt
echo "=== k-split PTX at mask 9: ld.const / ld.shared / st.shared / ld.global between barriers"
mkdir -p /tmp/bin && build-gpu/kernel-info --kernels .carry/k-split --platform NVIDIA --task convolution --variants tiled-2d --type float --local-sizes 256 --set mask-width=9 --binaries /tmp/bin >/dev/null 2>&1
f=$(ls /tmp/bin/* | head -1); tr -d '\000' < "$f" > $out/split.ptx
awk '/bar.sync/ { print "seg " s ": const " c " lds " l " sts " st " ldg " g " fma " f " bra " b; s++; c=l=st=g=f=b=0 } /ld.const/ {c++} /ld.shared/ {l++} /st.shared/ {st++} /ld.global/ {g++} /fma.rn/ {f++} /bra/ {b++} END { print "seg " s ": const " c " lds " l " sts " st " ldg " g " fma " f " bra " b }' $out/split.ptx
echo "=== A/B 8192x8192 float tiled-2d, Gelem/s mask 5 then 9 ($(date -u +%T))"
for r in 1 2; do for k in $dirs; do
  echo "$k: $($bin --kernels $k --platform NVIDIA -q --format csv --task convolution --variant tiled-2d --type float --size 8192x8192 --mask-width 5,9 --time-budget 0.3 | awk -F, 'NR > 1 && $34 == ""' | cut -d, -f10,18 | tr '\n' ' ')"
done; done | tee $out/ab2.txt
date -u +%T
