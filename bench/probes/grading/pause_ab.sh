#!/usr/bin/env bash
# The same class graded on a CPU device by two builds of the grader, in turn, with fresh caches:
# A waits for the other children before each timed run, B stops them (platform/ChildPause.h).
#   bench/probes/grading/pause_ab.sh BINARY_A BINARY_B CLASS OUT [JOBS]
# OUT/{a,b}/ hold the reports, OUT/{a,b}.txt the time and the grader's last lines, OUT/{a,b}-trace.csv
# the child runs; the two summary.csv are compared.
set -u
a=$(realpath "$1") b=$(realpath "$2") class=$(realpath "$3") out=$(realpath -m "$4") jobs=${5:-2}
mkdir -p "$out"
n=$(find "$class" -mindepth 1 -maxdepth 1 -type d | wc -l)
for side in a b; do
  bin=$a; [ $side = b ] && bin=$b
  cache=$(mktemp -d); rm -rf "$out/$side"
  { echo "$(date -u +%FT%TZ) $side: $bin, $n hand-ins, --jobs $jobs"
    XDG_CACHE_HOME=$cache/x POCL_CACHE_DIR=$cache/p /usr/bin/time -f "%e s wall, %U s user, %S s sys" \
      "$bin" grade --jobs "$jobs" --trace "$out/$side-trace.csv" --output-dir "$out/$side" "$class"/*/ 2>&1 | tail -4
  } | tee "$out/$side.txt"
  rm -rf "$cache"
done
if cmp -s "$out/a/summary.csv" "$out/b/summary.csv"; then echo "summary.csv: identical"
else echo "summary.csv differs:"; diff "$out/a/summary.csv" "$out/b/summary.csv"; fi
