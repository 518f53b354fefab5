#!/usr/bin/env bash
# kernel-info: bad input is exit 2 with one line naming it; a real run lists every kernel of the
# selected variants with the largest work-group the device allows for it and the size it declares.
#   tests/kernel_info_options.sh KERNEL_INFO_BINARY KERNELS_DIR
set -u
bin=$1
kernels=$2
fail=0
check() {  # expected-status text args...
  local want_rc=$1 want=$2 out rc; shift 2
  out=$("$bin" --kernels "$kernels" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -ne "$want_rc" ] || [[ $out != *"$want"* ]]; then
    echo "FAIL: $* -> exit $rc: $out (wanted exit $want_rc and '$want')"; fail=1
  fi
}
check 2 "--task 'sort'" --task sort
check 2 "--type 'char'" --type char
check 2 "--set 'mask-width=x'" --task convolution --set mask-width=x
check 2 "--set 'mask-widht=9'" --task convolution --set mask-widht=9
# Every value is checked before a device is chosen (a bad platform would be exit 3 otherwise),
# with what is allowed.
check 2 "--type 'char'" --platform no-such-platform-xyz --type char
check 2 "--task 'sort'" --platform no-such-platform-xyz --task sort
check 2 "allowed: mask-width=an odd number" --task convolution --set mask-width=4
check 2 "--set 'mask-width=0'" --task convolution --set mask-width=0
check 2 "--variants 'bogus': not a variant of reduction; allowed:" --variants bogus
check 2 "'3': not allowed; allowed: a power of two" --local-sizes 3
check 2 "'0': not allowed; allowed: a power of two" --local-sizes 64,0
check 2 "'big': not allowed" --local-sizes big
check 2 "--local-sizes '64,,128': an empty item" --local-sizes 64,,128
check 2 "--local-sizes '64,': an empty item" --local-sizes 64,
out=$("$bin" --kernels /no/such/folder 2>&1); rc=$?
if [ $rc -ne 2 ] || [[ $out != *"--kernels '/no/such/folder': no such folder"* ]]; then
  echo "FAIL: --kernels /no/such/folder -> exit $rc: $out"; fail=1
fi
# Without --kernels it finds the suite's kernels as reduce-scan-bench does (next to the binary,
# the build tree's sources, the install prefix), from any working folder: not ./kernels.
out=$(cd / && "$bin" --task scan --variants naive --local-sizes 64 2>&1); rc=$?
if [ $rc -ne 0 ] || [[ $out != *"naive"* ]]; then
  echo "FAIL: without --kernels, run from / -> exit $rc: $out"; fail=1
fi
# --set reaches the plan: tiled-2d's local tile at L = 64 (64 x 4K outputs) grows with the mask
# and the rows: (64 + 2 * 4) x (4 * 2 + 2 * 2) floats at mask 5 and 2 rows, 3456 bytes. The
# local-B column is what the driver reports for the kernel: pocl the tile's bytes, NVIDIA 16 more
# of its own (3472 on the H100, driver 580.159.04), so up to 64 bytes more are allowed.
out=$("$bin" --kernels "$kernels" --task convolution --variants tiled-2d --type float \
  --local-sizes 64 --set mask-width=5,convolution-rows=2 2>&1); rc=$?
bytes=$(echo "$out" | awk '$1 == "tiled-2d" { print $7 }')
if [ $rc -ne 0 ] || [ -z "$bytes" ] || [ "$bytes" -lt 3456 ] || [ "$bytes" -ge $((3456 + 64)) ]; then
  echo "FAIL: --set mask-width=5,convolution-rows=2 -> exit $rc, local bytes '$bytes', not 3456 (+ up to 63): $out"
  fail=1
fi
# --binaries DIR: each program as the driver returns it, one file per variant and local size.
dir=$(mktemp -d)
out=$("$bin" --kernels "$kernels" --task convolution --variants tiled-2d --type float \
  --local-sizes 32,64 --binaries "$dir/bin" 2>&1); rc=$?
for f in tiled-2d-L32.bin tiled-2d-L64.bin; do
  if [ $rc -ne 0 ] || [ ! -s "$dir/bin/$f" ]; then
    echo "FAIL: --binaries -> exit $rc, no $f: $(ls "$dir/bin" 2>&1) $out"; fail=1
  fi
done
# A folder that cannot be made (under a plain file): an error naming it, not a silent skip.
touch "$dir/file"
out=$("$bin" --kernels "$kernels" --task convolution --variants tiled-2d --type float \
  --local-sizes 64 --binaries "$dir/file/bin" 2>&1); rc=$?
if [ $rc -eq 0 ] || [[ $out != *"$dir/file/bin"* ]]; then
  echo "FAIL: --binaries under a plain file -> exit $rc, not an error naming the folder: $out"; fail=1
fi
rm -rf "$dir"
out=$("$bin" --kernels "$kernels" --task scan --variants work-efficient --local-sizes 64 2>&1); rc=$?
for want in "wg-max" "reqd" "ScanTileWorkEfficient" "AddBlockOffsets"; do
  if [ $rc -ne 0 ] || [[ $out != *"$want"* ]]; then
    echo "FAIL: --task scan --variants work-efficient -> exit $rc, no '$want': $out"; fail=1
  fi
done
exit $fail
