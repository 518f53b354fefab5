#!/usr/bin/env bash
# How often `compare` calls a change (docs/BENCHMARKS.md, "A/A"): PAIRS pairs of runs of one
# binary, the run's options and then the same options plus NEW_OPTIONS, one right after the
# other, each pair compared; with no NEW_OPTIONS every pair is an A/A pair and every call a false
# alarm, with a setting that costs time (e.g. --tune KNOB=V) the calls of `slower` are its power.
#   bench/compare_pairs.sh BIN PAIRS "RUN_OPTIONS" ["NEW_OPTIONS"]   (files in $OUT, else pairs-out)
# Prints a line a pair (cases, faster, slower, regressions) and the totals; exit 0, or 2 on bad
# arguments.
set -u
if [ $# -lt 3 ] || ! [ -x "$1" ] || ! [[ $2 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: bench/compare_pairs.sh BIN PAIRS \"RUN_OPTIONS\" [\"NEW_OPTIONS\"]" >&2
  exit 2
fi
bin=$1 pairs=$2 opts=$3 new=${4:-}
out=${OUT:-pairs-out}; mkdir -p "$out"
cases=0 faster=0 slower=0 regressions=0
for k in $(seq 1 "$pairs"); do
  # shellcheck disable=SC2086 # the options split into words
  "$bin" $opts -q --format json -o "$out/pair-$k-a.json" || exit 1
  # shellcheck disable=SC2086
  "$bin" $opts $new -q --format json -o "$out/pair-$k-b.json" || exit 1
  "$bin" compare --format csv "$out/pair-$k-a.json" "$out/pair-$k-b.json" >"$out/pair-$k.csv"
  read -r c f s r < <(python3 - "$out/pair-$k.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["in"] == "both"]
print(len(rows), sum(r["change"] == "faster" for r in rows),
      sum(r["change"] == "slower" for r in rows), sum(r["regression"] == "1" for r in rows))
PY
  )
  echo "pair $k: $c cases, $f faster, $s slower, $r regressions"
  cases=$((cases + c)) faster=$((faster + f)) slower=$((slower + s)) regressions=$((regressions + r))
done
echo "all $pairs pairs: $cases cases, $faster faster, $slower slower, $regressions regressions"
