#!/usr/bin/env bash
# What a hand-in's two case lists (the shipped rubric's correctness cases, one child per task)
# cost on the CPU's OpenCL implementations: each list cold (empty caches) and warm, on pocl and
# on Mesa rusticl (llvmpipe), one at a time; then pocl's cold reduction list split by
# POCL_DEBUG=timing into its work-group functions' IR generation and code generation.
#   bench/probes/grading/list_costs.sh BINARY HANDIN_KERNELS OUT
set -u
bin=$(realpath "$1") kernels=$(realpath "$2") out=$(realpath -m "$3")
here=$(dirname "$(realpath "$0")")
mkdir -p "$out"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 "$here/expand_rubric.py" "$here/../../../grading/rubric.json" "$tmp/reduction.json" "$tmp/scan.json"
run() {  # platform list -> one line: wall, user, sys
  /usr/bin/time -o "$tmp/t" -f "%e s wall, %U s user, %S s sys" env XDG_CACHE_HOME="$tmp/cache" \
    POCL_CACHE_DIR="$tmp/cache/pocl" RUSTICL_ENABLE=llvmpipe "$bin" --kernels "$kernels" \
    --cases "$tmp/$2.json" --check --no-isolate --validate-runs 2 --seed 1 --format json \
    --output "$tmp/o.json" -q --no-profile --platform "$1" >/dev/null 2>"$tmp/err"
  echo "exit $?, $(cat "$tmp/t")"
}
{
  echo "$(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) ($(nproc) cores)"
  for platform in Portable rusticl; do
    for list in reduction scan; do
      rm -rf "$tmp/cache"
      echo "$platform $list cold: $(run $platform $list)"
      echo "$platform $list warm: $(run $platform $list)"
    done
  done
  rm -rf "$tmp/cache"
  POCL_DEBUG=timing run Portable reduction >/dev/null
  python3 - "$tmp/err" <<'PY'
import collections, re, sys
total, count = collections.defaultdict(float), collections.Counter()
unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r">>>\s+([\d.]+)\s+(ns|us|ms|s)\s+(.*)$", line)
    if m:
        total[m.group(3).strip()] += float(m.group(1)) * unit[m.group(2)]
        count[m.group(3).strip()] += 1
print("pocl, the reduction list cold, POCL_DEBUG=timing:")
for k, v in sorted(total.items(), key=lambda x: -x[1])[:6]:
    print(f"  {k:32s} {count[k]:5d} x, {v:7.3f} s")
PY
} | tee "$out/list-costs.txt"
