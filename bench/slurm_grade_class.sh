#!/usr/bin/env bash
# A class graded as Slurm shards on a one-node Slurm started here (scripts/slurm-local.sh), timed
# from submission to the merged summary: the Slurm figure of docs/BENCHMARKS.md, "Grading a
# class".
#   bench/slurm_grade_class.sh BINARY CLASS OUT [SHARDS [CPUS_PER_TASK]] [-- GRADE OPTIONS]
# CLASS: a folder of hand-ins (bench/make-class); OUT: grade-slurm's output folder (made fresh);
# SHARDS: 4 by default; CPUS_PER_TASK: 1 by default (each shard grades with --jobs of that).
# Kernel caches start empty (POCL_CACHE_DIR, XDG_CACHE_HOME in a temp folder). Prints the wall
# time and hand-ins a minute; exit status grade-slurm's, or 77 where Slurm does not start here.
# Compare the result with a single run: cmp OUT/summary.csv SINGLE/summary.csv.
set -u
bin=$(realpath "$1") class=$(realpath "$2") out=$(realpath -m "$3")
shift 3
shards=4 cpus=1
[ $# -gt 0 ] && [ "$1" != -- ] && { shards=$1; shift; }
[ $# -gt 0 ] && [ "$1" != -- ] && { cpus=$1; shift; }
[ "${1:-}" = -- ] && shift
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsb-slurm-bench.XXXXXX")
chmod 755 "$tmp"
. "$here/scripts/slurm-local.sh"
trap 'slurm_local_stop; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
mkdir -p "$tmp/slurm"
slurm_local_start "$tmp/slurm" || { echo "SKIP: $slurm_local_why"; exit 77; }
export POCL_CACHE_DIR=$tmp/pocl XDG_CACHE_HOME=$tmp/cache
rm -rf "$out"
n=$(find "$class" -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "$(date -u +%FT%TZ) grading $n hand-ins of $class as $shards shards, $cpus CPU(s) each"
start=$(date +%s.%N)
(cd "$class" && "$here/scripts/grade-slurm" --shards "$shards" --cpus-per-task "$cpus" --wait \
   --binary "$bin" --output-dir "$out" -- "$@" */)
rc=$?
end=$(date +%s.%N)
python3 -c "import sys; s = float(sys.argv[2]) - float(sys.argv[1]); n = int(sys.argv[3]);
print(f'{n} hand-ins in {s:.1f} s: {60 * n / s:.2f} a minute')" "$start" "$end" "$n"
echo "$(date -u +%FT%TZ) grade-slurm exit $rc"
exit $rc
