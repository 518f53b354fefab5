#!/usr/bin/env bash
# The same class graded on pocl twice, with fresh caches: every child run on pocl, then the runs
# that only validate on Mesa rusticl (--check-platform rusticl) and the timed ones on pocl.
#   bench/probes/grading/check_platform_ab.sh BINARY CLASS OUT [JOBS]
# OUT/{pocl,rusticl}/ hold the reports, OUT/{pocl,rusticl}.txt the time and make-class --check's
# verdict, OUT/{pocl,rusticl}-trace.csv the child runs; the two summary.csv are compared.
set -u
bin=$(realpath "$1") class=$(realpath "$2") out=$(realpath -m "$3") jobs=${4:-2}
here=$(dirname "$(realpath "$0")")
mkdir -p "$out"
n=$(find "$class" -mindepth 1 -maxdepth 1 -type d | wc -l)
for side in pocl rusticl; do
  extra=(); [ $side = rusticl ] && extra=(--check-platform rusticl)
  cache=$(mktemp -d); rm -rf "$out/$side"
  { echo "$(date -u +%FT%TZ) $side: $bin, $n hand-ins, --jobs $jobs ${extra[*]}"
    XDG_CACHE_HOME=$cache/x POCL_CACHE_DIR=$cache/p RUSTICL_ENABLE=llvmpipe \
      /usr/bin/time -f "%e s wall, %U s user, %S s sys" "$bin" grade -q --jobs "$jobs" "${extra[@]}" \
      --trace "$out/$side-trace.csv" --output-dir "$out/$side" "$class"/*/ 2>&1 | tail -4
    python3 "$here/../../make-class" "$class" --check "$out/$side" | tail -1
  } | tee "$out/$side.txt"
  rm -rf "$cache"
done
if cmp -s "$out/pocl/summary.csv" "$out/rusticl/summary.csv"; then echo "summary.csv: identical"
else echo "summary.csv differs:"; diff "$out/pocl/summary.csv" "$out/rusticl/summary.csv"; fi
